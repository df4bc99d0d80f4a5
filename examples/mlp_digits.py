"""The classic first training script, in ember: an MLP on scikit-learn's 8x8 digits.

The same shape as PyTorch's MNIST MLP example -- a Dataset, a DataLoader, a model, an
optimizer with a learning-rate schedule, and the train / evaluate loop -- with nothing
else around it. cnn_digits.py is the fuller demo (workers, checkpoints, plots).

    python examples/mlp_digits.py [--epochs 20] [--device cpu|cuda]

Exit status 1 when the test accuracy is below --target (default 0.95).
"""

from __future__ import annotations

import argparse
import sys

import ember.aten as ea
import ember.autograd as autograd
import ember.data as data
import ember.nn as nn
import ember.nn.functional as F
import ember.optim as optim
import numpy as np


class MLP(nn.Module):
    def __init__(self, hidden: int = 128) -> None:
        super().__init__()
        self.fc1 = nn.Linear(64, hidden)
        self.fc2 = nn.Linear(hidden, hidden // 2)
        self.fc3 = nn.Linear(hidden // 2, 10)
        self.dropout = nn.Dropout(0.2)

    def forward(self, x: ea.Tensor) -> ea.Tensor:
        x = self.dropout(F.relu(self.fc1(x.flatten(1))))
        x = self.dropout(F.relu(self.fc2(x)))
        return self.fc3(x)


def datasets(seed: int) -> tuple[data.Dataset, data.Dataset]:
    from sklearn.datasets import load_digits

    digits = load_digits()
    x = ea.from_numpy((digits.data.astype(np.float32) - 8.0) / 8.0)  # pixels 0..16 -> -1..1
    y = ea.from_numpy(digits.target.astype(np.int64))
    full = data.TensorDataset(x, y)
    n_test = len(full) // 5
    return tuple(data.random_split(full, [len(full) - n_test, n_test], generator=ea.Generator().manual_seed(seed)))


def train_epoch(model: nn.Module, loader: data.DataLoader, opt: optim.Optimizer, device: str) -> float:
    model.train()
    total = 0.0
    for x, y in loader:
        x, y = x.to(device), y.to(device)
        opt.zero_grad()
        loss = F.cross_entropy(model(x), y)
        loss.backward()
        opt.step()
        total += loss.item() * y.numel()
    return total / len(loader.dataset)


def evaluate(model: nn.Module, loader: data.DataLoader, device: str) -> float:
    model.eval()
    correct = 0
    with autograd.no_grad():
        for x, y in loader:
            correct += int((model(x.to(device)).argmax(1) == y.to(device)).sum().item())
    return correct / len(loader.dataset)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--epochs", type=int, default=20)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--lr", type=float, default=0.05)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--device", default="cpu")
    p.add_argument("--target", type=float, default=0.95)
    args = p.parse_args(argv)

    ea.manual_seed(args.seed)
    train_set, test_set = datasets(args.seed)
    train_loader = data.DataLoader(train_set, batch_size=args.batch_size, shuffle=True)
    test_loader = data.DataLoader(test_set, batch_size=256)
    model = MLP().to(args.device)
    opt = optim.SGD(model.parameters(), lr=args.lr, momentum=0.9, nesterov=True, weight_decay=1e-4)
    sched = optim.lr_scheduler.CosineAnnealingLR(opt, T_max=args.epochs)
    for epoch in range(1, args.epochs + 1):
        loss = train_epoch(model, train_loader, opt, args.device)
        sched.step()
        acc = evaluate(model, test_loader, args.device)
        print(f"epoch {epoch:2d}  loss {loss:.4f}  test accuracy {acc:.4f}  lr {sched.get_last_lr()[0]:.4f}")
    if acc < args.target:
        print(f"error: test accuracy {acc:.4f} is below the target {args.target}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""Train a small CNN on scikit-learn's handwritten digits (1,797 8x8 images) with ember.

This is the demo `nox -s demo` runs. It uses every layer of ember the way a PyTorch
user would use torch: ember.data (a Dataset split with a fixed seed, DataLoaders with
worker processes and shuffling), ember.nn (Conv2d, BatchNorm2d, ReLU, MaxPool2d,
Dropout, Linear), ember.optim (AdamW + OneCycleLR), ember.aten.save / load (a checkpoint,
reloaded into a fresh model that must score the same), and writes the training curves
to demo-out/training.png.

    python examples/cnn_digits.py [--epochs 12] [--workers 2] [--out demo-out]

Exit status 1 when the test accuracy is below --target (default 0.97).
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import ember.aten as ea
import ember.autograd as autograd
import ember.data as data
import ember.nn as nn
import ember.nn.functional as F
import ember.optim as optim
import numpy as np


def make_model() -> nn.Module:
    return nn.Sequential(
        nn.Conv2d(1, 32, 3, padding=1),  # 32 x 8 x 8
        nn.BatchNorm2d(32),
        nn.ReLU(),
        nn.Conv2d(32, 64, 3, padding=1),  # 64 x 8 x 8
        nn.BatchNorm2d(64),
        nn.ReLU(),
        nn.MaxPool2d(2),  # 64 x 4 x 4
        nn.Flatten(),
        nn.Dropout(0.3),
        nn.Linear(64 * 4 * 4, 128),
        nn.ReLU(),
        nn.Dropout(0.3),
        nn.Linear(128, 10),
    )


def load_digits_dataset() -> data.TensorDataset:
    from sklearn.datasets import load_digits

    digits = load_digits()
    images = digits.images.astype(np.float32) / 16.0  # pixel values are 0..16
    images = (images - images.mean()) / images.std()
    x = ea.from_numpy(images).unsqueeze(1)  # N x 1 x 8 x 8
    y = ea.from_numpy(digits.target.astype(np.int64))
    return data.TensorDataset(x, y)


def evaluate(model: nn.Module, loader: data.DataLoader) -> float:
    model.eval()
    correct = total = 0
    with autograd.no_grad():
        for x, y in loader:
            correct += int((model(x).argmax(1) == y).sum().item())
            total += y.numel()
    return correct / total


def train(args: argparse.Namespace) -> int:
    from tqdm import tqdm

    t_start = time.perf_counter()
    ea.manual_seed(args.seed)
    dataset = load_digits_dataset()
    n_test = len(dataset) // 5
    train_set, test_set = data.random_split(
        dataset, [len(dataset) - n_test, n_test], generator=ea.Generator().manual_seed(args.seed)
    )
    train_loader = data.DataLoader(
        train_set,
        batch_size=args.batch_size,
        shuffle=True,
        num_workers=args.workers,
        persistent_workers=args.workers > 0,
        generator=ea.Generator().manual_seed(args.seed),
    )
    test_loader = data.DataLoader(test_set, batch_size=256)

    model = make_model()
    optimizer = optim.AdamW(model.parameters(), lr=args.lr, weight_decay=1e-2)
    scheduler = optim.lr_scheduler.OneCycleLR(
        optimizer, max_lr=args.lr, epochs=args.epochs, steps_per_epoch=len(train_loader)
    )
    history: dict[str, list[float]] = {"loss": [], "train_acc": [], "test_acc": []}
    for epoch in range(1, args.epochs + 1):
        model.train()
        seen = correct = 0
        loss_sum = 0.0
        bar = tqdm(
            train_loader, desc=f"epoch {epoch:2d}/{args.epochs}", leave=True, file=sys.stdout, disable=args.quiet
        )
        for x, y in bar:
            logits = model(x)
            loss = F.cross_entropy(logits, y)
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
            scheduler.step()
            n = y.numel()
            seen += n
            loss_sum += loss.item() * n
            correct += int((logits.argmax(1) == y).sum().item())
            bar.set_postfix(loss=f"{loss_sum / seen:.4f}", acc=f"{correct / seen:.3f}")
        test_acc = evaluate(model, test_loader)
        history["loss"].append(loss_sum / seen)
        history["train_acc"].append(correct / seen)
        history["test_acc"].append(test_acc)
        bar.write(
            f"epoch {epoch:2d}: train loss {loss_sum / seen:.4f}  train acc {correct / seen:.3f}  "
            f"test acc {test_acc:.4f}"
        )

    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    ckpt = out / "digits_cnn.pt"
    ea.save({"model": model.state_dict(), "optimizer": optimizer.state_dict(), "epochs": args.epochs}, ckpt)
    restored = make_model()
    restored.load_state_dict(ea.load(ckpt)["model"])
    acc, acc_restored = history["test_acc"][-1], evaluate(restored, test_loader)
    print(f"checkpoint: {ckpt} ({ckpt.stat().st_size / 1024:.0f} KiB)")
    print(
        f"test accuracy: {acc:.4f}; reloaded from the checkpoint: {acc_restored:.4f} "
        f"({'identical' if acc_restored == acc else 'DIFFERENT'})"
    )
    plot = _plot(history, out / "training.png")
    if plot is not None:
        print(f"training curves: {plot}")
    print(f"total time: {time.perf_counter() - t_start:.1f} s")
    if acc_restored != acc:
        print("error: the reloaded model does not score the same", file=sys.stderr)
        return 1
    if acc < args.target:
        print(f"error: test accuracy {acc:.4f} is below the target {args.target}", file=sys.stderr)
        return 1
    return 0


def _plot(history: dict[str, list[float]], path: Path) -> Path | None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        return None
    epochs = range(1, len(history["loss"]) + 1)
    fig, (ax1, ax2) = plt.subplots(1, 2, figsize=(10, 4))
    ax1.plot(epochs, history["loss"], marker="o")
    ax1.set(title="training loss", xlabel="epoch", ylabel="cross-entropy")
    ax2.plot(epochs, history["train_acc"], marker="o", label="train")
    ax2.plot(epochs, history["test_acc"], marker="o", label="test")
    ax2.set(title="accuracy", xlabel="epoch", ylabel="accuracy")
    ax2.legend()
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--epochs", type=int, default=12)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--workers", type=int, default=2)
    p.add_argument("--seed", type=int, default=0)
    p.add_argument("--target", type=float, default=0.97)
    p.add_argument("--out", default="demo-out")
    p.add_argument("--quiet", action="store_true", help="no progress bars")
    return train(p.parse_args(argv))


if __name__ == "__main__":
    sys.exit(main())

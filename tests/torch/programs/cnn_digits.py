"""An MNIST-style CNN on synthetic 8x8 "digits" (four stroke patterns plus noise).

Plain PyTorch: run it with PyTorch, or with ember after ember.torch.install_as_torch().
main() returns the figures tests/torch/test_programs.py checks.
"""

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.utils.data import DataLoader, TensorDataset


def make_data(n, seed):
    rng = np.random.default_rng(seed)
    images = np.zeros((n, 1, 8, 8), dtype=np.float32)
    labels = rng.integers(0, 4, size=n)
    for i, c in enumerate(labels):
        k = rng.integers(1, 7)
        if c == 0:
            images[i, 0, k, 1:7] = 1.0  # a horizontal stroke
        elif c == 1:
            images[i, 0, 1:7, k] = 1.0  # a vertical stroke
        elif c == 2:
            images[i, 0, np.arange(8), np.arange(8)] = 1.0  # the diagonal
        else:
            images[i, 0, 2:6, 2:6] = 1.0  # a blob
    images += 0.3 * rng.standard_normal(images.shape).astype(np.float32)
    return torch.from_numpy(images), torch.from_numpy(labels.astype(np.int64))


class Net(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 8, 3, 1, padding=1)
        self.conv2 = nn.Conv2d(8, 16, 3, 1, padding=1)
        self.dropout = nn.Dropout(0.1)
        self.fc1 = nn.Linear(16 * 4 * 4, 32)
        self.fc2 = nn.Linear(32, 4)

    def forward(self, x):
        x = F.relu(self.conv1(x))
        x = F.relu(self.conv2(x))
        x = F.max_pool2d(x, 2)
        x = self.dropout(torch.flatten(x, 1))
        x = F.relu(self.fc1(x))
        return F.log_softmax(self.fc2(x), dim=1)


def train(model, device, loader, optimizer):
    model.train()
    total = 0.0
    for data, target in loader:
        data, target = data.to(device), target.to(device)
        optimizer.zero_grad()
        loss = F.nll_loss(model(data), target)
        loss.backward()
        optimizer.step()
        total += loss.item() * len(data)
    return total / len(loader.dataset)


def test(model, device, loader):
    model.eval()
    correct = 0
    with torch.no_grad():
        for data, target in loader:
            data, target = data.to(device), target.to(device)
            pred = model(data).argmax(dim=1, keepdim=True)
            correct += pred.eq(target.view_as(pred)).sum().item()
    return correct / len(loader.dataset)


def main(epochs=4):
    torch.manual_seed(1)
    use_accel = torch.accelerator.is_available()
    device = torch.accelerator.current_accelerator() if use_accel else torch.device("cpu")
    if torch.backends.mps.is_available():
        device = torch.device("mps")
    train_loader = DataLoader(TensorDataset(*make_data(768, 0)), batch_size=32, shuffle=True)
    test_loader = DataLoader(TensorDataset(*make_data(256, 1)), batch_size=128)
    model = Net().to(device)
    optimizer = torch.optim.Adadelta(model.parameters(), lr=1.0)
    scheduler = torch.optim.lr_scheduler.StepLR(optimizer, step_size=1, gamma=0.7)
    losses = []
    for _ in range(epochs):
        losses.append(train(model, device, train_loader, optimizer))
        scheduler.step()
    accuracy = test(model, device, test_loader)
    # The first layer's output against a NumPy convolution of the same weights.
    x = test_loader.dataset.tensors[0][:2]
    with torch.no_grad():
        out = model.conv1(x).numpy()
    w, b = model.conv1.weight.detach().numpy(), model.conv1.bias.detach().numpy()
    xp = np.pad(x.numpy(), ((0, 0), (0, 0), (1, 1), (1, 1)))
    ref = np.zeros_like(out)
    for i in range(8):
        for j in range(8):
            ref[:, :, i, j] = np.einsum("nchw,ochw->no", xp[:, :, i : i + 3, j : j + 3], w) + b
    return {
        "losses": losses,
        "accuracy": accuracy,
        "conv_max_err": float(np.abs(out - ref).max()),
        "device": str(device),
    }


if __name__ == "__main__":
    print(main())

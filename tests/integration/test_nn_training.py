"""End to end: a small MLP and a small CNN train on synthetic data to a target loss,
deterministically under manual_seed (plain SGD written here: the test needs only nn)."""

from __future__ import annotations

import ember.aten as ea
import numpy as np
from ember import nn
from ember.autograd import no_grad


def _sgd(params: list[nn.Parameter], lr: float, momentum: float, bufs: dict[int, ea.Tensor]) -> None:
    with no_grad():
        for p in params:
            g = p.grad
            if g is None:
                continue
            b = bufs.get(id(p))
            if b is None:
                b = bufs[id(p)] = g.clone()
            else:
                b.mul_(momentum).add_(g)
            p.add_(b, alpha=-lr)


def _train_mlp(seed: int) -> list[float]:
    ea.manual_seed(seed)
    x = ea.randn(256, 8)
    w_true = ea.randn(8, 1)
    y = (x @ w_true).sin() + 0.1 * x[:, :1] ** 2
    net = nn.Sequential(nn.Linear(8, 32), nn.Tanh(), nn.Linear(32, 32), nn.ReLU(), nn.Linear(32, 1))
    params = list(net.parameters())
    bufs: dict[int, ea.Tensor] = {}
    losses = []
    for _ in range(300):
        net.zero_grad()
        loss = nn.functional.mse_loss(net(x), y)
        loss.backward()
        _sgd(params, 0.05, 0.9, bufs)
        losses.append(float(loss))
    return losses


def test_mlp_regression_reaches_target_and_is_deterministic() -> None:
    losses = _train_mlp(0)
    assert losses[-1] < 0.1 * losses[0]
    assert losses[-1] < 0.05
    assert _train_mlp(0) == losses  # bit-identical under the same seed


class SmallCNN(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.features = nn.Sequential(
            nn.Conv2d(1, 8, 3, padding=1),
            nn.BatchNorm2d(8),
            nn.ReLU(),
            nn.MaxPool2d(2),
            nn.Conv2d(8, 16, 3, padding=1),
            nn.ReLU(),
            nn.AdaptiveAvgPool2d(1),
        )
        self.classifier = nn.Sequential(nn.Flatten(), nn.Dropout(0.1), nn.Linear(16, 3))

    def forward(self, x: ea.Tensor) -> ea.Tensor:
        return self.classifier(self.features(x))


def _synthetic_images(n: int) -> tuple[ea.Tensor, ea.Tensor]:
    # three classes: a horizontal bar, a vertical bar, a centre blob (plus noise)
    rng = np.random.default_rng(1)
    labels = rng.integers(0, 3, n)
    imgs = rng.normal(0, 0.3, (n, 1, 8, 8)).astype(np.float32)
    for i, c in enumerate(labels):
        r = rng.integers(1, 7)
        if c == 0:
            imgs[i, 0, r, :] += 2.0
        elif c == 1:
            imgs[i, 0, :, r] += 2.0
        else:
            imgs[i, 0, 3:5, 3:5] += 3.0
    return ea.from_numpy(imgs), ea.from_numpy(labels.astype(np.int64))


def _train_cnn(seed: int) -> tuple[list[float], float]:
    ea.manual_seed(seed)
    x, y = _synthetic_images(96)
    net = SmallCNN()
    params = list(net.parameters())
    criterion = nn.CrossEntropyLoss()
    bufs: dict[int, ea.Tensor] = {}
    losses = []
    for _ in range(40):
        net.zero_grad()
        loss = criterion(net(x), y)
        loss.backward()
        _sgd(params, 0.1, 0.9, bufs)
        losses.append(float(loss))
    net.eval()  # batch norm's running statistics, no dropout
    with no_grad():
        acc = float((net(x).argmax(1) == y).float().mean())
    return losses, acc


def test_cnn_classifier_reaches_target_and_is_deterministic() -> None:
    # one intra-op thread: on a loaded 2-core machine the OpenMP hand-offs of these tiny
    # convolutions cost more than the work (results do not depend on the thread count)
    threads = ea.get_num_threads()
    ea.set_num_threads(1)
    try:
        losses, acc = _train_cnn(0)
        again, acc2 = _train_cnn(0)
    finally:
        ea.set_num_threads(threads)
    assert losses[0] > 0.9  # about log(3) at the start
    assert losses[-1] < 0.1
    assert acc > 0.9
    assert again == losses and acc2 == acc

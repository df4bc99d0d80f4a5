"""A DataLoader pipeline: a map-style Dataset with a transform, worker processes, a seeded
shuffle, a custom collate_fn, random_split, a WeightedRandomSampler, and a checkpoint
saved and loaded with torch.save / torch.load.

Plain PyTorch. main() returns what the test compares with NumPy.
"""

import io

import numpy as np
import torch
from torch.utils.data import DataLoader, Dataset, WeightedRandomSampler, random_split


class Squares(Dataset):
    def __init__(self, n, transform=None):
        self.x = np.arange(n, dtype=np.float32)
        self.transform = transform

    def __len__(self):
        return len(self.x)

    def __getitem__(self, i):
        x = torch.tensor([self.x[i]])
        if self.transform is not None:
            x = self.transform(x)
        return {"x": x, "y": x**2, "index": i}


def collate(batch):
    return {
        "x": torch.stack([b["x"] for b in batch]),
        "y": torch.stack([b["y"] for b in batch]),
        "index": torch.LongTensor([b["index"] for b in batch]),
    }


def main(workers=2):
    ds = Squares(100, transform=lambda t: t * 0.5)
    gen = torch.Generator().manual_seed(42)
    loader = DataLoader(ds, batch_size=16, shuffle=True, num_workers=workers, collate_fn=collate, generator=gen)
    seen, y_sum, batch_sizes = [], 0.0, []
    for _epoch in range(2):
        for batch in loader:
            seen.extend(batch["index"].tolist())
            y_sum += batch["y"].sum().item()
            batch_sizes.append(len(batch["index"]))
    train, val = random_split(ds, [80, 20], generator=torch.Generator().manual_seed(0))
    default = next(iter(DataLoader(val, batch_size=20)))
    weights = [0.0] * 50 + [1.0] * 50
    sampler = WeightedRandomSampler(weights, num_samples=200, replacement=True)
    drawn = [i for b in DataLoader(range(100), sampler=sampler, batch_size=50) for i in b.tolist()]
    # a small model trained one step per batch, checkpointed and reloaded
    model = torch.nn.Linear(1, 1)
    opt = torch.optim.SGD(model.parameters(), lr=1e-3, momentum=0.9)
    for batch in DataLoader(ds, batch_size=20, collate_fn=collate, drop_last=True):
        loss = torch.nn.functional.mse_loss(model(batch["x"]), batch["y"])
        opt.zero_grad()
        loss.backward()
        opt.step()
    buf = io.BytesIO()
    torch.save({"model": model.state_dict(), "opt": opt.state_dict()}, buf)
    buf.seek(0)
    ckpt = torch.load(buf, weights_only=True)
    clone = torch.nn.Linear(1, 1)
    clone.load_state_dict(ckpt["model"])
    probe = torch.tensor([[3.0]])
    return {
        "seen_sorted": sorted(seen),
        "y_sum": y_sum,
        "batch_sizes": batch_sizes,
        "val_len": len(val),
        "train_len": len(train),
        "default_keys": sorted(default.keys()),
        "default_x_shape": list(default["x"].shape),
        "drawn_min": min(drawn),
        "checkpoint_same": bool(torch.equal(clone(probe), model(probe))),
        "momentum_keys": sorted(ckpt["opt"]["state"][0].keys()),
    }


if __name__ == "__main__":
    print(main())

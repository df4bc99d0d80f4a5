"""A variational autoencoder on two-cluster 2-D data: Normal rsample + kl_divergence.

Plain PyTorch (torch.distributions). main() also returns the KL term of one batch next to
the same quantity written out in NumPy.
"""

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.distributions import Independent, Normal, kl_divergence


class VAE(nn.Module):
    def __init__(self, d=2, z=2, h=32):
        super().__init__()
        self.enc = nn.Sequential(nn.Linear(d, h), nn.Tanh())
        self.mu = nn.Linear(h, z)
        self.logvar = nn.Linear(h, z)
        self.dec = nn.Sequential(nn.Linear(z, h), nn.Tanh(), nn.Linear(h, d))

    def forward(self, x):
        hid = self.enc(x)
        mu, logvar = self.mu(hid), self.logvar(hid)
        q = Independent(Normal(mu, torch.exp(0.5 * logvar)), 1)
        z = q.rsample()
        return self.dec(z), q, mu, logvar


def main(steps=300):
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    centres = np.array([[2.0, 2.0], [-2.0, -1.0]], dtype=np.float32)
    x_np = centres[rng.integers(0, 2, 512)] + 0.3 * rng.standard_normal((512, 2)).astype(np.float32)
    x = torch.tensor(x_np)
    model = VAE()
    opt = torch.optim.Adam(model.parameters(), lr=1e-2)
    prior = Independent(Normal(torch.zeros(2), torch.ones(2)), 1)
    losses = []
    for _ in range(steps):
        recon, q, mu, logvar = model(x)
        rec = F.mse_loss(recon, x, reduction="none").sum(-1)
        kl = kl_divergence(q, prior)
        loss = (rec + 0.1 * kl).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(loss.item())
    with torch.no_grad():
        recon, q, mu, logvar = model(x)
        kl = kl_divergence(q, prior).numpy()
    m, lv = mu.numpy().astype(np.float64), logvar.numpy().astype(np.float64)
    kl_ref = 0.5 * np.sum(np.exp(lv) + m**2 - 1.0 - lv, axis=-1)
    return {
        "first_loss": losses[0],
        "last_loss": float(np.mean(losses[-10:])),
        "kl_max_err": float(np.abs(kl - kl_ref).max()),
        "recon_mse": float(((recon.numpy() - x_np) ** 2).sum(-1).mean()),
    }


if __name__ == "__main__":
    print(main())

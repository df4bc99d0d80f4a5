"""A bag-of-words classifier whose embedding table gets sparse gradients (nn.Embedding(sparse=True)),
trained with SGD (momentum) beside the same model with dense gradients, and with SparseAdam for
the table + Adam for the rest (PyTorch's recommended pairing), checked against a NumPy lazy Adam.
"""

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


class BagOfWords(nn.Module):
    def __init__(self, vocab, dim, classes, sparse):
        super().__init__()
        self.embed = nn.Embedding(vocab, dim, padding_idx=0, sparse=sparse)
        self.head = nn.Linear(dim, classes)

    def forward(self, tokens):
        return self.head(self.embed(tokens).mean(1))


def data(rng, n=24, length=6, vocab=60):
    tokens = rng.integers(1, vocab, (n, length))
    tokens[:, -2:] = 0  # padding
    labels = (tokens[:, 0] % 2).astype(np.int64)
    return torch.from_numpy(tokens.astype(np.int64)), torch.from_numpy(labels)


def train(sparse, steps, tokens, labels, make_opts):
    torch.manual_seed(0)
    model = BagOfWords(60, 8, 2, sparse)
    opts = make_opts(model)
    grad_kind = None
    for _ in range(steps):
        for o in opts:
            o.zero_grad()
        loss = F.cross_entropy(model(tokens), labels)
        loss = loss + 0.1 * model.embed(tokens[:, :2]).pow(2).mean()  # the table used twice: two sparse grads
        loss.backward()
        g = model.embed.weight.grad
        grad_kind = (g.is_sparse, g._nnz() if g.is_sparse else None, g.is_coalesced() if g.is_sparse else None)
        for o in opts:
            o.step()
    return model, grad_kind, loss.item()


def lazy_adam_reference(table0, grads, lr, betas=(0.9, 0.999), eps=1e-8):
    """SparseAdam's update in NumPy: only the rows each step's gradient touches move."""
    p = table0.copy()
    m = np.zeros_like(p)
    v = np.zeros_like(p)
    for t, (rows, g) in enumerate(grads, start=1):
        m[rows] = betas[0] * m[rows] + (1 - betas[0]) * g
        v[rows] = betas[1] * v[rows] + (1 - betas[1]) * g * g
        step = lr * np.sqrt(1 - betas[1] ** t) / (1 - betas[0] ** t)
        p[rows] -= step * m[rows] / (np.sqrt(v[rows]) + eps)
    return p


def main():
    rng = np.random.default_rng(0)
    tokens, labels = data(rng)

    def sgd(model):
        return [torch.optim.SGD(model.parameters(), lr=0.5, momentum=0.9)]

    sparse_model, sparse_grad, sparse_loss = train(True, 8, tokens, labels, sgd)
    dense_model, dense_grad, dense_loss = train(False, 8, tokens, labels, sgd)
    sgd_err = max(
        float((a.detach() - b.detach()).abs().max())
        for a, b in zip(sparse_model.parameters(), dense_model.parameters(), strict=True)
    )

    # SparseAdam on the table (one step's sparse gradients recorded for the NumPy reference)
    torch.manual_seed(0)
    model = BagOfWords(60, 8, 2, True)
    table0 = model.embed.weight.detach().numpy().copy()
    opt_table = torch.optim.SparseAdam(list(model.embed.parameters()), lr=0.05)
    opt_head = torch.optim.Adam(model.head.parameters(), lr=0.05)
    recorded = []
    for _ in range(6):
        opt_table.zero_grad()
        opt_head.zero_grad()
        F.cross_entropy(model(tokens), labels).backward()
        g = model.embed.weight.grad.coalesce()
        recorded.append((g.indices()[0].numpy().copy(), g.values().numpy().copy()))
        opt_table.step()
        opt_head.step()
    ref = lazy_adam_reference(table0, recorded, 0.05)
    untouched = sorted(set(range(60)) - set(tokens.reshape(-1).tolist()))
    dense_grad_error = None
    try:
        torch.optim.SparseAdam(BagOfWords(60, 8, 2, False).embed.parameters())
        m2 = BagOfWords(60, 8, 2, False)
        o = torch.optim.SparseAdam(list(m2.embed.parameters()))
        F.cross_entropy(m2(tokens), labels).backward()
        o.step()
    except RuntimeError as e:
        dense_grad_error = str(e)
    return {
        "sparse_grad": list(sparse_grad),
        "dense_grad": list(dense_grad),
        "sgd_err": sgd_err,
        "losses": [sparse_loss, dense_loss],
        "sparse_adam_err": float(np.abs(model.embed.weight.detach().numpy() - ref).max()),
        "padding_row_moved": float(np.abs(model.embed.weight.detach().numpy()[0] - table0[0]).max()),
        "untouched_rows": len(untouched),
        "untouched_moved": float(np.abs(model.embed.weight.detach().numpy()[untouched] - table0[untouched]).max())
        if untouched
        else 0.0,
        "dense_grad_error": dense_grad_error,
    }

"""A two-layer graph convolutional network (Kipf & Welling) on a sparse normalised adjacency.

Plain PyTorch: torch.sparse_coo_tensor, torch.spmm / torch.sparse.mm / adj @ x, coalesce,
nn.Parameter weights, F.log_softmax + F.nll_loss, Adam. The forward pass and the weight
gradients of the first step are recomputed with NumPy on the dense adjacency.
"""

import numpy as np
import torch
import torch.nn as nn
import torch.nn.functional as F


def ring_graph(n, rng):
    """A ring with a few random chords, self-loops added, symmetrically normalised: D^-1/2 (A+I) D^-1/2."""
    edges = {(i, (i + 1) % n) for i in range(n)}
    for _ in range(n // 2):
        a, b = rng.integers(0, n, 2)
        if a != b:
            edges.add((int(a), int(b)))
    rows, cols = [], []
    for a, b in edges:
        rows += [a, b]
        cols += [b, a]
    rows += list(range(n))
    cols += list(range(n))
    dense = np.zeros((n, n), np.float32)
    np.add.at(dense, (rows, cols), 1.0)
    dense = np.minimum(dense, 1.0)
    deg = dense.sum(1)
    norm = dense / np.sqrt(deg)[:, None] / np.sqrt(deg)[None, :]
    r, c = np.nonzero(norm)
    return r, c, norm[r, c].astype(np.float32), norm


class GraphConvolution(nn.Module):
    def __init__(self, in_features, out_features):
        super().__init__()
        self.weight = nn.Parameter(torch.empty(in_features, out_features))
        self.bias = nn.Parameter(torch.zeros(out_features))
        nn.init.xavier_uniform_(self.weight)

    def forward(self, x, adj):
        support = torch.mm(x, self.weight)
        return torch.spmm(adj, support) + self.bias


class GCN(nn.Module):
    def __init__(self, nfeat, nhid, nclass, dropout=0.0):
        super().__init__()
        self.gc1 = GraphConvolution(nfeat, nhid)
        self.gc2 = GraphConvolution(nhid, nclass)
        self.dropout = dropout

    def forward(self, x, adj):
        x = F.relu(self.gc1(x, adj))
        x = F.dropout(x, self.dropout, training=self.training)
        x = torch.sparse.mm(adj, x) @ self.gc2.weight + self.gc2.bias  # the same layer, spelled differently
        return F.log_softmax(x, dim=1)


def numpy_forward_backward(x, adj, w1, b1, w2, b2, labels):
    """Forward, loss and gradients of the GCN above (dropout 0), dense."""
    s1 = x @ w1
    h1 = adj @ s1 + b1
    a1 = np.maximum(h1, 0)
    z = (adj @ a1) @ w2 + b2
    z = z - z.max(1, keepdims=True)
    logp = z - np.log(np.exp(z).sum(1, keepdims=True))
    n = len(labels)
    loss = -logp[np.arange(n), labels].mean()
    dz = np.exp(logp)
    dz[np.arange(n), labels] -= 1
    dz /= n
    g_w2 = (adj @ a1).T @ dz
    g_b2 = dz.sum(0)
    d_a1 = adj.T @ (dz @ w2.T)
    d_h1 = d_a1 * (h1 > 0)
    g_b1 = d_h1.sum(0)
    g_w1 = x.T @ (adj.T @ d_h1)
    return logp, loss, g_w1, g_b1, g_w2, g_b2


def main():
    torch.manual_seed(0)
    rng = np.random.default_rng(0)
    n, nfeat, nclass = 40, 12, 3
    r, c, v, dense_adj = ring_graph(n, rng)
    # the adjacency once with its entries split in two halves: an uncoalesced tensor with duplicates
    idx = np.concatenate([np.stack([r, c]), np.stack([r, c])], 1)
    vals = np.concatenate([v * 0.25, v * 0.75])
    adj = torch.sparse_coo_tensor(torch.from_numpy(idx), torch.from_numpy(vals), (n, n))
    uncoalesced_nnz = adj._nnz()
    adj = adj.coalesce()
    labels_np = (np.arange(n) * 3 // n).astype(np.int64)
    feats = rng.standard_normal((n, nfeat)).astype(np.float32)
    feats[np.arange(n), labels_np] += 2.0
    x = torch.from_numpy(feats)
    labels = torch.from_numpy(labels_np)

    model = GCN(nfeat, 16, nclass)
    opt = torch.optim.Adam(model.parameters(), lr=0.05)
    params = [p.detach().numpy().copy() for p in (model.gc1.weight, model.gc1.bias, model.gc2.weight, model.gc2.bias)]
    ref = numpy_forward_backward(feats, dense_adj, *params, labels_np)

    losses = []
    for step in range(60):
        model.train()
        opt.zero_grad()
        out = model(x, adj)
        loss = F.nll_loss(out, labels)
        loss.backward()
        if step == 0:
            forward_err = float(np.abs(out.detach().numpy() - ref[0]).max())
            grads = [model.gc1.weight.grad, model.gc1.bias.grad, model.gc2.weight.grad, model.gc2.bias.grad]
            grad_err = max(
                float(np.abs(g.numpy() - gr).max() / (np.abs(gr).max() + 1e-12))
                for g, gr in zip(grads, ref[2:], strict=True)
            )
            loss_err = abs(loss.item() - float(ref[1]))
        opt.step()
        losses.append(loss.item())
    model.eval()
    with torch.no_grad():
        acc = (model(x, adj).argmax(1) == labels).float().mean().item()
    return {
        "layout": str(adj.layout),
        "uncoalesced_nnz": uncoalesced_nnz,
        "nnz": adj._nnz(),
        "dense_nnz": int((dense_adj != 0).sum()),
        "adj_err": float(np.abs(adj.to_dense().numpy() - dense_adj).max()),
        "forward_err": forward_err,
        "loss_err": loss_err,
        "grad_err": grad_err,
        "losses": losses,
        "accuracy": acc,
    }

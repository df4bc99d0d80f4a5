"""SparseAdam: the "lazy" Adam for sparse gradients (Embedding(sparse=True)).

Only the rows a step's gradient touches are updated: their first and second moments move
towards the gradient, the others keep their moments and parameters (PyTorch's SparseAdam).
For each stored index of the coalesced gradient ``g`` at step ``t``::

    m[idx] = m[idx] + (1 - beta1) * (g - m[idx])
    v[idx] = v[idx] + (1 - beta2) * (g**2 - v[idx])
    p[idx] = p[idx] - lr * sqrt(1 - beta2**t) / (1 - beta1**t) * m[idx] / (sqrt(v[idx]) + eps)
"""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import ember.aten as ea
from ember.autograd import no_grad

from .optimizer import Optimizer, ParamsT, _eval_closure

__all__ = ["SparseAdam"]


class SparseAdam(Optimizer):
    """Adam for sparse gradients (PyTorch's torch.optim.SparseAdam); dense gradients raise.

    Example:
        >>> emb = nn.Embedding(1000, 16, sparse=True)
        >>> opt = SparseAdam(emb.parameters(), lr=1e-2)
    """

    def __init__(
        self,
        params: ParamsT,
        lr: float = 1e-3,
        betas: tuple[float, float] = (0.9, 0.999),
        eps: float = 1e-8,
        maximize: bool = False,
    ) -> None:
        if not 0.0 < lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if not 0.0 < eps:
            raise ValueError(f"Invalid epsilon value: {eps}")
        if not 0.0 <= betas[0] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 0: {betas[0]}")
        if not 0.0 <= betas[1] < 1.0:
            raise ValueError(f"Invalid beta parameter at index 1: {betas[1]}")
        super().__init__(params, {"lr": lr, "betas": betas, "eps": eps, "maximize": maximize})
        sparse_params = [
            (gi, pi)
            for gi, group in enumerate(self.param_groups)
            for pi, p in enumerate(group["params"])
            if p.is_sparse
        ]
        if sparse_params:
            raise ValueError(f"Sparse params at indices {sparse_params}: SparseAdam requires dense parameter tensors")

    def step(self, closure: Callable[[], Any] | None = None) -> Any:
        """Performs one optimization step (``closure`` re-evaluates the loss)."""
        loss = _eval_closure(closure)
        with no_grad():
            for group in self.param_groups:
                beta1, beta2 = group["betas"]
                for p in group["params"]:
                    if p.grad is None:
                        continue
                    grad = p.grad
                    if not grad.is_sparse:
                        raise RuntimeError("SparseAdam does not support dense gradients, please consider Adam instead")
                    state = self.state[p]
                    if not state:
                        state["step"] = 0
                        state["exp_avg"] = ea.zeros_like(p)
                        state["exp_avg_sq"] = ea.zeros_like(p)
                    state["step"] += 1
                    _sparse_adam_step(
                        p, grad, state["exp_avg"], state["exp_avg_sq"], state["step"],
                        lr=group["lr"], beta1=beta1, beta2=beta2, eps=group["eps"], maximize=group["maximize"],
                    )  # fmt: skip
        return loss


def _sparse_adam_step(
    p: Any, grad: Any, exp_avg: Any, exp_avg_sq: Any, step: int, *, lr: float, beta1: float, beta2: float,
    eps: float, maximize: bool,
) -> None:  # fmt: skip
    grad = grad.coalesce()  # one entry per touched row: the moments move once per row
    if maximize:
        grad = -grad
    indices, values = grad._indices(), grad._values()
    size = grad.shape

    def sparse_with(v: Any) -> Any:
        return ea.sparse_coo_tensor(indices, v, size, is_coalesced=True)

    old_m = exp_avg.sparse_mask(grad)._values()
    m_update = (values - old_m) * (1 - beta1)
    exp_avg.add_(sparse_with(m_update))
    old_v = exp_avg_sq.sparse_mask(grad)._values()
    v_update = (values * values - old_v) * (1 - beta2)
    exp_avg_sq.add_(sparse_with(v_update))
    numer = m_update + old_m
    denom = (v_update + old_v).sqrt() + eps
    step_size = lr * math.sqrt(1 - beta2**step) / (1 - beta1**step)
    p.add_(sparse_with(-step_size * numer / denom))

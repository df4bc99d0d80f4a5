"""DistributedDataParallel: one model replica per rank, gradients averaged during backward.

It lives in ``ember.distributed`` (``ember.distributed.DistributedDataParallel``, also
``ember.distributed.parallel``), not in ``ember.nn.parallel``: ember-nn must not depend on
the distributed layer, and a second distribution cannot add files to ember.nn.

The reducer protocol (PyTorch's ``Reducer``, in Python)
-------------------------------------------------------
Construction: the parameters are checked to have the same shapes on every rank, then
parameters and buffers are broadcast from rank 0. Parameters are split into buckets in
*reverse* registration order (the order backward produces their gradients), the first
one of ``_DEFAULT_FIRST_BUCKET_BYTES`` (1 MB, or ``bucket_cap_mb`` if smaller), the others
of ``bucket_cap_mb``, one dtype each.

Each forward (outside ``no_sync``): buffers are broadcast from rank 0 when
``broadcast_buffers``; after the wrapped forward, every bucket is reset to "waiting for
its parameters". With ``find_unused_parameters`` the autograd graph is walked from the
outputs and every parameter it does not reach is marked ready at once (contributing
zeros).

Backward: each parameter's post-accumulate-grad hook copies ``p.grad`` into its bucket's
flat buffer; the bucket whose last gradient arrives is all-reduced *asynchronously*
(``async_op=True``), while backward goes on computing the next gradients. Buckets are
launched strictly in bucket order (a ready bucket waits for the ones before it), so
every rank issues the same collectives in the same order. The hook of the last gradient
waits for every bucket and writes ``sum / world_size`` back into the ``.grad`` tensors.
With ``find_unused_parameters`` a used-map is all-reduced too: a parameter unused on
every rank keeps its ``.grad`` unchanged (None stays None), as in PyTorch.

A backward that leaves buckets unfinished (a parameter without gradient and
``find_unused_parameters=False``) makes the next forward raise, with PyTorch's message.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from typing import Any

import ember.aten as ea
from ember.autograd import AccumulateGrad, is_grad_enabled, no_grad
from ember.nn import Module

from . import distributed_c10d as c10d
from ._types import ReduceOp

__all__ = ["DistributedDataParallel"]

_DEFAULT_FIRST_BUCKET_BYTES = 1024 * 1024


class _Bucket:
    def __init__(self, index: int, params: list[tuple[int, Any]], dtype: Any, device: Any) -> None:
        self.index = index
        self.params = params  # (parameter index, parameter)
        numel = sum(p.numel() for _, p in params)
        self.flat = ea.zeros(numel, dtype=dtype, device=device)
        self.offsets: dict[int, tuple[int, int]] = {}
        offset = 0
        for i, p in params:
            self.offsets[i] = (offset, p.numel())
            offset += p.numel()
        self.pending = len(params)
        self.work: c10d.Work | None = None

    def slot(self, i: int) -> Any:
        offset, numel = self.offsets[i]
        return self.flat[offset : offset + numel]


class DistributedDataParallel(Module):
    """Wraps ``module`` so that backward averages gradients across ``process_group``.

    >>> model = DistributedDataParallel(Net())
    >>> loss_fn(model(x_shard), y_shard).backward()   # grads now equal on every rank
    >>> with model.no_sync():                         # accumulate locally, sync later
    ...     loss_fn(model(x1), y1).backward()
    """

    def __init__(
        self,
        module: Module,
        device_ids: list[Any] | None = None,
        output_device: Any = None,
        dim: int = 0,
        broadcast_buffers: bool = True,
        process_group: Any = None,
        bucket_cap_mb: float | None = None,
        find_unused_parameters: bool = False,
        check_reduction: bool = False,
        gradient_as_bucket_view: bool = False,
        static_graph: bool = False,
        init_sync: bool = True,
    ) -> None:
        super().__init__()
        if not isinstance(module, Module):
            raise TypeError(f"DistributedDataParallel: module must be an ember.nn.Module, got {type(module).__name__}")
        self.module = module
        pg = process_group if process_group is not None else c10d._get_default_group()
        self.process_group = pg
        self.broadcast_buffers = broadcast_buffers
        self.find_unused_parameters = find_unused_parameters
        self.require_backward_grad_sync = True
        self.bucket_bytes_cap = int((25 if bucket_cap_mb is None else bucket_cap_mb) * 1024 * 1024)
        self.device_ids = device_ids
        self.dim = dim
        seen: set[int] = set()
        self._params: list[Any] = []
        for p in module.parameters():
            if p.requires_grad and id(p) not in seen:
                seen.add(id(p))
                self._params.append(p)
        if not self._params:
            raise RuntimeError(
                "DistributedDataParallel is not needed when a module doesn't have any parameter that requires "
                "a gradient."
            )
        self._world = c10d.get_world_size(pg)
        self._verify_same_model()
        if init_sync:
            self._sync_module_states()
        self._buckets = self._make_buckets()
        self._bucket_of = {i: b for b in self._buckets for i, _ in b.params}
        self._next_launch = 0
        self._in_backward = False
        self._used = [True] * len(self._params)
        self._launch_log: list[tuple[str, int]] | None = None  # set to [] to trace hooks and launches
        self._hooks = [p.register_post_accumulate_grad_hook(self._make_hook(i)) for i, p in enumerate(self._params)]

    # -- construction
    def _verify_same_model(self) -> None:
        mine = [(tuple(p.shape), str(p.dtype)) for p in self._params]
        everyone: list[Any] = [None] * self._world
        c10d.all_gather_object(everyone, mine, group=self.process_group)
        for r, theirs in enumerate(everyone):
            if theirs != mine:
                raise ValueError(
                    f"DistributedDataParallel: the models differ between ranks: this rank has {len(mine)} parameters "
                    f"{mine[:4]}..., rank {self.process_group.ranks[r]} has {len(theirs)} parameters {theirs[:4]}..."
                )

    def _sync_module_states(self) -> None:
        src = self.process_group.ranks[0]
        with no_grad():
            for p in self._params:
                c10d.broadcast(p.detach(), src=src, group=self.process_group)
            for b in self.module.buffers():
                c10d.broadcast(b.detach(), src=src, group=self.process_group)

    def _make_buckets(self) -> list[_Bucket]:
        buckets: list[_Bucket] = []
        current: list[tuple[int, Any]] = []
        size = 0
        cap = min(_DEFAULT_FIRST_BUCKET_BYTES, self.bucket_bytes_cap)  # a smaller bucket_cap_mb wins

        def close() -> None:
            nonlocal current, size, cap
            if current:
                buckets.append(_Bucket(len(buckets), current, current[0][1].dtype, current[0][1].device))
                current, size, cap = [], 0, self.bucket_bytes_cap

        for i in reversed(range(len(self._params))):
            p = self._params[i]
            if current and (p.dtype != current[0][1].dtype or p.device != current[0][1].device):
                close()
            current.append((i, p))
            size += p.numel() * p.element_size()
            if size >= cap:
                close()
        close()
        return buckets

    # -- forward
    def forward(self, *inputs: Any, **kwargs: Any) -> Any:
        if self._in_backward:
            raise RuntimeError(
                "Expected to have finished reduction in the prior iteration before starting a new one. This error "
                "indicates that your module has parameters that were not used in producing loss. You can enable "
                "unused parameter detection by passing the keyword argument `find_unused_parameters=True` to "
                "`DistributedDataParallel`, and by making sure all `forward` function outputs participate in "
                "calculating loss."
            )
        if self.broadcast_buffers and self._world > 1:
            src = self.process_group.ranks[0]
            with no_grad():
                for b in self.module.buffers():
                    c10d.broadcast(b.detach(), src=src, group=self.process_group)
        out = self.module(*inputs, **kwargs)
        if is_grad_enabled() and self.require_backward_grad_sync:
            self._prepare_for_backward(out)
        return out

    def _prepare_for_backward(self, outputs: Any) -> None:
        self._in_backward = True
        self._next_launch = 0
        for b in self._buckets:
            b.pending = len(b.params)
            b.work = None
        self._used = [True] * len(self._params)
        if self.find_unused_parameters:
            reached = _reachable_leaves(outputs)
            for i, p in enumerate(self._params):
                if id(p) not in reached:
                    self._used[i] = False
                    self._mark_ready(i, None)

    # -- backward
    def _make_hook(self, i: int) -> Any:
        def hook(p: Any) -> None:
            if self._in_backward and self.require_backward_grad_sync:
                self._mark_ready(i, p.grad)

        return hook

    def _mark_ready(self, i: int, grad: Any) -> None:
        bucket = self._bucket_of[i]
        if self._launch_log is not None and grad is not None:
            self._launch_log.append(("grad", i))
        slot = bucket.slot(i)
        with no_grad():
            if grad is None:
                slot.zero_()
            else:
                slot.copy_(grad.detach().reshape(-1))
        bucket.pending -= 1
        # launch every consecutive ready bucket, in bucket order (the same on every rank)
        while self._next_launch < len(self._buckets) and self._buckets[self._next_launch].pending == 0:
            b = self._buckets[self._next_launch]
            b.work = c10d.all_reduce(b.flat, ReduceOp.SUM, group=self.process_group, async_op=True)
            if self._launch_log is not None:
                self._launch_log.append(("launch", b.index))
            self._next_launch += 1
        for b in self._buckets[: self._next_launch]:
            if b.work is not None:
                b.work.is_completed()  # drives MPI's progress while backward goes on
        if self._next_launch == len(self._buckets):
            self._finalize()

    def _finalize(self) -> None:
        globally_used = self._used
        if self.find_unused_parameters:
            used = ea.tensor([int(u) for u in self._used], dtype=ea.int32)
            c10d.all_reduce(used, ReduceOp.SUM, group=self.process_group)
            globally_used = [u > 0 for u in used.tolist()]
        with no_grad():
            for b in self._buckets:
                assert b.work is not None
                b.work.wait()
                b.flat.div_(self._world)
                for i, p in b.params:
                    if not globally_used[i]:
                        continue
                    value = b.slot(i).view(p.shape)
                    if p.grad is None:
                        p.grad = value.clone()
                    else:
                        p.grad.copy_(value)
        self._in_backward = False

    @contextlib.contextmanager
    def no_sync(self) -> Iterator[None]:
        """Gradients accumulate locally inside; the first backward outside syncs them all."""
        old = self.require_backward_grad_sync
        self.require_backward_grad_sync = False
        try:
            yield
        finally:
            self.require_backward_grad_sync = old


def _reachable_leaves(outputs: Any) -> set[int]:
    """ids of the leaf tensors the autograd graph of ``outputs`` leads to."""
    roots = []
    stack = [outputs]
    while stack:
        o = stack.pop()
        if isinstance(o, ea.Tensor):
            if o.grad_fn is not None:
                roots.append(o.grad_fn)
        elif isinstance(o, (list, tuple)):
            stack.extend(o)
        elif isinstance(o, dict):
            stack.extend(o.values())
    leaves: set[int] = set()
    seen: set[int] = set()
    while roots:
        node = roots.pop()
        if node is None or id(node) in seen:
            continue
        seen.add(id(node))
        if isinstance(node, AccumulateGrad):
            leaves.add(id(node.variable))
        for nxt, _ in node.next_functions:
            if nxt is not None:
                roots.append(nxt)
    return leaves

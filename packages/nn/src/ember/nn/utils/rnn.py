"""Variable-length sequences for the recurrent layers (PyTorch's torch.nn.utils.rnn).

A ``PackedSequence`` stores a batch of sequences of different lengths without
padding: ``data`` holds time step 0 of every sequence, then step 1 of those still
running, and so on (sequences sorted by decreasing length), and ``batch_sizes[t]``
(an int64 CPU tensor) says how many sequences step t holds. ``sorted_indices`` maps
the packed order back to the caller's batch order (``None`` when the caller's
batch was already sorted).

    >>> x = ember.aten.randn(3, 2, 4)          # (T, B, *), lengths 3 and 2
    >>> p = pack_padded_sequence(x, [3, 2])
    >>> p.batch_sizes
    tensor([2, 2, 1])
    >>> y, lengths = pad_packed_sequence(p)    # y equals x with x[2, 1] zeroed

Every function here is built from differentiable aten operators (slicing, cat,
index_select), so gradients flow from packed data back to the padded tensor.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Iterable, Sequence
from typing import Any, NamedTuple

import ember.aten as ea
from ember.aten import Tensor

__all__ = [
    "PackedSequence",
    "invert_permutation",
    "pack_padded_sequence",
    "pack_sequence",
    "pad_packed_sequence",
    "pad_sequence",
    "unpack_sequence",
    "unpad_sequence",
]


class _PackedSequenceBase(NamedTuple):
    data: Tensor
    batch_sizes: Tensor
    sorted_indices: Tensor | None
    unsorted_indices: Tensor | None


def _bind(optional: Tensor | None, fn: Callable[[Tensor], Tensor]) -> Tensor | None:
    return None if optional is None else fn(optional)


class PackedSequence(_PackedSequenceBase):
    """PackedSequence(data, batch_sizes=None, sorted_indices=None, unsorted_indices=None)

    Made by ``pack_padded_sequence`` / ``pack_sequence``, consumed by RNN, LSTM and GRU.
    ``PackedSequence((data, batch_sizes))`` is accepted too, as in PyTorch.
    """

    def __new__(
        cls,
        data: Any,
        batch_sizes: Tensor | None = None,
        sorted_indices: Tensor | None = None,
        unsorted_indices: Tensor | None = None,
    ) -> PackedSequence:
        if unsorted_indices is None:
            unsorted_indices = invert_permutation(sorted_indices)
        if batch_sizes is None:
            data, batch_sizes = data
        if batch_sizes.device.type != "cpu":
            raise ValueError(
                "batch_sizes should always be on CPU. Instances of PackedSequence should never be created "
                "manually. They should be instantiated by functions like pack_sequence and "
                "pack_padded_sequences in nn.utils.rnn."
            )
        return super().__new__(cls, data, batch_sizes, sorted_indices, unsorted_indices)

    def to(self, *args: Any, **kwargs: Any) -> PackedSequence:
        """Moves/casts ``data`` (as Tensor.to); the index tensors follow data's device."""
        data = self.data.to(*args, **kwargs)
        if data is self.data:
            return self
        device = data.device
        sorted_indices = _bind(self.sorted_indices, lambda t: t.to(device))
        unsorted_indices = _bind(self.unsorted_indices, lambda t: t.to(device))
        return type(self)(data, self.batch_sizes, sorted_indices, unsorted_indices)

    def cuda(self, *args: Any, **kwargs: Any) -> PackedSequence:
        return self.to(ea.device("cuda") if not args else args[0], **kwargs)

    def cpu(self, *args: Any, **kwargs: Any) -> PackedSequence:
        return self.to(ea.device("cpu"))

    def double(self) -> PackedSequence:
        return self.to(dtype=ea.float64)

    def float(self) -> PackedSequence:
        return self.to(dtype=ea.float32)

    def half(self) -> PackedSequence:
        return self.to(dtype=ea.float16)

    def long(self) -> PackedSequence:
        return self.to(dtype=ea.int64)

    def int(self) -> PackedSequence:
        return self.to(dtype=ea.int32)

    def short(self) -> PackedSequence:
        return self.to(dtype=ea.int16)

    def char(self) -> PackedSequence:
        return self.to(dtype=ea.int8)

    def byte(self) -> PackedSequence:
        return self.to(dtype=ea.uint8)

    @property
    def is_cuda(self) -> bool:
        return self.data.device.type == "cuda"


def invert_permutation(permutation: Tensor | None) -> Tensor | None:
    """The inverse of a permutation of 0..n-1 (None stays None)."""
    if permutation is None:
        return None
    output = ea.empty_like(permutation)
    output.scatter_(0, permutation, ea.arange(permutation.numel(), dtype=permutation.dtype, device=permutation.device))
    return output


def _lengths_list(lengths: Any) -> list[int]:
    if isinstance(lengths, Tensor):
        return [int(v) for v in lengths.tolist()]
    return [int(v) for v in lengths]


def _runs(batch_sizes: Sequence[int]) -> list[tuple[int, int, int]]:
    """(first step, end step, batch size) of each run of steps with one batch size."""
    runs = []
    t = 0
    while t < len(batch_sizes):
        end = t
        while end < len(batch_sizes) and batch_sizes[end] == batch_sizes[t]:
            end += 1
        runs.append((t, end, batch_sizes[t]))
        t = end
    return runs


def pack_padded_sequence(
    input: Tensor, lengths: Any, batch_first: bool = False, enforce_sorted: bool = True
) -> PackedSequence:
    """pack_padded_sequence(input, lengths, batch_first=False, enforce_sorted=True) -> PackedSequence

    input (T, B, *) (or (B, T, *) with ``batch_first``) holding B sequences padded to T;
    lengths: B lengths (list or CPU int64 tensor), decreasing unless ``enforce_sorted=False``
    (then the batch is sorted here and ``sorted_indices`` records the order).
    """
    lengths_list = _lengths_list(lengths)
    sorted_indices = None
    if not enforce_sorted:
        order = sorted(range(len(lengths_list)), key=lambda i: -lengths_list[i])  # stable, as torch.sort
        lengths_list = [lengths_list[i] for i in order]
        sorted_indices = ea.tensor(order, dtype=ea.int64, device=input.device)
        input = input.index_select(0 if batch_first else 1, sorted_indices)
    if batch_first:
        input = input.transpose(0, 1)
    batch_size = input.size(1)
    if len(lengths_list) != batch_size:
        raise RuntimeError(
            f"Expected `len(lengths)` to be equal to batch_size, but got {len(lengths_list)} (batch_size={batch_size})"
        )
    if batch_size and lengths_list[-1] <= 0:
        raise RuntimeError(
            "Length of all samples has to be greater than 0, but found an element in 'lengths' that is <= 0"
        )
    if any(a < b for a, b in itertools.pairwise(lengths_list)):
        raise RuntimeError(
            "`lengths` array must be sorted in decreasing order when `enforce_sorted` is True. You can pass "
            "`enforce_sorted=False` to pack_padded_sequence and/or pack_sequence to sidestep this requirement "
            "if you do not need ONNX exportability."
        )
    if batch_size and lengths_list[0] > input.size(0):
        raise RuntimeError(
            f"pack_padded_sequence: the longest length ({lengths_list[0]}) exceeds the padded sequence "
            f"length ({input.size(0)})"
        )
    max_len = lengths_list[0] if batch_size else 0
    batch_sizes = [sum(1 for n in lengths_list if n > t) for t in range(max_len)]
    feature = tuple(input.shape[2:])
    pieces = [input[t0:t1, :bs].reshape((t1 - t0) * bs, *feature) for t0, t1, bs in _runs(batch_sizes)]
    data = pieces[0] if len(pieces) == 1 else ea.cat(pieces)
    return PackedSequence(data, ea.tensor(batch_sizes, dtype=ea.int64), sorted_indices, None)


def pad_packed_sequence(
    sequence: PackedSequence,
    batch_first: bool = False,
    padding_value: float = 0.0,
    total_length: int | None = None,
) -> tuple[Tensor, Tensor]:
    """pad_packed_sequence(sequence, batch_first=False, padding_value=0.0, total_length=None)

    The inverse of pack_padded_sequence: (padded (T, B, *) or (B, T, *), lengths (B,) int64),
    in the batch order the sequence was packed from. T is ``total_length`` when given.
    """
    data = sequence.data
    batch_sizes = _lengths_list(sequence.batch_sizes)
    max_seq_length = len(batch_sizes)
    if total_length is not None:
        if total_length < max_seq_length:
            raise ValueError(
                "Expected total_length to be at least the length of the longest sequence in input, but got "
                f"total_length={total_length} and max sequence length being {max_seq_length}"
            )
        max_seq_length = total_length
    batch = batch_sizes[0] if batch_sizes else 0
    feature = tuple(data.shape[1:])
    blocks = []
    offset = 0
    for t0, t1, bs in _runs(batch_sizes):
        n = t1 - t0
        block = data[offset : offset + n * bs].reshape(n, bs, *feature)
        offset += n * bs
        if bs < batch:
            fill = ea.full((n, batch - bs, *feature), padding_value, dtype=data.dtype, device=data.device)
            block = ea.cat([block, fill], 1)
        blocks.append(block)
    if max_seq_length > len(batch_sizes):
        extra = max_seq_length - len(batch_sizes)
        blocks.append(ea.full((extra, batch, *feature), padding_value, dtype=data.dtype, device=data.device))
    padded = blocks[0] if len(blocks) == 1 else ea.cat(blocks)
    lengths = ea.tensor([sum(1 for s in batch_sizes if s > b) for b in range(batch)], dtype=ea.int64)
    if batch_first:
        padded = padded.transpose(0, 1)
    if sequence.unsorted_indices is not None:
        padded = padded.index_select(0 if batch_first else 1, sequence.unsorted_indices)
        lengths = lengths.index_select(0, sequence.unsorted_indices.to("cpu"))
    return padded, lengths


def pad_sequence(
    sequences: Tensor | Iterable[Tensor],
    batch_first: bool = False,
    padding_value: float = 0.0,
    padding_side: str = "right",
) -> Tensor:
    """pad_sequence(sequences, batch_first=False, padding_value=0.0, padding_side="right") -> Tensor

    Stacks sequences (L_i, *) into (max L_i, B, *) (or (B, max L_i, *) with ``batch_first``),
    padding each on the ``padding_side`` with ``padding_value``.

    >>> pad_sequence([ember.aten.ones(2), ember.aten.ones(3)])
    tensor([[1., 1.],
            [1., 1.],
            [0., 1.]])
    """
    if padding_side not in ("left", "right"):
        raise RuntimeError(f"Expected padding_side to be one of left or right, but got {padding_side}.")
    seqs = list(sequences.unbind(0) if isinstance(sequences, Tensor) else sequences)
    if not seqs:
        raise RuntimeError("received an empty list of sequences")
    trailing = tuple(seqs[0].shape[1:])
    for s in seqs[1:]:
        shape = tuple(s.shape[1:])
        if shape != trailing:
            d = next((i for i, (a, b) in enumerate(zip(trailing, shape, strict=False)) if a != b), len(trailing))
            a = trailing[d] if d < len(trailing) else 1
            b = shape[d] if d < len(shape) else 1
            raise RuntimeError(
                f"The size of tensor a ({a}) must match the size of tensor b ({b}) at non-singleton dimension {d + 1}"
            )
    max_len = max(s.size(0) for s in seqs)
    padded = []
    for s in seqs:
        missing = max_len - s.size(0)
        if missing:
            fill = ea.full((missing, *trailing), padding_value, dtype=s.dtype, device=s.device)
            s = ea.cat([s, fill] if padding_side == "right" else [fill, s])
        padded.append(s)
    return ea.stack(padded, 0 if batch_first else 1)


def unpad_sequence(padded_sequences: Tensor, lengths: Any, batch_first: bool = False) -> list[Tensor]:
    """The sequences (L_i, *) of a padded batch, cut to their lengths."""
    if not batch_first:
        padded_sequences = padded_sequences.transpose(0, 1)
    return [seq[:n] for seq, n in zip(padded_sequences.unbind(0), _lengths_list(lengths), strict=False)]


def pack_sequence(sequences: Sequence[Tensor], enforce_sorted: bool = True) -> PackedSequence:
    """pack_sequence(sequences, enforce_sorted=True): packs sequences (L_i, *) of decreasing
    length (any order with ``enforce_sorted=False``)."""
    lengths = [s.size(0) for s in sequences]
    return pack_padded_sequence(pad_sequence(sequences), lengths, enforce_sorted=enforce_sorted)


def unpack_sequence(packed_sequences: PackedSequence) -> list[Tensor]:
    """The list of sequences (L_i, *) a PackedSequence holds, in their original order."""
    padded, lengths = pad_packed_sequence(packed_sequences, batch_first=True)
    return unpad_sequence(padded, lengths, batch_first=True)

"""The recurrent computations behind nn.RNN / LSTM / GRU and their cells.

PyTorch runs these as aten operators (``rnn_tanh``, ``lstm``, ``gru`` and the
``*_cell`` ops). ember runs an LSTM (without ``proj_size``) or a GRU layer as one
fused aten operator per layer and direction, ``_lstm_layer`` / ``_gru_layer``
(csrc/native/RNN.cpp: the whole recurrence in C++, with a C++ backward); the input
projection before it and the dropout between layers stay aten calls here. The other
modes (RNN_TANH, RNN_RELU, LSTM with a projection) are written below as compositions
of aten operators (addmm, sigmoid, tanh, cat, ...), differentiated by autograd with no
backward formula of their own; ``use_fused = False`` runs LSTM and GRU that way too
(the reference the fused operators are tested against).

Layout (the invariant every function below relies on):
    A sequence batch is always run in PyTorch's *packed* layout: ``data`` holds the
    time steps one after another, the rows of step t being the sequences still
    running at t (sorted by decreasing length), and ``batch_sizes[t]`` says how
    many there are. A padded (T, B, *) input is the special case
    ``batch_sizes = [B] * T``, ``data = input.reshape(T * B, *)``: one code path
    serves both.
    Per layer and direction the input projection ``x W_ih^T + b_ih`` of every step
    is one GEMM before the time loop; each step then does one GEMM ``h W_hh^T`` and
    the gate arithmetic. RNN and LSTM add ``b_hh`` into that first GEMM's bias;
    GRU keeps it apart (its candidate gate multiplies ``h W_hn^T + b_hn`` by r).
    The forward direction drops the rows of finished sequences as the batch
    shrinks (their hidden state is final); the reverse direction starts from the
    last step and adds the rows of longer sequences, from h0, as it meets them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import cast

import ember.aten as ea
from ember.aten import Tensor
from ember.autograd import is_grad_enabled

__all__ = ["gru_cell", "lstm_cell", "rnn_packed", "rnn_relu_cell", "rnn_tanh_cell"]

# LSTM / GRU through the fused aten layer operators (False: the per-step compositions below).
use_fused = True

# (w_ih, w_hh, b_ih, b_hh, w_hr) of one layer and direction; absent entries are None.
LayerWeights = tuple[Tensor, Tensor, "Tensor | None", "Tensor | None", "Tensor | None"]
# One time step: (input projection of the step, states) -> new states; states[0] is the output h.
Step = Callable[[Tensor, list[Tensor]], list[Tensor]]


def _project(x: Tensor, w: Tensor, b: Tensor | None) -> Tensor:
    """x (N, in) @ w^T (+ b): the batched input projection."""
    if b is None:
        return ea.mm(x, w.t())
    return ea.addmm(b, x, w.t())


def _input_bias(mode: str, b_ih: Tensor | None, b_hh: Tensor | None) -> Tensor | None:
    """The bias folded into the input GEMM: b_ih + b_hh, except for GRU (b_ih alone)."""
    if b_ih is None:
        return None
    if mode == "GRU" or b_hh is None:
        return b_ih
    return b_ih + b_hh


def _gates(x: Tensor, n: int) -> Sequence[Tensor]:
    """The n gate blocks of x (N, n * H), as unbind of an (N, n, H) view: its backward is one
    stack, where chunk's would be n zero-filled (N, n * H) gradients."""
    return x.view(x.size(0), n, x.size(1) // n).unbind(1)


def _make_step(mode: str, w_hh: Tensor, b_hh: Tensor | None, w_hr: Tensor | None) -> Step:
    """The per-time-step update of ``mode`` over precomputed input gates ``gi``."""
    w_hh_t = w_hh.t()
    if mode == "RNN_TANH":

        def step(gi: Tensor, states: list[Tensor]) -> list[Tensor]:
            return [ea.tanh(ea.addmm(gi, states[0], w_hh_t))]

    elif mode == "RNN_RELU":

        def step(gi: Tensor, states: list[Tensor]) -> list[Tensor]:
            return [ea.relu(ea.addmm(gi, states[0], w_hh_t))]

    elif mode == "LSTM":
        w_hr_t = None if w_hr is None else w_hr.t()

        def step(gi: Tensor, states: list[Tensor]) -> list[Tensor]:
            h, c = states
            i, f, g, o = _gates(ea.addmm(gi, h, w_hh_t), 4)
            c = ea.sigmoid(f) * c + ea.sigmoid(i) * ea.tanh(g)
            h = ea.sigmoid(o) * ea.tanh(c)
            if w_hr_t is not None:
                h = ea.mm(h, w_hr_t)
            return [h, c]

    elif mode == "GRU":

        def step(gi: Tensor, states: list[Tensor]) -> list[Tensor]:
            h = states[0]
            gh = ea.mm(h, w_hh_t) if b_hh is None else ea.addmm(b_hh, h, w_hh_t)
            i_r, i_z, i_n = _gates(gi, 3)
            h_r, h_z, h_n = _gates(gh, 3)
            r = ea.sigmoid(i_r + h_r)
            z = ea.sigmoid(i_z + h_z)
            n = ea.tanh(i_n + r * h_n)
            return [n + z * (h - n)]  # (1 - z) * n + z * h

    else:
        raise ValueError(f"Unrecognized RNN mode: {mode}")
    return step


def _step_rows(gi: Tensor, batch_sizes: Sequence[int]) -> list[Tensor]:
    """The rows of each time step of packed ``gi``, taken so that backward stays linear in T.

    Slicing step t out of gi directly would give each step's gradient the full size of gi
    (slice's backward zero-fills the whole input), T times over. Instead the steps are
    one unbind of a (T, B, G) tensor (backward: one stack); with varying batch sizes that
    tensor is gathered by one index_select from gi plus a zero row (backward: one index_add).
    """
    n_steps, full = len(batch_sizes), batch_sizes[0]
    if all(bs == full for bs in batch_sizes):
        return list(gi.view(n_steps, full, gi.size(1)).unbind(0))
    zero_row = gi.size(0)
    index: list[int] = []
    offset = 0
    for bs in batch_sizes:
        index.extend(range(offset, offset + bs))
        index.extend([zero_row] * (full - bs))
        offset += bs
    padded = ea.cat([gi, gi.new_zeros((1, gi.size(1)))]).index_select(0, ea.tensor(index, device=gi.device))
    rows = padded.view(n_steps, full, gi.size(1)).unbind(0)
    return [r if bs == full else r[:bs] for r, bs in zip(rows, batch_sizes, strict=True)]


def _run_direction(
    gi: Tensor, batch_sizes: Sequence[int], states0: list[Tensor], step: Step, reverse: bool
) -> tuple[Tensor, list[Tensor]]:
    """Runs ``step`` over the packed steps of one direction.

    gi: (sum(batch_sizes), G) input gates; states0: initial states, (B, *) each with
    B = batch_sizes[0]. Returns the packed outputs (sum(batch_sizes), H_out) and the
    final states (B, *) each.
    """
    n_steps = len(batch_sizes)
    steps = _step_rows(gi, batch_sizes)
    outputs: list[Tensor | None] = [None] * n_steps
    full = batch_sizes[0]
    if not reverse:
        states = states0
        rows = full
        done: list[list[Tensor]] = []  # states of sequences that ended, latest last
        for t in range(n_steps):
            bs = batch_sizes[t]
            if bs < rows:
                done.append([s[bs:rows] for s in states])
                states = [s[:bs] for s in states]
                rows = bs
            states = step(steps[t], states)
            outputs[t] = states[0]
        if done:
            done.append(states)
            done.reverse()  # the longest sequences come first in the batch
            states = [ea.cat([d[i] for d in done]) for i in range(len(states))]
    else:
        rows = batch_sizes[-1]
        states = [s[:rows] for s in states0] if rows < full else states0
        for t in range(n_steps - 1, -1, -1):
            bs = batch_sizes[t]
            if bs > rows:
                states = [ea.cat([s, s0[rows:bs]]) for s, s0 in zip(states, states0, strict=True)]
                rows = bs
            states = step(steps[t], states)
            outputs[t] = states[0]
    filled = cast(list[Tensor], outputs)  # every step has written its slot
    out = filled[0] if n_steps == 1 else ea.cat(filled)
    return out, states


def _fused(mode: str, w_hr: Tensor | None) -> bool:
    return use_fused and w_hr is None and mode in ("LSTM", "GRU")


def _run_fused(
    mode: str,
    gi: Tensor,
    w_hh: Tensor,
    b_hh: Tensor | None,
    states0: list[Tensor],
    batch_sizes: Sequence[int],
    reverse: bool,
) -> tuple[Tensor, list[Tensor]]:
    """One layer and direction through the fused aten operator: (packed output, final states).

    When no gradient will flow (no_grad, or nothing requires grad) the operator runs with
    train=False and saves no workspace for a backward."""
    inputs = [gi, w_hh, *states0] + ([] if b_hh is None else [b_hh])
    train = is_grad_enabled() and any(t.requires_grad for t in inputs)
    if mode == "LSTM":
        out, h, c, _ = ea._lstm_layer(gi, w_hh, states0[0], states0[1], list(batch_sizes), reverse, train)
        return out, [h, c]
    out, h, _ = ea._gru_layer(gi, w_hh, b_hh, states0[0], list(batch_sizes), reverse, train)
    return out, [h]


def rnn_packed(
    mode: str,
    data: Tensor,
    batch_sizes: Sequence[int],
    hx: list[Tensor],
    weights: Sequence[LayerWeights],
    num_layers: int,
    dropout: float,
    training: bool,
    bidirectional: bool,
) -> tuple[Tensor, list[Tensor]]:
    """A multi-layer (bi)directional RNN over packed data.

    mode: "RNN_TANH", "RNN_RELU", "LSTM" or "GRU"; data (sum(batch_sizes), input_size);
    hx: [h0] or [h0, c0] for LSTM, each (num_layers * num_directions, B, *); weights:
    one LayerWeights per layer and direction, forward before reverse. Dropout (the
    functional ``dropout``) is applied to every layer's output but the last.
    Returns (output data (sum(batch_sizes), num_directions * H_out), [h_n] or [h_n, c_n]).
    """
    if len(batch_sizes) == 0:
        raise RuntimeError("Expected sequence length to be larger than 0 in RNN")
    num_directions = 2 if bidirectional else 1
    finals: list[list[Tensor]] = [[] for _ in hx]
    layer_input = data
    for layer in range(num_layers):
        outs = []
        for direction in range(num_directions):
            idx = layer * num_directions + direction
            w_ih, w_hh, b_ih, b_hh, w_hr = weights[idx]
            gi = _project(layer_input, w_ih, _input_bias(mode, b_ih, b_hh))
            states0 = [s[idx] for s in hx]
            if _fused(mode, w_hr):
                out, states = _run_fused(mode, gi, w_hh, b_hh, states0, batch_sizes, direction == 1)
            else:
                step = _make_step(mode, w_hh, b_hh, w_hr)
                out, states = _run_direction(gi, batch_sizes, states0, step, direction == 1)
            outs.append(out)
            for f, s in zip(finals, states, strict=True):
                f.append(s)
        layer_input = outs[0] if num_directions == 1 else ea.cat(outs, 1)
        if dropout > 0 and training and layer < num_layers - 1:
            layer_input = ea.dropout(layer_input, dropout, True)
    return layer_input, [ea.stack(f) for f in finals]


# ---- cells: one step, (N, in) input and (N, H) states --------------------------------------


def _check_cell_input(input: Tensor, w_ih: Tensor) -> None:
    if input.size(1) != w_ih.size(1):
        raise RuntimeError(f"input has inconsistent input_size: got {input.size(1)} expected {w_ih.size(1)}")


def _check_cell_hidden(input: Tensor, hx: Tensor, hidden_size: int, label: str) -> None:
    if input.size(0) != hx.size(0):
        raise RuntimeError(f"Input batch size {input.size(0)} doesn't match hidden{label} batch size {hx.size(0)}")
    if hx.size(1) != hidden_size:
        raise RuntimeError(f"hidden{label} has inconsistent hidden_size: got {hx.size(1)}, expected {hidden_size}")


def _cell(
    mode: str,
    input: Tensor,
    states: list[Tensor],
    labels: Sequence[str],
    w_ih: Tensor,
    w_hh: Tensor,
    b_ih: Tensor | None,
    b_hh: Tensor | None,
) -> list[Tensor]:
    _check_cell_input(input, w_ih)
    for s, label in zip(states, labels, strict=True):
        _check_cell_hidden(input, s, w_hh.size(1), label)
    gi = _project(input, w_ih, _input_bias(mode, b_ih, b_hh))
    if _fused(mode, None) and input.size(0) > 0:
        return _run_fused(mode, gi, w_hh, b_hh, states, [input.size(0)], False)[1]
    return _make_step(mode, w_hh, b_hh, None)(gi, states)


def rnn_tanh_cell(
    input: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor, b_ih: Tensor | None = None, b_hh: Tensor | None = None
) -> Tensor:
    """h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh); input (N, in), hx (N, H)."""
    return _cell("RNN_TANH", input, [hx], ["0"], w_ih, w_hh, b_ih, b_hh)[0]


def rnn_relu_cell(
    input: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor, b_ih: Tensor | None = None, b_hh: Tensor | None = None
) -> Tensor:
    """h' = relu(x W_ih^T + b_ih + h W_hh^T + b_hh); input (N, in), hx (N, H)."""
    return _cell("RNN_RELU", input, [hx], ["0"], w_ih, w_hh, b_ih, b_hh)[0]


def lstm_cell(
    input: Tensor,
    hx: Sequence[Tensor],
    w_ih: Tensor,
    w_hh: Tensor,
    b_ih: Tensor | None = None,
    b_hh: Tensor | None = None,
) -> tuple[Tensor, Tensor]:
    """(h', c') of one LSTM step (gates i, f, g, o in that order); hx = (h, c), each (N, H)."""
    if len(hx) != 2:
        raise RuntimeError("lstm_cell expects two hidden states")
    h, c = _cell("LSTM", input, list(hx), ["0", "1"], w_ih, w_hh, b_ih, b_hh)
    return h, c


def gru_cell(
    input: Tensor, hx: Tensor, w_ih: Tensor, w_hh: Tensor, b_ih: Tensor | None = None, b_hh: Tensor | None = None
) -> Tensor:
    """h' = (1 - z) * n + z * h with r, z, n PyTorch's GRU gates; input (N, in), hx (N, H)."""
    return _cell("GRU", input, [hx], ["0"], w_ih, w_hh, b_ih, b_hh)[0]

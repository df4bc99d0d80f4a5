"""``RNN``, ``LSTM``, ``GRU`` and ``RNNCell``, ``LSTMCell``, ``GRUCell``.

Parameters are PyTorch's, by name, shape and order, so a PyTorch state_dict loads:
per layer k and direction (suffix ``_reverse`` for the backward one)
``weight_ih_l{k}`` (G, in_k), ``weight_hh_l{k}`` (G, H_out), ``bias_ih_l{k}`` (G),
``bias_hh_l{k}`` (G) and, for an LSTM with ``proj_size``, ``weight_hr_l{k}``
(proj_size, H), where G is H (RNN), 4H (LSTM, gates i|f|g|o) or 3H (GRU, gates
r|z|n), H_out is proj_size or H, and in_k is input_size for k = 0, else
num_directions * H_out. Every weight starts U(-1/sqrt(H), 1/sqrt(H)).

The computation itself is in ``ember.nn._functional_rnn``.
"""

from __future__ import annotations

import math
import numbers
import warnings
from typing import Any, ClassVar

import ember.aten as ea
from ember.aten import Tensor

from .. import _functional_rnn as _rnn
from .. import init
from ..parameter import Parameter
from ..utils.rnn import PackedSequence
from .module import Module

__all__ = ["GRU", "LSTM", "RNN", "GRUCell", "LSTMCell", "RNNBase", "RNNCell", "RNNCellBase"]

_GATES = {"LSTM": 4, "GRU": 3, "RNN_TANH": 1, "RNN_RELU": 1}


def _apply_permutation(tensor: Tensor, permutation: Tensor, dim: int = 1) -> Tensor:
    return tensor.index_select(dim, permutation)


class RNNBase(Module):
    """RNNBase(mode, input_size, hidden_size, num_layers=1, bias=True, batch_first=False,
    dropout=0.0, bidirectional=False, proj_size=0, device=None, dtype=None)

    The parameters and argument checks shared by RNN, LSTM and GRU.
    """

    __constants__: ClassVar[list[str]] = [
        "mode",
        "input_size",
        "hidden_size",
        "num_layers",
        "bias",
        "batch_first",
        "dropout",
        "bidirectional",
        "proj_size",
    ]

    mode: str
    input_size: int
    hidden_size: int
    num_layers: int
    bias: bool
    batch_first: bool
    dropout: float
    bidirectional: bool
    proj_size: int
    _name = "RNNBase"  # the name PyTorch's messages use

    def __init__(
        self,
        mode: str,
        input_size: int,
        hidden_size: int,
        num_layers: int = 1,
        bias: bool = True,
        batch_first: bool = False,
        dropout: float = 0.0,
        bidirectional: bool = False,
        proj_size: int = 0,
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__()
        self.mode = mode
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.num_layers = num_layers
        self.bias = bias
        self.batch_first = batch_first
        self.dropout = float(dropout)
        self.bidirectional = bidirectional
        self.proj_size = proj_size
        num_directions = 2 if bidirectional else 1

        if not isinstance(dropout, numbers.Number) or isinstance(dropout, bool) or not 0 <= dropout <= 1:
            raise ValueError(
                "dropout should be a number in range [0, 1] representing the probability of an element being zeroed"
            )
        if dropout > 0 and num_layers == 1:
            warnings.warn(
                "dropout option adds dropout after all but last recurrent layer, so non-zero dropout expects "
                f"num_layers greater than 1, but got dropout={dropout} and num_layers={num_layers}",
                stacklevel=2,
            )
        if not isinstance(hidden_size, int) or isinstance(hidden_size, bool):
            raise TypeError(f"hidden_size should be of type int, got: {type(hidden_size).__name__}")
        if hidden_size <= 0:
            raise ValueError("hidden_size must be greater than zero")
        if num_layers <= 0:
            raise ValueError("num_layers must be greater than zero")
        if proj_size < 0:
            raise ValueError("proj_size should be a positive integer or zero to disable projections")
        if proj_size >= hidden_size:
            raise ValueError("proj_size has to be smaller than hidden_size")
        if mode not in _GATES:
            raise ValueError("Unrecognized RNN mode: " + mode)
        gate_size = _GATES[mode] * hidden_size

        self._flat_weights_names: list[str] = []
        self._all_weights: list[list[str]] = []
        real_hidden_size = proj_size if proj_size > 0 else hidden_size
        for layer in range(num_layers):
            for direction in range(num_directions):
                layer_input_size = input_size if layer == 0 else real_hidden_size * num_directions
                suffix = "_reverse" if direction == 1 else ""
                shapes: list[tuple[str, tuple[int, ...]]] = [
                    ("weight_ih", (gate_size, layer_input_size)),
                    ("weight_hh", (gate_size, real_hidden_size)),
                ]
                if bias:
                    shapes += [("bias_ih", (gate_size,)), ("bias_hh", (gate_size,))]
                if proj_size > 0:
                    shapes.append(("weight_hr", (proj_size, hidden_size)))
                names = []
                for base, shape in shapes:
                    name = f"{base}_l{layer}{suffix}"
                    setattr(self, name, Parameter(ea.empty(shape, device=device, dtype=dtype)))
                    names.append(name)
                self._flat_weights_names.extend(names)
                self._all_weights.append(names)
        self.reset_parameters()

    def reset_parameters(self) -> None:
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def flatten_parameters(self) -> None:
        """A no-op kept for PyTorch compatibility (ember keeps no fused cuDNN weight buffer)."""

    @property
    def _flat_weights(self) -> list[Tensor | None]:
        return [getattr(self, name, None) for name in self._flat_weights_names]

    @property
    def all_weights(self) -> list[list[Parameter]]:
        return [[getattr(self, name) for name in names] for names in self._all_weights]

    def _layer_weights(self) -> list[_rnn.LayerWeights]:
        """(w_ih, w_hh, b_ih, b_hh, w_hr) per layer and direction, in _all_weights order."""
        out = []
        for names in self._all_weights:
            ws = [getattr(self, n) for n in names]
            w_ih, w_hh = ws[0], ws[1]
            b_ih, b_hh = (ws[2], ws[3]) if self.bias else (None, None)
            w_hr = ws[-1] if self.proj_size > 0 else None
            out.append((w_ih, w_hh, b_ih, b_hh, w_hr))
        return out

    # -- argument checks (PyTorch's messages) -------------------------------------------------
    def check_input(self, input: Tensor, batch_sizes: Tensor | None) -> None:
        w = getattr(self, self._flat_weights_names[0])
        if input.dtype != w.dtype:
            raise ValueError(
                f"RNN input dtype ({input.dtype}) does not match weight dtype ({w.dtype}). "
                f"Convert input: input.to({w.dtype}), or convert model: model.to({input.dtype})"
            )
        expected_input_dim = 2 if batch_sizes is not None else 3
        if input.dim() != expected_input_dim:
            raise RuntimeError(f"input must have {expected_input_dim} dimensions, got {input.dim()}")
        if self.input_size != input.size(-1):
            raise RuntimeError(
                f"input.size(-1) must be equal to input_size. Expected {self.input_size}, got {input.size(-1)}"
            )

    def get_expected_hidden_size(self, input: Tensor, batch_sizes: Tensor | None) -> tuple[int, int, int]:
        if batch_sizes is not None:
            mini_batch = int(batch_sizes[0])
        else:
            mini_batch = input.size(0) if self.batch_first else input.size(1)
        num_directions = 2 if self.bidirectional else 1
        real_hidden = self.proj_size if self.proj_size > 0 else self.hidden_size
        return (self.num_layers * num_directions, mini_batch, real_hidden)

    def check_hidden_size(
        self, hx: Tensor, expected_hidden_size: tuple[int, ...], msg: str = "Expected hidden size {}, got {}"
    ) -> None:
        if tuple(hx.size()) != tuple(expected_hidden_size):
            raise RuntimeError(msg.format(expected_hidden_size, list(hx.size())))

    def check_forward_args(self, input: Tensor, hidden: Tensor, batch_sizes: Tensor | None) -> None:
        self.check_input(input, batch_sizes)
        self.check_hidden_size(hidden, self.get_expected_hidden_size(input, batch_sizes))

    def permute_hidden(self, hx: Tensor, permutation: Tensor | None) -> Tensor:
        if permutation is None:
            return hx
        return _apply_permutation(hx, permutation)

    def extra_repr(self) -> str:
        s = "{input_size}, {hidden_size}"
        if self.proj_size != 0:
            s += ", proj_size={proj_size}"
        if self.num_layers != 1:
            s += ", num_layers={num_layers}"
        if self.bias is not True:
            s += ", bias={bias}"
        if self.batch_first is not False:
            s += ", batch_first={batch_first}"
        if self.dropout != 0:
            s += ", dropout={dropout}"
        if self.bidirectional is not False:
            s += ", bidirectional={bidirectional}"
        return s.format(**self.__dict__)

    # -- the shared forward -------------------------------------------------------------------
    def _prepare(self, input: Any) -> tuple[Tensor, list[int], Tensor | None, Tensor | None, bool, int]:
        """(data (T*B or sum(lengths), in), batch_sizes, sorted, unsorted, is_batched, batch)."""
        if isinstance(input, PackedSequence):
            data, batch_sizes_t, sorted_indices, unsorted_indices = input
            batch_sizes = [int(v) for v in batch_sizes_t.tolist()]
            return data, batch_sizes, sorted_indices, unsorted_indices, True, batch_sizes[0]
        if input.dim() not in (2, 3):
            what = "D tensor" if self._name == "RNN" else "D"  # PyTorch's RNN says "tensor", LSTM/GRU do not
            raise ValueError(f"{self._name}: Expected input to be 2D or 3D, got {input.dim()}{what} instead")
        is_batched = input.dim() == 3
        if not is_batched:
            input = input.unsqueeze(0 if self.batch_first else 1)
        return input, [], None, None, is_batched, input.size(0 if self.batch_first else 1)

    def _run(
        self, input: Any, data: Tensor, batch_sizes: list[int], states: list[Tensor]
    ) -> tuple[Tensor, list[Tensor]]:
        """Runs the layers; returns (output: packed data or (T, B, *) / (B, T, *), final states)."""
        packed = isinstance(input, PackedSequence)
        if not packed:
            seq = data.transpose(0, 1) if self.batch_first else data
            steps, batch = seq.size(0), seq.size(1)
            batch_sizes = [batch] * steps
            data = seq.reshape(steps * batch, seq.size(2))
        out, finals = _rnn.rnn_packed(
            self.mode,
            data,
            batch_sizes,
            states,
            self._layer_weights(),
            self.num_layers,
            self.dropout,
            self.training,
            self.bidirectional,
        )
        if not packed:
            out = out.view(steps, batch, out.size(1))
            if self.batch_first:
                out = out.transpose(0, 1)
        return out, finals

    def _wrap_output(self, input: Any, out: Tensor, is_batched: bool) -> Any:
        if isinstance(input, PackedSequence):
            return PackedSequence(out, input.batch_sizes, input.sorted_indices, input.unsorted_indices)
        if not is_batched:
            return out.squeeze(0 if self.batch_first else 1)
        return out

    def _single_state_forward(self, input: Any, hx: Tensor | None) -> tuple[Any, Tensor]:
        """forward of RNN and GRU (one hidden state)."""
        data, batch_sizes, sorted_indices, unsorted_indices, is_batched, batch = self._prepare(input)
        if not isinstance(input, PackedSequence) and hx is not None:
            if not is_batched and hx.dim() != 2:
                raise RuntimeError(f"For unbatched 2-D input, hx should also be 2-D but got {hx.dim()}-D tensor")
            if is_batched and hx.dim() != 3:
                raise RuntimeError(f"For batched 3-D input, hx should also be 3-D but got {hx.dim()}-D tensor")
            if not is_batched:
                hx = hx.unsqueeze(1)
        if hx is None:
            num_directions = 2 if self.bidirectional else 1
            hx = ea.zeros(
                (self.num_layers * num_directions, batch, self.hidden_size), dtype=data.dtype, device=data.device
            )
        else:
            hx = self.permute_hidden(hx, sorted_indices)
        self.check_forward_args(data, hx, input.batch_sizes if isinstance(input, PackedSequence) else None)
        out, (h_n,) = self._run(input, data, batch_sizes, [hx])
        output = self._wrap_output(input, out, is_batched)
        if isinstance(input, PackedSequence):
            return output, self.permute_hidden(h_n, unsorted_indices)
        if not is_batched:
            h_n = h_n.squeeze(1)
        return output, h_n


class RNN(RNNBase):
    """RNN(input_size, hidden_size, num_layers=1, nonlinearity='tanh', bias=True,
    batch_first=False, dropout=0.0, bidirectional=False, device=None, dtype=None)

    h_t = tanh(x_t W_ih^T + b_ih + h_{t-1} W_hh^T + b_hh) (or relu), stacked num_layers
    deep. forward(input, hx=None) -> (output, h_n): input (L, N, H_in) / (N, L, H_in) /
    (L, H_in) / PackedSequence, hx (D * num_layers, N, H); output (L, N, D * H).

    >>> rnn = RNN(10, 20, 2)
    >>> out, h_n = rnn(ember.aten.randn(5, 3, 10))
    >>> out.shape, h_n.shape
    (ember.aten.Size([5, 3, 20]), ember.aten.Size([2, 3, 20]))
    """

    _name = "RNN"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        if len(args) > 3:
            nonlinearity = args[3]
            args = args[:3] + args[4:]
        else:
            nonlinearity = kwargs.pop("nonlinearity", "tanh")
        if nonlinearity == "tanh":
            mode = "RNN_TANH"
        elif nonlinearity == "relu":
            mode = "RNN_RELU"
        else:
            raise ValueError(f"Unknown nonlinearity '{nonlinearity}'. Select from 'tanh' or 'relu'.")
        super().__init__(mode, *args, **kwargs)
        self.nonlinearity = nonlinearity

    def forward(self, input: Any, hx: Tensor | None = None) -> tuple[Any, Tensor]:
        return self._single_state_forward(input, hx)


class GRU(RNNBase):
    """GRU(input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
    bidirectional=False, device=None, dtype=None)

    r = sigmoid(W_ir x + b_ir + W_hr h + b_hr), z = sigmoid(W_iz x + b_iz + W_hz h + b_hz),
    n = tanh(W_in x + b_in + r * (W_hn h + b_hn)), h' = (1 - z) * n + z * h.
    forward(input, hx=None) -> (output, h_n), shapes as RNN.
    """

    _name = "GRU"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        if "proj_size" in kwargs:
            raise ValueError("proj_size argument is only supported for LSTM, not RNN or GRU")
        super().__init__("GRU", *args, **kwargs)

    def forward(self, input: Any, hx: Tensor | None = None) -> tuple[Any, Tensor]:
        return self._single_state_forward(input, hx)


class LSTM(RNNBase):
    """LSTM(input_size, hidden_size, num_layers=1, bias=True, batch_first=False, dropout=0.0,
    bidirectional=False, proj_size=0, device=None, dtype=None)

    i, f, g, o = sigmoid, sigmoid, tanh, sigmoid of (x W_ih^T + b_ih + h W_hh^T + b_hh),
    c' = f * c + i * g, h' = o * tanh(c') (then h' W_hr^T with ``proj_size``).
    forward(input, (h_0, c_0)=None) -> (output, (h_n, c_n)); h (D * num_layers, N, H_out),
    c (D * num_layers, N, H) with H_out = proj_size or H.
    """

    _name = "LSTM"

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__("LSTM", *args, **kwargs)

    def get_expected_cell_size(self, input: Tensor, batch_sizes: Tensor | None) -> tuple[int, int, int]:
        layers, mini_batch, _ = self.get_expected_hidden_size(input, batch_sizes)
        return (layers, mini_batch, self.hidden_size)

    def check_forward_args(  # type: ignore[override]
        self, input: Tensor, hidden: tuple[Tensor, Tensor], batch_sizes: Tensor | None
    ) -> None:
        self.check_input(input, batch_sizes)
        self.check_hidden_size(
            hidden[0], self.get_expected_hidden_size(input, batch_sizes), "Expected hidden[0] size {}, got {}"
        )
        self.check_hidden_size(
            hidden[1], self.get_expected_cell_size(input, batch_sizes), "Expected hidden[1] size {}, got {}"
        )

    def permute_hidden(  # type: ignore[override]
        self, hx: tuple[Tensor, Tensor], permutation: Tensor | None
    ) -> tuple[Tensor, Tensor]:
        if permutation is None:
            return hx
        return _apply_permutation(hx[0], permutation), _apply_permutation(hx[1], permutation)

    def forward(self, input: Any, hx: tuple[Tensor, Tensor] | None = None) -> tuple[Any, tuple[Tensor, Tensor]]:
        data, batch_sizes, sorted_indices, unsorted_indices, is_batched, batch = self._prepare(input)
        packed = isinstance(input, PackedSequence)
        if hx is None:
            num_directions = 2 if self.bidirectional else 1
            real_hidden = self.proj_size if self.proj_size > 0 else self.hidden_size
            layers = self.num_layers * num_directions
            h0 = ea.zeros((layers, batch, real_hidden), dtype=data.dtype, device=data.device)
            c0 = ea.zeros((layers, batch, self.hidden_size), dtype=data.dtype, device=data.device)
            hx = (h0, c0)
        else:
            if not packed:
                dims = (hx[0].dim(), hx[1].dim())
                if is_batched and dims != (3, 3):
                    raise RuntimeError(
                        "For batched 3-D input, hx and cx should also be 3-D but got "
                        f"({dims[0]}-D, {dims[1]}-D) tensors"
                    )
                if not is_batched:
                    if dims != (2, 2):
                        raise RuntimeError(
                            "For unbatched 2-D input, hx and cx should also be 2-D but got "
                            f"({dims[0]}-D, {dims[1]}-D) tensors"
                        )
                    hx = (hx[0].unsqueeze(1), hx[1].unsqueeze(1))
            hx = self.permute_hidden(hx, sorted_indices)
        self.check_forward_args(data, hx, input.batch_sizes if packed else None)
        out, (h_n, c_n) = self._run(input, data, batch_sizes, [hx[0], hx[1]])
        output = self._wrap_output(input, out, is_batched)
        if packed:
            return output, self.permute_hidden((h_n, c_n), unsorted_indices)
        if not is_batched:
            h_n, c_n = h_n.squeeze(1), c_n.squeeze(1)
        return output, (h_n, c_n)


# ---- cells ---------------------------------------------------------------------------------


class RNNCellBase(Module):
    """RNNCellBase(input_size, hidden_size, bias, num_chunks, device=None, dtype=None)

    weight_ih (num_chunks * H, input_size), weight_hh (num_chunks * H, H), bias_ih and
    bias_hh (num_chunks * H), all U(-1/sqrt(H), 1/sqrt(H)).
    """

    __constants__: ClassVar[list[str]] = ["input_size", "hidden_size", "bias"]

    input_size: int
    hidden_size: int
    bias: bool
    weight_ih: Tensor
    _name = "RNNCellBase"
    weight_hh: Tensor

    def __init__(
        self, input_size: int, hidden_size: int, bias: bool, num_chunks: int, device: Any = None, dtype: Any = None
    ) -> None:
        super().__init__()
        self.input_size = input_size
        self.hidden_size = hidden_size
        self.bias = bias
        self.weight_ih = Parameter(ea.empty((num_chunks * hidden_size, input_size), device=device, dtype=dtype))
        self.weight_hh = Parameter(ea.empty((num_chunks * hidden_size, hidden_size), device=device, dtype=dtype))
        if bias:
            self.bias_ih = Parameter(ea.empty(num_chunks * hidden_size, device=device, dtype=dtype))
            self.bias_hh = Parameter(ea.empty(num_chunks * hidden_size, device=device, dtype=dtype))
        else:
            self.register_parameter("bias_ih", None)
            self.register_parameter("bias_hh", None)
        self.reset_parameters()

    def extra_repr(self) -> str:
        s = "{input_size}, {hidden_size}"
        if "bias" in self.__dict__ and self.bias is not True:
            s += ", bias={bias}"
        if "nonlinearity" in self.__dict__ and self.nonlinearity != "tanh":
            s += ", nonlinearity={nonlinearity}"
        return s.format(**self.__dict__)

    def reset_parameters(self) -> None:
        stdv = 1.0 / math.sqrt(self.hidden_size) if self.hidden_size > 0 else 0
        for weight in self.parameters():
            init.uniform_(weight, -stdv, stdv)

    def _batched(self, input: Tensor, hx: Tensor | None) -> tuple[Tensor, Tensor | None, bool]:
        name = self._name
        if input.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D instead")
        if hx is not None and hx.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected hidden to be 1D or 2D, got {hx.dim()}D instead")
        is_batched = input.dim() == 2
        if not is_batched:
            input = input.unsqueeze(0)
            if hx is not None:
                hx = hx.unsqueeze(0)
        return input, hx, is_batched

    def _zeros(self, input: Tensor) -> Tensor:
        return ea.zeros((input.size(0), self.hidden_size), dtype=input.dtype, device=input.device)


class RNNCell(RNNCellBase):
    """RNNCell(input_size, hidden_size, bias=True, nonlinearity='tanh', device=None, dtype=None)

    h' = tanh(x W_ih^T + b_ih + h W_hh^T + b_hh) (or relu). forward(input, hx=None): input
    (N, H_in) or (H_in), hx (N, H) or (H) (zeros when None) -> h'.
    """

    __constants__: ClassVar[list[str]] = ["input_size", "hidden_size", "bias", "nonlinearity"]
    nonlinearity: str
    _name = "RNNCell"

    def __init__(
        self,
        input_size: int,
        hidden_size: int,
        bias: bool = True,
        nonlinearity: str = "tanh",
        device: Any = None,
        dtype: Any = None,
    ) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=1, device=device, dtype=dtype)
        self.nonlinearity = nonlinearity

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        input, hx, is_batched = self._batched(input, hx)
        if hx is None:
            hx = self._zeros(input)
        if self.nonlinearity == "tanh":
            cell = _rnn.rnn_tanh_cell
        elif self.nonlinearity == "relu":
            cell = _rnn.rnn_relu_cell
        else:
            raise RuntimeError(f"Unknown nonlinearity: {self.nonlinearity}")
        ret = cell(input, hx, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)
        return ret if is_batched else ret.squeeze(0)


class LSTMCell(RNNCellBase):
    """LSTMCell(input_size, hidden_size, bias=True, device=None, dtype=None)

    One LSTM step. forward(input, (h, c)=None) -> (h', c'); input (N, H_in) or (H_in),
    h and c (N, H) or (H).
    """

    _name = "LSTMCell"

    def __init__(
        self, input_size: int, hidden_size: int, bias: bool = True, device: Any = None, dtype: Any = None
    ) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=4, device=device, dtype=dtype)

    def forward(self, input: Tensor, hx: tuple[Tensor, Tensor] | None = None) -> tuple[Tensor, Tensor]:
        name = self._name
        if input.dim() not in (1, 2):
            raise ValueError(f"{name}: Expected input to be 1D or 2D, got {input.dim()}D instead")
        if hx is not None:
            for idx, h in enumerate(hx):
                if h.dim() not in (1, 2):
                    raise ValueError(f"{name}: Expected hx[{idx}] to be 1D or 2D, got {h.dim()}D instead")
        is_batched = input.dim() == 2
        if not is_batched:
            input = input.unsqueeze(0)
        if hx is None:
            zeros = self._zeros(input)
            hx = (zeros, zeros)
        elif not is_batched:
            hx = tuple(h.unsqueeze(0) for h in hx)  # type: ignore[assignment]
        h, c = _rnn.lstm_cell(input, hx, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)
        if not is_batched:
            h, c = h.squeeze(0), c.squeeze(0)
        return h, c


class GRUCell(RNNCellBase):
    """GRUCell(input_size, hidden_size, bias=True, device=None, dtype=None)

    One GRU step. forward(input, hx=None) -> h'; shapes as RNNCell.
    """

    _name = "GRUCell"

    def __init__(
        self, input_size: int, hidden_size: int, bias: bool = True, device: Any = None, dtype: Any = None
    ) -> None:
        super().__init__(input_size, hidden_size, bias, num_chunks=3, device=device, dtype=dtype)

    def forward(self, input: Tensor, hx: Tensor | None = None) -> Tensor:
        input, hx, is_batched = self._batched(input, hx)
        if hx is None:
            hx = self._zeros(input)
        ret = _rnn.gru_cell(input, hx, self.weight_ih, self.weight_hh, self.bias_ih, self.bias_hh)
        return ret if is_batched else ret.squeeze(0)

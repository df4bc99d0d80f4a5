"""Printing tensors the way PyTorch prints them.

Rules (PyTorch's print options: precision 4, threshold 1000, edgeitems 3, linewidth 80):
* one width for every element, right-aligned;
* floats: if every finite non-zero value is an integer, print "3." style; otherwise
  fixed notation with 4 decimals, or scientific notation when the largest finite
  magnitude is over 1e8, the smallest under 1e-4, or their ratio over 1000;
* more than `threshold` elements: only `edgeitems` at each end of each dim, with "...";
* suffixes: dtype when it is not the default for its kind (default float dtype,
  int64, bool), device when not CPU, requires_grad / grad_fn, size for empty tensors.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

from . import _dtypes


@dataclass
class PrintOptions:
    precision: int = 4
    threshold: float = 1000
    edgeitems: int = 3
    linewidth: int = 80
    sci_mode: bool | None = None


PRINT_OPTS = PrintOptions()


def set_printoptions(
    precision: int | None = None,
    threshold: float | None = None,
    edgeitems: int | None = None,
    linewidth: int | None = None,
    profile: str | None = None,
    sci_mode: bool | None = None,
) -> None:
    """Changes how tensors print (PyTorch's torch.set_printoptions)."""
    if profile == "default":
        PRINT_OPTS.precision, PRINT_OPTS.threshold, PRINT_OPTS.edgeitems, PRINT_OPTS.linewidth = 4, 1000, 3, 80
    elif profile == "short":
        PRINT_OPTS.precision, PRINT_OPTS.threshold, PRINT_OPTS.edgeitems, PRINT_OPTS.linewidth = 2, 1000, 2, 80
    elif profile == "full":
        PRINT_OPTS.precision, PRINT_OPTS.threshold, PRINT_OPTS.edgeitems, PRINT_OPTS.linewidth = 4, math.inf, 3, 80
    if precision is not None:
        PRINT_OPTS.precision = precision
    if threshold is not None:
        PRINT_OPTS.threshold = threshold
    if edgeitems is not None:
        PRINT_OPTS.edgeitems = edgeitems
    if linewidth is not None:
        PRINT_OPTS.linewidth = linewidth
    PRINT_OPTS.sci_mode = sci_mode


def get_printoptions() -> dict[str, Any]:
    return dict(PRINT_OPTS.__dict__)


class _Formatter:
    def __init__(self, values: list[Any], kind: str) -> None:
        self.kind = kind  # "float", "int", "bool"
        self.int_mode = True
        self.sci_mode = False
        self.max_width = 1
        if kind != "float":
            for v in values:
                self.max_width = max(self.max_width, len(self._plain(v)))
            return
        # Modes and width come from the finite non-zero values only (nan, inf and 0 are
        # printed as they are, padded to that width), as PyTorch does.
        finite_nonzero = [v for v in values if v == v and v not in (math.inf, -math.inf) and v != 0]
        if not finite_nonzero:
            return
        mags = [abs(v) for v in finite_nonzero]
        lo, hi = min(mags), max(mags)
        self.int_mode = all(float(v).is_integer() for v in finite_nonzero)
        if self.int_mode:
            self.sci_mode = hi / lo > 1000.0 or hi > 1.0e8
        else:
            self.sci_mode = hi / lo > 1000.0 or hi > 1.0e8 or lo < 1.0e-4
        if PRINT_OPTS.sci_mode is not None:
            self.sci_mode = PRINT_OPTS.sci_mode
        for v in finite_nonzero:
            self.max_width = max(self.max_width, len(self._format(v)))

    @staticmethod
    def _plain(v: Any) -> str:
        if isinstance(v, bool):
            return "True" if v else "False"
        return str(v)

    def _format(self, v: Any) -> str:
        if self.kind != "float":
            return self._plain(v)
        if v != v:
            return "nan"
        if v in (math.inf, -math.inf):
            return "inf" if v > 0 else "-inf"
        p = PRINT_OPTS.precision
        if self.sci_mode:
            return f"{v:.{p}e}"
        if self.int_mode:
            return f"{v:.0f}."
        return f"{v:.{p}f}"

    def format(self, v: Any) -> str:
        return self._format(v).rjust(self.max_width)


def _summarize(t: Any, edge: int) -> Any:
    """Nested lists of the edge items of each dim, with the string "..." between."""
    if t.dim() == 0:
        return t.item()
    n = t.shape[0]
    if n > 2 * edge:
        head = [_summarize(t[i], edge) if t.dim() > 1 else t[i].item() for i in range(edge)]
        tail = [_summarize(t[i], edge) if t.dim() > 1 else t[i].item() for i in range(n - edge, n)]
        return [*head, "...", *tail]
    return [_summarize(t[i], edge) if t.dim() > 1 else t[i].item() for i in range(n)]


def _flatten(nested: Any, out: list[Any]) -> None:
    if isinstance(nested, list):
        for x in nested:
            _flatten(x, out)
    elif nested != "...":
        out.append(nested)


def _vector_str(values: list[Any], indent: int, fmt: _Formatter, summarize: bool) -> str:
    element_length = fmt.max_width + 2
    char_per_line = max(PRINT_OPTS.linewidth - indent, 1)
    per_line = max(1, math.floor(char_per_line / element_length))
    # PyTorch's summary entry is " ..." in a row, so it reads "2,  ..., 7".
    strs = [(" ..." if v == "..." else fmt.format(v)) for v in values]
    lines = [strs[i : i + per_line] for i in range(0, len(strs), per_line)]
    body = (",\n" + " " * (indent + 1)).join(", ".join(line) for line in lines)
    return "[" + body + "]"


def _tensor_str_nested(nested: Any, ndim: int, indent: int, fmt: _Formatter, summarize: bool) -> str:
    if ndim == 0:
        return fmt.format(nested)
    if ndim == 1:
        return _vector_str(nested, indent, fmt, summarize)
    parts = []
    for x in nested:
        if isinstance(x, str) and x == "...":
            parts.append("...")
        else:
            parts.append(_tensor_str_nested(x, ndim - 1, indent + 1, fmt, summarize))
    sep = "," + "\n" * (ndim - 1) + " " * (indent + 1)
    return "[" + sep.join(parts) + "]"


def tensor_str(t: Any, indent: int) -> str:
    if t.numel() == 0:
        return "[]"
    summarize = t.numel() > PRINT_OPTS.threshold
    src = t.detach() if t.requires_grad else t
    if src.device.type != "cpu":
        src = src.cpu()
    nested = _summarize(src, PRINT_OPTS.edgeitems) if summarize else src.tolist()
    flat: list[Any] = []
    _flatten(nested, flat)
    name = t.dtype._name
    kind = "bool" if name == "bool" else ("float" if t.dtype.is_floating_point else "int")
    fmt = _Formatter(flat, kind)
    return _tensor_str_nested(nested, t.dim(), indent, fmt, summarize)


def tensor_repr(t: Any, prefix: str = "tensor(") -> str:
    indent = len(prefix)
    suffixes: list[str] = []
    default_float = _dtypes.get_default_dtype()
    is_default = t.dtype in (default_float, _dtypes.int64, _dtypes.bool)
    if t.device.type != "cpu":
        suffixes.append(f"device='{t.device}'")
    if t.numel() == 0:
        # NumPy-style: the shape is shown unless it is (0,); with no elements to go by,
        # any dtype but the default float one is shown.
        if t.dim() != 1:
            suffixes.append(f"size={tuple(t.shape)}")
        if t.dtype != default_float:
            suffixes.append(f"dtype={t.dtype!r}")
        body = "[]"
    else:
        if not is_default:
            suffixes.append(f"dtype={t.dtype!r}")
        body = tensor_str(t, indent)
    if t.grad_fn is not None:
        suffixes.append(f"grad_fn=<{type(t.grad_fn).__name__}>")
    elif t.requires_grad:
        suffixes.append("requires_grad=True")
    out = prefix + body
    # PyTorch's wrapping rule (its line-length bookkeeping counts two extra characters
    # until the first wrap).
    last_line_len = len(out) - out.rfind("\n") + 1
    for s in suffixes:
        if last_line_len + len(s) + 2 > PRINT_OPTS.linewidth:
            out += ",\n" + " " * indent + s
            last_line_len = indent + len(s)
        else:
            out += ", " + s
            last_line_len += len(s) + 2
    return out + ")"

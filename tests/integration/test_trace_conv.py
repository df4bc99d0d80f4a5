"""The dispatch trace of nn.Conv2d(3, 8, 3)(x).sum().backward(), asserted line by line:
every operator, its keys, the kernel chosen and a source location that exists."""

from __future__ import annotations

import io
import re
from pathlib import Path

import ember.aten as ea
import ember.nn as nn

ATEN = Path(__file__).resolve().parents[2] / "packages" / "aten"

# (regex of the line, kernel source kind) in order; "{src}" stands for " (file:line)"
EXPECTED = [
    r"aten::conv2d\(Tensor\[float32 \(1,3,5,5\)\], Tensor\[float32 \(8,3,3,3\)\], Tensor\[float32 \(8,\)\], "
    r"\(1, 1\), \(0, 0\), \(1, 1\), 1\) keys=\[AutogradCPU, CPU\]",
    r"  AutogradCPU \[CompositeImplicitAutograd\]: ember\.aten\.native\.conv:conv2d{src}",
    r"  aten::convolution\(Tensor\[float32 \(1,3,5,5\)\], .*\) keys=\[AutogradCPU, CPU\]",
    r"    AutogradCPU \[Autograd\]: ember\.autograd\._generated:_k_convolution{src}",
    r"    -> CPU: convolution{src}",
    r"aten::sum\(Tensor\[float32 \(1,8,3,3\)\], None, False, None\) keys=\[AutogradCPU, CPU\]",
    r"  AutogradCPU \[Autograd\]: ember\.autograd\._generated:_k_sum{src}",
    r"  -> CPU: sum_out{src}",
]


def _src_exists(path: str, line: int) -> bool:
    p = Path(path)
    if not p.is_absolute():
        p = ATEN / p  # C++ kernels: relative to packages/aten
    return p.is_file() and 0 < line <= len(p.read_text().splitlines())


def test_conv2d_forward_backward_trace() -> None:
    ea.manual_seed(0)
    conv = nn.Conv2d(3, 8, 3)
    x = ea.randn(1, 3, 5, 5)
    buf = io.StringIO()
    with ea.trace_dispatch(file=buf):
        conv(x).sum().backward()
    lines = buf.getvalue().splitlines()
    src = r" \((?P<file>[^()]+):(?P<line>\d+)\)"
    for i, pattern in enumerate(EXPECTED):
        m = re.fullmatch(pattern.replace("{src}", src), lines[i])
        assert m is not None, f"line {i}: {lines[i]!r} does not match {pattern!r}"
        if "file" in m.groupdict() and m.group("file"):
            assert _src_exists(m.group("file"), int(m.group("line"))), lines[i]
    # the backward pass: the Nodes in execution order, with the backend ops they call
    rest = lines[len(EXPECTED) :]
    nodes = [ln for ln in rest if ln.startswith("[backward]")]
    assert nodes[:2] == ["[backward] SumBackward0", "[backward] ConvolutionBackward0"]
    assert nodes.count("[backward] ember::autograd::AccumulateGrad") == 2  # weight and bias (x needs no grad)
    i = rest.index("[backward] ConvolutionBackward0")
    assert rest[i + 1].startswith("aten::convolution_backward(Tensor[float32 (1,8,3,3)], Tensor[float32 (1,3,5,5)]")
    m = re.fullmatch(r"  CPU: convolution_backward \((csrc/native/Convolution\.cpp):(\d+)\)", rest[i + 2])
    assert m is not None, rest[i + 2]
    assert "convolution_backward" in (ATEN / m.group(1)).read_text().splitlines()[int(m.group(2)) - 1]
    assert conv.weight.grad is not None and conv.weight.grad.shape == (8, 3, 3, 3)

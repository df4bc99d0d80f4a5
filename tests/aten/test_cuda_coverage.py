"""Every CPU kernel has a CUDA kernel, except the names in tests/aten/cuda_pending.txt.

Runs without a GPU on a CUDA build (kernels are registered whether or not a device is
present): (a) every DispatchStub (``_C._dispatch_stubs()``) has its CUDA slot filled;
(b) every aten operator overload with a kernel for the CPU dispatch key also has one
for CUDA (Composite kernels serve both keys and are not counted). A name in the list
that has its CUDA kernel fails too, so the list only shrinks: delete the line when the
kernel lands. Regenerate the list with ``python tests/aten/test_cuda_coverage.py``.
"""

from __future__ import annotations

import os
import sys

import ember.aten as ea
import pytest
from ember.aten import _dispatch
from ember.c10py import DispatchKey

PENDING_FILE = os.path.join(os.path.dirname(os.path.abspath(__file__)), "cuda_pending.txt")

pytestmark = pytest.mark.skipif(not ea._C._built_with_cuda, reason="ember.aten was built without CUDA")


def read_pending(path: str = PENDING_FILE) -> dict[str, str]:
    """name -> reason, from lines ``name  # reason`` (blank lines and ``#`` lines ignored)."""
    out: dict[str, str] = {}
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            text = line.strip()
            if not text or text.startswith("#"):
                continue
            name, _, reason = text.partition("#")
            name = name.strip()
            assert " " not in name, f"{path}:{n}: one name per line, got {name!r}"
            assert reason.strip(), f"{path}:{n}: {name} needs a reason ('{name}  # why')"
            assert name not in out, f"{path}:{n}: {name} listed twice"
            out[name] = reason.strip()
    return out


def stubs_without_cuda() -> set[str]:
    return {name for name, has_cuda in ea._C._dispatch_stubs() if not has_cuda}


def all_stubs() -> set[str]:
    return {name for name, _ in ea._C._dispatch_stubs()}


def cpu_ops() -> dict[str, bool]:
    """aten overload name ('add.Tensor') -> has a CUDA kernel, for every overload with a CPU kernel."""
    return {
        op.qualname: op.has_kernel_for(DispatchKey.CUDA)
        for op in _dispatch.all_ops()
        if op.namespace == "aten" and op.has_kernel_for(DispatchKey.CPU)
    }


def missing_names() -> list[str]:
    """What the list must hold now: stubs, then operator overloads, each sorted."""
    ops = cpu_ops()
    return sorted(stubs_without_cuda()) + sorted(name for name, has in ops.items() if not has)


def test_stub_and_op_names_do_not_collide() -> None:
    assert not all_stubs() & set(cpu_ops()), "a stub and an operator share a name: the list would be ambiguous"


def test_every_dispatch_stub_has_a_cuda_kernel_unless_pending() -> None:
    pending = read_pending()
    missing = stubs_without_cuda() - set(pending)
    assert not missing, (
        f"DispatchStubs without a CUDA kernel (REGISTER_CUDA_DISPATCH in csrc/native/cuda/), "
        f"not in {os.path.basename(PENDING_FILE)}: {sorted(missing)}"
    )


def test_every_cpu_operator_has_a_cuda_kernel_unless_pending() -> None:
    pending = read_pending()
    missing = {name for name, has in cpu_ops().items() if not has} - set(pending)
    assert not missing, (
        f"operators with a CPU kernel and no CUDA kernel (native_functions.yaml dispatch: CUDA), "
        f"not in {os.path.basename(PENDING_FILE)}: {sorted(missing)}"
    )


def test_pending_list_only_shrinks() -> None:
    """A listed name that now has its CUDA kernel (or no longer exists) must leave the list."""
    pending = read_pending()
    stubs, ops = all_stubs(), cpu_ops()
    unknown = sorted(n for n in pending if n not in stubs and n not in ops)
    assert not unknown, f"{os.path.basename(PENDING_FILE)} names no stub or CPU operator: {unknown}"
    no_cuda = stubs_without_cuda()
    done = sorted(n for n in pending if (n in stubs and n not in no_cuda) or ops.get(n, False))
    assert not done, f"these have their CUDA kernel now: delete them from {os.path.basename(PENDING_FILE)}: {done}"


def test_pending_file_format_is_checked() -> None:
    import tempfile

    with tempfile.NamedTemporaryFile("w", suffix=".txt", delete=False) as f:
        f.write("add_stub\n")
    try:
        with pytest.raises(AssertionError, match="needs a reason"):
            read_pending(f.name)
    finally:
        os.unlink(f.name)


def _default_reason(name: str) -> str:
    if name in all_stubs():
        return "CPU kernel only"
    kernel = _dispatch.find_op(name).kernels()[DispatchKey.CPU]
    where = f" ({os.path.basename(kernel.source[0])})" if kernel.source else ""
    return f"CPU kernel only: {kernel.name}{where}"


def write_pending(path: str = PENDING_FILE) -> None:
    """Rewrites the list from this build, keeping the reasons already written."""
    old = read_pending(path) if os.path.exists(path) else {}
    lines = [
        "# CPU kernels without a CUDA kernel yet (tests/aten/test_cuda_coverage.py).",
        "# One DispatchStub or aten operator overload per line, with the reason after '#'.",
        "# Delete a line when its CUDA kernel lands; the test fails until you do.",
        "# Regenerate: python tests/aten/test_cuda_coverage.py (on a CUDA build).",
    ]
    for name in missing_names():
        lines.append(f"{name}  # {old.get(name) or _default_reason(name)}")
    with open(path, "w", encoding="utf-8") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    if not ea._C._built_with_cuda:
        sys.exit("ember.aten was built without CUDA: the list would name every kernel")
    write_pending()
    print(f"wrote {PENDING_FILE}: {len(missing_names())} names")

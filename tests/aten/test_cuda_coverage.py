"""Every CPU kernel has a CUDA kernel, except the names listed in two files:

- tests/aten/cuda_pending.txt: a CUDA kernel is owed (work to do). When it holds no names,
  every CPU kernel that should have a CUDA twin has one (test_pending_cuda_kernels prints
  the counts of both lists).
- tests/aten/cuda_cpu_only.txt: CPU-only by design, each with the reason (e.g. a CPU helper
  whose CUDA callers take another route): no CUDA kernel will come.

Runs without a GPU on a CUDA build (kernels are registered whether or not a device is
present): (a) every DispatchStub (``_C._dispatch_stubs()``) has its CUDA slot filled;
(b) every aten operator overload with a kernel for the CPU dispatch key also has one for
CUDA (Composite kernels serve both keys and are not counted). Strict both ways: a CPU kernel
without CUDA that is in neither file fails, and so does a listed name that has its CUDA
kernel (or no longer exists): delete its line when the kernel lands. A name may not be in
both files. Regenerate with ``python tests/aten/test_cuda_coverage.py`` (names in
cuda_cpu_only.txt stay there; every other missing name goes to cuda_pending.txt).
"""

from __future__ import annotations

import os
import sys

import ember.aten as ea
import pytest
from ember.aten import _dispatch
from ember.c10py import DispatchKey

HERE = os.path.dirname(os.path.abspath(__file__))
PENDING_FILE = os.path.join(HERE, "cuda_pending.txt")
CPU_ONLY_FILE = os.path.join(HERE, "cuda_cpu_only.txt")

pytestmark = pytest.mark.skipif(not ea._C._built_with_cuda, reason="ember.aten was built without CUDA")


def read_list(path: str) -> dict[str, str]:
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


def read_pending(path: str = PENDING_FILE) -> dict[str, str]:
    return read_list(path)


def read_cpu_only(path: str = CPU_ONLY_FILE) -> dict[str, str]:
    return read_list(path)


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
    """Every CPU kernel without a CUDA kernel now: stubs, then operator overloads, each sorted."""
    ops = cpu_ops()
    return sorted(stubs_without_cuda()) + sorted(name for name, has in ops.items() if not has)


def test_stub_and_op_names_do_not_collide() -> None:
    assert not all_stubs() & set(cpu_ops()), "a stub and an operator share a name: the lists would be ambiguous"


def test_every_dispatch_stub_has_a_cuda_kernel_unless_listed() -> None:
    listed = set(read_pending()) | set(read_cpu_only())
    missing = stubs_without_cuda() - listed
    assert not missing, (
        f"DispatchStubs without a CUDA kernel (REGISTER_CUDA_DISPATCH in csrc/native/cuda/), in neither "
        f"{os.path.basename(PENDING_FILE)} nor {os.path.basename(CPU_ONLY_FILE)}: {sorted(missing)}"
    )


def test_every_cpu_operator_has_a_cuda_kernel_unless_listed() -> None:
    listed = set(read_pending()) | set(read_cpu_only())
    missing = {name for name, has in cpu_ops().items() if not has} - listed
    assert not missing, (
        f"operators with a CPU kernel and no CUDA kernel (native_functions.yaml dispatch: CUDA), in neither "
        f"{os.path.basename(PENDING_FILE)} nor {os.path.basename(CPU_ONLY_FILE)}: {sorted(missing)}"
    )


def _stale(names: dict[str, str], path: str) -> None:
    """Every name in the list is a stub or CPU operator that still lacks its CUDA kernel."""
    stubs, ops = all_stubs(), cpu_ops()
    unknown = sorted(n for n in names if n not in stubs and n not in ops)
    assert not unknown, f"{os.path.basename(path)} names no stub or CPU operator: {unknown}"
    no_cuda = stubs_without_cuda()
    done = sorted(n for n in names if (n in stubs and n not in no_cuda) or ops.get(n, False))
    assert not done, f"these have their CUDA kernel now: delete them from {os.path.basename(path)}: {done}"


def test_pending_list_only_shrinks() -> None:
    """A pending name that now has its CUDA kernel (or no longer exists) must leave the list."""
    _stale(read_pending(), PENDING_FILE)


def test_cpu_only_list_holds_only_kernels_without_cuda() -> None:
    """A CPU-only name that gains a CUDA kernel (or no longer exists) must leave its list too."""
    _stale(read_cpu_only(), CPU_ONLY_FILE)


def test_pending_and_cpu_only_lists_are_disjoint() -> None:
    both = sorted(set(read_pending()) & set(read_cpu_only()))
    assert not both, f"owed a CUDA kernel and CPU-only by design at once: {both}"


def test_pending_cuda_kernels(capsys: pytest.CaptureFixture[str]) -> None:
    """The counts, printed; every name without a CUDA kernel is in exactly one list."""
    pending, cpu_only = read_pending(), read_cpu_only()
    assert set(missing_names()) == set(pending) | set(cpu_only)
    with capsys.disabled():
        print(f"\ncuda coverage: {len(pending)} CUDA kernels pending, {len(cpu_only)} CPU-only by design")


def test_list_file_format_is_checked(tmp_path: os.PathLike[str]) -> None:
    path = os.path.join(os.fspath(tmp_path), "list.txt")
    with open(path, "w", encoding="utf-8") as f:
        f.write("add_stub\n")
    with pytest.raises(AssertionError, match="needs a reason"):
        read_list(path)
    with open(path, "w", encoding="utf-8") as f:
        f.write("add_stub  # a\nadd_stub  # b\n")
    with pytest.raises(AssertionError, match="listed twice"):
        read_list(path)


def _default_reason(name: str) -> str:
    if name in all_stubs():
        return "CPU kernel only"
    kernel = _dispatch.find_op(name).kernels()[DispatchKey.CPU]
    where = f" ({os.path.basename(kernel.source[0])})" if kernel.source else ""
    return f"CPU kernel only: {kernel.name}{where}"


def write_lists(pending_path: str = PENDING_FILE, cpu_only_path: str = CPU_ONLY_FILE) -> tuple[int, int]:
    """Rewrites both lists from this build, keeping the reasons already written; names in
    the CPU-only list stay there, every other missing name is pending. Returns the counts."""
    old_pending = read_list(pending_path) if os.path.exists(pending_path) else {}
    old_cpu_only = read_list(cpu_only_path) if os.path.exists(cpu_only_path) else {}
    pending, cpu_only = [], []
    for name in missing_names():
        if name in old_cpu_only:
            cpu_only.append(f"{name}  # {old_cpu_only[name]}")
        else:
            pending.append(f"{name}  # {old_pending.get(name) or _default_reason(name)}")
    pending_lines = [
        "# CPU kernels whose CUDA kernel is still to be written (tests/aten/test_cuda_coverage.py).",
        "# When no names follow, every CPU kernel meant for CUDA has its CUDA kernel -- written and",
        "# compiled by nvcc, not shown to work: without a GPU the tests run the kernels' block code",
        "# on the host (the CUDA host emulation: the test-only module ember_aten_testing,",
        "# packages/aten/testing), which checks their arithmetic only -- not launches, shared",
        "# memory, synchronisation, atomics or device memory. Checked that way and no other without",
        "# a GPU: indexing, random distributions, softmax, layer / RMS / group norm statistics,",
        "# fused attention, grid_sampler_2d, linalg_cross, ctc_loss, and the cuBLAS calls planned",
        "# by the matmuls and convolutions.",
        "# One DispatchStub or aten operator overload per line, with the reason after '#'.",
        "# Delete a line when its CUDA kernel lands (the test fails until you do).",
        "# CPU-only by design (no CUDA kernel will come): tests/aten/cuda_cpu_only.txt.",
        "# Regenerate both: python tests/aten/test_cuda_coverage.py (on a CUDA build).",
    ]
    cpu_only_lines = [
        "# CPU kernels that have no CUDA kernel by design, each with the reason after '#'",
        "# (tests/aten/test_cuda_coverage.py). Kernels still owed: tests/aten/cuda_pending.txt.",
        "# Move a name here from cuda_pending.txt only with the reason no CUDA kernel is needed.",
    ]
    with open(pending_path, "w", encoding="utf-8") as f:
        f.write("\n".join(pending_lines + pending) + "\n")
    with open(cpu_only_path, "w", encoding="utf-8") as f:
        f.write("\n".join(cpu_only_lines + cpu_only) + "\n")
    return len(pending), len(cpu_only)


if __name__ == "__main__":
    if not ea._C._built_with_cuda:
        sys.exit("ember.aten was built without CUDA: the lists would name every kernel")
    n_pending, n_cpu_only = write_lists()
    print(f"wrote {PENDING_FILE}: {n_pending} pending; {CPU_ONLY_FILE}: {n_cpu_only} CPU-only by design")

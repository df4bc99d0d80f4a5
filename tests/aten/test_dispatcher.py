"""The dispatcher: key sets, kernel resolution, fallbacks, fallthrough, redispatch, library API, errors."""

from __future__ import annotations

import os
from typing import Any

import ember.aten as ea
import pytest
from ember.aten import _dispatch
from ember.aten.library import Library
from ember.c10py import DispatchKey, DispatchKeySet

CPU = DispatchKeySet(DispatchKey.CPU).raw
PYTHON = DispatchKeySet(DispatchKey.Python).raw
TRACER = DispatchKeySet(DispatchKey.Tracer).raw


def test_tensor_keys_follow_device_and_requires_grad() -> None:
    t = ea.tensor([1.0, 2.0])
    assert t._keys == CPU
    assert DispatchKeySet.from_raw(t._keys).highest_priority_key() == DispatchKey.CPU
    t.requires_grad_(True)
    ks = DispatchKeySet.from_raw(t._keys)
    assert ks.highest_priority_key() == DispatchKey.AutogradCPU
    assert t._impl.key_set == ks  # the C++ TensorImpl carries the same set
    t.requires_grad_(False)
    assert t._keys == CPU


def test_only_floating_tensors_require_grad() -> None:
    with pytest.raises(RuntimeError, match="only Tensors of floating point dtype can require gradients"):
        ea.tensor([1, 2]).requires_grad_(True)


def test_cpp_kernels_report_their_source() -> None:
    op = _dispatch.find_op("aten::add.Tensor")
    key, kernel, _below = op.lookup(CPU)
    assert key == DispatchKey.CPU
    assert kernel.name == "add_out"
    assert kernel.source is not None
    path, line = kernel.source
    assert path.endswith("csrc/native/BinaryOps.cpp")
    assert line > 0


@pytest.fixture
def lib() -> Any:
    lib = Library("emtest", "DEF")
    yield lib
    lib._destroy()


def test_define_and_impl_a_python_operator(lib: Library) -> None:
    lib.define("scale_add(Tensor x, Tensor y, *, float alpha=2.0) -> Tensor")
    lib.impl("scale_add", lambda x, y, alpha: x * alpha + y, "CPU")
    x, y = ea.tensor([1.0, 2.0]), ea.tensor([10.0, 20.0])
    assert ea.ops.emtest.scale_add(x, y).tolist() == [12.0, 24.0]
    assert ea.ops.emtest.scale_add(x, y, alpha=3.0).tolist() == [13.0, 26.0]
    assert ea.ops.emtest.scale_add.default(x, y).tolist() == [12.0, 24.0]


def test_missing_kernel_names_the_key(lib: Library) -> None:
    lib.define("nokernel(Tensor x) -> Tensor")
    with pytest.raises(NotImplementedError, match="nokernel: no kernel registered for dispatch key CPU"):
        ea.ops.emtest.nokernel(ea.tensor([1.0]))


def test_composite_implicit_kernel_serves_every_backend(lib: Library) -> None:
    lib.define("twice(Tensor x) -> Tensor")
    lib.impl("twice", lambda x: x + x, "CompositeImplicitAutograd")
    assert ea.ops.emtest.twice(ea.tensor([3.0])).tolist() == [6.0]


def test_direct_kernel_beats_composite(lib: Library) -> None:
    lib.define("which(Tensor x) -> Tensor")
    lib.impl("which", lambda x: x + 1, "CompositeImplicitAutograd")
    lib.impl("which", lambda x: x + 100, "CPU")
    assert ea.ops.emtest.which(ea.tensor([0.0])).tolist() == [100.0]


def test_wrong_argument_types_list_the_schema() -> None:
    with pytest.raises(TypeError, match=r"add\(\): argument types do not match the schema"):
        ea.add(ea.tensor([1.0]), "x")


def test_unknown_operator() -> None:
    with pytest.raises(AttributeError, match="no operator emtest::does_not_exist"):
        ea.ops.emtest.does_not_exist  # noqa: B018
    with pytest.raises(KeyError, match="unknown operator"):
        _dispatch.find_op("aten::does_not_exist")


def test_override_aten_kernel_and_restore() -> None:
    lib = Library("aten", "IMPL")
    calls: list[str] = []

    def my_neg(x: Any) -> Any:
        calls.append("neg")
        return x

    try:
        lib.impl("neg", my_neg, "CPU")
        t = ea.tensor([1.0])
        assert ea.neg(t) is t
        assert calls == ["neg"]
    finally:
        lib._destroy()
    assert ea.neg(ea.tensor([1.0])).tolist() == [-1.0]


def test_fallback_with_included_key_and_redispatch() -> None:
    """A Python-key fallback sees every op (with the key included on this thread) and redispatches."""
    seen: list[str] = []

    def spy(op: Any, keyset: int, *args: Any) -> Any:
        seen.append(op.qualname)
        return op.redispatch(keyset, *args)

    lib = Library("aten", "IMPL")
    lib.fallback(spy, "Python")
    try:
        a = ea.tensor([1.0, 2.0])
        with _dispatch.IncludeKeys(PYTHON):
            r = (a + 1) * 2
        assert r.tolist() == [4.0, 6.0]
        assert seen == ["add.Tensor", "mul.Tensor"]
        seen.clear()
        _ = a + 1  # not included any more
        assert seen == []
    finally:
        lib._destroy()
    assert _dispatch.fallback_for(DispatchKey.Python) is None


def test_excluded_keys_skip_a_kernel() -> None:
    seen: list[str] = []

    def spy(op: Any, keyset: int, *args: Any) -> Any:
        seen.append(op.name)
        return op.redispatch(keyset, *args)

    lib = Library("aten", "IMPL")
    lib.fallback(spy, "Python")
    try:
        with _dispatch.IncludeKeys(PYTHON), _dispatch.ExcludeKeys(PYTHON):
            ea.neg(ea.tensor([1.0]))
        assert seen == []
    finally:
        lib._destroy()


def test_fallthrough_skips_to_the_next_key(lib: Library) -> None:
    lib.define("ft(Tensor x) -> Tensor")
    lib.impl("ft", lambda x: x * 3, "CPU")
    _dispatch.register_fallthrough("emtest::ft", DispatchKey.Python)
    with _dispatch.IncludeKeys(PYTHON):
        assert ea.ops.emtest.ft(ea.tensor([2.0])).tolist() == [6.0]


def test_with_keyset_kernel_receives_the_set_below_its_key(lib: Library) -> None:
    lib.define("keyed(Tensor x) -> Tensor")
    got: list[int] = []

    def above(keyset: int, x: Any) -> Any:
        got.append(keyset)
        return _dispatch.find_op("emtest::keyed").redispatch(keyset, x)

    lib.impl("keyed", above, "Python", with_keyset=True)
    lib.impl("keyed", lambda x: x + 1, "CPU")
    with _dispatch.IncludeKeys(PYTHON):
        assert ea.ops.emtest.keyed(ea.tensor([1.0])).tolist() == [2.0]
    assert DispatchKeySet.from_raw(got[0]).highest_priority_key() == DispatchKey.CPU


def test_only_one_def_library_per_namespace(lib: Library) -> None:
    with pytest.raises(RuntimeError, match="Only a single Library"):
        Library("emtest", "DEF")
    frag = Library("emtest", "FRAGMENT")
    frag.define("more(Tensor x) -> Tensor")
    frag._destroy()


def test_mutating_custom_op_returns_its_argument_and_bumps_version(lib: Library) -> None:
    lib.define("inc_(Tensor(a!) x) -> Tensor(a!)")
    lib.impl("inc_", lambda x: x.add_(1), "CPU")
    t = ea.tensor([1.0])
    v = t._version
    assert ea.ops.emtest.inc_(t) is t
    assert t.tolist() == [2.0]
    assert t._version > v


def test_dispatch_cache_is_invalidated_by_registration(lib: Library) -> None:
    lib.define("cached(Tensor x) -> Tensor")
    lib.impl("cached", lambda x: x + 1, "CPU")
    t = ea.tensor([0.0])
    assert ea.ops.emtest.cached(t).tolist() == [1.0]
    lib.impl("cached", lambda x: x + 2, "CPU")
    assert ea.ops.emtest.cached(t).tolist() == [2.0]


def test_cpu_capability_override_from_environment() -> None:
    import subprocess
    import sys

    code = "import ember.aten as ea; print(ea._C._get_cpu_capability())"
    for cap in ("default", "avx2"):
        env = dict(os.environ, EMBER_CPU_CAPABILITY=cap)
        out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, check=True)
        assert out.stdout.strip() == cap

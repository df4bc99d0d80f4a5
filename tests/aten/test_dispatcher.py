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


def test_wrong_argument_types_list_the_signatures() -> None:
    # PyTorch's message: what was given, then every signature of the operator's name
    expected = r"add\(\) received an invalid combination of arguments - got \(Tensor, str"
    with pytest.raises(TypeError, match=expected) as e:
        ea.add(ea.tensor([1.0]), "x")
    assert " * (Tensor input, Tensor other, *, Number alpha = 1)" in str(e.value)
    assert "INTERNAL" not in str(e.value)


@pytest.mark.parametrize(
    ("call", "got", "expected"),
    [
        (lambda t: t.view(dtype=None), "got (dtype=NoneType)", [" * (dtype dtype)", " * (tuple of ints size)"]),
        (lambda t: t.view(size="a"), "got (Tensor, str)", [" * (Tensor input, tuple of ints size)"]),
        (lambda t: t.view(None), "got (Tensor, NoneType)", [" * (Tensor input, tuple of ints size)"]),
        (lambda t: ea.mul(t, [1]), "got (Tensor, list of [int])", [" * (Tensor input, Tensor other)"]),
        (lambda t: t.sum(dim="x"), "received an invalid combination", [" * (Tensor input, tuple of ints? dim"]),
    ],
)
def test_schema_mismatch_is_a_pytorch_style_type_error(call: Any, got: str, expected: list[str]) -> None:
    with pytest.raises(TypeError) as e:
        call(ea.tensor([1.0, 2.0]))
    msg = str(e.value)
    assert "received an invalid combination of arguments" in msg, msg
    assert got in msg, msg
    for sig in expected:
        assert sig in msg, msg


def test_cpp_entry_is_the_generated_entry_in_cpp() -> None:
    # the common ops run through C++ dispatcher entries mirroring the generated Python ones
    from ember.aten import _C
    from ember.aten._generated import _ops

    if _dispatch.PYTHON_DISPATCH:
        pytest.skip("EMBER_PYTHON_DISPATCH=1: every call takes the Python entries")
    entry = _ops._call_add_Tensor
    assert isinstance(entry, _C.DispatchEntry)
    assert entry.op is _dispatch.find_op("aten::add.Tensor")
    assert entry.python_entry.__name__ == "_call_add_Tensor"
    assert isinstance(ea.Tensor.__add__, _C.DispatchEntry)
    a, b = ea.tensor([1.0, 2.0]), ea.tensor([10.0, 20.0])
    for fast, slow in ((entry, entry.python_entry),):
        assert fast(a, b, 1).tolist() == slow(a, b, 1).tolist() == [11.0, 22.0]
        assert fast(a, 2, 3).tolist() == slow(a, 2, 3).tolist() == [7.0, 8.0]
    # int[] arguments: one int means a one-element list (as _intlist), tuples and lists pass through
    m = ea.tensor([[1.0, 2.0], [3.0, 4.0]])
    assert m.sum(1).tolist() == m.sum([1]).tolist() == m.sum((1,)).tolist() == [3.0, 7.0]
    assert m.sum(_np_int(0)).tolist() == [4.0, 6.0]  # a NumPy int takes the Python entry's rules


def _np_int(v: int) -> Any:
    import numpy as np

    return np.int64(v)


def test_cpp_dunders_keep_python_semantics() -> None:
    a = ea.tensor([1.0, 2.0])
    assert (a + 1).tolist() == (1 + a).tolist() == [2.0, 3.0]
    assert (2 - a).tolist() == [1.0, 0.0]
    assert (a - 2).tolist() == [-1.0, 0.0]
    assert (1 / ea.tensor([2.0, 4.0])).tolist() == [0.5, 0.25]
    assert (-a).tolist() == [-1.0, -2.0]
    assert (a == None) is False  # noqa: E711  -- NotImplemented from both sides: identity
    assert a != None  # noqa: E711
    with pytest.raises(TypeError, match="unsupported operand"):
        a + "x"
    with pytest.raises(TypeError, match="unsupported operand"):
        "x" - a
    assert ea.Tensor.__add__.__name__ == "__add__"


def test_cpp_entries_see_registered_python_kernels(lib: Library) -> None:
    # a kernel registered later (here: a Python one for aten::neg under Tracer) is found by the C++ entry
    seen: list[str] = []

    def tracer(op: Any, ks: int, *args: Any) -> Any:
        seen.append(op.name)
        return op.redispatch(ks, *args)

    x = ea.tensor([1.0])
    _dispatch.register_fallback(DispatchKey.Tracer, tracer)
    try:
        with _dispatch.IncludeKeys(TRACER):
            r = -x
            s = x * 3
    finally:
        _dispatch.register_fallback(DispatchKey.Tracer, None)
    assert r.tolist() == [-1.0] and s.tolist() == [3.0]
    assert seen == ["neg", "mul"]


def test_thread_local_key_sets_are_per_thread() -> None:
    # _dispatch.tls: include / exclude_not in C++ (DispatchTLS; EMBER_PYTHON_DISPATCH=1: a
    # threading.local), every other attribute per thread too; a new thread starts from the defaults
    import threading

    from ember.aten import _C

    tls = _dispatch.tls
    assert isinstance(tls, _dispatch._TLS if _dispatch.PYTHON_DISPATCH else _C.DispatchTLS)
    seen: list[Any] = []

    def other_thread() -> None:
        seen.append((tls.include, tls.exclude_not, tls.view_creation))
        tls.include = PYTHON  # on this thread only
        tls.view_creation = "other"

    before = tls.view_creation
    with _dispatch.IncludeKeys(TRACER), _dispatch.ExcludeKeys(CPU):
        tls.view_creation = "main"
        try:
            assert tls.include == TRACER and tls.exclude_not == _dispatch.ALL_BITS & ~CPU
            t = threading.Thread(target=other_thread)
            t.start()
            t.join()
            assert tls.include == TRACER and tls.view_creation == "main"
        finally:
            tls.view_creation = before
    assert seen == [(0, _dispatch.ALL_BITS, _dispatch._TLS.view_creation)]  # the class default
    assert tls.include == 0 and tls.exclude_not == _dispatch.ALL_BITS
    if not _dispatch.PYTHON_DISPATCH:
        assert "include=0x0" in repr(tls) and "exclude_not=0xffffffffffffffff" in repr(tls)
        tls.include = TRACER
        del tls.include  # back to the default, as a threading.local's class attribute
        assert tls.include == 0
        with pytest.raises(TypeError, match=r"tls\.include must be an int .*got str"):
            tls.include = "x"
        with pytest.raises(OverflowError):
            tls.exclude_not = -1
        assert tls.exclude_not == _dispatch.ALL_BITS
        assert _C._dispatch_tls(0, _dispatch.ALL_BITS, _dispatch._TLS()) is tls  # one instance
        with pytest.raises(ValueError, match="other defaults"):
            _C._dispatch_tls(1, _dispatch.ALL_BITS, _dispatch._TLS())


def test_redispatch_excluding_keys_only_during_the_call(lib: Library) -> None:
    # redispatcher(op, exclude=bits): the kernel and everything it calls run with `bits` excluded
    # (an Autograd kernel running its op below itself); the set is restored after, on error too
    seen: list[str] = []

    def spy(op: Any, keyset: int, *args: Any) -> Any:
        seen.append(op.name)
        return op.redispatch(keyset, *args)

    def nested(x: Any) -> Any:
        if x.numel() == 0:
            raise ValueError("nested: empty")
        return x + 1  # an aten call from inside the kernel: the spy sees it unless Python is excluded

    lib.define("nested(Tensor x) -> Tensor")
    lib.impl("nested", nested, "CPU")
    op = _dispatch.find_op("emtest::nested")
    plain, below = _dispatch.redispatcher(op), _dispatch.redispatcher(op, exclude=PYTHON)
    x = ea.tensor([1.0])
    spies = Library("aten", "IMPL")
    spies.fallback(spy, "Python")
    try:
        with _dispatch.IncludeKeys(PYTHON):
            assert plain(CPU, x).tolist() == [2.0]
            assert seen == ["add"]
            seen.clear()
            assert below(CPU, x).tolist() == [2.0]
            assert seen == []
            assert _dispatch.tls.exclude_not == _dispatch.ALL_BITS
            with pytest.raises(ValueError, match="nested: empty"):
                below(CPU, ea.tensor([]))
            assert _dispatch.tls.exclude_not == _dispatch.ALL_BITS
            _ = x + 1
        assert seen == ["add"]
    finally:
        spies._destroy()


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

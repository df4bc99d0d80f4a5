"""DLPack: Tensor.__dlpack__/__dlpack_device__ and ember.aten.from_dlpack.

Zero-copy both ways with NumPy (write through one, read through the other), versioned
and legacy capsules, the capsule ownership rules, and BufferError for requests that
cannot be honoured.
"""

from __future__ import annotations

import ctypes
import gc
import subprocess
import sys

import ember.aten as ea
import numpy as np
import pytest
from ember.aten._dlpack import DLDeviceType

DTYPES = [ea.bool, ea.uint8, ea.int8, ea.int16, ea.int32, ea.int64, ea.float16, ea.float32, ea.float64]

_get_name = ctypes.pythonapi.PyCapsule_GetName
_get_name.restype = ctypes.c_char_p
_get_name.argtypes = [ctypes.py_object]


def capsule_name(cap) -> str:
    return _get_name(cap).decode()


def sample(dtype, shape=(3, 4)):
    t = ea.arange(12).reshape(shape)
    return (t % 3 == 0) if dtype == ea.bool else t.to(dtype)


@pytest.mark.parametrize("dtype", DTYPES, ids=str)
@pytest.mark.parametrize("view", ["contiguous", "transposed", "sliced", "expanded", "empty", "scalar"])
def test_numpy_from_ember_is_zero_copy(dtype, view):
    base = sample(dtype)
    t = {
        "contiguous": base,
        "transposed": base.t(),
        "sliced": base[1:, ::2],
        "expanded": base[:1].expand(3, 4),
        "empty": base[:0],
        "scalar": base[1, 1],
    }[view]
    a = np.from_dlpack(t)
    assert a.shape == tuple(t.shape)
    assert a.tolist() == t.tolist()
    if t.numel():
        assert a.ctypes.data == t.data_ptr()
        assert a.strides == tuple(s * t.element_size() for s in t.stride())


def test_write_through_numpy_read_through_ember_and_back():
    t = ea.zeros(3, 4)
    a = np.from_dlpack(t[:, 1:])
    a[1, 0] = 7.0
    assert t[1, 1].item() == 7.0
    t[2, 3] = -2.0
    assert a[2, 2] == -2.0

    b = np.arange(10, dtype=np.int64)
    u = ea.from_dlpack(b[2:8:2])
    assert u.tolist() == [2, 4, 6] and u.stride() == (2,)
    u[0] = 100
    assert b[2] == 100
    b[6] = -6
    assert u[2].item() == -6


@pytest.mark.parametrize(
    "np_dtype", [np.bool_, np.uint8, np.int8, np.int16, np.int32, np.int64, np.float16, np.float32, np.float64]
)
def test_from_numpy_via_dlpack_every_dtype(np_dtype):
    a = (np.arange(6) % 2 == 0) if np_dtype is np.bool_ else np.arange(6).astype(np_dtype)
    t = ea.from_dlpack(a.reshape(2, 3).T)
    assert t.dtype == ea.from_numpy(a).dtype
    assert t.tolist() == a.reshape(2, 3).T.tolist()
    assert t.data_ptr() == a.ctypes.data


def test_bfloat16_roundtrip_through_capsules():
    t = ea.tensor([1.5, -2.0, 3.25], dtype=ea.bfloat16)
    u = ea.from_dlpack(t.__dlpack__(max_version=(1, 0)))
    assert u.dtype == ea.bfloat16 and u.data_ptr() == t.data_ptr()
    assert u.float().tolist() == [1.5, -2.0, 3.25]
    with pytest.raises((BufferError, RuntimeError), match=r"(?i)dtype"):
        np.from_dlpack(t)  # NumPy has no bfloat16: NumPy's own error


def test_ember_to_ember_shares_and_outlives_the_source():
    t = ea.arange(5.0)
    u = ea.from_dlpack(t)
    assert u.data_ptr() == t.data_ptr()
    del t
    gc.collect()
    assert u.tolist() == [0.0, 1.0, 2.0, 3.0, 4.0]


def test_dlpack_device():
    dev = ea.ones(2).__dlpack_device__()
    assert dev == (DLDeviceType.kDLCPU, 0) and isinstance(dev[0], DLDeviceType)


def test_versioned_and_legacy_capsules_and_renaming():
    t = ea.arange(4)
    legacy = t.__dlpack__()
    versioned = t.__dlpack__(max_version=(1, 3))
    old = t.__dlpack__(max_version=(0, 8))
    assert capsule_name(legacy) == "dltensor"
    assert capsule_name(versioned) == "dltensor_versioned"
    assert capsule_name(old) == "dltensor"
    a = ea.from_dlpack(legacy)
    b = ea.from_dlpack(versioned)
    assert capsule_name(legacy) == "used_dltensor"
    assert capsule_name(versioned) == "used_dltensor_versioned"
    assert a.tolist() == b.tolist() == [0, 1, 2, 3]
    with pytest.raises(ValueError, match="already consumed"):
        ea.from_dlpack(legacy)
    del old  # never consumed: its destructor frees it


def test_unconsumed_capsules_release_the_tensor():
    t = ea.ones(1000)
    storage = t.untyped_storage()
    before = storage.use_count
    caps = [t.__dlpack__(max_version=(1, 0)) for _ in range(3)] + [t.__dlpack__()]
    assert storage.use_count == before  # the capsules hold the TensorImpl, not new storage refs
    del caps
    gc.collect()
    assert t.sum().item() == 1000.0


def test_buffer_errors():
    t = ea.ones(2)
    with pytest.raises(BufferError, match="stream must be None for a CPU tensor"):
        t.__dlpack__(stream=5)
    with pytest.raises(BufferError, match="needs a copy, but copy=False"):
        t.__dlpack__(max_version=(1, 0), dl_device=(DLDeviceType.kDLCUDA, 0), copy=False)
    with pytest.raises(BufferError, match="cannot export to device kDLMetal"):
        t.__dlpack__(max_version=(1, 0), dl_device=(DLDeviceType.kDLMetal, 0), copy=True)
    g = ea.ones(2)
    g.requires_grad_(True)
    with pytest.raises(BufferError, match=r"Can't export tensors that require gradient, use tensor.detach\(\)"):
        g.__dlpack__()
    with pytest.raises(TypeError, match="stream must be"):
        t.__dlpack__(stream="x")


def test_copy_flag():
    t = ea.arange(3.0)
    same = ea.from_dlpack(t.__dlpack__(max_version=(1, 0), copy=False))
    assert same.data_ptr() == t.data_ptr()
    cap = t.__dlpack__(max_version=(1, 0), copy=True)
    copied = ea.from_dlpack(cap)
    assert copied.data_ptr() != t.data_ptr() and copied.tolist() == [0.0, 1.0, 2.0]
    a = np.from_dlpack(t, copy=True)
    assert a.ctypes.data != t.data_ptr()
    same_device = t.__dlpack__(max_version=(1, 0), dl_device=(DLDeviceType.kDLCPU, 0))
    assert ea.from_dlpack(same_device).data_ptr() == t.data_ptr()


def test_read_only_numpy_array():
    a = np.arange(3.0)
    a.flags.writeable = False
    with pytest.warns(UserWarning, match="The given DLPack tensor is read-only"):
        shared = ea.from_dlpack(a)
    assert shared.data_ptr() == a.ctypes.data and shared.tolist() == [0.0, 1.0, 2.0]
    t = ea.from_dlpack(a, copy=True)
    assert t.tolist() == [0.0, 1.0, 2.0] and t.data_ptr() != a.ctypes.data


def test_from_dlpack_rejects_non_capsules():
    with pytest.raises(TypeError, match="expected a DLPack capsule"):
        ea.from_dlpack([1, 2])


def test_negative_strides_from_numpy_are_refused():
    with pytest.raises(BufferError, match="negative strides"):
        ea.from_dlpack(np.arange(4.0)[::-1])


def test_deleter_safe_at_interpreter_shutdown():
    # Capsules and tensors alive at exit (both directions) must not crash the interpreter.
    code = (
        "import numpy as np, ember.aten as ea\n"
        "t = ea.arange(10.0)\n"
        "keep = [t.__dlpack__(), t.__dlpack__(max_version=(1, 0)), np.from_dlpack(t)]\n"
        "a = np.arange(5.0); u = ea.from_dlpack(a); keep.append(u)\n"
        "import builtins; builtins._keep = keep\n"
        "print('ok')\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "ok"


def test_capsule_version_never_exceeds_max_version():
    class DLPackVersion(ctypes.Structure):
        _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]

    get_pointer = ctypes.pythonapi.PyCapsule_GetPointer
    get_pointer.restype = ctypes.c_void_p
    get_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
    t = ea.ones(2)
    for max_version, want in (((1, 0), (1, 0)), ((1, 1), (1, 1)), ((1, 7), (1, 1)), ((2, 0), (1, 1))):
        cap = t.__dlpack__(max_version=max_version)
        v = DLPackVersion.from_address(get_pointer(cap, b"dltensor_versioned"))
        assert (v.major, v.minor) == want, max_version

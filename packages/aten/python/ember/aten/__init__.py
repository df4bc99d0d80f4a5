"""ember.aten: tensors and their operators (PyTorch's ATen, with autograd turned off).

    >>> import ember.aten as ea
    >>> x = ea.tensor([[1.0, 2.0], [3.0, 4.0]])
    >>> (x + 1).sum()
    tensor(14.)

Operators are declared in native_functions.yaml; the generated module
``_generated/_ops.py`` holds their dispatcher entries, public functions and
Tensor methods. Importing this package registers the C++ kernels and the Python
composite kernels into the dispatcher, then loads the plugins that extend it
(ember-autograd registers its Autograd kernels through the entry-point group
``ember.aten.plugins``).
"""

from __future__ import annotations

import os as _os
from importlib import metadata as _metadata

# One thread pool: OpenBLAS runs on one thread and ember splits its products over its own
# OpenMP threads (native/Blas.cpp). Those threads sleep as soon as a parallel region ends
# instead of spinning for it: a spinning thread takes a core from whatever runs next -- the
# main thread's Python, another process -- and on a loaded 2-core machine a small conv
# training step took 9x the CPU time of one thread. Read when _C loads libgomp; a value the
# user set (OMP_WAIT_POLICY=ACTIVE, GOMP_SPINCOUNT) is kept.
if "GOMP_SPINCOUNT" not in _os.environ:
    _os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

import ember.c10py
from ember.c10py import device

from . import _C, _dispatch, _tensor_ops, profiler, random
from . import native as _native
from ._C import Generator, can_cast, get_num_threads, set_num_threads
from ._dtypes import (
    bfloat16,
    bool,
    double,
    dtype,
    float,
    float16,
    float32,
    float64,
    get_default_dtype,
    half,
    int,
    int8,
    int16,
    int32,
    int64,
    long,
    set_default_dtype,
    short,
    uint8,
)
from ._factories import as_tensor, from_numpy, strided, tensor
from ._generated import _ops as _generated_ops
from ._generated._kernel_sources import KERNEL_SOURCES as _KERNEL_SOURCES
from ._memory_format import channels_last, channels_last_3d, contiguous_format, memory_format, preserve_format
from ._tensor import Size, Tensor
from ._tensor_str import get_printoptions, set_printoptions
from ._trace import trace_dispatch
from .functional import (  # issue 18
    atleast_1d,
    atleast_2d,
    atleast_3d,
    block_diag,
    broadcast_shapes,
    broadcast_tensors,
    cartesian_prod,
    einsum,
    gradient,
    histogramdd,
    lu,
    meshgrid,
    tensordot,
    unravel_index,
)
from .random import default_generator, fork_rng, get_rng_state, initial_seed, manual_seed, seed, set_rng_state

__version__ = _metadata.version("ember-aten")


def _check_cpu_capability() -> None:
    """A library built without the baseline kernels (EMBER_CPU_BASELINE=OFF, the demo's
    build for its own machine) runs only on CPUs with one of the capabilities it holds."""
    built = _C._built_cpu_capabilities()
    order = ["default", "avx2", "avx512"]
    detected = _C._detected_cpu_capability()
    if order.index(detected) < order.index(built[0]):  # built: lowest first
        raise ImportError(
            f"ember.aten was built for CPUs with {' / '.join(built)} only (EMBER_CPU_BASELINE=OFF); "
            f"this CPU supports {detected}: rebuild ember-aten with the baseline"
        )


_check_cpu_capability()


def _register_kernels() -> None:
    for qualname, key, kernel_name, fn in _C._native_kernels():
        src = _KERNEL_SOURCES.get(kernel_name)
        _dispatch.register_kernel(qualname, key, fn, name=kernel_name, source=src)
    py_kernels = _native.kernels()
    for qualname, key, kernel_name in _generated_ops.PYTHON_KERNELS:
        fn = py_kernels.get(kernel_name)
        if fn is None:
            raise ImportError(
                f"native_functions.yaml: {qualname} needs the Python kernel {kernel_name}() in ember.aten.native"
            )
        _dispatch.register_kernel("aten::" + qualname, key, fn)


_register_kernels()

# Public functions: ember.aten.add, ... (generated: _generated/functions.py), and the namespaces
# ember.aten.linalg / special / fft / nn / return_types (modules of this package, each importing
# its generated functions; nn.py adds torch.nn.functional's hand-written front ends)
from . import fft, linalg, nn, return_types, special  # noqa: E402
from ._generated.functions import *  # noqa: E402, F403

# -- Tensor's methods, from these sources in this order. Each source adds names; a name a later
# source also sets is recorded in _TENSOR_METHOD_OVERRIDES, and tests/aten/test_tensor_method_sources.py
# fails on any override not declared in _DECLARED_TENSOR_METHOD_OVERRIDES (nothing wins silently):
#   0. the native base (_C.TensorBase: _impl, _keys, dtype, dim, numel, ...), 1. the class body
#   (_tensor.py), 2. native_functions.yaml's methods (generated), 3. the operator dunders
#   (_tensor_ops), 4. _indexing, 5. _legacy, 6. _dlpack, 7. _sparse (installed further down).
_TENSOR_METHOD_SOURCES: dict[str, str] = {
    name: "ember.aten._C.TensorBase" for name in _C.TensorBase.__dict__ if not name.startswith("__")
}
_TENSOR_METHOD_SOURCES.update(dict.fromkeys(Tensor.__dict__, "ember.aten._tensor"))
_TENSOR_METHOD_OVERRIDES: list[tuple[str, str, str]] = []  # (name, the source replaced, the source used)
# the overrides meant to be there, each with its reason
_DECLARED_TENSOR_METHOD_OVERRIDES = {
    ("view", "native_functions.yaml", "ember.aten._tensor"): "view(*shape) and view(dtype) told apart in one call",
    ("type", "ember.aten._tensor", "ember.aten._legacy"): "type() also takes the legacy names ('torch.FloatTensor')",
}


def _record_tensor_methods(source: str, before: dict[str, object]) -> None:
    for name, value in Tensor.__dict__.items():
        if before.get(name, _MISSING) is not value:
            if name in _TENSOR_METHOD_SOURCES:
                _TENSOR_METHOD_OVERRIDES.append((name, _TENSOR_METHOD_SOURCES[name], source))
            _TENSOR_METHOD_SOURCES[name] = source


_MISSING = object()
# 2: a generated method the class body writes by hand is not installed (the class's is used)
for _name in _generated_ops.TENSOR_METHODS.keys() & _TENSOR_METHOD_SOURCES.keys():
    _TENSOR_METHOD_OVERRIDES.append((_name, "native_functions.yaml", _TENSOR_METHOD_SOURCES[_name]))
for _name, _fn in _generated_ops.TENSOR_METHODS.items():
    if _name not in _TENSOR_METHOD_SOURCES:
        setattr(Tensor, _name, _fn)
        _TENSOR_METHOD_SOURCES[_name] = "native_functions.yaml"
_before = dict(Tensor.__dict__)
_tensor_ops.install(Tensor, _generated_ops)
_record_tensor_methods("ember.aten._tensor_ops", _before)
from . import _indexing  # noqa: E402
from ._indexing import nonzero  # noqa: E402  # nonzero(as_tuple=...) is written by hand

_before = dict(Tensor.__dict__)
_indexing.install(Tensor)
_record_tensor_methods("ember.aten._indexing", _before)

# library: operators defined from Python or C++; extension: the API of the layers above,
# complete before they plug in (_load_plugins)
from . import extension, library  # noqa: E402
from .library import cmake_prefix_path, ops  # noqa: E402


def _load_plugins() -> None:
    """Runs the `ember.aten.plugins` entry points (ember-autograd registers its kernels this way)."""
    for ep in _metadata.entry_points(group="ember.aten.plugins"):
        ep.load()()


_load_plugins()

from . import _trace  # noqa: E402

_trace._enable_from_environment()  # EMBER_TRACE_DISPATCH=1

# -- serialization (save/load in PyTorch's checkpoint format, safetensors, DLPack)
from . import _dlpack, safetensors, serialization  # noqa: E402
from ._dlpack import from_dlpack  # noqa: E402
from .serialization import load, save  # noqa: E402

_before = dict(Tensor.__dict__)
_dlpack.install(Tensor)
_record_tensor_methods("ember.aten._dlpack", _before)

# the CUDA device API (ember.aten.cuda: PyTorch's torch.cuda) and backend settings
# (ember.aten.backends.cuda.matmul.allow_tf32, .cudnn.allow_tf32)
# PyTorch's legacy typed constructors (FloatTensor, ...), Tensor.type_as / is_xpu, and the
# accelerator probes (ember.aten.accelerator: PyTorch's torch.accelerator)
from . import _legacy, accelerator, backends, cuda  # noqa: E402
from ._legacy import (  # noqa: E402
    BFloat16Tensor,
    BoolTensor,
    ByteTensor,
    CharTensor,
    DoubleTensor,
    FloatTensor,
    HalfTensor,
    IntTensor,
    LongTensor,
    ShortTensor,
    set_default_tensor_type,
)

_before = dict(Tensor.__dict__)
_legacy.install()
_record_tensor_methods("ember.aten._legacy", _before)

# sparse COO tensors (PyTorch's torch.sparse_coo_tensor, Tensor.to_sparse, torch.sparse.mm / sum)
from . import _sparse, sparse  # noqa: E402
from ._sparse import SparseTensor, sparse_coo, sparse_coo_tensor, spmm  # noqa: E402

_before = dict(Tensor.__dict__)
_sparse.install(Tensor)
_record_tensor_methods("ember.aten._sparse", _before)
del _before

# -- automatic mixed precision (ember.aten.amp): the AutocastCPU / AutocastCUDA kernels of the
# listed ops, a fallthrough for every other op, and PyTorch's module-level autocast functions
from . import amp  # noqa: E402
from .amp import autocast_mode as _autocast_mode  # noqa: E402
from .amp.autocast_mode import (  # noqa: E402
    autocast,
    clear_autocast_cache,
    get_autocast_dtype,
    is_autocast_available,
    is_autocast_cache_enabled,
    is_autocast_enabled,
    set_autocast_cache_enabled,
    set_autocast_dtype,
    set_autocast_enabled,
)

_autocast_mode._register()

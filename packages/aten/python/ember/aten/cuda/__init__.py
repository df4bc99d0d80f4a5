"""CUDA devices (PyTorch's ``torch.cuda``): availability, the current device, streams,
events, the caching allocator's statistics and the per-device random generators.

Built on ``ember.c10py.cuda`` (the C++ runtime: streams, events, allocator); this
package gives it PyTorch's names and signatures. It imports and answers on any
machine: without a GPU or a driver (or in a build without CUDA) ``is_available()``
is False, ``device_count()`` is 0, the memory counters read 0, the context managers
given no device do nothing, and everything that needs a device raises RuntimeError
naming the call and the reason (the CUDA runtime's own message).

    >>> import ember.aten as ea
    >>> if ea.cuda.is_available():
    ...     x = ea.randn(3, device="cuda")
    ...     ea.cuda.synchronize()

Device arguments (``device=``) take an index, ``"cuda:1"``, an ``ember.aten.device``
or None (the current device), as PyTorch's.
"""

from __future__ import annotations

from typing import Any

from ember.c10py import OutOfMemoryError
from ember.c10py import cuda as _c10_cuda
from ember.c10py import device as _device_cls

from .. import _C

__all__ = [
    "Event",
    "OutOfMemoryError",
    "Stream",
    "StreamContext",
    "current_device",
    "current_stream",
    "default_stream",
    "device",
    "device_count",
    "device_of",
    "empty_cache",
    "get_device_capability",
    "get_device_name",
    "get_device_properties",
    "get_rng_state",
    "get_rng_state_all",
    "init",
    "initial_seed",
    "is_available",
    "is_bf16_supported",
    "is_initialized",
    "manual_seed",
    "manual_seed_all",
    "max_memory_allocated",
    "max_memory_reserved",
    "mem_get_info",
    "memory_allocated",
    "memory_reserved",
    "memory_stats",
    "memory_summary",
    "reset_peak_memory_stats",
    "seed",
    "seed_all",
    "set_device",
    "set_rng_state",
    "set_rng_state_all",
    "set_stream",
    "stream",
    "synchronize",
]

# PyTorch's legacy typed constructors of CUDA tensors (ember.aten.FloatTensor's twins: _legacy.py)
from .._legacy import CUDA_CONSTRUCTORS as _CUDA_CONSTRUCTORS
from ._device import (
    _check_device_errors,
    _checked_index,
    _exchange_device,
    _get_device_index,
    _lazy_init,
    _unavailable_message,
    current_device,
    device,
    device_count,
    device_of,
    get_device_capability,
    get_device_name,
    get_device_properties,
    init,
    is_available,
    is_bf16_supported,
    is_initialized,
    set_device,
    synchronize,
)
from .memory import (
    empty_cache,
    max_memory_allocated,
    max_memory_reserved,
    mem_get_info,
    memory_allocated,
    memory_reserved,
    memory_stats,
    memory_summary,
    reset_max_memory_allocated,
    reset_peak_memory_stats,
)
from .random import (
    get_rng_state,
    get_rng_state_all,
    initial_seed,
    manual_seed,
    manual_seed_all,
    seed,
    seed_all,
    set_rng_state,
    set_rng_state_all,
)
from .streams import (
    Event,
    Stream,
    StreamContext,
    current_stream,
    default_stream,
    set_stream,
    stream,
)

FloatTensor = _CUDA_CONSTRUCTORS["FloatTensor"]
DoubleTensor = _CUDA_CONSTRUCTORS["DoubleTensor"]
HalfTensor = _CUDA_CONSTRUCTORS["HalfTensor"]
BFloat16Tensor = _CUDA_CONSTRUCTORS["BFloat16Tensor"]
LongTensor = _CUDA_CONSTRUCTORS["LongTensor"]
IntTensor = _CUDA_CONSTRUCTORS["IntTensor"]
ShortTensor = _CUDA_CONSTRUCTORS["ShortTensor"]
CharTensor = _CUDA_CONSTRUCTORS["CharTensor"]
ByteTensor = _CUDA_CONSTRUCTORS["ByteTensor"]
BoolTensor = _CUDA_CONSTRUCTORS["BoolTensor"]

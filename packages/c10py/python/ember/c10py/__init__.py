"""ember.c10py: the C++ core types of ember (PyTorch's c10) and their bindings.

Everything here lives in the compiled module ``ember.c10py._C``; this file names what
the layers above use (``_C`` is c10py's own: other layers import from here, see
tests/test_layering.py) and adds the paths a C++ extension needs to compile and link
against it.
"""

from __future__ import annotations

import os
from importlib import metadata as _metadata

from . import _C
from ._C import (
    DeviceGuard,
    DispatchKey,
    DispatchKeySet,
    LinAlgError,
    OutOfMemoryError,
    StorageImpl,
    TensorImpl,
    bfloat16,
    bool,
    contiguous_strides,
    cuda,
    device,
    dtype,
    empty_cache,
    float16,
    float32,
    float64,
    int8,
    int16,
    int32,
    int64,
    keys_after,
    maybe_wrap_dim,
    memory_stats,
    promote_types,
    reset_peak_memory_stats,
    uint8,
)

try:
    __version__ = _metadata.version("ember-c10py")
except _metadata.PackageNotFoundError:  # pragma: no cover - running from a source tree
    __version__ = "unknown"


def _package_dir() -> str:
    # Derived from the compiled module, not this file: in an editable install this
    # file sits in the source tree while the module and headers are installed.
    return os.path.dirname(os.path.abspath(_C.__file__))


def get_include() -> str:
    """Directory holding ember's C10 headers (``#include <ember/c10/TensorImpl.h>``)."""
    return os.path.join(_package_dir(), "include")


def cmake_prefix_path() -> str:
    """Prefix to add to ``CMAKE_PREFIX_PATH`` for ``find_package(ember_c10py CONFIG)``."""
    return _package_dir()


def library_path() -> str:
    """Full path of ``libember_c10.so``."""
    return os.path.join(_package_dir(), "lib", "libember_c10.so")


# Shared-memory storages (ember.data's worker processes pass batches through them; PyTorch's
# UntypedStorage._new_shared*): the bindings are static methods of StorageImpl.
def new_shared_storage(nbytes: int, strategy: str = "file_descriptor") -> StorageImpl:
    """A new storage allocated directly in shared memory ("file_descriptor" or "file_system")."""
    return StorageImpl._new_shared(nbytes, strategy)


def shared_storage_from_fd(fd: int, nbytes: int) -> StorageImpl:
    """Maps shared memory received as a file descriptor (the storage keeps a duplicate of fd)."""
    return StorageImpl._new_shared_fd(fd, nbytes)


def shared_storage_from_filename(name: str, nbytes: int) -> StorageImpl:
    """Maps the named shared-memory file (takes this process's reference to it)."""
    return StorageImpl._new_shared_filename(name, nbytes)


def build_info() -> dict[str, object]:
    """How this build was configured: CUDA compiled, nvcc found, debug, compiler."""
    return dict(_C._build_info)


__all__ = [
    "DeviceGuard",
    "DispatchKey",
    "DispatchKeySet",
    "LinAlgError",
    "OutOfMemoryError",
    "StorageImpl",
    "TensorImpl",
    "bfloat16",
    "bool",
    "build_info",
    "cmake_prefix_path",
    "contiguous_strides",
    "cuda",
    "device",
    "dtype",
    "empty_cache",
    "float16",
    "float32",
    "float64",
    "get_include",
    "int8",
    "int16",
    "int32",
    "int64",
    "keys_after",
    "library_path",
    "maybe_wrap_dim",
    "memory_stats",
    "new_shared_storage",
    "promote_types",
    "reset_peak_memory_stats",
    "shared_storage_from_fd",
    "shared_storage_from_filename",
    "uint8",
]

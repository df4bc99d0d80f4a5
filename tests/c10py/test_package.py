"""What the wheel ships for C++ extensions: headers, CMake package, shared library."""

from __future__ import annotations

import os

import ember.c10py as c10py
from ember.c10py import _C


def test_get_include_has_the_headers() -> None:
    include = c10py.get_include()
    for header in ("TensorImpl.h", "StorageImpl.h", "ScalarType.h", "DispatchKey.h", "python/pybind.h"):
        assert os.path.isfile(os.path.join(include, "ember", "c10", header)), header


def test_cmake_package_config() -> None:
    cmake_dir = os.path.join(c10py.cmake_prefix_path(), "share", "cmake", "ember_c10py")
    assert os.path.isfile(os.path.join(cmake_dir, "ember_c10pyConfig.cmake"))
    assert os.path.isfile(os.path.join(cmake_dir, "ember_c10pyConfigVersion.cmake"))
    assert os.path.isfile(os.path.join(cmake_dir, "ember_c10pyTargets.cmake"))


def test_library_path() -> None:
    path = c10py.library_path()
    assert os.path.basename(path) == "libember_c10.so"
    assert os.path.isfile(path)


def test_paths_follow_the_compiled_module() -> None:
    # not the source tree: an editable install keeps __init__.py elsewhere
    assert c10py.cmake_prefix_path() == os.path.dirname(os.path.abspath(_C.__file__))


def test_build_info() -> None:
    info = c10py.build_info()
    assert set(info) >= {"cuda_compiled", "nvcc_found", "debug", "compiler", "cuda_archs"}
    assert isinstance(info["debug"], bool)
    assert info["cuda_compiled"] is _C.cuda.is_compiled()
    assert info is not _C._build_info  # a copy


def test_public_names() -> None:
    for name in c10py.__all__:
        assert hasattr(c10py, name), name
    assert c10py.__version__ != ""

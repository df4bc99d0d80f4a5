"""aten's CUDA build: compiled whenever c10py's was, and never silently left out.

CI builds with nvcc on the PATH and no GPU: these tests make sure that build really
contains aten's CUDA kernels (a CMake slip would otherwise ship a CPU-only wheel
that passes every CPU test).
"""

from __future__ import annotations

import os
import shutil

import ember.aten as ea
import ember.c10py as c10py
import pytest


def test_aten_and_c10py_agree_on_cuda() -> None:
    assert ea._C._built_with_cuda == c10py.build_info()["cuda_compiled"]


def test_cuda_compiled_whenever_nvcc_is_found() -> None:
    if os.environ.get("EMBER_CUDA", "AUTO").upper() == "OFF" or shutil.which("nvcc") is None:
        pytest.skip("EMBER_CUDA=OFF or no nvcc: a CPU-only build is expected")
    assert ea._C._built_with_cuda


def test_cuda_build_registers_cuda_kernels_in_dispatch_stubs() -> None:
    stubs = dict(ea._C._dispatch_stubs())
    assert "add_stub" in stubs and "copy_stub" in stubs
    if not ea._C._built_with_cuda:
        assert not any(stubs.values()), "a CPU-only build cannot have CUDA kernels"

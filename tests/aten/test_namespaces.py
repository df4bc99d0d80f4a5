"""ember.aten's namespaces are modules assembled by imports, each name from one source.

The public functions are generated from native_functions.yaml into ember/aten/_generated/
(functions.py for ember.aten itself, linalg.py, special.py, fft.py, nn.py, return_types.py);
ember/aten/__init__.py and the modules ember/aten/{linalg,special,fft,nn,return_types,sparse}.py
import them. These tests check that the generated names reach their namespace unchanged
(nothing imported later replaces one) and that each namespace is a real, importable module.
"""

from __future__ import annotations

import importlib
import sys

import ember.aten as ea
import pytest
from ember.aten import _nn_functional, _nn_sampling
from ember.aten._generated import functions, nn, return_types

NAMESPACES = ["linalg", "special", "fft", "nn", "return_types", "sparse"]


@pytest.mark.parametrize("name", NAMESPACES)
def test_each_namespace_is_an_importable_module(name: str) -> None:
    mod = importlib.import_module(f"ember.aten.{name}")
    assert getattr(ea, name) is mod
    assert sys.modules[f"ember.aten.{name}"] is mod
    assert mod.__doc__ and mod.__doc__.startswith(f"ember.aten.{name}:")


def test_generated_functions_reach_ember_aten_unchanged() -> None:
    assert len(functions.__all__) > 400
    replaced = [n for n in functions.__all__ if getattr(ea, n) is not getattr(functions, n)]
    assert replaced == []


@pytest.mark.parametrize("name", ["linalg", "special", "fft"])
def test_generated_submodule_functions_are_the_namespace(name: str) -> None:
    generated = importlib.import_module(f"ember.aten._generated.{name}")
    public = getattr(ea, name)
    assert [n for n in generated.__all__ if getattr(public, n) is not getattr(generated, n)] == []
    # the namespace holds nothing else but module dunders
    extra = {n for n in vars(public) if not n.startswith("_")} - set(generated.__all__) - {"annotations"}
    assert extra == set()


def test_linalg_and_special_hold_their_operators() -> None:
    x = ea.tensor([3.0, 4.0])
    assert ea.linalg.vector_norm(x).item() == 5.0
    assert abs(ea.special.erfcx(ea.tensor([0.0])).item() - 1.0) < 1e-7
    assert "vector_norm" in importlib.import_module("ember.aten._generated.linalg").__all__


def test_nn_takes_each_name_from_one_source() -> None:
    generated = set(nn.__all__)
    hand = {
        n
        for mod in (_nn_functional, _nn_sampling)
        for n, v in vars(mod).items()
        if callable(v) and getattr(v, "__module__", None) == mod.__name__ and not n.startswith("_")
    }
    assert {"max_pool2d", "unfold", "interpolate", "grid_sample"} <= hand
    # a hand-written front end never shadows a generated torch._C._nn operator
    assert hand & generated == set()
    assert [n for n in nn.__all__ if getattr(ea.nn, n) is not getattr(nn, n)] == []
    for n in sorted(hand):
        assert getattr(ea.nn, n) is getattr(_nn_functional, n, None) or getattr(ea.nn, n) is getattr(_nn_sampling, n)
    # the ones torch.nn.functional takes from torch itself are ember.aten's own
    for n in ("conv2d", "conv_transpose2d", "avg_pool1d", "adaptive_avg_pool1d", "pixel_shuffle"):
        assert getattr(ea.nn, n) is getattr(ea, n)


def test_return_types_are_the_operators_named_tuples() -> None:
    assert ea.return_types.max is return_types.max
    r = ea.max(ea.tensor([[1.0, 5.0, 2.0]]), 1)
    assert isinstance(r, ea.return_types.max)
    assert r.indices.tolist() == [1]


def test_typed_constructors_are_declared_names() -> None:
    for cls_name in ("FloatTensor", "DoubleTensor", "LongTensor", "BoolTensor", "ByteTensor", "BFloat16Tensor"):
        cpu, cuda = getattr(ea, cls_name), getattr(ea.cuda, cls_name)
        assert cpu is not cuda
        assert cpu.__module__ == "ember.aten" and cuda.__module__ == "ember.aten.cuda"
        assert cpu.dtype == cuda.dtype and not cpu.is_cuda and cuda.is_cuda
    assert isinstance(ea.zeros(2), ea.FloatTensor)
    assert not isinstance(ea.zeros(2, dtype=ea.int64), ea.FloatTensor)

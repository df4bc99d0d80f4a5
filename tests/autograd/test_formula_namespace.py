"""The helpers derivatives.yaml's formulas call come from named modules; a name two define is an error."""

import types

import pytest
from ember.autograd import _kernels


def test_every_helper_module_contributes_its_all() -> None:
    ns = _kernels.formula_helpers()
    for mod in _kernels.FORMULA_MODULES:
        for name in mod.__all__:
            assert ns[name] is getattr(mod, name), (mod.__name__, name)
    assert callable(ns["sum_to"])  # defined in _formulas itself


def test_a_name_defined_twice_is_an_error(monkeypatch: pytest.MonkeyPatch) -> None:
    twin = types.ModuleType("ember.autograd._formulas_twin")
    twin.sum_to = lambda *a: None  # type: ignore[attr-defined]
    twin.__all__ = ["sum_to"]  # type: ignore[attr-defined]
    monkeypatch.setattr(_kernels, "FORMULA_MODULES", (*_kernels.FORMULA_MODULES, twin))
    with pytest.raises(ImportError, match=r"sum_to is defined by both ember\.autograd\._formulas and"):
        _kernels.formula_helpers()

"""Sequential, ModuleList, ModuleDict, ParameterList, ParameterDict."""

from __future__ import annotations

from collections import OrderedDict

import ember.aten as ea
import numpy as np
import pytest
from ember import nn


def test_sequential_forward_and_names() -> None:
    net = nn.Sequential(nn.Linear(3, 4), nn.ReLU(), nn.Linear(4, 2))
    x = ea.randn(5, 3)
    ref = net[2](net[1](net[0](x)))
    np.testing.assert_array_equal(net(x).detach().numpy(), ref.detach().numpy())
    assert list(net.state_dict()) == ["0.weight", "0.bias", "2.weight", "2.bias"]
    named = nn.Sequential(OrderedDict(a=nn.Linear(1, 1), b=nn.Tanh()))
    assert list(named._modules) == ["a", "b"] and named.a is named[0]


def test_sequential_indexing_slicing_mutation() -> None:
    layers = [nn.Linear(1, 1), nn.ReLU(), nn.Tanh(), nn.Sigmoid()]
    net = nn.Sequential(*layers)
    assert net[-1] is layers[3] and len(net) == 4
    sub = net[1:3]
    assert isinstance(sub, nn.Sequential) and list(sub._modules) == ["1", "2"] and sub[0] is layers[1]
    with pytest.raises(IndexError, match="index 4 is out of range"):
        net[4]
    del net[1]
    assert list(net._modules) == ["0", "1", "2"] and net[1] is layers[2]  # renumbered
    net.append(nn.ReLU())
    assert len(net) == 4 and isinstance(net[3], nn.ReLU)
    e = nn.ELU()
    net.insert(1, e)
    assert net[1] is e and net[2] is layers[2] and len(net) == 5
    with pytest.raises(IndexError, match="Index out of range: 9"):
        net.insert(9, nn.ReLU())
    with pytest.raises(AssertionError, match="module should be of type"):
        net.insert(0, 3)  # type: ignore[arg-type]
    popped = net.pop(1)
    assert popped is e and len(net) == 4
    net[0] = nn.Identity()
    assert isinstance(net[0], nn.Identity)
    net.extend([nn.ReLU(), nn.ReLU()])
    assert len(net) == 6
    del net[2:]
    assert len(net) == 2


def test_sequential_add_mul() -> None:
    a = nn.Sequential(nn.ReLU())
    b = nn.Sequential(nn.Tanh())
    c = a + b
    assert [type(m).__name__ for m in c] == ["ReLU", "Tanh"]
    with pytest.raises(ValueError, match="add operator supports only objects of Sequential class"):
        a + nn.ReLU()  # type: ignore[operator]
    d = b * 3
    assert len(d) == 3 and d[0] is d[2]
    with pytest.raises(ValueError, match="Non-positive multiplication factor 0"):
        b * 0
    a += b
    assert len(a) == 2


def test_module_list() -> None:
    ml = nn.ModuleList([nn.Linear(2, 2) for _ in range(3)])
    assert len(ml) == 3 and list(ml._modules) == ["0", "1", "2"]
    assert [n for n, _ in ml.named_parameters()][:2] == ["0.weight", "0.bias"]
    ml.append(nn.ReLU())
    ml.extend([nn.Tanh()])
    ml.insert(0, nn.Sigmoid())
    assert [type(m).__name__ for m in ml] == ["Sigmoid", "Linear", "Linear", "Linear", "ReLU", "Tanh"]
    assert isinstance(ml[1:3], nn.ModuleList) and len(ml[1:3]) == 2
    del ml[0]
    assert list(ml._modules) == ["0", "1", "2", "3", "4"]
    with pytest.raises(IndexError, match="index 7 is out of range"):
        ml[7]
    with pytest.raises(TypeError, match=r"ModuleList.extend should be called with an iterable, but got Linear"):
        ml.extend(nn.Linear(1, 1))  # type: ignore[arg-type]
    both = ml + nn.ModuleList([nn.ReLU()])
    assert len(both) == 6
    assert ml.pop(-1).__class__ is nn.Tanh
    with pytest.raises(NotImplementedError):
        ml(1)
    assert repr(nn.ModuleList()) == "ModuleList()"


def test_module_dict() -> None:
    md = nn.ModuleDict({"lin": nn.Linear(1, 2), "act": nn.ReLU()})
    assert list(md) == ["lin", "act"] and "lin" in md and len(md) == 2
    md["out"] = nn.Tanh()
    md.update([("x", nn.Identity())])
    assert list(md.keys()) == ["lin", "act", "out", "x"]
    assert isinstance(md.pop("act"), nn.ReLU)
    assert [k for k, _ in md.items()] == ["lin", "out", "x"]
    with pytest.raises(
        TypeError, match=r"ModuleDict.update should be called with an iterable of key/value pairs, but got int"
    ):
        md.update(3)
    with pytest.raises(ValueError, match="ModuleDict update sequence element #0 has length 1; 2 is required"):
        md.update([("a",)])
    md.clear()
    assert len(md) == 0


def test_parameter_list() -> None:
    pl = nn.ParameterList([nn.Parameter(ea.zeros(2, 3)), ea.ones(4)])
    assert isinstance(pl[1], nn.Parameter) and pl[1].requires_grad  # tensors are wrapped
    assert [n for n, _ in pl.named_parameters()] == ["0", "1"]
    pl.append(ea.zeros(1))
    assert len(pl) == 3
    pl.extend([ea.zeros(2)])
    assert len(pl) == 4 and len(pl[1:3]) == 2
    with pytest.raises(TypeError, match=r"ParameterList.extend should be called with an iterable, but got Tensor"):
        pl.extend(ea.zeros(2))
    pl[0] = ea.full((1,), 2.0)
    assert pl[0].tolist() == [2.0]
    with pytest.raises(RuntimeError, match=r"ParameterList should not be called."):
        pl()
    small = nn.ParameterList([nn.Parameter(ea.zeros(2, 3)), ea.ones(4)])
    assert repr(small) == (
        "ParameterList(\n"
        "    (0): Parameter containing: [ember.aten.float32 of size 2x3]\n"
        "    (1): Parameter containing: [ember.aten.float32 of size 4]\n"
        ")"
    )


def test_parameter_dict() -> None:
    pd = nn.ParameterDict({"b": ea.zeros(2), "a": ea.zeros(3, 1)})
    assert list(pd) == ["a", "b"]  # a plain dict is added in sorted key order
    assert isinstance(pd["a"], nn.Parameter)
    assert [n for n, _ in pd.named_parameters()] == ["a", "b"]
    pd["c"] = nn.Parameter(ea.ones(1))
    assert "c" in pd and len(pd) == 3
    assert pd.get("zz") is None
    assert pd.pop("c").tolist() == [1.0]
    k, v = pd.popitem()
    assert tuple(v.shape) == (2,)
    assert k == "b" and list(pd) == ["a"]
    assert pd.setdefault("d", ea.ones(2)).tolist() == [1.0, 1.0]
    with pytest.raises(TypeError, match="Index given to ParameterDict cannot be used as a key as it is not a string"):
        pd[1]  # type: ignore[index]
    with pytest.raises(RuntimeError, match=r"ParameterDict should not be called."):
        pd(1)
    merged = pd | nn.ParameterDict({"e": ea.zeros(1)})
    assert list(merged) == ["a", "d", "e"]
    rep = nn.ParameterDict({"b": ea.zeros(2), "a": ea.zeros(3, 1)})
    assert repr(rep) == (
        "ParameterDict(\n"
        "    (a): Parameter containing: [ember.aten.FloatTensor of size 3x1]\n"
        "    (b): Parameter containing: [ember.aten.FloatTensor of size 2]\n"
        ")"
    )
    pd.clear()
    assert len(pd) == 0 and not list(pd.parameters())

"""Module: attribute routing, registration errors, iteration, modes, conversion, state_dict, repr."""

from __future__ import annotations

import copy
import pickle
from collections import OrderedDict

import ember.aten as ea
import numpy as np
import pytest
from ember import nn


class Net(nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc1 = nn.Linear(3, 4)
        self.act = nn.ReLU()
        self.fc2 = nn.Linear(4, 2)
        self.register_buffer("steps", ea.zeros((), dtype=ea.int64))
        self.register_buffer("scratch", ea.zeros(2), persistent=False)
        self.scale = nn.Parameter(ea.ones(1))

    def forward(self, x: ea.Tensor) -> ea.Tensor:
        return self.fc2(self.act(self.fc1(x))) * self.scale


# ---- attribute routing ---------------------------------------------------------------
def test_setattr_routes_into_dicts() -> None:
    m = Net()
    assert list(m._parameters) == ["scale"]
    assert list(m._buffers) == ["steps", "scratch"]
    assert m._non_persistent_buffers_set == {"scratch"}
    assert list(m._modules) == ["fc1", "act", "fc2"]
    assert "fc1" not in m.__dict__ and "scale" not in m.__dict__
    assert m.fc1 is m._modules["fc1"] and m.scale is m._parameters["scale"] and m.steps is m._buffers["steps"]
    m.plain = 3
    assert m.__dict__["plain"] == 3


def test_reassignment_moves_between_dicts() -> None:
    m = nn.Module()
    m.x = nn.Parameter(ea.zeros(2))
    with pytest.raises(TypeError, match=r"cannot assign 'ember.nn.modules.linear.Linear' as parameter 'x'"):
        m.x = nn.Linear(1, 1)  # a parameter slot takes only a Parameter or None
    del m.x
    m.x = nn.Linear(1, 1)
    assert "x" not in m._parameters and isinstance(m._modules["x"], nn.Linear)
    m.x = nn.Parameter(ea.ones(1))
    assert "x" not in m._modules and "x" in m._parameters
    m.b = nn.Buffer(ea.ones(3), persistent=False)
    assert "b" in m._buffers and "b" in m._non_persistent_buffers_set
    m.b = ea.zeros(3)  # a tensor assigned to a buffer name stays a (non-persistent) buffer
    assert m._buffers["b"].tolist() == [0.0, 0.0, 0.0] and "b" in m._non_persistent_buffers_set
    m.b = None
    assert m._buffers["b"] is None


def test_setattr_type_errors() -> None:
    m = Net()
    with pytest.raises(
        TypeError,
        match=r"cannot assign 'ember.aten.FloatTensor' as parameter 'scale' \(torch.nn.Parameter or None expected\)",
    ):
        m.scale = ea.ones(1)
    with pytest.raises(
        TypeError, match=r"cannot assign 'int' as child module 'fc1' \(torch.nn.Module or None expected\)"
    ):
        m.fc1 = 3
    with pytest.raises(
        TypeError, match=r"cannot assign 'str' as buffer 'steps' \(torch.nn.Buffer, torch.Tensor or None expected\)"
    ):
        m.steps = "x"
    m.scale = None
    assert m._parameters["scale"] is None and m.scale is None


def test_assign_before_init() -> None:
    class Bad(nn.Module):
        def __init__(self) -> None:
            self.w = nn.Parameter(ea.zeros(1))

    with pytest.raises(AttributeError, match=r"cannot assign parameters before Module.__init__\(\) call"):
        Bad()

    class Bad2(nn.Module):
        def __init__(self) -> None:
            self.l = nn.Linear(1, 1)

    with pytest.raises(AttributeError, match=r"cannot assign module before Module.__init__\(\) call"):
        Bad2()


def test_init_rejects_arguments() -> None:
    with pytest.raises(TypeError, match=r"Module.__init__\(\) got an unexpected keyword argument 'foo'"):
        nn.Module(foo=1)
    with pytest.raises(TypeError, match=r"Module.__init__\(\) takes 1 positional argument but 2 were given"):
        nn.Module(1)


def test_register_errors() -> None:
    m = Net()
    with pytest.raises(KeyError, match=r'parameter name can.{1,2}t contain "."'):
        m.register_parameter("a.b", None)
    with pytest.raises(KeyError, match=r'parameter name can.{1,2}t be empty string ""'):
        m.register_parameter("", None)
    with pytest.raises(KeyError, match="attribute 'fc1' already exists"):
        m.register_parameter("fc1", None)
    with pytest.raises(TypeError, match=r"parameter name should be a string. Got int"):
        m.register_parameter(1, None)  # type: ignore[arg-type]
    with pytest.raises(
        TypeError,
        match=r"cannot assign 'ember.aten.FloatTensor' object to parameter 'p' \(torch.nn.Parameter or None required\)",
    ):
        m.register_parameter("p", ea.zeros(1))  # type: ignore[arg-type]
    with pytest.raises(KeyError, match=r'buffer name can.{1,2}t contain "."'):
        m.register_buffer("a.b", None)
    with pytest.raises(KeyError, match=r'buffer name can.{1,2}t be empty string ""'):
        m.register_buffer("", None)
    with pytest.raises(KeyError, match="attribute 'scale' already exists"):
        m.register_buffer("scale", None)
    with pytest.raises(TypeError, match=r"cannot assign 'int' object to buffer 'q' \(torch Tensor or None required\)"):
        m.register_buffer("q", 3)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="int is not a Module subclass"):
        m.add_module("z", 3)  # type: ignore[arg-type]
    with pytest.raises(KeyError, match=r'module name can.{1,2}t contain ".", got: a.b'):
        m.add_module("a.b", None)
    with pytest.raises(KeyError, match=r'module name can.{1,2}t be empty string ""'):
        m.add_module("", None)
    with pytest.raises(KeyError, match="attribute 'steps' already exists"):
        m.add_module("steps", None)


def test_getattr_and_delattr() -> None:
    m = Net()
    with pytest.raises(AttributeError, match="'Net' object has no attribute 'nope'"):
        _ = m.nope
    del m.fc1
    del m.scratch
    del m.scale
    assert "fc1" not in m._modules and "scratch" not in m._buffers and "scratch" not in m._non_persistent_buffers_set
    assert "scale" not in m._parameters
    m.plain = 1
    del m.plain
    assert not hasattr(m, "plain")


def test_get_submodule_parameter_buffer() -> None:
    m = nn.Sequential(
        OrderedDict(
            block=nn.Sequential(nn.Linear(2, 2), nn.BatchNorm1d(2) if hasattr(nn, "BatchNorm1d") else nn.Identity())
        )
    )
    assert m.get_submodule("") is m
    assert m.get_submodule("block.0") is m.block[0]
    assert m.get_parameter("block.0.bias") is m.block[0].bias
    with pytest.raises(AttributeError, match="Sequential has no attribute `nope`"):
        m.get_submodule("block.nope")
    with pytest.raises(AttributeError, match=r"`weight` is not an nn.Module"):
        m.get_submodule("block.0.weight")
    with pytest.raises(AttributeError, match="Linear has no attribute `w`"):
        m.get_parameter("block.0.w")
    net = Net()
    assert net.get_buffer("steps") is net.steps
    with pytest.raises(AttributeError, match="`scale` is not a buffer"):
        net.get_buffer("scale")
    with pytest.raises(AttributeError, match=r"`steps` is not an nn.Parameter"):
        net.get_parameter("steps")
    net.set_submodule("fc2", nn.Linear(4, 5))
    assert net.fc2.out_features == 5


# ---- iteration -------------------------------------------------------------------------
def test_named_parameters_order_prefix_recurse() -> None:
    m = Net()
    assert [n for n, _ in m.named_parameters()] == ["scale", "fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"]
    assert [n for n, _ in m.named_parameters(prefix="model")] == [
        "model.scale",
        "model.fc1.weight",
        "model.fc1.bias",
        "model.fc2.weight",
        "model.fc2.bias",
    ]
    assert [n for n, _ in m.named_parameters(recurse=False)] == ["scale"]
    assert [n for n, _ in m.named_buffers()] == ["steps", "scratch"]
    assert [n for n, _ in m.named_children()] == ["fc1", "act", "fc2"]
    assert [n for n, _ in m.named_modules()] == ["", "fc1", "act", "fc2"]
    assert [n for n, _ in m.named_modules(prefix="p")] == ["p", "p.fc1", "p.act", "p.fc2"]
    assert len(list(m.parameters())) == 5 and len(list(m.modules())) == 4 and len(list(m.children())) == 3


def test_shared_members_listed_once_unless_asked() -> None:
    shared = nn.Linear(2, 2)
    m = nn.Sequential(shared, nn.ReLU(), shared)
    assert [n for n, _ in m.named_parameters()] == ["0.weight", "0.bias"]
    assert [n for n, _ in m.named_parameters(remove_duplicate=False)] == ["0.weight", "0.bias", "2.weight", "2.bias"]
    assert [n for n, _ in m.named_modules()] == ["", "0", "1"]
    assert [n for n, _ in m.named_modules(remove_duplicate=False)] == ["", "0", "1", "2"]
    assert list(m.state_dict()) == ["0.weight", "0.bias", "2.weight", "2.bias"]
    tied = nn.Module()
    tied.a = nn.Linear(2, 2, bias=False)
    tied.b = nn.Linear(2, 2, bias=False)
    tied.b.weight = tied.a.weight
    assert [n for n, _ in tied.named_parameters()] == ["a.weight"]


def test_none_entries_skipped() -> None:
    lin = nn.Linear(2, 2, bias=False)
    assert lin.bias is None
    assert [n for n, _ in lin.named_parameters()] == ["weight"]
    assert list(lin.state_dict()) == ["weight"]


# ---- modes and grads ---------------------------------------------------------------------
def test_train_eval_recursive() -> None:
    m = Net()
    assert m.training and m.fc1.training
    assert m.eval() is m
    assert not m.training and not m.fc1.training and not m.act.training
    m.train()
    assert m.fc2.training
    with pytest.raises(ValueError, match="training mode is expected to be boolean"):
        m.train("yes")  # type: ignore[arg-type]


def test_requires_grad_and_zero_grad() -> None:
    m = Net()
    m.requires_grad_(False)
    assert not any(p.requires_grad for p in m.parameters())
    m.requires_grad_()
    m(ea.ones(2, 3)).sum().backward()
    assert all(p.grad is not None for p in m.parameters())
    m.zero_grad(set_to_none=False)
    assert all(p.grad is not None and float(p.grad.abs().sum()) == 0.0 for p in m.parameters())
    m.zero_grad()
    assert all(p.grad is None for p in m.parameters())


# ---- conversion ---------------------------------------------------------------------------
def test_double_half_float_keep_parameter_identity() -> None:
    m = Net()
    w = m.fc1.weight
    m(ea.ones(1, 3)).sum().backward()
    assert m.double() is m
    assert m.fc1.weight is w and isinstance(w, nn.Parameter) and w.requires_grad
    assert w.dtype == ea.float64 and w.grad.dtype == ea.float64
    assert m.steps.dtype == ea.int64  # integer buffers keep their dtype
    assert m.scratch.dtype == ea.float64
    m.half()
    assert w.dtype == ea.float16
    m.float()
    assert w.dtype == ea.float32
    m.bfloat16()
    assert w.dtype == ea.bfloat16
    m.to(ea.float64)
    assert w.dtype == ea.float64 and m.steps.dtype == ea.int64
    m.to(dtype=ea.float32)
    assert w.dtype == ea.float32
    m.to("cpu")
    m.cpu()
    assert w.device.type == "cpu"
    m.to(ea.zeros(1, dtype=ea.float64))
    assert w.dtype == ea.float64
    with pytest.raises(TypeError, match=r"nn.Module.to only accepts floating point dtypes, but got desired dtype="):
        m.to(ea.int32)
    m.type(ea.float32)
    assert m.steps.dtype == ea.float32  # type() casts everything


def test_conversion_preserves_values() -> None:
    m = nn.Linear(3, 2)
    before = m.weight.detach().numpy().astype(np.float64)
    m.double()
    np.testing.assert_allclose(m.weight.detach().numpy(), before)


def test_apply_visits_children_first() -> None:
    m = Net()
    seen: list[str] = []
    assert m.apply(lambda mod: seen.append(type(mod).__name__)) is m
    assert seen == ["Linear", "ReLU", "Linear", "Net"]


# ---- state_dict -----------------------------------------------------------------------------
def test_state_dict_keys_metadata_and_detach() -> None:
    m = Net()
    sd = m.state_dict()
    assert list(sd) == ["scale", "steps", "fc1.weight", "fc1.bias", "fc2.weight", "fc2.bias"]
    assert sd._metadata == OrderedDict(
        [("", {"version": 1}), ("fc1", {"version": 1}), ("act", {"version": 1}), ("fc2", {"version": 1})]
    )
    assert not sd["fc1.weight"].requires_grad and not isinstance(sd["fc1.weight"], nn.Parameter)
    sd["fc1.weight"].add_(1)  # shares storage with the parameter
    np.testing.assert_array_equal(sd["fc1.weight"].numpy(), m.fc1.weight.detach().numpy())
    kv = m.state_dict(keep_vars=True)
    assert kv["fc1.weight"] is m.fc1.weight
    p = m.state_dict(prefix="model.")
    assert next(iter(p)) == "model.scale" and "model" in p._metadata
    dest: OrderedDict = OrderedDict()
    out = m.state_dict(destination=dest)
    assert out is dest


def test_state_dict_round_trip() -> None:
    ea.manual_seed(0)
    a, b = Net(), Net()
    b.steps.fill_(7)
    res = a.load_state_dict(b.state_dict())
    assert repr(res) == "<All keys matched successfully>"
    assert res.missing_keys == [] and res.unexpected_keys == []
    for (na, pa), (nb, pb) in zip(a.state_dict().items(), b.state_dict().items(), strict=True):
        assert na == nb
        np.testing.assert_array_equal(pa.numpy(), pb.numpy())
    assert int(a.steps) == 7
    x = ea.randn(2, 3)
    np.testing.assert_array_equal(a(x).detach().numpy(), b(x).detach().numpy())


def test_load_state_dict_errors_pytorch_text() -> None:
    lin = nn.Linear(3, 2)
    with pytest.raises(RuntimeError) as e:
        lin.load_state_dict({"weight": ea.zeros(3, 3), "bias2": ea.zeros(2)})
    assert str(e.value) == (
        "Error(s) in loading state_dict for Linear:\n"
        '\tMissing key(s) in state_dict: "bias". \n'
        '\tUnexpected key(s) in state_dict: "bias2". \n'
        "\tsize mismatch for weight: copying a param with shape ember.aten.Size([3, 3]) from checkpoint, "
        "the shape in current model is ember.aten.Size([2, 3])."
    )
    res = lin.load_state_dict({"weight": ea.zeros(2, 3), "extra": ea.zeros(1)}, strict=False)
    assert res.missing_keys == ["bias"] and res.unexpected_keys == ["extra"]
    assert repr(res) == "_IncompatibleKeys(missing_keys=['bias'], unexpected_keys=['extra'])"
    assert float(lin.weight.detach().abs().sum()) == 0.0
    with pytest.raises(TypeError, match=r"Expected state_dict to be dict-like, got <class 'list'>."):
        lin.load_state_dict([1, 2])  # type: ignore[arg-type]
    with pytest.raises(
        RuntimeError,
        match=r"While copying the parameter named \"bias\", expected torch.Tensor or Tensor-like object from "
        r"checkpoint but received <class 'int'>",
    ):
        lin.load_state_dict({"weight": ea.zeros(2, 3), "bias": 3})


def test_load_state_dict_nested_missing_unexpected() -> None:
    m = nn.Sequential(nn.Linear(2, 2), nn.Sequential(nn.Linear(2, 1)))
    sd = m.state_dict()
    del sd["1.0.bias"]
    sd["1.0.gamma"] = ea.zeros(1)
    sd["2.weight"] = ea.zeros(1)
    res = m.load_state_dict(sd, strict=False)
    assert res.missing_keys == ["1.0.bias"]
    assert sorted(res.unexpected_keys) == ["1.0.gamma", "2.weight"]


def test_load_state_dict_copies_in_place_or_assigns() -> None:
    lin = nn.Linear(2, 2)
    w = lin.weight
    src = {"weight": ea.ones(2, 2, dtype=ea.float64), "bias": ea.zeros(2)}
    lin.load_state_dict(src)
    assert lin.weight is w and w.dtype == ea.float32  # copy_ into the existing parameter
    assert w.detach().tolist() == [[1.0, 1.0], [1.0, 1.0]]
    lin.load_state_dict(src, assign=True)
    assert lin.weight is not w and isinstance(lin.weight, nn.Parameter) and lin.weight.requires_grad
    assert lin.weight.dtype == ea.float64  # assign keeps the checkpoint tensor's properties
    lin.weight.requires_grad_(False)
    lin.load_state_dict({"weight": nn.Parameter(ea.ones(2, 2)), "bias": ea.zeros(2)}, assign=True)
    assert not lin.weight.requires_grad


def test_load_0dim_from_1elem() -> None:
    m = nn.Module()
    m.register_buffer("t", ea.zeros(()))
    m.load_state_dict({"t": ea.tensor([5.0])})
    assert float(m.t) == 5.0


def test_extra_state() -> None:
    class WithExtra(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.value = 0
            self.lin = nn.Linear(1, 1)

        def get_extra_state(self) -> dict:
            return {"value": self.value}

        def set_extra_state(self, state: dict) -> None:
            self.value = state["value"]

    a = WithExtra()
    a.value = 42
    sd = a.state_dict()
    assert list(sd) == ["_extra_state", "lin.weight", "lin.bias"]  # own entries before the children's
    b = WithExtra()
    b.load_state_dict(sd)
    assert b.value == 42
    del sd["_extra_state"]
    with pytest.raises(RuntimeError, match='Missing key\\(s\\) in state_dict: "_extra_state"'):
        b.load_state_dict(sd)
    with pytest.raises(RuntimeError, match='Unexpected key\\(s\\) in state_dict: "_extra_state"'):
        nn.Linear(1, 1).load_state_dict({**nn.Linear(1, 1).state_dict(), "_extra_state": 1})


def test_state_dict_hooks() -> None:
    m = nn.Linear(2, 2)
    calls: list[str] = []

    def pre(module, prefix, keep_vars):  # type: ignore[no-untyped-def]
        calls.append(f"pre:{prefix}:{keep_vars}")

    def post(module, sd, prefix, local_metadata):  # type: ignore[no-untyped-def]
        calls.append(f"post:{prefix}:{sorted(sd)}:{local_metadata}")
        sd[prefix + "extra"] = ea.zeros(1)

    h1 = m.register_state_dict_pre_hook(pre)
    h2 = m.register_state_dict_post_hook(post)
    sd = m.state_dict(prefix="x.")
    assert calls == ["pre:x.:False", "post:x.:['x.bias', 'x.weight']:{'version': 1}"]
    assert "x.extra" in sd
    m.register_state_dict_post_hook(lambda *a: 1)
    with pytest.raises(RuntimeError, match="state_dict post-hook must return None"):
        m.state_dict()
    h1.remove()
    h2.remove()

    lm = nn.Linear(2, 2)
    seen: list[object] = []

    def load_pre(module, state_dict, prefix, local_metadata, strict, missing, unexpected, errors):  # type: ignore[no-untyped-def]
        seen.append(("pre", module is lm, prefix, sorted(state_dict)))
        state_dict[prefix + "bias"] = ea.full((2,), 3.0)

    def load_post(module, incompatible):  # type: ignore[no-untyped-def]
        seen.append(("post", list(incompatible.missing_keys), list(incompatible.unexpected_keys)))
        incompatible.unexpected_keys.clear()

    lm.register_load_state_dict_pre_hook(load_pre)
    lm.register_load_state_dict_post_hook(load_post)
    lm.load_state_dict({"weight": ea.zeros(2, 2), "junk": ea.zeros(1)})
    assert seen == [("pre", True, "", ["junk", "weight"]), ("post", [], ["junk"])]
    assert lm.bias.detach().tolist() == [3.0, 3.0]
    lm.register_load_state_dict_post_hook(lambda m, k: 1)
    with pytest.raises(RuntimeError, match="are not expected to return new values"):
        lm.load_state_dict(lm.state_dict())


# ---- copying ---------------------------------------------------------------------------------
def test_deepcopy_and_pickle() -> None:
    m = Net()
    m2 = copy.deepcopy(m)
    assert m2.fc1.weight is not m.fc1.weight and isinstance(m2.fc1.weight, nn.Parameter)
    assert m2.fc1.weight.requires_grad
    np.testing.assert_array_equal(m2.fc1.weight.detach().numpy(), m.fc1.weight.detach().numpy())
    m3 = pickle.loads(pickle.dumps(m))
    assert isinstance(m3.fc2.bias, nn.Parameter) and m3._non_persistent_buffers_set == {"scratch"}
    np.testing.assert_array_equal(m3.fc2.bias.detach().numpy(), m.fc2.bias.detach().numpy())
    x = ea.randn(2, 3)
    np.testing.assert_array_equal(m3(x).detach().numpy(), m(x).detach().numpy())


def test_dir_lists_members() -> None:
    d = dir(Net())
    assert "fc1" in d and "scale" in d and "steps" in d and "forward" in d


def test_forward_missing() -> None:
    with pytest.raises(NotImplementedError, match='Module \\[Module\\] is missing the required "forward" function'):
        nn.Module()(1)


# ---- repr ------------------------------------------------------------------------------------
def test_nested_repr_matches_pytorch() -> None:
    m = nn.Sequential(
        OrderedDict(
            features=nn.Sequential(nn.Linear(1, 6), nn.ReLU(inplace=True)),
            flat=nn.Flatten(),
            head=nn.ModuleList([nn.Linear(4, 4) for _ in range(3)] + [nn.Linear(4, 2, bias=False)]),
            act=nn.ModuleDict({"a": nn.GELU(), "b": nn.LeakyReLU(0.2)}),
        )
    )
    assert repr(m) == (
        "Sequential(\n"
        "  (features): Sequential(\n"
        "    (0): Linear(in_features=1, out_features=6, bias=True)\n"
        "    (1): ReLU(inplace=True)\n"
        "  )\n"
        "  (flat): Flatten(start_dim=1, end_dim=-1)\n"
        "  (head): ModuleList(\n"
        "    (0-2): 3 x Linear(in_features=4, out_features=4, bias=True)\n"
        "    (3): Linear(in_features=4, out_features=2, bias=False)\n"
        "  )\n"
        "  (act): ModuleDict(\n"
        "    (a): GELU(approximate='none')\n"
        "    (b): LeakyReLU(negative_slope=0.2)\n"
        "  )\n"
        ")"
    )


def test_multiline_extra_repr() -> None:
    class M(nn.Module):
        def extra_repr(self) -> str:
            return "a=1\nb=2"

    assert repr(M()) == "M(\n  a=1\n  b=2\n)"

    class N(nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.inner = nn.ReLU()

        def extra_repr(self) -> str:
            return "k=3"

    assert repr(N()) == "N(\n  k=3\n  (inner): ReLU()\n)"
    assert repr(nn.Module()) == "Module()"

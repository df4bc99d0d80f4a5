"""What reads or writes a CUDA tensor's data from the host: the Tensor protocols and
conversions of aten's Python layer (item, tolist, repr, bool/int/float/index, numpy,
pickling) and the C++ kernels shared by CPU and CUDA that gather rows on the host side.

Each either works on a CUDA tensor (through a copy to the host) or raises PyTorch's
error; the tests that need a GPU are marked ``cuda``."""

from __future__ import annotations

import copy
import pickle

import ember.aten as ea
import numpy as np
import pytest

NUMPY_ERROR = (
    r"^can't convert cuda:0 device type tensor to numpy\. Use Tensor\.cpu\(\) to copy the tensor to host memory "
    r"first\.$"
)


def test_pickling_a_cpu_tensor_keeps_its_reduction() -> None:
    # CPU tensors reduce as before (no device argument), so their pickles load anywhere
    x = ea.arange(6.0).reshape(2, 3).t()
    fn, args = x.__reduce_ex__(pickle.HIGHEST_PROTOCOL)
    assert len(args) == 4
    y = pickle.loads(pickle.dumps(x))
    assert y.device.type == "cpu" and y.shape == (3, 2)
    np.testing.assert_array_equal(y.numpy(), x.numpy())
    # a device argument naming the CPU rebuilds on the CPU
    z = fn(*args, "cpu")
    assert z.device.type == "cpu"
    np.testing.assert_array_equal(z.numpy(), x.numpy())


@pytest.mark.cuda
def test_pickling_a_cuda_tensor_keeps_its_device() -> None:
    x = ea.arange(12.0).reshape(3, 4)
    for t in [x.cuda(), x.cuda().t(), x.half().cuda(), x.cuda().requires_grad_(True)]:
        y = pickle.loads(pickle.dumps(t))
        assert y.is_cuda and y.device == t.device, t
        assert y.dtype == t.dtype and tuple(y.shape) == tuple(t.shape)
        assert y.requires_grad == t.requires_grad
        np.testing.assert_array_equal(y.detach().cpu().float().numpy(), t.detach().cpu().float().numpy())
        d = copy.deepcopy(t)
        assert d.is_cuda
        np.testing.assert_array_equal(d.detach().cpu().float().numpy(), t.detach().cpu().float().numpy())


@pytest.mark.cuda
def test_numpy_of_a_cuda_tensor_raises_pytorchs_error() -> None:
    x = ea.ones(2, 3, device="cuda")
    with pytest.raises(TypeError, match=NUMPY_ERROR):
        x.numpy()
    with pytest.raises(TypeError, match=NUMPY_ERROR):
        np.asarray(x)
    # the device is named before requires_grad, as in PyTorch
    with pytest.raises(TypeError, match=NUMPY_ERROR):
        ea.ones(2, device="cuda", requires_grad=True).numpy()
    # force=True copies to the host
    np.testing.assert_array_equal(x.numpy(force=True), np.ones((2, 3), np.float32))


@pytest.mark.cuda
def test_host_conversions_of_cuda_tensors_match_the_cpu() -> None:
    c = ea.tensor([[1.5, -2.0, 0.0], [4.0, 5.25, -6.5]])
    g = c.cuda()
    assert g.tolist() == c.tolist()
    assert g[1, 1].item() == 5.25
    assert float(g[0, 0]) == 1.5 and int(g[1, 0]) == 4 and bool(g[0, 1]) is True and not bool(g[0, 2])
    assert [1, 2, 3, 4][ea.tensor(2, device="cuda")] == 3
    assert f"{g[0, 0]:.2f}" == "1.50"
    assert 5.25 in g and 7.0 not in g
    assert [r.tolist() for r in g] == c.tolist() and len(g) == 2
    # printed as the CPU tensor, with the device named
    for t in [c, ea.arange(5000.0), ea.tensor(3)]:
        assert repr(t.cuda()) == repr(t)[:-1] + ", device='cuda:0')"
    assert repr(ea.zeros(0, 2, device="cuda")) == "tensor([], device='cuda:0', size=(0, 2))"
    with pytest.raises(RuntimeError, match="Boolean value of Tensor with more than one value is ambiguous"):
        bool(g)


@pytest.mark.cuda
def test_repeat_interleave_with_tensor_repeats_on_cuda_matches_the_cpu() -> None:
    # the rows are gathered by one index_select on the device
    x = ea.arange(24.0).reshape(4, 3, 2)
    reps = ea.tensor([2, 0, 3, 1])
    for dim, r in [(0, reps), (1, ea.tensor([1, 3, 0])), (None, ea.arange(24) % 3)]:
        expected = ea.repeat_interleave(x, r, dim=dim)
        got = ea.repeat_interleave(x.cuda(), r.cuda(), dim=dim)
        assert got.is_cuda and tuple(got.shape) == tuple(expected.shape)
        np.testing.assert_array_equal(got.cpu().numpy(), expected.numpy())
    # repeats on the CPU for a CUDA input, and a 0-dim self
    got = ea.repeat_interleave(ea.tensor(7.0, device="cuda"), ea.tensor([3]))
    np.testing.assert_array_equal(got.cpu().numpy(), [7.0, 7.0, 7.0])
    got = ea.repeat_interleave(x.cuda(), reps, dim=0)
    np.testing.assert_array_equal(got.cpu().numpy(), ea.repeat_interleave(x, reps, dim=0).numpy())


@pytest.mark.cuda
def test_safetensors_refuses_cuda_tensors_sharing_memory_and_round_trips_cuda_tensors() -> None:
    from ember.aten import safetensors as st

    t = ea.arange(12.0, device="cuda").reshape(3, 4)
    with pytest.raises(RuntimeError, match="Some tensors share memory"):
        st.save({"a": t, "b": t[1]})
    # the same addresses on two devices are not shared memory; distinct CUDA tensors save
    data = st.save({"a": t, "c": ea.arange(3.0)})
    back = st.load(data, device="cuda")
    assert back["a"].is_cuda
    np.testing.assert_array_equal(back["a"].cpu().numpy(), t.cpu().numpy())
    np.testing.assert_array_equal(back["c"].cpu().numpy(), [0.0, 1.0, 2.0])

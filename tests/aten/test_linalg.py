"""Linear algebra beyond the OpInfo table: einsum against numpy.einsum, decomposition
properties (reconstruction, orthogonality, triangularity), LinAlgError messages, in-place
and out= variants, BLAS layouts (transposed / column-major outputs), the batched parallel
GEMM path, reduced-precision and integer products, and the @ operator."""

from __future__ import annotations

import math
import os
import subprocess
import sys
import textwrap
import warnings
from typing import Any

import ember.aten as ea
import numpy as np
import pytest
from ember.c10py import LinAlgError
from opinfo.linalg import EINSUM_CASES

RNG = np.random.default_rng(2024)


def T(a: Any, dtype: Any = ea.float64) -> Any:
    """A tensor with a copy of a's values (never sharing a's memory)."""
    return ea.from_numpy(np.array(a, dtype=np.float64)).to(dtype)


def N(t: Any) -> np.ndarray:
    return t.float().numpy() if t.dtype in (ea.float16, ea.bfloat16) else t.numpy()


def rand(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape)


# ---- einsum -------------------------------------------------------------------------------------

EXTRA_EINSUM = [
    ("i...->...", [(2, 3, 4)]),
    ("...i->i", [(2, 3)]),
    ("i->...i", [(3,)]),
    ("...,...->...", [(2, 3), (3,)]),
    ("ij...,jk...->ik...", [(2, 3, 4), (3, 5, 4)]),
    ("abc,cd,de->abe", [(2, 3, 4), (4, 5), (5, 2)]),
    ("iji->j", [(2, 3, 2)]),
    ("bii->bi", [(4, 3, 3)]),
    ("ij,ij,ij->", [(2, 3), (2, 3), (2, 3)]),
    ("ik,kj->", [(3, 4), (4, 2)]),
    ("i,j,k->ijk", [(2,), (3,), (4,)]),
    ("ii,jj->ij", [(2, 2), (3, 3)]),
    ("ab,ba->", [(3, 3), (3, 3)]),
    ("ij,ik->jk", [(1, 3), (5, 4)]),
]


@pytest.mark.parametrize(("equation", "shapes"), EINSUM_CASES + EXTRA_EINSUM, ids=lambda x: str(x))
def test_einsum_matches_numpy(equation: str, shapes: list[tuple[int, ...]]) -> None:
    arrays = [rand(*s) if s else np.asarray(RNG.standard_normal()) for s in shapes]
    got = ea.einsum(equation, *[T(a) for a in arrays])
    if equation == "ij,ik->jk":  # size-1 broadcasting of a contracted label (NumPy refuses it)
        exp = np.einsum("ij,ik->jk", np.broadcast_to(arrays[0], (5, 3)), arrays[1])
    elif equation == "...i->i":  # PyTorch sums the ellipsis dims missing from the output; NumPy refuses
        exp = arrays[0].sum(axis=0)
    else:
        exp = np.einsum(equation.replace(" ", ""), *arrays)
    assert tuple(got.shape) == exp.shape
    np.testing.assert_allclose(N(got), exp, rtol=1e-10, atol=1e-12)


def test_einsum_call_forms() -> None:
    a, b = rand(2, 3), rand(3, 4)
    exp = a @ b
    np.testing.assert_allclose(N(ea.einsum("ij,jk->ik", [T(a), T(b)])), exp)
    np.testing.assert_allclose(N(ea.einsum("ij,jk->ik", (T(a), T(b)))), exp)
    np.testing.assert_allclose(N(ea.einsum(T(a), [0, 1], T(b), [1, 2], [0, 2])), exp)
    np.testing.assert_allclose(N(ea.einsum(T(a), [0, 1], T(b), [1, 2])), exp)
    c = rand(2, 3, 4)
    np.testing.assert_allclose(N(ea.einsum(T(c), [Ellipsis, 1], [1])), c.sum(axis=(0, 1)))
    with pytest.raises(ValueError, match="must specify the equation string and at least one operand"):
        ea.einsum("->")
    with pytest.raises(ValueError, match=r"within the range \[0, 52\)"):
        ea.einsum(T(a), [0, 60])


def test_einsum_integer_and_dtype_rules() -> None:
    a = ea.tensor([[1, 2], [3, 4]], dtype=ea.int32)
    b = ea.tensor([[5, 6], [7, 8]], dtype=ea.int32)
    r = ea.einsum("ij,jk->ik", a, b)
    assert r.dtype == ea.int32
    assert r.tolist() == [[19, 22], [43, 50]]
    with pytest.raises(RuntimeError, match="not implemented for"):
        ea.einsum("ij,jk->ik", a.bool(), b.bool())


# ---- matmul and the @ operator ----------------------------------------------------------------------


def test_matmul_dunders_are_installed() -> None:
    from ember.aten import _generated_ops, _tensor_ops

    assert _tensor_ops.install(ea.Tensor, _generated_ops) == []
    a, b = rand(2, 3, 4), rand(4, 5)
    np.testing.assert_allclose(N(T(a) @ T(b)), a @ b)
    np.testing.assert_allclose(N(T(b).__rmatmul__(T(a))), a @ b)
    with pytest.raises(TypeError):
        T(a) @ "x"


def test_matmul_folds_and_keeps_shapes() -> None:
    a = rand(2, 3, 4, 5)
    v, m = rand(5), rand(5, 2)
    np.testing.assert_allclose(N(ea.matmul(T(a), T(v))), a @ v, rtol=1e-12)
    np.testing.assert_allclose(N(ea.matmul(T(a), T(m))), a @ m, rtol=1e-12)
    # a transposed N-D left operand (the fold copies it) and a 2-D / N-D product (bmm, stride-0 batch)
    e = rand(4, 2)
    np.testing.assert_allclose(N(ea.matmul(T(a).transpose(2, 3), T(e))), np.swapaxes(a, 2, 3) @ e, rtol=1e-12)
    w = rand(6, 4)
    np.testing.assert_allclose(N(ea.matmul(T(w), T(a))), w @ a, rtol=1e-12)
    assert ea.matmul(T(rand(3)), T(rand(3))).shape == ()


def test_matmul_out_variants() -> None:
    a, b = rand(2, 3, 4), rand(4, 5)
    out = ea.empty(0, dtype=ea.float64)
    r = ea.matmul(T(a), T(b), out=out)
    assert r is out
    np.testing.assert_allclose(N(out), a @ b)
    out1 = ea.empty(0, dtype=ea.float64)
    assert ea.matmul(T(rand(3)), T(rand(3, 2)), out=out1) is out1 and out1.shape == (2,)
    with pytest.raises(RuntimeError, match="Expected out tensor to have dtype double, but got long int instead"):
        ea.matmul(T(a), T(b), out=ea.empty(0, dtype=ea.int64))


# ---- BLAS layouts, parallel batches, dtypes -------------------------------------------------------


@pytest.mark.parametrize("dtype", [ea.float32, ea.float64])
def test_mm_large_and_transposed(dtype: Any) -> None:
    a, b = rand(130, 70), rand(70, 90)
    tol = 1e-4 if dtype == ea.float32 else 1e-12
    np.testing.assert_allclose(N(ea.mm(T(a, dtype), T(b, dtype))), a @ b, rtol=tol, atol=tol)
    at = T(a.T.copy(), dtype).t()  # BLAS 'T' operand
    np.testing.assert_allclose(N(ea.mm(at, T(b, dtype))), a @ b, rtol=tol, atol=tol)
    # a column-major out= (computed as C^T = B^T A^T)
    out = ea.empty(90, 130, dtype=dtype).t()
    assert ea.mm(T(a, dtype), T(b, dtype), out=out) is out and not out.is_contiguous()
    np.testing.assert_allclose(N(out), a @ b, rtol=tol, atol=tol)
    # an out= with arbitrary strides (computed in a temporary, copied back)
    big = ea.zeros(130, 180, dtype=dtype)
    ea.mm(T(a, dtype), T(b, dtype), out=big[:, ::2])
    np.testing.assert_allclose(N(big)[:, ::2], a @ b, rtol=tol, atol=tol)
    assert not N(big)[:, 1::2].any()


def test_mm_out_aliasing_an_input() -> None:
    a = rand(4, 4)
    x = T(a)
    ea.mm(x, x, out=x)
    np.testing.assert_allclose(N(x), a @ a, rtol=1e-12)
    y = T(a)
    y.addmm_(y, y, beta=2.0, alpha=-1.0)
    np.testing.assert_allclose(N(y), 2 * a - a @ a, rtol=1e-12)


@pytest.mark.parametrize("dtype", [ea.float32, ea.float64, ea.int64, ea.float16])
def test_bmm_many_small_matrices(dtype: Any) -> None:
    """The parallel-over-the-batch path (OpenBLAS single-threaded inside)."""
    a = RNG.integers(-3, 4, size=(257, 8, 6)).astype(np.float64)
    b = RNG.integers(-3, 4, size=(257, 6, 5)).astype(np.float64)
    got = ea.bmm(T(a, dtype), T(b, dtype))
    np.testing.assert_allclose(N(got).astype(np.float64), a @ b, rtol=1e-3)
    got_t = ea.bmm(T(np.swapaxes(a, 1, 2).copy(), dtype).transpose(1, 2), T(b, dtype))
    np.testing.assert_allclose(N(got_t).astype(np.float64), a @ b, rtol=1e-3)


# Products of at most 64 on every side with B not transposed skip OpenBLAS (Blas.cpp's
# small_gemm: a register-blocked kernel, alpha 1, beta 0 or 1). Sizes around the vector width
# (full blocks, one vector, a partial vector), row counts around its 4-row blocks, A read
# transposed in place, beta 1 accumulating into C, the 64 boundary and 65 past it.
SMALL_SHAPES = [(1, 1, 1), (3, 5, 7), (4, 16, 8), (9, 33, 17), (32, 32, 32), (64, 64, 64), (65, 7, 9)]


@pytest.mark.parametrize("m,k,n", SMALL_SHAPES)
@pytest.mark.parametrize("ta", [False, True])
@pytest.mark.parametrize("dtype", [ea.float32, ea.float64])
def test_small_products_match_numpy(m: int, k: int, n: int, ta: bool, dtype: Any) -> None:
    a, b, c = rand(m, k), rand(k, n), rand(m, n)
    A = T(a.T.copy(), dtype).t() if ta else T(a, dtype)
    B = T(b, dtype)
    tol = {"rtol": 1e-5, "atol": 1e-5} if dtype == ea.float32 else {"rtol": 1e-12, "atol": 1e-12}
    np.testing.assert_allclose(N(ea.mm(A, B)), a @ b, **tol)
    acc = T(c, dtype)
    acc.addmm_(A, B)  # beta 1
    np.testing.assert_allclose(N(acc), c + a @ b, **tol)
    out = T(c, dtype)
    out.addmm_(A, B, beta=0.5, alpha=2.0)  # OpenBLAS's alpha / beta
    np.testing.assert_allclose(N(out), 0.5 * c + 2.0 * (a @ b), **tol)
    # C written through a row stride: a column slice of a wider matrix, the rest untouched
    wide = ea.zeros(m, n + 3, dtype=dtype)
    ea.mm(A, B, out=wide[:, 1 : n + 1])
    np.testing.assert_allclose(N(wide[:, 1 : n + 1]), a @ b, **tol)
    assert not N(wide[:, 0]).any() and not N(wide[:, n + 1 :]).any()
    # one product, alone or in a batch, at any position: the same bits
    batch = ea.stack([A, A, A])
    got = ea.bmm(batch, ea.stack([B, B, B]))
    for i in range(3):
        np.testing.assert_array_equal(N(got[i]), N(ea.mm(A, B)))


def test_small_products_propagate_nan_and_inf() -> None:
    # a zero in A times an inf or NaN in B is NaN, as BLAS and PyTorch (no skipped zeros)
    a = ea.tensor([[0.0, 1.0]])
    b = ea.tensor([[math.inf, 1.0], [2.0, math.nan]])
    np.testing.assert_array_equal(N(ea.mm(a, b)), np.array([[math.nan, math.nan]]))
    assert N(ea.mm(ea.ones(2, 2), ea.tensor([[1.0, math.inf], [1.0, 1.0]])))[0, 1] == math.inf


def test_batched_gemm_does_not_trip_openblas_openmp_warning() -> None:
    code = textwrap.dedent(
        """
        import ember.aten as ea
        ea.set_num_threads(2)
        a = ea.randn(500, 16, 16); b = ea.randn(500, 16, 16)
        for _ in range(20):
            ea.bmm(a, b); ea.matmul(a, b); ea.baddbmm(a, a, b)
        ea.mm(ea.randn(300, 300), ea.randn(300, 300))
        print("ok")
        """
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120)
    assert r.returncode == 0, r.stderr
    assert r.stdout.strip() == "ok"
    assert "OpenMP" not in r.stderr, r.stderr


# Products above kBlasSerialWork (4M multiply-adds) are cut into one panel of C per thread:
# column panels, or row panels when C is taller than wide; every operand layout.
@pytest.mark.parametrize("m,k,n", [(200, 300, 517), (613, 250, 90), (33, 1100, 301)])
@pytest.mark.parametrize("ta,tb", [(False, False), (True, False), (False, True), (True, True)])
@pytest.mark.parametrize("dtype", [ea.float32, ea.float64])
def test_large_products_split_over_threads_equal_one_thread(
    m: int, k: int, n: int, ta: bool, tb: bool, dtype: Any
) -> None:
    a, b = rand(m, k), rand(k, n)
    A = T(a.T.copy(), dtype).t() if ta else T(a, dtype)
    B = T(b.T.copy(), dtype).t() if tb else T(b, dtype)
    before = ea.get_num_threads()
    try:
        ea.set_num_threads(1)
        one = ea.mm(A, B)
        ea.set_num_threads(2)
        two = ea.mm(A, B)
        out = ea.full((m, n), 3.0, dtype=dtype)
        out.addmm_(A, B, beta=0.5, alpha=2.0)
    finally:
        ea.set_num_threads(before)
    tol = {"rtol": 1e-4, "atol": 1e-3} if dtype == ea.float32 else {"rtol": 1e-12, "atol": 1e-10}
    np.testing.assert_allclose(N(one), a @ b, **tol)
    np.testing.assert_allclose(N(two), a @ b, **tol)
    # the same threads, the same panels: bit for bit the same result on a second call
    ea.set_num_threads(2)
    try:
        np.testing.assert_array_equal(N(ea.mm(A, B)), N(two))
    finally:
        ea.set_num_threads(before)
    np.testing.assert_allclose(N(out), 1.5 + 2.0 * (a @ b), **tol)


@pytest.mark.parametrize("dtype", [ea.float32, ea.float64, ea.int64])
def test_bmm_medium_products_run_over_the_batch(dtype: Any) -> None:
    """Products between the small-matrix path and kBlasSerialWork (here 160^3 multiply-adds)
    are spread over the threads one matrix each; larger ones (the last case) split themselves."""
    before = ea.get_num_threads()
    try:
        ea.set_num_threads(2)
        for batch, m in ((5, 160), (2, 170)):
            a = RNG.integers(-3, 4, size=(batch, m, m)).astype(np.float64)
            b = RNG.integers(-3, 4, size=(batch, m, m)).astype(np.float64)
            got = ea.bmm(T(a, dtype), T(b, dtype).transpose(1, 2))
            np.testing.assert_array_equal(N(got).astype(np.float64), a @ np.swapaxes(b, 1, 2))
    finally:
        ea.set_num_threads(before)


def test_one_thread_pool_openblas_single_threaded_and_openmp_passive() -> None:
    """OpenBLAS's own pool stays at one thread whatever set_num_threads says (ember splits the
    products over its OpenMP threads), and OpenMP's threads sleep after a region unless the
    user chose otherwise."""
    code = textwrap.dedent(
        """
        import ctypes, os, pathlib
        import ember.aten as ea
        import scipy_openblas32
        lib = next(pathlib.Path(scipy_openblas32.get_lib_dir()).glob("libscipy_openblas*.so*"))
        blas = ctypes.CDLL(str(lib))
        ea.set_num_threads(2)
        ea.mm(ea.randn(400, 400), ea.randn(400, 400))
        print(blas.scipy_openblas_get_num_threads(), os.environ.get("OMP_WAIT_POLICY"))
        """
    )
    env = {k: v for k, v in os.environ.items() if k not in ("OMP_WAIT_POLICY", "GOMP_SPINCOUNT")}
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, env=env)
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["1", "PASSIVE"]
    r = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=120,
        env={**env, "OMP_WAIT_POLICY": "ACTIVE"},
    )
    assert r.returncode == 0, r.stderr
    assert r.stdout.split() == ["1", "ACTIVE"]


@pytest.mark.parametrize("dtype", [ea.int8, ea.uint8, ea.int16, ea.int32, ea.int64])
def test_integer_mm_blocked_kernel(dtype: Any) -> None:
    a = RNG.integers(0 if dtype == ea.uint8 else -100, 100, size=(37, 600))
    b = RNG.integers(0 if dtype == ea.uint8 else -100, 100, size=(600, 530))
    np_t = {ea.int8: np.int8, ea.uint8: np.uint8, ea.int16: np.int16, ea.int32: np.int32, ea.int64: np.int64}[dtype]
    a, b = a.astype(np_t), b.astype(np_t)
    got = ea.mm(ea.from_numpy(a), ea.from_numpy(b))
    exp = (a.astype(np.int64) @ b.astype(np.int64)).astype(np_t)  # wraps as the dtype does
    assert got.dtype == dtype
    np.testing.assert_array_equal(got.numpy(), exp)
    np.testing.assert_array_equal(ea.mm(ea.from_numpy(a), ea.from_numpy(b.T.copy()).t()).numpy(), exp)


@pytest.mark.parametrize("dtype", [ea.float16, ea.bfloat16])
def test_reduced_precision_products_round_once(dtype: Any) -> None:
    a, b = rand(40, 50), rand(50, 30)
    ta, tb = T(a, dtype), T(b, dtype)
    exact = N(ta).astype(np.float64) @ N(tb).astype(np.float64)
    got = ea.mm(ta, tb)
    assert got.dtype == dtype
    # one rounding of the float32 result: within half a unit in the last place (plus float32 noise)
    eps = 2.0**-11 if dtype == ea.float16 else 2.0**-8
    np.testing.assert_allclose(N(got).astype(np.float64), exact, rtol=eps, atol=1e-3)
    np.testing.assert_allclose(N(ea.matmul(ta, tb[:, 0])).astype(np.float64), exact[:, 0], rtol=eps, atol=1e-3)


def test_dot_and_vdot_bool_unsupported() -> None:
    with pytest.raises(RuntimeError, match="not implemented for"):
        ea.dot(ea.tensor([True]), ea.tensor([True]))
    r = ea.dot(ea.tensor([1, 2, 3], dtype=ea.int16), ea.tensor([4, 5, 6], dtype=ea.int16))
    assert r.dtype == ea.int16 and r.item() == 32


def test_dot_out_dtype_message() -> None:
    with pytest.raises(RuntimeError, match="result dtype Long does not match input dtype Float"):
        ea.dot(ea.ones(3), ea.ones(3), out=ea.empty(0, dtype=ea.int64))


# ---- in-place variants of the add* family ----------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "self_shape", "args_shapes"),
    [
        ("addmm", (3, 2), [(3, 4), (4, 2)]),
        ("addmv", (3,), [(3, 4), (4,)]),
        ("baddbmm", (2, 3, 2), [(2, 3, 4), (2, 4, 2)]),
        ("addbmm", (3, 2), [(2, 3, 4), (2, 4, 2)]),
        ("addr", (3, 4), [(3,), (4,)]),
    ],
)
def test_inplace_add_family(name: str, self_shape: tuple[int, ...], args_shapes: list[tuple[int, ...]]) -> None:
    s = rand(*self_shape)
    args = [T(rand(*sh)) for sh in args_shapes]
    expected = getattr(ea, name)(T(s), *args, beta=0.5, alpha=2.0)
    x = T(s)
    ptr, version = x.data_ptr(), x._version
    r = getattr(x, name + "_")(*args, beta=0.5, alpha=2.0)
    assert r is x and x.data_ptr() == ptr and x._version == version + 1
    np.testing.assert_allclose(N(x), N(expected), rtol=1e-12)
    # self that would have to grow: PyTorch's message
    small = T(rand(1) if name == "addmv" else rand(*self_shape[-1:]))
    with pytest.raises(RuntimeError, match=r"Bad in-place call: input tensor size|2D tensor expected"):
        getattr(small, name + "_")(*args)
    if name == "addr":
        with pytest.raises(RuntimeError, match="result type Float can't be cast to the desired output type Long"):
            ea.zeros(3, 4, dtype=ea.int64).addr_(ea.ones(3), ea.ones(4))


def test_addmv_function_inplace() -> None:
    x = T(rand(3))
    mat, vec = T(rand(3, 2)), T(rand(2))
    exp = N(x) + N(mat) @ N(vec)
    assert ea.addmv_(x, mat, vec) is x
    np.testing.assert_allclose(N(x), exp, rtol=1e-12)


def test_beta_zero_ignores_nan_and_inf() -> None:
    nan = ea.full((2, 2), math.nan)
    assert not ea.addmm(nan, ea.ones(2, 2), ea.ones(2, 2), beta=0).isnan().any()
    assert not ea.addmv(ea.full((2,), math.inf), ea.ones(2, 2), ea.ones(2), beta=0).isinf().any()
    assert not ea.addr(nan, ea.ones(2), ea.ones(2), beta=0).isnan().any()
    assert not ea.baddbmm(ea.full((1, 2, 2), math.nan), ea.ones(1, 2, 2), ea.ones(1, 2, 2), beta=0).isnan().any()
    # integer scalars truncate as PyTorch's: beta=0.5 -> 0, alpha=2.7 -> 2
    three = ea.full((1, 1), 3, dtype=ea.int64)
    one = ea.ones(1, 1, dtype=ea.int64)
    assert ea.addmm(three, one, one, beta=0.5).item() == 1
    assert ea.addmm(three, one, one, alpha=2.7).item() == 5


# ---- cross / tensordot / kron / outer ---------------------------------------------------------------


def test_cross_default_dim_warns_and_picks_first_size_3_dim() -> None:
    a, b = rand(3, 3), rand(3, 3)
    with pytest.warns(UserWarning, match="Using torch.cross without specifying the dim arg is deprecated"):
        r = ea.cross(T(a), T(b))
    np.testing.assert_allclose(N(r), np.cross(a, b, axis=0))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with pytest.raises(RuntimeError, match="no dimension of size 3 in input"):
            ea.cross(T(rand(2, 2)), T(rand(2, 2)))
    np.testing.assert_allclose(N(T(a).cross(T(b), dim=1)), np.cross(a, b, axis=1))


def test_tensordot_dims_forms() -> None:
    a, b = rand(3, 4, 5), rand(4, 5, 6)
    exp = np.tensordot(a, b, 2)
    np.testing.assert_allclose(N(ea.tensordot(T(a), T(b))), exp)
    np.testing.assert_allclose(N(ea.tensordot(T(a), T(b), dims=([1, 2], [0, 1]))), exp)
    np.testing.assert_allclose(N(ea.tensordot(T(a), T(b), dims=ea.tensor(2))), exp)
    np.testing.assert_allclose(N(ea.tensordot(T(a), T(b), dims=ea.tensor([[1, 2], [0, 1]]))), exp)
    e = rand(5, 2)
    np.testing.assert_allclose(N(ea.tensordot(T(a), T(e), dims=(2, 0))), np.tensordot(a, e, axes=(2, 0)))
    out = ea.empty(0, dtype=ea.float64)
    assert ea.tensordot(T(a), T(b), dims=2, out=out) is out
    np.testing.assert_allclose(N(out), exp)


def test_kron_and_outer_promote() -> None:
    a = ea.tensor([[1, 2], [3, 4]])
    b = ea.tensor([0.5, 1.0])
    r = ea.kron(a, b)
    assert r.dtype == ea.float32
    np.testing.assert_allclose(N(r), np.kron(N(a), N(b)))
    o = ea.outer(ea.tensor([1, 2]), ea.tensor([True, False]))
    assert o.dtype == ea.int64 and o.tolist() == [[1, 0], [2, 0]]
    assert ea.ger(ea.tensor([1.0]), ea.tensor([2.0])).tolist() == [[2.0]]


# ---- decompositions: properties ------------------------------------------------------------------------


def _close(a: Any, b: Any, tol: float = 1e-10) -> None:
    np.testing.assert_allclose(
        N(a) if isinstance(a, ea.Tensor) else a, N(b) if isinstance(b, ea.Tensor) else b, rtol=tol, atol=tol
    )


@pytest.mark.parametrize("batch", [(), (3,), (2, 2)])
def test_solve_and_inv_properties(batch: tuple[int, ...]) -> None:
    A = T(rand(*batch, 4, 4) + 4 * np.eye(4))
    B = T(rand(*batch, 4, 3))
    X = ea.linalg.solve(A, B)
    _close(A @ X, B)
    Xr = ea.linalg.solve(A, T(rand(*batch, 3, 4)), left=False)
    assert Xr.shape == (*batch, 3, 4)
    Ai = ea.linalg.inv(A)
    _close(A @ Ai, np.broadcast_to(np.eye(4), (*batch, 4, 4)))
    out = ea.empty(0, dtype=ea.float64)
    assert ea.linalg.inv(A, out=out) is out
    _close(out, Ai)


def test_solve_broadcasting_and_vector_rhs() -> None:
    A = T(rand(2, 1, 3, 3) + 3 * np.eye(3))
    B = T(rand(4, 3, 2))
    X = ea.linalg.solve(A, B)
    assert X.shape == (2, 4, 3, 2)
    _close(A @ X, B.expand(2, 4, 3, 2))
    b = T(rand(2, 1, 3))  # the shape of A without its last dim: a batch of vectors
    x = ea.linalg.solve(A, b)
    assert x.shape == (2, 1, 3)
    _close((A @ x.unsqueeze(-1)).squeeze(-1), b)


@pytest.mark.parametrize("n", [1, 3, 6])
def test_det_slogdet_properties(n: int) -> None:
    a, b = rand(2, n, n), rand(2, n, n)
    da, db = ea.linalg.det(T(a)), ea.linalg.det(T(b))
    _close(ea.linalg.det(T(a @ b)), da * db, 1e-9)
    sign, logabs = ea.linalg.slogdet(T(a))
    assert sign.dtype == ea.float64
    _close(sign * logabs.exp(), da, 1e-9)
    assert ea.det(T(a)).shape == (2,)
    assert T(a).det().shape == (2,)
    # a permutation matrix: det is the permutation's sign
    p = np.eye(n)[::-1].copy()
    assert ea.linalg.det(T(p)).item() == pytest.approx(np.linalg.det(p))


def test_slogdet_singular_and_out() -> None:
    s, l = ea.linalg.slogdet(ea.zeros(3, 3, dtype=ea.float64))
    assert s.item() == 0.0 and l.item() == -math.inf
    assert ea.linalg.det(ea.zeros(0, 0)).item() == 1.0
    o1, o2 = ea.empty(0, dtype=ea.float64), ea.empty(0, dtype=ea.float64)
    r = ea.linalg.slogdet(T(rand(2, 3, 3)), out=(o1, o2))
    assert r[0] is o1 and r[1] is o2 and o1.shape == (2,)
    assert type(r).__name__ == "linalg_slogdet" and r.sign is o1 and r.logabsdet is o2


@pytest.mark.parametrize("upper", [False, True])
def test_cholesky_properties(upper: bool) -> None:
    m = rand(3, 4, 4)
    A = m @ np.swapaxes(m, -1, -2) + 4 * np.eye(4)
    L = ea.linalg.cholesky(T(A), upper=upper)
    if upper:
        assert np.allclose(N(L), np.triu(N(L)))
        _close(L.mT @ L, A)
    else:
        assert np.allclose(N(L), np.tril(N(L)))
        _close(L @ L.mT, A)
    # only the lower triangle is read (LAPACK's 'L'): garbage above it changes nothing
    A_bad = A + np.triu(np.full((4, 4), 100.0), 1)
    _close(ea.linalg.cholesky(T(A_bad)), ea.linalg.cholesky(T(A)))


@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (4, 4), (2, 6, 2), (2, 3, 4, 2)])
@pytest.mark.parametrize("mode", ["reduced", "complete", "r"])
def test_qr_properties(shape: tuple[int, ...], mode: str) -> None:
    a = rand(*shape)
    Q, R = ea.linalg.qr(T(a), mode=mode)
    m, n = shape[-2:]
    k = min(m, n)
    assert np.allclose(N(R), np.triu(N(R)))
    if mode == "r":
        assert Q.shape == (0,)
        assert R.shape == (*shape[:-2], k, n)
        # R agrees with the reduced mode's up to row signs
        _close(ea.abs(R), ea.abs(ea.linalg.qr(T(a))[1]))
        return
    qc = m if mode == "complete" else k
    assert Q.shape == (*shape[:-2], m, qc) and R.shape == (*shape[:-2], qc, n)
    _close(Q @ R, a)
    _close(Q.mT @ Q, np.broadcast_to(np.eye(qc), (*shape[:-2], qc, qc)))


@pytest.mark.parametrize("shape", [(5, 3), (3, 5), (4, 4), (2, 6, 2), (1, 1)])
@pytest.mark.parametrize("full", [False, True])
def test_svd_properties(shape: tuple[int, ...], full: bool) -> None:
    a = rand(*shape)
    U, S, Vh = ea.linalg.svd(T(a), full_matrices=full)
    m, n = shape[-2:]
    k = min(m, n)
    assert U.shape == (*shape[:-2], m, m if full else k)
    assert Vh.shape == (*shape[:-2], n if full else k, n)
    s = N(S)
    assert (s >= 0).all() and (np.diff(s, axis=-1) <= 1e-12).all()
    _close(S, np.linalg.svd(a, compute_uv=False))
    _close((U[..., :, :k] * S.unsqueeze(-2)) @ Vh[..., :k, :], a)
    _close(U.mT @ U, np.broadcast_to(np.eye(U.shape[-1]), (*shape[:-2], U.shape[-1], U.shape[-1])))
    _close(Vh @ Vh.mT, np.broadcast_to(np.eye(Vh.shape[-2]), (*shape[:-2], Vh.shape[-2], Vh.shape[-2])))
    _close(ea.linalg.svdvals(T(a)), s)
    r = ea.linalg.svd(T(a))
    assert type(r).__name__ == "linalg_svd" and r.U.shape[-1] == m


def test_svd_out_and_driver() -> None:
    a = T(rand(4, 3))
    outs = tuple(ea.empty(0, dtype=ea.float64) for _ in range(3))
    r = ea.linalg.svd(a, full_matrices=False, out=outs)
    assert all(x is y for x, y in zip(r, outs, strict=True))
    _close((outs[0] * outs[1].unsqueeze(-2)) @ outs[2], a)
    with pytest.raises(RuntimeError, match="keyword argument `driver=` is only supported on CUDA inputs"):
        ea.linalg.svd(a, driver="gesvd")
    with pytest.raises(LinAlgError, match="contained non-finite values"):
        ea.linalg.svdvals(ea.tensor([[1.0, math.inf], [0.0, 1.0]]))


def test_qr_and_cholesky_out() -> None:
    a = T(rand(4, 3))
    q, r = ea.empty(0, dtype=ea.float64), ea.empty(0, dtype=ea.float64)
    res = ea.linalg.qr(a, out=(q, r))
    assert res.Q is q and res.R is r
    _close(q @ r, a)
    m = rand(3, 3)
    spd = T(m @ m.T + 3 * np.eye(3))
    out = ea.empty(0, dtype=ea.float64)
    assert ea.linalg.cholesky(spd, out=out) is out
    with pytest.raises(RuntimeError, match="Expected out tensor to have dtype double, but got float instead"):
        ea.linalg.cholesky(spd, out=ea.empty(0))


# ---- LinAlgError --------------------------------------------------------------------------------------


def test_linalg_errors_are_runtime_errors_with_pytorch_messages() -> None:
    assert issubclass(LinAlgError, RuntimeError)
    sing = ea.tensor([[1.0, 2.0], [2.0, 4.0]])
    with pytest.raises(
        LinAlgError,
        match=r"linalg.inv: The diagonal element 2 is zero, the inversion could not be "
        r"completed because the input matrix is singular.",
    ):
        ea.linalg.inv(sing)
    with pytest.raises(LinAlgError, match=r"torch.linalg.solve: The solver failed because the input matrix is"):
        ea.linalg.solve(sing, ea.ones(2))
    with pytest.raises(LinAlgError, match=r"\(Batch element 2\)"):
        ea.linalg.inv(ea.stack([ea.eye(2), ea.eye(2), sing]))
    with pytest.raises(LinAlgError, match=r"the leading minor of order 2 is not positive-definite"):
        ea.linalg.cholesky(sing)
    with pytest.raises(NotImplementedError, match=r"linalg.inv: not implemented for 'Half'"):
        ea.linalg.inv(ea.eye(2, dtype=ea.float16))
    # det / slogdet of singular matrices are values, not errors
    assert ea.linalg.det(sing).item() == 0.0


# ---- norms -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("ord", ["fro", "nuc", 1, -1, 2, -2, math.inf, -math.inf])
def test_matrix_norm_all_orders_batched(ord: Any) -> None:
    a = rand(2, 3, 4)
    got = ea.linalg.matrix_norm(T(a), ord=ord)
    _close(got, np.linalg.norm(a, ord=ord, axis=(-2, -1)))
    got_k = ea.linalg.matrix_norm(T(a), ord=ord, dim=(0, 2), keepdim=True)
    _close(got_k, np.linalg.norm(a, ord=ord, axis=(0, 2), keepdims=True))
    out = ea.empty(0, dtype=ea.float64)
    assert ea.linalg.matrix_norm(T(a), ord=ord, out=out) is out
    _close(out, got)


def test_norm_dtype_and_empty_orders() -> None:
    a = rand(3, 4)
    r = ea.linalg.matrix_norm(T(a, ea.float32), dtype=ea.float64)
    assert r.dtype == ea.float64
    assert ea.linalg.matrix_norm(ea.zeros(0, 4), ord=math.inf).item() == 0.0
    assert ea.linalg.matrix_norm(ea.zeros(0, 4), ord="nuc").item() == 0.0
    with pytest.raises((RuntimeError, IndexError)):
        ea.linalg.matrix_norm(ea.zeros(0, 4), ord=-math.inf)
    assert ea.linalg.norm(T(a), dtype=ea.float64).item() == pytest.approx(np.linalg.norm(a))
    with pytest.raises(RuntimeError, match=r"Expected a floating point or complex tensor as input"):
        ea.linalg.norm(ea.ones(3, dtype=ea.int64))

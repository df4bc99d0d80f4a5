"""Fixed values measured with PyTorch 2.13 (torch.nn.functional on float64 inputs), so that
grid_sample, interpolate and pad are checked against PyTorch itself and not only against the
references written from its definitions (tests never import torch)."""

from __future__ import annotations

from typing import Any

import ember.aten as ea
import numpy as np
import pytest

X = ea.arange(12, dtype=ea.float64).reshape(1, 1, 3, 4) ** 1.5 / 7
GRID = ea.tensor([[[[-1.3, 0.4], [0.9, -1.1]], [[0.05, 1.7], [-0.6, 0.33]]]], dtype=ea.float64)

GRID_SAMPLE = {
    ("bilinear", "zeros", False): [0.0, 0.181865334795, 0.0, 2.338817354679],
    ("bilinear", "zeros", True): [1.088290248508, 0.622413466459, 1.271061280541, 2.138759382644],
    ("bilinear", "border", False): [2.396635742683, 0.742307488958, 4.253380851573, 2.338817354679],
    ("bilinear", "border", True): [1.978709542741, 0.691570518288, 4.236870935138, 2.138759382644],
    ("bilinear", "reflection", False): [2.452288396343, 0.742307488958, 2.958259164059, 2.338817354679],
    ("bilinear", "reflection", True): [2.213817644168, 0.878795767449, 2.59129968702, 2.138759382644],
    ("nearest", "zeros", False): [0.0, 0.0, 0.0, 1.142857142857],
    ("nearest", "zeros", True): [1.142857142857, 0.742307488958, 0.0, 1.5971914125],
    ("nearest", "border", False): [3.232488142567, 0.742307488958, 4.517539514526, 1.142857142857],
    ("nearest", "border", True): [1.142857142857, 0.742307488958, 4.517539514526, 1.5971914125],
    ("nearest", "reflection", False): [3.232488142567, 0.742307488958, 2.099562636671, 1.142857142857],
    ("nearest", "reflection", True): [1.142857142857, 0.742307488958, 2.099562636671, 1.5971914125],
    ("bicubic", "zeros", False): [-0.173326174213, 0.107279091374, -0.353445478348, 3.012255146666],
    ("bicubic", "zeros", True): [1.223525273534, 0.576987325437, 1.287970248124, 2.534239432531],
    ("bicubic", "border", False): [2.503997028965, 0.664558786808, 4.231296411202, 2.4140941918],
    ("bicubic", "border", True): [2.020496669762, 0.5886329354, 4.329443928472, 2.189347678333],
    ("bicubic", "reflection", False): [2.547477745082, 0.465218084212, 3.086169791369, 2.4140941918],
    ("bicubic", "reflection", True): [2.370827162164, 0.753384016131, 2.811281301596, 2.268775984578],
}


@pytest.mark.parametrize("case", list(GRID_SAMPLE), ids=str)
def test_grid_sample_matches_pytorch(case: tuple[str, str, bool]) -> None:
    mode, padding, align_corners = case
    got = ea.nn.grid_sample(X, GRID, mode, padding, align_corners)
    np.testing.assert_allclose(got.numpy().reshape(-1), GRID_SAMPLE[case], rtol=1e-10, atol=1e-10)


def test_grid_sample_gradients_match_pytorch() -> None:
    # the gradients of grid_sample(x, g, "bilinear", "reflection").pow(2).sum() PyTorch
    # computes, from the backward operator itself (aten's tests run without autograd):
    # d/d(out) of sum(out ** 2) is 2 * out
    out = ea.nn.grid_sample(X, GRID, "bilinear", "reflection", False)
    x_grad, g_grad = ea.grid_sampler_2d_backward(2 * out, X, GRID, 0, 2, False, [True, True])
    np.testing.assert_allclose(
        x_grad.numpy().reshape(-1),
        [
            0.0,
            0.0,
            0.0,
            1.484614977916,
            3.419191515125,
            2.206478762361,
            1.952451048279,
            0.0,
            4.269271894843,
            2.053876660962,
            1.597459948592,
            0.0,
        ],
        rtol=1e-10,
        atol=1e-10,
    )
    np.testing.assert_allclose(
        g_grad.numpy().reshape(-1),
        [-5.45905427187, 15.498436014915, -0.0, 0.0, 6.786041445376, -20.898030549049, 5.039149355346, 15.02030931221],
        rtol=1e-10,
        atol=1e-10,
    )


def test_grid_sample_bicubic_gradients_match_pytorch() -> None:
    # grid_sample(x, g, "bicubic", "border", align_corners=True).pow(2).sum(), as above
    out = ea.nn.grid_sample(X, GRID, "bicubic", "border", True)
    x_grad, g_grad = ea.grid_sampler_2d_backward(2 * out, X, GRID, 2, 1, True, [True, True])
    np.testing.assert_allclose(
        x_grad.numpy().reshape(-1),
        [
            -0.669739995423,
            -0.323625027681,
            0.22990685253,
            1.089330566819,
            4.597398477199,
            2.023782811305,
            -0.670545735922,
            -0.019269705326,
            1.550348809129,
            5.298213062547,
            6.105691214597,
            -0.955648905838,
        ],
        rtol=1e-9,
        atol=1e-10,
    )
    np.testing.assert_allclose(
        g_grad.numpy().reshape(-1),
        [
            -0.484871574423,
            8.890968694267,
            0.465299305324,
            1.045960767832,
            6.706240682085,
            -5.036059233878,
            3.609192524868,
            10.338563774901,
        ],
        rtol=1e-9,
        atol=1e-10,
    )


# Non-finite and huge grid values, PyTorch 2.13's CPU results (its CUDA kernel reads nothing
# for a NaN instead; ember gives these on both devices): border and reflection clip NaN and
# -inf to 0 and +inf to the last pixel (reflection turns inf into NaN first); with zeros padding
# the weights come from the coordinate, so bilinear and bicubic give NaN and nearest reads 0;
# bicubic pads its taps, not the coordinate, so it gives NaN under every padding.
X2 = ea.arange(18, dtype=ea.float64).reshape(1, 2, 3, 3) / 3
NAN, INF = float("nan"), float("inf")
NON_FINITE_GRID = ea.tensor([[[[NAN, 0.0], [0.0, INF], [-INF, 1e30], [0.0, 0.0], [0.3, -INF]]]], dtype=ea.float64)
_BORDER = [1.0, 2.333333333333, 2.0, 1.333333333333, 0.483333333333, 4.0, 5.333333333333, 5.0, 4.333333333333]
_BORDER_AC = [1.0, 2.333333333333, 2.0, 1.333333333333, 0.433333333333, 4.0, 5.333333333333, 5.0, 4.333333333333]
_REFLECT = [1.0, 0.333333333333, 0.0, 1.333333333333, 0.483333333333, 4.0, 3.333333333333, 3.0, 4.333333333333]
_REFLECT_AC = [1.0, 0.333333333333, 0.0, 1.333333333333, 0.433333333333, 4.0, 3.333333333333, 3.0, 4.333333333333]
_NEAREST_BORDER = [1.0, 2.333333333333, 2.0, 1.333333333333, 0.333333333333, 4.0, 5.333333333333, 5.0, 4.333333333333]
_NEAREST_REFLECT = [1.0, 0.333333333333, 0.0, 1.333333333333, 0.333333333333, 4.0, 3.333333333333, 3.0, 4.333333333333]
_NAN_BUT_CENTRE = [NAN, NAN, NAN, 1.333333333333, NAN, NAN, NAN, NAN, 4.333333333333, NAN]
NON_FINITE = {
    ("bilinear", "zeros"): (_NAN_BUT_CENTRE, _NAN_BUT_CENTRE),
    ("bilinear", "border"): ([*_BORDER, 3.483333333333], [*_BORDER_AC, 3.433333333333]),
    ("bilinear", "reflection"): ([*_REFLECT, 3.483333333333], [*_REFLECT_AC, 3.433333333333]),
    ("nearest", "zeros"): ([0.0, 0.0, 0.0, 1.333333333333, 0.0, 0.0, 0.0, 0.0, 4.333333333333, 0.0],) * 2,
    ("nearest", "border"): ([*_NEAREST_BORDER, 3.333333333333],) * 2,
    ("nearest", "reflection"): ([*_NEAREST_REFLECT, 3.333333333333],) * 2,
    ("bicubic", "zeros"): (_NAN_BUT_CENTRE, _NAN_BUT_CENTRE),
    ("bicubic", "border"): (_NAN_BUT_CENTRE, _NAN_BUT_CENTRE),
    ("bicubic", "reflection"): (_NAN_BUT_CENTRE, _NAN_BUT_CENTRE),
}


@pytest.mark.parametrize("case", list(NON_FINITE), ids=str)
@pytest.mark.parametrize("align_corners", [False, True])
def test_grid_sample_non_finite_grid_matches_pytorch(case: tuple[str, str], align_corners: bool) -> None:
    mode, padding = case
    got = ea.nn.grid_sample(X2, NON_FINITE_GRID, mode, padding, align_corners).numpy().reshape(-1)
    np.testing.assert_allclose(got, NON_FINITE[case][align_corners], rtol=1e-10, atol=1e-10)  # NaNs where expected
    # the backward reads the same coordinates: no crash, and grad_input gets nothing from a
    # position that read nothing (PyTorch 2.13 crashes on some of these)
    modes = {"bilinear": 0, "nearest": 1, "bicubic": 2}
    paddings = {"zeros": 0, "border": 1, "reflection": 2}
    go = ea.ones(1, 2, 1, 5, dtype=ea.float64)
    x_grad, g_grad = ea.grid_sampler_2d_backward(
        go, X2, NON_FINITE_GRID, modes[mode], paddings[padding], align_corners, [True, True]
    )
    assert tuple(x_grad.shape) == (1, 2, 3, 3) and tuple(g_grad.shape) == (1, 1, 5, 2)
    if padding == "zeros":
        centre_only = ea.grid_sampler_2d_backward(
            go[..., 3:4], X2, NON_FINITE_GRID[:, :, 3:4], modes[mode], 0, align_corners, [True, False]
        )[0]
        np.testing.assert_allclose(x_grad.numpy(), centre_only.numpy(), rtol=1e-12, atol=1e-12)


INTERPOLATE: dict[str, tuple[dict[str, Any], list[float]]] = {
    "nearest scale (1.7, 0.6)": (
        {"scale_factor": (1.7, 0.6)},
        [
            0.0,
            0.142857142857,
            0.0,
            0.142857142857,
            1.142857142857,
            1.5971914125,
            1.142857142857,
            1.5971914125,
            3.232488142567,
            3.857142857143,
        ],
    ),
    "nearest size (5, 7)": (
        {"size": (5, 7)},
        [
            0.0,
            0.0,
            0.142857142857,
            0.142857142857,
            0.404061017821,
            0.404061017821,
            0.742307488958,
            0.0,
            0.0,
            0.142857142857,
            0.142857142857,
            0.404061017821,
            0.404061017821,
            0.742307488958,
            1.142857142857,
            1.142857142857,
            1.5971914125,
            1.5971914125,
            2.099562636671,
            2.099562636671,
            2.645751311065,
            1.142857142857,
            1.142857142857,
            1.5971914125,
            1.5971914125,
            2.099562636671,
            2.099562636671,
            2.645751311065,
            3.232488142567,
            3.232488142567,
            3.857142857143,
            3.857142857143,
            4.517539514526,
            4.517539514526,
            5.211838956273,
        ],
    ),
    "bilinear scale (1.7, 0.6)": (
        {"scale_factor": (1.7, 0.6), "mode": "bilinear"},
        [
            0.047619047619,
            0.404061017821,
            0.524291902714,
            1.052341048558,
            1.257634756705,
            2.049694941999,
            2.49376322722,
            3.45078500959,
            3.440706380759,
            4.517539514526,
        ],
    ),
    "bilinear size (2, 7) align_corners": (
        {"size": (2, 7), "mode": "bilinear", "align_corners": True},
        [
            0.0,
            0.071428571429,
            0.142857142857,
            0.273459080339,
            0.404061017821,
            0.573184253389,
            0.742307488958,
            3.232488142567,
            3.544815499855,
            3.857142857143,
            4.187341185835,
            4.517539514526,
            4.8646892354,
            5.211838956273,
        ],
    ),
}


@pytest.mark.parametrize("name", list(INTERPOLATE))
def test_interpolate_matches_pytorch(name: str) -> None:
    kwargs, expected = INTERPOLATE[name]
    got = ea.nn.interpolate(X, **kwargs)
    np.testing.assert_allclose(got.numpy().reshape(-1), expected, rtol=1e-10, atol=1e-10)


def test_pad_matches_pytorch() -> None:
    reflect = [
        5.211838956273,
        4.517539514526,
        3.857142857143,
        3.232488142567,
        3.857142857143,
        4.517539514526,
        5.211838956273,
        4.517539514526,
        3.857142857143,
        2.645751311065,
        2.099562636671,
        1.5971914125,
        1.142857142857,
        1.5971914125,
        2.099562636671,
        2.645751311065,
        2.099562636671,
        1.5971914125,
        0.742307488958,
        0.404061017821,
        0.142857142857,
        0.0,
        0.142857142857,
        0.404061017821,
        0.742307488958,
        0.404061017821,
        0.142857142857,
        2.645751311065,
        2.099562636671,
        1.5971914125,
        1.142857142857,
        1.5971914125,
        2.099562636671,
        2.645751311065,
        2.099562636671,
        1.5971914125,
        5.211838956273,
        4.517539514526,
        3.857142857143,
        3.232488142567,
        3.857142857143,
        4.517539514526,
        5.211838956273,
        4.517539514526,
        3.857142857143,
        2.645751311065,
        2.099562636671,
        1.5971914125,
        1.142857142857,
        1.5971914125,
        2.099562636671,
        2.645751311065,
        2.099562636671,
        1.5971914125,
    ]
    np.testing.assert_allclose(ea.nn.pad(X, (3, 2, 2, 1), "reflect").numpy().reshape(-1), reflect, rtol=1e-10)
    circular = [
        1.5971914125,
        2.099562636671,
        2.645751311065,
        1.5971914125,
        2.099562636671,
        2.645751311065,
        3.857142857143,
        4.517539514526,
        5.211838956273,
        3.857142857143,
        4.517539514526,
        5.211838956273,
        0.142857142857,
        0.404061017821,
        0.742307488958,
        0.142857142857,
        0.404061017821,
        0.742307488958,
        1.5971914125,
        2.099562636671,
        2.645751311065,
        1.5971914125,
        2.099562636671,
        2.645751311065,
        3.857142857143,
        4.517539514526,
        5.211838956273,
        3.857142857143,
        4.517539514526,
        5.211838956273,
    ]
    np.testing.assert_allclose(ea.nn.pad(X, (-1, 3, 2, 0), "circular").numpy().reshape(-1), circular, rtol=1e-10)

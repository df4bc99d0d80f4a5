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

"""Plain-PyTorch training programs (tests/torch/programs/, each `import torch`) run on
ember without an edit: a subprocess calls ember.torch.install_as_torch() and runs the
program's main(); the figures it returns are checked against known results and the NumPy
references the programs compute."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

PROGRAMS = Path(__file__).parent / "programs"

_RUNNER = """
import json, runpy, sys
import ember.torch
ember.torch.install_as_torch()
ns = runpy.run_path(sys.argv[1], run_name="program")
print("RESULT " + json.dumps(ns["main"]()))
"""


def run_program(name: str) -> dict:
    done = subprocess.run(
        [sys.executable, "-c", _RUNNER, str(PROGRAMS / name)], capture_output=True, text=True, timeout=600
    )
    assert done.returncode == 0, done.stderr[-4000:]
    line = next(x for x in done.stdout.splitlines() if x.startswith("RESULT "))
    return json.loads(line[len("RESULT ") :])


def test_cnn_digits():
    r = run_program("cnn_digits.py")
    assert r["device"] == "cpu"
    assert r["losses"][-1] < 0.5 * r["losses"][0]
    assert r["losses"][-1] < 0.2
    assert r["accuracy"] > 0.95
    assert r["conv_max_err"] < 1e-5


def test_char_lstm_from_a_memmap():
    r = run_program("char_lstm.py")
    assert r["memmap_head"] == r["expected_head"]
    assert r["first_loss"] > 2.5  # ~log(28) at the start
    assert r["last_loss"] < 0.3
    assert r["generated"] == "the quick brown fox"
    assert r["type_as_ok"]


def test_vae_normal_rsample_and_kl():
    r = run_program("vae.py")
    assert r["last_loss"] < 0.5 * r["first_loss"]
    assert r["kl_max_err"] < 1e-5
    assert r["recon_mse"] < 1.0


def test_reinforce_categorical():
    r = run_program("reinforce.py")
    assert r["first_reward"] < 0.5  # a random policy finds the right arm 1 time in 4
    assert r["last_reward"] > 0.9
    assert r["score_max_err"] < 1e-6
    assert r["entropy_last"] < math.log(4) / 2


def test_lbfgs_regression_matches_least_squares():
    r = run_program("lbfgs_regression.py")
    assert r["dtype_is_double"]
    assert r["losses"][-1] < 2e-4
    assert r["coef_max_err"] < 1e-6


def test_data_pipeline():
    r = run_program("data_pipeline.py")
    assert r["seen_sorted"] == sorted(list(range(100)) * 2)
    xs = 0.5 * np.arange(100.0)
    assert r["y_sum"] == pytest.approx(2 * float((xs**2).sum()), rel=1e-6)
    assert r["batch_sizes"] == ([16] * 6 + [4]) * 2
    assert (r["train_len"], r["val_len"]) == (80, 20)
    assert r["default_keys"] == ["index", "x", "y"] and r["default_x_shape"] == [20, 1]
    assert r["drawn_min"] >= 50  # weight 0 is never drawn
    assert r["checkpoint_same"]
    assert r["momentum_keys"] == ["momentum_buffer"]


def test_gcn_on_a_sparse_adjacency():
    r = run_program("gcn.py")
    assert r["layout"].endswith("sparse_coo")
    assert r["uncoalesced_nnz"] == 2 * r["nnz"] and r["nnz"] == r["dense_nnz"]  # coalesce summed the halves
    assert r["adj_err"] < 1e-6
    assert r["forward_err"] < 1e-5 and r["loss_err"] < 1e-5
    assert r["grad_err"] < 1e-5  # weight and bias gradients against the NumPy backward
    assert r["losses"][-1] < 0.05 * r["losses"][0]
    assert r["accuracy"] == 1.0


def test_sparse_embedding_gradients_train_like_dense_ones():
    r = run_program("sparse_embedding.py")
    # two uses of the table: 24*4 + 24*2 looked-up rows, padding dropped, kept uncoalesced
    assert r["sparse_grad"] == [True, 144, False]
    assert r["dense_grad"] == [False, None, None]
    assert r["sgd_err"] < 1e-5  # SGD with momentum: the same parameters after 8 steps
    assert r["losses"][0] == pytest.approx(r["losses"][1], rel=1e-5)
    assert r["sparse_adam_err"] < 1e-5  # SparseAdam against the NumPy lazy Adam
    assert r["padding_row_moved"] == 0.0
    assert r["untouched_rows"] > 0 and r["untouched_moved"] == 0.0
    assert r["dense_grad_error"] == "SparseAdam does not support dense gradients, please consider Adam instead"

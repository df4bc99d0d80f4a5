"""The examples run end to end, at a reduced size (the demo: 3 epochs, a lower target)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _run(args: list[str], tmp_path: Path, timeout: int = 900) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, *args], cwd=tmp_path, capture_output=True, text=True, timeout=timeout)


def test_cnn_digits_demo(tmp_path: Path) -> None:
    pytest.importorskip("sklearn")
    out = tmp_path / "out"
    r = _run(
        [
            str(ROOT / "examples" / "cnn_digits.py"),
            "--epochs",
            "3",
            "--workers",
            "2",
            "--target",
            "0.85",
            "--quiet",
            "--out",
            str(out),
        ],
        tmp_path,
    )
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    lines = r.stdout.splitlines()
    acc_line = next(ln for ln in lines if ln.startswith("test accuracy:"))
    assert "(identical)" in acc_line
    assert float(acc_line.split()[2].rstrip(";")) >= 0.85
    assert (out / "digits_cnn.pt").stat().st_size > 0
    assert (out / "training.png").stat().st_size > 0
    assert sum(ln.startswith("epoch ") for ln in lines) == 3


def test_cnn_digits_fails_loudly_below_target(tmp_path: Path) -> None:
    pytest.importorskip("sklearn")
    r = _run(
        [
            str(ROOT / "examples" / "cnn_digits.py"),
            "--epochs",
            "1",
            "--workers",
            "0",
            "--target",
            "1.01",
            "--quiet",
            "--out",
            str(tmp_path / "out"),
        ],
        tmp_path,
    )
    assert r.returncode == 1
    assert "is below the target 1.01" in r.stderr


def test_mlp_digits_trains(tmp_path: Path) -> None:
    pytest.importorskip("sklearn")
    r = _run([str(ROOT / "examples" / "mlp_digits.py"), "--epochs", "4", "--target", "0.85"], tmp_path)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    epochs = [ln for ln in r.stdout.splitlines() if ln.startswith("epoch ")]
    assert len(epochs) == 4
    losses = [float(ln.split()[3]) for ln in epochs]
    assert losses[-1] < losses[0]
    assert float(epochs[-1].split()[6]) >= 0.85


def test_mlp_digits_fails_loudly_below_target(tmp_path: Path) -> None:
    pytest.importorskip("sklearn")
    r = _run([str(ROOT / "examples" / "mlp_digits.py"), "--epochs", "1", "--target", "1.01"], tmp_path)
    assert r.returncode == 1
    assert "is below the target 1.01" in r.stderr


def test_char_transformer_learns_and_samples(tmp_path: Path) -> None:
    r = _run(
        [str(ROOT / "examples" / "char_transformer.py"), "--steps", "20", "--d-model", "64", "--sample-chars", "50"],
        tmp_path,
    )
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    out = r.stdout
    m = re.search(r"loss: ([\d.]+) -> ([\d.]+)", out)
    assert m is not None, out
    assert float(m.group(2)) < float(m.group(1))
    sample = out.split("--- sample ---\n", 1)[1]
    assert sample.startswith("MENENIUS:\n") and len(sample.rstrip("\n")) >= 50


def test_port_from_pytorch_ember_block_runs(tmp_path: Path) -> None:
    doc = (ROOT / "examples" / "port_from_pytorch.md").read_text()
    (block,) = re.findall(r"```python\n(.*?)```", doc, flags=re.S)
    r = _run(["-c", block], tmp_path)
    assert r.returncode == 0, r.stderr[-3000:]
    assert (tmp_path / "model.pt").stat().st_size > 0

"""ember.aten.safetensors <-> the `safetensors` package (nox session `interop`)."""

from __future__ import annotations

import pytest

torch = pytest.importorskip("torch")
safetensors_torch = pytest.importorskip("safetensors.torch")

import ember.aten as ea  # noqa: E402
from ember.aten import safetensors as st  # noqa: E402

PAIRS = [
    (ea.bool, torch.bool),
    (ea.uint8, torch.uint8),
    (ea.int8, torch.int8),
    (ea.int16, torch.int16),
    (ea.int32, torch.int32),
    (ea.int64, torch.int64),
    (ea.float16, torch.float16),
    (ea.bfloat16, torch.bfloat16),
    (ea.float32, torch.float32),
    (ea.float64, torch.float64),
]


def test_both_directions_every_dtype(tmp_path):
    mine = {}
    theirs = {}
    for edt, tdt in PAIRS:
        name = str(tdt).removeprefix("torch.")
        mine[name] = (
            (ea.arange(6).reshape(2, 3) % 2 == 0) if edt == ea.bool else (ea.arange(6).reshape(2, 3) - 2).to(edt)
        )
        theirs[name] = (
            (torch.arange(6).reshape(2, 3) % 2 == 0)
            if tdt == torch.bool
            else (torch.arange(6).reshape(2, 3) - 2).to(tdt)
        )
    st.save_file(mine, tmp_path / "e.safetensors", {"by": "ember"})
    safetensors_torch.save_file(theirs, tmp_path / "t.safetensors", {"by": "ember"})
    assert (tmp_path / "e.safetensors").read_bytes() == (tmp_path / "t.safetensors").read_bytes()
    loaded = safetensors_torch.load_file(tmp_path / "e.safetensors")
    back = st.load_file(tmp_path / "t.safetensors")
    for k in mine:
        assert loaded[k].float().tolist() == theirs[k].float().tolist()
        assert back[k].float().tolist() == mine[k].float().tolist()

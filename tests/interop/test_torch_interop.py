"""ember <-> PyTorch: checkpoints saved by each load in the other, DLPack both ways.

Run by the optional nox session `interop` (installs torch==2.13.0 from this machine's
wheel); the per-layer test sessions never import torch.
"""

from __future__ import annotations

import collections
import io

import numpy as np
import pytest

torch = pytest.importorskip("torch")

import ember.aten as ea  # noqa: E402

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


def as_list(t):
    if isinstance(t, torch.Tensor):
        t = t.detach()
        return (t.float() if t.dtype == torch.bfloat16 else t).tolist()
    t = t.detach()
    return (t.float() if t.dtype == ea.bfloat16 else t).tolist()


def ember_sample(dtype):
    t = ea.arange(24).reshape(2, 3, 4)
    return (t % 3 == 0) if dtype == ea.bool else (t.to(dtype) - (0 if dtype in (ea.bool, ea.uint8) else 5))


@pytest.mark.parametrize("edt, tdt", PAIRS, ids=lambda d: str(d))
def test_ember_save_torch_load(edt, tdt):
    base = ember_sample(edt)
    sd = collections.OrderedDict(
        base=base, t=base.transpose(0, 2), s=base[:, 1:, ::2], e=base[:1, :1].expand(3, 2, 4)[0], z=base[:0]
    )
    sd._metadata = {"": {"version": 1}}
    buf = io.BytesIO()
    ea.save(
        {"sd": sd, "meta": {"dtype": edt, "device": ea.device("cpu"), "size": ea.Size([1, 2])}, "n": [1, (2.5, "x")]},
        buf,
    )
    buf.seek(0)
    out = torch.load(buf, weights_only=True)
    tsd = out["sd"]
    assert tsd._metadata == {"": {"version": 1}}
    for k, v in sd.items():
        assert tsd[k].dtype == tdt
        assert tuple(tsd[k].shape) == tuple(v.shape) and tsd[k].stride() == v.stride()
        assert tsd[k].storage_offset() == v.storage_offset()
        assert as_list(tsd[k]) == as_list(v)
    assert tsd["t"].untyped_storage().data_ptr() == tsd["base"].untyped_storage().data_ptr()
    assert out["meta"] == {"dtype": tdt, "device": torch.device("cpu"), "size": torch.Size([1, 2])}
    assert out["n"] == [1, (2.5, "x")]


@pytest.mark.parametrize("edt, tdt", PAIRS, ids=lambda d: str(d))
def test_torch_save_ember_load(edt, tdt):
    base = torch.arange(24).reshape(2, 3, 4)
    base = (base % 3 == 0) if tdt == torch.bool else base.to(tdt)
    obj = {"base": base, "t": base.transpose(0, 1), "s": base[1, :, 1::2], "rg": torch.ones(2, requires_grad=True)}
    buf = io.BytesIO()
    torch.save(obj, buf)
    buf.seek(0)
    out = ea.load(buf)
    for k, v in obj.items():
        assert tuple(out[k].shape) == tuple(v.shape) and out[k].stride() == v.stride()
        assert as_list(out[k]) == as_list(v)
    assert out["t"].untyped_storage().data_ptr == out["base"].untyped_storage().data_ptr
    assert out["rg"].requires_grad


def test_model_and_optimizer_state_dicts_round_trip():
    torch.manual_seed(0)
    model = torch.nn.Sequential(torch.nn.Linear(4, 3), torch.nn.Linear(3, 2))
    opt = torch.optim.AdamW(model.parameters())
    model(torch.randn(2, 4)).sum().backward()
    opt.step()
    for obj in (model.state_dict(), opt.state_dict()):
        buf = io.BytesIO()
        torch.save(obj, buf)
        buf.seek(0)
        mine = ea.load(buf)
        again = io.BytesIO()
        ea.save(mine, again)
        again.seek(0)
        back = torch.load(again, weights_only=True)
        assert repr(back) == repr(obj)


def test_dlpack_torch_to_ember_and_back():
    t = torch.arange(12, dtype=torch.float32).reshape(3, 4)[:, 1:]
    e = ea.from_dlpack(t)
    assert e.data_ptr() == t.data_ptr() and e.stride() == t.stride()
    e[0, 0] = -1.0
    assert t[0, 0].item() == -1.0
    back = torch.from_dlpack(e)
    assert back.data_ptr() == t.data_ptr()
    back[2, 2] = 42.0
    assert e[2, 2].item() == 42.0
    legacy = torch.utils.dlpack.from_dlpack(e.__dlpack__())
    assert legacy.data_ptr() == t.data_ptr()
    bf = ea.tensor([1.5, 2.5], dtype=ea.bfloat16)
    tb = torch.from_dlpack(bf)
    assert tb.dtype == torch.bfloat16 and tb.tolist() == [1.5, 2.5]
    b = torch.tensor([True, False])
    assert ea.from_dlpack(b).tolist() == [True, False]


def test_numpy_still_agrees():
    e = ea.arange(6.0)
    a = np.from_dlpack(torch.from_dlpack(e))
    a[0] = 7.0
    assert e[0].item() == 7.0


# ---- the loader's checks accept every file PyTorch writes (issue 25) ------------------------------
@pytest.mark.parametrize("mmap", [False, True], ids=["read", "mmap"])
def test_torch_files_pass_the_integrity_checks(tmp_path, mmap):
    # CRCs (checked under mmap too), unique names, non-overlapping records, the prefix rule
    sd = collections.OrderedDict(
        w=torch.randn(3, 4), b=torch.tensor([True, False, True]), h=torch.arange(6, dtype=torch.float16)[::2]
    )
    sd["nested"] = {"t": (torch.ones(2, dtype=torch.int64), [torch.zeros(1)])}
    path = tmp_path / "torch_model.pt"
    torch.save(sd, path)
    out = ea.load(path, mmap=mmap)
    assert as_list(out["w"]) == as_list(sd["w"]) and out["b"].tolist() == [True, False, True]
    assert as_list(out["h"]) == as_list(sd["h"]) and out["nested"]["t"][0].tolist() == [1, 1]


def test_corrupt_storage_torch_loads_silently_ember_refuses(tmp_path):
    # A documented difference: PyTorch's reader skips the CRC; ember checks it, with or without mmap.
    import struct
    import zipfile

    buf = io.BytesIO()
    torch.save({"w": torch.arange(64.0)}, buf)
    raw = bytearray(buf.getvalue())
    info = next(i for i in zipfile.ZipFile(io.BytesIO(bytes(raw))).infolist() if i.filename.endswith("/data/0"))
    n, m = struct.unpack("<HH", raw[info.header_offset + 26 : info.header_offset + 30])
    raw[info.header_offset + 30 + n + m + 4] ^= 0x40
    assert torch.load(io.BytesIO(bytes(raw)))["w"][1].item() != 1.0  # wrong value, no error
    path = tmp_path / "bad.pt"
    path.write_bytes(raw)
    for kw in ({}, {"mmap": True}):
        with pytest.raises(RuntimeError, match="invalid crc"):
            ea.load(path, **kw)

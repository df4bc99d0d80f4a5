"""Fuzzing ember.aten.load: mutated checkpoints never crash the process.

Hypothesis mutates valid checkpoints two ways: raw bytes of the archive (flips,
truncations, insertions, overwrites) and the data.pkl record alone, re-zipped so that
the unpickler itself sees the mutation. load must return or raise one of the documented
errors; whatever it returns must be readable to the last element (a tensor pointing
outside its storage would read out of bounds here).
"""

from __future__ import annotations

import collections
import io
import pickle
import zipfile

import ember.aten as ea
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

pytestmark = pytest.mark.filterwarnings("ignore:Detected pickle protocol")

ALLOWED_ERRORS = (RuntimeError, ValueError, pickle.UnpicklingError)


def _seed_checkpoints() -> list[bytes]:
    out = []
    base = ea.arange(12.0).reshape(3, 4)
    sd = collections.OrderedDict([("w", base), ("t", base.t()), ("b", ea.ones(3, dtype=ea.int16))])
    sd._metadata = {"": {"version": 1}}
    for obj in (
        sd,
        {"x": ea.tensor([True, False]), "n": [1, 2.5, "s", None, (3, 4)], "d": ea.float16, "big": 2**70},
        [ea.zeros(0), ea.tensor(3, dtype=ea.int64), ea.ones(2, 2, dtype=ea.bfloat16)[:, 1]],
    ):
        buf = io.BytesIO()
        ea.save(obj, buf)
        out.append(buf.getvalue())
    return out


SEEDS = _seed_checkpoints()


def touch_everything(obj, depth=0):
    if depth > 50:
        return
    if isinstance(obj, ea.Tensor):
        obj.tolist()
        obj.sum()
    elif isinstance(obj, dict):
        for k, v in list(obj.items()):
            touch_everything(k, depth + 1)
            touch_everything(v, depth + 1)
    elif isinstance(obj, (list, tuple, set)):
        for v in list(obj):
            touch_everything(v, depth + 1)


def try_load(raw: bytes) -> None:
    try:
        obj = ea.load(io.BytesIO(raw))
    except ALLOWED_ERRORS:
        return
    touch_everything(obj)


mutation = st.one_of(
    st.tuples(st.just("flip"), st.integers(0, 10**6), st.integers(1, 255)),
    st.tuples(st.just("truncate"), st.integers(0, 10**6), st.just(0)),
    st.tuples(st.just("insert"), st.integers(0, 10**6), st.integers(0, 255)),
    st.tuples(st.just("delete"), st.integers(0, 10**6), st.integers(1, 16)),
    st.tuples(st.just("overwrite"), st.integers(0, 10**6), st.integers(0, 2**32 - 1)),
)


def mutate(raw: bytes, ops) -> bytes:
    b = bytearray(raw)
    for kind, pos, val in ops:
        if not b:
            break
        i = pos % len(b)
        if kind == "flip":
            b[i] ^= val
        elif kind == "truncate":
            del b[i:]
        elif kind == "insert":
            b.insert(i, val)
        elif kind == "delete":
            del b[i : i + val]
        else:
            b[i : i + 4] = val.to_bytes(4, "little")
    return bytes(b)


def rezip_with(raw: bytes, data_pkl: bytes) -> bytes:
    src = zipfile.ZipFile(io.BytesIO(raw))
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_STORED) as z:
        for info in src.infolist():
            z.writestr(info.filename, data_pkl if info.filename.endswith("/data.pkl") else src.read(info.filename))
    return out.getvalue()


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, len(SEEDS) - 1), ops=st.lists(mutation, min_size=1, max_size=6))
def test_mutated_archive_never_crashes(seed, ops):
    try_load(mutate(SEEDS[seed], ops))


@settings(max_examples=800, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, len(SEEDS) - 1), ops=st.lists(mutation, min_size=1, max_size=4))
def test_mutated_pickle_never_crashes(seed, ops):
    raw = SEEDS[seed]
    pkl = zipfile.ZipFile(io.BytesIO(raw)).read(zipfile.ZipFile(io.BytesIO(raw)).namelist()[0])
    try_load(rezip_with(raw, mutate(pkl, ops)))


@settings(max_examples=300, deadline=None)
@given(data=st.binary(max_size=300))
def test_random_pickle_bytes_never_crash(data):
    raw = rezip_with(SEEDS[0], b"\x80\x02" + data)
    try_load(raw)

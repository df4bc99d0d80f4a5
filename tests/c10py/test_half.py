"""Half (IEEE binary16) and BFloat16 conversions of c10, bit for bit.

float32 -> float16 is checked against NumPy's astype(np.float16); float32 -> bfloat16
against the reference below, written in NumPy integer arithmetic. NaN payloads are the
one documented difference from NumPy: c10 always returns a quiet NaN (sign kept),
NumPy keeps a signalling NaN signalling.
"""

from __future__ import annotations

import numpy as np
import pytest
from ember.c10py import _C

ALL_16BIT = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)


def bits32(values: list[int] | np.ndarray) -> np.ndarray:
    """float32 array with these bit patterns."""
    return np.asarray(values, dtype=np.uint64).astype(np.uint32).view(np.float32)


def half_from_float(f: np.ndarray) -> np.ndarray:
    return np.frombuffer(_C._test_half_from_float(np.ascontiguousarray(f, np.float32)), np.uint16)


def half_to_float(h: np.ndarray) -> np.ndarray:
    return np.frombuffer(_C._test_half_to_float(np.ascontiguousarray(h, np.uint16)), np.float32)


def bf16_from_float(f: np.ndarray) -> np.ndarray:
    return np.frombuffer(_C._test_bfloat16_from_float(np.ascontiguousarray(f, np.float32)), np.uint16)


def bf16_to_float(b: np.ndarray) -> np.ndarray:
    return np.frombuffer(_C._test_bfloat16_to_float(np.ascontiguousarray(b, np.uint16)), np.float32)


def bf16_reference(f: np.ndarray) -> np.ndarray:
    """float32 -> bfloat16 bits: round to nearest even on the top 16 bits; NaN -> 0x7FC0."""
    u = np.ascontiguousarray(f, np.float32).view(np.uint32).astype(np.uint64)
    lsb = (u >> 16) & 1
    out = ((u + 0x7FFF + lsb) >> 16).astype(np.uint16)
    out[(u & 0x7FFFFFFF) > 0x7F800000] = 0x7FC0
    return out


def is_nan16(h: np.ndarray) -> np.ndarray:
    return ((h & 0x7C00) == 0x7C00) & ((h & 0x03FF) != 0)


def assert_half_matches_numpy(f: np.ndarray) -> None:
    f = np.ascontiguousarray(f, np.float32)
    ours = half_from_float(f)
    nan = np.isnan(f)
    with np.errstate(over="ignore", invalid="ignore"):
        ref = f.astype(np.float16).view(np.uint16)
    bad = np.flatnonzero((ours != ref) & ~nan)
    assert bad.size == 0, [(hex(int(f.view(np.uint32)[i])), hex(int(ours[i])), hex(int(ref[i]))) for i in bad[:10]]
    # NaN: a quiet NaN with the input's sign
    fb = f.view(np.uint32)
    assert np.all(is_nan16(ours[nan]))
    assert np.all((ours[nan] & 0x0200) != 0)
    assert np.array_equal(ours[nan] >> 15, (fb[nan] >> 31).astype(np.uint16))


# ---- float16 --------------------------------------------------------------------


def test_all_half_bit_patterns_to_float_match_numpy() -> None:
    ours = half_to_float(ALL_16BIT).view(np.uint32)
    ref = ALL_16BIT.view(np.float16).astype(np.float32).view(np.uint32)
    nan = is_nan16(ALL_16BIT)
    assert nan.sum() == 2 * 1022 + 2 * 1 - 2 + 2  # 2046 NaN patterns (both signs)
    np.testing.assert_array_equal(ours[~nan], ref[~nan])
    # NaN: quiet, sign and the 10 payload bits kept at the top of the float mantissa
    assert np.all((ours[nan] & 0x7FC00000) == 0x7FC00000)
    np.testing.assert_array_equal(ours[nan] >> 31, (ALL_16BIT[nan] >> 15).astype(np.uint32))
    np.testing.assert_array_equal((ours[nan] >> 13) & 0x1FF, (ALL_16BIT[nan] & 0x1FF).astype(np.uint32))


def test_all_half_bit_patterns_round_trip_through_float() -> None:
    back = half_from_float(half_to_float(ALL_16BIT))
    nan = is_nan16(ALL_16BIT)
    np.testing.assert_array_equal(back[~nan], ALL_16BIT[~nan])
    assert np.all(is_nan16(back[nan]))
    # quiet NaNs come back exactly; signalling ones come back quieted
    quiet = nan & ((ALL_16BIT & 0x0200) != 0)
    np.testing.assert_array_equal(back[quiet], ALL_16BIT[quiet])
    np.testing.assert_array_equal(back[nan], ALL_16BIT[nan] | 0x0200)


def test_random_floats_to_half_match_numpy() -> None:
    rng = np.random.default_rng(0)
    # random bit patterns cover every exponent (including NaN and inf) ...
    assert_half_matches_numpy(
        rng.integers(0, 1 << 32, size=1 << 20, dtype=np.uint64).astype(np.uint32).view(np.float32)
    )
    # ... and values in half's range exercise the rounding of normal numbers
    assert_half_matches_numpy(rng.standard_normal(1 << 18).astype(np.float32) * np.float32(100.0))
    assert_half_matches_numpy(rng.uniform(-70000, 70000, 1 << 18).astype(np.float32))


def test_float_to_half_ties_and_neighbours() -> None:
    # Midpoints between consecutive finite halves (exact in float32) round to even;
    # one float32 ulp either side rounds to the nearer half.
    finite = ALL_16BIT[(ALL_16BIT & 0x7C00) != 0x7C00]
    lo = finite[(finite & 0x7FFF) != 0x7BFF]  # not the largest finite (its neighbour is inf)
    a = lo.view(np.float16).astype(np.float64)
    b = (lo + 1).view(np.float16).astype(np.float64)
    mid = ((a + b) / 2).astype(np.float32)
    assert np.all(mid.astype(np.float64) == (a + b) / 2)  # exact
    below = np.nextafter(mid, np.float32(0))
    above = np.nextafter(mid, np.float32(np.inf) * np.sign(mid))
    for f in (mid, below, above):
        assert_half_matches_numpy(f)
    ours = half_from_float(mid)
    expect = np.where(lo % 2 == 0, lo, lo + 1).astype(np.uint16)
    np.testing.assert_array_equal(ours, expect)


def test_float_to_half_subnormals_and_underflow() -> None:
    # Every 41st float32 pattern from below 2^-26 to just above half's smallest normal 2^-14.
    start, stop = 0x32000000, 0x38900000
    pos = bits32(np.arange(start, stop, 41, dtype=np.uint64))
    assert_half_matches_numpy(pos)
    assert_half_matches_numpy(-pos)
    assert_half_matches_numpy(bits32(np.arange(0, 0x00100000, 97, dtype=np.uint64)))  # float32 subnormals
    tiny = 2.0**-24  # smallest half subnormal
    cases = [  # (value, half bits); a list, not a dict: 0.0 == -0.0
        (0.0, 0x0000),
        (-0.0, 0x8000),
        (tiny, 0x0001),
        (tiny / 2, 0x0000),  # tie -> even (zero)
        (tiny * 1.5, 0x0002),  # tie -> even
        (tiny * 2.5, 0x0002),
        (-tiny / 2, 0x8000),
        (2.0**-14, 0x0400),  # smallest normal
        (2.0**-14 - tiny / 2, 0x0400),  # tie between 0x03ff and 0x0400 -> even
        (1.0e-10, 0x0000),
        (-1.0e-10, 0x8000),
    ]
    f = np.array([v for v, _ in cases], np.float32)
    np.testing.assert_array_equal(half_from_float(f), np.array([h for _, h in cases], np.uint16))
    assert_half_matches_numpy(f)


def test_float_to_half_overflow_and_infinity() -> None:
    cases = [
        (65504.0, 0x7BFF),  # largest finite half
        (65519.0, 0x7BFF),
        (65519.996, 0x7BFF),  # just below the tie
        (65520.0, 0x7C00),  # tie with "65536" -> even -> inf
        (65536.0, 0x7C00),
        (1.0e6, 0x7C00),
        (3.4028234663852886e38, 0x7C00),  # float32 max
        (float("inf"), 0x7C00),
        (-65504.0, 0xFBFF),
        (-65520.0, 0xFC00),
        (float("-inf"), 0xFC00),
        (1.0, 0x3C00),
        (-2.0, 0xC000),
        (0.1, 0x2E66),
        (1.0 / 3.0, 0x3555),
    ]
    f = np.array([v for v, _ in cases], np.float32)
    np.testing.assert_array_equal(half_from_float(f), np.array([h for _, h in cases], np.uint16))
    assert_half_matches_numpy(f)


def test_float_to_half_nan() -> None:
    patterns = [0x7FC00000, 0xFFC00000, 0x7F800001, 0xFF800001, 0x7FBFFFFF, 0x7FFFFFFF, 0x7F802000, 0x7FC02000]
    f = bits32(patterns)
    ours = half_from_float(f)
    assert np.all(is_nan16(ours))
    # the canonical quiet NaN matches NumPy exactly
    assert ours[0] == 0x7E00 == np.float32("nan").astype(np.float16).view(np.uint16)
    assert ours[1] == 0xFE00
    assert_half_matches_numpy(f)


# ---- bfloat16 -------------------------------------------------------------------


def test_bfloat16_reference_self_check() -> None:
    # the reference itself, on hand-computed cases
    f = bits32([0x3F800000, 0x3F808000, 0x3F818000, 0x3F808001, 0x7FC00001])
    np.testing.assert_array_equal(bf16_reference(f), [0x3F80, 0x3F80, 0x3F82, 0x3F81, 0x7FC0])


def test_all_bfloat16_bit_patterns_to_float() -> None:
    # bfloat16 -> float32 is a shift: exact for every pattern, NaN payloads included
    ours = bf16_to_float(ALL_16BIT).view(np.uint32)
    np.testing.assert_array_equal(ours, ALL_16BIT.astype(np.uint32) << 16)


def test_all_bfloat16_bit_patterns_round_trip() -> None:
    back = bf16_from_float(bf16_to_float(ALL_16BIT))
    nan = ((ALL_16BIT & 0x7F80) == 0x7F80) & ((ALL_16BIT & 0x007F) != 0)
    np.testing.assert_array_equal(back[~nan], ALL_16BIT[~nan])
    assert np.all(back[nan] == 0x7FC0)


def test_random_floats_to_bfloat16_match_reference() -> None:
    rng = np.random.default_rng(1)
    f = rng.integers(0, 1 << 32, size=1 << 20, dtype=np.uint64).astype(np.uint32).view(np.float32)
    np.testing.assert_array_equal(bf16_from_float(f), bf16_reference(f))
    g = (rng.standard_normal(1 << 18) * 1e3).astype(np.float32)
    np.testing.assert_array_equal(bf16_from_float(g), bf16_reference(g))


def test_float_to_bfloat16_ties() -> None:
    # the low 16 bits exactly 0x8000 (a tie), for every upper half
    upper = ALL_16BIT.astype(np.uint64) << 16
    for low in (0x7FFF, 0x8000, 0x8001):
        f = bits32(upper | low)
        np.testing.assert_array_equal(bf16_from_float(f), bf16_reference(f))
    ties = bf16_from_float(bits32(upper | 0x8000))
    finite = (ALL_16BIT & 0x7F80) != 0x7F80
    odd = (ALL_16BIT & 1) == 1
    np.testing.assert_array_equal(ties[finite & ~odd], ALL_16BIT[finite & ~odd])  # even: stays
    np.testing.assert_array_equal(ties[finite & odd], ALL_16BIT[finite & odd] + 1)  # odd: up


@pytest.mark.parametrize(
    ("bits", "expected"),
    [
        (0x00000000, 0x0000),  # +0
        (0x80000000, 0x8000),  # -0
        (0x3F800000, 0x3F80),  # 1.0
        (0xC0000000, 0xC000),  # -2.0
        (0x7F800000, 0x7F80),  # +inf
        (0xFF800000, 0xFF80),  # -inf
        (0x7F7F0000, 0x7F7F),  # largest finite bfloat16
        (0x7F7F7FFF, 0x7F7F),  # below the tie: stays finite
        (0x7F7F8000, 0x7F80),  # tie, odd -> rounds to inf
        (0x7F7FFFFF, 0x7F80),  # float32 max -> inf
        (0xFF7FFFFF, 0xFF80),  # -float32 max -> -inf
        (0x00008000, 0x0000),  # subnormal tie, even -> down
        (0x00018000, 0x0002),  # subnormal tie, odd -> up
        (0x00000001, 0x0000),  # smallest float32 subnormal
        (0x007FFFFF, 0x0080),  # largest subnormal rounds up to the smallest normal
        (0x7FC00000, 0x7FC0),  # quiet NaN
        (0xFFC00000, 0x7FC0),  # negative NaN -> canonical
        (0x7F800001, 0x7FC0),  # signalling NaN -> canonical
        (0x7FFFFFFF, 0x7FC0),  # would carry into the sign bit without the NaN check
        (0xFFFFFFFF, 0x7FC0),
    ],
)
def test_float_to_bfloat16_special_values(bits: int, expected: int) -> None:
    f = bits32([bits])
    assert int(bf16_from_float(f)[0]) == expected
    assert int(bf16_reference(f)[0]) == expected


def test_conversion_hooks_reject_wrong_element_size() -> None:
    with pytest.raises(TypeError, match="4-byte elements"):
        _C._test_half_from_float(np.zeros(3, np.float64))
    with pytest.raises(TypeError, match="2-byte elements"):
        _C._test_half_to_float(np.zeros(3, np.float32))
    with pytest.raises(ValueError, match="C-contiguous"):
        _C._test_bfloat16_from_float(np.zeros(6, np.float32)[::2])
    assert _C._test_half_from_float(np.zeros(0, np.float32)) == b""

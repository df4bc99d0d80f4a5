"""DispatchKey / DispatchKeySet: priority, set algebra, redispatch masks, alias keys."""

from __future__ import annotations

import itertools

import pytest
from ember.c10py import _C

K = _C.DispatchKey
KS = _C.DispatchKeySet

# Every runtime key, highest priority first.
PRIORITY = [
    K.Tracer,
    K.Profiler,
    K.Python,
    K.AutocastCUDA,
    K.AutocastCPU,
    K.AutogradCUDA,
    K.AutogradCPU,
    K.AutogradOther,
    K.CUDA,
    K.CPU,
]
ALIASES = [K.Autograd, K.CompositeImplicitAutograd, K.CompositeExplicitAutograd]


def test_key_names_round_trip() -> None:
    for k in [*PRIORITY, *ALIASES, K.Undefined, K.Dense, K.AutogradFunctionality]:
        assert getattr(K, k.name) is k
        assert str(k.name) in repr(k)


def test_key_properties() -> None:
    for k in ALIASES:
        assert k.is_alias
    for k in PRIORITY:
        assert not k.is_alias
    assert K.Dense.is_per_backend_functionality and K.AutogradFunctionality.is_per_backend_functionality
    assert not K.Python.is_per_backend_functionality
    for k in (K.CPU, K.CUDA, K.AutogradCPU, K.AutogradCUDA):
        assert k.is_runtime_per_backend
    assert not K.Python.is_runtime_per_backend
    assert K.CPU.functionality == K.Dense
    assert K.AutogradCUDA.functionality == K.AutogradFunctionality
    assert K.Python.functionality == K.Python


# Pairs (higher, lower) in PRIORITY order. A pair of per-backend keys of different
# backends is left out: the backend bits are shared by every per-backend functionality
# (as in PyTorch), so {AutogradCPU, CUDA} also holds AutogradCUDA and that one wins.
_PER_BACKEND = {K.AutogradCPU: "cpu", K.CPU: "cpu", K.AutogradCUDA: "cuda", K.CUDA: "cuda"}
PAIRS = [
    (a, b)
    for a, b in itertools.combinations(PRIORITY, 2)
    if not (a in _PER_BACKEND and b in _PER_BACKEND and _PER_BACKEND[a] != _PER_BACKEND[b])
    or (a.functionality == b.functionality)
]


def test_priority_pairs_cover_the_chain() -> None:
    assert (K.AutogradCUDA, K.AutogradCPU) in PAIRS and (K.CUDA, K.CPU) in PAIRS
    assert (K.AutogradCPU, K.CUDA) not in PAIRS
    assert len(PAIRS) == 45 - 2


@pytest.mark.parametrize(("high", "low"), PAIRS, ids=[f"{a.name}>{b.name}" for a, b in PAIRS])
def test_priority_order(high: _C.DispatchKey, low: _C.DispatchKey) -> None:
    assert KS([low, high]).highest_priority_key() == high
    assert KS([high, low]).highest_priority_key() == high
    assert list(KS([low, high])) == [high, low]


def test_iteration_order_of_the_full_set() -> None:
    full = KS(PRIORITY)
    assert list(full) == PRIORITY
    assert full.keys() == PRIORITY
    assert len(full) == len(PRIORITY)
    assert repr(full) == "DispatchKeySet(" + ", ".join(k.name for k in PRIORITY) + ")"


@pytest.mark.parametrize(
    ("keys", "highest"),
    [
        ([], K.Undefined),
        ([K.CPU], K.CPU),
        ([K.CUDA], K.CUDA),
        ([K.CPU, K.CUDA], K.CUDA),
        ([K.AutogradCPU, K.CPU], K.AutogradCPU),
        ([K.AutogradCUDA, K.CUDA], K.AutogradCUDA),
        ([K.AutogradOther, K.CPU], K.AutogradOther),
        ([K.AutogradCPU, K.AutogradOther, K.CPU], K.AutogradCPU),
        ([K.Python, K.AutogradCPU, K.CPU], K.Python),
        ([K.Profiler, K.Python, K.CPU], K.Profiler),
        ([K.Tracer, K.Profiler, K.CUDA], K.Tracer),
        ([K.Python], K.Python),
        ([K.Dense], K.Dense),  # a functionality without a backend bit stays itself
        # backend bits are shared by all per-backend functionalities (as PyTorch):
        # autograd of a CPU tensor meeting a CUDA tensor picks the CUDA autograd kernel
        ([K.AutogradCPU, K.CPU, K.CUDA], K.AutogradCUDA),
    ],
)
def test_highest_priority_key(keys: list, highest: _C.DispatchKey) -> None:
    assert KS(keys).highest_priority_key() == highest


@pytest.mark.parametrize(
    ("keys", "iterated"),
    [
        ([], []),
        ([K.CPU, K.AutogradCPU], [K.AutogradCPU, K.CPU]),
        ([K.CPU, K.Python, K.Tracer], [K.Tracer, K.Python, K.CPU]),
        ([K.CUDA, K.CPU], [K.CUDA, K.CPU]),
        ([K.AutogradCPU, K.CUDA], [K.AutogradCUDA, K.AutogradCPU, K.CUDA, K.CPU]),
        ([K.AutogradOther, K.CPU], [K.AutogradOther, K.CPU]),
    ],
)
def test_iteration_order(keys: list, iterated: list) -> None:
    assert list(KS(keys)) == iterated
    assert len(KS(keys)) == len(iterated)
    assert bool(KS(keys)) == bool(keys)


def test_set_algebra() -> None:
    cpu = KS(K.CPU)
    ag = KS(K.AutogradCPU)
    both = cpu | ag
    assert both == KS([K.CPU, K.AutogradCPU])
    assert K.CPU in both and K.AutogradCPU in both
    assert both.has(K.CPU)
    assert (both & cpu) == cpu
    assert list(both - KS(K.Python)) == list(both)
    assert (KS([K.Python, K.CPU]) - KS(K.Python)) == cpu
    assert both.add(K.Python) == KS([K.Python, K.AutogradCPU, K.CPU])
    assert both.add(K.Python).remove(K.Python) == both
    assert KS() == KS([]) and not KS()
    assert KS(K.CPU) != KS(K.CUDA)
    assert KS(K.CPU) != None  # noqa: E711
    assert not (KS(K.CPU) == "CPU")
    assert hash(KS([K.CPU, K.AutogradCPU])) == hash(both)
    assert len({KS(K.CPU), KS([K.CPU]), cpu}) == 1


def test_remove_keeps_backend_bits() -> None:
    # Removing AutogradCPU removes only the autograd functionality: the CPU backend bit
    # is still needed by the Dense key of CPU (as in PyTorch).
    s = KS([K.AutogradCPU, K.CPU]).remove(K.AutogradCPU)
    assert s == KS(K.CPU)
    assert list(s) == [K.CPU]
    assert KS([K.AutogradCPU, K.CPU]).remove(K.CPU) == KS(K.AutogradCPU)
    assert KS(K.CPU).remove(K.Python) == KS(K.CPU)


def test_raw_representation() -> None:
    s = KS([K.AutogradCPU, K.CPU])
    assert KS.from_raw(s.raw) == s
    assert KS(K.CPU).raw & KS(K.CUDA).raw != 0  # both have the Dense functionality bit
    assert KS().raw == 0


@pytest.mark.parametrize(
    ("key", "keyset", "after"),
    [
        (K.AutogradCPU, [K.AutogradCPU, K.CPU], [K.CPU]),
        (K.AutogradCUDA, [K.AutogradCUDA, K.CUDA], [K.CUDA]),
        (K.AutogradCPU, [K.AutogradCPU, K.AutogradOther, K.CPU], [K.AutogradOther, K.CPU]),
        (K.Python, [K.Python, K.AutogradCPU, K.CPU], [K.AutogradCPU, K.CPU]),
        (K.Tracer, [K.Tracer, K.Profiler, K.Python, K.CPU], [K.Profiler, K.Python, K.CPU]),
        (K.CPU, [K.AutogradCPU, K.CPU], []),
        (K.Profiler, [K.Tracer, K.Profiler, K.CPU], [K.CPU]),
    ],
)
def test_keys_after_masks_for_redispatch(key: _C.DispatchKey, keyset: list, after: list) -> None:
    masked = KS(keyset) & _C.keys_after(key)
    assert list(masked) == after


def test_keys_after_keeps_every_backend_bit() -> None:
    mask = _C.keys_after(K.AutogradCPU)
    assert K.CPU in mask and K.CUDA in mask
    assert K.AutogradCPU not in mask and K.AutogradCUDA not in mask and K.Python not in mask
    assert (KS([K.AutogradCPU, K.CPU]) & mask).highest_priority_key() == K.CPU


@pytest.mark.parametrize("bad", [*ALIASES, K.Undefined])
def test_keys_after_rejects_non_runtime_keys(bad: _C.DispatchKey) -> None:
    with pytest.raises(ValueError, match="not a runtime dispatch key"):
        _C.keys_after(bad)


@pytest.mark.parametrize("alias", ALIASES)
def test_alias_keys_are_rejected_in_sets(alias: _C.DispatchKey) -> None:
    with pytest.raises(ValueError, match=f"alias key {alias.name} cannot be part of a key set"):
        KS(alias)
    with pytest.raises(ValueError, match="alias key"):
        KS([K.CPU, alias])
    assert alias not in KS(PRIORITY)


def test_runtime_keys_for_alias() -> None:
    assert set(_C.runtime_keys_for_alias(K.Autograd)) == {K.AutogradCPU, K.AutogradCUDA, K.AutogradOther}
    assert set(_C.runtime_keys_for_alias(K.CompositeExplicitAutograd)) == {K.CPU, K.CUDA}
    assert set(_C.runtime_keys_for_alias(K.CompositeImplicitAutograd)) == {
        K.CPU,
        K.CUDA,
        K.AutogradCPU,
        K.AutogradCUDA,
        K.AutogradOther,
    }
    # a runtime key stands for itself
    assert _C.runtime_keys_for_alias(K.CPU) == [K.CPU]


@pytest.mark.parametrize(
    ("device", "backend", "autograd"),
    [("cpu", K.CPU, K.AutogradCPU), ("cuda", K.CUDA, K.AutogradCUDA), ("cuda:1", K.CUDA, K.AutogradCUDA)],
)
def test_keys_for_device(device: str, backend: _C.DispatchKey, autograd: _C.DispatchKey) -> None:
    d = _C.device(device)
    assert _C.backend_key_for_device(d) == backend
    assert _C.autograd_key_for_device(d) == autograd
    assert _C.key_set_for_device(d) == KS(backend)

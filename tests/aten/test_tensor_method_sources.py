"""Tensor's methods come from named sources (ember/aten/__init__.py); none replaces another's silently."""

import ember.aten as ea


def test_every_override_between_sources_is_declared() -> None:
    found = {tuple(o) for o in ea._TENSOR_METHOD_OVERRIDES}
    declared = set(ea._DECLARED_TENSOR_METHOD_OVERRIDES)
    assert found == declared, (
        f"undeclared: {sorted(found - declared)}; declared but not happening: {sorted(declared - found)}"
    )


def test_every_method_has_one_recorded_source() -> None:
    sources = ea._TENSOR_METHOD_SOURCES
    for name in ("add", "view", "__add__", "nonzero", "type_as", "__dlpack__", "to_sparse", "backward"):
        assert name in sources, name
        assert name in ea.Tensor.__dict__, name
    assert sources["add"] == "native_functions.yaml"
    assert sources["view"] == "ember.aten._tensor"
    assert sources["__add__"] == "ember.aten._tensor_ops"
    assert sources["to_sparse"] == "ember.aten._sparse"
    # each recorded source's object is the one Tensor has
    generated = ea._generated_ops.TENSOR_METHODS
    assert ea.Tensor.__dict__["add"] is generated["add"]
    assert ea.Tensor.__dict__["view"] is not generated["view"]

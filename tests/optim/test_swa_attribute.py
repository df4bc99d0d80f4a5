"""ember.optim.swa_utils is an attribute of ember.optim (as torch.optim.swa_utils), imported
on first use: with ember-nn it is the module, without it a clear ImportError."""

from __future__ import annotations

import importlib
import importlib.util

import ember.optim
import pytest


def test_swa_utils_attribute():
    if importlib.util.find_spec("ember.nn") is None:
        with pytest.raises(ImportError, match=r"ember-optim\[swa\]"):
            ember.optim.swa_utils  # noqa: B018
    else:
        assert ember.optim.swa_utils is importlib.import_module("ember.optim.swa_utils")
        assert ember.optim.swa_utils.AveragedModel.__name__ == "AveragedModel"
    with pytest.raises(AttributeError, match="has no attribute 'nope'"):
        ember.optim.nope  # noqa: B018

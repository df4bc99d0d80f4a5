"""ember.vision: detection operators, models, transforms and datasets (torchvision for ember).

An operator package outside ember's core layers, built against the installed ember-aten
wheel's CMake config like any third-party extension (docs/operator_package.md).
"""

from __future__ import annotations

import importlib.metadata as _metadata

from . import datasets, models, ops, transforms

__version__ = _metadata.version("ember-vision")

__all__ = ["__version__", "datasets", "models", "ops", "transforms"]

"""tests/autograd: the OpInfo database of tests/aten (it needs only ember.aten) and helpers.py are importable."""

from __future__ import annotations

import os
import sys

_HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(_HERE), "aten"))
sys.path.insert(0, _HERE)

"""tests/vision: ember.vision's operators against the NumPy references of vision_refs.py."""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(__file__))  # vision_refs

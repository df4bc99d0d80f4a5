"""Random operators in the OpInfo table: none.

The table compares each op with a NumPy reference value by value; a random op has no
such reference (only a distribution), and its in-place / out= / layout behaviour is tied
to the generator's stream. tests/aten/test_random.py checks the random family instead:
the Philox stream layout value by value, reproducibility, statistics, dtypes and errors.
"""

from __future__ import annotations

from .core import OpInfo

OPS: list[OpInfo] = []

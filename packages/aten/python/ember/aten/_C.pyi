# ember.aten._C, the compiled module (csrc/python/module.cpp, the generated registrations):
# its names read as Any to a type checker; the Python layer above it carries the types.
from typing import Any

def __getattr__(name: str) -> Any: ...

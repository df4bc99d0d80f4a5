"""ember.optim -- not implemented yet.

This layer installs and imports so that the monorepo, its pins and its test
sessions are in place; it exports nothing else until its issue lands.
"""

from importlib import metadata as _metadata

__version__ = _metadata.version("ember-optim")
__all__: list[str] = []

"""Entry point of the ``ember.aten.plugins`` group: aten calls ``load()`` at the end of its import.

ember.aten is still finishing its own import at that moment (every name it defines
exists, its ``__init__`` has not returned), and ``ember.autograd`` itself may be half
imported (``import ember.autograd`` imports ember.aten first). So ``load`` touches only
modules of this package that import nothing from ``ember.autograd``'s ``__init__``.
"""

from __future__ import annotations


def load() -> None:
    from ember.aten import _tensor

    from . import _api, _kernels, _meta

    _kernels.install()
    hooks = _tensor._autograd_hooks
    hooks["backward"] = _api.tensor_backward
    hooks["register_hook"] = _api.register_hook
    hooks["register_post_accumulate_grad_hook"] = _api.register_post_accumulate_grad_hook
    hooks["retain_grad"] = _api.retain_grad
    hooks["requires_grad_"] = _api.requires_grad_
    hooks["set_grad"] = _api.set_grad
    hooks["detach_"] = _api.detach_
    hooks["grad_fn"] = _meta.grad_fn_hook

    from ember.aten import library

    from . import _custom_ops

    library.set_autograd_installer(_custom_ops.install)

"""Entry point of the ``ember.aten.plugins`` group: aten calls ``load()`` at the end of its import.

ember.aten is still finishing its own import at that moment (every name it defines
exists, its ``__init__`` has not returned), and ``ember.autograd`` itself may be half
imported (``import ember.autograd`` imports ember.aten first). So ``load`` touches only
modules of this package that import nothing from ``ember.autograd``'s ``__init__``.
"""

from __future__ import annotations

# ember.aten is far enough in its import for these: its extension API and library exist
from ember.aten import library
from ember.aten.extension import set_autograd_hook

from . import _api, _custom_ops, _kernels, _meta


def load() -> None:
    _kernels.install()
    set_autograd_hook("backward", _api.tensor_backward)
    set_autograd_hook("register_hook", _api.register_hook)
    set_autograd_hook("register_post_accumulate_grad_hook", _api.register_post_accumulate_grad_hook)
    set_autograd_hook("retain_grad", _api.retain_grad)
    set_autograd_hook("requires_grad_", _api.requires_grad_)
    set_autograd_hook("set_grad", _api.set_grad)
    set_autograd_hook("detach_", _api.detach_)
    set_autograd_hook("grad_fn", _meta.grad_fn_hook)
    library.set_autograd_installer(_custom_ops.install)

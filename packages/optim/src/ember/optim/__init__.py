"""ember.optim: optimizers and learning-rate schedulers (PyTorch's torch.optim).

    >>> import ember.aten as ea
    >>> from ember.optim import SGD
    >>> w = ea.tensor([1.0, 2.0], requires_grad=True)
    >>> opt = SGD([w], lr=0.1)
    >>> (w * w).sum().backward()
    >>> opt.step()
    >>> w
    tensor([0.8000, 1.6000], requires_grad=True)

Every algorithm has a single-tensor loop (the reference), a ``foreach`` path on aten's
``_foreach_*`` operators (the default when all parameters share a device) and, for SGD,
Adam and AdamW, a ``fused`` path on aten's ``_fused_*_`` kernels.
"""

from importlib import metadata as _metadata

from .adam import Adam
from .adamw import AdamW
from .optimizer import Optimizer
from .sgd import SGD

__version__ = _metadata.version("ember-optim")
__all__ = [
    "SGD",
    "Adam",
    "AdamW",
    "Optimizer",
]

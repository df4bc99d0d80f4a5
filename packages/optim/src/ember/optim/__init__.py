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
Adam and AdamW, a ``fused`` path on aten's ``_fused_*_`` kernels. ``lr_scheduler`` holds
the learning-rate schedules; ``swa_utils`` (the ``ember-optim[swa]`` extra, needs ember.nn)
stochastic weight averaging.
"""

from importlib import metadata as _metadata

from . import lr_scheduler
from .adadelta import Adadelta
from .adagrad import Adagrad
from .adam import Adam
from .adamax import Adamax
from .adamw import AdamW
from .asgd import ASGD
from .lbfgs import LBFGS
from .nadam import NAdam
from .optimizer import Optimizer
from .radam import RAdam
from .rmsprop import RMSprop
from .rprop import Rprop
from .sgd import SGD
from .sparse_adam import SparseAdam

__version__ = _metadata.version("ember-optim")
__all__ = [
    "ASGD",
    "LBFGS",
    "SGD",
    "Adadelta",
    "Adagrad",
    "Adam",
    "AdamW",
    "Adamax",
    "NAdam",
    "Optimizer",
    "RAdam",
    "RMSprop",
    "Rprop",
    "SparseAdam",
    "lr_scheduler",
]


def __getattr__(name: str) -> object:
    # ember.optim.swa_utils as an attribute after `import ember.optim`, as torch.optim.swa_utils.
    # Imported on first use: AveragedModel is an nn.Module, so it needs ember-nn (the [swa]
    # extra), which ember-optim itself does not depend on.
    if name == "swa_utils":
        import importlib

        return importlib.import_module(".swa_utils", __name__)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

"""ember.nn's classes are reachable at PyTorch's module paths (torch.nn.modules.<file>.<Class>),
the names that pickled modules and safe_globals lists use."""

from __future__ import annotations

import importlib

import ember.nn as nn
import pytest

# PyTorch's file (torch/nn/modules/<file>.py) of each class
PYTORCH_PATHS = {
    "activation": ["ReLU", "GELU", "Softmax", "LogSoftmax", "PReLU", "MultiheadAttention"],
    "linear": ["Identity", "Linear", "Bilinear", "NonDynamicallyQuantizableLinear"],
    "conv": ["Conv1d", "Conv2d", "Conv3d", "ConvTranspose2d"],
    "pooling": ["MaxPool2d", "AvgPool2d", "AdaptiveAvgPool2d"],
    "batchnorm": ["BatchNorm1d", "BatchNorm2d"],
    "normalization": ["LayerNorm", "GroupNorm", "RMSNorm", "LocalResponseNorm"],
    "dropout": ["Dropout", "Dropout2d"],
    "sparse": ["Embedding", "EmbeddingBag"],
    "rnn": ["RNN", "LSTM", "GRU", "LSTMCell"],
    "container": ["Sequential", "ModuleList", "ModuleDict", "ParameterList", "ParameterDict"],
    "loss": ["CrossEntropyLoss", "MSELoss", "NLLLoss"],
    "transformer": ["Transformer", "TransformerEncoder", "TransformerEncoderLayer"],
    "flatten": ["Flatten", "Unflatten"],
    "module": ["Module"],
}


@pytest.mark.parametrize("file,names", sorted(PYTORCH_PATHS.items()))
def test_pytorch_module_paths(file, names):
    module = importlib.import_module(f"ember.nn.modules.{file}")
    for name in names:
        obj = getattr(module, name)
        assert obj is getattr(nn, name, obj)
        assert isinstance(obj, type) and issubclass(obj, nn.Module)


def test_multihead_attention_out_proj_class_at_pytorch_path():
    from ember.nn.modules.linear import NonDynamicallyQuantizableLinear

    mha = nn.MultiheadAttention(8, 2)
    assert type(mha.out_proj) is NonDynamicallyQuantizableLinear
    with pytest.raises(AttributeError, match="has no attribute 'NotAClass'"):
        importlib.import_module("ember.nn.modules.linear").NotAClass  # noqa: B018

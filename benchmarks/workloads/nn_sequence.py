"""Sequence models: TransformerEncoderLayer and LSTM forward, ember.nn vs torch.nn.

Both sides run the same weights (copied from the ember module into the torch one),
in eval mode under no_grad (inference). PyTorch takes its fused inference fast path
for TransformerEncoderLayer there; ember runs the layer's modules one by one. A
training-mode forward (dropout 0, grad enabled) is timed as well, where PyTorch
also runs op by op. NumPy has no such layers: its column stays empty.
"""

from __future__ import annotations

from typing import Any

import numpy as np

D_MODEL, NHEAD, SEQ, BATCH = 256, 8, 128, 16


def _torch() -> Any:
    try:
        import torch

        return torch
    except ImportError:
        return None


def _copy_weights(ember_module: Any, torch_module: Any) -> None:
    torch = _torch()
    sd = {k: torch.from_numpy(v.detach().numpy().copy()) for k, v in ember_module.state_dict().items()}
    torch_module.load_state_dict(sd)


def _encoder_layer(train: bool) -> dict[str, Any]:
    import ember.aten as ea
    from ember import nn
    from ember.autograd import no_grad

    ea.manual_seed(0)
    layer = nn.TransformerEncoderLayer(D_MODEL, NHEAD, dropout=0.0)
    layer.train(train)
    x = np.random.default_rng(0).standard_normal((SEQ, BATCH, D_MODEL), dtype=np.float32)
    ex = ea.from_numpy(x)

    def ember_fn() -> Any:
        if train:
            return layer(ex)
        with no_grad():
            return layer(ex)

    fns = {"ember": ember_fn}
    torch = _torch()
    if torch is not None:
        tlayer = torch.nn.TransformerEncoderLayer(D_MODEL, NHEAD, dropout=0.0)
        _copy_weights(layer, tlayer)
        tlayer.train(train)
        tx = torch.from_numpy(x)

        def torch_fn() -> Any:
            if train:
                return tlayer(tx)
            with torch.no_grad():
                return tlayer(tx)

        fns["torch"] = torch_fn
    return fns


def encoder_layer_inference() -> dict[str, Any]:
    return _encoder_layer(False)


def encoder_layer_train_forward() -> dict[str, Any]:
    return _encoder_layer(True)


def lstm_forward() -> dict[str, Any]:
    import ember.aten as ea
    from ember import nn
    from ember.autograd import no_grad

    ea.manual_seed(0)
    lstm = nn.LSTM(256, 256, num_layers=2)
    x = np.random.default_rng(1).standard_normal((64, 32, 256), dtype=np.float32)
    ex = ea.from_numpy(x)

    def ember_fn() -> Any:
        with no_grad():
            return lstm(ex)

    fns = {"ember": ember_fn}
    torch = _torch()
    if torch is not None:
        tlstm = torch.nn.LSTM(256, 256, num_layers=2)
        _copy_weights(lstm, tlstm)
        tx = torch.from_numpy(x)

        def torch_fn() -> Any:
            with torch.no_grad():
                return tlstm(tx)

        fns["torch"] = torch_fn
    return fns


WORKLOADS = [
    (
        f"TransformerEncoderLayer d{D_MODEL} h{NHEAD}, seq {SEQ} x batch {BATCH} (eval, no_grad)",
        "call",
        encoder_layer_inference,
    ),
    (
        f"TransformerEncoderLayer d{D_MODEL} h{NHEAD}, seq {SEQ} x batch {BATCH} (train forward)",
        "call",
        encoder_layer_train_forward,
    ),
    ("LSTM 256->256 x2 layers, seq 64 x batch 32 (no_grad)", "call", lstm_forward),
]

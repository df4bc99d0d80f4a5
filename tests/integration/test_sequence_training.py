"""End to end: sequence models learn synthetic tasks with ember.optim, deterministically under
manual_seed -- an LSTM over packed variable-length sequences (predict each sequence's sum) and a
TransformerEncoder with a key padding mask (predict the mean of the unpadded tokens)."""

from __future__ import annotations

import ember.aten as ea
from ember import nn, optim
from ember.nn.utils.rnn import pack_padded_sequence


def _batch(lengths: list[int], steps: int) -> tuple[ea.Tensor, ea.Tensor]:
    x = ea.rand(steps, len(lengths), 1) * 2 - 1
    mask = ea.tensor([[1.0 if t < n else 0.0 for n in lengths] for t in range(steps)]).unsqueeze(2)
    x = x * mask
    return x, x.sum(0)  # (T, B, 1), per-sequence sums (B, 1)


def _train_lstm(seed: int) -> list[float]:
    ea.manual_seed(seed)
    lstm, head = nn.LSTM(1, 16), nn.Linear(16, 1)
    opt = optim.Adam([*lstm.parameters(), *head.parameters()], lr=0.03)
    losses = []
    for step in range(120):
        lengths = [int(v) for v in ea.randint(1, 9, (16,)).tolist()]
        x, y = _batch(lengths, 8)
        _, (h_n, _) = lstm(pack_padded_sequence(x, lengths, enforce_sorted=False))
        loss = ((head(h_n[-1]) - y) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(float(loss))
        if step == 0:
            assert losses[0] > 0.5  # sums of up to 8 uniform(-1, 1) values: variance ~ 1.5
    return losses


def test_lstm_learns_sums_of_packed_sequences() -> None:
    losses = _train_lstm(0)
    assert sum(losses[-10:]) / 10 < 0.05, losses[-10:]
    assert _train_lstm(0) == losses  # deterministic under manual_seed


def test_transformer_encoder_learns_masked_mean() -> None:
    ea.manual_seed(1)
    embed = nn.Linear(1, 16)
    layer = nn.TransformerEncoderLayer(16, 2, dim_feedforward=32, dropout=0.0, batch_first=True)
    encoder = nn.TransformerEncoder(layer, 1)
    head = nn.Linear(16, 1)
    params = [*embed.parameters(), *encoder.parameters(), *head.parameters()]
    opt = optim.Adam(params, lr=0.01)
    losses = []
    for _ in range(150):
        lengths = [int(v) for v in ea.randint(2, 7, (16,)).tolist()]
        x, sums = _batch(lengths, 6)
        x = x.transpose(0, 1)  # (B, T, 1)
        n = ea.tensor(lengths, dtype=ea.float32).unsqueeze(1)
        pad = ea.tensor([[t >= k for t in range(6)] for k in lengths])  # True = padding
        h = encoder(embed(x), src_key_padding_mask=pad)
        keep = pad.logical_not().to(h.dtype).unsqueeze(2)
        pred = head((h * keep).sum(1) / n)
        loss = ((pred - sums / n) ** 2).mean()
        opt.zero_grad()
        loss.backward()
        opt.step()
        losses.append(float(loss))
    assert sum(losses[-10:]) / 10 < 0.2 * sum(losses[:10]) / 10, (losses[:10], losses[-10:])

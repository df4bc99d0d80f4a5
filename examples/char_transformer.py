"""A character-level Transformer language model trained on Shakespeare, then sampled.

The text is the first act of Coriolanus (public domain), shipped in
examples/data/coriolanus_act1.txt. The model is a small decoder-only Transformer built
from ember.nn parts: token and position embeddings, a causal nn.TransformerEncoder
(pre-norm, GELU), a final LayerNorm and a Linear head; AdamW with a cosine schedule.

    python examples/char_transformer.py [--steps 600] [--sample-chars 400]
"""

from __future__ import annotations

import argparse
import math
import sys
import time
from pathlib import Path

import ember.aten as ea
import ember.autograd as autograd
import ember.nn as nn
import ember.nn.functional as F
import ember.optim as optim

TEXT = Path(__file__).resolve().parent / "data" / "coriolanus_act1.txt"


class CharTransformer(nn.Module):
    def __init__(self, vocab: int, block: int, d_model: int, nhead: int, layers: int, dropout: float) -> None:
        super().__init__()
        self.block = block
        self.tok = nn.Embedding(vocab, d_model)
        self.pos = nn.Embedding(block, d_model)
        layer = nn.TransformerEncoderLayer(
            d_model,
            nhead,
            dim_feedforward=4 * d_model,
            dropout=dropout,
            activation="gelu",
            batch_first=True,
            norm_first=True,
        )
        self.blocks = nn.TransformerEncoder(layer, layers, enable_nested_tensor=False)
        self.norm = nn.LayerNorm(d_model)
        self.head = nn.Linear(d_model, vocab)
        self.register_buffer("mask", nn.Transformer.generate_square_subsequent_mask(block), persistent=False)

    def forward(self, idx: ea.Tensor) -> ea.Tensor:
        t = idx.shape[1]
        x = self.tok(idx) + self.pos(ea.arange(t))
        x = self.blocks(x, mask=self.mask[:t, :t], is_causal=True)
        return self.head(self.norm(x))


def batches(data: ea.Tensor, block: int, batch: int, gen: ea.Generator) -> tuple[ea.Tensor, ea.Tensor]:
    starts = ea.randint(0, data.numel() - block - 1, (batch,), generator=gen)
    offsets = starts.unsqueeze(1) + ea.arange(block + 1)
    windows = data[offsets]  # batch x (block + 1)
    return windows[:, :-1], windows[:, 1:]


def sample(model: CharTransformer, start: ea.Tensor, n: int, temperature: float, gen: ea.Generator) -> list[int]:
    model.eval()
    out = start.tolist()
    with autograd.no_grad():
        for _ in range(n):
            ctx = ea.tensor([out[-model.block :]])
            logits = model(ctx)[0, -1] / temperature
            nxt = ea.multinomial(F.softmax(logits, dim=-1), 1, generator=gen)
            out.append(int(nxt.item()))
    return out


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--steps", type=int, default=600)
    p.add_argument("--batch-size", type=int, default=32)
    p.add_argument("--block", type=int, default=64)
    p.add_argument("--d-model", type=int, default=128)
    p.add_argument("--nhead", type=int, default=4)
    p.add_argument("--layers", type=int, default=2)
    p.add_argument("--lr", type=float, default=3e-3)
    p.add_argument("--sample-chars", type=int, default=400)
    p.add_argument("--temperature", type=float, default=0.8)
    p.add_argument("--seed", type=int, default=0)
    args = p.parse_args(argv)

    ea.manual_seed(args.seed)
    text = TEXT.read_text()
    chars = sorted(set(text))
    stoi = {c: i for i, c in enumerate(chars)}
    data = ea.tensor([stoi[c] for c in text])
    n_val = len(text) // 10
    train_data, val_data = data[:-n_val], data[-n_val:]
    print(f"{len(text)} characters, {len(chars)} distinct; train {train_data.numel()}, validation {n_val}")

    model = CharTransformer(len(chars), args.block, args.d_model, args.nhead, args.layers, dropout=0.1)
    print(f"{sum(p.numel() for p in model.parameters()):,} parameters")
    optimizer = optim.AdamW(model.parameters(), lr=args.lr, weight_decay=0.01)
    scheduler = optim.lr_scheduler.CosineAnnealingLR(optimizer, T_max=args.steps)
    gen = ea.Generator().manual_seed(args.seed)

    def loss_on(src: ea.Tensor) -> ea.Tensor:
        x, y = batches(src, args.block, args.batch_size, gen)
        logits = model(x)
        return F.cross_entropy(logits.reshape(-1, logits.shape[-1]), y.reshape(-1))

    t0 = time.perf_counter()
    first = last = math.nan
    for step in range(1, args.steps + 1):
        model.train()
        loss = loss_on(train_data)
        optimizer.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        scheduler.step()
        if step == 1:
            first = loss.item()
        if step % max(1, args.steps // 10) == 0 or step == args.steps:
            model.eval()
            with autograd.no_grad():
                val = loss_on(val_data).item()
            last = loss.item()
            print(
                f"step {step:5d}  train loss {last:.3f}  validation loss {val:.3f}  ({time.perf_counter() - t0:.0f} s)"
            )
    print(f"loss: {first:.3f} -> {last:.3f} (uniform guessing: {math.log(len(chars)):.3f})")
    start = ea.tensor([stoi[c] for c in "MENENIUS:\n"])
    generated = "".join(chars[i] for i in sample(model, start, args.sample_chars, args.temperature, gen))
    print("--- sample ---")
    print(generated)
    return 0 if last < first else 1


if __name__ == "__main__":
    sys.exit(main())

"""Real models for the training-step benchmarks, written once for both frameworks.

``define(lib)`` builds the model classes over ``lib`` -- ``Lib("ember")`` or
``Lib("torch")``, the few names a model needs (nn, functional, optim, cat, ...) -- so
the same source makes an ember model and a PyTorch model; the workloads copy the
ember model's state_dict into the PyTorch one, so both train the same weights.

The models follow well-known public ones, in plain style:
  resnet18          torchvision's ResNet-18 (BasicBlock x [2, 2, 2, 2], 1000 classes)
  WordLM            PyTorch example word_language_model (RNNModel: embedding, LSTM/GRU,
                    dropout, linear decoder)
  SentenceClassifier an SNLI-style LSTM classifier (shared LSTM encoder of premise and
                    hypothesis, [p, h, |p - h|, p * h] into an MLP, 3 classes)
  UNet              the classic U-Net, 4 down / 4 up levels, base width 32
  GPT               nanoGPT's model (pre-norm blocks, causal SDPA, GELU MLP, tied
                    embedding and head)
  Seq2SeqTransformer PyTorch's translation tutorial model (nn.Transformer, token
                    embeddings scaled by sqrt(d), sinusoidal positions, generator)
"""

from __future__ import annotations

import math
from types import SimpleNamespace
from typing import Any

import numpy as np


class Lib:
    """The names a model's code uses, from ember ("ember") or PyTorch ("torch")."""

    def __init__(self, backend: str) -> None:
        self.backend = backend
        if backend == "ember":
            import ember.aten as ea
            from ember import nn, optim
            from ember.nn import functional as F
            from ember.nn.utils import clip_grad_norm_

            self.nn, self.F, self.optim = nn, F, optim
            self.cat, self.from_numpy = ea.cat, ea.from_numpy
            self.manual_seed, self.set_num_threads = ea.manual_seed, ea.set_num_threads
            self.get_num_threads = ea.get_num_threads
            self.clip_grad_norm_ = clip_grad_norm_
        else:
            import torch

            self.nn, self.F, self.optim = torch.nn, torch.nn.functional, torch.optim
            self.cat, self.from_numpy = torch.cat, torch.from_numpy
            self.manual_seed, self.set_num_threads = torch.manual_seed, torch.set_num_threads
            self.get_num_threads = torch.get_num_threads
            self.clip_grad_norm_ = torch.nn.utils.clip_grad_norm_

    def tensor(self, a: np.ndarray) -> Any:
        return self.from_numpy(np.ascontiguousarray(a))


def define(lib: Lib) -> SimpleNamespace:
    nn, F = lib.nn, lib.F

    # ---- ResNet-18 ------------------------------------------------------------------------
    class BasicBlock(nn.Module):
        def __init__(self, cin: int, cout: int, stride: int) -> None:
            super().__init__()
            self.conv1 = nn.Conv2d(cin, cout, 3, stride, 1, bias=False)
            self.bn1 = nn.BatchNorm2d(cout)
            self.conv2 = nn.Conv2d(cout, cout, 3, 1, 1, bias=False)
            self.bn2 = nn.BatchNorm2d(cout)
            self.downsample = None
            if stride != 1 or cin != cout:
                self.downsample = nn.Sequential(nn.Conv2d(cin, cout, 1, stride, bias=False), nn.BatchNorm2d(cout))

        def forward(self, x: Any) -> Any:
            out = F.relu(self.bn1(self.conv1(x)))
            out = self.bn2(self.conv2(out))
            identity = x if self.downsample is None else self.downsample(x)
            return F.relu(out + identity)

    class ResNet18(nn.Module):
        def __init__(self, num_classes: int = 1000) -> None:
            super().__init__()
            self.conv1 = nn.Conv2d(3, 64, 7, 2, 3, bias=False)
            self.bn1 = nn.BatchNorm2d(64)
            self.maxpool = nn.MaxPool2d(3, 2, 1)
            widths, cin = [64, 128, 256, 512], 64
            for i, w in enumerate(widths):
                stride = 1 if i == 0 else 2
                setattr(self, f"layer{i + 1}", nn.Sequential(BasicBlock(cin, w, stride), BasicBlock(w, w, 1)))
                cin = w
            self.avgpool = nn.AdaptiveAvgPool2d((1, 1))
            self.fc = nn.Linear(512, num_classes)

        def forward(self, x: Any) -> Any:
            x = self.maxpool(F.relu(self.bn1(self.conv1(x))))
            x = self.layer4(self.layer3(self.layer2(self.layer1(x))))
            return self.fc(self.avgpool(x).flatten(1))

    # ---- word language model (LSTM / GRU) ---------------------------------------------------
    class WordLM(nn.Module):
        def __init__(self, rnn_type: str, ntoken: int, ninp: int, nhid: int, nlayers: int, dropout: float) -> None:
            super().__init__()
            self.drop = nn.Dropout(dropout)
            self.encoder = nn.Embedding(ntoken, ninp)
            self.rnn = getattr(nn, rnn_type)(ninp, nhid, nlayers, dropout=dropout)
            self.decoder = nn.Linear(nhid, ntoken)

        def forward(self, tokens: Any, hidden: Any) -> Any:
            emb = self.drop(self.encoder(tokens))
            output, hidden = self.rnn(emb, hidden)
            return self.decoder(self.drop(output)), hidden

    # ---- SNLI-style sentence-pair classifier ------------------------------------------------
    class SentenceClassifier(nn.Module):
        def __init__(self, vocab: int, emb: int, hidden: int, classes: int = 3) -> None:
            super().__init__()
            self.embed = nn.Embedding(vocab, emb)
            self.encoder = nn.LSTM(emb, hidden, batch_first=True)
            self.mlp = nn.Sequential(
                nn.Linear(4 * hidden, hidden), nn.ReLU(), nn.Dropout(0.1), nn.Linear(hidden, classes)
            )

        def encode(self, tokens: Any) -> Any:
            _, (h, _) = self.encoder(self.embed(tokens))
            return h[-1]

        def forward(self, premise: Any, hypothesis: Any) -> Any:
            p, h = self.encode(premise), self.encode(hypothesis)
            return self.mlp(lib.cat([p, h, (p - h).abs(), p * h], 1))

    # ---- U-Net ------------------------------------------------------------------------------
    def double_conv(cin: int, cout: int) -> Any:
        return nn.Sequential(
            nn.Conv2d(cin, cout, 3, padding=1, bias=False),
            nn.BatchNorm2d(cout),
            nn.ReLU(inplace=True),
            nn.Conv2d(cout, cout, 3, padding=1, bias=False),
            nn.BatchNorm2d(cout),
            nn.ReLU(inplace=True),
        )

    class UNet(nn.Module):
        def __init__(self, cin: int = 3, classes: int = 1, base: int = 32) -> None:
            super().__init__()
            w = [base * 2**i for i in range(5)]  # 32 64 128 256 512
            self.inc = double_conv(cin, w[0])
            self.downs = nn.ModuleList([double_conv(w[i], w[i + 1]) for i in range(4)])
            self.ups = nn.ModuleList([nn.ConvTranspose2d(w[i + 1], w[i], 2, stride=2) for i in reversed(range(4))])
            self.up_convs = nn.ModuleList([double_conv(w[i + 1], w[i]) for i in reversed(range(4))])
            self.outc = nn.Conv2d(w[0], classes, 1)

        def forward(self, x: Any) -> Any:
            skips = [self.inc(x)]
            for down in self.downs:
                skips.append(down(F.max_pool2d(skips[-1], 2)))
            x = skips.pop()
            for up, conv in zip(self.ups, self.up_convs, strict=True):
                x = conv(lib.cat([skips.pop(), up(x)], 1))
            return self.outc(x)

    # ---- nanoGPT ------------------------------------------------------------------------------
    class CausalSelfAttention(nn.Module):
        def __init__(self, d: int, heads: int) -> None:
            super().__init__()
            self.c_attn = nn.Linear(d, 3 * d)
            self.c_proj = nn.Linear(d, d)
            self.heads = heads

        def forward(self, x: Any) -> Any:
            b, t, d = x.shape
            q, k, v = self.c_attn(x).split(d, dim=2)
            q, k, v = (z.view(b, t, self.heads, d // self.heads).transpose(1, 2) for z in (q, k, v))
            y = F.scaled_dot_product_attention(q, k, v, is_causal=True)
            return self.c_proj(y.transpose(1, 2).contiguous().view(b, t, d))

    class Block(nn.Module):
        def __init__(self, d: int, heads: int) -> None:
            super().__init__()
            self.ln_1 = nn.LayerNorm(d)
            self.attn = CausalSelfAttention(d, heads)
            self.ln_2 = nn.LayerNorm(d)
            self.mlp = nn.Sequential(nn.Linear(d, 4 * d), nn.GELU(), nn.Linear(4 * d, d))

        def forward(self, x: Any) -> Any:
            x = x + self.attn(self.ln_1(x))
            return x + self.mlp(self.ln_2(x))

    class GPT(nn.Module):
        def __init__(self, vocab: int, ctx: int, layers: int, heads: int, d: int) -> None:
            super().__init__()
            self.wte = nn.Embedding(vocab, d)
            self.wpe = nn.Embedding(ctx, d)
            self.h = nn.ModuleList([Block(d, heads) for _ in range(layers)])
            self.ln_f = nn.LayerNorm(d)
            self.lm_head = nn.Linear(d, vocab, bias=False)
            self.lm_head.weight = self.wte.weight  # weight tying, as nanoGPT
            self.register_buffer("pos", lib.tensor(np.arange(ctx, dtype=np.int64)), persistent=False)

        def forward(self, idx: Any) -> Any:
            x = self.wte(idx) + self.wpe(self.pos[: idx.shape[1]])
            for block in self.h:
                x = block(x)
            return self.lm_head(self.ln_f(x))

    # ---- translation Transformer (PyTorch tutorial) -------------------------------------------
    class PositionalEncoding(nn.Module):
        def __init__(self, d: int, dropout: float, maxlen: int = 5000) -> None:
            super().__init__()
            den = np.exp(-np.arange(0, d, 2) * math.log(10000) / d)
            pos = np.arange(maxlen).reshape(maxlen, 1)
            pe = np.zeros((maxlen, 1, d), dtype=np.float32)
            pe[:, 0, 0::2] = np.sin(pos * den)
            pe[:, 0, 1::2] = np.cos(pos * den)
            self.dropout = nn.Dropout(dropout)
            self.register_buffer("pos_embedding", lib.tensor(pe))

        def forward(self, x: Any) -> Any:
            return self.dropout(x + self.pos_embedding[: x.shape[0]])

    class Seq2SeqTransformer(nn.Module):
        def __init__(
            self, layers: int, d: int, heads: int, src_vocab: int, tgt_vocab: int, ff: int, dropout: float
        ) -> None:
            super().__init__()
            self.transformer = nn.Transformer(
                d_model=d,
                nhead=heads,
                num_encoder_layers=layers,
                num_decoder_layers=layers,
                dim_feedforward=ff,
                dropout=dropout,
            )
            self.generator = nn.Linear(d, tgt_vocab)
            self.src_tok_emb = nn.Embedding(src_vocab, d)
            self.tgt_tok_emb = nn.Embedding(tgt_vocab, d)
            self.positional_encoding = PositionalEncoding(d, dropout)
            self.scale = math.sqrt(d)

        def forward(self, src: Any, tgt: Any, masks: tuple[Any, ...]) -> Any:
            src_mask, tgt_mask, src_pad, tgt_pad = masks
            s = self.positional_encoding(self.src_tok_emb(src) * self.scale)
            t = self.positional_encoding(self.tgt_tok_emb(tgt) * self.scale)
            out = self.transformer(s, t, src_mask, tgt_mask, None, src_pad, tgt_pad, src_pad)
            return self.generator(out)

    return SimpleNamespace(
        ResNet18=ResNet18,
        WordLM=WordLM,
        SentenceClassifier=SentenceClassifier,
        UNet=UNet,
        GPT=GPT,
        Seq2SeqTransformer=Seq2SeqTransformer,
    )

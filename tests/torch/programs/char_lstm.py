"""A character-level LSTM language model, fed nanoGPT-style from an np.memmap of token ids.

Plain PyTorch (legacy LongTensor, from_numpy of a memmap, type_as, clip_grad_norm_).
"""

import os
import tempfile

import numpy as np
import torch
import torch.nn as nn

TEXT = "the quick brown fox jumps over the lazy dog. " * 12


class CharLSTM(nn.Module):
    def __init__(self, vocab, hidden=48):
        super().__init__()
        self.embed = nn.Embedding(vocab, 16)
        self.lstm = nn.LSTM(16, hidden, num_layers=1, batch_first=True)
        self.head = nn.Linear(hidden, vocab)

    def forward(self, idx, state=None):
        out, state = self.lstm(self.embed(idx), state)
        return self.head(out), state


def get_batch(data, block, batch, gen):
    ix = torch.randint(len(data) - block - 1, (batch,), generator=gen)
    x = torch.stack([torch.from_numpy(data[i : i + block].astype(np.int64)) for i in ix.tolist()])
    y = torch.stack([torch.from_numpy(data[i + 1 : i + 1 + block].astype(np.int64)) for i in ix.tolist()])
    return x, y


def main(steps=100):
    torch.manual_seed(0)
    chars = sorted(set(TEXT))
    stoi = {c: i for i, c in enumerate(chars)}
    ids = np.array([stoi[c] for c in TEXT], dtype=np.uint16)
    with tempfile.TemporaryDirectory() as tmp:
        path = os.path.join(tmp, "train.bin")
        ids.tofile(path)
        data = np.memmap(path, dtype=np.uint16, mode="r")
        raw = torch.from_numpy(np.memmap(path, dtype=np.uint16, mode="r+")[:5].astype(np.int64))
        gen = torch.Generator().manual_seed(0)
        model = CharLSTM(len(chars))
        opt = torch.optim.Adam(model.parameters(), lr=1e-2)
        losses = []
        for _ in range(steps):
            x, y = get_batch(data, 24, 16, gen)
            logits, _ = model(x)
            loss = nn.functional.cross_entropy(logits.view(-1, logits.size(-1)), y.view(-1))
            opt.zero_grad(set_to_none=True)
            loss.backward()
            torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
            opt.step()
            losses.append(loss.item())
        del data
    # greedy generation from the first character
    model.eval()
    out = [stoi["t"]]
    state = None
    with torch.no_grad():
        idx = torch.LongTensor([[out[0]]])
        for _ in range(len("the quick brown fox") - 1):
            logits, state = model(idx, state)
            nxt = int(logits[0, -1].argmax())
            out.append(nxt)
            idx = torch.LongTensor([[nxt]])
    mask = torch.ones(3).type_as(logits)
    return {
        "first_loss": losses[0],
        "last_loss": float(np.mean(losses[-10:])),
        "generated": "".join(chars[i] for i in out),
        "memmap_head": raw.tolist(),
        "expected_head": [stoi[c] for c in TEXT[:5]],
        "type_as_ok": mask.dtype == logits.dtype and mask.device == logits.device,
    }


if __name__ == "__main__":
    print(main())

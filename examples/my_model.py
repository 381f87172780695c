"""Your own architecture for genprobe, in one file: a small decoder-only transformer.

From this folder, the whole seed study with it on SCAN's length split, then the report and a
comparison with the built-in LSTM:

    genprobe sweep --task scan --task-option split=length --arch py:my_model:build \
        --model-option width=64 --seeds 10 --optimizer adam --out runs/scan-mine
    genprobe sweep --task scan --task-option split=length --seeds 10 --optimizer adam \
        --out runs/scan-lstm
    genprobe compare runs/scan-lstm runs/scan-mine --out runs/scan-compare

A builder takes the task's shape (vocabularies and lengths), a seed and its options (keyword
arguments with defaults: `--model-option heads=8`) and returns a plain `torch.nn.Module`.
Its `forward(seq)` reads the input and the output so far as one sequence (`shape.seq_vocab`
ids) and returns logits for the next token at every position; `forward(src, tgt_in)` would
make it an encoder-decoder. A module with a table of positions says how many it holds
(`max_positions`), so that a probe's longer inputs are counted as ones it cannot take rather
than decoded past the table. genprobe trains S seeds of it at once and checks it first
(`genprobe.studies.seed_sensitivity.model_check.check_model`).
"""

import torch
from torch import nn

from genprobe.models.architectures import ModelShape


class Block(nn.Module):
    """Pre-LayerNorm self-attention and feed-forward, each added back."""

    def __init__(self, width: int, heads: int, dropout: float) -> None:
        super().__init__()
        self.norm1, self.norm2 = nn.LayerNorm(width), nn.LayerNorm(width)
        self.attention = nn.MultiheadAttention(width, heads, dropout=dropout, batch_first=True)
        self.feed_forward = nn.Sequential(
            nn.Linear(width, 4 * width), nn.GELU(), nn.Linear(4 * width, width), nn.Dropout(dropout)
        )

    def forward(self, x: torch.Tensor, causal: torch.Tensor) -> torch.Tensor:
        h = self.norm1(x)
        x = x + self.attention(h, h, h, attn_mask=causal, need_weights=False)[0]
        return x + self.feed_forward(self.norm2(x))


class TinyGPT(nn.Module):
    def __init__(self, shape: ModelShape, width: int, heads: int, layers: int, dropout: float):
        super().__init__()
        self.tokens = nn.Embedding(shape.seq_vocab, width)
        self.positions = nn.Embedding(shape.max_positions, width)
        self.max_positions = shape.max_positions  # genprobe then never asks for more
        self.blocks = nn.ModuleList(Block(width, heads, dropout) for _ in range(layers))
        self.norm = nn.LayerNorm(width)
        self.out = nn.Linear(width, shape.seq_vocab)

    def forward(self, seq: torch.Tensor) -> torch.Tensor:  # (B, L) ids → (B, L, vocab) logits
        n = seq.shape[1]
        x = self.tokens(seq) + self.positions.weight[:n]
        causal = torch.ones(n, n, dtype=torch.bool, device=seq.device).triu(1)
        for block in self.blocks:
            x = block(x, causal)
        return self.out(self.norm(x))


def build(
    shape: ModelShape, seed: int, *, width: int = 64, heads: int = 4, layers: int = 2,
    dropout: float = 0.0,
) -> nn.Module:  # fmt: skip
    """genprobe seeds torch's generator from `seed` before calling this."""
    return TinyGPT(shape, width, heads, layers, dropout)

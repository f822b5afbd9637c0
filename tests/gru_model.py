"""A tiny GRU written only against the model protocol (``tracker.protocol``): its state is one
vector h (C,) per history, an item's pooled token embeddings go through a GRU cell, the view is
LN(h). docs/guide/bring-your-own-model.md walks through it; tests/test_model_plugins.py trains it
with ``train-tracker --arch gru_model:GRU`` and runs it through every command."""
from __future__ import annotations

import torch
import torch.nn as nn

from tracker.models import ModelConfig
from tracker.protocol import Stepped


class GRU(Stepped):
    """h <- GRUCell(pool(item), h) per item; the readout reads LN(h)."""

    def __init__(self, config: ModelConfig, item_tokens: torch.Tensor, vocab_size: int, n_out: int,
                 tree_len: int) -> None:
        # the base builds the item embedding (self.embed) and the readout (self.head: C -> P x n_out)
        super().__init__(config, item_tokens, vocab_size, n_out, tree_len)
        c = config.width
        self.h0 = nn.Parameter(torch.zeros(c))  # the state before any item
        self.cell = nn.GRUCell(c, c)
        self.ln_out = nn.LayerNorm(c)
        self._init_weights()  # the embedding and the readout as every tracker's (the GRU cell keeps its own)

    def initial_state(self, n: int) -> torch.Tensor:
        return self.h0.expand(n, -1)  # (n, C)

    def read(self, state: torch.Tensor, toks: torch.Tensor) -> torch.Tensor:
        # toks (M, E): each row's next item by its token ids -> the states (M, C) after it
        return self.cell(self.embed.pooled_rows(toks), state)

    def view(self, state: torch.Tensor) -> torch.Tensor:
        return self.ln_out(state)  # (M, C): what the readout reads

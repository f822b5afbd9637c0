"""Every tracker architecture by its ``--arch`` name: the one place a model is built from its config."""
from __future__ import annotations

import torch

from tracker.models import ARCHS, DeltaProduct, EventTransformer, ModelConfig, SlotRecurrence, Tracker
from tracker.registers import RegisterTracker

CLASSES: dict[str, type[Tracker]] = {"recurrence": SlotRecurrence, "transformer": EventTransformer,
                                     "transformer2x": EventTransformer, "deltaproduct": DeltaProduct,
                                     "registers": RegisterTracker}


def build_model(config: ModelConfig, item_tokens: torch.Tensor, vocab_size: int, n_out: int,
                tree_len: int) -> Tracker:
    if config.arch not in ARCHS:
        raise ValueError(f"unknown arch {config.arch!r}; choose one of {', '.join(ARCHS)}")
    return CLASSES[config.arch](config, item_tokens, vocab_size, n_out, tree_len)

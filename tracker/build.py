"""Every tracker architecture by its ``--arch`` name: the one place a model is built from its config.

``registers`` is one idea on both domains, a register for each thing the state names: on rewrite
chains one per tree position (``tracker.registers``, read in the ``paths`` layout); on a programs
dataset, told apart by its vocabulary (``tracker.variables.programs_vocab``: one readout position
per variable), one per variable (``tracker.variables``).
"""
from __future__ import annotations

import torch

from tracker.models import ARCHS, DeltaProduct, EventTransformer, ModelConfig, SlotRecurrence, Tracker
from tracker.registers import RegisterTracker
from tracker.variables import VariableTracker, programs_vocab

CLASSES: dict[str, type[Tracker]] = {"recurrence": SlotRecurrence, "transformer": EventTransformer,
                                     "transformer2x": EventTransformer, "deltaproduct": DeltaProduct,
                                     "registers": RegisterTracker}


def build_model(config: ModelConfig, item_tokens: torch.Tensor, vocab_size: int, n_out: int,
                tree_len: int) -> Tracker:
    if config.arch not in ARCHS:
        raise ValueError(f"unknown arch {config.arch!r}; choose one of {', '.join(ARCHS)}")
    if config.arch == "registers":
        if programs_vocab(vocab_size, n_out, tree_len) is not None:
            return VariableTracker(config, item_tokens, vocab_size, n_out, tree_len)
        if config.layout != "paths":
            raise ValueError("the registers arch holds one register per tree position: train it with layout paths")
    return CLASSES[config.arch](config, item_tokens, vocab_size, n_out, tree_len)

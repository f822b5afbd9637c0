"""Every tracker architecture by its ``--arch`` name: the one place a model is built from its config.

``registers`` is one idea on both shipped domains, a register for each thing the state names: on
rewrite chains one per tree position (``tracker.registers``, read in the ``paths`` layout); on
programs one per variable (``tracker.variables``). The builder is told the domain by name (a
vocabulary's ``domain``); a domain with neither layout has no registers arch.

With an ``encoder`` (a programs dataset and the recurrence only), the slot recurrence reads its
items through a frozen code model (``tracker.code_encoder.EncodedItems`` in place of its item
embedding).
"""
from __future__ import annotations

import torch

from tracker.code_encoder import EncodedItems, load_reader
from tracker.models import ARCHS, DeltaProduct, EventTransformer, ModelConfig, SlotRecurrence, Tracker
from tracker.registers import RegisterTracker
from tracker.variables import VariableTracker, programs_vocab

CLASSES: dict[str, type[Tracker]] = {"recurrence": SlotRecurrence, "transformer": EventTransformer,
                                     "transformer2x": EventTransformer, "deltaproduct": DeltaProduct,
                                     "registers": RegisterTracker}


def build_model(config: ModelConfig, item_tokens: torch.Tensor, vocab_size: int, n_out: int,
                tree_len: int, *, domain: str) -> Tracker:
    """The tracker ``config`` names for a dataset of ``domain`` (its name: ``rewrite``, ``programs``,
    or a domain of one's own) with these item tokens, vocabulary size, output ids and readout
    positions; ValueError (one line) for an arch the domain cannot take."""
    if config.arch not in ARCHS:
        raise ValueError(f"unknown arch {config.arch!r}; choose one of {', '.join(ARCHS)}")
    if config.encoder:
        return encoded_recurrence(config, item_tokens, vocab_size, n_out, tree_len, domain)
    if config.arch == "registers":
        if domain == "programs":
            return VariableTracker(config, item_tokens, vocab_size, n_out, tree_len)
        if domain != "rewrite":
            raise ValueError(f"the registers arch holds one register per tree position (rewrite) or per variable "
                             f"(programs); the {domain} domain has neither")
        if config.layout != "paths":
            raise ValueError("the registers arch holds one register per tree position: train it with layout paths")
    return CLASSES[config.arch](config, item_tokens, vocab_size, n_out, tree_len)


def encoded_recurrence(config: ModelConfig, item_tokens: torch.Tensor, vocab_size: int, n_out: int,
                       tree_len: int, domain: str) -> SlotRecurrence:
    """The slot recurrence reading a programs dataset's items through the frozen code model
    ``config.encoder``; ValueError (one line) for another arch or dataset, EncoderUnavailable
    when the model is not on this machine."""
    vocab = programs_vocab(vocab_size, n_out, tree_len) if domain == "programs" else None
    if config.arch != "recurrence" or vocab is None:
        what = f"the {config.arch} arch" if config.arch != "recurrence" else "a dataset other than programs"
        raise ValueError(f"--encoder reads programs statements into the slot recurrence only, not {what}")
    model = SlotRecurrence(config, item_tokens, vocab_size, n_out, tree_len)
    model.embed = EncodedItems(item_tokens, vocab.tokens, load_reader(config.encoder), config.width,
                               config.embed_init_std)
    return model

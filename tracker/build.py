"""Every tracker architecture by its ``--arch`` name: the one place a model is built from its config.

``registers`` is one idea on every domain that declares a register geometry (``chains.registers``), a
register for each position the state has, moved as the domain says an event acts on the positions:
events that permute the positions (the groups) move the registers by the domain's permutation
(``tracker.permuted``); events that write one named position (programs) read and write a register per
variable by name (``tracker.variables``); events that rewrite a subtree (rewrite chains) move a register
per tree position by learned tables (``tracker.registers``, read in the ``paths`` layout). The builder
asks the domain which kind it declares; a domain that declares none has no registers arch.

With an ``encoder`` (a programs dataset and the recurrence only), the slot recurrence reads its
items through a frozen code model (``tracker.code_encoder.EncodedItems`` in place of its item
embedding).

An arch of one's own is named by its import path, ``package.module:Class`` (a module importable
here, installed or on ``PYTHONPATH``): the class is imported, checked against the model protocol
(``tracker.protocol``) and built with the arguments every built-in arch gets
(``tracker.protocol.CONSTRUCTOR``). The path is the run's ``arch`` setting, so loading the run
imports it again.
"""
from __future__ import annotations

import importlib

import torch
import torch.nn as nn

from chains.domains import registered, resolve
from chains.protocol import StateDomain
from chains.registers import METHODS, register_kind
from tracker.code_encoder import EncodedItems, load_reader
from tracker.models import ARCHS, DeltaProduct, EventTransformer, ModelConfig, SlotRecurrence, Tracker, is_own_arch
from tracker.permuted import PermutedRegisters
from tracker.protocol import TrackerModel, missing_methods
from tracker.registers import RegisterTracker
from tracker.variables import VariableTracker, programs_vocab
from training.checkpoint import RunCheckpoint, RunUnavailable

CLASSES: dict[str, type[Tracker]] = {"recurrence": SlotRecurrence, "transformer": EventTransformer,
                                     "transformer2x": EventTransformer, "deltaproduct": DeltaProduct,
                                     "registers": RegisterTracker}


def build_model(config: ModelConfig, item_tokens: torch.Tensor, vocab_size: int, n_out: int,
                tree_len: int, *, domain: str | StateDomain) -> Tracker:
    """The tracker ``config`` names for a dataset of ``domain`` (the domain itself, or a registered
    domain's name: ``rewrite``, ``programs``) with these item tokens, vocabulary size, output ids and
    readout positions; ValueError (one line) for an arch the domain cannot take."""
    if is_own_arch(config.arch):
        if config.encoder:
            raise ValueError("--encoder reads programs statements into the slot recurrence only, "
                             "not an arch of one's own")
        return own_model(config, item_tokens, vocab_size, n_out, tree_len)
    if config.arch not in ARCHS:
        raise ValueError(f"unknown arch {config.arch!r}; choose one of {', '.join(ARCHS)} or package.module:Class")
    if config.encoder:
        return encoded_recurrence(config, item_tokens, vocab_size, n_out, tree_len, domain_name(domain))
    if config.arch == "registers":
        return registers_model(config, item_tokens, vocab_size, n_out, tree_len, domain)
    return CLASSES[config.arch](config, item_tokens, vocab_size, n_out, tree_len)


def domain_name(domain: str | StateDomain) -> str:
    return domain if isinstance(domain, str) else domain.name


def registers_model(config: ModelConfig, item_tokens: torch.Tensor, vocab_size: int, n_out: int, tree_len: int,
                    domain: str | StateDomain) -> Tracker:
    """The registers arch of the kind ``domain`` declares (``chains.registers``); ValueError (one line)
    naming the domain and what it lacks when it declares none."""
    named = domain
    if isinstance(domain, str):  # a registered name: the domain as the registry makes it (its kind is its class's)
        domain = resolve(domain) if domain in registered() else None
    kind = register_kind(domain)
    if kind == "permuted":
        if isinstance(named, str):  # the moves are the domain's own, parameters included (which group)
            raise ValueError(f"the {named} domain's registers move as the domain says: build them with the domain "
                             "itself, not its name")
        return PermutedRegisters(config, item_tokens, vocab_size, n_out, tree_len, domain=domain)
    if kind == "named":
        return VariableTracker(config, item_tokens, vocab_size, n_out, tree_len)
    if kind == "subtree":
        if config.layout != "paths":
            raise ValueError("the registers arch holds one register per tree position: train it with layout paths")
        return RegisterTracker(config, item_tokens, vocab_size, n_out, tree_len)
    raise ValueError(f"the registers arch needs a register geometry (chains.registers) that the {domain_name(named)} "
                     f"domain does not declare: it has none of {', '.join(METHODS)}")


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


class ModelImportError(ValueError):
    """An arch's import path that names no usable model class; the one-line message says why."""


def model_class(arch: str) -> type:
    """The class an arch names: a built-in's, or the one its import path ``package.module:Class``
    names, imported and checked (ModelImportError, one line, when it cannot be used)."""
    if not is_own_arch(arch):
        if arch not in CLASSES:
            raise ModelImportError(f"unknown arch {arch!r}; choose one of {', '.join(ARCHS)} or package.module:Class")
        return CLASSES[arch]
    module_name, name = arch.split(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as e:
        raise ModelImportError(f"cannot import {module_name} for the arch {arch}: {e}") from None
    cls = getattr(module, name, None)
    if cls is None:
        raise ModelImportError(f"{module_name} has no {name} (the arch {arch})")
    if not (isinstance(cls, type) and issubclass(cls, nn.Module)):
        raise ModelImportError(f"{arch} is not a model: a torch.nn.Module class is "
                               "(docs/guide/bring-your-own-model.md)")
    missing = missing_methods(cls)
    if missing:
        raise ModelImportError(f"{arch} is not a model: it lacks {', '.join(missing)} of the model protocol "
                               "(tracker.protocol; subclass tracker.protocol.Stepped)")
    return cls


def own_model(config: ModelConfig, item_tokens: torch.Tensor, vocab_size: int, n_out: int,
              tree_len: int) -> Tracker:
    """The model of one's own that ``config.arch`` names, built as every arch is
    (``tracker.protocol.CONSTRUCTOR``); ModelImportError (one line) when it cannot be imported,
    built, or is no tracker."""
    cls = model_class(config.arch)
    try:
        model = cls(config, item_tokens, vocab_size, n_out, tree_len)
    except Exception as e:  # the user's code: any failure is theirs to read, in one line
        raise ModelImportError(f"{config.arch}(config, item_tokens, vocab_size, n_out, tree_len) failed: "
                               f"{type(e).__name__}: {e}") from None
    if not isinstance(model, TrackerModel) or getattr(model, "embed", None) is None:
        raise ModelImportError(f"{config.arch} built no tracker: it needs tree_len, n_out, view_width and an item "
                               "embedding embed (subclass tracker.protocol.Stepped)")
    try:  # one step on one of the dataset's items: the stepping runs and its view has the declared width
        with torch.no_grad():
            z = model.view(model.read(model.initial_state(1), item_tokens[-1:]))
    except Exception as e:  # the user's code, as above
        raise ModelImportError(f"{config.arch}: a first step (initial_state, read, view) failed: "
                               f"{type(e).__name__}: {e}") from None
    if not isinstance(z, torch.Tensor) or tuple(z.shape) != (1, model.view_width):
        shown = tuple(z.shape) if isinstance(z, torch.Tensor) else type(z).__name__
        raise ModelImportError(f"{config.arch}: view gave {shown} for one state, "
                               f"not (1, view_width = {model.view_width})")
    return model


def arch_importable(run: RunCheckpoint) -> None:
    """RunUnavailable (one line) when ``run``'s arch is one's own and its import path no longer
    names a usable model class here."""
    try:
        model_class(run.config.arch)
    except ModelImportError as e:
        raise RunUnavailable(f"{run.kind} {run.run_dir}: {e}") from None

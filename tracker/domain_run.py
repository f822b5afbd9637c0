"""A trained tracker of a ``chains.protocol.StateDomain`` dataset (programs) as a batched state
machine: read start states, move by events, decode states, and score targets.

    from tracker.domain_run import load_domain_run
    run = load_domain_run("runs/programs-bits")
    w = run.encode([run.domain.parse_state("00000000")])          # (1, C)
    w = run.step(w, [run.domain.parse_event("v3 = 1")])
    run.decode(w)                                                 # [(0, 0, 0, 1, 0, 0, 0, 0)]

The recurrent architectures carry a state (``recurrence``, ``registers``); the others are read by
``tracker.inference.load_run`` on the rewrite domain only. Events are embedded from their tokens,
so any statement of the machine can be read, not only those of the dataset.
"""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import torch

from chains.domains import domain_of_manifest
from chains.manifest import DatasetError
from chains.protocol import StateDomain
from tracker.build import build_model
from tracker.config import TrainConfig
from tracker.domain_data import DomainVocab
from tracker.inference import RunCheckpoint, RunUnavailable
from tracker.models import Recurrent


class DomainRun:
    """A tracker of ``domain``; states are batched: ``w`` is (N, …) for N histories."""

    def __init__(self, model: Recurrent, domain: StateDomain, vocab: DomainVocab, item_len: int, identity: dict,
                 device: str = "cpu") -> None:
        self.model, self.domain, self.vocab, self.item_len = model, domain, vocab, item_len
        self.identity, self.device = identity, device
        self._index = vocab.index()

    def describe(self) -> dict:
        return dict(self.identity)

    def _items(self, token_lists: Sequence[Sequence[str]]) -> torch.Tensor:
        """(N, E) token ids of N items."""
        rows = []
        for toks in token_lists:
            if len(toks) > self.item_len:
                raise ValueError(f"an item of {len(toks)} tokens is longer than the tracker reads ({self.item_len})")
            ids = [self._index[t] for t in toks]
            rows.append(ids + [0] * (self.item_len - len(ids)))
        return torch.tensor(rows, dtype=torch.long, device=self.device)

    def encode(self, starts: Sequence) -> torch.Tensor:
        """The states (N, …) after reading each start state."""
        with torch.no_grad():
            w = self.model.initial_state(len(starts))
            return self.model.read(w, self._items([self.domain.start_tokens(s) for s in starts]))

    def step(self, w: torch.Tensor, events: Sequence) -> torch.Tensor:
        """Each state of ``w`` (N, …) moved by its event (N events)."""
        with torch.no_grad():
            return self.model.read(w, self._items([self.domain.event_tokens(e) for e in events]))

    def log_probs(self, w: torch.Tensor) -> torch.Tensor:
        """(N, P, classes): each readout position's log-probabilities over the domain's classes."""
        with torch.no_grad():
            logits = self.model.readout(self.model.view(w))  # (N, P, n_out): PAD, then the classes
            return torch.log_softmax(logits[..., 1:], dim=-1)

    def decode_classes(self, w: torch.Tensor) -> list[list[int]]:
        """Each state's argmax class per readout position."""
        return self.log_probs(w).argmax(-1).tolist()

    def decode(self, w: torch.Tensor) -> list:
        """The domain states ``w`` stands for (read off the classes; the programs domain's state is
        its classes)."""
        return [tuple(c) for c in self.decode_classes(w)]

    def run(self, start, events: Sequence, check: bool = False) -> torch.Tensor:
        """The state (1, …) after a whole history; with ``check`` the history is first replayed
        with the domain's own rules (EventRefused naming the first that does not apply)."""
        if check:
            state = start
            for event in events:
                state = self.domain.apply(state, event)
        w = self.encode([start])
        for event in events:
            w = self.step(w, [event])
        return w


def load_domain_run(directory: Path | str, device: str = "cpu") -> DomainRun:
    """The tracker a ``train-tracker`` run on a programs dataset wrote into ``directory``."""
    run = RunCheckpoint.read(directory, "tracker", TrainConfig)
    trained_on = run.blob.get("identity", {}).get("dataset", {})
    manifest_like = {"format": "programs/1", "domain": trained_on.get("domain")}
    if not isinstance(trained_on.get("domain"), dict):
        raise RunUnavailable(f"tracker {run.run_dir}: trained on rewrite chains; read it with tracker.load_run")
    try:
        domain = domain_of_manifest(manifest_like, str(run.run_dir))
    except DatasetError as e:
        raise RunUnavailable(f"tracker {run.run_dir}: {e}") from None
    vocab = DomainVocab(max(domain.readout()), domain.vocabulary(), domain.name)
    state = run.blob["model"]
    with run.fitting("its weights do not fit its settings", (KeyError, AttributeError, IndexError, RuntimeError,
                                                             ValueError)):
        item_tokens = state["embed.item_tokens"]
        positions = int(state["positions"]) if "positions" in state else state["head.weight"].shape[0] // vocab.n_out
        model = build_model(run.config.model, item_tokens, vocab.size, vocab.n_out, positions)
        model.load_state_dict(state)
    if not isinstance(model, Recurrent):
        raise RunUnavailable(f"tracker {run.run_dir}: a {run.config.arch} carries no state to step; "
                             "programs are read by the recurrent architectures")
    model.eval().to(device)
    return DomainRun(model, domain, vocab, item_tokens.shape[1], run.identity(trained_on), device)

"""A dataset of any other domain than rewrite chains (programs, a domain of one's own) as the
step-by-step model reads and writes it.

A history's sequence is the rewrite chains' (``stepwise.data``): the start state's tokens
(``domain.start_tokens``), EOS, then per event its tokens (``domain.event_tokens``), SEP, the state
after it, EOS. A state is written as its readout classes, one token per readout position
(``domain.state_classes``; programs: each variable's value), and read back by
``domain.state_of_classes``. The histories and their states come from the dataset's lines through the
domain its manifest names (``chains.domains``), replayed with the domain's ``apply``.
"""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from chains.domains import domain_of_manifest, recorded_histories
from chains.manifest import manifest_path
from chains.protocol import StateDomain, run_events
from stepwise.sequences import EOS, SEP, padded, written_sequence
from tracker.data import check_certified

Chain = tuple[object, tuple]  # a start state and the events applied to it in turn


class DomainStepVocab:
    """PAD, the domain's vocabulary, one token per readout class (``<c0>``, ``<c1>``, …), SEP and EOS."""

    def __init__(self, domain: StateDomain) -> None:
        self.domain = domain
        classes = tuple(f"<c{c}>" for c in range(max(domain.readout())))
        self.tokens = ("<pad>", *domain.vocabulary(), *classes, SEP, EOS)
        self._index = {t: i for i, t in enumerate(self.tokens)}
        self._first_class = 1 + len(domain.vocabulary())

    @property
    def size(self) -> int:
        return len(self.tokens)

    @property
    def sep(self) -> int:
        return self.size - 2

    @property
    def eos(self) -> int:
        return self.size - 1

    def start_ids(self, state) -> tuple[int, ...]:
        return tuple(self._index[t] for t in self.domain.start_tokens(state))

    def event_ids(self, event) -> tuple[int, ...]:
        return tuple(self._index[t] for t in self.domain.event_tokens(event))

    def state_ids(self, state) -> tuple[int, ...]:
        """One class token per readout position."""
        return tuple(self._first_class + c for c in self.domain.state_classes(state))

    def parse_state(self, ids: Sequence[int]):
        """The state whose class tokens are ``ids``; ValueError when they name none."""
        return self.domain.state_of_classes([i - self._first_class for i in ids])


class StepwiseDomainData:
    """A certified dataset of another domain as histories and sequences: the training histories'
    sequences padded once (``train_ids``, ``train_written``, (N, L)) and the test histories by length."""

    def __init__(self, directory: Path, identity: dict) -> None:
        manifest = check_certified(Path(directory))
        self.domain = domain_of_manifest(manifest, str(manifest_path(directory)))
        self.identity = identity
        self.vocab = DomainStepVocab(self.domain)
        self._splits = {name: [(start, tuple(events)) for (start, events), _ in recorded_histories(
            self.domain, Path(directory) / name)] for name in manifest["files"]}
        train = [written_sequence(self.vocab, chain, [self.vocab.state_ids(s) for s in self.replay(chain)])
                 for chain in self._splits["train.jsonl"]]
        self.train_ids, self.train_written = padded(train)  # (N, L) each

    def train_chains(self) -> list[Chain]:
        """The training histories, in the dataset's order."""
        return self._splits["train.jsonl"]

    def replay(self, chain: Chain) -> list:
        """The state after every event of ``chain``."""
        return run_events(self.domain, *chain)

    @property
    def test_lengths(self) -> tuple[int, ...]:
        return tuple(sorted(int(name[len("test-"):-len(".jsonl")]) for name in self._splits if name != "train.jsonl"))

    def test_chains(self, length: int, n: int) -> list[Chain]:
        """The first ``n`` test histories of ``length`` events."""
        return self._splits[f"test-{length}.jsonl"][:n]

    @property
    def training_length(self) -> int:
        """The most events of a training history."""
        return max(len(events) for _, events in self._splits["train.jsonl"])

    @property
    def max_state_tokens(self) -> int:
        """Tokens of a state: one per readout position."""
        return len(self.domain.readout())

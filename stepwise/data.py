"""Rewrite chains as the step-by-step model reads and writes them: one token sequence per chain.

A chain's sequence, in the ids of ``StepwiseVocab`` (the tracker's vocabulary, then SEP and EOS):

    the start tree's Polish tokens, EOS,
    then per event: its tokens (the rule, one token per bit of its path), SEP,
                    the tree after it (its Polish tokens), EOS

The start tree and the events are given; the model writes every tree after a SEP and the EOS that
closes it: those are the *written* positions, and the training loss counts them only
(``stepwise.sequences.written_loss``). The start tree is closed by an EOS too, so that every state in the sequence
reads alike. Training chains come from ``tracker.data.load_dataset`` (the same certified dataset,
the same item tokens); the state after every event is replayed with ``chains.rewrite.rules.apply``.
``load_stepwise`` reads a dataset of any other domain through ``stepwise.domain_data``.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import torch

from chains.manifest import DatasetError
from chains.rewrite.rules import Event, apply
from chains.rewrite.trees import Tree, parse_tokens, tokens
from stepwise.sequences import EOS, PAD_ID, SEP, padded, written_sequence
from tracker.data import TrackerData, Vocab, load_dataset

Chain = tuple[Tree, tuple[Event, ...]]  # a start tree and the events applied to it in turn


@dataclass(frozen=True)
class StepwiseVocab:
    """The tracker's tokens (PAD, the operators, the atoms, the rules, the two bits) and then SEP
    and EOS; the model reads and writes ids of this table."""

    base: Vocab

    @property
    def tokens(self) -> tuple[str, ...]:
        return (*self.base.tokens, SEP, EOS)

    @property
    def size(self) -> int:
        return len(self.tokens)

    @property
    def sep(self) -> int:
        return self.base.size

    @property
    def eos(self) -> int:
        return self.base.size + 1

    def tree_ids(self, tree: Tree) -> tuple[int, ...]:
        """The Polish token ids of ``tree``."""
        index = self.base.index()
        return tuple(index[t] for t in tokens(tree))

    def start_ids(self, tree: Tree) -> tuple[int, ...]:
        """The ids a start is read as: its Polish tokens."""
        return self.tree_ids(tree)

    def state_ids(self, tree: Tree) -> tuple[int, ...]:
        """The ids a state is written as: its Polish tokens."""
        return self.tree_ids(tree)

    def event_ids(self, event: Event) -> tuple[int, ...]:
        """The rule's id, then one id per bit of the path (as the tracker's event items)."""
        index = self.base.index()
        return (index[event.rule], *(index[b] for b in event.path))

    def parse_state(self, ids: Sequence[int]) -> Tree:
        """The tree whose Polish token ids are ``ids``; TreeSyntaxError when they are none."""
        names = self.tokens
        return parse_tokens([names[i] if 0 <= i < len(names) else "?" for i in ids], self.base.atoms)


def replay(chain: Chain) -> list[Tree]:
    """The tree after every event of ``chain`` (the start excluded); DatasetError where one does not apply."""
    tree, out = chain[0], []
    for k, event in enumerate(chain[1]):
        after = apply(tree, event)
        if after is None:
            raise DatasetError(f"event {k + 1} ({event}) does not apply to {' '.join(tokens(tree))}")
        tree = after
        out.append(tree)
    return out


def sequence(vocab: StepwiseVocab, chain: Chain, states: Sequence[Tree] | None = None
             ) -> tuple[list[int], list[bool]]:
    """(token ids, written) of ``chain``'s sequence: written[i] says the model writes token i (a
    state's token or its EOS); ``states`` are the trees after each event (replayed when None)."""
    states = replay(chain) if states is None else states
    return written_sequence(vocab, chain, [vocab.tree_ids(tree) for tree in states])


class StepwiseData:
    """A certified rewrite dataset as chains and sequences: the training chains' sequences, padded
    once (``train_ids``, ``train_written``, (N, L)), and the test chains by length, decoded on request."""

    def __init__(self, tracker: TrackerData) -> None:
        if not isinstance(tracker.vocab, Vocab):
            raise DatasetError(f"{tracker.identity['dataset']['path']}: the step-by-step model reads rewrite "
                               "chains only; this dataset holds programs")
        self.tracker, self.identity = tracker, tracker.identity
        self.vocab = StepwiseVocab(tracker.vocab)
        names = tracker.vocab.tokens
        # every item of the dataset as a tree (a start) or an event, decoded once: item id -> value
        self._items: dict[int, Tree | Event] = {}
        n_trees = tracker.tree_items.shape[0]
        for item, row in enumerate(tracker.item_tokens.tolist()[1:], 1):
            text = [names[i] for i in row if i != PAD_ID]
            self._items[item] = (parse_tokens(text, tracker.vocab.atoms) if item <= n_trees
                                 else Event(text[0], "".join(text[1:])))
        train = [sequence(self.vocab, chain) for chain in self.train_chains()]
        self.train_ids, self.train_written = padded(train)  # (N, L) each

    def train_chains(self) -> list[Chain]:
        """The training chains, in the dataset's order."""
        return self.chains(self.tracker.train["chain_items"])

    def chains(self, items: torch.Tensor) -> list[Chain]:
        """The chains of rows of item ids (N, T), 0 after a chain's end."""
        out = []
        for row in items.tolist():
            start, *events = [self._items[i] for i in row if i != 0]
            out.append((start, tuple(events)))
        return out

    @property
    def test_lengths(self) -> tuple[int, ...]:
        return tuple(sorted(self.tracker.tests))

    def test_chains(self, length: int, n: int) -> list[Chain]:
        """The first ``n`` test chains of ``length`` events."""
        return self.chains(self.tracker.tests[length]["chain_items"][:n])

    @property
    def training_length(self) -> int:
        """The most events of a training chain: n, the length the model is trained at."""
        return int((self.tracker.train["chain_items"] != 0).sum(1).max()) - 1

    @property
    def max_state_tokens(self) -> int:
        """The most tokens of any tree of the dataset."""
        return self.tracker.tree_len

    @staticmethod
    def replay(chain: Chain) -> list[Tree]:
        """The tree after every event of ``chain`` (``replay``)."""
        return replay(chain)


def load_stepwise(directory: Path | str, corrupted_checker: bool = False):
    """The certified dataset in ``directory`` as the step-by-step model reads it: rewrite chains as a
    ``StepwiseData`` (``tracker.data.load_dataset``, its cache shared), a dataset of any other domain
    as a ``stepwise.domain_data.StepwiseDomainData``; DatasetError for one it cannot read."""
    tracker = load_dataset(directory, corrupted_checker=corrupted_checker)
    if isinstance(tracker.vocab, Vocab):
        return StepwiseData(tracker)
    from stepwise.domain_data import StepwiseDomainData
    return StepwiseDomainData(Path(directory), tracker.identity)

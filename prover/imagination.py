"""What the imagination searcher needs from a tracker, and the imaginations it can use.

An ``Imagination`` reads a history (a start tree and its events) into a latent state, moves
latent states by events, and decodes latent states into trees. The searcher never looks
inside a latent state; it batches many of them per call.

- ``OracleImagination``: exact replay in Python. For tests only: a perfect tracker.
- ``CorruptImagination``: decodes wrong trees (for the test that a tracker whose decoding is
  wrong cannot get a solution accepted).
- ``TrackerImagination``: a trained tracker from a ``train-tracker`` run directory.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from chains.rules import Event, apply
from chains.trees import Tree, TreeSyntaxError, parse_tokens, tokens

Latent = Any  # opaque to the searcher
History = tuple[Tree, Sequence[Event]]  # (start tree, events read after it)


@runtime_checkable
class Imagination(Protocol):
    def encode(self, histories: Sequence[History]) -> list[Latent]:
        """The latent state after reading each history."""

    def step(self, states: Sequence[Latent], events: Sequence[Event]) -> list[Latent]:
        """``states[i]`` moved by ``events[i]``."""

    def decode(self, states: Sequence[Latent]) -> list[Tree | None]:
        """The tree each state stands for (None when it reads as no tree)."""

    def describe(self) -> dict:
        """Identity for the report (kind, run directory, dataset it was trained on, ...)."""


class TrackerUnavailable(Exception):
    """No usable tracker at the given place; the message says why and what to run."""


class OracleImagination:
    """A perfect tracker: the latent state is the tree itself, moved by ``chains.rules.apply``.
    An event that does not apply leads to the state None, which decodes to no tree."""

    def __init__(self, max_size: int | None = None) -> None:
        self.max_size = max_size

    def encode(self, histories: Sequence[History]) -> list[Latent]:
        out = []
        for start, events in histories:
            tree: Tree | None = start
            for event in events:
                tree = None if tree is None else apply(tree, event, self.max_size)
            out.append(tree)
        return out

    def step(self, states: Sequence[Latent], events: Sequence[Event]) -> list[Latent]:
        return [None if s is None else apply(s, e, self.max_size) for s, e in zip(states, events, strict=True)]

    def decode(self, states: Sequence[Latent]) -> list[Tree | None]:
        return list(states)

    def describe(self) -> dict:
        return {"kind": "oracle"}


class CorruptImagination(OracleImagination):
    """Moves exactly but decodes ``wrong(tree)`` instead of the tree, for every state that has
    taken at least ``after`` steps since it was encoded (``after=0``: every state)."""

    def __init__(self, wrong: Callable[[Tree], Tree], after: int = 1) -> None:
        super().__init__()
        self.wrong, self.after = wrong, after

    # the latent state is (tree, steps taken since encoding)
    def encode(self, histories: Sequence[History]) -> list[Latent]:
        return [(t, 0) for t in super().encode(histories)]

    def step(self, states: Sequence[Latent], events: Sequence[Event]) -> list[Latent]:
        moved = super().step([s[0] for s in states], events)
        return [(t, s[1] + 1) for t, s in zip(moved, states)]

    def decode(self, states: Sequence[Latent]) -> list[Tree | None]:
        return [None if t is None else (self.wrong(t) if n >= self.after else t) for t, n in states]

    def describe(self) -> dict:
        return {"kind": "corrupt", "after": self.after}


CHECKPOINT = "checkpoint.pt"  # train-tracker's checkpoint file inside a run directory


class TrackerImagination:
    """A trained slot-recurrence tracker (``train-tracker`` run directory) as an imagination.

    The latent state is the slot ``w`` (C,) before its output norm. ``encode`` reads the start
    tree's Polish tokens as the first item and then one item per event, exactly as training
    fed it; ``step`` is one more event item (``ticks`` attention + MLP updates of the slot);
    ``decode`` is the linear per-position readout of ``LN(w)``, argmax per position, read as a
    tree only when it is a well-formed tree followed by padding. Items are embedded from their
    tokens, so any tree or event of the domain can be read, not only those of the dataset.
    """

    def __init__(self, run_dir: Path, data_dir: Path, device: str = "cpu") -> None:
        try:
            import torch

            from chains.dataset import DatasetError, domain_of, read_manifest, trained_elsewhere
            from tracker.data import Vocab
            from tracker.models import build_model
            from tracker.train import CheckpointError, config_from_checkpoint, load_checkpoint
        except ImportError as e:
            raise TrackerUnavailable(f"the tracker package cannot be imported ({e})") from None
        run_dir, data_dir = Path(run_dir), Path(data_dir)
        path = run_dir / CHECKPOINT
        if not run_dir.is_dir():
            raise TrackerUnavailable(f"tracker {run_dir}: no such run directory; train one with "
                                     f"`train-tracker --objective combo --out {run_dir}`")
        try:
            blob = load_checkpoint(path)
            config = config_from_checkpoint(blob)
        except (CheckpointError, KeyError, TypeError, ValueError) as e:
            raise TrackerUnavailable(f"tracker {run_dir}: {e}") from None
        try:
            manifest = read_manifest(data_dir)
            domain = domain_of(manifest, str(data_dir / "manifest.json"))
        except DatasetError as e:
            raise TrackerUnavailable(f"dataset {data_dir}: {e}") from None
        elsewhere = trained_elsewhere(blob.get("identity", {}), manifest)
        if elsewhere is not None:
            raise TrackerUnavailable(f"tracker {run_dir} was trained on another dataset ({elsewhere}), not {data_dir}")
        if config.arch != "recurrence":
            raise TrackerUnavailable(f"tracker {run_dir}: the imagination adapter reads slot-recurrence "
                                     f"trackers only, this one is {config.arch}")
        state = blob["model"]
        self.vocab = Vocab(domain.atom_names, domain.rules)
        needed = ("embed.item_tokens", "head.weight", "embed.table.weight")
        if not all(isinstance(state.get(k), torch.Tensor) and state[k].dim() == 2 for k in needed):
            raise TrackerUnavailable(f"tracker {run_dir}: its checkpoint holds no slot-recurrence weights")
        item_tokens = state["embed.item_tokens"]
        n_out = self.vocab.n_out
        tree_len = state["head.weight"].shape[0] // n_out
        if state["embed.table.weight"].shape[0] != item_tokens.shape[1] * self.vocab.size:
            raise TrackerUnavailable(f"tracker {run_dir}: its vocabulary does not match the dataset's domain")
        self.model = build_model(config.model, item_tokens, self.vocab.size, n_out, tree_len)
        try:
            self.model.load_state_dict(state)
        except RuntimeError as e:  # weights of another shape or missing ones
            raise TrackerUnavailable(f"tracker {run_dir}: its weights do not fit its settings "
                                     f"({' '.join(str(e).split())[:160]})") from None
        self.model.eval().to(device)
        self.torch, self.device = torch, device
        self.item_len, self.tree_len = item_tokens.shape[1], tree_len
        self.domain, self.run_dir, self.data_dir = domain, run_dir, data_dir
        self._index = self.vocab.index()
        self.identity = {"kind": "tracker", "run": str(run_dir), "arch": config.arch,
                         "objective": config.objective, "seed": config.seed, "steps": blob.get("step"),
                         "trained_on": blob.get("identity", {}).get("dataset", {})}

    def describe(self) -> dict:
        return self.identity

    def _item(self, tokens_: Sequence[str]) -> list[int]:
        if len(tokens_) > self.item_len:
            raise ValueError(f"an item of {len(tokens_)} tokens is longer than the tracker reads ({self.item_len})")
        return [self._index[t] for t in tokens_] + [0] * (self.item_len - len(tokens_))

    def _tree_item(self, tree: Tree) -> list[int]:
        return self._item(tokens(tree))

    def _event_item(self, event: Event) -> list[int]:
        return self._item([event.rule, *event.path])

    def _update(self, w, rows: list[list[int]]):
        """w (M, C), one item per row (its token ids) -> w (M, C)."""
        return self.model.read(w, self.torch.tensor(rows, dtype=self.torch.long, device=self.device))

    def encode(self, histories: Sequence[History]) -> list[Latent]:
        torch = self.torch
        with torch.no_grad():
            w = self.model.initial_state(len(histories))
            w = self._update(w, [self._tree_item(start) for start, _ in histories])
            longest = max((len(events) for _, events in histories), default=0)
            for t in range(longest):
                active = [n for n, (_, events) in enumerate(histories) if t < len(events)]
                rows = torch.tensor(active, device=self.device)
                moved = self._update(w[rows], [self._event_item(histories[n][1][t]) for n in active])
                w = w.index_copy(0, rows, moved)
        return list(w.unbind(0))

    def step(self, states: Sequence[Latent], events: Sequence[Event]) -> list[Latent]:
        torch = self.torch
        if not states:
            return []
        with torch.no_grad():
            w = self._update(torch.stack(list(states)), [self._event_item(e) for e in events])
        return list(w.unbind(0))

    def decode(self, states: Sequence[Latent]) -> list[Tree | None]:
        torch = self.torch
        if not states:
            return []
        with torch.no_grad():
            ids = self.model.readout(self.model.view(torch.stack(list(states)))).argmax(-1).tolist()  # (M, P)
        out = []
        names = self.vocab.tokens
        pad = names[0]  # the vocabulary puts padding first
        for row in ids:
            toks = [names[i] for i in row]
            end = toks.index(pad) if pad in toks else len(toks)
            if any(t != pad for t in toks[end:]):
                out.append(None)
                continue
            try:
                out.append(parse_tokens(toks[:end], self.domain.atom_names))
            except TreeSyntaxError:
                out.append(None)
        return out


def load_tracker(run_dir: Path, data_dir: Path, device: str = "cpu") -> Imagination:
    """The tracker saved in ``run_dir``, checked against the dataset at ``data_dir``."""
    return TrackerImagination(Path(run_dir), Path(data_dir), device)

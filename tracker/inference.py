"""A trained tracker as a state machine: load a ``train-tracker`` run directory, read a start tree,
move by events, decode the tree it holds, and read the views the objectives compare.

    from tracker import load_run
    run = load_run("runs/demo-fast")
    state = run.encode("* + a b * c d")
    state = run.step(state, "mul_comm@")
    run.decode(state)        # "* * c d + a b" for an exact tracker

Every architecture ``train-tracker`` trains is read the same way, through the model's own stepping
(``tracker.protocol``: ``initial_state``, ``read``, ``view``); what a state holds differs:

- ``recurrence``: the slot ``w`` (C,), before its output norm: a state is the tracker's memory.
- ``transformer``, ``transformer2x``: no carried state, so a state is the history so far, its
  items' pooled embeddings (T, C); ``step`` appends one, ``decode`` runs the blocks over them all.
- ``deltaproduct``: the blocks' matrix states and the last view, flattened into one vector.

Items are embedded from their tokens, so any tree or event of the run's domain can be read, not
only those of its dataset. A step that does not apply to the tree the tracker holds is read all
the same: the tracker is a model, not the rules (``chains.rewrite.rules.apply`` is).
"""
from __future__ import annotations

from collections.abc import Sequence
from functools import cached_property
from pathlib import Path
from typing import Any

import torch

from chains.manifest import DatasetError, manifest_path, read_manifest, trained_elsewhere
from chains.rewrite.rules import Event, apply
from chains.rewrite.space import Domain, domain_of
from chains.rewrite.trees import Tree, TreeSyntaxError, parse_polish, parse_tokens, polish, tokens
from tracker.build import arch_importable, build_model
from tracker.config import TrainConfig
from tracker.data import Vocab
from tracker.layouts import heap_tree
from tracker.models import Recurrent, is_own_arch
from tracker.protocol import fits, growing_dims, shape_text, state_shape
from training.checkpoint import RunCheckpoint, RunUnavailable  # noqa: F401  (re-exported: the run readers' names)
from training.device import resolve_device

State = Any  # what a state holds depends on the architecture (see the module's docstring)
History = tuple["Tree | str", Sequence["Event | str"]]  # (start tree, events read after it)


def as_tree(tree: Tree | str, atoms: Sequence[str]) -> Tree:
    if not isinstance(tree, (str, tuple)):
        raise TypeError(f"a tree is Polish text or a chains.rewrite.trees tree, not {type(tree).__name__}")
    return parse_polish(tree, atoms) if isinstance(tree, str) else tree


def as_event(event: Event | str) -> Event:
    if not isinstance(event, (str, Event)):
        raise TypeError(f"an event is rule@path text or a chains.rewrite.rules.Event, not {type(event).__name__}")
    return Event.parse(event) if isinstance(event, str) else event


def as_events(events: Sequence[Event | str]) -> Sequence[Event | str]:
    """``events`` as given, refused in one line when it is one event where a list of them is expected
    (a string would otherwise be read character by character)."""
    if isinstance(events, (str, Event)):
        raise TypeError(f"events are a list of events, not one event: write [{str(events)!r}]")
    return events


def _history(history: object, n: int) -> History:
    """One (start, events) pair of a list of histories; TypeError naming the n-th when it is not one."""
    if not (isinstance(history, (tuple, list)) and len(history) == 2):
        raise TypeError(f"history {n}: a (start, events) pair, not {history!r:.60}")
    return history[0], as_events(history[1])


class HistoryError(ValueError):
    """A history that breaks the rules of its domain; the message names the step, tree and event."""


def checked_history(start: Tree | str, events: Sequence[Event | str], domain: Domain) -> list[Tree]:
    """The trees a history passes through (the start, then one per event), replayed with the
    domain's rules (``chains.rewrite.rules.apply``); HistoryError naming the first step that does not apply
    (or a start tree outside the domain: an atom not of it, or repeated on tier 1)."""
    tree = as_tree(start, domain.atom_names)
    events = as_events(events)
    leaves = [t for t in tokens(tree) if t in domain.atom_names]
    if domain.tier == 1 and sorted(leaves) != sorted(domain.atom_names):
        raise HistoryError(f"start {polish(tree)}: a tier-1 start holds each of {' '.join(domain.atom_names)} once")
    trees = [tree]
    for k, event in enumerate(events):
        event = as_event(event)
        if event.rule not in domain.rules:
            raise HistoryError(f"step {k}: {event} names a rule outside tier {domain.tier}")
        after = apply(tree, event, domain.size_bound)
        if after is None:
            raise HistoryError(f"step {k}: {event} does not apply to {polish(tree)}")
        trees.append(tree := after)
    return trees


class TrackedRun:
    """A trained tracker of any architecture; see ``load_run``. Methods take and give one state
    at a time (``views`` batches histories; ``encode_batch``, ``step_batch`` and ``decode_batch``
    many states per call); trees and events may be given as text."""

    def __init__(self, model: torch.nn.Module, config: TrainConfig, vocab: Vocab, domain: Domain,
                 item_len: int, identity: dict, device: str = "cpu") -> None:
        self.model, self.config, self.vocab, self.domain = model, config, vocab, domain
        self.item_len, self.identity, self.device = item_len, identity, device
        self._index = vocab.index()

    @property
    def arch(self) -> str:
        return self.config.arch

    @cached_property
    def batched(self) -> bool:
        """Whether the batch methods stack states into one pass: for a state of one shape (the
        recurrence, the registers, a model of one's own whose state does not grow); the built-in
        transformers and DeltaProduct are read state by state, as their registered runs were."""
        return isinstance(self.model, Recurrent) or (is_own_arch(self.arch) and not growing_dims(self.model))

    def describe(self) -> dict:
        """Identity for a report: the run, its architecture, objective, seed, steps, dataset."""
        return dict(self.identity)

    # ---- items ----------------------------------------------------------------------------------

    def _ids(self, toks: Sequence[str]) -> list[int]:
        """One item's token ids, 0-padded to the item length E."""
        if len(toks) > self.item_len:
            raise ValueError(f"an item of {len(toks)} tokens is longer than the tracker reads ({self.item_len})")
        try:
            ids = [self._index[t] for t in toks]
        except KeyError as e:
            raise ValueError(f"token {e.args[0]!r} is not in the run's domain ({self.domain.atoms} atoms, "
                             f"tier {self.domain.tier})") from None
        return ids + [0] * (self.item_len - len(ids))

    def _tokens(self, toks: Sequence[str]) -> torch.Tensor:
        return torch.tensor([self._ids(toks)], dtype=torch.long, device=self.device)  # (1, E)

    def _start(self, tree: Tree | str) -> Tree:
        """A start tree of the run's domain; HistoryError for one outside it (on tier 1, an atom
        repeated or missing: the tracker would read it as some other tree)."""
        return checked_history(tree, [], self.domain)[0]

    def _state(self, state: State) -> State:
        """``state`` when it is what ``encode`` or ``step`` returned; TypeError saying what one is."""
        expected = self._state_shape
        if not fits(state, expected):
            shape = f"a tensor of shape {shape_text(expected)}"
            given = f"a tensor of shape {tuple(state.shape)}" if isinstance(state, torch.Tensor) else type(state).__name__
            raise TypeError(f"a state is what encode or step returned ({shape}), not {given}")
        return state

    @cached_property
    def _state_shape(self) -> tuple[int, ...]:
        """A state's shape, -1 where it grows with the history (the transformer's T)."""
        return state_shape(self.model)

    def _tree_ids(self, tree: Tree | str) -> list[int]:
        return self._ids(tokens(self._start(tree)))

    def _event_ids(self, event: Event | str) -> list[int]:
        e = as_event(event)
        return self._ids([e.rule, *e.path])

    def _tree_item(self, tree: Tree | str) -> torch.Tensor:
        return self._tokens(tokens(self._start(tree)))

    def _event_item(self, event: Event | str) -> torch.Tensor:
        return torch.tensor([self._event_ids(event)], dtype=torch.long, device=self.device)  # (1, E)

    # ---- the state machine ----------------------------------------------------------------------

    def _read(self, state: State | None, toks: torch.Tensor) -> State:
        """One state (None: before any item) after the item toks (1, E), by the model's stepping."""
        model = self.model
        w = model.initial_state(1) if state is None else state.unsqueeze(0)  # (1, ...)
        return model.read(w, toks)[0]

    def encode(self, start: Tree | str) -> State:
        """The state after reading the start tree (Polish text or a ``chains.rewrite.trees`` tree)."""
        with torch.no_grad():
            return self._read(None, self._tree_item(start))

    def step(self, state: State, event: Event | str) -> State:
        """``state`` moved by one event (``rule@path`` or a ``chains.rewrite.rules.Event``)."""
        with torch.no_grad():
            return self._read(self._state(state), self._event_item(event))

    def view(self, state: State) -> torch.Tensor:
        """The normalised view (C,) of a state: what the readout reads and the objectives compare."""
        model, state = self.model, self._state(state)
        with torch.no_grad():
            if isinstance(model, Recurrent):
                return model.view(state)
            return model.view(state.unsqueeze(0))[0]

    def decode_tree(self, state: State) -> Tree | None:
        """The tree the state stands for, or None when the readout is not a well-formed tree
        followed by padding."""
        with torch.no_grad():
            ids = self.model.readout(self.view(state)).argmax(-1).tolist()  # (P,)
        return self._tree_of(ids)

    def _tree_of(self, ids: list[int]) -> Tree | None:
        """The tree one readout's argmax ids (P,) spell in the run's layout, or None."""
        names = self.vocab.tokens
        pad = names[0]  # the vocabulary puts padding first
        if getattr(self.config, "layout", "polish") == "paths":  # slot i names heap position i
            return self._from_heap([names[i] for i in ids], pad)
        toks = [names[i] for i in ids]
        end = toks.index(pad) if pad in toks else len(toks)
        if any(t != pad for t in toks[end:]):
            return None
        try:
            return parse_tokens(toks[:end], self.domain.atom_names)
        except TreeSyntaxError:
            return None

    def _from_heap(self, toks: list[str], pad: str) -> Tree | None:
        """A tree read from heap-ordered slots (``tracker.layouts.heap_tree``), or None when the
        slots are not exactly one tree's nodes."""
        return heap_tree(toks, pad, lambda t: t in self.domain.atom_names)

    def decode(self, state: State) -> str | None:
        """The tree the state stands for, in Polish notation (None: no well-formed tree)."""
        tree = self.decode_tree(state)
        return None if tree is None else polish(tree)

    def run(self, start: Tree | str, events: Sequence[Event | str], check: bool = False) -> State:
        """The state after reading a whole history. With ``check``, the history is first replayed
        with the domain's rules and HistoryError names the first step that does not apply; without
        it, a step that does not apply is read all the same (the tracker is a model, not the rules)."""
        events = as_events(events)
        if check:
            checked_history(start, events, self.domain)
        state = self.encode(start)
        for event in events:
            state = self.step(state, event)
        return state

    def views(self, histories: Sequence[History]) -> torch.Tensor:
        """The views (N, C) of the end states of ``histories``, each (start, events)."""
        if not histories:
            return torch.zeros(0, self.model.view_width)
        pairs = [_history(h, n) for n, h in enumerate(histories)]
        return torch.stack([self.view(self.run(start, events)) for start, events in pairs])

    # ---- batches: many states per call (the prover's search moves hundreds at once) -----------
    #
    # Where ``batched``, each call is one batched pass: the states stacked (M, ...), one item per
    # row. The other architectures are read state by state with the methods above,
    # to the same results. A batch's bits are those of its batch: reading a state alone (``step``)
    # gives the same tree but may differ in the last float bits.

    def encode_batch(self, histories: Sequence[History]) -> list[State]:
        """The end state of each history (start, events), in order."""
        histories = [_history(h, n) for n, h in enumerate(histories)]
        if not self.batched:
            return [self.run(start, events) for start, events in histories]
        if not histories:
            return []
        model = self.model
        with torch.no_grad():
            w = model.initial_state(len(histories))  # (N, C)
            w = self._read_rows(w, [self._tree_ids(start) for start, _ in histories])
            # event t moves the histories that have one; the others keep their slot
            longest = max(len(events) for _, events in histories)
            for t in range(longest):
                active = [n for n, (_, events) in enumerate(histories) if t < len(events)]
                rows = torch.tensor(active, device=self.device)  # (M,)
                moved = self._read_rows(w[rows], [self._event_ids(histories[n][1][t]) for n in active])
                w = w.index_copy(0, rows, moved)
        return list(w.unbind(0))

    def step_batch(self, states: Sequence[State], events: Sequence[Event | str]) -> list[State]:
        """``states[i]`` moved by ``events[i]``, for every i."""
        if len(states) != len(events):
            raise ValueError(f"{len(states)} states but {len(events)} events")
        if not self.batched:
            return [self.step(state, event) for state, event in zip(states, events)]
        if not states:
            return []
        with torch.no_grad():
            w = self._read_rows(torch.stack([self._state(s) for s in states]), [self._event_ids(e) for e in events])
        return list(w.unbind(0))

    def decode_batch(self, states: Sequence[State]) -> list[Tree | None]:
        """The tree each state stands for (``decode_tree`` of each), None where the readout is no tree."""
        if not self.batched:
            return [self.decode_tree(state) for state in states]
        if not states:
            return []
        model = self.model
        with torch.no_grad():
            ids = model.readout(model.view(torch.stack([self._state(s) for s in states]))).argmax(-1).tolist()  # (M, P)
        return [self._tree_of(row) for row in ids]

    def _read_rows(self, w: torch.Tensor, rows: list[list[int]]) -> torch.Tensor:
        """Slots w (M, C), one item per row given by its token ids -> slots (M, C)."""
        return self.model.read(w, torch.tensor(rows, dtype=torch.long, device=self.device))  # items (M, E)


def load_run(directory: Path | str, data: Path | str | None = None,
             device: torch.device | str = "cpu") -> TrackedRun:
    """The tracker a ``train-tracker`` run wrote into ``directory`` (its ``checkpoint.pt``), on
    ``device`` (``cpu``, ``cuda``, ``cuda:N``, ``mps`` or ``auto``; the checkpoint loads on any).
    With ``data``, the dataset it must have been trained on is checked (RunUnavailable if not).
    A run trained on programs comes back as a ``tracker.domain_run.DomainRun`` (the same calls).
    Loaded without running code the checkpoint may hold (torch's weights-only unpickler).
    ``training.device.DeviceUnavailable`` (one line) when the device is not on this machine."""
    device = resolve_device(device)
    run = RunCheckpoint.read(directory, "tracker", TrainConfig)
    run_dir, blob, config = run.run_dir, run.blob, run.config
    trained_on = run.trained_on
    if isinstance(trained_on.get("domain"), dict):  # a run on another domain than rewrite chains (programs)
        from tracker.domain_run import load_domain_run
        if data is not None:
            try:
                elsewhere = trained_elsewhere(blob.get("identity", {}), read_manifest(Path(data)))
            except DatasetError as e:
                raise RunUnavailable(f"dataset {data}: {e}") from None
            if elsewhere is not None:
                raise RunUnavailable(f"tracker {run_dir} was trained on another dataset ({elsewhere}), not {data}")
        return load_domain_run(directory, str(device), run)
    try:
        if data is not None:
            manifest = read_manifest(Path(data))
            domain = domain_of(manifest, str(manifest_path(data)))
            elsewhere = trained_elsewhere(blob.get("identity", {}), manifest)
            if elsewhere is not None:
                raise RunUnavailable(f"tracker {run_dir} was trained on another dataset ({elsewhere}), not {data}")
        else:
            domain = Domain(atoms=trained_on["atoms"], tier=trained_on["tier"], max_size=trained_on.get("max_size"))
    except DatasetError as e:
        raise RunUnavailable(f"dataset {data}: {e}") from None
    except (KeyError, TypeError, ValueError) as e:
        raise RunUnavailable(f"tracker {run_dir}: its checkpoint names no domain ({e}); pass data=") from None
    state = blob["model"]
    vocab = Vocab(domain.atom_names, domain.rules)
    arch_importable(run)

    def build() -> torch.nn.Module:
        # readout positions: the registers save theirs; the others read them off the readout's rows
        tree_len = int(state["positions"]) if "positions" in state else state["head.weight"].shape[0] // vocab.n_out
        return build_model(config.model, state["embed.item_tokens"], vocab.size, vocab.n_out, tree_len,
                           domain=vocab.domain)

    model = run.restored_model(build, "its weights do not fit its settings",
                               (KeyError, AttributeError, IndexError, RuntimeError, ValueError)).to(device)
    item_len = state["embed.item_tokens"].shape[1]  # item_tokens (I, E): E tokens per item
    return TrackedRun(model, config, vocab, domain, item_len, run.identity(trained_on), device)

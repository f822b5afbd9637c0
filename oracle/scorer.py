"""A finished ``train-oracle`` run as a verdict oracle for search: the probability that Lean
accepts each candidate event after histories given as (start, goal, events), for any trees
and events of the run's domain, without the dataset. Serves every arm but the transformer.

The arm runs exactly as in evaluation: the start tree read once, then the events (the ``truth``
arm is handed the tree the events lead to, replayed with ``chains.rewrite.rules``); P(accepted) is the
probability of the accepting classes (accepted, complete). The goal is not read: whether an
accepted event completes the proof is the comparison's business (``threshold``, stored with the
run by ``train-oracle``).
"""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import torch

from chains.rewrite.rules import Event, apply
from chains.rewrite.trees import Tree, tokens
from oracle.config import OracleConfig
from oracle.inference import restored_oracle
from tracker.losses import centred_cosine_distance
from training.checkpoint import RunCheckpoint
from training.device import resolve_device


class TrainedOracle:
    """``score(histories, candidates)[i][j]``: P(Lean accepts ``candidates[i][j]`` after
    ``histories[i]`` = (start, goal, events)). The arm reads and scores on ``device``. A run that
    cannot be read is RunUnavailable (one line); a run the scorer does not serve, ValueError."""

    def __init__(self, run: Path | str, device: torch.device | str = "cpu") -> None:
        self.run = Path(run)
        self.device = resolve_device(device)
        checkpoint = RunCheckpoint.read(self.run, "oracle", OracleConfig)
        blob = checkpoint.blob
        if "vocab" not in blob:  # a run on Mathlib probes keeps a text vocabulary instead
            raise ValueError(f"{self.run}: trained on Mathlib probes (Lean text); the scorer reads rewrite "
                             "chains' trees and events")
        self.config = checkpoint.config
        if self.config.arch == "transformer":
            raise ValueError(f"{self.run}: the scorer serves the arms with a slot or none; this run is a transformer")
        self.model, self.vocab, self.verdicts = restored_oracle(checkpoint)
        self.index = self.vocab.index()
        self.tree_len = blob["tree_len"]
        self.model.to(self.device)
        self.accepting = torch.tensor([not v.startswith("rejected") for v in self.verdicts], device=self.device)
        self.identity = blob["identity"]
        # complete by comparison: the threshold chosen when the run finished (None before that)
        self.threshold: float | None = (blob.get("comparison") or {}).get("threshold")

    def _tree_row(self, tree: Tree) -> list[int]:
        ids = [self.index[t] for t in tokens(tree)]
        return ids + [0] * (self.tree_len - len(ids))

    def _rows(self, rows: list[list[int]], width: int) -> torch.Tensor:
        out = torch.zeros(len(rows), width, dtype=torch.long)
        for i, row in enumerate(rows):
            if len(row) > width:
                raise ValueError(f"an item of {len(row)} tokens does not fit this oracle's {width}")
            out[i, : len(row)] = torch.tensor(row, dtype=torch.long)
        return out.to(self.device)  # (N, width), built on the CPU and moved once

    def _event_row(self, event: Event) -> list[int]:
        return [self.index[event.rule]] + [self.index[b] for b in event.path]

    @torch.no_grad()
    def _readers(self, histories: Sequence[tuple[Tree, Tree, Sequence[Event]]]) -> torch.Tensor:
        """r (N, C) after each history, as the arm reads it."""
        model, arch = self.model, self.config.arch
        n, c = len(histories), self.config.width
        if arch == "blind":
            return model.constant.expand(n, c)
        tracker = model.tracker
        width = tracker.embed.item_tokens.shape[1]
        if arch == "truth":
            rows = []
            for start, goal, events in histories:
                tree = start
                for event in events:
                    tree = apply(tree, event)
                    if tree is None:
                        raise ValueError(f"event {event} does not apply on the history's way; the truth arm has no tree")
                rows.append(self._tree_row(tree))
            return tracker.view(tracker.read(tracker.initial_state(n), self._rows(rows, width)))
        # the recurrence (and the control): the proof state once, then the events, in lockstep
        w = tracker.read(tracker.initial_state(n), self._rows([self._tree_row(s) for s, _, _ in histories], width))
        longest = max((len(ev) for _, _, ev in histories), default=0)
        for t in range(longest):
            live = torch.tensor([len(ev) > t for _, _, ev in histories], device=self.device)
            if not bool(live.any()):
                break
            rows = self._rows([self._event_row(ev[t]) for (_, _, ev), on in zip(histories, live) if on], width)
            w = w.clone()
            w[live] = tracker.read(w[live], rows)
        return w if arch == "probe-slot" else tracker.view(w)

    @torch.no_grad()
    def score(self, histories: Sequence[tuple[Tree, Tree, Sequence[Event]]],
              candidates: Sequence[Sequence[Event]]) -> list[list[float]]:
        if len(histories) != len(candidates):
            raise ValueError("one list of candidates per history")
        if not histories:
            return []
        r = self._readers(histories)  # (N, C)
        probe_len = self.model.probe_tokens.shape[1]
        width = max((len(c) for c in candidates), default=0)
        toks = torch.zeros(len(histories), max(width, 1), probe_len, dtype=torch.long, device=self.device)
        for i, events in enumerate(candidates):
            if events:
                toks[i, : len(events)] = self._rows([self._event_row(e) for e in events], probe_len)
        p = self.model.score_tokens(r, toks).softmax(-1)[..., self.accepting].sum(-1)  # (N, P)
        return [p[i, : len(events)].tolist() for i, events in enumerate(candidates)]

    def describe(self) -> dict:
        return {"kind": "train-oracle", "run": str(self.run), "arch": self.config.arch,
                "objective": self.config.objective, "seed": self.config.seed, "dataset": self.identity["dataset"]}


class LatentPlanner:
    """A finished recurrence run as a planner that never holds a tree: ``start`` reads trees
    into slots, ``goal`` reads goals as starts into views, ``expand`` moves slots by every
    candidate event with the recurrence's own transition and says, for each, P(Lean accepts it)
    and the imagined successor's distance to a goal. The comparison's threshold (``threshold``)
    decides *complete* and when two imagined states are one."""

    def __init__(self, oracle: TrainedOracle) -> None:
        if oracle.config.arch != "recurrence":
            raise ValueError(f"{oracle.run}: planning in the oracle's imagination needs a recurrence run "
                             f"(its slot and transition); this one is {oracle.config.arch}")
        if oracle.threshold is None:
            raise ValueError(f"{oracle.run}: no comparison threshold is stored with the run; finish it with "
                             "train-oracle (it chooses one on its validation chains)")
        self.oracle, self.threshold = oracle, oracle.threshold
        self.model = oracle.model.recurrence

    @torch.no_grad()
    def start(self, trees: Sequence[Tree]) -> torch.Tensor:
        """trees -> slots w = f(w_0, tree) (N, C)."""
        width = self.model.embed.item_tokens.shape[1]
        rows = self.oracle._rows([self.oracle._tree_row(t) for t in trees], width)
        return self.model.read(self.model.initial_state(len(trees)), rows)

    @torch.no_grad()
    def goal(self, trees: Sequence[Tree]) -> torch.Tensor:
        """trees read as starts -> views (N, C)."""
        return self.model.view(self.start(trees))

    @torch.no_grad()
    def view(self, slots: torch.Tensor) -> torch.Tensor:
        return self.model.view(slots)

    @torch.no_grad()
    def expand(self, slots: torch.Tensor, goals: torch.Tensor, events: Sequence[Event]
               ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
        """slots (N, C), goal views (N, C), E candidate events -> P(accepted) (N, E), the
        imagined successors' slots (N, E, C) and views (N, E, C), and their distance to the goal (N, E)."""
        probe_len = self.oracle.model.probe_tokens.shape[1]
        toks = self.oracle._rows([self.oracle._event_row(e) for e in events], probe_len)  # (E, Ep)
        toks = toks.expand(len(slots), *toks.shape)  # (N, E, Ep)
        z = self.model.view(slots)
        p = self.oracle.model.score_tokens(z, toks).softmax(-1)[..., self.oracle.accepting].sum(-1)  # (N, E)
        n, e = toks.shape[:2]
        w = self.model.read(slots.unsqueeze(1).expand(n, e, -1).reshape(n * e, -1), toks.reshape(n * e, -1))
        w = w.view(n, e, -1)
        views = self.model.view(w)
        return p, w, views, centred_cosine_distance(views, goals.unsqueeze(1).expand_as(views))

    def describe(self) -> dict:
        return {**self.oracle.describe(), "threshold": self.threshold}

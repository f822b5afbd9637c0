"""Nerode self-distillation for the step-by-step model: a long history taught by a short equivalent one.

For a long history u, a certified short equivalent v (the same start, the same end tree) and a
continuation w, the model after u w is trained to predict what it predicts after v w, under
stop-gradient: KL(sg p(. | v w) || p(. | u w)) at every token it writes during w. Nothing else
supervises the long history: the states in the sequence u w are the model's own writing (its
free run along u, then the teacher's writing along w), and the targets are the teacher's
distributions. No true tree of a long history reaches the loss; only the certificate does.

Training runs in rounds of doubling length (``DistillSchedule``): round k draws u of (2^(k-1) n,
2^k n] events, n the training chains' length, so a model exact to length m is taught 2m by
pairs of lengths 2m and at most n; the ordinary loss on the short training chains goes on beside.
The teacher of a round is the model as the round began, frozen (``LongHistories.teach``), and
saved with the checkpoints so that a resumed run has the same one.

The pairs (``PairSampler``): u is a uniformly random walk from a uniformly random start tree (as
the dataset's chains are drawn); v is a shortest history from the same start to u's end tree
(breadth-first over the rewrite graph); w is a uniformly random walk of events that apply after
both u and v, of 1 to n - |v| events, so that the teacher reads at most n events (where it was
trained). The control (``control=True``) distils from a short history that ends at another tree
(a uniformly random tree within n events of the start): the same cost, inequivalent pairs.
The ceiling (``labelled``) trains on the true trees of u w instead.

Every step of u, v and w is certified through the store before a pair is used (``PairCertifier``:
``leanbridge.confirm.StepCertifier``, the store first, Lean for the rest): u and v are equivalent
because each is a chain of certified equations from one start, ending at one tree.
"""
from __future__ import annotations

import copy
import random
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
import torch
import torch.nn.functional as F

from chains.rewrite.sampling import random_walk
from chains.rewrite.space import StateSpace
from leanbridge.confirm import StepCertifier
from stepwise.data import Chain, StepwiseVocab, sequence
from stepwise.evaluate import free_run, free_run_cached
from stepwise.model import KVCache, StepwiseModel
from stepwise.sequences import PAD_ID, written_sequence

DISTILLING = ("self-distill", "control")  # the objectives that draw a short history for a teacher


@dataclass(frozen=True)
class LongChain:
    """A long walk drawn for one step (interned ids of a ``StateSpace``; states[0] is the start)."""

    states: tuple[int, ...]  # len(events) + 1
    events: tuple[int, ...]


@dataclass(frozen=True)
class DistillPair:
    """A long history (a step's chain cut after ``cut`` events), a short one from the same start,
    and a continuation that applies after both."""

    chain: int  # which of the step's long chains
    cut: int  # u: its first ``cut`` events
    long_end: int  # the tree u ends at
    short_states: tuple[int, ...]  # v's states, the same start first
    short_events: tuple[int, ...]
    then_events: tuple[int, ...]  # w, applied after either

    @property
    def equivalent(self) -> bool:
        """u and v end at the same tree."""
        return self.long_end == self.short_states[-1]


@dataclass(frozen=True)
class DistillSchedule:
    """Which long histories a step draws: none before the rounds, then round k's lengths."""

    steps: int  # the run's steps; the rounds are its last rounds * round_steps
    rounds: int
    round_steps: int
    base: int  # n: the training chains' length (events)

    def round(self, step: int) -> int:
        """0 before the rounds, then 1..rounds."""
        first = self.steps - self.rounds * self.round_steps
        return 0 if step < first else min(self.rounds, (step - first) // self.round_steps + 1)

    def lengths(self, step: int) -> tuple[int, int] | None:
        """(shortest, longest) events of u at ``step``, None before the rounds."""
        k = self.round(step)
        return None if k == 0 else (self.base * 2 ** (k - 1) + 1, self.base * 2 ** k)


class PairSampler:
    """Draws ``DistillPair``s over one rewrite ``space`` (see the module)."""

    def __init__(self, space: StateSpace, base: int) -> None:
        self.space, self.base = space, base
        self._paths: dict[int, dict[int, tuple[int, int]]] = {}  # start -> tree -> (previous tree, event id)

    def _reach(self, start: int) -> dict[int, tuple[int, int]]:
        """Breadth-first parents of every tree reachable from ``start`` (its equivalence class)."""
        parents = self._paths.get(start)
        if parents is None:
            parents, queue = {start: (-1, -1)}, deque([start])
            while queue:
                here = queue.popleft()
                for event, there in zip(*self.space.moves(here)):
                    if there not in parents:
                        parents[there] = (here, event)
                        queue.append(there)
            self._paths[start] = parents
        return parents

    def shortest(self, start: int, end: int) -> tuple[tuple[int, ...], tuple[int, ...]]:
        """(states, event ids) of a shortest history from ``start`` to ``end``."""
        parents = self._reach(start)
        states, events = [end], []
        while states[-1] != start:
            before, event = parents[states[-1]]
            states.append(before)
            events.append(event)
        return tuple(reversed(states)), tuple(reversed(events))

    def _elsewhere(self, rng: random.Random, start: int, end: int) -> int | None:
        """A uniformly random tree within ``base`` events of ``start``, other than ``end``."""
        near = sorted(t for t in self._reach(start) if t != end and len(self.shortest(start, t)[1]) <= self.base)
        return rng.choice(near) if near else None

    def _joint_walk(self, rng: random.Random, a: int, b: int, length: int) -> tuple[int, ...]:
        """Up to ``length`` uniformly random events that apply after both ``a`` and ``b`` in turn
        (fewer where none does)."""
        events = []
        for _ in range(length):
            ea, na = self.space.moves(a)
            eb, nb = self.space.moves(b)
            after_b = dict(zip(eb, nb))
            common = [(e, n) for e, n in zip(ea, na) if e in after_b]
            if not common:
                break
            event, a = rng.choice(common)
            b = after_b[event]
            events.append(event)
        return tuple(events)

    def draw(self, rng: random.Random, chains: int, cuts: int, lengths: tuple[int, int], control: bool = False
             ) -> tuple[list[LongChain], list[DistillPair]]:
        """``chains`` walks from uniformly random start trees, each cut after ``cuts`` uniformly random
        numbers of events in ``lengths`` (with repeats): one pair per cut, whose v ends where u does
        (at another tree for a control pair). A walk has one event more than the longest cut, so
        that the state at every cut is closed in the sequence read before the next event."""
        walks, pairs = [], []
        for n in range(chains):
            walk = random_walk(self.space, rng, self.space.random_start(rng), lengths[1] + 1)
            walks.append(LongChain(walk.states, walk.ids))
            start = walk.states[0]
            for _ in range(cuts):
                while True:
                    cut = rng.randint(*lengths)
                    end = walk.states[cut]
                    target = self._elsewhere(rng, start, end) if control else end
                    if target is None:
                        continue  # a start whose class is one tree: no inequivalent short history
                    states, events = self.shortest(start, target)
                    then = self._joint_walk(rng, end, target, rng.randint(1, max(1, self.base - len(events))))
                    if then:
                        pairs.append(DistillPair(n, cut, end, states, events, then))
                        break
        return walks, pairs


class PairCertifier:
    """Certifies every step of the long chains, of each v, and of each w after u and after v,
    before they are used."""

    def __init__(self, steps: StepCertifier) -> None:
        self.steps = steps

    def confirm(self, chains: Sequence[LongChain], pairs: Sequence[DistillPair]) -> None:
        """StepNotCertified naming the first step Lean did not certify."""
        space = self.steps.space
        runs = [(chain.states, chain.events) for chain in chains]
        for pair in pairs:
            runs += [(pair.short_states, pair.short_events), _after(space, pair.long_end, pair.then_events),
                     _after(space, pair.short_states[-1], pair.then_events)]
        for states, events in runs:
            if events:
                self.steps.confirm(np.array([states]), np.array([events]), 1)


def _after(space: StateSpace, start: int, events: Sequence[int]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    states = [start]
    for event in events:
        states.append(dict(zip(*space.moves(states[-1])))[event])
    return tuple(states), tuple(events)


def _chain(space: StateSpace, start: int, *events: Sequence[int]) -> Chain:
    """The (tree, events) chain of interned ids."""
    return space.trees[start], tuple(space.events[e] for part in events for e in part)


def _prefix_tokens(vocab: StepwiseVocab, space: StateSpace, start: int, events: Sequence[int],
                   states: Sequence[Sequence[int]]) -> list[int]:
    """How many tokens the sequence has read after each event's state and its EOS: [0] is the
    start's tokens and EOS, [j] after the j-th event."""
    ends = [len(vocab.tree_ids(space.trees[start])) + 1]
    for event, state in zip(events, states):
        ends.append(ends[-1] + len(vocab.event_ids(space.events[event])) + 1 + len(state) + 1)
    return ends


def _tails(model: StepwiseModel, cache: KVCache, rows: Sequence[int], prefixes: Sequence[int],
           tails: Sequence[Sequence[int]], written: Sequence[Sequence[bool]]) -> torch.Tensor:
    """(M, V) the model's logits for every written token of each tail, read after its row's
    prefix in ``cache`` (copied; a gradient flows through the tail's tokens, not the prefix's)."""
    device = cache.keys[0].device
    out = []
    for row, prefix, tail, marks in zip(rows, prefixes, tails, written):
        logits = model.read(torch.tensor([tail], device=device), cache.prefix(row, prefix, len(tail)))[0]  # (T, V)
        out.append(logits[[i - 1 for i, m in enumerate(marks) if m]])  # logit i - 1 predicts token i
    return torch.cat(out)


def distill_loss(model: StepwiseModel, teacher: StepwiseModel, vocab: StepwiseVocab, space: StateSpace,
                 chains: Sequence[LongChain], pairs: Sequence[DistillPair], cap: int) -> torch.Tensor:
    """Mean KL(p_teacher(. | v w) || p_model(. | u w)) over the tokens written during each pair's w
    (see the module). The model runs free along each long chain, the teacher along each v w, under
    no-grad; the model then reads u (its own writing, from its cache) and w as the teacher wrote it."""
    device = next(model.parameters()).device
    students, cache = free_run_cached(model, vocab, [_chain(space, c.states[0], c.events) for c in chains], cap,
                                      device)
    ends = [_prefix_tokens(vocab, space, c.states[0], c.events, r.states) for c, r in zip(chains, students)]
    teachers = free_run(teacher, vocab, [_chain(space, p.short_states[0], p.short_events, p.then_events)
                                         for p in pairs], cap, device)
    t_rows, tails, marks = [], [], []
    for pair, reader in zip(pairs, teachers):
        ids, written = written_sequence(vocab, _chain(space, pair.short_states[0], pair.short_events,
                                                      pair.then_events), reader.states)
        tail = len(ids) - _prefix_tokens(vocab, space, pair.short_states[0], pair.short_events, reader.states)[-1]
        t_rows.append(ids)
        tails.append(ids[-tail:])
        marks.append(written[-tail:])
    with torch.no_grad():
        t_logits = teacher(_padded(t_rows, device))  # (P, Lt, V)
        target = torch.cat([t_logits[b, len(row) - len(tail) + torch.tensor([i - 1 for i, m in enumerate(mark) if m])]
                            for b, (row, tail, mark) in enumerate(zip(t_rows, tails, marks))])  # (M, V)
    student = _tails(model, cache, [p.chain for p in pairs], [ends[p.chain][p.cut] for p in pairs], tails, marks)
    return F.kl_div(F.log_softmax(student, -1), F.log_softmax(target, -1), log_target=True, reduction="batchmean")


def labelled_loss(model: StepwiseModel, vocab: StepwiseVocab, space: StateSpace, chains: Sequence[LongChain],
                  pairs: Sequence[DistillPair]) -> torch.Tensor:
    """The ceiling: the cross-entropy of the true trees written during each pair's w, read after
    the true sequence of u (labels of long histories), with the same reach of the gradient."""
    device = next(model.parameters()).device
    rows = [sequence(vocab, _chain(space, c.states[0], c.events))[0] for c in chains]
    cache = model.start(len(rows), max(map(len, rows)))
    with torch.no_grad():
        model.read(_padded(rows, device), cache)
    truth = [[vocab.tree_ids(space.trees[s]) for s in c.states[1:]] for c in chains]
    ends = [_prefix_tokens(vocab, space, c.states[0], c.events, states) for c, states in zip(chains, truth)]
    tails, marks, targets = [], [], []
    for pair in pairs:
        states, events = _after(space, pair.long_end, pair.then_events)
        ids, written = written_sequence(vocab, _chain(space, pair.long_end, events),
                                        [vocab.tree_ids(space.trees[s]) for s in states[1:]])
        tail = ids[len(vocab.tree_ids(space.trees[pair.long_end])) + 1:]
        mark = written[len(ids) - len(tail):]
        tails.append(tail)
        marks.append(mark)
        targets += [t for t, m in zip(tail, mark) if m]
    logits = _tails(model, cache, [p.chain for p in pairs], [ends[p.chain][p.cut] for p in pairs], tails, marks)
    return F.cross_entropy(logits, torch.tensor(targets, device=device))


def _padded(rows: Sequence[Sequence[int]], device: torch.device) -> torch.Tensor:
    """(B, L) ids, PAD_ID after each row's end."""
    out = torch.full((len(rows), max(map(len, rows))), PAD_ID, dtype=torch.long)
    for b, row in enumerate(rows):
        out[b, :len(row)] = torch.tensor(row)
    return out.to(device)


class LongHistories:
    """A run's term on long histories: at each step of the rounds, ``chains`` long walks cut at
    ``cuts`` places each, drawn by a generator seeded by (seed, step) (a resumed run draws what the
    uninterrupted one would), certified, and scored as the objective says."""

    def __init__(self, objective: str, schedule: DistillSchedule, seed: int, chains: int, cuts: int, weight: float,
                 vocab: StepwiseVocab, space: StateSpace, certifier: PairCertifier, cap: int) -> None:
        if objective not in (*DISTILLING, "labelled"):
            raise ValueError(f"no long histories for the objective {objective!r}")
        self.objective, self.schedule, self.seed, self.weight = objective, schedule, seed, weight
        self.chains, self.cuts = chains, cuts
        self.vocab, self.space, self.certifier, self.cap = vocab, space, certifier, cap
        self.sampler = PairSampler(space, schedule.base)
        self.teacher: StepwiseModel | None = None  # the model as the current round began, frozen
        self.teacher_round = 0

    def teach(self, model: StepwiseModel, step: int) -> StepwiseModel:
        """The round's teacher: the model as it was at the round's first step, frozen (a live
        teacher moves with every update and, measured, drags the model off what it had learned)."""
        k = self.schedule.round(step)
        if self.teacher is None or self.teacher_round != k:
            self.teacher = copy.deepcopy(model).eval().requires_grad_(False)
            self.teacher_round = k
        return self.teacher

    def saved(self) -> dict | None:
        """The teacher for a checkpoint (its round and weights), None before the rounds."""
        return None if self.teacher is None else {"round": self.teacher_round, "model": self.teacher.state_dict()}

    def restore(self, saved: dict | None, model: StepwiseModel) -> None:
        """The teacher a checkpoint saved (``saved``), as a frozen copy of ``model``'s architecture."""
        if saved is not None:
            self.teacher = copy.deepcopy(model).eval().requires_grad_(False)
            self.teacher.load_state_dict(saved["model"])
            self.teacher_round = saved["round"]

    def draw(self, step: int) -> tuple[list[LongChain], list[DistillPair]]:
        """The step's certified chains and pairs (none before the rounds)."""
        lengths = self.schedule.lengths(step)
        if lengths is None:
            return [], []
        rng = random.Random(f"{self.seed}:long:{step}")
        chains, pairs = self.sampler.draw(rng, self.chains, self.cuts, lengths, control=self.objective == "control")
        self.certifier.confirm(chains, pairs)
        return chains, pairs

    def losses(self, model: StepwiseModel, step: int) -> dict[str, torch.Tensor]:
        """{"distill" or "labelled": the weighted term}, or {} before the rounds."""
        chains, pairs = self.draw(step)
        if not pairs:
            return {}
        if self.objective == "labelled":
            return {"labelled": self.weight * labelled_loss(model, self.vocab, self.space, chains, pairs)}
        teacher = self.teach(model, step)
        return {"distill": self.weight * distill_loss(model, teacher, self.vocab, self.space, chains, pairs,
                                                      self.cap)}

"""Nerode self-distillation for the step-by-step model: a long history taught by a short equivalent one.

For a long history u, a certified short equivalent v (the same start, the same end state) and a
continuation w, the model after u w is trained to predict what it predicts after v w, under
stop-gradient: KL(sg p(. | v w) || p(. | u w)) at every token it writes during w. Nothing else
supervises the long history: the states in the sequence u w are the model's own writing (its
free run along u, then the teacher's writing along w), and the targets are the teacher's
distributions. No true state of a long history reaches the loss; only the certificate does.

Training runs in rounds of doubling length (``DistillSchedule``): round k draws u of (2^(k-1) n,
2^k n] events, n the training chains' length, so a model exact to length m is taught 2m by
pairs of lengths 2m and at most n; the ordinary loss on the short training chains goes on beside.
The teacher of a round is the model as the round began, frozen (``LongHistories.teach``), and
saved with the checkpoints so that a resumed run has the same one.

The pairs come from the dataset's domain (a ``PairSource``): over rewrite trees
``stepwise.rewrite_pairs`` (v a shortest history, breadth-first over the rewrite graph), over any
other domain ``stepwise.domain_pairs`` (v the domain's own short history, or one found by search).
Either certifies every step of u, v and w (after u and after v) through the certificate store
before a pair is used: u and v are equivalent because each is a chain of certified steps from one
start, ending at one state. The control (``control=True``) distils from a short history that ends
at another state: the same cost, inequivalent pairs. The ceiling (``labelled``) trains on the true
states of u w instead.

In the state form (``context="state"``, ``stepwise.windows``) the model after u reads its last written
state alone, so distilling its writing along w towards the teacher's after v could only pull the
step from that state towards another state's successor; the settings refuse self-distill and control
there (``stepwise.config``). The ceiling trains on w's windows, the first reading the true state u
ends at (``labelled_windows_loss``).
"""
from __future__ import annotations

import copy
import random
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Protocol

import torch
import torch.nn.functional as F

from stepwise.evaluate import free_run, free_run_cached
from stepwise.model import KVCache, StepwiseModel
from stepwise.sequences import PAD_ID, padded, written_loss, written_sequence
from stepwise.windows import chain_windows

DISTILLING = ("self-distill", "control")  # the objectives that draw a short history for a teacher

Chain = tuple[object, tuple]  # a start state and the events applied to it in turn
Replay = Callable[[Chain], list]  # a chain -> the true state after each of its events


@dataclass(frozen=True)
class LongChain:
    """A long walk drawn for one step: its states (states[0] the start) and events, as the domain's
    values (a rewrite sampler holds them as interned ids until it hands them on)."""

    states: tuple  # len(events) + 1
    events: tuple


@dataclass(frozen=True)
class DistillPair:
    """A long history (a step's chain cut after ``cut`` events), a short one from the same start,
    and a continuation that applies after both."""

    chain: int  # which of the step's long chains
    cut: int  # u: its first ``cut`` events
    long_end: object  # the state u ends at
    short_states: tuple  # v's states, the same start first
    short_events: tuple
    then_events: tuple  # w, applied after either

    @property
    def equivalent(self) -> bool:
        """u and v end at the same state."""
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


class PairSource(Protocol):
    """Where a run's long histories come from: ``chains`` walks from random starts, each cut after
    ``cuts`` random numbers of events in ``lengths``, one pair per cut (v ending where u does, or
    elsewhere for the control), every step certified; the walks and pairs as the domain's values."""

    def draw(self, rng: random.Random, chains: int, cuts: int, lengths: tuple[int, int], control: bool = False
             ) -> tuple[list[LongChain], list[DistillPair]]: ...


def _joined(start, *parts: Sequence) -> Chain:
    """The chain from ``start`` through the events of ``parts`` in turn."""
    return start, tuple(e for part in parts for e in part)


def _prefix_tokens(vocab, start, events: Sequence, states: Sequence[Sequence[int]]) -> list[int]:
    """How many tokens the sequence has read after each event's state and its EOS: [0] is the
    start's tokens and EOS, [j] after the j-th event."""
    ends = [len(vocab.start_ids(start)) + 1]
    for event, state in zip(events, states):
        ends.append(ends[-1] + len(vocab.event_ids(event)) + 1 + len(state) + 1)
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


def distill_loss(model: StepwiseModel, teacher: StepwiseModel, vocab, chains: Sequence[LongChain],
                 pairs: Sequence[DistillPair], cap: int) -> torch.Tensor:
    """Mean KL(p_teacher(. | v w) || p_model(. | u w)) over the tokens written during each pair's w
    (see the module). The model runs free along each long chain, the teacher along each v w, under
    no-grad; the model then reads u (its own writing, from its cache) and w as the teacher wrote it."""
    device = next(model.parameters()).device
    students, cache = free_run_cached(model, vocab, [_joined(c.states[0], c.events) for c in chains], cap, device)
    ends = [_prefix_tokens(vocab, c.states[0], c.events, r.states) for c, r in zip(chains, students)]
    teachers = free_run(teacher, vocab, [_joined(p.short_states[0], p.short_events, p.then_events) for p in pairs],
                        cap, device)
    t_rows, tails, marks = [], [], []
    for pair, reader in zip(pairs, teachers):
        ids, written = written_sequence(vocab, _joined(pair.short_states[0], pair.short_events, pair.then_events),
                                        reader.states)
        tail = len(ids) - _prefix_tokens(vocab, pair.short_states[0], pair.short_events, reader.states)[-1]
        t_rows.append(ids)
        tails.append(ids[-tail:])
        marks.append(written[-tail:])
    with torch.no_grad():
        t_logits = teacher(_padded(t_rows, device))  # (P, Lt, V)
        target = torch.cat([t_logits[b, len(row) - len(tail) + torch.tensor([i - 1 for i, m in enumerate(mark) if m])]
                            for b, (row, tail, mark) in enumerate(zip(t_rows, tails, marks))])  # (M, V)
    student = _tails(model, cache, [p.chain for p in pairs], [ends[p.chain][p.cut] for p in pairs], tails, marks)
    return F.kl_div(F.log_softmax(student, -1), F.log_softmax(target, -1), log_target=True, reduction="batchmean")


def labelled_loss(model: StepwiseModel, vocab, replay: Replay, chains: Sequence[LongChain],
                  pairs: Sequence[DistillPair]) -> torch.Tensor:
    """The ceiling: the cross-entropy of the true states written during each pair's w, read after
    the true sequence of u (labels of long histories), with the same reach of the gradient."""
    device = next(model.parameters()).device
    truth = [[vocab.state_ids(s) for s in c.states[1:]] for c in chains]
    rows = [written_sequence(vocab, _joined(c.states[0], c.events), states)[0] for c, states in zip(chains, truth)]
    cache = model.start(len(rows), max(map(len, rows)))
    with torch.no_grad():
        model.read(_padded(rows, device), cache)
    ends = [_prefix_tokens(vocab, c.states[0], c.events, states) for c, states in zip(chains, truth)]
    tails, marks, targets = [], [], []
    for pair in pairs:
        chain = (pair.long_end, pair.then_events)
        ids, written = written_sequence(vocab, chain, [vocab.state_ids(s) for s in replay(chain)])
        tail = ids[len(vocab.start_ids(pair.long_end)) + 1:]
        mark = written[len(ids) - len(tail):]
        tails.append(tail)
        marks.append(mark)
        targets += [t for t, m in zip(tail, mark) if m]
    logits = _tails(model, cache, [p.chain for p in pairs], [ends[p.chain][p.cut] for p in pairs], tails, marks)
    return F.cross_entropy(logits, torch.tensor(targets, device=device))


def labelled_windows_loss(model: StepwiseModel, vocab, replay: Replay, pairs: Sequence[DistillPair]) -> torch.Tensor:
    """The ceiling in the state form: the cross-entropy of the true states written during each
    pair's w, window by window, the first reading the true state u ends at."""
    device = next(model.parameters()).device
    windows = [w for p in pairs for w in chain_windows(vocab, (p.long_end, p.then_events),
                                                         replay((p.long_end, p.then_events)))]
    ids, written = (t.to(device) for t in padded(windows))  # (P, Lw) each
    return written_loss(model(ids), ids, written)


def _padded(rows: Sequence[Sequence[int]], device: torch.device) -> torch.Tensor:
    """(B, L) ids, PAD_ID after each row's end."""
    out = torch.full((len(rows), max(map(len, rows))), PAD_ID, dtype=torch.long)
    for b, row in enumerate(rows):
        out[b, :len(row)] = torch.tensor(row)
    return out.to(device)


class LongHistories:
    """A run's term on long histories: at each step of the rounds, ``chains`` long walks cut at
    ``cuts`` places each, drawn from ``source`` by a generator seeded by (seed, step) (a resumed run
    draws what the uninterrupted one would), certified, and scored as the objective says
    (``replay`` gives the ceiling its labels)."""

    def __init__(self, objective: str, schedule: DistillSchedule, seed: int, chains: int, cuts: int, weight: float,
                 vocab, source: PairSource, replay: Replay, cap: int, context: str = "history") -> None:
        if objective not in (*DISTILLING, "labelled"):
            raise ValueError(f"no long histories for the objective {objective!r}")
        if context == "state" and objective != "labelled":
            raise ValueError(f"no {objective} in the state form: the model after u reads its last written state alone")
        self.objective, self.schedule, self.seed, self.weight = objective, schedule, seed, weight
        self.chains, self.cuts = chains, cuts
        self.vocab, self.source, self.replay, self.cap = vocab, source, replay, cap
        self.context = context  # "history", or "state": the ceiling's windows (``labelled_windows_loss``)
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
        return self.source.draw(rng, self.chains, self.cuts, lengths, control=self.objective == "control")

    def losses(self, model: StepwiseModel, step: int) -> dict[str, torch.Tensor]:
        """{"distill" or "labelled": the weighted term}, or {} before the rounds."""
        chains, pairs = self.draw(step)
        if not pairs:
            return {}
        if self.objective == "labelled" and self.context == "state":
            return {"labelled": self.weight * labelled_windows_loss(model, self.vocab, self.replay, pairs)}
        if self.objective == "labelled":
            return {"labelled": self.weight * labelled_loss(model, self.vocab, self.replay, chains, pairs)}
        teacher = self.teach(model, step)
        return {"distill": self.weight * distill_loss(model, teacher, self.vocab, chains, pairs, self.cap)}

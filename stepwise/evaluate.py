"""Free-running evaluation of the step-by-step model on the held-out test chains.

The model reads the start tree and the first event, then writes the state greedily (the argmax
token each time) until its EOS; the next event, which is given, is appended after what it wrote,
and so on: its own writing stays in context, never the true tree. A state that runs past
``max_state_tokens + 1`` written tokens is cut there and closed by a given EOS (it is wrong).
B chains run together, one token per chain per forward pass through the model's key-value cache;
each chain follows its own script (reading given tokens, or writing), so no chain waits for another.

In the state form (``context="state"``, ``stepwise.windows``) a history is run window by window: for
each event a fresh cache reads what the model wrote for the state before (the start's state tokens
at the first event), EOS, the event and SEP, and the model writes the state after; B chains run each
window together. Nothing but the model's own writing carries the state from one window to the next.

Per test length, on its first N chains: ``exact`` (the last written state is the true end tree),
``right_throughout`` (every written state is right), ``first_wrong`` (over the chains that go
wrong: how many, and the quartiles of the first event after which the written state is wrong,
counted from 1), ``tokens_per_event`` (tokens written per event, each state's EOS included) and
``seconds``. The truth is the dataset's events replayed by its domain (``data.replay``).
"""
from __future__ import annotations

import time
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any, Protocol

import torch

from leanbridge.cliutil import progress_bar
from stepwise.config import CONTEXTS
from stepwise.data import Chain, StepwiseData, StepwiseVocab
from stepwise.sequences import PAD_ID
from stepwise.windows import window_prompt


class StepModel(Protocol):
    """What free-running reads: a cache for B sequences, and the next token's logits (B, V) after
    reading one token (B,) per sequence. ``stepwise.model.StepwiseModel`` is one."""

    def start(self, batch: int, capacity: int) -> Any: ...

    def step(self, ids: torch.Tensor, cache: Any) -> torch.Tensor: ...


class WindowModel(StepModel, Protocol):
    """What free-running in the state form reads: a ``StepModel`` that also reads T tokens (B, T) per
    sequence in one pass, returning the logits after each (B, T, V). ``StepwiseModel`` is one."""

    def read(self, ids: torch.Tensor, cache: Any) -> torch.Tensor: ...


DEFAULT_LONGEST = 1_024  # events: longer test chains (~8 tokens an event on tier 1) are evaluated only when asked


@dataclass(frozen=True)
class StepwiseEvalConfig:
    lengths: tuple[int, ...] | None = None  # the test lengths evaluated; None: the dataset's up to DEFAULT_LONGEST
    chains: int = 32  # the first N chains of each length
    batch: int = 8  # chains run together (the cache holds batch x depth x 2 x tokens x width floats)

    def __post_init__(self) -> None:
        if self.chains < 1 or self.batch < 1:
            raise ValueError("the evaluation needs at least one chain and a batch of at least one")


@dataclass
class Reader:
    """One chain's progress through free-running: what it still reads, and what it wrote."""

    vocab: StepwiseVocab
    events: deque  # the events still to come, each its token ids
    pending: deque  # given tokens not yet read
    cap: int  # the most tokens of one state before it is cut
    states: list[tuple[int, ...]] = field(default_factory=list)  # the state written after each event
    written: list[int] = field(default_factory=list)  # tokens written per event, EOS included
    current: list[int] = field(default_factory=list)  # the state being written
    done: bool = False

    @classmethod
    def of(cls, vocab: StepwiseVocab, chain: Chain, cap: int) -> Reader:
        events = deque((*vocab.event_ids(e), vocab.sep) for e in chain[1])
        reader = cls(vocab, events, deque([*vocab.start_ids(chain[0]), vocab.eos]), cap, done=not events)
        reader.pending.extend(reader.events.popleft() if events else ())
        return reader

    @property
    def bound(self) -> int:
        """The most tokens this chain can put in the cache."""
        return len(self.pending) + sum(len(e) for e in self.events) + (len(self.events) + 1) * (self.cap + 1)

    def next_token(self, wrote: int) -> int:
        """The token to read next, after the model's choice ``wrote`` for this chain: a given
        token while it reads, its own choice while it writes, PAD once the chain has ended."""
        if self.done:
            return PAD_ID
        if self.pending:
            return self.pending.popleft()
        eos = wrote == self.vocab.eos
        if not eos:
            self.current.append(wrote)
        if eos or len(self.current) >= self.cap:
            self.states.append(tuple(self.current))
            self.written.append(len(self.current) + eos)
            self.current = []
            if not eos:  # cut: the state is closed by a given EOS
                self.pending.append(self.vocab.eos)
            if not self.events:
                self.done = True
                return PAD_ID
            self.pending.extend(self.events.popleft())
        return wrote


def free_run(model: StepModel, vocab: StepwiseVocab, chains: Sequence[Chain], cap: int,
             device: torch.device | str = "cpu") -> list[Reader]:
    """Every chain of ``chains`` run free together (see the module); each Reader holds what its
    chain's model wrote after each event."""
    return free_run_cached(model, vocab, chains, cap, device)[0]


@torch.no_grad()
def free_run_cached(model: StepModel, vocab: StepwiseVocab, chains: Sequence[Chain], cap: int,
                    device: torch.device | str = "cpu") -> tuple[list[Reader], Any]:
    """``free_run``, and the model's cache after it: row b holds chain b's sequence as it was read
    (the start, each event, what the model wrote for it and its EOS; the last EOS unread)."""
    readers = [Reader.of(vocab, chain, cap) for chain in chains]
    cache = model.start(len(readers), max(r.bound for r in readers))
    feed = [r.pending.popleft() if r.pending else PAD_ID for r in readers]
    while not all(r.done for r in readers):
        logits = model.step(torch.tensor(feed, dtype=torch.long, device=device), cache)  # (B, V)
        feed = [r.next_token(w) for r, w in zip(readers, logits.argmax(-1).tolist())]
    return readers, cache


@torch.no_grad()
def free_run_windows(model: WindowModel, vocab: StepwiseVocab, chains: Sequence[Chain], cap: int,
                     device: torch.device | str = "cpu") -> list[Reader]:
    """Every chain of ``chains`` run free in the state form (see the module), together; each
    Reader holds what its chain's model wrote after each event. A window's given tokens that every
    chain has are read in one pass, the rest token by token."""
    runs = [Reader(vocab, deque(), deque(), cap, done=True) for _ in chains]
    before = [tuple(vocab.state_ids(chain[0])) for chain in chains]  # the state each chain's next window reads
    for k in range(max((len(chain[1]) for chain in chains), default=0)):
        rows = [b for b, chain in enumerate(chains) if k < len(chain[1])]
        windows = [Reader(vocab, deque(), deque(window_prompt(vocab, before[b], chains[b][1][k])), cap) for b in rows]
        cache = model.start(len(windows), max(w.bound for w in windows))  # this window alone, from position 0
        given = min(len(w.pending) for w in windows)
        first = [[w.pending.popleft() for _ in range(given)] for w in windows]
        logits = model.read(torch.tensor(first, dtype=torch.long, device=device), cache)[:, -1]  # (B, V)
        feed = [w.next_token(t) for w, t in zip(windows, logits.argmax(-1).tolist())]
        while not all(w.done for w in windows):
            logits = model.step(torch.tensor(feed, dtype=torch.long, device=device), cache)  # (B, V)
            feed = [w.next_token(t) for w, t in zip(windows, logits.argmax(-1).tolist())]
        for b, window in zip(rows, windows):
            runs[b].states += window.states
            runs[b].written += window.written
            before[b] = window.states[-1]  # the model's own writing, right or wrong (cut where it ran past cap)
    return runs


def scores(readers: Sequence[Reader], truths: Sequence[Sequence[tuple[int, ...]]]) -> dict:
    """The figures of one length (see the module) from each chain's written and true states."""
    right = [[w == t for w, t in zip(r.states, truth)] for r, truth in zip(readers, truths)]
    firsts = [ok.index(False) + 1 for ok in right if not all(ok)]
    quartiles = (None if not firsts else
                 [round(q, 2) for q in torch.quantile(torch.tensor(firsts, dtype=torch.float64),
                                                      torch.tensor([0.25, 0.5, 0.75], dtype=torch.float64)).tolist()])
    events = sum(len(r.written) for r in readers)
    return {"chains": len(readers),
            "exact": sum(ok[-1] for ok in right) / len(right),
            "right_throughout": sum(all(ok) for ok in right) / len(right),
            "first_wrong": {"chains": len(firsts), "quartiles": quartiles},
            "tokens_per_event": round(sum(sum(r.written) for r in readers) / events, 3)}


def evaluate(model: StepModel, data: StepwiseData, config: StepwiseEvalConfig = StepwiseEvalConfig(),
             show_progress: bool = False, device: torch.device | str = "cpu", context: str = "history"
             ) -> dict[str, dict]:
    """Free-running figures per test length (str) on the first ``config.chains`` chains of each
    (by default every test length of the dataset up to DEFAULT_LONGEST events, or its shortest),
    the model reading the whole history (``context="history"``) or one window (``"state"``: a
    ``WindowModel``);
    ValueError naming the lengths there are when ``config`` asks for one the dataset lacks."""
    if context not in CONTEXTS:
        raise ValueError(f"unknown context {context!r}; choose one of {', '.join(CONTEXTS)}")
    lengths = config.lengths or (tuple(n for n in data.test_lengths if n <= DEFAULT_LONGEST) or data.test_lengths[:1])
    missing = sorted(set(lengths) - set(data.test_lengths))
    if missing:
        raise ValueError(f"{data.identity['dataset']['path']}: no test chains of {missing[0]} events (it has "
                         f"{', '.join(map(str, data.test_lengths))})")
    if isinstance(model, torch.nn.Module):
        model.eval()
    cap = data.max_state_tokens + 1
    out = {}
    for length in lengths:
        started = time.perf_counter()
        chains = data.test_chains(length, config.chains)
        bar = progress_bar(len(chains), f"free-running {length}", unit="chain", show=show_progress)
        readers = []
        for at in range(0, len(chains), config.batch):
            run = free_run if context == "history" else free_run_windows
            readers += run(model, data.vocab, chains[at:at + config.batch], cap, device)
            bar.update(len(chains[at:at + config.batch]))
        bar.close()
        truths = [[data.vocab.state_ids(t) for t in data.replay(chain)] for chain in chains]
        out[str(length)] = {**scores(readers, truths), "seconds": round(time.perf_counter() - started, 2)}
    return out

"""A streamed, certified evaluation: a trained tracker run free on chains far longer than any
dataset holds, every step of every chain certified by Lean before its figure counts.

Chains are drawn from an explicit seed over the run's domain (its dataset's atoms, tier and size
bound): chain n is a uniformly random walk (``chains.rewrite.sampling.random_walk``) from a uniformly
random start tree, drawn with its own generator ``random.Random(f"{seed}:stream:{n}")``. They are
drawn a block at a time and never written out, so memory does not grow with the length. For each
block, the distinct steps (tree, event) not yet confirmed go through the one certification path
(``leanbridge.certificates.certify_steps``: the certificate store answers for statements it holds as
certified for this Lean build, core library and checker, Lean is asked for the rest and its
answers recorded there); a step counts only once the store holds its statement as certified. A
step Lean rejects, or one the store does not then hold, stops the evaluation with
``StepNotCertified`` naming the chain and step: nothing is reported for it.

The tracker reads every chain's start tree, then one event per step, all chains in lock-step,
with nothing but its own carried state (no teacher forcing). After every step its readout is
decoded and compared with the true tree (``chains.rewrite.rules``'s walk): a chain is right at a step when
the whole decoded tree is, exactly as ``tracker.evaluate`` judges the stored test chains. Reported:
exact at every requested length, the first wrong step of every chain (a histogram by powers of
two), events per second, minutes, the peak resident memory as each length is reached.

The run saves its state (the slots, each chain's tree and generator, the figures so far) into the
output directory at block boundaries, by an atomic rename; ``resume`` continues from it to the same
final figures as an uninterrupted run.

A run trained on programs is evaluated by the same loop, stepper, figures and saved state over
``tracker.domain_stream``'s pieces: programs drawn from the seed over the run's machine, every step
certified by the trace questions of the programs certification through the same store, and beside
exact the floor of a predictor that says each variable's commonest value at that length.
"""
from __future__ import annotations

import json
import math
import random
import resource
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, field, replace
from pathlib import Path

import numpy as np
import torch
import torch.nn.functional as F

from chains.domains import domain_of_manifest
from chains.files import write_bytes_atomic
from chains.manifest import DOMAIN_FORMAT, ELABORATOR, PROGRAMS_FORMAT, DatasetError, read_manifest
from chains.rewrite.rules import Event
from chains.rewrite.sampling import random_walk
from chains.rewrite.space import StateSpace, domain_of
from chains.rewrite.trees import Tree, parse_polish, polish, tokens
from chains.version import package_version
from leanbridge.asker import AskConfig
from leanbridge.certificates import default_store
from leanbridge.checker import Checker
from leanbridge.confirm import ClaimCertifier, StepCertifier, claim_certifier
from leanbridge.corelib import build_core
from leanbridge.discovery import find_lean
from tracker.domain_data import DomainBuilder
from tracker.domain_run import DomainRun
from tracker.domain_stream import (DomainChains, DomainRows, commonest_floor, commonest_state_floor, describe_sampling,
                                   generator_state)
from tracker.inference import RunUnavailable, TrackedRun, load_run
from tracker.layouts import PAD_ID, laid_out
from tracker.models import Recurrent, SlotRecurrence
from tracker.protocol import growing_dims
from tracker.train import IGNORED
from training.checkpoint import CHECKPOINT, CheckpointError, load_checkpoint, refuse_replacing
from training.device import cpu_kernels, resolve_device
from training.files import UnreadableFile, load_torch_file, save_atomic

Progress = Callable[[str, int, int], None]  # (phase, done, total)
STATE = "stream-state.pt"  # the saved state inside the output directory
REPORT = "report.json"
_KEY_BITS = 20  # a step (state id, event id) as one int: state << _KEY_BITS | event


class StreamError(ValueError):
    """Bad input or a saved state that does not fit; the message is one line for the user."""


REWRITE_LENGTHS = (256, 65_536, 1_048_576)  # the lengths streamed on rewrite chains unless told others
PROGRAMS_LENGTHS = (16, 64, 256, 1024, 4096)  # and on programs


@dataclass(frozen=True)
class StreamConfig:
    run: Path  # a train-tracker run directory (its checkpoint)
    # steps at which exact is reported; the longest is run. None: the run's domain's (``resolved``)
    lengths: tuple[int, ...] | None = None
    chains: int = 64  # chains run in lock-step
    seed: int = 0  # draws the chains: chain n's generator is random.Random(f"{seed}:stream:{n}")
    data: Path | None = None  # the run's dataset (domain, checker); None: the one its checkpoint names
    out: Path = Path("runs/stream")  # report.json and the saved state
    device: str = "cpu"  # where the tracker runs (training.device's specs)
    store: Path | None = None  # certificate store; None: certify's
    block: int = 4096  # steps drawn, certified and run per block; the state is saved only between blocks
    save_every_s: float = 60.0  # seconds between saved states (and always after the last block)
    readout_chunk: int = 256  # steps whose views are decoded in one batched readout

    def __post_init__(self) -> None:
        if self.lengths is not None and (not self.lengths or min(self.lengths) < 1):
            raise StreamError("--lengths must be positive step counts")
        if self.chains < 1:
            raise StreamError(f"--chains must be at least 1, got {self.chains}")
        if self.block < 1 or self.readout_chunk < 1 or self.save_every_s < 0:
            raise StreamError("the block and readout chunk must be at least one step, the save interval >= 0")

    @property
    def longest(self) -> int:
        return max(self.lengths)

    def resolved(self, lengths: Sequence[int]) -> StreamConfig:
        """The settings with ``lengths`` where they name none (the domain's defaults)."""
        return self if self.lengths is not None else replace(self, lengths=tuple(lengths))

    def identity(self) -> dict:
        """What a saved state must share with the run that resumes it."""
        return {"run": str(self.run), "lengths": sorted(set(self.lengths)), "chains": self.chains, "seed": self.seed,
                "block": self.block}


# ---- chains -------------------------------------------------------------------------------------


class DrawnChains:
    """``count`` chains drawn from ``seed`` (see the module's docstring), a block at a time: each
    call continues every walk where the last one ended, so the blocks together are one walk."""

    def __init__(self, space: StateSpace, seed: int, count: int) -> None:
        self.space = space
        self.rngs = [random.Random(f"{seed}:stream:{n}") for n in range(count)]
        self.here = [space.random_start(rng) for rng in self.rngs]  # each chain's current state id

    @property
    def count(self) -> int:
        return len(self.rngs)

    def block(self, steps: int) -> tuple[np.ndarray, np.ndarray]:
        """(states (N, steps + 1): the state before the block then after each step; events (N, steps))."""
        states = np.empty((self.count, steps + 1), dtype=np.int64)
        events = np.empty((self.count, steps), dtype=np.int64)
        for n, rng in enumerate(self.rngs):
            walk = random_walk(self.space, rng, self.here[n], steps)
            states[n], events[n] = walk.states, walk.ids
            self.here[n] = walk.end
        return states, events

    def saved(self) -> dict:
        """Each chain's tree (Polish) and generator: interned ids depend on the order of visits."""
        return {"trees": [polish(self.space.trees[h]) for h in self.here], "rngs": [rng.getstate() for rng in self.rngs]}

    def restore(self, saved: dict) -> None:
        atoms = self.space.domain.atom_names
        self.here = [self.space.id(parse_polish(text, atoms)) for text in saved["trees"]]
        for rng, state in zip(self.rngs, saved["rngs"]):
            rng.setstate(generator_state(state))


# ---- certification ------------------------------------------------------------------------------


# ---- the tracker, stepped --------------------------------------------------------------------------


class SlotStep:
    """``SlotRecurrence._update`` for one event per slot, the same floats bit for bit (tested),
    with its fixed costs taken out of the loop: the events' keys, values and additive padding
    mask are tables gathered by event id (one ``index_select`` each, instead of building the
    mask and indexing three tensors per step), the layer norms and the MLP's products are called
    directly, and the additions run in place (IEEE addition commutes, so ``a + w`` is ``w + a``).
    The operations, their order and their inputs are the model's; nothing is fused or reordered
    inside a kernel, so the slot after a million steps is the one ``_update`` would reach."""

    def __init__(self, model: SlotRecurrence) -> None:
        self.ticks, self.fixed_norm = model.config.ticks, model.config.fixed_norm
        self.ln_q = (model.ln_q.weight, model.ln_q.bias, model.ln_q.eps)
        self.ln_mlp = (model.ln_mlp.weight, model.ln_mlp.bias, model.ln_mlp.eps)
        self.up = (model.mlp.up.weight, model.mlp.up.bias)
        self.down = (model.mlp.down.weight, model.mlp.down.bias)

    @staticmethod
    def applies(model: Recurrent) -> bool:
        """Whether ``model`` steps by ``SlotRecurrence._update`` itself (not an override of it)."""
        return isinstance(model, SlotRecurrence) and type(model)._update is SlotRecurrence._update

    @staticmethod
    def additive_mask(mask: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
        """mask (..., E) -> 0 on real tokens, -inf on padding, as ``_update`` builds it."""
        return torch.zeros(mask.shape, dtype=dtype, device=mask.device).masked_fill_(~mask, float("-inf"))

    def __call__(self, w: torch.Tensor, k: torch.Tensor, v: torch.Tensor, pad: torch.Tensor,
                 out: torch.Tensor) -> torch.Tensor:
        """Slots w (H, C) after one item each: k, v (H, E, C), pad (H, E) its additive mask;
        the new slots are written into out (H, C) and returned."""
        c = w.shape[-1]
        scale, shape = 1.0 / math.sqrt(c), [c]
        for _ in range(self.ticks):
            q = torch.layer_norm(w, shape, *self.ln_q)  # (H, C)
            scores = torch.mul(k, q.unsqueeze(1)).sum(-1).mul_(scale).add_(pad)  # (H, E)
            u = torch.mul(scores.softmax(-1).unsqueeze(-1), v).sum(1).add_(w)  # (H, C): w + a
            hidden = F.gelu(F.linear(torch.layer_norm(u, shape, *self.ln_mlp), *self.up))  # (H, 4C)
            w = F.linear(hidden, *self.down).add_(u)  # u + MLP(LN(u))
        if not self.fixed_norm:
            return out.copy_(w)
        # w * (sqrt(C) / |w|): a number over a tensor is the tensor's reciprocal times the number
        factor = torch.linalg.vector_norm(w, 2, -1, True).clamp_(min=1e-6).reciprocal_().mul_(math.sqrt(c))
        return torch.mul(w, factor, out=out)


class TreeRows:
    """What ``Stepper`` reads of a rewrite ``StateSpace`` for a ``TrackedRun``: the token rows of its
    events and start trees as the run reads them, and each tree's readout target in the run's layout.
    (``tracker.domain_stream.DomainRows`` is the same for a run on another domain.)"""

    def __init__(self, run: TrackedRun, space: StateSpace) -> None:
        self.run, self.space = run, space
        self.states, self.events = space.trees, space.events  # interned so far; they grow
        self.device = torch.device(run.device)
        tree_len = run.model.tree_len
        layout = getattr(run.config, "layout", "polish")
        # the Polish width the layout is made from: the readout's own for polish; for paths, the
        # tree of L leaves that fills 2^L - 1 heap positions has 2L - 1 tokens
        self._polish_width = tree_len if layout == "polish" else 2 * int(math.log2(tree_len + 1)) - 1
        self._layout = layout
        self._ignore_pad = getattr(run.config, "ce_positions", "all") == "tree"

    def event_rows(self, events: Sequence[Event]) -> torch.Tensor:
        """(U, E) token ids of ``events``."""
        return torch.tensor([self.run._event_ids(e) for e in events], dtype=torch.long, device=self.device)

    def start_rows(self, state_ids: Sequence[int]) -> torch.Tensor:
        """(N, E) token ids of each tree read as a start."""
        return torch.tensor([self.run._tree_ids(self.space.trees[s]) for s in state_ids], dtype=torch.long,
                            device=self.device)

    def targets(self, trees: Sequence[Tree]) -> torch.Tensor:
        """(R, P) each tree's output ids in the run's layout."""
        index = self.run._index
        rows = torch.zeros(len(trees), self._polish_width, dtype=torch.long)
        for r, tree in enumerate(trees):
            ids = [index[t] for t in tokens(tree)]
            rows[r, :len(ids)] = torch.tensor(ids)
        targets = laid_out(rows, self._layout)
        if self._ignore_pad:  # a run trained on the tree's own positions is judged on them
            targets = torch.where(targets == PAD_ID, IGNORED, targets)
        return targets


class Stepper:
    """A tracker's states moved by event ids of a space (a rewrite ``StateSpace``, or the
    ``tracker.domain_data.DomainBuilder`` of a run on another domain), and its readout judged against
    the space's states. The slot recurrence reads its events as ``SlotRecurrence`` reads a dataset's
    items in evaluation (keys and values once per distinct event, padding columns dropped), stepped
    by ``SlotStep``; every other architecture reads token rows with its own ``read`` (the model
    protocol, ``tracker.protocol``). A state that grows with the history (a transformer's) is kept
    in the readout's buffer as its view, since the buffer's rows hold one shape."""

    def __init__(self, run: TrackedRun | DomainRun, space: StateSpace | DomainBuilder) -> None:
        self.run, self.space, self.model = run, space, run.model
        self.grows = bool(growing_dims(self.model))
        self.rows = DomainRows(run, space) if isinstance(run, DomainRun) else TreeRows(run, space)
        self.device = torch.device(run.device)
        self.fast = SlotStep.applies(self.model)
        self._slot_step = SlotStep(self.model) if self.fast else None
        self._columns: dict[int, tuple[torch.Tensor, ...]] = {}  # e -> K, V, pad tables cut to e columns
        self._events = 0  # event ids of the space whose tables are built
        self._toks = torch.zeros(0, run.item_len, dtype=torch.long, device=self.device)  # (n_events, E)
        self._trees = 0
        self._targets = torch.zeros(0, self.model.tree_len, dtype=torch.long, device=self.device)  # (n_states, P)

    def _grow(self) -> None:
        """Token rows of the events, readout targets of the states, interned since the last call."""
        rows = self.rows
        if len(rows.events) > self._events:
            self._toks = torch.cat([self._toks, rows.event_rows(rows.events[self._events:])])
            self._events = len(rows.events)
            if self.fast:
                with torch.no_grad():
                    emb, mask = self.model.embed.token_rows(self._toks)  # (U, E, C), (U, E)
                    self._k, self._v = self.model.key(emb), self.model.value(emb)  # (U, E, C) each
                    self._pad = SlotStep.additive_mask(mask, emb.dtype)  # (U, E)
                self._columns = {}
                columns = torch.arange(1, mask.shape[1] + 1, device=self.device)
                self._reach = (mask * columns).amax(1).cpu().numpy()  # (U,) one past each event's last real column
        if len(rows.states) > self._trees:
            self._targets = torch.cat([self._targets, rows.targets(rows.states[self._trees:]).to(self.device)])
            self._trees = len(rows.states)

    @torch.no_grad()
    def start(self, states: np.ndarray) -> torch.Tensor:
        """The slots (N, ...) after reading each chain's start state (state ids (N,))."""
        self._grow()
        toks = self.rows.start_rows(states.tolist())  # (N, E)
        w = self.model.initial_state(len(states))
        if not self.fast:
            return self.model.read(w, toks)
        emb, mask = self.model.embed.token_rows(toks)
        columns = torch.arange(1, mask.shape[1] + 1, device=self.device)
        e = max(1, int((mask * columns).amax()))  # the columns up to the last real token of any start
        return self.model._update(w, self.model.key(emb)[:, :e], self.model.value(emb)[:, :e], mask[:, :e])

    @torch.no_grad()
    def steps(self, w: torch.Tensor, events: np.ndarray, out: torch.Tensor) -> torch.Tensor:
        """Slots w (N, ...) moved by events (N, S); the slot after step s into out[s] (S, N, ...)."""
        self._grow()
        ids = torch.from_numpy(np.ascontiguousarray(events.T)).to(self.device)  # (S, N)
        if self.fast:
            reach = np.maximum(self._reach[events].max(0), 1).tolist()  # (S,) columns each step reads
            for s, e in enumerate(reach):
                idx = ids[s]
                k, v, pad = (table.index_select(0, idx) for table in self._cut(e))  # (N, e, C) twice, (N, e)
                w = self._slot_step(w, k, v, pad, out[s])
            return w.clone()  # not a view of out, which the next chunk overwrites
        for s in range(events.shape[1]):
            w = self.model.read(w, self._toks[ids[s]])
            out[s] = self.kept(w)
        return w

    def kept(self, w: torch.Tensor) -> torch.Tensor:
        """What the readout's buffer keeps of states w (N, ...): the states themselves, or their
        views (N, view_width) where the state grows with the history."""
        return self.model.view(w) if self.grows else w

    def buffer(self, steps: int, w: torch.Tensor) -> torch.Tensor:
        """An empty buffer (steps, N, ...) for what ``steps`` steps of states like w keep."""
        with torch.no_grad():
            kept = self.kept(w)
        return torch.empty((steps, *kept.shape), dtype=kept.dtype, device=kept.device)

    def _cut(self, e: int) -> tuple[torch.Tensor, ...]:
        """The events' K, V (U, e, C) and additive masks (U, e) cut to their first e columns,
        contiguous, made once per e."""
        tables = self._columns.get(e)
        if tables is None:
            tables = self._columns[e] = tuple(t[:, :e].contiguous() for t in (self._k, self._v, self._pad))
        return tables

    @torch.no_grad()
    def right(self, slots: torch.Tensor, states: np.ndarray) -> torch.Tensor:
        """slots (S, N, ...) as the buffer keeps them (``kept``) and the true state ids (S, N) -> (S, N)
        whether the whole decoded tree (argmax per position, PAD included) is the true one; a
        negative target matches anything (``tracker.evaluate.right_trees``)."""
        self._grow()
        target = self._targets[torch.from_numpy(np.ascontiguousarray(states)).to(self.device)]  # (S, N, P)
        views = slots if self.grows else self.model.view(slots)  # (S, N, view_width)
        got = self.model.readout(views).argmax(-1)  # (S, N, P)
        return ((got == target) | (target < 0)).all(-1)


# ---- the evaluation ------------------------------------------------------------------------------


PHASES = ("draw", "certify", "step", "readout")


@dataclass
class Figures:
    """What the run has measured so far; saved with the state and resumed from it."""

    steps: int = 0  # steps every chain has taken
    first_wrong: list[int] = field(default_factory=list)  # per chain: first step whose tree is wrong (-1: none yet)
    right: dict[str, list[bool]] = field(default_factory=dict)  # per requested length reached: each chain right there
    rss_mb_at: dict[str, float] = field(default_factory=dict)  # peak resident memory when each length was reached
    seconds: dict[str, float] = field(default_factory=lambda: dict.fromkeys(PHASES, 0.0))  # wall seconds per phase
    cpu_seconds: float = 0.0  # this process's CPU seconds (user and system) spent in the blocks
    cpu_by_phase: dict[str, float] = field(default_factory=lambda: dict.fromkeys(PHASES, 0.0))  # of cpu_seconds

    def summary(self, lengths: list[int]) -> dict:
        """exact and right_throughout per length, the first wrong steps and their histogram."""
        count = len(self.first_wrong)
        return {"exact": {str(n): sum(self.right[str(n)]) / count for n in lengths},
                "right_throughout": {str(n): sum(1 for f in self.first_wrong if f < 0 or f > n) / count
                                     for n in lengths},
                "first_wrong": {"histogram": first_wrong_histogram(self.first_wrong, self.steps),
                                "steps": self.first_wrong}}


def peak_rss_mb() -> float:
    """The process's peak resident memory so far (getrusage's ru_maxrss: kilobytes on Linux)."""
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


def cpu_seconds() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def first_wrong_histogram(first_wrong: list[int], longest: int) -> dict[str, int]:
    """Chains by their first wrong step, in bins by powers of two: "0" (the start read wrong), "1",
    "2-3", "4-7", ... up to the bin holding ``longest``, then "never" (right at every step)."""
    bins: dict[str, int] = {"0": 0}
    for b in range(longest.bit_length()):
        lo, hi = 1 << b, min((1 << (b + 1)) - 1, longest)
        bins[str(lo) if lo == hi else f"{lo}-{hi}"] = 0
    bins["never"] = 0
    names = list(bins)
    for step in first_wrong:
        bins["never" if step < 0 else names[step.bit_length()]] += 1
    return bins


def _quiet(phase: str, done: int, total: int) -> None:
    pass


def stream(run: TrackedRun | DomainRun, source: DrawnChains | DomainChains,
           certifier: StepCertifier | ClaimCertifier, config: StreamConfig, resume: bool = False,
           progress: Progress = _quiet, save: bool = True) -> Figures:
    """Step ``run`` over ``source``'s chains to ``config.longest`` steps, every block's steps
    confirmed by ``certifier`` before they are judged (StepNotCertified names the first that Lean
    did not certify). With ``save`` the state is saved into ``config.out`` between blocks (every
    ``config.save_every_s`` seconds and after the last); ``resume`` continues from it. A run on
    programs streams over ``tracker.domain_stream``'s chains and certifier, on the same loop."""
    if config.lengths is None:
        raise StreamError("the config names no lengths; give them, or take the domain's (StreamConfig.resolved)")
    stepper = Stepper(run, certifier.space)
    lengths = sorted(set(config.lengths))
    state_path = Path(config.out) / STATE
    if resume:
        w, figures = _restore(state_path, config, source)
        w = w.to(stepper.device)
    else:
        figures = Figures()
        w = stepper.start(np.array(source.here, dtype=np.int64))
        with torch.no_grad():
            kept = stepper.kept(w)
        wrong = ~stepper.right(kept.unsqueeze(0), np.array([source.here], dtype=np.int64))[0]
        figures.first_wrong = [0 if bad else -1 for bad in wrong.tolist()]
    saved_at = time.perf_counter()
    buffer = stepper.buffer(config.readout_chunk, w)  # (S, N, ...)
    progress("stream", figures.steps, config.longest)
    while figures.steps < config.longest:
        size = min(config.block, config.longest - figures.steps)
        clock = _PhaseClock(figures)
        states, events = source.block(size)
        clock.charge("draw")
        certifier.confirm(states, events, figures.steps + 1)  # before any of the block's steps is judged
        clock.charge("certify")
        for lo in range(0, size, config.readout_chunk):
            hi = min(size, lo + config.readout_chunk)
            w = stepper.steps(w, events[:, lo:hi], buffer)
            clock.charge("step")
            right = stepper.right(buffer[:hi - lo], states[:, lo + 1:hi + 1].T).cpu().numpy()  # (S, N)
            _count(figures, right, figures.steps + lo + 1, lengths)
            clock.charge("readout")
        figures.steps += size
        for length in lengths:
            if figures.steps >= length and str(length) not in figures.rss_mb_at:
                figures.rss_mb_at[str(length)] = peak_rss_mb()
        if save and (figures.steps == config.longest or time.perf_counter() - saved_at >= config.save_every_s):
            _save(state_path, config, w, figures, source)
            saved_at = time.perf_counter()
        progress("stream", figures.steps, config.longest)
    return figures


class _PhaseClock:
    """Charges the wall and CPU time since its last charge to a phase of the figures."""

    def __init__(self, figures: Figures) -> None:
        self.figures, self.wall, self.cpu = figures, time.perf_counter(), cpu_seconds()

    def charge(self, phase: str) -> None:
        wall, cpu = time.perf_counter(), cpu_seconds()
        self.figures.seconds[phase] += wall - self.wall
        self.figures.cpu_by_phase[phase] += cpu - self.cpu
        self.figures.cpu_seconds += cpu - self.cpu
        self.wall, self.cpu = wall, cpu


def _count(figures: Figures, right: np.ndarray, first: int, lengths: list[int]) -> None:
    """Fold one chunk's judgements (S, N) (its first row is step ``first``) into the figures."""
    wrong = ~right
    for n in np.flatnonzero(wrong.any(0)).tolist():
        if figures.first_wrong[n] < 0:
            figures.first_wrong[n] = first + int(np.argmax(wrong[:, n]))
    for length in lengths:
        if first <= length < first + len(right):
            figures.right[str(length)] = right[length - first].tolist()


def _save(path: Path, config: StreamConfig, w: torch.Tensor, figures: Figures,
          source: DrawnChains | DomainChains) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    save_atomic({"config": config.identity(), "slots": w.cpu(), "figures": asdict(figures),
                 "chains": source.saved()}, path)


def _saved(path: Path, config: StreamConfig) -> dict:
    """The state saved at ``path`` by an evaluation of ``config``'s settings; StreamError otherwise."""
    if not path.is_file():
        raise StreamError(f"{path}: no saved state to resume from; run without --resume")
    try:
        blob = load_torch_file(path)
    except UnreadableFile as e:
        raise StreamError(f"{path}: {e}") from None
    saved = blob.get("config") if isinstance(blob, dict) else None
    if saved != config.identity():
        raise StreamError(f"{path}: saved by another evaluation ({saved}); resume with its settings or start afresh")
    return blob


def _restore(path: Path, config: StreamConfig, source: DrawnChains | DomainChains) -> tuple[torch.Tensor, Figures]:
    blob = _saved(path, config)
    source.restore(blob["chains"])
    return blob["slots"], Figures(**blob["figures"])


def _open_dataset(config: StreamConfig) -> tuple[Path, dict]:
    """The dataset whose domain and checker the run uses: ``config.data``, or the one the run's
    checkpoint names. StreamError when there is none."""
    data = config.data
    if data is None:
        try:
            blob = load_checkpoint(Path(config.run) / CHECKPOINT)
        except CheckpointError as e:
            raise StreamError(f"tracker {config.run}: {e}") from None
        data = (blob.get("identity", {}).get("dataset", {}) or {}).get("path")
        if data is None:
            raise StreamError(f"tracker {config.run}: its checkpoint names no dataset; pass --data")
    try:
        return Path(data), read_manifest(Path(data))
    except DatasetError as e:
        raise StreamError(f"{e} (the run's dataset; pass --data)") from None


def dataset_checker(manifest: dict) -> Checker:
    """The checker that certified a dataset (its manifest's ``checker``; the elaborator when
    absent): the streamed steps are certified by the same one, so its certificates serve them."""
    return Checker.recorded(manifest.get("checker", ELABORATOR))


def _config_json(config: StreamConfig) -> dict:
    """The settings as the report records them."""
    return {k: str(v) if isinstance(v, Path) else v for k, v in asdict(config).items()}


@dataclass(frozen=True)
class _Setup:
    """A domain's side of an evaluation: its chains, its certifier, and the report's fields that
    depend on the domain (read after the stream: the certifier's counts, the floor)."""

    source: DrawnChains | DomainChains
    certifier: StepCertifier | ClaimCertifier
    fields: Callable[[], dict]  # domain, chain_sampling, beside_exact, certification, provenance


def _rewrite_setup(config: StreamConfig, data: Path, manifest: dict, progress: Progress) -> _Setup:
    space = StateSpace(domain_of(manifest, str(data)))
    source = DrawnChains(space, config.seed, config.chains)
    lean = find_lean()
    core = build_core(lean)
    store = config.store or default_store()
    certifier = StepCertifier(space, lean, core, AskConfig(checker=dataset_checker(manifest)), store, progress)

    def fields() -> dict:
        return {"domain": {"atoms": manifest.get("atoms"), "tier": manifest.get("tier"),
                           "max_size": manifest.get("max_size")},
                "chain_sampling": "chain n: random.Random(f'{seed}:stream:{n}'); a uniformly random start tree, "
                                  "then a uniformly random applicable event per step",
                "beside_exact": {},
                "certification": {**certifier.counts, "checker": certifier.checker,
                                  "confirmed_steps": int(certifier.confirmed.sum())},
                "provenance": {"lean": {"version": lean.version, "githash": lean.githash, "source": lean.source},
                               "core_hash": core.hash}}
    return _Setup(source, certifier, fields)


def _domain_setup(config: StreamConfig, data: Path, manifest: dict, progress: Progress) -> _Setup:
    """Programs or a domain of one's own: histories drawn by the domain's own sampling
    (``tracker.domain_stream``), every step certified by the domain's certifier
    (``leanbridge.confirm.claim_certifier``); beside exact, the floor of naming the commonest value
    (each variable's for programs, the whole state's for a domain of one's own, whose states' text
    has no columns to read)."""
    domain = domain_of_manifest(manifest, str(data))
    space = DomainBuilder(domain)
    source = DomainChains(space, config.seed, config.chains, config.lengths)
    certifier = claim_certifier(domain, space, config.store or default_store(), progress)
    programs = manifest.get("format") == PROGRAMS_FORMAT
    floor = commonest_floor if programs else commonest_state_floor

    def fields() -> dict:
        return {"domain": domain.describe() if programs else manifest["domain"],
                "chain_sampling": describe_sampling(domain),
                "beside_exact": {"floor": floor(source.at)},
                "certification": {**certifier.counts, "certificate": certifier.certificate,
                                  "confirmed_steps": len(certifier.confirmed)},
                "provenance": certifier.provenance()}
    return _Setup(source, certifier, fields)


def evaluate_stream(config: StreamConfig, resume: bool = False, progress: Progress = _quiet,
                    force: bool = False) -> dict:
    """Run ``config``'s evaluation (or continue it from the state in ``config.out`` with
    ``resume``); return the report, also written to ``config.out/report.json``. An evaluation of
    other settings already at ``config.out`` is replaced only with ``force``. The run's dataset
    decides the domain: rewrite chains, or programs or a domain of one's own (``PROGRAMS_LENGTHS``
    unless ``config.lengths`` names others, and the floor beside exact)."""
    started, cpu = time.perf_counter(), cpu_seconds()
    data, manifest = _open_dataset(config)
    setup_of = _domain_setup if manifest.get("format") in (PROGRAMS_FORMAT, DOMAIN_FORMAT) else _rewrite_setup
    config = config.resolved(REWRITE_LENGTHS if setup_of is _rewrite_setup else PROGRAMS_LENGTHS)
    if config.longest >= 1 << (63 - _KEY_BITS):
        raise StreamError("--lengths: too long")
    refuse_replacing(Path(config.out), _config_json(config), resume, force, STATE)
    try:
        run = load_run(config.run, data, resolve_device(config.device))
    except RunUnavailable as e:
        raise StreamError(str(e)) from None
    setup = setup_of(config, data, manifest, progress)
    before = Figures(**_saved(Path(config.out) / STATE, config)["figures"]) if resume else None  # for this call's share
    figures = stream(run, setup.source, setup.certifier, config, resume, progress)
    report = _report(config, run, data, setup, figures, before, started, cpu)
    out = Path(config.out)
    out.mkdir(parents=True, exist_ok=True)
    write_bytes_atomic(out / REPORT, (json.dumps(report, indent=2) + "\n").encode())
    return report


def _report(config: StreamConfig, run: TrackedRun | DomainRun, data: Path, setup: _Setup, figures: Figures,
            before: Figures | None, started: float, cpu: float) -> dict:
    """The report of an evaluation: its figures, speeds, memory and provenance."""
    lengths = sorted(set(config.lengths))
    seconds = sum(figures.seconds.values())
    events = setup.source.count * figures.steps
    device = torch.device(run.device)
    about = setup.fields()
    return {
        "tracker": run.describe(), "dataset": str(data), "domain": about["domain"],
        "seed": config.seed, "chains": setup.source.count, "lengths": lengths, "steps": figures.steps,
        "chain_sampling": about["chain_sampling"],
        **figures.summary(lengths), **about["beside_exact"],
        "right": figures.right,
        "events": events, "seconds": round(seconds, 2), "minutes": round(seconds / 60, 2),
        "events_per_second": round(events / seconds) if seconds else None,
        "cpu_seconds": round(figures.cpu_seconds, 2),
        "events_per_cpu_second": round(events / figures.cpu_seconds) if figures.cpu_seconds else None,
        "ms_per_lockstep": round(1000 * figures.seconds["step"] / figures.steps, 4) if figures.steps else None,
        "cpu_ms_per_lockstep": round(1000 * figures.cpu_seconds / figures.steps, 4) if figures.steps else None,
        "seconds_by_phase": {k: round(v, 2) for k, v in figures.seconds.items()},
        "cpu_seconds_by_phase": {k: round(v, 2) for k, v in figures.cpu_by_phase.items()},
        "resumed_from_step": None if before is None else before.steps,
        "wall_seconds_this_call": round(time.perf_counter() - started, 2),
        "cpu_seconds_this_call": round(cpu_seconds() - cpu, 2),
        "peak_rss_mb": peak_rss_mb(), "peak_rss_mb_at": figures.rss_mb_at,
        "certification": about["certification"], **about["provenance"],
        "package_version": package_version(),
        "torch_version": torch.__version__, "torch_threads": torch.get_num_threads(), "device": str(device),
        "cpu_kernels": cpu_kernels() if device.type == "cpu" else None,
        "config": _config_json(config),
    }

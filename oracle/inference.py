"""A finished ``train-oracle`` run as a verdict oracle for any history of its domain: load the run
directory, give a start tree, the events read after it, the goal and the probe events, and get
for each probe what evaluation reads off the arm there.

    from oracle import load_run
    run = load_run("runs/demo-oracle")
    for s in run.score("* + a b * c d", ["mul_comm@"], ["add_comm@1", "mul_assoc@"], goal="* * c d + b a"):
        print(s.event, s.verdict, s.probabilities)

Each probe's ``ProbeScore`` carries the head's five-class probabilities (the classes of the run's
dataset, in its order), the head's answer (its most probable class), P(accepted or complete),
and the five-class verdict with *complete* decided by comparison as ``oracle.evaluate`` decides
it: a probe the head predicts accepted (accepted or complete) is complete when its imagined
successor (the recurrence's own transition on the slot and the probe) lies within the run's
threshold of the goal read as a start, else accepted; a probe the head predicts rejected keeps
the head's rejection class. The threshold is the one ``train-oracle`` chose on validation chains
and stored with the run. Without a goal, or for an arm that does not compare (``transformer``,
``blind``), the verdict is the head's answer.

The arms read a history as in evaluation: the start tree once, then one event per step (the
``truth`` arm is handed the tree the events lead to, replayed with ``chains.rewrite.rules``; ``blind``
reads nothing). Items and probes are embedded from their tokens, so any tree and event of the
run's domain can be given, not only those of its dataset; an event that does not apply to the
tree is read all the same, except by the truth arm, which has no tree then.
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import torch

from chains.rewrite.rules import Event, apply
from chains.rewrite.space import Domain
from chains.rewrite.trees import Tree, tokens
from oracle.config import OracleConfig
from oracle.model import Oracle
from tracker.data import Vocab
from tracker.inference import RunCheckpoint, RunUnavailable, as_event, as_events, as_tree, checked_history
from tracker.losses import centred_cosine_distance
from training.device import resolve_device


@dataclass(frozen=True)
class ProbeScore:
    """What the oracle says of one probe event after a history."""

    event: str  # the probe, rule@path
    probabilities: dict[str, float]  # the head's probability of each verdict class, in the run's class order
    head: str  # the head's answer: its most probable class
    accepted: float  # P(accepted or complete): the probability of the classes in which Lean accepts
    verdict: str  # the five-class answer with complete decided by comparison (the head's where none is made)
    goal_distance: float | None  # the imagined successor's distance to the goal (None: no comparison)


class OracleRun:
    """A trained oracle arm; see ``load_run`` and the module's docstring."""

    def __init__(self, model: Oracle, config: OracleConfig, vocab: Vocab, domain: Domain, tree_len: int,
                 verdicts: tuple[str, ...], threshold: float | None, identity: dict, device: torch.device) -> None:
        self.model, self.config, self.vocab, self.domain = model, config, vocab, domain
        self.tree_len, self.verdicts, self.threshold = tree_len, verdicts, threshold
        self.identity, self.device = identity, device
        self._index = vocab.index()
        self._accepting = torch.tensor([not v.startswith("rejected") for v in verdicts], device=device)  # (V,)

    @property
    def arch(self) -> str:
        return self.config.arch

    @property
    def compares(self) -> bool:
        """Whether the arm decides *complete* by comparison (it has a slot transition and a threshold)."""
        return self.model.compares and self.threshold is not None

    def describe(self) -> dict:
        """Identity for a report: the run, its arm, objective, seed, steps, threshold, dataset."""
        return dict(self.identity)

    # ---- items ----------------------------------------------------------------------------------

    def _ids(self, toks: Sequence[str], width: int, what: str) -> list[int]:
        if len(toks) > width:
            raise ValueError(f"{what} of {len(toks)} tokens is longer than the oracle reads ({width})")
        try:
            ids = [self._index[t] for t in toks]
        except KeyError as e:
            raise ValueError(f"token {e.args[0]!r} is not in the run's domain ({self.domain.atoms} atoms, "
                             f"tier {self.domain.tier})") from None
        return ids + [0] * (width - len(ids))

    def _rows(self, rows: list[list[int]]) -> torch.Tensor:
        return torch.tensor(rows, dtype=torch.long, device=self.device)  # (N, width)

    def _item_width(self) -> int:
        return self.model.tracker.embed.item_tokens.shape[1]

    def _tree_rows(self, trees: Sequence[Tree]) -> torch.Tensor:
        """(N, E) the trees' token rows, each padded to the tree length and then to the item width,
        as the dataset's items are."""
        rows = []
        for tree in trees:
            ids = self._ids(tokens(tree), self.tree_len, "a tree")
            rows.append(ids + [0] * (self._item_width() - len(ids)))
        return self._rows(rows)

    def _event_rows(self, events: Sequence[Event], width: int, what: str) -> torch.Tensor:
        return self._rows([self._ids([e.rule, *e.path], width, what) for e in events])  # (N, width)

    # ---- reading a history ----------------------------------------------------------------------

    def _states(self, start: Tree, events: Sequence[Event]) -> tuple[torch.Tensor, torch.Tensor | None]:
        """The reader r (C,) after the history and the slot w (C,) the comparison moves (None for
        the arms without a slot transition)."""
        model, arch = self.model, self.config.arch
        if arch == "blind":
            return model.constant, None
        tracker = model.tracker
        if arch == "transformer":
            rows = torch.cat([self._tree_rows([start]), self._event_rows(events, self._item_width(), "an event")])
            emb, mask = tracker.embed.token_rows(rows)  # (T, E, C), (T, E): as ItemEmbedding.pooled pools them
            m = mask.unsqueeze(-1).to(emb.dtype)
            x = (emb * m).sum(-2) / m.sum(-2).clamp(min=1)  # (T, C)
            return tracker._views(x.unsqueeze(0))[0, -1], None
        if arch == "truth":
            tree = start
            for event in events:
                moved = apply(tree, event, self.domain.size_bound)
                if moved is None:
                    raise ValueError(f"event {event} does not apply on the history's way; the truth arm has no tree")
                tree = moved
            w = tracker.read(tracker.initial_state(1), self._tree_rows([tree]))[0]
            return tracker.view(w), w
        # the recurrence and the control: the start once, then one event per step
        w = tracker.read(tracker.initial_state(1), self._tree_rows([start]))  # (1, C)
        if events:
            rows = self._event_rows(events, self._item_width(), "an event")  # (T - 1, E)
            for t in range(len(rows)):
                w = tracker.read(w, rows[t: t + 1])
        w = w[0]
        return (w if arch == "probe-slot" else tracker.view(w)), w

    @torch.no_grad()
    def score(self, start: Tree | str, events: Sequence[Event | str], probes: Sequence[Event | str],
              goal: Tree | str | None = None, check: bool = False) -> list[ProbeScore]:
        """One ``ProbeScore`` per probe event tried after the history (``start``, then ``events``);
        ``goal``, the tree the proof must reach, lets an arm that compares decide *complete*. With
        ``check``, the history is first replayed with the domain's rules and HistoryError names the
        first step that does not apply (the probes may fail to apply: that is what is scored)."""
        atoms = self.domain.atom_names
        if check:
            checked_history(start, events, self.domain)
        start_tree, history = as_tree(start, atoms), [as_event(e) for e in as_events(events)]
        tried = [as_event(p) for p in probes]
        if not tried:
            return []
        r, w = self._states(start_tree, history)  # (C,), (C,) or None
        toks = self._event_rows(tried, self.model.probe_tokens.shape[1], "a probe")  # (P, Ep)
        p = self.model.score_tokens(r.unsqueeze(0), toks.unsqueeze(0)).softmax(-1)[0]  # (P, V)
        head = p.argmax(-1)  # (P,)
        verdict = head.clone()
        distance = None
        if goal is not None and w is not None and self.compares:
            tracker = self.model.tracker
            g = tracker.view(tracker.read(tracker.initial_state(1), self._tree_rows([as_tree(goal, atoms)])))  # (1, C)
            succ = self.model.imagined(w.unsqueeze(0), toks.unsqueeze(0))[0]  # (P, C) the imagined successors
            distance = centred_cosine_distance(succ, g.expand_as(succ))  # (P,)
            accepted, complete = self.verdicts.index("accepted"), self.verdicts.index("complete")
            by_goal = torch.where(distance < self.threshold, complete, accepted)
            verdict = torch.where(self._accepting[head], by_goal, head)
        accept = p[:, self._accepting].sum(-1)  # (P,)
        names = self.verdicts
        return [ProbeScore(event=str(e), probabilities=dict(zip(names, p[i].tolist())), head=names[int(head[i])],
                           accepted=float(accept[i]), verdict=names[int(verdict[i])],
                           goal_distance=None if distance is None else float(distance[i]))
                for i, e in enumerate(tried)]


# what an oracle checkpoint that does not fit its settings raises, and how the refusal says so
MISFIT = ("its checkpoint does not fit its settings", (KeyError, TypeError, ValueError, RuntimeError))


def load_run(directory: Path | str, device: torch.device | str = "cpu") -> OracleRun:
    """The oracle a ``train-oracle`` run wrote into ``directory`` (its ``checkpoint.pt``), on
    ``device`` (``cpu``, ``cuda``, ``cuda:N``, ``mps`` or ``auto``; the checkpoint loads on any).
    Loaded without running code the checkpoint may hold (torch's weights-only unpickler).
    RunUnavailable, in one line, when there is no usable run there; DeviceUnavailable when the
    device is not on this machine."""
    where = resolve_device(device)
    run = RunCheckpoint.read(directory, "oracle", OracleConfig)
    run_dir, blob, config = run.run_dir, run.blob, run.config
    if "vocab" not in blob or "verdicts" not in blob:
        raise RunUnavailable(f"oracle {run_dir}: not a train-oracle run on rewrite chains (no tree vocabulary "
                             "or verdict classes; a run on Mathlib probes reads Lean text)")
    trained_on = run.trained_on
    with run.fitting(*MISFIT):
        domain = Domain(atoms=trained_on["atoms"], tier=trained_on["tier"], max_size=trained_on.get("max_size"))
    model, vocab, verdicts = restored_oracle(run)
    model.to(where)
    threshold = (blob.get("comparison") or {}).get("threshold")
    identity = run.identity(trained_on, threshold=threshold)
    return OracleRun(model, config, vocab, domain, int(blob["tree_len"]), verdicts, threshold, identity, where)


def restored_oracle(run: RunCheckpoint) -> tuple[Oracle, Vocab, tuple[str, ...]]:
    """The arm of an oracle run on rewrite chains with its weights loaded
    (``RunCheckpoint.restored_model``), in evaluation mode on the CPU, with its tree vocabulary and
    verdict classes: what ``load_run`` and the prover's scorer (``oracle.scorer``) read.
    RunUnavailable, in one line, when the checkpoint does not fit its settings."""
    blob, config = run.blob, run.config
    with run.fitting(*MISFIT):
        vocab = Vocab(tuple(blob["vocab"]["atoms"]), tuple(blob["vocab"]["rules"]))
        verdicts = tuple(blob["verdicts"])

    def build() -> Oracle:
        state = blob["model"]
        item_tokens = state.get("tracker.embed.item_tokens", torch.zeros(1, 1, dtype=torch.long))
        return Oracle(config.model, item_tokens, state["probe_tokens"], vocab.size, len(verdicts),
                      config.tree_shape(vocab.n_out, int(blob["tree_len"])))

    return run.restored_model(build, *MISFIT), vocab, verdicts

"""Stop when exact: a cheap held-out check every N steps, and the rule that ends training.

The check reads the last ``chains`` chains of every test split, shortest split first, and stops
at the first length where the tracker is not exact (>= ``threshold``): early in training a check
costs a few short chains, and the long splits are read only once the short ones pass. A check
passes when the tracker is exact at every test length, the longest included. Training stops
after ``patience`` passing checks in a row; the step and time of the first of them are when the
tracker became exact. With a ``cooldown``, training then goes on for that many steps with the
learning rate falling linearly from where it was towards zero (the weights settle instead of
stopping mid-stride at a high rate), and stops after them.

With ``until`` fit the checks read the training length's split alone (``fit_length``) and stop
once the tracker fits, the rest of training's steps left unspent: fit first, then judge length.
Those checks begin once every term of the objective acts at its full weight
(``TrainConfig.full_weight_step``), so that a run never stops before its terms have trained it. A
report then says whether it fitted, on held-out chains of that length no check read, and a run that
did not fit within its steps is reported as such rather than judged at length.

The checks' chains are held apart from every reported figure (``split_for_checks``): the last
``chains`` chains of each test split, never more than half of it, are the checks' alone, and the
final evaluation reads only the chains before them. A run without checks holds nothing apart.
"""
from __future__ import annotations

from dataclasses import dataclass, field, replace

import torch

from tracker.data import TrackerData
from tracker.evaluate import end_views, model_device, right_trees
from tracker.models import Tracker
from training.config import setting
from training.device import default_device


UNTIL = ("exact", "fit")  # what the stop checks wait for


@dataclass(frozen=True)
class StopConfig:
    # train-tracker's --check-* options are made from these fields (training.options)
    every: int = setting(0, "Stop when exact: every N steps read a few held-out chains of every length (shortest "
                            "first) and stop after --check-patience passing checks in a row (0: no checks).", low=0)
    chains: int = setting(64, "Held-out chains per length a check reads: the last ones of each test split, at most "
                              "half of it, held apart from every reported figure.", low=1)
    patience: int = setting(2, "Passing checks in a row that end training.", low=1)
    threshold: float = 0.99  # "exact": the fraction of those chains whose whole tree is right
    until: str = setting("exact", "What the checks wait for: exact, exact at every test length; fit, exact on the "
                                  "held-out chains of the training length only (fit first: the report says whether "
                                  "the run fitted, and a run that did not is not judged at length).",
                         choices=("exact", "fit"))
    cooldown: int = setting(0, "Once the checks say stop, train this many more steps with the learning rate falling "
                               "linearly towards zero, then stop.", low=0)

    def __post_init__(self) -> None:
        if (self.every < 0 or self.chains < 1 or self.patience < 1 or not 0 <= self.threshold <= 1
                or self.cooldown < 0 or self.until not in UNTIL):
            raise ValueError("check every and cooldown must be >= 0, chains and patience >= 1, threshold in [0, 1], "
                             f"until one of {', '.join(UNTIL)}")

    @property
    def enabled(self) -> bool:
        return self.every > 0


def fit_length(data: TrackerData) -> int:
    """The test length a fit is read at: the training chains' longest (events), or the shortest test
    length above it where no split has it."""
    trained = int((data.train["chain_items"] != 0).sum(1).max()) - 1  # the start is item 0
    longer = sorted(n for n in data.tests if n >= trained)
    return longer[0] if longer else max(data.tests)


def checked_lengths(data: TrackerData, stop: StopConfig) -> TrackerData:
    """The checks' chains ``data`` with only the splits the checks wait for: every length, or with
    ``until`` fit the training length's alone."""
    if stop.until != "fit":
        return data
    n = fit_length(data)
    return replace(data, tests={n: data.tests[n]})


def held_apart(count: int, chains: int) -> int:
    """How many of a test split's ``count`` chains the checks read (its last ones): ``chains``, but
    never more than half the split, so that the reported figures keep the other half at least."""
    return min(chains, count // 2)


def split_for_checks(data: TrackerData, stop: StopConfig, read: dict[str, int] | None = None
                     ) -> tuple[TrackerData, TrackerData, dict[str, int]]:
    """(reported, checked, held): ``data`` with its test splits cut, the chains the evaluation
    reads (each split's first ones) and those the checks read (its last ones; ``held_apart``).
    ``read``: by length, the last chains earlier checks of the run read (a resumed run's), held
    apart too; ``held`` is how many are held apart by length, the most of the two. Without checks
    or earlier reads nothing is held apart and ``checked`` has no chains. ValueError when checks are
    asked for and a split is too small to hold any apart."""
    read = read or {}
    now = {str(n): held_apart(len(split["end"]), stop.chains) if stop.enabled else 0
           for n, split in data.tests.items()}
    short = sorted(int(n) for n, k in now.items() if stop.enabled and k == 0)
    if short:
        raise ValueError(f"stop-when-exact checks need a test split of 2 chains or more, to hold some apart from "
                         f"the reported figures; the one of length {short[0]} holds fewer (give --check-every 0)")
    held = {n: max(k, read.get(n, 0)) for n, k in now.items()}

    # every tensor of a split is (N, ...): the reported chains first, the checks' last
    reported = replace(data, tests={n: {k: v[:len(v) - held[str(n)]] for k, v in split.items()}
                                    for n, split in data.tests.items()})
    checked = replace(data, tests={n: {k: v[len(v) - now[str(n)]:] for k, v in split.items()}
                                   for n, split in data.tests.items()})
    return reported, checked, held


def reported_chains(data: TrackerData, report: dict) -> TrackerData:
    """``data`` less the chains a train-tracker ``report``'s stop checks read (its
    ``checks_held_apart``; none in a report without it): the chains its figures count, for
    evaluating its checkpoint again."""
    return split_for_checks(data, StopConfig(), report.get("checks_held_apart") or {})[0]


def checks_read(held: dict[str, int]) -> str:
    """What a report says the checks read (``split_for_checks``'s ``held``), in words."""
    if not any(held.values()):
        return "nothing: no stop checks ran, every test chain evaluated is reported"
    counts = set(held.values())
    which = (f"the last {counts.pop()} chains of every test split" if len(counts) == 1 else
             "the last chains of every test split (" + ", ".join(f"{k} at length {n}" for n, k in
                                                                 sorted(held.items(), key=lambda x: int(x[0]))) + ")")
    return f"{which}, held apart: no reported figure reads them"


def check_exact(model: Tracker, data: TrackerData, chains: int, threshold: float) -> dict[str, float]:
    """Exact on the last ``chains`` chains of each test split, shortest first, up to and including
    the first length below ``threshold``: {length: exact}. Passing means every length is present
    and at or above the threshold. Runs on the model's device."""
    out: dict[str, float] = {}
    was_training = model.training
    model.eval()
    device = model_device(model)
    data = data.to(device)
    with torch.inference_mode(), default_device(device):
        for length in sorted(data.tests):
            split = data.tests[length]
            items = split["chain_items"][-chains:]  # (M, T)
            ends = split["end"][-chains:]  # (M,)
            out[str(length)] = right_trees(model, end_views(model, items, len(items)), ends, data).float().mean().item()
            if out[str(length)] < threshold:
                break
    model.train(was_training)
    return out


@dataclass(frozen=True)
class Cooldown:
    """The last ``steps`` steps: the learning rate falls linearly from ``lr`` (the schedule's at
    ``start``), ``lr`` at the first of them, ``lr / steps`` at the last."""

    start: int  # the step the checks said stop after
    lr: float
    steps: int

    def lr_at(self, step: int) -> float:
        return self.lr * (self.steps - (step - self.start)) / self.steps

    def finished(self, step: int) -> bool:
        return step >= self.start + self.steps


@dataclass
class StopRule:
    """The checks made so far and the streak of passing ones."""

    config: StopConfig
    lengths: tuple[int, ...]  # every test length: a pass needs all of them
    checks: list[dict] = field(default_factory=list)  # {"step", "seconds", "exact"} per check
    streak: int = 0

    def passes(self, exact: dict[str, float]) -> bool:
        return (set(exact) == {str(n) for n in self.lengths}
                and all(v >= self.config.threshold for v in exact.values()))

    def record(self, step: int, seconds: float, exact: dict[str, float]) -> bool:
        """Add a check made after ``step`` steps, ``seconds`` into training; True when training should stop."""
        self.checks.append({"step": step, "seconds": round(seconds, 2), "exact": exact})
        self.streak = self.streak + 1 if self.passes(exact) else 0
        return self.streak >= self.config.patience

    @property
    def became_exact(self) -> dict | None:
        """The first check of the current passing streak, or None."""
        return self.checks[-self.streak] if self.streak else None

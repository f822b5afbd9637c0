"""What a tracker is trained with, each setting declared once: a field of a frozen dataclass with
its default and what a command says of it (``setting``), from which ``training.options`` makes
the click options of train-tracker and train-oracle.

- ``OptimConfig``: the seed, the steps, the batch, AdamW with warm-up and cosine decay, the
  gradient clip and the checkpoint interval: what the one training loop (``training.loop``) reads.
- ``TermsConfig``: the Nerode terms' weights and schedules on top of it (``schedule``): what the
  tracker's ``TrainConfig`` and the oracle's ``oracle.config.OracleConfig`` share.
- ``TrainConfig``: the tracker's own settings (its data, objective, architecture and model).

Every setting stays a flat field of one frozen dataclass: a checkpoint's and a report's ``config``
keep their keys, and a config is built from a command's options by name. The named presets of
TrainConfig are ``tracker.schedules``.
"""
from __future__ import annotations

import math
from dataclasses import dataclass

from tracker.layouts import LAYOUTS
from tracker.models import ARCHS, ModelConfig, is_own_arch
from tracker.registers import MOVES, TABLES
from training.config import FRACTION, OptimConfig, Setting, setting

OBJECTIVES = ("plain", "invariance", "nextlat", "metric", "combo", "nerode", "control", "self-distill")
INVARIANCE_DISTANCES = ("cosine", "rms")  # the invariance term's distance (tracker.losses)
STREAMS = ("dataset", "fresh")  # where a run's training histories come from (tracker.fresh)


# settings declared alike by the tracker and the oracle
WIDTH = Setting("Slot (residual) width.", low=8)  # the seed's 128
FIXED_NORM = Setting("Recurrence: rescale the slot to a fixed norm after every event, or leave its "
                     "norm free.", flag="--fixed-norm/--free-norm")  # fixed: no clock in its norm


def schedule(step: int, total: int, delay: float, ramp: float) -> float:
    """The weight multiplier at ``step`` of ``total``: 0 before delay*total, then linear to 1
    over ramp*total steps, then 1."""
    start, length = delay * total, ramp * total
    if step < start:
        return 0.0
    if length <= 0:
        return 1.0
    return min(1.0, (step - start + 1) / length)


@dataclass(frozen=True)
class TermsConfig(OptimConfig):
    """The Nerode terms' weights and when they act, on top of the optimiser's settings. The
    metric loss is the tracker's (``tracker.losses``, on chain pairs) or the oracle's (``oracle.losses``,
    on pairs of probed states); both take the same weight, schedule and discount."""

    mu: float = setting(1.0, "Weight of the invariance (and control, self-distill) term.", low=0,
                        rare=True)  # the seed's mu = 1
    # the default: held at 0 for 2,400 of 12,000 steps
    invariance_delay: float = setting(0.2, "Fraction of steps the invariance term is held at zero.", **FRACTION,
                                      rare=True)
    invariance_ramp: float = setting(0.1, "Fraction of steps over which it then ramps to mu.", **FRACTION, rare=True)
    nextlat_weight: float = setting(1.0, "Weight of next-latent prediction.", low=0, rare=True)
    nextlat_delay: float = setting(0.0, "Fraction of steps NextLat is held at zero.", **FRACTION, rare=True)
    nextlat_ramp: float = setting(0.0, "Fraction of steps of NextLat's ramp.", **FRACTION, rare=True)
    metric_weight: float = setting(1.0, "Weight of the Nerode metric loss.", low=0, rare=True)
    metric_delay: float = setting(0.2, "Fraction of steps the metric loss is held at zero.", **FRACTION, rare=True)
    metric_ramp: float = setting(0.1, "Fraction of steps of the metric loss's ramp.", **FRACTION, rare=True)
    gamma: float = setting(0.9, "Discount of the metric loss.", low=0, high=1, low_open=True, high_open=True,
                           rare=True)  # weight of the next step's distance in the metric target

    def __post_init__(self) -> None:
        if not 0 < self.gamma < 1:
            raise ValueError(f"gamma must lie in (0, 1), got {self.gamma}")
        super().__post_init__()

    def weight(self, term: str, step: int) -> float:
        """The weight of ``term`` (invariance, control, distill, nextlat or metric) at ``step``: its
        full weight times ``schedule``; past the last step (an extended run), its weight at the last
        step. Control and distill take invariance's weight and schedule: the arms compare at one."""
        full, delay, ramp = {"invariance": (self.mu, self.invariance_delay, self.invariance_ramp),
                             "control": (self.mu, self.invariance_delay, self.invariance_ramp),
                             "distill": (self.mu, self.invariance_delay, self.invariance_ramp),
                             "nextlat": (self.nextlat_weight, self.nextlat_delay, self.nextlat_ramp),
                             "metric": (self.metric_weight, self.metric_delay, self.metric_ramp)}[term]
        return full * schedule(min(step, self.steps - 1), self.steps, delay, ramp)


@dataclass(frozen=True)
class TrainConfig(TermsConfig):
    data: str = setting("data/tier1-a4", "Certified dataset directory (made by certify).", path=True)
    objective: str = setting(
        "combo", "plain: CE after every event; invariance/control: CE + mu(1 - centred cosine) on equivalent/"
                 "inequivalent pairs; self-distill: CE + mu KL(teacher || chain) of the readouts, each certified "
                 "partner the teacher (stop-gradient) of its chain, at the ends and after one common event; "
                 "nextlat: CE + next-latent prediction; metric: CE + Nerode metric loss; "
                 "combo: CE + NextLat + invariance; nerode: combo + the metric loss (both halves of the "
                 "Nerode relation: equivalent histories together, inequivalent ones apart).", choices=OBJECTIVES)
    arch: str = setting(
        "recurrence", "recurrence: the slot recurrence; transformer(2x): causal transformer over events at equal "
                      "(twice) per-event compute; deltaproduct: 2 DeltaProduct blocks; registers: one "
                      "register per tree position (rewrite chains, --layout paths), per variable (programs) or per "
                      "point a group's generators permute (groups; any domain that declares chains.registers); "
                      "package.module:Class: a model class of one's own, imported (docs/guide/bring-your-own-model.md).")
    width: int = setting(128, WIDTH)
    fixed_norm: bool = setting(True, FIXED_NORM)
    ticks: int = setting(4, "Recurrence: attention + MLP updates of the slot per event.", low=1, rare=True)
    slot_init: float = setting(1.0, "Recurrence: scale of the start slot's normal init (small: the first item writes "
                                    "the slot).", low=0, low_open=True, rare=True)  # of its N(0, I) init
    embed_init_std: float = setting(0.02, "Std of the token embeddings at init.", low=0, low_open=True, rare=True)
    slot_noise: float = setting(0.0, "Recurrence: std of the noise added to the slot (coordinates of RMS 1 at the "
                                     "fixed norm) after every event in training, so that the next events must correct "
                                     "it.", low=0, rare=True)  # N(0, I) noise
    slot_noise_delay: float = setting(0.0, "Fraction of steps trained without the slot noise.", **FRACTION, rare=True)
    dropout: float = setting(0.0, "Transformers: dropout rate of the blocks' residual branches in training.",
                             low=0, high=1, high_open=True, rare=True)
    # which tree position each readout slot names (tracker.layouts)
    layout: str = setting("polish", "Readout layout, rewrite chains only: polish (the tree token by token, "
                                    "left-aligned) or paths (each position named by its path from the root, so "
                                    "that an event moves whole subtrees).", choices=LAYOUTS, rare=True)
    ce_positions: str = setting("all", "Rewrite chains only: cross-entropy on every readout position (PAD "
                                       "included), or on the tree's own positions only (a tree read from the root is "
                                       "then exact when its own positions are).", choices=("all", "tree"), rare=True)
    moves: str = setting("soft", "Registers: a move reads the softmax mixture of its candidate sources (soft), or "
                                 "exactly the top one, trained through the softmax's gradient (hard).", choices=MOVES,
                         rare=True)
    # tied, inherited: on heads training never exercised too
    tables: str = setting("free", "Registers on rewrite chains: every target head's table row its own (free), or "
                                  "adding its parent head's score for the source's parent where both end in the "
                                  "same bit (tied: a subtree moved whole moves its children with it), that score as "
                                  "the moves read it (inherited).", choices=TABLES, rare=True)
    # straight-through moves learn nothing more once right, so a row's margin can stay at the noise of
    # the optimiser's steps (tier 2's root heads). Sharpening every row from the first step fixed rows
    # on wrong sources in its tier-2 validation; the move readout pulls toward the right one instead
    # (docs/experiments/beyond-training.md)
    table_sharpness: float = setting(0.0, "Registers on rewrite chains: weight of the tables' sharpness term, the "
                                          "mean entropy of every head's choice of source as the moves read it, so that "
                                          "a move keeps widening its margin once it is right (0: off).", low=0,
                                     rare=True)
    move_readout: float = setting(0.0, "Registers, hard moves: weight of a cross-entropy on the moves read as "
                                       "softmax mixtures of their sources before the update, so that a table keeps "
                                       "sharpening toward the right source once its top one is right (0: off).", low=0,
                                   rare=True)
    encoder: str = setting("", "A local Hugging Face causal model directory or cached name, whose middle layer reads "
                               "each statement; programs datasets and the recurrence only; empty: none.")
    # the term's first form in the seed paper: a distance the recurrence can pay by a common shift
    # of every coordinate, which the readout's LayerNorm discards; kept to test that correction
    invariance_distance: str = setting("cosine", "Distance of the invariance (and control) term: cosine, the centred "
                                                 "cosine of the readout's view LN(w); rms, the root-mean-square "
                                                 "distance of the raw slots w (the recurrence only).",
                                       choices=INVARIANCE_DISTANCES, rare=True)

    stream: str = setting("dataset", "Training histories: dataset, batches drawn from the dataset's training split; "
                                     "fresh, every step's histories drawn afresh from the dataset's domain as its "
                                     "training split was drawn (seeded by --seed and the step), every step of them "
                                     "certified through the certificate store before it enters a loss (every "
                                     "domain; docs/concepts/trackers.md).", choices=STREAMS)
    uniform_share: float = setting(0.0, "With --stream fresh: the share of a step's histories that start from a state "
                                        "drawn uniformly over the domain's states, each of 1 to --uniform-length "
                                        "events (the states a step meets far into a long history).", **FRACTION)
    uniform_length: int = setting(4, "With --uniform-share: the most events of a history from a uniformly drawn "
                                     "state.", low=1, rare=True)

    def __post_init__(self) -> None:
        if self.objective not in OBJECTIVES:
            raise ValueError(f"unknown objective {self.objective!r}; choose one of {', '.join(OBJECTIVES)}")
        if self.arch not in ARCHS and not is_own_arch(self.arch):
            raise ValueError(f"unknown arch {self.arch!r}; choose one of {', '.join(ARCHS)} or package.module:Class")
        if self.width < 8 or self.ticks < 1:  # steps, batch and checkpoints: OptimConfig's checks
            raise ValueError("ticks must be >= 1, width >= 8")
        if self.slot_init <= 0 or self.embed_init_std <= 0:
            raise ValueError("slot_init and embed_init_std must be > 0")
        if self.slot_noise < 0 or (self.slot_noise > 0 and self.arch != "recurrence"):
            raise ValueError("slot_noise must be >= 0, and > 0 only for the recurrence (the slot it perturbs)")
        if not 0 <= self.dropout < 1 or (self.dropout > 0 and not self.arch.startswith("transformer")):
            raise ValueError("dropout must lie in [0, 1), and be > 0 only for a transformer")
        if self.ce_positions not in ("all", "tree"):
            raise ValueError(f"unknown ce_positions {self.ce_positions!r}; choose all or tree")
        if self.layout not in LAYOUTS:
            raise ValueError(f"unknown layout {self.layout!r}; choose one of {', '.join(LAYOUTS)}")
        if self.moves not in MOVES or (self.moves != "soft" and self.arch != "registers"):
            raise ValueError(f"moves must be one of {', '.join(MOVES)}, and other than soft only for the registers")
        if self.tables not in TABLES or (self.tables != "free" and self.arch != "registers"):
            raise ValueError(f"tables must be one of {', '.join(TABLES)}, and other than free only for the registers")
        if self.table_sharpness < 0 or (self.table_sharpness > 0 and self.arch != "registers"):
            raise ValueError("table_sharpness must be >= 0, and > 0 only for the registers (the tables it sharpens)")
        if self.move_readout < 0 or (self.move_readout > 0 and (self.arch, self.moves) != ("registers", "hard")):
            raise ValueError("move_readout must be >= 0, and > 0 only for the registers with hard moves")
        if self.invariance_distance not in INVARIANCE_DISTANCES or (self.invariance_distance == "rms"
                                                                   and self.arch != "recurrence"):
            raise ValueError(f"invariance_distance must be one of {', '.join(INVARIANCE_DISTANCES)}, and rms only "
                             f"for the recurrence (the raw slot it measures)")
        if self.stream not in STREAMS or self.uniform_length < 1 or not 0 <= self.uniform_share <= 1:
            raise ValueError(f"stream must be one of {', '.join(STREAMS)}, uniform_share in [0, 1] and "
                             "uniform_length >= 1")
        if self.uniform_share > 0 and self.stream != "fresh":
            raise ValueError("uniform_share draws histories afresh: give it with --stream fresh")
        if self.stream == "fresh" and self.encoder:
            raise ValueError("a code model's encoder reads the dataset's own items; train it with --stream dataset")
        super().__post_init__()

    @property
    def model(self) -> ModelConfig:
        return ModelConfig(arch=self.arch, width=self.width, fixed_norm=self.fixed_norm, ticks=self.ticks,
                           slot_init=self.slot_init, embed_init_std=self.embed_init_std, moves=self.moves,
                           tables=self.tables, layout=self.layout, encoder=self.encoder)

    def full_weight_step(self) -> int:
        """The first step at which every term of the objective acts at its full weight (0: none has
        a schedule): the step fit-first checks wait for, so that a run never stops before its terms act."""
        shared = (self.invariance_delay, self.invariance_ramp)  # control and distill take invariance's schedule
        when = {"invariance": shared, "control": shared, "distill": shared,
                "nextlat": (self.nextlat_delay, self.nextlat_ramp), "metric": (self.metric_delay, self.metric_ramp)}
        return max((math.ceil((when[t][0] + when[t][1]) * self.steps) for t in self.terms), default=0)

    @property
    def terms(self) -> set[str]:
        return {"plain": set(), "invariance": {"invariance"}, "nextlat": {"nextlat"}, "metric": {"metric"},
                "combo": {"invariance", "nextlat"}, "nerode": {"invariance", "nextlat", "metric"},
                "control": {"control"}, "self-distill": {"distill"}}[self.objective]

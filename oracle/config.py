"""What an oracle arm is trained with, each setting declared once (``training.config.setting``): the
tracker's optimiser and Nerode terms (``tracker.config.TermsConfig``), with the oracle's own
defaults of steps and of the metric loss's schedule, and the arm's own settings. ``train-oracle``'s
options are made from these fields (``training.options``).
"""
from __future__ import annotations

from dataclasses import dataclass

from oracle.model import ARCHS, TERMED, OracleModelConfig
from tracker.config import FIXED_NORM, WIDTH, TermsConfig
from training.config import FRACTION, setting

OBJECTIVES = ("plain", "combo", "nerode")


@dataclass(frozen=True)
class OracleConfig(TermsConfig):
    # the settings the tracker shares are TermsConfig's; those redeclared here keep their place
    # (a report's config keeps its keys in order) and take the oracle's default or help
    steps: int = setting(8_000, "Optimiser steps.", low=1)  # one default run fits 15 minutes on 2 CPU cores (README)
    batch_chains: int = setting(28, "Chains per step, each with its probes (and its certified partners for combo).",
                                low=2)
    metric_weight: float = setting(1.0, "nerode: weight of the metric loss on inequivalent pairs.", low=0, rare=True)
    metric_delay: float = setting(0.0, "nerode: fraction of steps the metric loss is held at 0.", **FRACTION, rare=True)
    metric_ramp: float = setting(0.0, "nerode: fraction of steps of the metric loss's ramp.", **FRACTION, rare=True)
    gamma: float = setting(0.9, "nerode: the metric loss's discount.", low=0, high=1, low_open=True, high_open=True,
                           rare=True)
    data: str = setting("data/tier1-a4", "Probe dataset directory: chains made with certify --probes, or Mathlib proofs "
                                         "made with certify --mathlib (there: --objective plain, every arch but truth).",
                        path=True)
    objective: str = setting(
        "combo", "plain: cross-entropy of Lean's verdict class on every probe; combo: + NextLat + invariance on "
                 "certified partners; nerode: combo + the metric loss on pairs of probed states that Lean's verdicts "
                 "show inequivalent.", choices=OBJECTIVES)
    arch: str = setting(
        "recurrence", "recurrence: the slot recurrence; transformer: causal transformer at equal per-event compute; "
                      "blind: sees only the probe; truth: handed the true tree; probe-slot: a linear head on the slot "
                      "after it reads the probe (the seed's failed configuration, a control).", choices=ARCHS)
    width: int = setting(128, WIDTH)
    probe_width: int = setting(64, "Width of the probe encoding in the bilinear head.", low=1, rare=True)  # D
    fixed_norm: bool = setting(True, FIXED_NORM)
    metric_pairs: int = setting(256, "nerode: inequivalent pairs of probed states per step.", low=1, rare=True)
    completion_margin: float = setting(
        0.2, "nerode: an accepted, not complete probe's imagined successor is kept at least this far from the goal "
             "read as a start, a complete one's pulled onto it (0: no such term).", low=0, rare=True)
    completion_weight: float = setting(1.0, "nerode: weight of the comparison's term (completion_margin), on top of "
                                            "the metric loss's weight and schedule.", low=0, rare=True)
    completion_negatives: int = setting(0, "nerode: per chain, this many other trees of its goal's skeleton (read as "
                                           "starts), each complete successor kept completion_margin from them too "
                                           "(0: none).", low=0, rare=True)
    tree_weight: float = setting(0.0, "Weight of an auxiliary loss: the tracker's readout of the certified tree at "
                                      "every step, from the state the verdicts are read from (0: none). Training only: "
                                      "the oracle never decodes a tree when asked.", low=0, rare=True)
    validation: str = setting("", "Probe dataset of another seed whose held-out chains (up to 256 events) choose the "
                                  "threshold of complete-by-comparison [default: a sample of the training chains "
                                  "chooses it].")  # recorded as such

    def __post_init__(self) -> None:
        if self.objective not in OBJECTIVES:
            raise ValueError(f"unknown objective {self.objective!r}; choose one of {', '.join(OBJECTIVES)}")
        if self.arch not in ARCHS:
            raise ValueError(f"unknown arch {self.arch!r}; choose one of {', '.join(ARCHS)}")
        if self.objective != "plain" and self.arch not in TERMED:
            raise ValueError(f"the {self.arch} arm carries no state for NextLat and invariance to act on; "
                             "train it with --objective plain")
        if (self.width < 8 or self.probe_width < 1 or self.metric_pairs < 1 or self.completion_margin < 0
                or self.completion_weight < 0 or self.completion_negatives < 0 or self.tree_weight < 0):
            # steps, batch and checkpoints: OptimConfig's checks
            raise ValueError("probe_width and metric_pairs must be >= 1, width >= 8, completion_margin, "
                             "completion_weight, completion_negatives and tree_weight >= 0")
        if self.tree_weight and self.arch == "blind":
            raise ValueError("the blind arm carries no state for the tree term to read; train it with "
                             "--set tree_weight=0")
        super().__post_init__()

    @property
    def model(self) -> OracleModelConfig:
        return OracleModelConfig(arch=self.arch, width=self.width, probe_width=self.probe_width,
                                 fixed_norm=self.fixed_norm)

    def tree_shape(self, n_out: int, tree_len: int) -> tuple[int, int] | None:
        """The tracker readout's (output tokens, tree positions) the arm is built with: the
        dataset's when the tree term is on, None (no readout) otherwise."""
        return (n_out, tree_len) if self.tree_weight else None

    @property
    def terms(self) -> set[str]:
        return {"combo": {"nextlat", "invariance"}, "nerode": {"nextlat", "invariance", "metric"}}.get(
            self.objective, set())

    @property
    def schedule(self) -> dict:
        """When each term is on, in steps: the switch of NextLat and invariance, recorded in every report."""
        def at(delay: float, ramp: float) -> dict:
            return {"delay": delay, "ramp": ramp, "on_from_step": round(delay * self.steps),
                    "full_from_step": round((delay + ramp) * self.steps)}
        out = {}
        if "nextlat" in self.terms:
            out["nextlat"] = at(self.nextlat_delay, self.nextlat_ramp)
        if "invariance" in self.terms:
            out["invariance"] = at(self.invariance_delay, self.invariance_ramp)
        if "metric" in self.terms:
            out["metric"] = at(self.metric_delay, self.metric_ramp)
        return out

"""Named training schedules: presets of TrainConfig settings.

``default`` is TrainConfig's own defaults, the recipe the registered comparison runs (12,000
steps of 28 chains); its meaning never changes. ``fast`` is the time-to-exact experiment's short recipe, the one
``make run`` trains (how it was found and how it fares: docs/experiments/time-to-exact.md,
``benchmarks/time_to_exact.py``). ``tier2`` is the recipe the tier-2 diagnosis picked
(docs/experiments/tier2-exact.md, ``benchmarks/tracker_tier2.py``). ``registers`` trains the
registers arch as it passed beyond training (docs/experiments/beyond-training.md,
``benchmarks/tracker_beyond.py``), the one recipe for held-out events, pairs, unseen states and tier 2,
tested on fresh data by ``benchmarks/tracker_registers.py`` (docs/experiments/registers-recipe.md).
A report records the schedule its settings are closest to and the settings where they depart from it.

``tier2`` and ``registers`` read rewrite chains' tree geometry (a readout laid out by tree paths), as do
the settings of ``REWRITE_ONLY`` away from their defaults: on another domain the command refuses them by
name (``rewrite_only``), and a run there is never recorded against those schedules.
"""
from __future__ import annotations

from dataclasses import fields, replace

from tracker.config import TrainConfig
from training.options import read_value

# settings that say what is trained on and how it is saved, not how it is trained: a schedule
# leaves them to the caller, and they do not count when a report's schedule is named
NOT_SCHEDULED = ("data", "seed", "checkpoint_every")
# settings that read rewrite chains' trees: the readout's layout by tree paths, the cross-entropy on a tree's own
# positions, the registers' tables over tree heads and their sharpness (programs' registers have no tables); at
# TrainConfig's defaults each reads nothing of a tree
REWRITE_ONLY = ("layout", "ce_positions", "tables", "table_sharpness")

SCHEDULES: dict[str, dict] = {
    "default": {},
    # The fixed-norm slot with the invariance term, which the exploration on the device found learns
    # several times sooner when the first item can write the slot: a small start slot (0.05 N(0, I)
    # against a slot of norm sqrt(C)) and token embeddings of unit scale (at 0.02 the event's
    # signal is two small matrices deep, a saddle training takes thousands of steps to leave); two
    # ticks per event instead of four, which halves the MLP's share of a step. Cross-entropy alone
    # until 40% of the steps (it fits the short chains sooner without the other terms), then the
    # invariance term ramped in over 10% to mu = 4: at the seed's mu = 1 equivalent states stayed
    # 5e-3 apart and some seeds lost exactness at 4,096 as training went on; at 4 they sit ten times
    # closer and every seed tried was exact at every length. 28 chains, AdamW at 2e-3, 200
    # steps of warm-up, cosine decay over 4,000 steps; --check-every ends it once exact.
    "fast": {"objective": "invariance", "ticks": 2, "slot_init": 0.05, "embed_init_std": 1.0, "steps": 4_000,
             "invariance_delay": 0.4, "invariance_ramp": 0.1, "mu": 4.0},
    # Tier 2, as the diagnosis on validation chains picked it (docs/experiments/tier2-exact.md): the
    # hard-domain recurrence (4 ticks, small start slot, unit embeddings) with the readout laid out
    # by path in the tree, so that an event moves whole subtrees instead of shifting every later
    # position, and the cross-entropy on the tree's own positions; NextLat and invariance held at
    # zero for the first half (a representation first), then ramped over 10%; the seed's 24,000
    # steps. Train it on chains that start where a 64-event walk ends (certify --start-walk 64).
    # The registers arch (tracker.registers): one register of width 32 per tree position, moved by
    # per-rule tables over relative heads, each move reading exactly its top source (hard: with soft
    # mixtures the tables stayed blurred once the update cleaned up after them, and six atoms lost
    # 3% of chains by 4,096 events); the combination, 4,000 steps of 28 chains, the invariance term
    # ramped in after the first 20% as in the default recipe. How it was validated:
    # docs/experiments/beyond-training.md. Tables inherited from the parent head's move as the
    # moves read it, and the move readout at 1.0, because that batch's free tables failed twice:
    # on held-out events they never learned the heads only root associativity moves content through
    # (0.38 exact at 4,096; inherited tables passed there), and on tier 2 the hard moves alone left
    # every rule's root heads level (0.00-0.56 at 256; inherited tables with the move readout passed
    # there). Both together on every protocol, on fresh data, is what the registers-recipe batch
    # asks (benchmarks/tracker_registers.py). The variants it is weighed against: hard moves with free
    # tables is --set tables=free --set move_readout=0 (or --tables free --move-readout 0),
    # inherited tables alone --set move_readout=0.
    "registers": {"arch": "registers", "layout": "paths", "width": 32, "objective": "combo", "steps": 4_000,
                  "warmup_steps": 200, "moves": "hard", "tables": "inherited", "move_readout": 1.0},
    "tier2": {"objective": "combo", "ticks": 4, "slot_init": 0.05, "embed_init_std": 1.0, "steps": 24_000,
              "nextlat_delay": 0.5, "nextlat_ramp": 0.1, "invariance_delay": 0.5, "invariance_ramp": 0.1,
              "layout": "paths", "ce_positions": "tree"},
}


def scheduled(name: str, **settings) -> TrainConfig:
    """The config of schedule ``name``; ``settings`` (data, seed, or any override) go on top."""
    if name not in SCHEDULES:
        raise ValueError(f"unknown schedule {name!r}; choose one of {', '.join(SCHEDULES)}")
    return replace(TrainConfig(), **{**SCHEDULES[name], **settings})


def parse_settings(pairs: list[str]) -> dict:
    """``SETTING=VALUE`` pairs -> TrainConfig settings (rare or not), each value read and checked as
    its option reads it (``training.options.read_value``); a pair that names no training setting, or
    a value the setting does not take, raises ValueError."""
    known = {f.name: f for f in fields(TrainConfig)}
    out = {}
    for pair in pairs:
        name, sep, value = pair.partition("=")
        if not sep or name not in known:
            raise ValueError(f"{pair!r}: not SETTING=VALUE with a training setting's name")
        out[name] = read_value(known[name], value)
    return out


def for_rewrite(name: str) -> bool:
    """Whether schedule ``name`` sets a setting of ``REWRITE_ONLY`` away from its default (tier2, registers)."""
    defaults = TrainConfig()
    return any(SCHEDULES[name].get(k, getattr(defaults, k)) != getattr(defaults, k) for k in REWRITE_ONLY)


def rewrite_only(schedule: str, given: dict) -> list[str]:
    """What of a command line applies to rewrite chains only, in the order a refusal names it:
    "schedule" when ``schedule`` is a rewrite schedule, then each setting of ``given`` (setting ->
    value, as the user gave them) of ``REWRITE_ONLY`` away from its default."""
    defaults = TrainConfig()
    return (["schedule"] if for_rewrite(schedule) else []) + [
        k for k in REWRITE_ONLY if k in given and given[k] != getattr(defaults, k)]


def schedule_of(config: TrainConfig, domain: str = "rewrite") -> dict:
    """The schedule ``config`` is closest to (fewest settings apart; the first listed on a tie) and
    the settings where it departs from it: {"name": ..., "overrides": {setting: value}}. On a domain
    other than ``rewrite`` only the schedules it can take are weighed (not ``for_rewrite``), so that
    the overrides are what was set, never a tree's settings left at their defaults."""
    best = None
    for name in SCHEDULES:
        if domain != "rewrite" and for_rewrite(name):
            continue
        base = scheduled(name)
        overrides = {f.name: getattr(config, f.name) for f in fields(TrainConfig)
                     if f.name not in NOT_SCHEDULED and getattr(config, f.name) != getattr(base, f.name)}
        if best is None or len(overrides) < len(best["overrides"]):
            best = {"name": name, "overrides": overrides}
    return best

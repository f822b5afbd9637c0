"""Named training schedules: presets of TrainConfig settings.

``default`` is TrainConfig's own defaults, the recipe the registered comparison runs (12,000
steps of 28 chains); its meaning never changes. ``fast`` is the cheapest recipe found exact at
4,096 events on every seed tried (``benchmarks/time_to_exact.py``, README "Time to exact").
A report records the schedule its settings are closest to and the settings where they depart from it.
"""
from __future__ import annotations

from dataclasses import fields, replace

from tracker.train import TrainConfig

# settings that say what is trained on and how it is saved, not how it is trained: a schedule
# leaves them to the caller, and they do not count when a report's schedule is named
NOT_SCHEDULED = ("data", "seed", "checkpoint_every")

SCHEDULES: dict[str, dict] = {
    "default": {},
    "fast": {"steps": 1_500, "batch_chains": 16, "lr": 3e-3, "warmup_steps": 50, "invariance_delay": 0.0,
             "invariance_ramp": 0.1},
}


def scheduled(name: str, **settings) -> TrainConfig:
    """The config of schedule ``name``; ``settings`` (data, seed, or any override) go on top."""
    if name not in SCHEDULES:
        raise ValueError(f"unknown schedule {name!r}; choose one of {', '.join(SCHEDULES)}")
    return replace(TrainConfig(), **{**SCHEDULES[name], **settings})


def schedule_of(config: TrainConfig) -> dict:
    """The schedule ``config`` is closest to (fewest settings apart; the first listed on a tie) and
    the settings where it departs from it: {"name": ..., "overrides": {setting: value}}."""
    best = None
    for name in SCHEDULES:
        base = scheduled(name)
        overrides = {f.name: getattr(config, f.name) for f in fields(TrainConfig)
                     if f.name not in NOT_SCHEDULED and getattr(config, f.name) != getattr(base, f.name)}
        if best is None or len(overrides) < len(best["overrides"]):
            best = {"name": name, "overrides": overrides}
    return best

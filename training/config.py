"""Settings declared once: a field of a frozen dataclass with its default and what a command says of
it (``setting``), from which ``training.options`` makes click options; and ``OptimConfig``, what
the one training loop (``training.loop``) reads, shared by every trainer's config.

A setting declared ``rare`` (an experiment's knob, not a run's everyday choice) is not shown by
``--help``: a command takes it as ``--set SETTING=VALUE`` and lists it with ``--settings``; its
option is accepted too, unlisted, so that a recorded command line that gives it so runs as written.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True)
class Setting:
    """What a command says of one config field: its option's help and the values it accepts."""

    help: str  # the option's help, and the field's documentation
    low: float | None = None  # the least value accepted (None: no bound)
    high: float | None = None  # the largest value accepted (None: no bound)
    low_open: bool = False  # ``low`` itself refused
    high_open: bool = False  # ``high`` itself refused
    choices: tuple[str, ...] | None = None  # the only values accepted
    flag: str | None = None  # a boolean's option, "--on/--off"
    path: bool = False  # a directory: shown and parsed as a path, kept as text
    rare: bool = False  # given by --set SETTING=VALUE (its option accepted but not shown)

def setting(default: Any, help: str | Setting, **accepts: Any) -> Any:
    """A config field with its ``default`` and what a command says of it: ``help`` and the values
    it ``accepts`` (``Setting``'s fields), or a whole ``Setting``."""
    said = help if isinstance(help, Setting) else Setting(help, **accepts)
    return field(default=default, metadata={"setting": said})

FRACTION = {"low": 0, "high": 1}

@dataclass(frozen=True)
class OptimConfig:
    seed: int = setting(0, "Seed of init and batch order.")  # model init and batch order
    # the seed's 12,000 steps of 28 chains fit 15 min on 2 CPU cores
    steps: int = setting(12_000, "Optimiser steps.", low=1)
    # B chains per step with their K partners: B(1+K) histories
    batch_chains: int = setting(28, "Chains per step (each with its certified partners).", low=2)
    lr: float = setting(2e-3, "Peak learning rate (cosine decay to final_lr_fraction of it).", low=0, low_open=True)
    # the floor of the pair distance scales with it
    final_lr_fraction: float = setting(0.1, "Final learning rate as a fraction of the peak.", **FRACTION, rare=True)
    warmup_steps: int = setting(200, "Steps of linear learning-rate warm-up.", low=0, rare=True)
    weight_decay: float = setting(0.0, "AdamW weight decay.", low=0, rare=True)
    grad_clip: float = setting(1.0, "Clip of the global gradient norm.", low=0, low_open=True, rare=True)
    # one is also written at the end
    checkpoint_every: int = setting(500, "Steps between checkpoints.", low=1, rare=True)

    def __post_init__(self) -> None:
        if self.steps < 1 or self.batch_chains < 2 or self.checkpoint_every < 1:
            raise ValueError("steps and checkpoint_every must be >= 1, batch_chains >= 2")
        if not self.lr > 0 or not 0 <= self.final_lr_fraction <= 1 or self.warmup_steps < 0:
            raise ValueError("lr must be > 0, final_lr_fraction in [0, 1], warmup_steps >= 0")
        if self.weight_decay < 0 or not self.grad_clip > 0:
            raise ValueError("weight_decay must be >= 0 and grad_clip > 0")

"""Command-line options generated from the training settings of train-tracker and train-oracle.

Each setting is declared once, as a field of the command's config dataclass with its default and
what a command says of it (``training.config.setting``); ``config_options`` makes its option,
named after the field (``--warmup-steps`` is ``warmup_steps``), so a command builds its config
from its options by name. The defaults shown by ``--help`` are read from the config it is given.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import Field, fields
from pathlib import Path

import click

from training.config import Setting
from training.runlog import LogConfig

Decorator = Callable[[Callable], Callable]

# the settings both trainers have, in the order --help shows them after each command's own
SHARED = ("seed", "steps", "width", "batch_chains", "lr", "final_lr_fraction", "warmup_steps", "weight_decay",
          "grad_clip", "fixed_norm", "mu", "invariance_delay", "invariance_ramp", "nextlat_weight", "nextlat_delay",
          "nextlat_ramp", "checkpoint_every")


def config_options(defaults, names: Sequence[str], prefix: str = "") -> Decorator:
    """The options of the settings ``names`` of ``defaults`` (a config instance: a TrainConfig, an
    OracleConfig, a StopConfig...), in that order, each with the default it has there; with a
    ``prefix``, ``--<prefix>-<name>`` (the command's parameter ``<prefix>_<name>``)."""
    declared = {f.name: f for f in fields(defaults)}
    return stacked([config_option(declared[name], getattr(defaults, name), prefix) for name in names])


def config_option(field: Field, default, prefix: str = "") -> Decorator:
    """The option of one config field, as its ``Setting`` says, defaulting to ``default``."""
    said: Setting = field.metadata["setting"]
    name = f"{prefix}_{field.name}" if prefix else field.name
    if said.flag is not None:
        return click.option(said.flag, default=default, show_default=True, help=said.help)
    kind = field.type if isinstance(field.type, str) else field.type.__name__  # "int", "float", "str"
    if said.choices is not None:
        accepted = click.Choice(said.choices)
    elif said.path:
        accepted, default = click.Path(path_type=Path), Path(default)
    elif said.low is not None or said.high is not None:
        accepted = (click.IntRange if kind == "int" else click.FloatRange)(
            said.low, said.high, min_open=said.low_open, max_open=said.high_open)
    else:
        accepted = {"int": int, "float": float}.get(kind)  # text: click's default
    return click.option(f"--{name.replace('_', '-')}", type=accepted, default=default, show_default=True,
                        help=said.help)


RESUME_HELP = ("Continue from the checkpoint in --out with the same settings; with a larger --steps (and every "
               "other setting the same), extend the run: its steps so far are the original run's, and the "
               "schedule is continued, every further step at the final learning rate (--lr times "
               "--final-lr-fraction) with every loss term at its final weight; the report records it as "
               "extension.extended_from. Any other change of settings is refused.")


def run_options(default_out: str) -> Decorator:
    """--out, --resume, --force, --threads, --quiet, --log-every and --tensorboard: where a run goes, how
    it runs and what it logs, not what it learns."""
    options = [
        click.option("--out", type=click.Path(path_type=Path), default=None,
                     help=f"Run directory [default: {default_out}]."),
        click.option("--resume", is_flag=True, help=RESUME_HELP),
        click.option("--force", is_flag=True,
                     help="Replace a run at --out made with other settings (without it such a run is refused, "
                          "naming what differs; an unfinished one is continued by --resume)."),
        click.option("--threads", type=click.IntRange(1), default=None,
                     help="Torch threads [default: torch's, one per core]. Runs repeat bit for bit at a fixed "
                          "count of one."),
        click.option("--quiet", is_flag=True, help="No progress bar."),
        click.option("--log-every", type=click.IntRange(1), default=LogConfig.every, show_default=True,
                     help="Steps between lines of the run's metrics.jsonl (step, learning rate, every loss term; "
                          "the last step is always logged)."),
        click.option("--tensorboard", is_flag=True,
                     help="Also write TensorBoard event files into <out>/tensorboard (needs the tensorboard "
                          "extra: pip install 'exact-state[tensorboard]')."),
    ]

    return stacked(options)


def stacked(options: list[Decorator]) -> Decorator:
    """One decorator applying ``options`` in order (the first is shown first by --help)."""
    def decorate(command: Callable) -> Callable:
        for option in reversed(options):
            command = option(command)
        return command

    return decorate

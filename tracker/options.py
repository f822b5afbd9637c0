"""Command-line options for the training settings that train-tracker and train-oracle share.

Each option is named after a field of the command's config dataclass (``--warmup-steps`` is
``warmup_steps``), so a command builds its config from its options by name; the defaults shown
by ``--help`` are read from the config it is given.
"""
from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import click

from tracker.runlog import LogConfig

Decorator = Callable[[Callable], Callable]


def training_options(defaults, batch_help: str) -> Decorator:
    """The options of the settings common to both configs, defaults from ``defaults`` (a
    TrainConfig or an OracleConfig); ``batch_help`` says what a chain of a batch carries."""
    D = defaults
    options = [
        click.option("--seed", type=int, default=D.seed, show_default=True, help="Seed of init and batch order."),
        click.option("--steps", type=click.IntRange(1), default=D.steps, show_default=True, help="Optimiser steps."),
        click.option("--width", type=click.IntRange(8), default=D.width, show_default=True,
                     help="Slot (residual) width."),
        click.option("--batch-chains", type=click.IntRange(2), default=D.batch_chains, show_default=True,
                     help=batch_help),
        click.option("--lr", type=click.FloatRange(min=0, min_open=True), default=D.lr, show_default=True,
                     help="Peak learning rate (cosine decay to --final-lr-fraction of it)."),
        click.option("--final-lr-fraction", type=click.FloatRange(0, 1), default=D.final_lr_fraction,
                     show_default=True, help="Final learning rate as a fraction of the peak."),
        click.option("--warmup-steps", type=click.IntRange(0), default=D.warmup_steps, show_default=True,
                     help="Steps of linear learning-rate warm-up."),
        click.option("--weight-decay", type=click.FloatRange(0), default=D.weight_decay, show_default=True,
                     help="AdamW weight decay."),
        click.option("--grad-clip", type=click.FloatRange(min=0, min_open=True), default=D.grad_clip,
                     show_default=True, help="Clip of the global gradient norm."),
        click.option("--fixed-norm/--free-norm", default=D.fixed_norm, show_default=True,
                     help="Recurrence: rescale the slot to a fixed norm after every event (section 52), or leave "
                          "its norm free."),
        click.option("--mu", type=click.FloatRange(0), default=D.mu, show_default=True,
                     help="Weight of the invariance (and control) term."),
        click.option("--invariance-delay", type=click.FloatRange(0, 1), default=D.invariance_delay,
                     show_default=True, help="Fraction of steps the invariance term is held at zero."),
        click.option("--invariance-ramp", type=click.FloatRange(0, 1), default=D.invariance_ramp,
                     show_default=True, help="Fraction of steps over which it then ramps to mu."),
        click.option("--nextlat-weight", type=click.FloatRange(0), default=D.nextlat_weight, show_default=True,
                     help="Weight of next-latent prediction."),
        click.option("--nextlat-delay", type=click.FloatRange(0, 1), default=D.nextlat_delay, show_default=True,
                     help="Fraction of steps NextLat is held at zero."),
        click.option("--nextlat-ramp", type=click.FloatRange(0, 1), default=D.nextlat_ramp, show_default=True,
                     help="Fraction of steps of NextLat's ramp."),
        click.option("--checkpoint-every", type=click.IntRange(1), default=D.checkpoint_every, show_default=True,
                     help="Steps between checkpoints."),
    ]

    return stacked(options)


RESUME_HELP = ("Continue from the checkpoint in --out with the same settings; with a larger --steps (and every "
               "other setting the same), extend the run: its steps so far are the original run's, and the "
               "schedule is continued, every further step at the final learning rate (--lr times "
               "--final-lr-fraction) with every loss term at its final weight; the report records it as "
               "extension.extended_from. Any other change of settings is refused.")


def run_options(default_out: str) -> Decorator:
    """--out, --resume, --threads, --quiet, --log-every and --tensorboard: where a run goes, how
    it runs and what it logs, not what it learns."""
    options = [
        click.option("--out", type=click.Path(path_type=Path), default=None,
                     help=f"Run directory [default: {default_out}]."),
        click.option("--resume", is_flag=True, help=RESUME_HELP),
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

"""The ``train-tracker`` command: train a tracker on a certified dataset, evaluate it free-running,
and write a checkpoint, report.json and plots into --out."""
from __future__ import annotations

import json
import os
from pathlib import Path

import click
import torch
from click.core import ParameterSource

from chains.files import output_directory
from leanbridge.cliutil import user_errors
from tracker.device import DEVICE_HELP, DeviceUnavailable, resolve_device
from tracker.evaluate import EvalConfig
from tracker.layouts import LAYOUTS
from tracker.registers import MOVES, TABLES
from tracker.runlog import LogConfig
from tracker.models import ARCHS
from tracker.objectives import OBJECTIVES
from tracker.options import run_options, training_options
from tracker.schedules import SCHEDULES, scheduled
from tracker.stopping import StopConfig
from tracker.train import CheckpointError, TrainConfig, TrainingInterrupted, train

D = TrainConfig()  # the defaults shown by --help


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--schedule", type=click.Choice(tuple(SCHEDULES)), default="default", show_default=True,
              help="Named preset of the training settings below (default: the registered comparison's recipe; "
                   "fast: the short recipe of the time-to-exact experiment; tier2: the recipe of the tier-2 "
                   "experiment, for chains certified with --start-walk 64; registers: the registers arch, one "
                   "register per tree position, for what training never showed; see docs/experiments). Options given "
                   "explicitly override it.")
@click.option("--objective", type=click.Choice(OBJECTIVES), default=D.objective, show_default=True,
              help="plain: CE after every event; invariance/control: CE + mu(1 - centred cosine) on equivalent/"
                   "inequivalent pairs; nextlat: CE + next-latent prediction; metric: CE + Nerode metric loss; "
                   "combo: CE + NextLat + invariance; nerode: combo + the metric loss (both halves of the "
                   "Nerode relation: equivalent histories together, inequivalent ones apart).")
@click.option("--data", type=click.Path(path_type=Path), default=Path(D.data), show_default=True,
              help="Certified dataset directory (made by certify).")
@click.option("--arch", type=click.Choice(ARCHS), default=D.arch, show_default=True,
              help="recurrence: the slot recurrence; transformer(2x): causal transformer over events at equal "
                   "(twice) per-event compute; deltaproduct: 2 DeltaProduct blocks.")
@click.option("--metric-weight", type=click.FloatRange(0), default=D.metric_weight, show_default=True,
              help="Weight of the Nerode metric loss.")
@click.option("--metric-delay", type=click.FloatRange(0, 1), default=D.metric_delay, show_default=True,
              help="Fraction of steps the metric loss is held at zero.")
@click.option("--metric-ramp", type=click.FloatRange(0, 1), default=D.metric_ramp, show_default=True,
              help="Fraction of steps of the metric loss's ramp.")
@click.option("--gamma", type=click.FloatRange(0, 1, min_open=True, max_open=True), default=D.gamma,
              show_default=True, help="Discount of the metric loss.")
@click.option("--ticks", type=click.IntRange(1), default=D.ticks, show_default=True,
              help="Recurrence: attention + MLP updates of the slot per event.")
@click.option("--slot-init", type=click.FloatRange(min=0, min_open=True), default=D.slot_init, show_default=True,
              help="Recurrence: scale of the start slot's normal init (small: the first item writes the slot).")
@click.option("--embed-init-std", type=click.FloatRange(min=0, min_open=True), default=D.embed_init_std,
              show_default=True, help="Std of the token embeddings at init.")
@click.option("--slot-noise", type=click.FloatRange(0), default=D.slot_noise, show_default=True,
              help="Recurrence: std of the noise added to the slot (coordinates of RMS 1 at the fixed norm) after "
                   "every event in training, so that the next events must correct it.")
@click.option("--slot-noise-delay", type=click.FloatRange(0, 1), default=D.slot_noise_delay, show_default=True,
              help="Fraction of steps trained without the slot noise.")
@click.option("--dropout", type=click.FloatRange(0, 1, max_open=True), default=D.dropout, show_default=True,
              help="Transformers: dropout rate of the blocks' residual branches in training.")
@click.option("--layout", type=click.Choice(LAYOUTS), default=D.layout, show_default=True,
              help="Readout layout: polish (the tree token by token, left-aligned) or paths (each position named "
                   "by its path from the root, so that an event moves whole subtrees).")
@click.option("--ce-positions", type=click.Choice(["all", "tree"]), default=D.ce_positions, show_default=True,
              help="Cross-entropy on every readout position (PAD included), or on the tree's own positions only "
                   "(a tree read from the root is then exact when its own positions are).")
@click.option("--moves", type=click.Choice(MOVES), default=D.moves, show_default=True,
              help="Registers: a move reads the softmax mixture of its candidate sources (soft), or exactly the top "
                   "one, trained through the softmax's gradient (hard).")
@click.option("--tables", type=click.Choice(TABLES), default=D.tables, show_default=True,
              help="Registers: every target head's table row its own (free), or adding its parent head's score for "
                   "the source's parent where both end in the same bit (tied: a subtree moved whole moves its "
                   "children with it).")
@click.option("--eval-chains", type=click.IntRange(1), default=512, show_default=True,
              help="Held-out chains evaluated per length.")
@click.option("--eval-threads", type=click.IntRange(1), default=None,
              help="Torch threads for the evaluation [default: one per core]; the report's bits do not depend on it.")
@click.option("--check-every", type=click.IntRange(0), default=0, show_default=True,
              help="Stop when exact: every N steps read a few held-out chains of every length (shortest first) "
                   "and stop after --check-patience passing checks in a row (0: no checks).")
@click.option("--check-chains", type=click.IntRange(1), default=StopConfig.chains, show_default=True,
              help="Held-out chains per length a check reads (the last ones of each split).")
@click.option("--check-patience", type=click.IntRange(1), default=StopConfig.patience, show_default=True,
              help="Passing checks in a row that end training.")
@click.option("--check-cooldown", type=click.IntRange(0), default=StopConfig.cooldown, show_default=True,
              help="Once the checks say stop, train this many more steps with the learning rate falling "
                   "linearly towards zero, then stop.")
@click.option("--device", default="auto", show_default=True, help=DEVICE_HELP)
@click.option("--corrupted-checker", is_flag=True,
              help="Train on a dataset whose partners are partly wrong on purpose (certify --corrupt-partners), "
                   "which is refused without it; the report's dataset records the corruption.")
@training_options(D, "Chains per step (each with its certified partners).")
@run_options("runs/<arch>-<objective>-s<seed>")
def main(schedule: str, eval_chains: int, eval_threads: int | None, check_every: int, check_chains: int,
         check_patience: int, check_cooldown: int, device: str, corrupted_checker: bool, out: Path | None,
         resume: bool, threads: int | None,
         quiet: bool, log_every: int, tensorboard: bool, **settings) -> None:
    """Train a state tracker on certified rewrite chains and evaluate it on long held-out chains."""
    try:  # before anything is read or written: a device that is not here leaves nothing behind
        where = resolve_device(device)
    except DeviceUnavailable as e:
        raise click.ClickException(str(e)) from None
    # every other option is a TrainConfig field of the same name; the schedule sets those not given
    context = click.get_current_context()
    given = {name: value for name, value in settings.items()
             if context.get_parameter_source(name) != ParameterSource.DEFAULT}
    try:
        config = scheduled(schedule, **{**given, "data": str(settings["data"])})
        stop = StopConfig(every=check_every, chains=check_chains, patience=check_patience,
                          cooldown=check_cooldown)
    except ValueError as e:
        raise click.UsageError(str(e)) from None
    if threads is not None:
        torch.set_num_threads(threads)
    out = out or Path("runs") / f"{config.arch}-{config.objective}-s{config.seed}"
    # ValueError: e.g. an objective the dataset cannot serve; Ctrl-C here is before training
    # started (while loading) or during evaluation (training turns it into TrainingInterrupted)
    with user_errors(CheckpointError, TrainingInterrupted, ValueError,
                     interrupted=f"interrupted; any checkpoint in {out} is intact (--resume continues)"), \
            output_directory(out):
        report = train(config, out, resume=resume, show_progress=not quiet, stop=stop, device=where,
                       eval_config=EvalConfig(max_chains=eval_chains, threads=eval_threads or os.cpu_count()),
                       log=LogConfig(every=log_every, tensorboard=tensorboard), corrupted_checker=corrupted_checker)
    shown = {k: report[k] for k in ("schedule", "objective", "arch", "seed", "device", "steps", "exact", "in_distribution",
                                    "pair_distance", "pair_growth", "unrelated_distance", "seconds",
                                    "steps_per_second")}
    if "extension" in report:
        shown["extension"] = report["extension"]
    if "stop" in report:
        shown["stop"] = {k: v for k, v in report["stop"].items() if k not in ("checks", "config")}
    click.echo(json.dumps(shown, indent=2))
    click.echo(f"wrote {out / 'report.json'}, {out / 'checkpoint.pt'}, {out / 'metrics.jsonl'}, {out / 'exact.png'}, "
               f"{out / 'pair_distance.png'}")


if __name__ == "__main__":
    main()

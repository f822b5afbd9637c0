"""The ``train-oracle`` command: train an oracle arm on the probe verdicts of a certified dataset
(rewrite chains, or Mathlib proofs replayed through LeanDojo), evaluate it free-running on the
held-out probe chains, and write a checkpoint, report.json and plots into --out."""
from __future__ import annotations

import json
from pathlib import Path

import click
import torch

from chains.files import output_directory
from leanbridge.cliutil import user_errors
from oracle.evaluate import OracleEvalConfig
from oracle.model import ARCHS
from oracle.train import OBJECTIVES, OracleConfig, train
from tracker.train import CheckpointError, TrainingInterrupted

D = OracleConfig()  # the defaults shown by --help


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--objective", type=click.Choice(OBJECTIVES), default=D.objective, show_default=True,
              help="plain: cross-entropy of Lean's verdict class on every probe; combo: + NextLat + invariance "
                   "on certified partners.")
@click.option("--data", type=click.Path(path_type=Path), default=Path(D.data), show_default=True,
              help="Probe dataset directory: chains made with certify --probes, or Mathlib proofs made with "
                   "certify --mathlib (there: --objective plain, every arch but truth).")
@click.option("--arch", type=click.Choice(ARCHS), default=D.arch, show_default=True,
              help="recurrence: the slot recurrence; transformer: causal transformer at equal per-event compute; "
                   "blind: sees only the probe; truth: handed the true tree; probe-slot: a linear head on the slot "
                   "after it reads the probe (the seed's failed configuration, a control).")
@click.option("--seed", type=int, default=D.seed, show_default=True, help="Seed of init and batch order.")
@click.option("--steps", type=click.IntRange(1), default=D.steps, show_default=True, help="Optimiser steps.")
@click.option("--width", type=click.IntRange(8), default=D.width, show_default=True, help="Slot (residual) width.")
@click.option("--probe-width", type=click.IntRange(1), default=D.probe_width, show_default=True,
              help="Width of the probe encoding in the bilinear head.")
@click.option("--batch-chains", type=click.IntRange(2), default=D.batch_chains, show_default=True,
              help="Chains per step, each with its probes (and its certified partners for combo).")
@click.option("--lr", type=click.FloatRange(min=0, min_open=True), default=D.lr, show_default=True,
              help="Peak learning rate (cosine decay to --final-lr-fraction of it).")
@click.option("--final-lr-fraction", type=click.FloatRange(0, 1), default=D.final_lr_fraction, show_default=True,
              help="Final learning rate as a fraction of the peak.")
@click.option("--warmup-steps", type=click.IntRange(0), default=D.warmup_steps, show_default=True,
              help="Steps of linear learning-rate warm-up.")
@click.option("--weight-decay", type=click.FloatRange(0), default=D.weight_decay, show_default=True,
              help="AdamW weight decay.")
@click.option("--grad-clip", type=click.FloatRange(min=0, min_open=True), default=D.grad_clip, show_default=True,
              help="Clip of the global gradient norm.")
@click.option("--fixed-norm/--free-norm", default=D.fixed_norm, show_default=True,
              help="Recurrence: rescale the slot to a fixed norm after every event, or leave its norm free.")
@click.option("--mu", type=click.FloatRange(0), default=D.mu, show_default=True, help="Weight of the invariance term.")
@click.option("--invariance-delay", type=click.FloatRange(0, 1), default=D.invariance_delay, show_default=True,
              help="Fraction of steps the invariance term is held at zero.")
@click.option("--invariance-ramp", type=click.FloatRange(0, 1), default=D.invariance_ramp, show_default=True,
              help="Fraction of steps over which it then ramps to mu.")
@click.option("--nextlat-weight", type=click.FloatRange(0), default=D.nextlat_weight, show_default=True,
              help="Weight of next-latent prediction.")
@click.option("--nextlat-delay", type=click.FloatRange(0, 1), default=D.nextlat_delay, show_default=True,
              help="Fraction of steps NextLat is held at zero.")
@click.option("--nextlat-ramp", type=click.FloatRange(0, 1), default=D.nextlat_ramp, show_default=True,
              help="Fraction of steps of NextLat's ramp.")
@click.option("--checkpoint-every", type=click.IntRange(1), default=D.checkpoint_every, show_default=True,
              help="Steps between checkpoints.")
@click.option("--out", type=click.Path(path_type=Path), default=None,
              help="Run directory [default: runs/oracle-<arch>-<objective>-s<seed>].")
@click.option("--resume", is_flag=True, help="Continue from the checkpoint in --out (same settings).")
@click.option("--threads", type=click.IntRange(1), default=None,
              help="Torch threads [default: torch's, one per core]. Runs repeat bit for bit at a fixed count of one.")
@click.option("--quiet", is_flag=True, help="No progress bar.")
def main(out: Path | None, resume: bool, threads: int | None, quiet: bool, **settings) -> None:
    """Train a kernel oracle: predict Lean's verdict on probe rewrites along a chain, without asking it."""
    # every other option is an OracleConfig field of the same name
    try:
        config = OracleConfig(**{**settings, "data": str(settings["data"])})
    except ValueError as e:
        raise click.UsageError(str(e)) from None
    if threads is not None:
        torch.set_num_threads(threads)
    out = out or Path("runs") / f"oracle-{config.arch}-{config.objective}-s{config.seed}"
    # ValueError: e.g. an objective the dataset cannot serve; Ctrl-C here is before training
    # started (while loading) or during evaluation (training turns it into TrainingInterrupted)
    with user_errors(CheckpointError, TrainingInterrupted, ValueError,
                     interrupted=f"interrupted; any checkpoint in {out} is intact (--resume continues)"), \
            output_directory(out):
        report = train(config, out, resume=resume, show_progress=not quiet, eval_config=OracleEvalConfig())
    pooled = report["pooled"] or {}
    shown = {k: report[k] for k in ("arch", "objective", "seed", "steps", "accuracy", "all_right", "pair_distance",
                                    "unrelated_distance", "seconds", "steps_per_second", "eval_seconds")}
    shown["hard_by_depth"] = {b: h["balanced"] for b, h in pooled.get("hard", {}).items()}
    shown["guard"] = pooled.get("guard")
    click.echo(json.dumps(shown, indent=2))
    click.echo(f"wrote {out / 'report.json'}, {out / 'checkpoint.pt'}, {out / 'accuracy.png'}, "
               f"{out / 'kinds.png'}, {out / 'depth.png'}")


if __name__ == "__main__":
    main()

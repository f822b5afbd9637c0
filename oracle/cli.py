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
from tracker.device import DEVICE_HELP, DeviceUnavailable, resolve_device
from tracker.loop import CheckpointError, TrainingInterrupted
from tracker.options import run_options, training_options
from tracker.runlog import LogConfig

D = OracleConfig()  # the defaults shown by --help


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--objective", type=click.Choice(OBJECTIVES), default=D.objective, show_default=True,
              help="plain: cross-entropy of Lean's verdict class on every probe; combo: + NextLat + invariance "
                   "on certified partners; nerode: combo + the metric loss on pairs of probed states that Lean's "
                   "verdicts show inequivalent.")
@click.option("--data", type=click.Path(path_type=Path), default=Path(D.data), show_default=True,
              help="Probe dataset directory: chains made with certify --probes, or Mathlib proofs made with "
                   "certify --mathlib (there: --objective plain, every arch but truth).")
@click.option("--arch", type=click.Choice(ARCHS), default=D.arch, show_default=True,
              help="recurrence: the slot recurrence; transformer: causal transformer at equal per-event compute; "
                   "blind: sees only the probe; truth: handed the true tree; probe-slot: a linear head on the slot "
                   "after it reads the probe (the seed's failed configuration, a control).")
@click.option("--probe-width", type=click.IntRange(1), default=D.probe_width, show_default=True,
              help="Width of the probe encoding in the bilinear head.")
@click.option("--metric-weight", type=click.FloatRange(0), default=D.metric_weight, show_default=True,
              help="nerode: weight of the metric loss on inequivalent pairs.")
@click.option("--metric-delay", type=click.FloatRange(0, 1), default=D.metric_delay, show_default=True,
              help="nerode: fraction of steps the metric loss is held at 0.")
@click.option("--metric-ramp", type=click.FloatRange(0, 1), default=D.metric_ramp, show_default=True,
              help="nerode: fraction of steps of the metric loss's ramp.")
@click.option("--gamma", type=click.FloatRange(0, 1, min_open=True, max_open=True), default=D.gamma,
              show_default=True, help="nerode: the metric loss's discount.")
@click.option("--metric-pairs", type=click.IntRange(1), default=D.metric_pairs, show_default=True,
              help="nerode: inequivalent pairs of probed states per step.")
@click.option("--completion-margin", type=click.FloatRange(0), default=D.completion_margin, show_default=True,
              help="nerode: an accepted, not complete probe's imagined successor is kept at least this far from the "
                   "goal read as a start, a complete one's pulled onto it (0: no such term).")
@click.option("--completion-weight", type=click.FloatRange(0), default=D.completion_weight, show_default=True,
              help="nerode: weight of the comparison's term (--completion-margin), on top of the metric loss's "
                   "weight and schedule.")
@click.option("--completion-negatives", type=click.IntRange(0), default=D.completion_negatives, show_default=True,
              help="nerode: per chain, this many other trees of its goal's skeleton (read as starts), each "
                   "complete successor kept --completion-margin from them too (0: none).")
@click.option("--tree-weight", type=click.FloatRange(0), default=D.tree_weight, show_default=True,
              help="Weight of an auxiliary loss: the tracker's readout of the certified tree at every step, from "
                   "the state the verdicts are read from (0: none). Training only: the oracle never decodes a "
                   "tree when asked.")
@click.option("--validation", default=D.validation, show_default=True,
              help="Probe dataset of another seed whose held-out chains (up to 256 events) choose the threshold "
                   "of complete-by-comparison [default: a sample of the training chains chooses it].")
@click.option("--skip-test", is_flag=True,
              help="Judge the run on its --validation chains only; the held-out test chains are not read.")
@click.option("--device", default="auto", show_default=True, help=DEVICE_HELP)
@click.option("--corrupted-checker", is_flag=True,
              help="Train on a dataset whose partners are partly wrong on purpose (certify --corrupt-partners), "
                   "which is refused without it; the report's dataset records the corruption.")
@training_options(D, "Chains per step, each with its probes (and its certified partners for combo).")
@run_options("runs/oracle-<arch>-<objective>-s<seed>")
def main(out: Path | None, resume: bool, threads: int | None, quiet: bool, log_every: int, tensorboard: bool,
         skip_test: bool, device: str, corrupted_checker: bool, **settings) -> None:
    """Train a kernel oracle: predict Lean's verdict on probe rewrites along a chain, without asking it."""
    try:  # before anything is read or written: a device that is not here leaves nothing behind
        where = resolve_device(device)
    except DeviceUnavailable as e:
        raise click.ClickException(str(e)) from None
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
        report = train(config, out, resume=resume, show_progress=not quiet, eval_config=OracleEvalConfig(),
                       test=not skip_test, device=where, log=LogConfig(every=log_every, tensorboard=tensorboard),
                       corrupted_checker=corrupted_checker)
    shown = {k: report.get(k) for k in ("arch", "objective", "seed", "device", "steps", "accuracy", "all_right",
                                        "binary", "pair_distance", "unrelated_distance", "seconds",
                                        "steps_per_second", "eval_seconds")}
    comparison = report.get("comparison") or {}
    shown["comparison"] = {k: comparison.get(k) for k in ("threshold", "accuracy", "all_right")}
    shown["schedule"] = report["schedule"]
    if report.get("validation"):
        v = report["validation"]
        shown["validation"] = {"accuracy": v["accuracy"], "all_right": v["all_right"],
                               "comparison": {k: (v["comparison"] or {}).get(k) for k in ("accuracy", "all_right")},
                               "unrelated_distance": v["unrelated_distance"]}
    pooled = report.get("pooled") or {}
    shown["hard_by_depth"] = {b: h["balanced"] for b, h in pooled.get("hard", {}).items()}
    shown["guard"] = pooled.get("guard")
    click.echo(json.dumps(shown, indent=2))
    if "extension" in report:
        shown["extension"] = report["extension"]
    click.echo(f"wrote {out / 'report.json'}, {out / 'checkpoint.pt'}, {out / 'metrics.jsonl'}, {out / 'accuracy.png'}, "
               f"{out / 'kinds.png'}, {out / 'depth.png'}")


if __name__ == "__main__":
    main()

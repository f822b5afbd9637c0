"""The ``train-oracle`` command: train an oracle arm on the probe verdicts of a certified dataset
(rewrite chains, or Mathlib proofs replayed through LeanDojo), evaluate it free-running on the
held-out probe chains, and write a checkpoint, report.json and plots into --out."""
from __future__ import annotations

import json
from pathlib import Path

import click

from leanbridge.cliutil import OneLineCommand
from oracle.evaluate import OracleEvalConfig
from oracle.train import OracleConfig, train
from training.checkpoint import CHECKPOINT
from training.command import command_config, command_device, resuming, training_run
from training.device import DEVICE_HELP
from training.options import SHARED, config_options, given_settings, run_options, set_options
from training.runlog import METRICS, LogConfig

D = OracleConfig()  # the defaults shown by --help


@click.command(cls=OneLineCommand, context_settings={"help_option_names": ["-h", "--help"]})
@config_options(D, ("objective", "data", "arch", "probe_width", "metric_weight", "metric_delay", "metric_ramp", "gamma",
                    "metric_pairs", "completion_margin", "completion_weight", "completion_negatives", "tree_weight",
                    "validation"))
@click.option("--skip-test", is_flag=True,
              help="Judge the run on its --validation chains only; the held-out test chains are not read.")
@click.option("--device", default="auto", show_default=True, help=DEVICE_HELP)
@click.option("--corrupted-checker", is_flag=True,
              help="Train on a dataset whose partners are partly wrong on purpose (certify --corrupt-partners), "
                   "which is refused without it; the report's dataset records the corruption.")
@config_options(D, SHARED)
@set_options(D, "train-oracle")
@run_options("runs/oracle-<arch>-<objective>-s<seed>")
def main(out: Path | None, resume: bool, force: bool, threads: int | None, quiet: bool, log_every: int, tensorboard: bool,
         skip_test: bool, device: str, corrupted_checker: bool, sets: dict, **settings) -> None:
    """Train a kernel oracle: predict Lean's verdict on probe rewrites along a chain, without asking it."""
    where = command_device(device)
    # every other option, and every --set, is an OracleConfig field of the same name
    given = given_settings(settings, sets)
    config = command_config(lambda: OracleConfig(**{**settings, **given, "data": str(settings["data"])}))
    out = out or Path("runs") / f"oracle-{config.arch}-{config.objective}-s{config.seed}"
    with training_run(out, threads):
        report = train(config, out, resume=resuming(out, resume), show_progress=not quiet,
                       eval_config=OracleEvalConfig(), test=not skip_test, device=where,
                       log=LogConfig(every=log_every, tensorboard=tensorboard), corrupted_checker=corrupted_checker,
                       force=force)
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
    click.echo(f"wrote {out / 'report.json'}, {out / CHECKPOINT}, {out / METRICS}, {out / 'accuracy.png'}, "
               f"{out / 'kinds.png'}, {out / 'depth.png'}")


if __name__ == "__main__":
    main()

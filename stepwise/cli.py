"""The ``train-stepwise`` command: train the step-by-step model (a causal transformer that writes the
state after every event) on a certified rewrite dataset, evaluate it free-running on the held-out
test chains, and write a checkpoint, metrics.jsonl and report.json into --out."""
from __future__ import annotations

import json
from pathlib import Path

import click

from leanbridge.cliutil import OneLineCommand
from stepwise.config import StepwiseConfig
from stepwise.evaluate import StepwiseEvalConfig
from stepwise.train import train
from training.checkpoint import CHECKPOINT
from training.command import command_config, command_device, resuming, training_run
from training.device import DEVICE_HELP
from training.options import config_options, given_settings, run_options, set_options
from training.runlog import METRICS, LogConfig

D = StepwiseConfig()  # the defaults shown by --help
E = StepwiseEvalConfig()
OWN = ("data", "context", "objective", "rounds", "round_steps", "round_lr", "long_chains", "cuts", "long_weight",
       "width", "depth", "heads", "positions", "tied")
OPTIM = ("seed", "steps", "batch_chains", "lr", "final_lr_fraction", "warmup_steps", "weight_decay", "grad_clip",
         "checkpoint_every")


def read_lengths(context: click.Context, param: click.Parameter, text: str | None) -> tuple[int, ...] | None:
    """``8,64,256`` -> (8, 64, 256); a one-line usage error for anything else."""
    if text is None:
        return None
    try:
        lengths = tuple(int(part) for part in text.split(","))
    except ValueError:
        raise click.BadParameter(f"{text!r} is not a comma-separated list of test lengths, e.g. 8,64,256") from None
    if not lengths or min(lengths) < 1:
        raise click.BadParameter(f"{text!r}: every test length must be >= 1")
    return lengths


@click.command(cls=OneLineCommand, context_settings={"help_option_names": ["-h", "--help"]})
@config_options(D, OWN)
@click.option("--eval-lengths", callback=read_lengths, default=None, metavar="L1,L2,...",
              help="Test lengths (events per chain) evaluated free-running [default: every test length of the "
                   "dataset up to 1,024 events].")
@click.option("--eval-chains", type=click.IntRange(1), default=E.chains, show_default=True,
              help="Held-out chains evaluated per length (the first N).")
@click.option("--eval-batch", type=click.IntRange(1), default=E.batch, show_default=True,
              help="Chains run free together; memory grows with it and with the longest length.")
@click.option("--device", default="auto", show_default=True, help=DEVICE_HELP)
@click.option("--store", type=click.Path(dir_okay=False, path_type=Path), default=None,
              help="Certificate store through which the long histories' steps are certified (self-distill, "
                   "control, labelled) [default: the cache's].")
@config_options(D, OPTIM)
@set_options(D, "train-stepwise")
@run_options("runs/stepwise-s<seed>")
def main(eval_lengths: tuple[int, ...] | None, eval_chains: int, eval_batch: int, device: str, store: Path | None,
         sets: dict, out: Path | None, resume: bool, force: bool, threads: int | None, quiet: bool, log_every: int,
         tensorboard: bool, **settings) -> None:
    """Train a causal transformer that writes the tree after every event of a rewrite chain (or the state after
    every event of a programs dataset or one of a domain of one's own), its whole history in context (with --context
    state: its last written state and the event alone), and evaluate it free-running (reading its own writing) on the
    held-out chains. With --objective self-distill it is then taught long histories by its own predictions after a
    certified short equivalent, in rounds of doubling length."""
    where = command_device(device)
    given = given_settings(settings, sets)
    config = command_config(lambda: StepwiseConfig(**{**settings, **given, "data": str(settings["data"])}))
    out = out or Path("runs") / f"stepwise-s{config.seed}"
    evaluation = StepwiseEvalConfig(lengths=eval_lengths, chains=eval_chains, batch=eval_batch)
    with training_run(out, threads):
        report = train(config, out, resume=resuming(out, resume), show_progress=not quiet, eval_config=evaluation,
                       device=where, log=LogConfig(every=log_every, tensorboard=tensorboard), force=force, store=store)
    shown = {k: report.get(k) for k in ("seed", "device", "steps", "exact", "seconds", "steps_per_second",
                                        "eval_seconds")}
    shown["evaluation"] = {n: {k: r[k] for k in ("right_throughout", "first_wrong", "tokens_per_event")}
                           for n, r in report["evaluation"].items()}
    if "extension" in report:
        shown["extension"] = report["extension"]
    click.echo(json.dumps(shown, indent=2))
    click.echo(f"wrote {out / 'report.json'}, {out / CHECKPOINT}, {out / METRICS}")


if __name__ == "__main__":
    main()

"""The ``train-tracker`` command: train a tracker on a certified dataset, evaluate it free-running,
and write a checkpoint, report.json and plots into --out."""
from __future__ import annotations

import json
import os
from pathlib import Path

import click

from chains.manifest import DatasetError, domain_name, read_manifest_json
from leanbridge.cliutil import OneLineCommand
from tracker.config import TrainConfig
from tracker.evaluate import EvalConfig
from tracker.schedules import SCHEDULES, rewrite_only, scheduled
from tracker.stopping import StopConfig
from tracker.train import train
from training.checkpoint import CHECKPOINT
from training.command import command_config, command_device, resuming, training_run
from training.device import DEVICE_HELP
from training.options import SHARED, BadSetting, config_options, given_settings, run_options, set_options
from training.runlog import METRICS, LogConfig

D = TrainConfig()  # the defaults shown by --help


@click.command(cls=OneLineCommand, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--schedule", type=click.Choice(tuple(SCHEDULES)), default="default", show_default=True,
              help="Named preset of the training settings below (default: the registered comparison's recipe; "
                   "fast: the short recipe of the time-to-exact experiment; tier2: the recipe of the tier-2 "
                   "experiment, for chains certified with --start-walk 64; registers: the registers arch, one "
                   "register per tree position, for what training never showed; see docs/experiments); tier2 and "
                   "registers are for rewrite chains only. Options and --set settings given explicitly override it.")
@config_options(D, ("objective", "data", "arch", "encoder", "metric_weight", "metric_delay", "metric_ramp", "gamma",
                    "ticks", "slot_init", "embed_init_std", "slot_noise", "slot_noise_delay", "dropout", "layout",
                    "ce_positions", "moves", "tables", "table_sharpness", "move_readout", "invariance_distance",
                    "stream", "uniform_share", "uniform_length"))
@click.option("--eval-chains", type=click.IntRange(1), default=None,
              help="Held-out chains evaluated per length (the first ones of each test split) [default: every one "
                   "the dataset holds, less those the stop checks read]; asking for more than a split holds warns.")
@click.option("--eval-threads", type=click.IntRange(1), default=None,
              help="Torch threads for the evaluation [default: one per core]; the report's bits do not depend on it.")
@config_options(StopConfig(), ("every", "chains", "patience", "cooldown", "until"), prefix="check")
@click.option("--device", default="auto", show_default=True, help=DEVICE_HELP)
@click.option("--corrupted-checker", is_flag=True,
              help="Train on a dataset whose partners are partly wrong on purpose (certify --corrupt-partners), "
                   "which is refused without it; the report's dataset records the corruption.")
@config_options(D, SHARED)
@set_options(D, "train-tracker", note="; the defaults are the default schedule's, and --schedule may set others")
@run_options("runs/<arch>-<objective>-s<seed>")
def main(schedule: str, eval_chains: int | None, eval_threads: int | None, check_every: int, check_chains: int,
         check_patience: int, check_cooldown: int, check_until: str, device: str, corrupted_checker: bool, sets: dict,
         out: Path | None, resume: bool, force: bool, threads: int | None,
         quiet: bool, log_every: int, tensorboard: bool, **settings) -> None:
    """Train a state tracker on a certified dataset (rewrite chains, programs or a domain of one's own) and evaluate it
    on long held-out chains."""
    where = command_device(device)
    # every other option, and every --set, is a TrainConfig field of the same name; the schedule
    # sets those not given
    given = given_settings(settings, sets)
    refuse_off_domain(schedule, given, sets, settings["data"])
    config = command_config(lambda: scheduled(schedule, **{**given, "data": str(settings["data"])}))
    stop = command_config(lambda: StopConfig(every=check_every, chains=check_chains, patience=check_patience,
                                             cooldown=check_cooldown, until=check_until))
    out = out or Path("runs") / f"{config.arch.replace(':', '-')}-{config.objective}-s{config.seed}"
    with training_run(out, threads):
        report = train(config, out, resume=resuming(out, resume), show_progress=not quiet, stop=stop, device=where,
                       eval_config=EvalConfig(max_chains=eval_chains, threads=eval_threads or os.cpu_count()),
                       log=LogConfig(every=log_every, tensorboard=tensorboard), corrupted_checker=corrupted_checker,
                       force=force)
    shown = {k: report[k] for k in ("schedule", "objective", "arch", "seed", "device", "steps", "exact", "in_distribution",
                                    "pair_distance", "pair_growth", "unrelated_distance", "seconds",
                                    "steps_per_second")}
    if "extension" in report:
        shown["extension"] = report["extension"]
    beyond = {k: v for k, v in (report.get("beyond") or {}).items() if v}  # what training did not show
    if beyond:
        shown["beyond"] = beyond
    if "stop" in report:
        shown["stop"] = {k: v for k, v in report["stop"].items() if k not in ("checks", "config")}
    click.echo(json.dumps(shown, indent=2))
    click.echo(f"wrote {out / 'report.json'}, {out / CHECKPOINT}, {out / METRICS}, {out / 'exact.png'}, "
               f"{out / 'pair_distance.png'}")


def refuse_off_domain(schedule: str, given: dict, sets: dict, data: Path) -> None:
    """BadSetting, in one line naming the option as it was given and the dataset's domain, for a
    schedule or setting of rewrite chains (``tracker.schedules.rewrite_only``) on a dataset of another
    domain. A dataset whose manifest cannot be read is left to the run, which says why."""
    try:
        manifest = read_manifest_json(data)
    except DatasetError:
        return
    domain = domain_name(manifest) if isinstance(manifest, dict) else "rewrite"
    if domain == "rewrite":
        return
    for name in rewrite_only(schedule, given):
        if name == "schedule":
            typed = f"--schedule {schedule}"
        elif name in sets:
            typed = f"--set {name}={given[name]}"
        else:
            typed = f"--{name.replace('_', '-')} {given[name]}"
        registers = (name, schedule, domain) == ("schedule", "registers", "programs")
        hint = " (--arch registers there is a register per variable)" if registers else ""
        raise BadSetting(f"{typed} is for rewrite chains; {data} is a {domain} dataset{hint}")


if __name__ == "__main__":
    main()

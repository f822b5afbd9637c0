"""A grid of training runs: every arm (a named set of train-tracker settings) at every seed,
trained here, in worker processes, or as tasks on a Ray cluster, and collected into one results
file with a table on stdout.

    python -m benchmarks.grid --arm combo --arm plain --seeds 0,1,2 --schedule fast
    python -m benchmarks.grid --arm combo --arm tr:arch=transformer,objective=plain --seeds 0,1 \\
        --set steps=2000 --cluster auto --runs /shared/runs/grid --out /shared/results/grid.json
    python -m benchmarks.grid --arm combo --arm plain --seeds 0,1,2 --collect     # what is finished

Each run lives in ``<runs>/<arm>-s<seed>``. A finished run with the same settings is reused (from
its directory or from the results file), an interrupted one resumes from its checkpoint, so a
grid can be run in several sittings, and on a cluster a run whose worker or node dies continues
where its last checkpoint left it.
"""
from __future__ import annotations

from dataclasses import fields
from functools import partial
from pathlib import Path

import click

from benchmarks.harness import (Plan, batch_options, checked_device, exact_line, figure, recorded_runs, seed_list,
                                write_results)
from tracker.config import OBJECTIVES, TrainConfig
from tracker.evaluate import EvalConfig
from tracker.grid import RunSpec
from tracker.models import ARCHS
from tracker.schedules import SCHEDULES, scheduled

FIELDS = {f.name: f for f in fields(TrainConfig)}
NOT_PER_ARM = ("data", "seed")  # set by --data and --seeds


def setting(text: str, where: str) -> tuple[str, object]:
    """``name=value`` -> (the TrainConfig field, the value parsed by the field's type)."""
    name, sep, value = text.partition("=")
    name = name.strip().replace("-", "_")
    if not sep or name not in FIELDS or name in NOT_PER_ARM:
        known = ", ".join(n for n in FIELDS if n not in NOT_PER_ARM)
        raise click.UsageError(f"{where}: {text!r} is not SETTING=VALUE with SETTING one of {known}")
    kind, value = FIELDS[name].type, value.strip()
    try:
        if kind == "bool":
            if value.lower() not in ("true", "false", "1", "0", "yes", "no"):
                raise ValueError(value)
            return name, value.lower() in ("true", "1", "yes")
        return name, {"int": int, "float": float}.get(kind, str)(value)
    except ValueError:
        raise click.UsageError(f"{where}: {name} takes a {kind}, not {value!r}") from None


def parse_arm(text: str) -> tuple[str, dict]:
    """``NAME`` (an objective or an architecture) or ``NAME:SETTING=VALUE,...`` -> (name, settings)."""
    name, _, rest = text.partition(":")
    name = name.strip()
    if not name or "/" in name:
        raise click.UsageError(f"--arm {text!r}: an arm needs a name (no '/')")
    if rest.strip():
        return name, dict(setting(part, f"--arm {name}") for part in rest.split(",") if part.strip())
    if name in OBJECTIVES:
        return name, {"objective": name}
    if name in ARCHS:
        return name, {"arch": name}
    raise click.UsageError(f"--arm {name!r} is neither an objective ({', '.join(OBJECTIVES)}) nor an architecture "
                           f"({', '.join(ARCHS)}); give its settings as {name}:SETTING=VALUE,...")


def arm_config(name: str, seed: int, *, arms: dict[str, dict], schedule: str, common: dict, data: str) -> TrainConfig:
    try:
        return scheduled(schedule, **{**common, **arms[name], "data": data, "seed": seed})
    except ValueError as e:
        raise click.UsageError(f"arm {name}: {e}") from None


def run_dir(name: str, seed: int, *, runs: Path) -> Path:
    """``<runs>/<arm>-s<seed>``."""
    return runs / f"{name}-s{seed}"


def labelled(name: str, seed: int, report: dict) -> dict:
    return {**report, "arm": name}


def table(reports: list[dict]) -> str:
    lengths = sorted({int(k) for r in reports for k in r["exact"]})
    head = (["arm", "seed", "steps", "train fit"] + [f"exact@{n}" for n in lengths]
            + ["growth", "unrelated", "steps/s", "device"])
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in reports:
        row = ([r["arm"], str(r["seed"]), str(r["steps"]), figure((r.get("in_distribution") or {}).get("train"))]
               + [figure(r["exact"].get(str(n))) for n in lengths]
               + [figure(r["pair_growth"]), figure(r["unrelated_distance"]), figure(r["steps_per_second"]),
                  str(r.get("device", "cpu"))])
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines)


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--arm", "arm_specs", multiple=True, required=True, metavar="NAME[:SETTING=VALUE,...]",
              help="An arm of the grid (repeat for more): an objective (combo), an architecture (transformer), or "
                   "a name with its train-tracker settings, e.g. tr:arch=transformer,objective=plain,lr=5e-4.")
@click.option("--seeds", default="0", show_default=True, help="Comma-separated seeds; every arm runs each.")
@click.option("--schedule", type=click.Choice(tuple(SCHEDULES)), default="default", show_default=True,
              help="train-tracker's named schedule under every arm's settings.")
@click.option("--set", "common_specs", multiple=True, metavar="SETTING=VALUE",
              help="A train-tracker setting for every arm (repeat for more), e.g. --set batch_chains=16.")
@click.option("--data", default="data/tier1-a4", show_default=True, help="Certified dataset directory.")
@click.option("--eval-chains", type=click.IntRange(1), default=512, show_default=True, help="Test chains per length.")
@batch_options("runs/grid", "results/grid.json", devices=True)
def main(arm_specs, seeds, schedule, common_specs, data, eval_chains, steps, runs, out, workers, device, cluster,
         collect, quiet) -> None:
    """Train a grid of seeds and arms (here, in --workers processes, or on a Ray cluster with --cluster) and
    collect their reports into --out. Finished runs are reused and interrupted ones resumed."""
    arms = dict(parse_arm(text) for text in arm_specs)
    if len(arms) != len(arm_specs):
        raise click.UsageError("two --arm options share a name")
    common = dict(setting(text, "--set") for text in common_specs)
    if steps is not None:
        common["steps"] = steps
    jobs = [(name, seed) for seed in seed_list(seeds) for name in arms]
    settings = {"arms": arms, "schedule": schedule, "common": common, "data": data}
    for name in arms:  # a bad setting is a usage error before anything runs
        arm_config(name, 0, **settings)
    runs_of = Plan(partial(arm_config, **settings), partial(run_dir, runs=Path(runs)),
                   partial(RunSpec, eval_config=EvalConfig(max_chains=eval_chains)), label=labelled,
                   device=checked_device(device, cluster))
    reports, missing = runs_of.batch(jobs, recorded_runs(out), exact_line, workers, collect, quiet, cluster)
    write_results(out, {"grid": {"schedule": schedule, "data": data, "arms": arms, "common": common,
                                 "seeds": list(seed_list(seeds))},
                        "runs": reports, "missing": missing})
    if reports:
        click.echo(table(reports))
    click.echo(f"wrote {out}", err=True)


if __name__ == "__main__":
    main()

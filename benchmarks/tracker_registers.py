"""One registers recipe for everything held out: ``train-tracker --schedule registers`` (hard moves,
inherited tables, the move readout) on held-out events, held-out ordered pairs, unseen six-atom
states and tier 2, each certified afresh from a dataset seed no earlier dataset used.

    python -m benchmarks.tracker_registers                          # certify, train what is missing, collect
    python -m benchmarks.tracker_registers --arms events,pairs --seeds 0
    python -m benchmarks.tracker_registers --collect                # train nothing: collect and judge

Missing datasets are certified by ``certify`` into ``data/registers/<dataset>``; missing runs are
trained one at a time, each ``train-tracker --schedule registers --threads 1 --eval-threads 1
--check-every 250`` in a process of its own (launched by the harness, resumed from its checkpoint
when it was cut short), into ``runs/registers/<arm>-s<seed>``; then every finished run is collected
into ``results/tracker-registers.json`` with the predictions judged. A run with a report, or with a
row in the results (finished in another checkout), is finished and never trained again. The
predictions below were registered, with docs/experiments/registers-recipe.md, before any run of the
batch; the schedule's settings are registered with them (RECIPE), and the batch refuses to train
once the schedule says otherwise.
"""
from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable
from dataclasses import replace
from functools import partial
from pathlib import Path

import click

from benchmarks.harness import (Comparison, certified_dataset, chosen_arms, exact_line, launch, run_batch, seed_list,
                                verdict, write_results)
from tracker.config import TrainConfig
from tracker.schedules import SCHEDULES

BIN = Path(sys.executable).parent
DATA = Path("data/registers")
RUNS = Path("runs/registers")
RESULTS = Path("results/tracker-registers.json")
SCHEDULE = "registers"
# the registers schedule as this batch registered it: what every run trains
RECIPE = {"arch": "registers", "layout": "paths", "width": 32, "objective": "combo", "steps": 4_000,
          "warmup_steps": 200, "moves": "hard", "tables": "inherited", "move_readout": 1.0}
# every run's options beside its --seed and --data: the schedule at one thread, training and
# evaluation, and a check every 250 steps that stops it once exact (its report's stop record says when)
OPTIONS = ["--schedule", SCHEDULE, "--threads", "1", "--eval-threads", "1", "--check-every", "250"]

# dataset -> certify options. Every earlier dataset of the repository was certified from a seed of 0
# to 4 (the beyond batch's 0, 1 and 4, the tier-2 and hard-domain batches' 0 and 1, the mechanism
# page's six atoms 2, the reproducibility check's 3); these from 5 to 8, one each. Seed 5's four
# held-out events include a root associativity (mul_assoc_rev@), the kind free tables failed on.
DATASETS: dict[str, list[str]] = {
    "events-a4-s5": ["--atoms", "4", "--tier", "1", "--hold-out", "events:4", "--seed", "5"],
    "pairs-a4-s6": ["--atoms", "4", "--tier", "1", "--hold-out", "pairs:4", "--seed", "6"],
    # as the beyond batch's six-atom dataset: 20,000 training chains, tests at 8, 64, 256 and 4,096 events
    "states-a6-s7": ["--atoms", "6", "--tier", "1", "--hold-out", "states", "--chains", "20000",
                     "--test-lengths", "8,64,256,4096", "--seed", "7"],
    # as the beyond batch's tier-2 dataset: training chains start where a 64-event walk ends
    "tier2-a4-w64-s8": ["--atoms", "4", "--tier", "2", "--start-walk", "64", "--seed", "8"],
}
# arm -> its dataset, cheapest first (a6 and tier2 take about an hour a run at one thread)
ARMS = {"events": "events-a4-s5", "pairs": "pairs-a4-s6", "a6": "states-a6-s7", "tier2": "tier2-a4-w64-s8"}
SEEDS = (0, 1, 2)
EXACT = 0.99
MINUTES = 15  # the time to exact predicted on every events and pairs run, at one thread

# Registered before any run of the batch, with docs/experiments/registers-recipe.md.
PREDICTIONS = [
    ("events_exact", "Held-out events (tier 1, four atoms, --hold-out events:4, dataset seed 5): train-tracker "
                     "--schedule registers exact (>= 0.99) at 4,096 on 3 of 3 seeds"),
    ("events_first", "Held-out events: right just after the first held-out event on at least 0.99 of chains at "
                     "every test length, on 3 of 3 seeds"),
    ("pairs_exact", "Held-out ordered pairs (tier 1, four atoms, --hold-out pairs:4, dataset seed 6): exact (>= 0.99) "
                    "at 4,096 on 3 of 3 seeds"),
    ("a6_exact", "Six atoms (--hold-out states, 20,000 training chains, dataset seed 7): exact (>= 0.99) at 4,096 on "
                 "the chains whose end tree training never visited, on 3 of 3 seeds"),
    ("tier2_exact", "Tier 2 (four atoms, training chains from the end of a 64-event walk, dataset seed 8): exact "
                    "(>= 0.99) at 4,096, and at 256 on every end-tree size, on 3 of 3 seeds"),
    ("time_to_exact", "Time to exact at one thread (the stop record's exact_at_seconds: training and checks) under 15 "
                      "minutes on every events and pairs run, 6 of 6"),
]


def run_dir(arm: str, seed: int, runs: Path) -> Path:
    """``<runs>/<arm>-s<seed>``."""
    return runs / f"{arm}-s{seed}"


def arm_config(arm: str, seed: int, data: Path = DATA) -> TrainConfig:
    """What the arm's run at ``seed`` trains: the recipe as registered, on the arm's dataset under ``data``."""
    return replace(TrainConfig(), **RECIPE, seed=seed, data=str(data / ARMS[arm]))


def train_options(arm: str, seed: int, data: Path) -> list[str]:
    """The train-tracker options of one run (its --out beside them)."""
    return [*OPTIONS, "--seed", str(seed), "--data", str(data / ARMS[arm]), "--quiet"]


# ---- the judge ----

def exact_at(length: str) -> Callable[[dict], float | None]:
    """A report's exact at ``length`` events."""
    return lambda r: (r.get("exact") or {}).get(length)


def unseen_at(length: str) -> Callable[[dict], float | None]:
    """A report's exact at ``length`` events on the chains whose end tree training never visited."""
    return lambda r: ((((r.get("beyond") or {}).get("by_end_seen") or {}).get(length) or {}).get("unseen")
                      or {}).get("exact")


def first_heldout(r: dict) -> float | None:
    """Exact just after the first held-out item, at the test length where it is lowest."""
    found = [v["exact"] for v in ((r.get("beyond") or {}).get("first_heldout") or {}).values()]
    return min(found) if found else None


def least_size(r: dict, length: str = "256") -> float | None:
    """Exact at ``length`` on the end-tree size where it is lowest."""
    sizes = ((r.get("beyond") or {}).get("by_end_size") or {}).get(length) or {}
    found = [v["exact"] for v in sizes.values() if v["exact"] is not None]
    return min(found) if found else None


def seconds_to_exact(r: dict) -> float | None:
    """When the checks found the run exact (training and checks, seconds); None if they never did."""
    return (r.get("stop") or {}).get("exact_at_seconds")


def judge(reports: list[dict]) -> list[dict]:
    """Every registered prediction with what was measured (per run) and its verdict: failed by the
    first finished run on the wrong side of its bar (a finished run without the figure, such as one
    never exact, is on the wrong side), untested while a run it needs is missing."""
    at = {(r["arm"], r["seed"]): r for r in reports}

    def part(arms: tuple[str, ...], read, ok) -> tuple[dict, bool | None]:
        measured = {f"{arm}-s{seed}": read(at[arm, seed]) for arm in arms for seed in SEEDS if (arm, seed) in at}
        if any(v is None or not ok(v) for v in measured.values()):
            return measured, False
        return measured, True if len(measured) == len(arms) * len(SEEDS) else None

    def judged(key: str, parts: dict[str, tuple[dict, bool | None]]) -> dict:
        oks = [ok for _, ok in parts.values()]
        ok = False if False in oks else (None if None in oks else True)
        return verdict(key, dict(PREDICTIONS)[key], ok, {label: m for label, (m, _) in parts.items()})

    high = lambda v: v >= EXACT  # noqa: E731
    return [
        judged("events_exact", {"exact@4096": part(("events",), exact_at("4096"), high)}),
        judged("events_first", {"first held-out (lowest)": part(("events",), first_heldout, high)}),
        judged("pairs_exact", {"exact@4096": part(("pairs",), exact_at("4096"), high)}),
        judged("a6_exact", {"unseen@4096": part(("a6",), unseen_at("4096"), high)}),
        judged("tier2_exact", {"exact@4096": part(("tier2",), exact_at("4096"), high),
                               "least exact size@256": part(("tier2",), least_size, high)}),
        judged("time_to_exact", {"seconds to exact": part(("events", "pairs"), seconds_to_exact,
                                                          lambda v: v < MINUTES * 60)}),
    ]


DECLARED = {"registers": Comparison(
    arms={arm: SEEDS for arm in ARMS}, predictions=dict(PREDICTIONS), judge=judge, config=arm_config,
    run_dir=run_dir, runs=str(RUNS), results=str(RESULTS),
    settings={"schedule": SCHEDULE, "recipe": RECIPE, "options": OPTIONS, "data": str(DATA), "datasets": DATASETS,
              "arms": ARMS})}


# ---- certifying, training, collecting ----

def certified(name: str, data: Path) -> Path:
    """The dataset ``name`` under ``data``, certified now by ``certify`` unless it is there."""
    return certified_dataset(data / name, DATASETS[name])


def recorded_row(arm: str, seed: int, out: Path) -> dict | None:
    """The run's row in the results ``out`` (finished in another checkout, its directory gone), or None."""
    rows = json.loads(out.read_text()).get("runs", {}) if out.is_file() else {}
    return rows.get(run_dir(arm, seed, Path()).name)


def finished(arm: str, seed: int, *, runs: Path, out: Path) -> dict | None:
    """The finished run's report (labelled with its arm and seed), from its directory or the results;
    None while it is not finished."""
    path = run_dir(arm, seed, runs) / "report.json"
    if path.is_file():
        return {**json.loads(path.read_text()), "arm": arm, "seed": seed}
    return recorded_row(arm, seed, out)


def train_one(arm: str, seed: int, quiet: bool, threads: int | None, *, runs: Path, data: Path) -> dict:
    """Certify the arm's dataset if it is missing, then train (or resume) the run at one thread; its report."""
    certified(ARMS[arm], data)
    out = run_dir(arm, seed, runs)
    env = {**os.environ, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    try:
        launch([str(BIN / "train-tracker"), *train_options(arm, seed, data)], out, env=env)
    except subprocess.CalledProcessError as e:
        raise click.ClickException(f"{out}: train-tracker failed (exit {e.returncode}); any checkpoint there "
                                   "is kept, and the next call resumes it") from None
    return {**json.loads((out / "report.json").read_text()), "arm": arm, "seed": seed}


def summary(report: dict, dataset: str) -> dict:
    """What the results keep of a run's report: its settings, every figure the judge and the page
    read, and the stop record without its checks."""
    config = report.get("config") or {}
    kept = {k: report.get(k) for k in ("arm", "seed", "schedule", "steps", "exact", "in_distribution", "beyond",
                                       "pair_distance", "unrelated_distance", "seconds", "steps_per_second", "lean",
                                       "package_version", "torch_threads", "cpu_kernels")}
    stop = {k: v for k, v in (report.get("stop") or {}).items() if k != "checks"}
    return {**kept, "dataset": dataset, "config": {k: config.get(k) for k in RECIPE}, "stop": stop,
            "dataset_identity": report.get("dataset")}


def collected(runs: Path, out: Path) -> dict:
    """Every finished run of the batch (a recorded row kept when its directory is gone), the runs
    still missing and the predictions judged, written to ``out``."""
    rows, missing = {}, []
    for arm in ARMS:
        for seed in SEEDS:
            name = run_dir(arm, seed, Path()).name
            path = run_dir(arm, seed, runs) / "report.json"
            if path.is_file():
                rows[name] = summary({**json.loads(path.read_text()), "arm": arm, "seed": seed}, ARMS[arm])
            elif (row := recorded_row(arm, seed, out)) is not None:
                rows[name] = row
            else:
                missing.append(name)
    results = {"schedule": SCHEDULE, "recipe": RECIPE, "options": OPTIONS, "datasets": DATASETS, "arms": ARMS,
               "seeds": list(SEEDS), "exact_threshold": EXACT, "runs": rows, "missing": missing,
               "predictions": judge(list(rows.values()))}
    write_results(out, results)
    click.echo(f"wrote {out}: {len(rows)} runs, {len(missing)} missing")
    for p in results["predictions"]:
        click.echo(f"{p['verdict']:>8}  {p['id']}: {json.dumps(p['measured'])}")
    return results


def check_recipe() -> None:
    """Refuse to train once the registers schedule is no longer the recipe this batch registered."""
    if SCHEDULES[SCHEDULE] != RECIPE:
        raise click.ClickException(f"the {SCHEDULE} schedule is no longer the recipe this batch registered "
                                   f"({json.dumps(RECIPE)}); its runs would train something else")


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--arms", default=",".join(ARMS), show_default=True, help="Comma-separated arms, in this order.")
@click.option("--seeds", default=",".join(map(str, SEEDS)), show_default=True, help="Comma-separated seeds.")
@click.option("--data", type=click.Path(path_type=Path), default=DATA, show_default=True,
              help="Directory of the batch's datasets (certified there when missing).")
@click.option("--runs", type=click.Path(path_type=Path), default=RUNS, show_default=True,
              help="Directory of the individual runs.")
@click.option("--out", type=click.Path(path_type=Path), default=RESULTS, show_default=True,
              help="Where the collected runs and the predictions' verdicts go.")
@click.option("--collect", is_flag=True, help="Train nothing: collect the finished runs, judge, list the missing ones.")
def main(arms: str, seeds: str, data: Path, runs: Path, out: Path, collect: bool) -> None:
    """Certify the missing datasets, train the missing runs one at a time, collect and judge."""
    jobs = [(arm, seed) for arm in chosen_arms(arms, tuple(ARMS)) for seed in seed_list(seeds)]
    if not collect:
        check_recipe()
    run_batch(jobs, partial(train_one, runs=runs, data=data), partial(finished, runs=runs, out=out),
              exact_line, 1, collect, quiet=True)
    collected(runs, out)


if __name__ == "__main__":
    main()

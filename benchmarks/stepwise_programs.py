"""Benchmark: the step-by-step model (the seed's chain-of-thought arm) on programs, the domain the seed
measured it on: the self-distillation comparison's step-by-step recipe with the plain objective,
trained on the programs comparison's Bits dataset (programs of 4 to 16 statements) and run free on
64 held-out programs of 16, 64 and 256 statements. Seed 0 was run first, as a measurement; the
predictions below were registered after it and before seeds 1 and 2, which they judge.

Writes results/stepwise-programs.json (every run's report, the predictions with their verdicts).

    .venv/bin/python -m benchmarks.stepwise_programs [--seeds 0,1,2] [--workers 1] [--collect]
"""
from __future__ import annotations

from dataclasses import replace
from functools import partial
from pathlib import Path

import click

from benchmarks import programs_comparison as programs
from benchmarks.harness import Plan, batch_options, figure, prediction_lines, seed_list, verdict, write_results
from benchmarks.self_distill_comparison import STEPWISE
from stepwise.config import StepwiseConfig
from stepwise.evaluate import StepwiseEvalConfig
from stepwise.grid import StepwiseRunSpec

ARM = "stepwise-bits"
DATASET = programs.DATA / "bits-s9"
# the comparison's recipe; its long histories' settings (long_chains, cuts) serve its other objectives only
RECIPE = {**{k: v for k, v in STEPWISE.items() if k not in ("long_chains", "cuts")}, "objective": "plain"}
EVAL = StepwiseEvalConfig(lengths=(16, 64, 256), chains=64)
LENGTHS = ("16", "64", "256")
RUNS, RESULTS = Path("runs/stepwise-programs"), Path("results/stepwise-programs.json")
JUDGED = (1, 2)  # the seeds the predictions judge: run after they were written

PREDICTIONS = [
    ("fits_training_length", "Exact at 16 statements (the training programs' longest) at least 0.9 on seeds 1 and 2"),
    ("drifts", "Below 0.5 exact at 64 and at 256 statements on seeds 1 and 2 (the seed's arm: 0.06-0.37 at 256)"),
    ("first_wrong_early", "The median first wrong statement on the programs of 256 before statement 64 on seeds 1 and 2 "
                          "(seed 0: 39; the seed: 53 to 90)"),
]


def arm_config(arm: str, seed: int) -> StepwiseConfig:
    return replace(StepwiseConfig(), **RECIPE, seed=seed, data=str(DATASET))


def run_dir(arm: str, seed: int, runs: Path = RUNS) -> Path:
    return runs / f"bits-s{seed}"


def labelled(arm: str, seed: int, report: dict) -> dict:
    return {**report, "arm": arm, "seed": seed}


def run_spec(config: StepwiseConfig, out: str) -> StepwiseRunSpec:
    return StepwiseRunSpec(config, out, EVAL)


def judge(reports: list[dict]) -> list[dict]:
    """Each prediction on the judged seeds' runs; untested while one is missing."""
    at = {r["seed"]: r for r in reports if r["seed"] in JUDGED}
    complete = len(at) == len(JUDGED)

    def median_first(r: dict) -> float | None:
        quartiles = (r["evaluation"]["256"].get("first_wrong") or {}).get("quartiles")
        return None if quartiles is None else quartiles[1]

    exact = {s: {n: r["exact"].get(n) for n in LENGTHS} for s, r in at.items()}
    first = {s: median_first(r) for s, r in at.items()}
    return [
        verdict("fits_training_length", PREDICTIONS[0][1], all(e["16"] >= 0.9 for e in exact.values())
                if complete else None, exact),
        verdict("drifts", PREDICTIONS[1][1], all(e["64"] < 0.5 and e["256"] < 0.5 for e in exact.values())
                if complete else None, exact),
        verdict("first_wrong_early", PREDICTIONS[2][1], all(f is not None and f < 64 for f in first.values())
                if complete else None, first),
    ]


def table(reports: list[dict], predictions: list[dict]) -> str:
    head = ["seed", "steps", *[f"exact@{n}" for n in LENGTHS], "first wrong@256", "tokens/statement", "train s"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in sorted(reports, key=lambda r: r["seed"]):
        quartiles = (r["evaluation"]["256"].get("first_wrong") or {}).get("quartiles")
        lines.append("| " + " | ".join([str(r["seed"]), str(r["steps"]), *[figure(r["exact"].get(n)) for n in LENGTHS],
                                        figure(quartiles[1], 1) if quartiles else "–",
                                        figure(r["evaluation"]["256"]["tokens_per_event"], 1),
                                        figure(r.get("seconds"), 0)]) + " |")
    return "\n".join(lines + prediction_lines(predictions))


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--seeds", default="0,1,2", show_default=True, help="Comma-separated seeds.")
@batch_options(str(RUNS), str(RESULTS))
def main(seeds: str, steps: int | None, runs: Path, out: Path, workers: int, collect: bool, quiet: bool) -> None:
    """Train the missing runs (one thread each), collect and judge."""
    if steps is not None:
        raise click.UsageError("the recipe's steps are fixed; --steps is not taken")
    plan = Plan(arm_config, partial(run_dir, runs=runs), run_spec, label=labelled, threads=1)
    reports, missing = plan.batch_into([(ARM, s) for s in seed_list(seeds)], out, workers, collect, quiet)
    predictions = judge(reports)
    write_results(out, {"arm": ARM, "recipe": RECIPE, "dataset": str(DATASET), "runs": reports, "missing": missing,
                        "predictions": predictions, "registered": dict(PREDICTIONS)})
    click.echo(table(reports, predictions))
    click.echo(f"\nwrote {out}", err=True)


if __name__ == "__main__":
    main()

"""Benchmark: the step-by-step model (the seed's chain-of-thought arm) on programs, the domain the seed
measured it on: the self-distillation comparison's step-by-step recipe, trained on the programs
comparison's Bits dataset (programs of 4 to 16 statements) and run free on 64 held-out programs of
16, 64 and 256 statements. Three arms: the plain objective (the seed's arm; seed 0 was run first,
as a measurement, and its three predictions registered before seeds 1 and 2, which they judge),
self-distillation in four rounds of 75 steps (long programs of up to 32, 64, 128 and 256
statements; each short equivalent is the domain's own, one constant assignment for each variable
that differs, every step certified) and its control (short programs ending elsewhere). The last
two arms' predictions were registered before any of their runs. Every arm learns at the same rates
(the last 300 steps capped at 1e-4).

Writes results/stepwise-programs.json (every run's report, the predictions with their verdicts).

    .venv/bin/python -m benchmarks.stepwise_programs [--arms stepwise-bits,stepwise-bits-distill]
        [--seeds 0,1,2] [--workers 1] [--collect]
"""
from __future__ import annotations

from dataclasses import replace
from functools import partial
from pathlib import Path

import click

from benchmarks import programs_comparison as programs
from benchmarks.harness import (Plan, batch_options, chosen_arms, figure, prediction_lines, seed_list, verdict,
                                write_results)
from benchmarks.self_distill_comparison import STEPWISE
from stepwise.config import StepwiseConfig
from stepwise.evaluate import StepwiseEvalConfig
from stepwise.grid import StepwiseRunSpec

DATASET = programs.DATA / "bits-s9"
# the comparison's recipe; its long histories' settings (long_chains, cuts) serve its other objectives only
RECIPE = {**{k: v for k, v in STEPWISE.items() if k not in ("long_chains", "cuts")}, "objective": "plain"}
# rounds to 256 statements (the longest evaluated) over the same last 300 steps at the capped rate
ROUNDS = {**STEPWISE, "rounds": 4, "round_steps": 75}
ARMS: dict[str, dict] = {
    "stepwise-bits": RECIPE,
    "stepwise-bits-distill": {**ROUNDS, "objective": "self-distill"},
    "stepwise-bits-control": {**ROUNDS, "objective": "control"},
}
EVAL = StepwiseEvalConfig(lengths=(16, 64, 256), chains=64)
LENGTHS = ("16", "64", "256")
RUNS, RESULTS = Path("runs/stepwise-programs"), Path("results/stepwise-programs.json")
JUDGED = (1, 2)  # the seeds the seed's arm's predictions judge: run after they were written
SEEDS = (0, 1, 2)  # the seeds of the self-distillation arms' predictions

PREDICTIONS = [
    ("fits_training_length", "Exact at 16 statements (the training programs' longest) at least 0.9 on seeds 1 and 2"),
    ("drifts", "Below 0.5 exact at 64 and at 256 statements on seeds 1 and 2 (the seed's arm: 0.06-0.37 at 256)"),
    ("first_wrong_early", "The median first wrong statement on the programs of 256 before statement 64 on seeds 1 and 2 "
                          "(seed 0: 39; the seed: 53 to 90)"),
    ("bits_distill_helps", "Self-distillation on programs: mean exact at 256 statements over seeds 0-2 at least 0.1 "
                           "above the seed's arm's (0.099)"),
    ("bits_distill_later_first_error", "Self-distillation on programs: the median first wrong statement at 256 later "
                                       "than the seed's arm's on the same seed, on at least 2 of 3 seeds"),
    ("bits_control_does_not_help", "The control on programs (distilled from short programs ending elsewhere): mean "
                                   "exact at 256 no more than 0.05 above the seed's arm's"),
]


def arm_config(arm: str, seed: int) -> StepwiseConfig:
    return replace(StepwiseConfig(), **ARMS[arm], seed=seed, data=str(DATASET))


def run_dir(arm: str, seed: int, runs: Path = RUNS) -> Path:
    return runs / f"{arm.replace('stepwise-', '')}-s{seed}"


def labelled(arm: str, seed: int, report: dict) -> dict:
    return {**report, "arm": arm, "seed": seed}


def run_spec(config: StepwiseConfig, out: str) -> StepwiseRunSpec:
    return StepwiseRunSpec(config, out, EVAL)


def median_first(report: dict) -> float | None:
    """The median first wrong statement on the programs of 256 (None when none went wrong)."""
    quartiles = (report["evaluation"]["256"].get("first_wrong") or {}).get("quartiles")
    return None if quartiles is None else quartiles[1]


def judge(reports: list[dict]) -> list[dict]:
    """Each prediction on the runs it judges; untested while one is missing."""
    by_arm = {arm: {r["seed"]: r for r in reports if r["arm"] == arm} for arm in ARMS}
    plain = {s: r for s, r in by_arm["stepwise-bits"].items() if s in JUDGED}
    complete = len(plain) == len(JUDGED)
    exact = {s: {n: r["exact"].get(n) for n in LENGTHS} for s, r in plain.items()}
    first = {s: median_first(r) for s, r in plain.items()}

    def mean_256(arm: str) -> float | None:
        runs = by_arm[arm]
        return sum(runs[s]["exact"]["256"] for s in SEEDS) / len(SEEDS) if set(SEEDS) <= set(runs) else None

    base, distilled, control = mean_256("stepwise-bits"), mean_256("stepwise-bits-distill"), \
        mean_256("stepwise-bits-control")
    distill_runs, plain_runs = by_arm["stepwise-bits-distill"], by_arm["stepwise-bits"]
    later = {s: [median_first(runs[s]) if s in runs else None for runs in (distill_runs, plain_runs)] for s in SEEDS}
    later_ok = None  # a run with no wrong statement at all on the programs of 256 counts as later
    if set(SEEDS) <= set(distill_runs) and set(SEEDS) <= set(plain_runs):
        later_ok = sum(d is None or (p is not None and d > p) for d, p in later.values()) >= 2
    return [
        verdict("fits_training_length", PREDICTIONS[0][1], all(e["16"] >= 0.9 for e in exact.values())
                if complete else None, exact),
        verdict("drifts", PREDICTIONS[1][1], all(e["64"] < 0.5 and e["256"] < 0.5 for e in exact.values())
                if complete else None, exact),
        verdict("first_wrong_early", PREDICTIONS[2][1], all(f is not None and f < 64 for f in first.values())
                if complete else None, first),
        verdict("bits_distill_helps", PREDICTIONS[3][1], None if base is None or distilled is None
                else distilled >= base + 0.1, {"stepwise-bits-distill": distilled, "stepwise-bits": base}),
        verdict("bits_distill_later_first_error", PREDICTIONS[4][1], later_ok, later),
        verdict("bits_control_does_not_help", PREDICTIONS[5][1], None if base is None or control is None
                else control <= base + 0.05, {"stepwise-bits-control": control, "stepwise-bits": base}),
    ]


def table(reports: list[dict], predictions: list[dict]) -> str:
    head = ["arm", "seed", "steps", *[f"exact@{n}" for n in LENGTHS], "first wrong@256", "tokens/statement", "train s"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in sorted(reports, key=lambda r: (list(ARMS).index(r["arm"]), r["seed"])):
        first = median_first(r)
        lines.append("| " + " | ".join([r["arm"], str(r["seed"]), str(r["steps"]),
                                        *[figure(r["exact"].get(n)) for n in LENGTHS],
                                        "–" if first is None else figure(first, 1),
                                        figure(r["evaluation"]["256"]["tokens_per_event"], 1),
                                        figure(r.get("seconds"), 0)]) + " |")
    return "\n".join(lines + prediction_lines(predictions))


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--arms", default=",".join(ARMS), show_default=True, help="Comma-separated arms, in this order.")
@click.option("--seeds", default="0,1,2", show_default=True, help="Comma-separated seeds.")
@batch_options(str(RUNS), str(RESULTS))
def main(arms: str, seeds: str, steps: int | None, runs: Path, out: Path, workers: int, collect: bool,
         quiet: bool) -> None:
    """Train the missing runs (one thread each), collect and judge."""
    if steps is not None:
        raise click.UsageError("the recipe's steps are fixed; --steps is not taken")
    plan = Plan(arm_config, partial(run_dir, runs=runs), run_spec, label=labelled, threads=1)
    jobs = [(arm, s) for arm in chosen_arms(arms, tuple(ARMS)) for s in seed_list(seeds)]
    reports, missing = plan.batch_into(jobs, out, workers, collect, quiet)
    predictions = judge(reports)
    write_results(out, {"arms": ARMS, "dataset": str(DATASET), "runs": reports, "missing": missing,
                        "predictions": predictions, "registered": dict(PREDICTIONS)})
    click.echo(table(reports, predictions))
    click.echo(f"\nwrote {out}", err=True)


if __name__ == "__main__":
    main()

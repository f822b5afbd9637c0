"""The registered comparison of Nerode self-distillation: the step-by-step model trained on the short
chains alone (the seed's arm), with self-distillation in rounds of doubling length, with the control
(distilled from a short history ending elsewhere) and with labelled long histories (a ceiling only);
and the same output-level term on the slot recurrence's readout beside the state-level invariance
term, where the plain recurrence drifts.

    python -m benchmarks.self_distill_comparison --workers 2      # certify, train what is missing, collect
    python -m benchmarks.self_distill_comparison --arms stepwise-distill --seeds 0
    python -m benchmarks.self_distill_comparison --collect        # train nothing: collect and judge

The step-by-step arms train on a tier-1, four-atom dataset certified from a registered seed no
earlier dataset used (``data/self-distill-registered``); the slot arms on the rewrite comparison's
recipe with the norm free (with the fixed norm its plain recurrence is already exact at 1,024), and on
the programs comparison's Bits recipe, whose plain and invariance runs that comparison trained (found
there, not trained again). Runs live in ``runs/self-distill/<arm>-s<seed>``; the collected reports and
the verdicts go to ``results/self-distill.json``. The predictions and every arm's recipe below were
registered, with docs/experiments/self-distillation.md, before any run of the batch.
"""
from __future__ import annotations

from dataclasses import replace
from functools import partial
from pathlib import Path

import click

from benchmarks import programs_comparison as programs
from benchmarks.harness import (Comparison, Plan, batch_options, certified_dataset, chosen_arms, figure,
                                prediction_lines, seed_list, verdict, write_results)
from stepwise.config import StepwiseConfig
from stepwise.evaluate import StepwiseEvalConfig
from stepwise.grid import StepwiseRunSpec
from tracker.evaluate import EvalConfig
from tracker.grid import RunSpec
from tracker.train import TrainConfig

DATA = Path("data/self-distill-registered")
RUNS = Path("runs/self-distill")
RESULTS = Path("results/self-distill.json")
SEEDS = (0, 1, 2)
EXACT = 0.99
LENGTHS = ("8", "64", "256", "1024")

# dataset -> certify options: tier 1, four atoms, training chains of 8 events, 128 test chains at each
# of 8 to 1,024 events. Earlier rewrite datasets were certified from seeds 0 to 8, the programs ones
# from 9 and 10.
DATASETS: dict[str, list[str]] = {
    "tier1-a4-s11": ["--atoms", "4", "--tier", "1", "--seed", "11", "--test-lengths", "8,64,256,1024",
                     "--test-chains", "128"],
}

# The step-by-step model as its validation runs on seed 0's dataset chose it: positions by ALiBi's
# distance bias (sinusoidal positions fit the training length and fail at its first event past it),
# a constant learning rate of 1e-3 after the warm-up for 2,000 steps of 16 short chains, then five
# rounds of 60 steps (long histories of up to 16, 32, 64, 128 and 256 events; one long walk a step,
# cut at 32 lengths; each round's teacher the model as the round began) at a learning rate of 1e-4
# (at 1e-3 the distillation drags the converged model off its short chains within ten steps). Every
# arm trains the same 2,300 steps at the same rates; the seed's arm spends the last 300 on short
# chains alone.
STEPWISE = {"steps": 2_300, "rounds": 5, "round_steps": 60, "round_lr": 1e-4, "positions": "alibi",
            "final_lr_fraction": 1.0, "long_chains": 1, "cuts": 32}
STEPWISE_EVAL = StepwiseEvalConfig(lengths=(8, 64, 256, 1024), chains=64)
# The slot recurrence: the rewrite comparison's recipe (TrainConfig's defaults) with the norm free.
REWRITE_FREE = {"fixed_norm": False}
TRACKER_EVAL = EvalConfig(max_chains=128, threads=1)

# arm -> (kind, dataset, settings over the kind's defaults); every arm runs SEEDS but the two that
# only complete the plane's three runs of seed 0 (plain, NextLat, combination, the norm free)
ARMS: dict[str, tuple[str, str, dict]] = {
    "stepwise": ("stepwise", "tier1-a4-s11", {**STEPWISE, "objective": "plain"}),
    "stepwise-distill": ("stepwise", "tier1-a4-s11", {**STEPWISE, "objective": "self-distill"}),
    "stepwise-control": ("stepwise", "tier1-a4-s11", {**STEPWISE, "objective": "control"}),
    "stepwise-labelled": ("stepwise", "tier1-a4-s11", {**STEPWISE, "objective": "labelled"}),
    "rewrite-plain-free": ("slot", "tier1-a4-s11", {**REWRITE_FREE, "objective": "plain"}),
    "rewrite-invariance-free": ("slot", "tier1-a4-s11", {**REWRITE_FREE, "objective": "invariance"}),
    "rewrite-distill-free": ("slot", "tier1-a4-s11", {**REWRITE_FREE, "objective": "self-distill"}),
    "rewrite-nextlat-free": ("slot", "tier1-a4-s11", {**REWRITE_FREE, "objective": "nextlat"}),
    "rewrite-combo-free": ("slot", "tier1-a4-s11", {**REWRITE_FREE, "objective": "combo"}),
    "bits-plain": ("programs", "plain", {}),
    "bits-invariance": ("programs", "invariance", {}),
    "bits-distill": ("programs", "plain", {"objective": "self-distill"}),
}

ARM_SEEDS = {arm: (0,) if arm in ("rewrite-nextlat-free", "rewrite-combo-free") else SEEDS for arm in ARMS}
PLANE = ("rewrite-plain-free", "rewrite-nextlat-free", "rewrite-combo-free")  # analyse-tracker --plane, seed 0

# Registered before any run of the batch, with docs/experiments/self-distillation.md.
PREDICTIONS = [
    ("seed_arm_drifts", "The step-by-step model trained on the short chains alone: below 0.99 exact at 256 events "
                        "on 3 of 3 seeds (the seed's chain-of-thought arm: 0.06-0.37 at 256)"),
    ("distill_exact_256", "Self-distillation: exact (>= 0.99) at 256 events on 3 of 3 seeds"),
    ("distill_helps", "Self-distillation's mean exact at 256 at least 0.2 above the seed's arm's"),
    ("control_does_not_help", "The control (distilled from a short history ending elsewhere): mean exact at 256 "
                              "no more than 0.05 above the seed's arm's"),
    ("ceiling_above", "The ceiling (labelled long histories): mean exact at 256 at least self-distillation's"),
    ("distill_beyond_rounds", "Self-distillation exact (>= 0.99) at 1,024 events, four times its last round's "
                              "length, on at least 2 of 3 seeds"),
    ("state_term_over_output_term_rewrite", "The slot recurrence on the rewrite recipe with the norm free: the "
                                            "state-level invariance term's mean exact at 256 above the output-level "
                                            "self-distillation term's"),
    ("state_term_over_output_term_bits", "The slot recurrence on programs (Bits, the programs comparison's recipe): "
                                         "the invariance term's mean exact at 256 above self-distillation's"),
]


def arm_config(arm: str, seed: int, data: Path = DATA) -> StepwiseConfig | TrainConfig:
    """What the arm's run at ``seed`` trains: its registered settings on its dataset under ``data``
    (a programs arm: the programs comparison's slot recipe on its Bits dataset)."""
    kind, dataset, settings = ARMS[arm]
    if kind == "stepwise":
        return replace(StepwiseConfig(), **settings, seed=seed, data=str(data / dataset))
    if kind == "slot":
        return replace(TrainConfig(), **settings, seed=seed, data=str(data / dataset))
    return replace(programs.arm_config(dataset, seed), **settings)


def run_dir(arm: str, seed: int, runs: Path = RUNS) -> Path:
    """``<runs>/<arm>-s<seed>``; the programs comparison's own runs where this one reuses them."""
    kind, dataset, settings = ARMS[arm]
    if kind == "programs" and not settings:
        return programs.run_dir(dataset, seed)
    return runs / f"{arm}-s{seed}"


def labelled(arm: str, seed: int, report: dict) -> dict:
    return {**report, "arm": arm, "seed": seed}


# ---- the judge ----

def exact_at(report: dict, length: str) -> float | None:
    return (report.get("exact") or {}).get(length)


def judge(reports: list[dict]) -> list[dict]:
    """Every registered prediction with what was measured (per arm and seed) and its verdict, untested
    while a run it needs is missing."""
    at = {(r["arm"], r["seed"]): r for r in reports}

    def measured(arm: str, length: str = "256") -> dict[int, float | None]:
        return {seed: exact_at(at[arm, seed], length) for seed in SEEDS if (arm, seed) in at}

    def mean(arm: str, length: str = "256") -> float | None:
        values = list(measured(arm, length).values())
        return None if len(values) < len(SEEDS) or None in values else sum(values) / len(values)

    def count(arm: str, length: str, ok, needed: int) -> bool | None:
        m = measured(arm, length)
        good = sum(v is not None and ok(v) for v in m.values())
        if good >= needed:
            return True
        return False if len(m) - good > len(SEEDS) - needed else None

    def compare(a: str, b: str, holds) -> tuple[dict, bool | None]:
        ma, mb = mean(a), mean(b)
        return {a: ma, b: mb}, None if ma is None or mb is None else holds(ma, mb)

    def judged(key: str, ok: bool | None, what: object) -> dict:
        return verdict(key, dict(PREDICTIONS)[key], ok, what)

    high, low = (lambda v: v >= EXACT), (lambda v: v < EXACT)  # noqa: E731
    return [
        judged("seed_arm_drifts", count("stepwise", "256", low, 3), measured("stepwise")),
        judged("distill_exact_256", count("stepwise-distill", "256", high, 3), measured("stepwise-distill")),
        judged("distill_helps", *reversed(compare("stepwise-distill", "stepwise", lambda a, b: a >= b + 0.2))),
        judged("control_does_not_help",
               *reversed(compare("stepwise-control", "stepwise", lambda a, b: a <= b + 0.05))),
        judged("ceiling_above", *reversed(compare("stepwise-labelled", "stepwise-distill", lambda a, b: a >= b))),
        judged("distill_beyond_rounds", count("stepwise-distill", "1024", high, 2),
               measured("stepwise-distill", "1024")),
        judged("state_term_over_output_term_rewrite",
               *reversed(compare("rewrite-invariance-free", "rewrite-distill-free", lambda a, b: a > b))),
        judged("state_term_over_output_term_bits",
               *reversed(compare("bits-invariance", "bits-distill", lambda a, b: a > b))),
    ]


def table(reports: list[dict], predictions: list[dict]) -> str:
    """A markdown row per run: exact by length, the first wrong step's median at 256 and the tokens
    written per event (step-by-step runs), training seconds at one thread."""
    head = ["arm", "seed", "steps", *[f"exact@{n}" for n in LENGTHS], "first wrong@256", "tokens/event", "train s"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in reports:
        at256 = (r.get("evaluation") or {}).get("256") or {}
        quartiles = (at256.get("first_wrong") or {}).get("quartiles")
        row = [r["arm"], str(r["seed"]), str(r["steps"]), *[figure(exact_at(r, n)) for n in LENGTHS],
               figure(quartiles[1], 0) if quartiles else "–", figure(at256.get("tokens_per_event"), 2),
               figure(r.get("seconds"), 0)]
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines + prediction_lines(predictions))


DECLARED = {"self-distill": Comparison(
    arms=ARM_SEEDS, predictions=dict(PREDICTIONS), judge=judge, config=arm_config,
    run_dir=run_dir, runs=str(RUNS), results=str(RESULTS), table=table,
    settings={"datasets": DATASETS, "arms": {arm: {"kind": k, "dataset": d, **s} for arm, (k, d, s) in ARMS.items()},
              "plane": PLANE, "lengths": LENGTHS, "data": str(DATA), "stepwise_eval": STEPWISE_EVAL, "tracker_eval": TRACKER_EVAL})}


# ---- certifying, training, collecting ----

def certified(name: str, data: Path) -> Path:
    """The dataset ``name`` under ``data``, certified now by ``certify`` unless it is there."""
    return certified_dataset(data / name, DATASETS[name], jobs=2)


def plan(data: Path, runs: Path) -> Plan:
    return Plan(partial(arm_config, data=data), partial(run_dir, runs=runs), run_spec, label=labelled, threads=1)


def run_spec(config: StepwiseConfig | TrainConfig, out: str) -> StepwiseRunSpec | RunSpec:
    """The run as data for a config and directory (the Plan's ``spec``): the evaluation its kind takes."""
    if isinstance(config, StepwiseConfig):
        return StepwiseRunSpec(config, out, STEPWISE_EVAL)
    if Path(config.data).parent == programs.DATA:
        return RunSpec(config, out, programs.EVAL, programs.STOP)
    return RunSpec(config, out, TRACKER_EVAL)


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--arms", default=",".join(ARMS), show_default=True, help="Comma-separated arms, in this order.")
@click.option("--seeds", default=",".join(map(str, SEEDS)), show_default=True, help="Comma-separated seeds.")
@click.option("--data", type=click.Path(path_type=Path), default=DATA, show_default=True,
              help="Directory of the batch's datasets (certified there when missing).")
@batch_options(str(RUNS), str(RESULTS))
def main(arms: str, seeds: str, data: Path, steps: int | None, runs: Path, out: Path, workers: int, collect: bool,
         quiet: bool) -> None:
    """Certify the missing dataset, train the missing runs (one thread each), collect and judge."""
    if steps is not None:
        raise click.UsageError("the registered batch trains each arm's registered steps; --steps is not taken")
    chosen = chosen_arms(arms, tuple(ARMS))
    jobs = [(arm, seed) for arm in chosen for seed in seed_list(seeds) if seed in ARM_SEEDS[arm]]
    if not collect:
        for name in dict.fromkeys(d for arm in chosen for k, d, _ in [ARMS[arm]] if k != "programs"):
            certified(name, data)
        if any(ARMS[arm][0] == "programs" for arm in chosen):
            programs.certified("bits-s9", programs.DATA)
    reports, missing = plan(data, runs).batch_into(jobs, out, workers, collect, quiet)
    reports.sort(key=lambda r: (list(ARMS).index(r["arm"]), r["seed"]))
    predictions = judge(reports)
    write_results(out, {"datasets": DATASETS, "runs": reports, "missing": missing, "predictions": predictions,
                        "registered": dict(PREDICTIONS)})
    click.echo(table(reports, predictions))
    click.echo(f"\nwrote {out}", err=True)


if __name__ == "__main__":
    main()

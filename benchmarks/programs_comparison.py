"""The registered comparison on programs: the seed's execution results (Bits at 256 statements, the
factorial of norm and objective at 1,024) and our goals (a register per variable exact at 1,024 and
4,096 on Bits, at 1,024 on the Arithmetic machine, and on end states training never visited), every
arm on datasets certified from registered seeds no earlier dataset used.

    python -m benchmarks.programs_comparison --workers 2       # certify, train what is missing, collect
    python -m benchmarks.programs_comparison --arms registers --seeds 0
    python -m benchmarks.programs_comparison --collect         # train nothing: collect and judge

Missing datasets are certified by ``certify`` into ``data/programs-registered/<dataset>``; each run
lives in ``runs/programs/<arm>-s<seed>`` (a finished run with the same settings is reused, an
interrupted one resumed from its checkpoint), trained at one thread with a check every 250 steps
that ends it once exact; the collected reports, the floor and the predictions' verdicts go to
``results/programs.json``. The predictions and every arm's recipe below were registered, with
docs/experiments/programs.md, before any run of the batch.
"""
from __future__ import annotations

import json
from dataclasses import replace
from functools import partial
from pathlib import Path

import click

from benchmarks.harness import (Comparison, Plan, batch_options, certified_dataset, chosen_arms, exact_at, figure,
                                labelled, prediction_lines, seed_list, spearman, verdict, write_results)
from chains.manifest import has_manifest, read_manifest
from tracker.evaluate import EvalConfig
from tracker.grid import RunSpec
from tracker.stopping import StopConfig
from tracker.train import TrainConfig

DATA = Path("data/programs-registered")
RUNS = Path("runs/programs")
RESULTS = Path("results/programs.json")
SEEDS = (0, 1, 2)
EXACT = 0.99
LENGTHS = ("16", "64", "256", "1024", "4096")

# dataset -> certify options: the default programs datasets (5,000 training programs of 4 to 16
# statements, 128 test programs at each of 16 to 4,096 with two certified partners each). Earlier
# programs datasets were certified from seeds 0 and 1 (the recipes were chosen there), the rewrite
# domain's from 0 to 8; these from 9 and 10.
DATASETS: dict[str, list[str]] = {
    "bits-s9": ["--domain", "programs", "--seed", "9"],
    "arithmetic-s10": ["--domain", "programs", "--values", "16", "--seed", "10"],
}

# The slot recurrence's recipe on every slot arm: the fast schedule's model and steps (two ticks, a
# small start slot, unit embeddings, 4,000 steps of 28 programs), each objective's terms at their
# defaults but the invariance (and control) term's, held at zero for 40% of the steps and ramped to
# mu = 4 as the fast schedule does.
SLOT = {"arch": "recurrence", "ticks": 2, "slot_init": 0.05, "embed_init_std": 1.0, "steps": 4_000,
        "invariance_delay": 0.4, "invariance_ramp": 0.1, "mu": 4.0}
# A register per variable on Bits, as its validation run on seed 1's dataset trained it: hard reads
# and writes, width 32, the combination, 4,000 steps at most (the checks end it once exact).
REGISTERS = {"arch": "registers", "moves": "hard", "width": 32, "objective": "combo", "steps": 4_000}
# The same on the Arithmetic machine, with 12,000 steps at most, as its validation run on seed 0's
# dataset trains it (its operation network learns sums, differences, products and the conditional
# over 16 values where Bits' learns four truth tables).
REGISTERS_ARITHMETIC = {**REGISTERS, "steps": 12_000}

# arm -> (dataset, settings over TrainConfig's defaults); every arm runs SEEDS
ARMS: dict[str, tuple[str, dict]] = {
    "registers": ("bits-s9", REGISTERS),
    "arithmetic-registers": ("arithmetic-s10", REGISTERS_ARITHMETIC),
    **{f"{objective}{'' if fixed else '-free'}": ("bits-s9", {**SLOT, "objective": objective, "fixed_norm": fixed})
       for fixed in (True, False) for objective in ("plain", "invariance", "nextlat", "combo", "control", "metric")},
    "transformer": ("bits-s9", {"arch": "transformer", "objective": "plain", "steps": 4_000}),
    "transformer2x": ("bits-s9", {"arch": "transformer2x", "objective": "plain", "steps": 4_000}),
    "deltaproduct": ("bits-s9", {"arch": "deltaproduct", "objective": "plain", "steps": 4_000}),
    "arithmetic-combo": ("arithmetic-s10", {**SLOT, "objective": "combo"}),
}
# The seed's figures (sections 46, 51 and 52), setting by setting, beside the arm of ours that runs
# the same setting: (setting, the seed's figure, our arm, the figure read: a length's exact, or
# "fit" for the training programs). Written into the results for the page's side-by-side table.
SEED_FIGURES: tuple[tuple[str, str, str, str], ...] = (
    ("Bits at 256, plain", "0.055 / 0.246 / 0.068", "plain", "256"),
    ("Bits at 256, the invariance term", "0.981 / 1.000 / 1.000", "invariance", "256"),
    ("Bits at 256, the control", "0.021 / 0.193 / 0.158", "control", "256"),
    ("Bits at 256, a transformer (the seed's: five layers)", "0.26", "transformer", "256"),
    ("Bits at 256, a transformer at twice the compute", "–", "transformer2x", "256"),
    ("Bits at 1,024, ordinary training, norm free", "0.03", "plain-free", "1024"),
    ("Bits at 1,024, ordinary training, norm fixed", "0.48-0.76", "plain", "1024"),
    ("Bits at 1,024, next-state prediction, norm free", "0.01-0.15", "nextlat-free", "1024"),
    ("Bits at 1,024, next-state prediction, norm fixed", "0.87-0.98", "nextlat", "1024"),
    ("Bits at 1,024, the certified signal, norm free", "0.00-0.92", "invariance-free", "1024"),
    ("Bits at 1,024, the certified signal, norm fixed", "1.000 on 3 of 3", "invariance", "1024"),
    ("Bits at 1,024, both, norm free", "0.73-0.97", "combo-free", "1024"),
    ("Bits at 1,024, both, norm fixed", "1.000 on 3 of 3", "combo", "1024"),
    ("Bits at 1,024, a register per variable (our goal)", "– (no arm exact at 1,024)", "registers", "1024"),
    ("Bits at 4,096, a register per variable (our goal)", "–", "registers", "4096"),
    ("Arithmetic, the flat slot on its training programs", "0.375 at 16", "arithmetic-combo", "fit"),
    ("Arithmetic, a register per variable, training programs", "1.000, 1.000, 0.998", "arithmetic-registers",
     "fit"),
    ("Arithmetic at 256, a register per variable", "0.72-0.77", "arithmetic-registers", "256"),
    ("Arithmetic at 1,024, a register per variable", "0.72-0.77", "arithmetic-registers", "1024"),
)
FACTORIAL = ("plain", "nextlat", "invariance", "combo")  # the seed's section 52: norm x objective at 1,024
SLOT_ARMS = tuple(arm for arm, (dataset, s) in ARMS.items() if s["arch"] == "recurrence" and dataset == "bits-s9")
EVAL = EvalConfig(max_chains=128, pair_lengths=(16, 64, 256), transformer_max_length=1024, threads=1,
                  state_norms=True)
STOP = StopConfig(every=250)

# Registered before any run of the batch, with docs/experiments/programs.md.
PREDICTIONS = [
    ("plain_fails_256", "Bits, the plain slot recurrence (fixed norm): below 0.99 exact at 256 statements on 3 of 3 "
                        "seeds (the seed: 0.055 / 0.246 / 0.068)"),
    ("term_exact_256", "Bits, the invariance term (fixed norm): exact (>= 0.99) at 256 on at least 2 of 3 seeds "
                       "(the seed: 0.981 / 1.000 / 1.000)"),
    ("control_fails_256", "Bits, the control (the term on inequivalent pairs, fixed norm): below 0.99 at 256 on 3 of "
                          "3 seeds (the seed: 0.021 / 0.193 / 0.158)"),
    ("transformer_fails_256", "Bits, the transformer at equal per-event compute: below 0.50 at 256 on 3 of 3 seeds "
                              "(the seed's five-layer transformer: 0.26)"),
    ("factorial_signal", "The factorial at 1,024 (fixed norm): the invariance term and the combination each exact "
                         "(>= 0.99) at 1,024 on 3 of 3 seeds (the seed: 1.000 on 3 of 3 each)"),
    ("factorial_norm", "The factorial at 1,024: for each of plain, NextLat, the term and both, the fixed norm's mean "
                       "exact at 1,024 over 3 seeds at least its free norm's"),
    ("growth_predicts_drift", "Over the Bits slot runs, the growth of the partner distance from 16 to 256 predicts "
                              "the drift (1 - exact at 256): Spearman >= 0.7"),
    ("registers_bits", "Bits, a register per variable: exact (>= 0.99) at 1,024 and 4,096 on 3 of 3 seeds (256 "
                       "times the longest training program)"),
    ("registers_arithmetic", "Arithmetic, a register per variable: exact (>= 0.99) at 1,024 on 3 of 3 seeds (the "
                             "seed's register state: 0.72-0.77)"),
    ("unseen_ends", "Arithmetic, a register per variable: exact (>= 0.99) at 1,024 on the programs whose end state "
                    "training never visited, on 3 of 3 seeds"),
    ("slot_cannot_fit_arithmetic", "Arithmetic, the slot recurrence (the combination, fixed norm): below 0.99 exact "
                                   "on its own training programs on 3 of 3 seeds (the seed's flat slot: 0.375 at 16)"),
]


def arm_config(arm: str, seed: int, data: Path = DATA) -> TrainConfig:
    """What the arm's run at ``seed`` trains: its registered settings on its dataset under ``data``."""
    dataset, settings = ARMS[arm]
    return replace(TrainConfig(), **settings, seed=seed, data=str(data / dataset))


def run_dir(arm: str, seed: int, runs: Path = RUNS) -> Path:
    """``<runs>/<arm>-s<seed>``."""
    return runs / f"{arm}-s{seed}"


# ---- the judge ----

def unseen_at(length: str):
    return lambda r: ((((r.get("beyond") or {}).get("by_end_seen") or {}).get(length) or {}).get("unseen")
                      or {}).get("exact")


def training_fit(r: dict) -> float | None:
    return (r.get("in_distribution") or {}).get("train")


def judge(reports: list[dict]) -> list[dict]:
    """Every registered prediction with what was measured (per run) and its verdict: a prediction
    over several runs is failed by the first finished run that rules it out, untested while a run
    it needs is missing."""
    at = {(r["arm"], r["seed"]): r for r in reports}

    def measured(arm: str, read) -> dict[int, float | None]:
        return {seed: read(at[arm, seed]) for seed in SEEDS if (arm, seed) in at}

    def at_least(arm: str, read, ok, needed: int) -> tuple[dict, bool | None]:
        """Whether ``ok`` holds on at least ``needed`` of the arm's seeds (None while undecided)."""
        m = measured(arm, read)
        good = sum(v is not None and ok(v) for v in m.values())
        bad = len(m) - good
        if good >= needed:
            return m, True
        if bad > len(SEEDS) - needed:
            return m, False
        return m, None

    def judged(key: str, parts: dict[str, tuple[dict, bool | None]]) -> dict:
        oks = [ok for _, ok in parts.values()]
        ok = False if False in oks else (None if None in oks else True)
        return verdict(key, dict(PREDICTIONS)[key], ok, {label: m for label, (m, _) in parts.items()})

    high, low = (lambda v: v >= EXACT), (lambda v: v < EXACT)  # noqa: E731
    out = [
        judged("plain_fails_256", {"plain@256": at_least("plain", exact_at("256"), low, 3)}),
        judged("term_exact_256", {"invariance@256": at_least("invariance", exact_at("256"), high, 2)}),
        judged("control_fails_256", {"control@256": at_least("control", exact_at("256"), low, 3)}),
        judged("transformer_fails_256", {"transformer@256": at_least("transformer", exact_at("256"),
                                                                     lambda v: v < 0.5, 3)}),
        judged("factorial_signal", {f"{arm}@1024": at_least(arm, exact_at("1024"), high, 3)
                                    for arm in ("invariance", "combo")}),
        judged("factorial_norm", {objective: norm_cell(objective, at) for objective in FACTORIAL}),
        growth_verdict(reports),
        judged("registers_bits", {f"registers@{n}": at_least("registers", exact_at(n), high, 3)
                                  for n in ("1024", "4096")}),
        judged("registers_arithmetic", {"arithmetic-registers@1024": at_least("arithmetic-registers",
                                                                              exact_at("1024"), high, 3)}),
        judged("unseen_ends", {"unseen@1024": at_least("arithmetic-registers", unseen_at("1024"), high, 3)}),
        judged("slot_cannot_fit_arithmetic", {"training fit": at_least("arithmetic-combo", training_fit, low, 3)}),
    ]
    return out


def norm_cell(objective: str, at: dict) -> tuple[dict, bool | None]:
    """The fixed and free norm's mean exact at 1,024 over the seeds of one objective; decided once
    both arms have every seed."""
    means = {}
    for arm in (objective, f"{objective}-free"):
        values = [(at[arm, s].get("exact") or {}).get("1024") for s in SEEDS if (arm, s) in at]
        means[arm] = sum(values) / len(values) if len(values) == len(SEEDS) and None not in values else None
    fixed, free = means.values()
    return means, None if fixed is None or free is None else fixed >= free


def growth_verdict(reports: list[dict]) -> dict:
    """Spearman of the partner distance's growth (16 to 256) against the drift at 256 over the Bits
    slot runs; decided once every slot run is in."""
    runs = [r for r in reports if r["arm"] in SLOT_ARMS]
    pairs = [(r["pair_growth"], 1 - r["exact"]["256"]) for r in runs
             if r.get("pair_growth") is not None and (r.get("exact") or {}).get("256") is not None]
    rho = spearman([p[0] for p in pairs], [p[1] for p in pairs])
    complete = len(runs) == len(SLOT_ARMS) * len(SEEDS)
    return verdict("growth_predicts_drift", dict(PREDICTIONS)["growth_predicts_drift"],
                   rho >= 0.7 if complete and rho is not None else None, {"spearman_256": rho, "runs": len(pairs)})


def table(reports: list[dict], predictions: list[dict]) -> str:
    """A markdown row per run (exact by length, pair distance and its growth, training fit, seconds)."""
    head = ["arm", "seed", "steps", *[f"exact@{n}" for n in LENGTHS], "pair@256", "growth", "train fit", "train s"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in reports:
        exact, pairs = r.get("exact") or {}, r.get("pair_distance") or {}
        row = [r["arm"], str(r["seed"]), str(r["steps"]), *[figure(exact.get(n)) for n in LENGTHS],
               f"{pairs['256']:.2e}" if "256" in pairs else "–", figure(r.get("pair_growth")),
               figure(training_fit(r)), figure(r.get("seconds"), 0)]
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines + prediction_lines(predictions))


DECLARED = {"programs": Comparison(
    arms={arm: SEEDS for arm in ARMS}, predictions=dict(PREDICTIONS), judge=judge, config=arm_config,
    run_dir=run_dir, runs=str(RUNS), results=str(RESULTS), table=table,
    settings={"datasets": DATASETS, "arms": {arm: {"dataset": d, **s} for arm, (d, s) in ARMS.items()},
              "factorial": FACTORIAL, "slot_arms": SLOT_ARMS, "lengths": LENGTHS, "data": str(DATA),
              "stop_every": STOP.every, "eval": EVAL})}


# ---- certifying, training, collecting ----

def certified(name: str, data: Path) -> Path:
    """The dataset ``name`` under ``data``, certified now by ``certify`` unless it is there."""
    return certified_dataset(data / name, DATASETS[name], jobs=2)


def floors(data: Path) -> dict[str, dict]:
    """Each certified dataset's shallow floor (the manifest's: each variable's commonest final
    value in training), by test length."""
    return {name: {key.removeprefix("test-"): v for key, v in read_manifest(data / name)["floor"].items()}
            for name in DATASETS if has_manifest(data / name)}


def where(report: dict, data: Path, runs: Path, compute: bool) -> dict | None:
    """Where the run goes wrong (``tracker.domain_errors``: by operation, variable and length), read
    from its checkpoint into ``where.json`` beside it once ``compute`` asks; the recorded one for a
    run without a state to step (the transformers), without its directory here, or not yet read."""
    arch = (report.get("config") or {}).get("arch")
    out = run_dir(report["arm"], report["seed"], runs)
    if arch not in ("recurrence", "registers") or not (out / "report.json").is_file():
        return report.get("where")
    path = out / "where.json"
    if not path.is_file() and not compute:
        return report.get("where")
    if not path.is_file():
        from tracker.domain_errors import where_wrong  # reads checkpoints: only when asked
        from tracker.inference import load_run

        found = where_wrong(load_run(out), data / ARMS[report["arm"]][0])
        write_results(path, found)
    return json.loads(path.read_text())


def plan(data: Path, runs: Path) -> Plan:
    return Plan(partial(arm_config, data=data), partial(run_dir, runs=runs),
                partial(RunSpec, eval_config=EVAL, stop=STOP), label=labelled, threads=1)


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--arms", default=",".join(ARMS), show_default=True, help="Comma-separated arms, in this order.")
@click.option("--seeds", default=",".join(map(str, SEEDS)), show_default=True, help="Comma-separated seeds.")
@click.option("--data", type=click.Path(path_type=Path), default=DATA, show_default=True,
              help="Directory of the batch's datasets (certified there when missing).")
@click.option("--where", "read_where", is_flag=True,
              help="Also read where each finished run with a state goes wrong (by operation, variable and length) "
                   "into its where.json and the results.")
@batch_options(str(RUNS), str(RESULTS))
def main(arms: str, seeds: str, data: Path, read_where: bool, steps: int | None, runs: Path, out: Path, workers: int,
         collect: bool, quiet: bool) -> None:
    """Certify the missing datasets, train the missing runs (one thread each), collect and judge."""
    if steps is not None:
        raise click.UsageError("the registered batch trains each arm's registered steps; --steps is not taken")
    chosen = chosen_arms(arms, tuple(ARMS))
    jobs = [(arm, seed) for arm in chosen for seed in seed_list(seeds)]
    if not collect:
        for name in dict.fromkeys(ARMS[arm][0] for arm in chosen):
            certified(name, data)
    reports, missing = plan(data, runs).batch_into(jobs, out, workers, collect, quiet)
    reports.sort(key=lambda r: (list(ARMS).index(r["arm"]), r["seed"]))
    reports = [{**r, "where": where(r, data, runs, read_where)} for r in reports]
    predictions = judge(reports)
    seed = [dict(zip(("setting", "seed", "arm", "at"), row)) for row in SEED_FIGURES]
    write_results(out, {"datasets": DATASETS, "floor": floors(data), "seed": seed, "runs": reports, "missing": missing,
                        "predictions": predictions, "registered": dict(PREDICTIONS)})
    click.echo(table(reports, predictions))
    click.echo(f"\nwrote {out}", err=True)


if __name__ == "__main__":
    main()

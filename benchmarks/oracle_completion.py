"""The chain gate with the completion term: a registered batch after the gate batch failed.

The gate batch (``oracle_comparison.py --batch gate``) failed on *complete*: its slot, trained on
verdicts that see only a tree's skeleton, keeps the goal and the other trees of its skeleton close
(``oracle_complete.py``). This batch trains the stateful arm with the completion term on: for every
probe Lean accepted, the imagined successor is pulled onto the goal read as a start when Lean said
*complete* and kept at least a margin from it when Lean said accepted (``oracle.losses``), so the
pairs the comparison must separate are the term's own pairs. The recipe was chosen on validation
chains of another seed (``COMPLETION_VALIDATION``, recorded under ``gate_validation``); the
predictions below were committed before any run of the batch.

    OMP_NUM_THREADS=1 python -m benchmarks.oracle_completion --threads 1          # both seeds, one after the other
    OMP_NUM_THREADS=1 python -m benchmarks.oracle_completion --threads 1 --seeds 1
    python -m benchmarks.oracle_completion --collect                             # judge the runs finished
    python -m benchmarks.oracle_completion --device cuda                         # on this machine's GPU
    python -m benchmarks.oracle_completion --cluster auto                        # each missing seed a Ray task

Runs live in ``<runs>/oracle-recurrence-nerode-s<seed>``; reports and verdicts go to ``--out``
under ``completion`` (other keys of the file are kept).

``--part tree`` trains and judges the batch's second part, registered after the first part's
verdicts: the same recipe with the tracker's tree readout as an auxiliary loss (``TREE_RECIPE``).
Its runs live in ``<runs>/oracle-recurrence-nerode-tree-s<seed>`` and go under ``tree``; its
planner prediction is judged on the ``tree_planners`` section that ``prover_bench.py --section
tree_planners --planners ...`` writes with those runs.
"""
from __future__ import annotations

import json
from dataclasses import dataclass, replace
from functools import partial
from pathlib import Path

import click

from benchmarks.harness import Comparison, Plan, batch_options, checked_device, seed_list, write_results
from benchmarks.oracle_comparison import LONG, SEEDS, SHORT, gate_base
from oracle.grid import OracleRunSpec
from oracle.train import OracleConfig

ARCH = "recurrence"
# the recipe chosen on validation: nerode with the verdict metric reduced to one pair a step (at
# 4,000 steps the metric slowed the verdict head's fit) and the completion term at full weight,
# held at zero for the first half and ramped over a tenth, like NextLat and invariance (section
# 43: a term on after a representation exists); the completion term from step 0 found more of the
# complete probes on validation but fitted every other verdict worse
RECIPE = {"objective": "nerode", "metric_pairs": 1, "completion_margin": 0.2, "metric_weight": 1.0,
          "metric_delay": 0.5, "metric_ramp": 0.1}
# the validation runs the recipe rests on (under gate_validation in the results)
COMPLETION_VALIDATION = ("combo-switch50", "nerode-pairs1-completion-switch50",
                         "nerode-pairs1-completion-delay50-switch50")
EXACT_RECALL = 0.99

PREDICTIONS = [
    ("completion_exact_short", "With the completion term, the stateful arm with complete-by-comparison is right on "
                               "every verdict of every held-out chain (fraction of chains all right = 1.0) at 8, 16, "
                               "64 and 256 steps, on 2 of 2 seeds (the gate's clause; the gate batch: 0.000-0.219)"),
    ("completion_exact_long", "The same at 1,024 and 4,096 steps, on 2 of 2 seeds"),
    ("completion_recall", "Complete-by-comparison finds at least 0.99 of the complete probes, pooled over the held-out "
                          "chains to 1,024 steps, on 2 of 2 seeds (the gate batch: 0.37 / 0.46)"),
    ("completion_no_collapse", "Unrelated states at least 0.15 apart at every measured length, on 2 of 2 seeds"),
    ("completion_binary_kept", "Accepted-or-complete vs rejected stays right on every verdict of every chain at 8, "
                               "16, 64 and 256 steps on 2 of 2 seeds (the term costs the other verdicts nothing)"),
]


# The tree part, registered before any of its runs: the completion
# recipe with the tracker's tree readout as an auxiliary loss (--tree-weight 1), chosen on one
# 12,000-step validation run of seed 0 judged on the seed-1 validation chains
# (runs/val/nerode-completion-tree1-12k-s0: five-class by comparison 1.000 / 1.000 / 1.000 / 0.99990
# at 8 / 16 / 64 / 256, chains all right 1.000 / 1.000 / 1.000 / 0.992, unrelated 0.91-1.00).
TREE_RECIPE = {**RECIPE, "tree_weight": 1.0}
TREE_PREDICTIONS = [
    ("tree_exact_short", "With the completion term and the tree term, the stateful arm with complete-by-comparison is "
                         "right on every verdict of every held-out chain (fraction of chains all right = 1.0) at 8, "
                         "16, 64 and 256 steps, on 2 of 2 seeds (24,000 steps)"),
    ("tree_exact_long", "The same at 1,024 and 4,096 steps, on 2 of 2 seeds"),
    ("tree_recall", "Complete-by-comparison finds at least 0.99 of the complete probes, pooled over the held-out "
                    "chains to 1,024 steps, on 2 of 2 seeds"),
    ("tree_no_collapse", "Unrelated states at least 0.15 apart at every measured length, on 2 of 2 seeds"),
    ("tree_planner", "prove --searcher oracle-imagination with either seed's run, on the 600 problems of the "
                     "planners section: success at least 0.99 at no more than 1.1 kernel calls per solved problem"),
]


PLANNER_SUCCESS, PLANNER_CALLS = 0.99, 1.1


@dataclass(frozen=True)
class Part:
    """One registered part of the batch: its recipe, where its runs live and how it is judged."""
    key: str  # its key in the results, and the prefix of its prediction ids
    recipe: dict
    predictions: list
    suffix: str  # of its run directories
    validation_runs: tuple[str, ...]
    label: str  # in figures


PARTS = {"completion": Part("completion", RECIPE, PREDICTIONS, "", COMPLETION_VALIDATION,
                             "nerode, completion term"),
         "tree": Part("tree", TREE_RECIPE, TREE_PREDICTIONS, "-tree", ("nerode-completion-tree1-12k-s0",),
                      "nerode, completion and tree terms")}


def completion_config(seed: int, base: OracleConfig, part: Part = PARTS["completion"]) -> OracleConfig:
    return replace(base, arch=ARCH, seed=seed, **part.recipe)


def run_dir(seed: int, runs: Path, part: Part = PARTS["completion"]) -> Path:
    return runs / f"oracle-{ARCH}-{part.recipe['objective']}{part.suffix}-s{seed}"


def judge(reports: list[dict], part: Part = PARTS["completion"], planners: list[dict] | None = None) -> list[dict]:
    """Every prediction with what was measured and its verdict: failed by the first seed below
    its bar, untested while a seed is missing. ``planners``: the searcher reports of the part's
    runs (the tree part's planner prediction)."""
    by_seed = {r["seed"]: r for r in reports}
    text, out, k = dict(part.predictions), [], part.key

    def verdict(key: str, values: dict[int, list], ok) -> None:
        flat = [v for vs in values.values() for v in vs]
        if any(v is not None and not ok(v) for v in flat):
            result = "fail"
        elif set(SEEDS) <= set(values) and all(v is not None for v in flat):
            result = "pass"
        else:
            result = "untested"
        out.append({"id": key, "prediction": text[key], "measured": {str(s): vs for s, vs in values.items()},
                    "verdict": result})

    def figures(r: dict, key: str) -> dict:
        return (r.get(key) or {}) if key != "binary" else ((r.get("binary") or {}).get("binary_all_right") or {})

    for key, lengths in ((f"{k}_exact_short", SHORT), (f"{k}_exact_long", LONG)):
        verdict(key, {s: [(figures(r, "comparison").get("all_right") or {}).get(str(n)) for n in lengths]
                      for s, r in sorted(by_seed.items())}, lambda v: v == 1.0)
    verdict(f"{k}_recall", {s: [((figures(r, "comparison").get("by_verdict") or {}).get("complete"))]
                            for s, r in sorted(by_seed.items())}, lambda v: v >= EXACT_RECALL)
    verdict(f"{k}_no_collapse", {s: [min(r["unrelated_distance"].values()) if r["unrelated_distance"] else None]
                                 for s, r in sorted(by_seed.items())}, lambda v: v >= 0.15)
    if f"{k}_binary_kept" in text:
        verdict(f"{k}_binary_kept", {s: [figures(r, "binary").get(str(n)) for n in SHORT]
                                     for s, r in sorted(by_seed.items())}, lambda v: v == 1.0)
    if f"{k}_planner" in text:  # either seed's run; failed once every seed's search is in and short
        found = {p["oracle"]["seed"]: {"success": p["success"], "calls_per_solved": p["kernel_calls_per_solved"]}
                 for p in planners or ()}
        good = [f["success"] >= PLANNER_SUCCESS and (f["calls_per_solved"] or float("inf")) <= PLANNER_CALLS
                for f in found.values()]
        result = "pass" if any(good) else "fail" if set(SEEDS) <= set(found) else "untested"
        out.append({"id": f"{k}_planner", "prediction": text[f"{k}_planner"],
                    "measured": {str(s): f for s, f in sorted(found.items())}, "verdict": result})
    return out


def part_planners(out: Path, part: Part, runs: Path) -> list[dict]:
    """The searcher reports under ``<part>_planners`` in ``out`` made with the part's runs."""
    if not out.is_file():
        return []
    dirs = {str(run_dir(seed, runs, part)) for seed in SEEDS}
    return [p for p in json.loads(out.read_text()).get(f"{part.key}_planners") or []
            if (p.get("oracle") or {}).get("run") in dirs]


def part_config(part: str, seed: int, base: OracleConfig) -> OracleConfig:
    """The settings of one seed of the part named ``part``."""
    return completion_config(seed, base, PARTS[part])


def part_dir(part: str, seed: int, runs: Path) -> Path:
    """The directory of one seed of the part named ``part``."""
    return run_dir(seed, runs, PARTS[part])


def plan(base: OracleConfig, runs: Path, device: str = "cpu", threads: int | None = None) -> Plan:
    """The batch's runs under ``runs`` (a job is (part, seed)), each ``base`` with its part's recipe;
    ``threads`` fixes each run's torch threads (one run at a time)."""
    return Plan(partial(part_config, base=base), partial(part_dir, runs=runs), OracleRunSpec, device=device,
                threads=threads)


DECLARED = {key: Comparison(arms={key: SEEDS}, predictions=dict(part.predictions), judge=partial(judge, part=part),
                            config=partial(part_config, base=gate_base(Path("data/tier1-a4"))), run_dir=part_dir,
                            runs="runs/oracle-gate", results="results/oracle.json",
                            settings={"recipe": part.recipe, "validation_runs": part.validation_runs})
            for key, part in PARTS.items()}


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--data", type=click.Path(path_type=Path), default=Path("data/tier1-a4"), show_default=True,
              help="Certified dataset directory made with certify --probes.")
@click.option("--part", "part_key", type=click.Choice(list(PARTS)), default="completion", show_default=True,
              help="The part of the batch: the completion term, or the completion and tree terms.")
@click.option("--seeds", default=",".join(map(str, SEEDS)), show_default=True, help="Comma-separated seeds.")
@click.option("--threads", type=click.IntRange(1), default=None,
              help="Torch threads of each run trained in this process (the registered runs: 1).")
@batch_options("runs/oracle-gate", "results/oracle.json", devices=True)
def main(data, part_key, seeds, threads, steps, runs, out, workers, device, cluster, collect, quiet) -> None:
    """The chain gate with the completion term: train what is missing, judge the predictions."""
    device = checked_device(device, cluster)  # a device not here: one line before anything is read or written
    part = PARTS[part_key]
    base = gate_base(data)
    if steps is not None:
        base = replace(base, steps=steps)
    runs = Path(runs)
    recorded = (json.loads(out.read_text()).get(part.key) or {}).get("runs", []) if out.is_file() else []
    jobs = [(part.key, seed) for seed in seed_list(seeds)]
    reports, missing = plan(base, runs, device, threads).batch(
        jobs, recorded, lambda r: f"accuracy {json.dumps(r['accuracy'])}", workers, collect, quiet, cluster)
    # runs of other seeds recorded earlier (another process of the batch) are judged with these
    mine = {r["seed"] for r in reports}
    reports += [r for r in recorded if r["seed"] not in mine and r["seed"] in SEEDS]
    missing = [m for m in missing if m["seed"] not in {r["seed"] for r in reports}]
    predictions = judge(reports, part, part_planners(out, part, runs))
    write_results(out, {part.key: {"runs": sorted(reports, key=lambda r: r["seed"]), "missing": missing,
                                   "predictions": predictions, "registered": dict(part.predictions),
                                   "recipe": {"arch": ARCH, **part.recipe, "steps": base.steps,
                                              "validation": base.validation,
                                              "switch": base.invariance_delay,
                                              "validation_runs": list(part.validation_runs)}}})
    for p in predictions:
        click.echo(f"{p['id']}: {p['verdict']} ({json.dumps(p['measured'])})")
    click.echo(f"wrote {out} and {gate_figure(out)}", err=True)


def gate_figure(out: Path) -> Path:
    """Chains with every five-class verdict right against length: the gate batch's stateful arm
    beside each part of this batch, from what ``out`` records."""
    from oracle.plots import plot_gate

    recorded = json.loads(out.read_text())
    batches = {"combo (gate batch)": [r for r in (recorded.get("gate") or {}).get("runs", []) if r["arch"] == ARCH]}
    batches |= {part.label: (recorded.get(key) or {}).get("runs", []) for key, part in PARTS.items()}
    directory = out.parent / f"{out.stem}-gate-figures"
    directory.mkdir(exist_ok=True)
    return plot_gate(batches, directory / "chains-all-right.png")


if __name__ == "__main__":
    main()

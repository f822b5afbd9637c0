"""Benchmark: what the exact state is, for every arm of the registered tracker comparison, the fast
schedule and the registers arch (seed section 48), against the predictions written below before
any run was analysed.

    python -m benchmarks.tracker_mechanism                                  # analyse what is trained
    python -m benchmarks.tracker_mechanism --train --arms combo,plain       # train the missing arms first
    python -m benchmarks.tracker_mechanism --run fast=runs/demo-fast        # and other runs, by name

The comparison's arms live where ``benchmarks/tracker_comparison.py`` trains them
(``<runs>/<arch>-<objective>-s<seed>``); with ``--train`` a missing or unfinished one is trained
from the comparison's recipe at one thread, resumed from its checkpoint when interrupted. Each
analysis goes to ``<analyses>/<name>/analysis.json`` and ``analysis.png`` and is reused when its
run's checkpoint step and the analysis settings are unchanged, so an interrupted batch resumes.
``--out`` collects the summaries, which runs were analysed, trained or missing, and the verdicts.
Every run is read against the tree's Polish string (the seed's); a run whose readout names tree
positions by path (the registers arch) is read against that layout's string as well, as ``<name>-paths``.
"""
from __future__ import annotations

import json
from dataclasses import asdict, replace
from pathlib import Path

import click
import torch

from benchmarks import tracker_comparison
from benchmarks.harness import Comparison, figure, prediction_lines, verdict, write_results
from benchmarks.tracker_comparison import plan
from tracker.analysis import READ_BACK, AnalysisConfig, analyse_run, write_analysis
from tracker.config import TrainConfig
from tracker.evaluate import EvalConfig
from training.checkpoint import Checkpoint

# Registered before any run was analysed: the seed's figures for section 48, read as this
# command measures them (the code's dimension: principal components to 95% of its variance; the
# residuals: the share of the next codes' variance a prediction misses; each on fresh histories of
# 64 events, 2,048 of them, every tree of four atoms in turn). "combo" is the comparison's
# combination arm, "plain" its plain recurrence, on their registered seeds.
PREDICTIONS = [
    ("combo_pure_clusters", "Under the combination, the held-out states fall into 960 pure clusters, one per "
                            "tree (purity 1.000 at 960 clusters), on every seed analysed"),
    ("combo_dimension", "Under the combination the code spans 19-22 principal components (to 95% of its "
                        "variance) on every seed analysed"),
    ("combo_affine", "Under the combination the code is 95-97% an affine image of the one-hot Polish string "
                     "(cross-fitted R^2 in [0.95, 0.97]) on every seed analysed"),
    ("combo_permutation", "Under the combination a rewrite acts on the code as the linear map of the permutation "
                          "it makes of the string: residual 0.01-0.04 for one step, 0.02-0.05 composed over two, "
                          "on every seed analysed"),
    ("combo_not_one_map", "Under the combination one fitted map per (lemma, position) misses more than the "
                          "permutation (the seed: 0.11-0.22), and so does one rotation per (lemma, position), "
                          "on every seed analysed"),
    ("plain_dimension", "The plain recurrence's code spans 76-98 principal components (to 95% of its variance) on "
                        "every seed analysed"),
    ("plain_no_pure_clusters", "The plain recurrence forms no pure clusters: purity below 0.99 at as many clusters "
                               "as trees on every seed analysed"),
]

DEFAULT_ARMS = "combo,plain,invariance,nextlat,control,metric,transformer"
COMPARED = tracker_comparison.DECLARED["tracker"]  # the comparison whose arms are analysed, where it trains them
ANALYSIS = AnalysisConfig()  # the registered analysis: 2,048 fresh histories of 64 events, seed 0
ANALYSES = Path("results/mechanism-runs")  # each run's analysis.json and analysis.png
RESULTS = Path("results/tracker-mechanism.json")


def judge(summaries: dict[str, dict]) -> list[dict]:
    """Every registered prediction on the comparison's combo and plain runs analysed (untested
    when none was)."""
    def of(arm: str) -> dict[str, dict]:
        return {name: s for name, s in summaries.items() if s.get("arm") == arm}

    out = []

    def judged(key: str, checks: dict[str, bool], measured: dict) -> None:
        out.append(verdict(key, dict(PREDICTIONS)[key], all(checks.values()) if checks else None, measured))

    combo, plain = of("combo"), of("plain")
    judged("combo_pure_clusters", {n: s["purity_at_trees"] == 1.0 and s["pure_clusters"] == s["trees"] == 960
                                   for n, s in combo.items()},
           {n: [s["trees"], s["pure_clusters"], s["purity_at_trees"]] for n, s in combo.items()})
    judged("combo_dimension", {n: 19 <= s["pc95"] <= 22 for n, s in combo.items()},
           {n: s["pc95"] for n, s in combo.items()})
    judged("combo_affine", {n: 0.95 <= s["affine_r2"] <= 0.97 for n, s in combo.items()},
           {n: s["affine_r2"] for n, s in combo.items()})
    judged("combo_permutation", {n: 0.01 <= s["permutation"] <= 0.04 and 0.02 <= s["permutation_two"] <= 0.05
                                 for n, s in combo.items()},
           {n: [s["permutation"], s["permutation_two"]] for n, s in combo.items()})
    judged("combo_not_one_map", {n: min(s["fitted"], s["rotation"]) > s["permutation"] for n, s in combo.items()},
           {n: [s["permutation"], s["fitted"], s["rotation"]] for n, s in combo.items()})
    judged("plain_dimension", {n: 76 <= s["pc95"] <= 98 for n, s in plain.items()},
           {n: s["pc95"] for n, s in plain.items()})
    judged("plain_no_pure_clusters", {n: s["purity_at_trees"] < 0.99 for n, s in plain.items()},
           {n: s["purity_at_trees"] for n, s in plain.items()})
    return out


def judge_reports(reports: list[dict]) -> list[dict]:
    """``judge`` over analysis summaries given as a list, each named by its run's directory."""
    return judge({Path(s["run"]).name: s for s in reports})


DECLARED = {"mechanism": Comparison(
    arms=COMPARED.arms, predictions=dict(PREDICTIONS), judge=judge_reports, config=COMPARED.config,
    run_dir=COMPARED.run_dir, runs=COMPARED.runs, results=str(RESULTS),
    settings={"analysis": asdict(ANALYSIS), "analyses": str(ANALYSES)})}


def summary(report: dict, arm: str | None) -> dict:
    """The figures the table and the verdicts read, from one analysis report."""
    cl, dim, rw = report["clusters"], report["dimension"], report["rewrites"]
    run = report["run"]
    return {"arm": arm, "run": run["run"], "arch": run["arch"], "objective": run["objective"], "seed": run["seed"],
            "steps": run["steps"], "domain": report["domain"], "histories": report["histories"]["source"],
            "states": report["states"], "trees": cl["trees"], "purity_at_trees": cl["purity_at_trees"],
            "pure_clusters": cl["pure_clusters_at_trees"], "fewest_pure": cl["fewest_pure"],
            "fewest_at_99": cl["fewest_at_99"], "code_width": dim["code_width"], "pc95": dim["pc95"],
            "pc99": dim["pc99"], "affine_r2": report["affine"]["r2"],
            "permutation": rw["permutation"]["one_step"], "permutation_two": rw["permutation"]["two_steps"],
            "fitted": rw["fitted"]["one_step"], "fitted_two": rw["fitted"]["two_steps"],
            "rotation": rw["rotation"]["one_step"], "singular_p05": rw["singular_values"]["p05"],
            "singular_p95": rw["singular_values"]["p95"], "not_permutations": rw["not_permutations"],
            "read_back": rw["read_back"], "string": report["config"]["string"],
            "training": report["training"],
            "seconds": report["seconds"], "lean": report["lean"], "package_version": report["package_version"]}


def analysed(run: Path, data: Path | None, config: AnalysisConfig, where: Path, quiet: bool) -> dict:
    """The analysis of ``run`` in ``where``: the one written there before with the same settings
    and checkpoint step, else a new one."""
    path = where / "analysis.json"
    step = Checkpoint.of_run(run, TrainConfig).step
    if path.is_file():
        report = json.loads(path.read_text())
        if (report["config"] == asdict(config) and report["run"]["steps"] == step
                and report["histories"].get("data") == (None if data is None else str(data))
                and report["rewrites"].get("read_back") == READ_BACK and "training" in report):
            return report
    report = analyse_run(run, data, config, None if quiet else (lambda line: click.echo(f"  {line}", err=True)))
    write_analysis(report, where)
    return report


def laid_out_by_paths(run: Path) -> bool:
    """Whether the run's readout names tree positions by path (the registers arch does)."""
    report = json.loads((run / "report.json").read_text())
    return report.get("config", {}).get("layout") == "paths"


def table(summaries: dict[str, dict], predictions: list[dict]) -> str:
    head = ["run", "arch", "objective", "seed", "states", "trees", "purity@trees", "pure clusters", "fewest pure",
            "PCs 95%", "PCs 99%", "affine R²", "permutation", "2 steps", "per-event map", "2 steps", "rotation"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name, s in summaries.items():
        lines.append("| " + " | ".join([
            name, s["arch"], s["objective"], str(s["seed"]), str(s["states"]), str(s["trees"]),
            figure(s["purity_at_trees"]), str(s["pure_clusters"]), str(s["fewest_pure"]), str(s["pc95"]),
            str(s["pc99"]), figure(s["affine_r2"]), figure(s["permutation"]), figure(s["permutation_two"]),
            figure(s["fitted"]), figure(s["fitted_two"]), figure(s["rotation"])]) + " |")
    return "\n".join(lines + prediction_lines(predictions))


def named_run(text: str) -> tuple[str, Path, Path | None]:
    """``NAME=RUN`` or ``NAME=RUN@DATA`` (analyse on DATA's test chains)."""
    if "=" not in text:
        raise click.UsageError(f"--run {text!r} is not NAME=RUN or NAME=RUN@DATA")
    name, rest = text.split("=", 1)
    run, _, data = rest.partition("@")
    return name, Path(run), Path(data) if data else None


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--arms", default=DEFAULT_ARMS, show_default=True,
              help=f"Comparison arms analysed (on their registered seeds), among {', '.join(COMPARED.arms)}.")
@click.option("--runs", type=click.Path(path_type=Path), default=Path(COMPARED.runs), show_default=True,
              help="Where the comparison's runs are (benchmarks/tracker_comparison.py --runs).")
@click.option("--data", type=click.Path(path_type=Path), default=Path("data/tier1-a4"), show_default=True,
              help="The comparison's dataset (what --train trains on).")
@click.option("--train", "train_missing", is_flag=True,
              help="Train the arms not yet finished, one at a time at one thread, resuming any checkpoint.")
@click.option("--run", "extra", multiple=True, metavar="NAME=RUN[@DATA]",
              help="Another run to analyse under NAME (with @DATA: on that dataset's test chains). Repeatable.")
@click.option("--chains", type=click.IntRange(4), default=ANALYSIS.chains, show_default=True,
              help="Histories per analysis.")
@click.option("--length", type=click.IntRange(1), default=ANALYSIS.length, show_default=True,
              help="Events per history.")
@click.option("--seed", type=int, default=ANALYSIS.seed, show_default=True, help="The analyses' seed.")
@click.option("--analyses", type=click.Path(path_type=Path), default=ANALYSES,
              show_default=True, help="Where each run's analysis.json and analysis.png go.")
@click.option("--out", type=click.Path(path_type=Path), default=RESULTS,
              show_default=True, help="The collected summaries and verdicts.")
@click.option("--quiet", is_flag=True, help="No progress lines.")
def main(arms, runs, data, train_missing, extra, chains, length, seed, analyses, out, quiet) -> None:
    """Analyse the state of every comparison arm (and other runs) and judge the registered predictions."""
    torch.set_num_threads(1)
    chosen = [a for a in arms.split(",") if a]
    unknown = [a for a in chosen if a not in COMPARED.arms]
    if unknown:
        raise click.UsageError(f"unknown arms {', '.join(unknown)}; choose among {', '.join(COMPARED.arms)}")
    config = AnalysisConfig(chains=chains, length=length, seed=seed)
    base = TrainConfig(data=str(data))
    jobs: list[tuple[str, str | None, Path, Path | None]] = []  # (name, arm, run, data for test chains)
    trained, missing = [], []
    for arm in chosen:
        for s in COMPARED.arms[arm]:
            where = COMPARED.run_dir(arm, s, runs)
            if train_missing and not (where / "report.json").is_file():
                click.echo(f"training {where.name} (one thread)", err=True)
                plan(base, runs, EvalConfig(max_chains=512)).run(arm, s, quiet, 1)
                trained.append(where.name)
            if (where / "report.json").is_file():
                jobs.append((where.name, arm, where, None))
            else:
                missing.append(where.name)
    jobs += [(name, None, run, on) for name, run, on in map(named_run, extra)]
    previous = json.loads(out.read_text()).get("runs", {}) if out.is_file() else {}
    # runs analysed by earlier calls stay, unless analysed again here or read back another way
    summaries = {name: s for name, s in previous.items() if s.get("read_back") == READ_BACK}
    for name in sorted(set(previous) - set(summaries)):
        click.echo(f"dropping {name}: analysed with another read-back; analyse it again to keep it", err=True)
    for name, arm, run, on in jobs:
        click.echo(f"analysing {name}", err=True)
        summaries[name] = summary(analysed(run, on, config, analyses / name, quiet), arm)
        if laid_out_by_paths(run):  # read against its own layout as well, under NAME-paths
            click.echo(f"analysing {name}-paths", err=True)
            summaries[f"{name}-paths"] = summary(
                analysed(run, on, replace(config, string="paths"), analyses / f"{name}-paths", quiet), arm)
    predictions = judge(summaries)
    write_results(out, {"config": asdict(config), "runs": summaries, "trained": trained, "missing": missing,
                        "predictions": predictions, "registered": dict(PREDICTIONS),
                        "registered_arms": list(COMPARED.registered)})
    click.echo(table(summaries, predictions))
    click.echo(f"\nwrote {out} and {analyses}/<run>/analysis.json, analysis.png", err=True)


if __name__ == "__main__":
    main()

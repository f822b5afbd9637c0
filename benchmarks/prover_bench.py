"""Benchmark of the searchers on the same problems: the two kernel-stepping ones, the imagination
searcher for each given tracker run directory (with and without a certified prefix), and the
verdict searchers (``--blind``: every (rule, position) of the domain; ``--oracles``: those a
trained oracle predicts accepted). Writes ``results/prover.json`` ({"runs": [report, ...]}) and
prints a markdown table.

    .venv/bin/python -m benchmarks.prover_bench --data data/tier1-a4 \\
        --trackers runs/comparison/recurrence-combo-s0,runs/comparison/recurrence-combo-s1,runs/comparison/recurrence-combo-s2 \\
        --prefix-trackers runs/comparison/recurrence-plain-s0,runs/comparison/recurrence-plain-free-s0,runs/comparison/recurrence-combo-s0 --prefix 4096

The tracker runs are those of the registered comparison (benchmarks/tracker_comparison.py).
Kernel calls spared by the oracle, into the ``searchers`` section of
``results/oracle.json`` beside the oracle comparison's runs:

    .venv/bin/python -m benchmarks.prover_bench --no-kernel --blind --problems 100 --kernel-budget 20000 \\
        --oracles runs/oracle-comparison/oracle-recurrence-combo-s0,runs/oracle-comparison/oracle-recurrence-combo-s1 \\
        --out results/oracle.json --section searchers --work results/oracle-search-runs

The search that never reads a tree (``--planners``: ``prove --searcher oracle-imagination``, one
question to Lean per claimed path) on the same 600 problems, into a section of its own:

    .venv/bin/python -m benchmarks.prover_bench --no-kernel --problems 100 --kernel-budget 20000 \
        --planners runs/oracle-registered/oracle-recurrence-nerode-s0,runs/oracle-registered/oracle-recurrence-nerode-s1 \
        --out results/oracle.json --section planners --work results/oracle-search-runs
"""
from __future__ import annotations

import argparse
import json
import os
import tempfile
from dataclasses import asdict
from pathlib import Path

from chains.files import user_mode
from prover.run import ProveConfig, ProveError, prove
from training.checkpoint import CHECKPOINT


def _who(r: dict) -> str:
    if r["imagination"] is not None:
        return f"imagination ({r['imagination'].get('run', '?')})"
    if r.get("oracle") is not None:
        return f"{r['searcher']} ({Path(r['oracle'].get('run', '?')).name})"
    return r["searcher"]


def _row(r: dict) -> str:
    cps = r["kernel_calls_per_solved"]
    frac = lambda x: "–" if x is None else f"{x:.4f}"  # noqa: E731
    rejected = r.get("rejected_asked", 0) / r["solved"] if r["solved"] else None
    return (f"| {_who(r)} | {r['prefix']} | {r['budget_calls']} | {r['problems']} | {r['success']:.3f} | "
            f"{'–' if cps is None else f'{cps:.1f}'} | {'–' if rejected is None else f'{rejected:.1f}'} | "
            f"{frac(r.get('oracle_recall_accepted') if r['searcher'] == 'oracle' else None)} | {r['lean_processes']} | "
            f"{frac(r['states_held_fraction_equal'])} | {frac(r['successors_fraction_equal'])} | "
            f"{r['distinct_certified_solutions']}/{r['distinct_solutions']} | {r['seconds']:.0f} |")


# settings that decide a run's outcome (jobs and out do not), and those deciding only one searcher's
DECIDING = ("data", "searcher", "budget_calls", "problems", "distances", "seed", "prefix", "max_expansions")
READS = {"imagination": "tracker", "oracle": "oracle", "oracle-imagination": "oracle"}


def finished_report(config: ProveConfig) -> dict | None:
    """A report left in ``config.out`` by an earlier run with the same deciding settings, made
    after the checkpoint of the tracker or oracle it reads was last written; else None."""
    path = config.out / "report.json"
    if not path.is_file():
        return None
    report = json.loads(path.read_text())
    want = json.loads(json.dumps(asdict(config), default=str))
    reads = READS.get(config.searcher)
    if any(report.get("config", {}).get(k) != want[k] for k in DECIDING + ((reads,) if reads else ())):
        return None
    checkpoint = Path(want[reads]) / CHECKPOINT if reads else None
    if checkpoint is not None and (not checkpoint.is_file() or checkpoint.stat().st_mtime > path.stat().st_mtime):
        return None
    return report


def _listed(text: str) -> list[str]:
    return [t for t in text.split(",") if t]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default="data/tier1-a4")
    ap.add_argument("--no-kernel", action="store_true", help="skip the kernel-uniform and kernel-lookahead runs")
    ap.add_argument("--trackers", default="", help="comma-separated run directories for the imagination searcher")
    ap.add_argument("--prefix-trackers", default="", help="run directories for the --prefix comparison")
    ap.add_argument("--prefix", type=int, default=4096)
    ap.add_argument("--blind", action="store_true", help="run the kernel-blind searcher (budget --kernel-budget)")
    ap.add_argument("--oracles", default="", help="comma-separated train-oracle run directories for the oracle "
                                                  "searcher (budget --kernel-budget)")
    ap.add_argument("--planners", default="", help="comma-separated train-oracle recurrence runs for the "
                                                   "oracle-imagination searcher (budget --kernel-budget)")
    ap.add_argument("--problems", type=int, default=1000, help="problems per distance")
    ap.add_argument("--prefix-problems", type=int, default=100,
                    help="problems per distance for the --prefix runs (each reads a 4,096-event history first)")
    ap.add_argument("--distances", default="", help="comma-separated; default all")
    ap.add_argument("--kernel-budget", type=int, default=1000, help="calls per problem for the kernel searchers")
    ap.add_argument("--imagination-budget", type=int, default=1, help="calls per problem for the imagination")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--out", default="results/prover.json")
    ap.add_argument("--section", default="runs",
                    help="key of --out that receives the reports; the file's other keys are kept")
    ap.add_argument("--work", default="results/prover-runs", help="directory for each run's report and plot")
    ap.add_argument("--fresh", action="store_true", help="rerun every plan even when --work holds its report")
    args = ap.parse_args()
    distances = tuple(int(d) for d in args.distances.split(",") if d) or None
    common = dict(data=Path(args.data), distances=distances, seed=args.seed, jobs=args.jobs)
    n, n_prefix, kernel_budget = args.problems, args.prefix_problems, args.kernel_budget
    # (searcher, tracker or oracle run, prefix, budget, problems per distance)
    plans = [] if args.no_kernel else [("kernel-uniform", None, 0, kernel_budget, n),
                                       ("kernel-lookahead", None, 0, kernel_budget, n)]
    plans += [("imagination", t, 0, args.imagination_budget, n) for t in _listed(args.trackers)]
    plans += [("imagination", t, args.prefix, args.imagination_budget, n_prefix) for t in _listed(args.prefix_trackers)]
    plans += [("kernel-blind", None, 0, kernel_budget, n)] if args.blind else []
    plans += [("oracle", o, 0, kernel_budget, n) for o in _listed(args.oracles)]
    plans += [("oracle-imagination", o, 0, kernel_budget, n) for o in _listed(args.planners)]
    runs = []
    for searcher, run, prefix, budget, problems in plans:
        name = searcher if run is None else f"{searcher}-{Path(run).name}-p{prefix}"
        reads = {"tracker": Path(run)} if searcher == "imagination" else {"oracle": Path(run)} if run else {}
        config = ProveConfig(searcher=searcher, prefix=prefix, budget_calls=budget, problems=problems,
                             out=Path(args.work) / name, **reads, **common)
        try:
            report = None if args.fresh else finished_report(config)
            if report is None:
                report = prove(config)
        except ProveError as e:
            print(f"skipped {name}: {e}")
            continue
        runs.append(report)
        print(f"{name}: success {report['success']:.3f}, calls/solved {report['kernel_calls_per_solved']}")
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    kept = json.loads(out.read_text()) if out.is_file() and args.section != "runs" else {}
    fd, tmp = tempfile.mkstemp(dir=out.parent, prefix=f".{out.name}.tmp-")
    os.fchmod(fd, user_mode())  # mkstemp's 0600 would outlive the rename
    with os.fdopen(fd, "w") as handle:
        json.dump({**kept, args.section: runs}, handle, indent=2)
        handle.write("\n")
    os.replace(tmp, out)
    print()
    print("| searcher | prefix | budget | problems | success | calls / solved | rejected asked / solved | "
          "oracle recall | Lean processes | held = truth | successors = truth | certified solutions | s |")
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for r in runs:
        print(_row(r))


if __name__ == "__main__":
    main()

"""Benchmark of the three searchers: the two kernel-stepping ones, and the imagination searcher
for each given tracker run directory (with and without a certified prefix). Writes
``results/prover.json`` ({"runs": [report, ...]}) and prints a markdown table.

    .venv/bin/python benchmarks/prover_bench.py --data data/tier1-a4 \\
        --trackers runs/comparison/recurrence-combo-s0,runs/comparison/recurrence-combo-s1,runs/comparison/recurrence-combo-s2 \\
        --prefix-trackers runs/comparison/recurrence-plain-s0,runs/comparison/recurrence-plain-free-s0,runs/comparison/recurrence-combo-s0 --prefix 4096

The tracker runs are those of the registered comparison (benchmarks/tracker_comparison.py).
"""
from __future__ import annotations

import argparse
import json
import os
import tempfile
from dataclasses import asdict
from pathlib import Path

from prover.run import ProveConfig, ProveError, prove


def _row(r: dict) -> str:
    cps = r["kernel_calls_per_solved"]
    who = r["searcher"] if r["imagination"] is None else f"imagination ({r['imagination'].get('run', '?')})"
    frac = lambda x: "–" if x is None else f"{x:.4f}"  # noqa: E731
    return (f"| {who} | {r['prefix']} | {r['budget_calls']} | {r['problems']} | {r['success']:.3f} | "
            f"{'–' if cps is None else f'{cps:.1f}'} | {r['lean_processes']} | {frac(r['states_held_fraction_equal'])} | "
            f"{frac(r['successors_fraction_equal'])} | {r['distinct_certified_solutions']}/{r['distinct_solutions']} | "
            f"{r['seconds']:.0f} |")


# settings that decide a run's outcome (jobs and out do not)
DECIDING = ("data", "tracker", "searcher", "budget_calls", "problems", "distances", "seed", "prefix", "max_expansions")


def finished_report(config: ProveConfig) -> dict | None:
    """A report left in ``config.out`` by an earlier run with the same deciding settings, made
    after the tracker's checkpoint was last written; else None."""
    path = config.out / "report.json"
    if not path.is_file():
        return None
    report = json.loads(path.read_text())
    want = json.loads(json.dumps(asdict(config), default=str))
    if any(report.get("config", {}).get(k) != want[k] for k in DECIDING):
        return None
    checkpoint = config.tracker / "checkpoint.pt"
    if config.searcher == "imagination" and (not checkpoint.is_file()
                                             or checkpoint.stat().st_mtime > path.stat().st_mtime):
        return None
    return report


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default="data/tier1-a4")
    ap.add_argument("--trackers", default="", help="comma-separated run directories for the imagination searcher")
    ap.add_argument("--prefix-trackers", default="", help="run directories for the --prefix comparison")
    ap.add_argument("--prefix", type=int, default=4096)
    ap.add_argument("--problems", type=int, default=1000, help="problems per distance")
    ap.add_argument("--prefix-problems", type=int, default=100,
                    help="problems per distance for the --prefix runs (each reads a 4,096-event history first)")
    ap.add_argument("--distances", default="", help="comma-separated; default all")
    ap.add_argument("--kernel-budget", type=int, default=1000, help="calls per problem for the kernel searchers")
    ap.add_argument("--imagination-budget", type=int, default=1, help="calls per problem for the imagination")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--jobs", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--out", default="results/prover.json")
    ap.add_argument("--work", default="results/prover-runs", help="directory for each run's report and plot")
    ap.add_argument("--fresh", action="store_true", help="rerun every plan even when --work holds its report")
    args = ap.parse_args()
    distances = tuple(int(d) for d in args.distances.split(",") if d) or None
    common = dict(data=Path(args.data), distances=distances, seed=args.seed, jobs=args.jobs)
    n, n_prefix = args.problems, args.prefix_problems
    plans = [("kernel-uniform", None, 0, args.kernel_budget, n), ("kernel-lookahead", None, 0, args.kernel_budget, n)]
    plans += [("imagination", t, 0, args.imagination_budget, n) for t in args.trackers.split(",") if t]
    plans += [("imagination", t, args.prefix, args.imagination_budget, n_prefix)
              for t in args.prefix_trackers.split(",") if t]
    runs = []
    for searcher, tracker, prefix, budget, problems in plans:
        name = searcher if tracker is None else f"{searcher}-{Path(tracker).name}-p{prefix}"
        config = ProveConfig(searcher=searcher, tracker=Path(tracker or "runs/none"), prefix=prefix,
                             budget_calls=budget, problems=problems, out=Path(args.work) / name, **common)
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
    fd, tmp = tempfile.mkstemp(dir=out.parent, prefix=f".{out.name}.tmp-")
    with os.fdopen(fd, "w") as handle:
        json.dump({"runs": runs}, handle, indent=2)
        handle.write("\n")
    os.replace(tmp, out)
    print()
    print("| searcher | prefix | budget | problems | success | calls / solved | Lean processes | "
          "held = truth | successors = truth | certified solutions | s |")
    print("|---|---|---|---|---|---|---|---|---|---|---|")
    for r in runs:
        print(_row(r))


if __name__ == "__main__":
    main()

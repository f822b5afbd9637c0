"""Benchmark: search on programs with a tracker as imagination against kernel-stepping search,
counting every question to Lean.

Writes results/prover-programs.json: per searcher, problems solved and kernel calls per solved
problem, by distance, with the tracker's and the dataset's identity.

    .venv/bin/python -m benchmarks.prover_programs --data data/programs-bits --tracker runs/programs-bits-fast \\
        [--problems 10] [--distances 2,4,8]
"""
from __future__ import annotations

import argparse
import json
from pathlib import Path

from prover.programs import ProgramsProveConfig, prove_programs

RESULTS = Path("results")
KEPT = ("searcher", "budget_calls", "problems", "solved", "success", "kernel_calls", "kernel_calls_per_solved",
        "mean_program_length", "solutions_failing_audit", "by_distance", "seconds", "tracker", "dataset", "lean",
        "library_hash", "package_version", "config")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--data", type=Path, required=True, help="A programs dataset.")
    parser.add_argument("--tracker", type=Path, required=True, help="A train-tracker run on it.")
    parser.add_argument("--problems", type=int, default=10, help="Problems per distance.")
    parser.add_argument("--distances", default="2,4,8", help="Comma-separated distances.")
    parser.add_argument("--out", type=Path, default=Path("runs/prover-programs"), help="Where the searches write.")
    args = parser.parse_args()
    distances = tuple(int(d) for d in args.distances.split(","))
    results = {}
    for searcher, budget in (("imagination", 1), ("kernel-uniform", 1000)):
        report = prove_programs(ProgramsProveConfig(
            data=args.data, tracker=args.tracker, searcher=searcher, budget_calls=budget, problems=args.problems,
            distances=distances, out=args.out / searcher, jobs=1))
        results[searcher] = {k: report[k] for k in KEPT}
        print(searcher, report["solved"], "of", report["problems"], "at", report["kernel_calls_per_solved"],
              "calls per solved problem")
    path = RESULTS / "prover-programs.json"
    path.write_text(json.dumps(results, indent=2, sort_keys=True) + "\n")
    print(f"wrote {path}")


if __name__ == "__main__":
    main()

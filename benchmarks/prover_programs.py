"""Benchmark: search on programs with a tracker as imagination against kernel-stepping search,
counting every question to Lean.

Writes a results file (``--results``, by default results/prover-programs.json): per searcher,
problems solved and kernel calls per solved problem, by distance, with the tracker's and the
dataset's identity.

    .venv/bin/python -m benchmarks.prover_programs --data data/programs-bits --tracker runs/programs-bits-fast \\
        [--problems 10] [--distances 2,4,8] [--walk-lengths]

``--walk-lengths`` draws the problems as the recorded results were drawn (a target where a random
program of that many statements leads); without it a target is at that shortest distance.
"""
from __future__ import annotations

from pathlib import Path

import click

from benchmarks.harness import length_list, write_results
from prover.domain_search import DomainProveConfig, prove_domain

KEPT = ("searcher", "budget_calls", "distance_measure", "baseline", "problems", "solved", "success", "kernel_calls",
        "kernel_calls_per_solved", "mean_program_length", "solutions_failing_audit", "by_distance", "seconds",
        "tracker", "dataset", "lean", "library_hash", "package_version", "config")
SEARCHERS = (("imagination", 1), ("kernel-uniform", 1000))  # (searcher, kernel calls allowed per problem)


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--data", type=click.Path(path_type=Path), required=True, help="A programs dataset.")
@click.option("--tracker", type=click.Path(path_type=Path), required=True, help="A train-tracker run on it.")
@click.option("--problems", type=click.IntRange(1), default=10, show_default=True, help="Problems per distance.")
@click.option("--distances", default="2,4,8", show_default=True, help="Comma-separated distances.")
@click.option("--walk-lengths", is_flag=True,
              help="Distances as walk lengths, as the recorded results drew them, not shortest distances.")
@click.option("--out", type=click.Path(path_type=Path), default=Path("runs/prover-programs"), show_default=True,
              help="Where the searches write.")
@click.option("--results", type=click.Path(path_type=Path), default=Path("results/prover-programs.json"),
              show_default=True, help="The results file.")
def main(data: Path, tracker: Path, problems: int, distances: str, walk_lengths: bool, out: Path,
         results: Path) -> None:
    """Solve the same problems with the tracker's imagination and with kernel-stepping search."""
    found = {}
    for searcher, budget in SEARCHERS:
        report = prove_domain(DomainProveConfig(
            data=data, tracker=tracker, searcher=searcher, budget_calls=budget, problems=problems,
            distances=length_list(distances, "--distances"), out=out / searcher, jobs=1, walk_lengths=walk_lengths))
        found[searcher] = {k: report[k] for k in KEPT}
        click.echo(f"{searcher}: {report['solved']} of {report['problems']} at {report['kernel_calls_per_solved']} "
                   "calls per solved problem")
    write_results(results, found)
    click.echo(f"wrote {results}")


if __name__ == "__main__":
    main()

"""Benchmark: a domain of one's own through every command, on the dial of tests/dial_domain.py (a
domain written only against ``chains.protocol``, named by its import path ``dial_domain:Dial``).

In a work directory with a certificate store of its own (empty at the start): ``certify`` the
default dataset, ``certify --verify`` it, ``train-tracker`` (combo, one thread), ``evaluate-tracker``
to 65,536 events with every step certified, ``analyse-tracker``, and ``prove`` with the tracker as
imagination (one kernel call allowed per problem) and with the kernel-stepping hill climber, at
every shortest distance the dial has (1 and 2).
Each command runs as a user runs it, with ``tests`` on ``PYTHONPATH``; its wall seconds and figures
go to results/own-domain.json with the Lean, core library, module and package identities.

    .venv/bin/python -m benchmarks.own_domain [--work runs/own-domain] [--steps 2000] [--jobs 2]
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import shutil
import subprocess
import sys
import time
from pathlib import Path

from chains.manifest import read_manifest

RESULTS = Path("results") / "own-domain.json"
DOMAIN = "dial_domain:Dial"


def _run(command: list[str], env: dict) -> float:
    """Run one command (``python -m module args``), failing loudly; its wall seconds."""
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", *command], env=env, check=True, stdout=subprocess.DEVNULL)
    return round(time.perf_counter() - started, 2)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", type=Path, default=Path("runs/own-domain"), help="Work directory (replaced).")
    parser.add_argument("--steps", type=int, default=2000, help="Training steps of the tracker.")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="Lean processes of certify.")
    args = parser.parse_args()
    work = args.work
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, ["tests", os.environ.get("PYTHONPATH")]))}
    data, store, run = work / "data", work / "store.sqlite", work / "tracker"
    commands = {
        "certify": ["leanbridge", "--domain", DOMAIN, "--jobs", str(args.jobs), "--out", str(data), "--store", str(store)],
        "verify": ["leanbridge", "--verify", str(data), "--jobs", str(args.jobs)],
        "train": ["tracker", "--data", str(data), "--objective", "combo", "--steps", str(args.steps), "--threads", "1",
                  "--eval-threads", "1", "--out", str(run), "--quiet"],
        "evaluate": ["tracker.stream_cli", str(run), "--lengths", "1024,65536", "--chains", "64", "--store", str(store),
                     "--threads", "1", "--quiet"],
        "analyse": ["tracker.analysis_cli", str(run), "--out", str(work / "analysis")],
        "prove_imagination": ["prover", "--data", str(data), "--tracker", str(run), "--searcher", "imagination",
                              "--budget-calls", "1", "--problems", "100", "--jobs", "1",
                              "--out", str(work / "prove-imagination")],
        "prove_kernel": ["prover", "--data", str(data), "--searcher", "kernel-uniform", "--budget-calls", "1000",
                         "--problems", "10", "--jobs", "1", "--out", str(work / "prove-kernel")],
    }
    seconds = {}
    for name, command in commands.items():
        seconds[name] = _run(command, env)
        print(f"{name}: {seconds[name]} s", flush=True)
    manifest = read_manifest(data)
    trained = json.loads((run / "report.json").read_text())
    stream = json.loads((run / "stream-s0" / "report.json").read_text())
    proofs = {name: json.loads((work / name.replace("_", "-") / "report.json").read_text())
              for name in ("prove_imagination", "prove_kernel")}
    summary = ("distances", "distance_measure", "problems", "solved", "success", "kernel_calls", "kernel_calls_per_solved", "mean_program_length",
               "solutions_failing_audit")
    results = {
        "domain": manifest["domain"],
        "commands": {name: " ".join(["PYTHONPATH=tests", "python -m", *command]) for name, command in commands.items()},
        "wall_seconds": seconds,
        "certify": {k: manifest[k] for k in ("chains", "length", "partners", "test_lengths", "test_chains", "steps",
                                              "equivalences", "distinct_steps", "distinct_equivalences",
                                              "kernel_checked", "certified", "failed", "lean_processes", "seconds")}
                   | {"statement_instances_per_second": round((manifest["steps"] + manifest["equivalences"])
                                                               / seconds["certify"])},
        "train": {k: trained[k] for k in ("objective", "arch", "steps", "exact", "in_distribution", "pair_growth",
                                           "seconds")},
        "evaluate": {k: stream[k] for k in ("chains", "steps", "exact", "floor", "right_throughout",
                                            "events_per_second", "certification")},
        "prove": {name: {k: report[k] for k in summary} for name, report in proofs.items()},
        "lean": manifest["lean"], "core_hash": manifest["core_hash"], "module_hash": manifest["module_hash"],
        "library_hash": manifest["library_hash"], "package_version": manifest["package_version"],
        "seed": manifest["seed"], "training_seed": trained["seed"],
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform(), "python": platform.python_version(),
                    "load_average": round(os.getloadavg()[0], 2)},
    }
    RESULTS.parent.mkdir(exist_ok=True)
    RESULTS.write_text(json.dumps(results, indent=2, sort_keys=True) + "\n")
    print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()

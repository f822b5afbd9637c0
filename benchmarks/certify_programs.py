"""Benchmark: certify the default programs datasets (Bits and Arithmetic) from an empty
certificate store, beside the rewrite domain's default dataset as results/certify.json records it.

Writes results/certify-programs.json with, per machine, the whole run's wall seconds, statement
instances certified per second, distinct theorems checked by Lean per second (traces and
equivalences), the load average around the run (the machine is shared) and the identity of
everything involved; and the ratios to the rewrite domain's tier-1 default run. The seed paper's
figure: about 1.3 million certificates in about fifteen minutes (about 1,440 a second).

    .venv/bin/python -m benchmarks.certify_programs [--values 2,16] [--jobs N] [--chains N] [--test-chains N]
        [--keep DIR]
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import tempfile
import time
from pathlib import Path

from chains.programs.dataset import ProgramsSpec
from chains.programs.syntax import Machine
from leanbridge.asker import AskConfig
from leanbridge.certify_programs import certify_programs

RESULTS = Path("results")
SEED_PER_SECOND = 1_300_000 / (15 * 60)  # the seed paper's certificates a second


def certify_one(values: int, jobs: int, chains: int, test_chains: int, keep: Path | None) -> dict:
    """One machine's default dataset from an empty store, timed; kept under ``keep`` when given."""
    spec = ProgramsSpec(machine=Machine(values), chains=chains, test_chains=test_chains)
    load_before = os.getloadavg()[0]
    with tempfile.TemporaryDirectory(prefix="certify-programs-") as tmp:
        out = (keep if keep is not None else Path(tmp)) / f"programs-{spec.machine.name}"
        started = time.perf_counter()
        manifest = certify_programs(spec, out, Path(tmp) / "store.sqlite", AskConfig(jobs=jobs), force=True)
        wall = time.perf_counter() - started
    flag = "" if values == 2 else " --values 16"
    return {
        "command": f"certify --domain programs{flag} --chains {chains} --test-chains {test_chains} --jobs {jobs} "
                   "(empty store)",
        "machine_values": values, "wall_seconds": round(wall, 2),
        "statement_instances": manifest["steps"], "statement_instances_per_second": round(manifest["steps"] / wall),
        "distinct_traces": manifest["distinct_traces"], "distinct_equivalences": manifest["distinct_equivalences"],
        "distinct_checked_per_second": round(manifest["kernel_checked"] / wall, 1),
        "equivalence_form": manifest["certificate_forms"]["equivalence"],
        "lean_processes": manifest["lean_processes"], "failed": manifest["failed"], "floor": manifest["floor"],
        "ratio_to_seed_certificates_per_second": round((manifest["steps"] + manifest["equivalences"]) / wall
                                                       / SEED_PER_SECOND, 2),
        "load_average_before_after": [round(load_before, 2), round(os.getloadavg()[0], 2)],
        "lean": manifest["lean"], "core_hash": manifest["core_hash"], "library_hash": manifest["library_hash"],
        "package_version": manifest["package_version"], "seed": manifest["seed"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--values", default="2,16", help="Machines to certify: 2 (Bits), 16 (Arithmetic).")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="Lean processes at once.")
    parser.add_argument("--chains", type=int, default=ProgramsSpec().chains, help="Training programs.")
    parser.add_argument("--test-chains", type=int, default=ProgramsSpec().test_chains, help="Programs per test split.")
    parser.add_argument("--keep", type=Path, default=None,
                        help="Keep the datasets in this directory (programs-bits, programs-arithmetic; replaced).")
    args = parser.parse_args()
    path = RESULTS / "certify-programs.json"
    results = json.loads(path.read_text()) if path.is_file() else {}
    for values in (int(v) for v in args.values.split(",")):
        run = certify_one(values, args.jobs, args.chains, args.test_chains, args.keep)
        results.setdefault("runs", {})[Machine(values).name] = run
        print(json.dumps(run, indent=2))
        write(results, path)  # after each machine: a long second run interrupted keeps the first
    print(f"wrote {path}")


def write(results: dict, path: Path) -> None:
    """``results`` with the ratios to the rewrite domain's tier-1 run, written to ``path``."""
    rewrite = json.loads((RESULTS / "certify.json").read_text())["runs"]["tier1"]
    results["rewrite_tier1"] = {k: rewrite[k] for k in ("command", "wall_seconds", "step_instances_per_second",
                                                        "distinct_checked_per_second", "distinct_statements")}
    results["ratios_to_rewrite_tier1"] = {
        name: {"wall_seconds": round(run["wall_seconds"] / rewrite["wall_seconds"], 2),
               "statement_instances_per_second": round(run["statement_instances_per_second"]
                                                       / rewrite["step_instances_per_second"], 4),
               "distinct_checked_per_second": round(run["distinct_checked_per_second"]
                                                    / rewrite["distinct_checked_per_second"], 3)}
        for name, run in results["runs"].items()}
    results["machine"] = {"cpus": os.cpu_count(), "platform": platform.platform(), "python": platform.python_version()}
    RESULTS.mkdir(exist_ok=True)
    path.write_text(json.dumps(results, indent=2, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()

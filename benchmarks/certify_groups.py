"""Benchmark: certify a group word problem's default dataset from an empty certificate store.

Runs ``certify --domain groups --group G`` as a user runs it (its default sizes, ``--jobs`` Lean
processes, a store of its own), then ``certify --verify`` on what it wrote, and writes
results/certify-groups.json: per group the wall seconds of each, the counts (histories, step
instances and equivalences, distinct theorems, certified, failed), instances a second, the load
average around the run (the machine is shared) and the identities of everything involved (Lean
build, core library, the group's module, package version, seed).

    .venv/bin/python -m benchmarks.certify_groups [--groups S5] [--jobs 1] [--work runs/certify-groups]
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

RESULTS = Path("results") / "certify-groups.json"
COUNTS = ("chains", "length", "partners", "test_lengths", "test_chains", "steps", "equivalences", "distinct_steps",
          "distinct_equivalences", "kernel_checked", "certified", "failed", "lean_processes", "seconds")


def _run(command: list[str]) -> float:
    """Run one command (``python -m module args``), failing loudly; its wall seconds."""
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", *command], check=True, stdout=subprocess.DEVNULL)
    return round(time.perf_counter() - started, 2)


def certify_group(group: str, jobs: int, work: Path) -> dict:
    """One group's default dataset certified from an empty store and verified, timed."""
    shutil.rmtree(work / group, ignore_errors=True)
    data, store = work / group / "data", work / group / "store.sqlite"
    certify = ["leanbridge", "--domain", "groups", "--group", group, "--jobs", str(jobs), "--out", str(data),
               "--store", str(store)]
    verify = ["leanbridge", "--verify", str(data), "--jobs", str(jobs)]
    load_before = os.getloadavg()[0]
    wall = _run(certify)
    load_after = os.getloadavg()[0]
    verify_wall = _run(verify)
    manifest = read_manifest(data)
    instances = manifest["steps"] + manifest["equivalences"]
    return {
        "command": f"certify --domain groups --group {group} --jobs {jobs} (defaults, empty store)",
        "wall_seconds": wall, "verify_command": f"certify --verify <dataset> --jobs {jobs}",
        "verify_wall_seconds": verify_wall,
        **{k: manifest[k] for k in COUNTS},
        "instances_per_second": round(instances / wall), "distinct_checked_per_second": round(
            manifest["kernel_checked"] / wall, 1),
        "load_average_before_after": [round(load_before, 2), round(load_after, 2)],
        "domain": manifest["domain"], "certificate_forms": manifest["certificate_forms"], "lean": manifest["lean"],
        "core_hash": manifest["core_hash"], "module": manifest["module"], "module_hash": manifest["module_hash"],
        "library_hash": manifest["library_hash"], "package_version": manifest["package_version"],
        "seed": manifest["seed"],
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--groups", default="S5", help="Comma-separated groups: S5, A5, S3xS3.")
    parser.add_argument("--jobs", type=int, default=1, help="Lean processes at once.")
    parser.add_argument("--work", type=Path, default=Path("runs/certify-groups"),
                        help="Work directory (each group's folder replaced).")
    args = parser.parse_args()
    results = json.loads(RESULTS.read_text()) if RESULTS.is_file() else {}
    for group in args.groups.split(","):
        run = certify_group(group, args.jobs, args.work)
        results.setdefault("runs", {})[group] = run
        print(json.dumps({k: v for k, v in run.items() if k not in ("domain", "certificate_forms")}, indent=2))
        results["machine"] = {"cpus": os.cpu_count(), "platform": platform.platform(),
                              "python": platform.python_version()}
        RESULTS.parent.mkdir(exist_ok=True)
        RESULTS.write_text(json.dumps(results, indent=2, sort_keys=True) + "\n")  # after each group
    print(f"wrote {RESULTS}")


if __name__ == "__main__":
    main()

"""Benchmark: certify the default datasets from an empty certificate store.

Writes results/certify.json with, per tier, the whole run's wall seconds, distinct
statements checked by Lean per second, step instances certified per second, the split of
the time by phase, and the identity of everything involved (Lean, core library, package,
seed, machine). The seed paper's figure: about 1.3 million certificates in about fifteen
minutes on a laptop (Lean 4.35), about 1,440 per second.

    .venv/bin/python benchmarks/certify_bench.py [--tiers 1,2] [--jobs N] [--probes]

With ``--probes`` the tier-1 dataset is certified with probe verdicts as well (entry
``tier1-probes``): every distinct probe asked of Lean from an empty store.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import tempfile
import time
from pathlib import Path

from chains.dataset import DEFAULT_TEST_LENGTHS, PROBE_TEST_LENGTHS, DatasetSpec
from chains.space import Domain
from leanbridge.asker import AskConfig
from leanbridge.certify import certify_dataset

SEED_STEPS_PER_SECOND = 1.3e6 / (15 * 60)


def bench(tier: int, jobs: int, workdir: Path, probes: bool = False) -> dict:
    spec = DatasetSpec(Domain(atoms=4, tier=tier), test_lengths=PROBE_TEST_LENGTHS if probes else DEFAULT_TEST_LENGTHS,
                       probes=probes)
    load_before = os.getloadavg()[0]
    started = time.perf_counter()
    manifest = certify_dataset(spec, workdir / f"tier{tier}", workdir / f"store-{tier}.sqlite", AskConfig(jobs=jobs))
    wall = time.perf_counter() - started
    instances = manifest["steps"] + manifest["equivalences"]
    entry = {
        "tier": tier,
        "command": f"certify --atoms 4 --tier {tier} --jobs {jobs}{' --probes' if probes else ''} (empty store)",
        "load_average_before_after": [round(load_before, 2), round(os.getloadavg()[0], 2)],
        "wall_seconds": round(wall, 2),
        "phase_seconds": manifest["phase_seconds"],
        "step_instances": manifest["steps"],
        "equivalence_instances": manifest["equivalences"],
        "distinct_statements": manifest["certified"],
        "kernel_checked": manifest["kernel_checked"],
        "failed": manifest["failed"],
        "distinct_checked_per_second": round(manifest["kernel_checked"] / wall, 1),
        "distinct_checked_per_lean_second": round(manifest["kernel_checked"] / manifest["phase_seconds"]["lean"], 1),
        "step_instances_per_second": round(instances / wall),
        "ratio_to_seed_steps_per_second": round(instances / wall / SEED_STEPS_PER_SECOND, 1),
        "lean_processes": manifest["lean_processes"],
        "seed": manifest["seed"],
        "lean": manifest["lean"],
        "core_hash": manifest["core_hash"],
        "package_version": manifest["package_version"],
    }
    if probes:
        p = manifest["probes"]
        entry["probes"] = {**{k: p[k] for k in ("probes", "distinct_probes", "kernel_checked", "referee_disagreements",
                                              "accepted_fraction", "seed_accepted_fraction", "by_kind")},
                           "distinct_probes_per_lean_second": round(p["kernel_checked"] /
                                                                    manifest["phase_seconds"]["lean probes"], 1)}
    return entry


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tiers", default="1,2", help="comma-separated tiers to run")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="Lean processes at once")
    parser.add_argument("--out", type=Path, default=Path("results/certify.json"))
    parser.add_argument("--probes", action="store_true", help="tier 1 with probe verdicts (entry tier1-probes)")
    args = parser.parse_args()
    results = json.loads(args.out.read_text()) if args.out.exists() else {"runs": {}}
    with tempfile.TemporaryDirectory(prefix="certify-bench-") as tmp:
        runs = [(f"tier{t}", int(t), False) for t in args.tiers.split(",") if t] + \
            ([("tier1-probes", 1, True)] if args.probes else [])
        for name, tier, probes in runs:
            entry = bench(tier, args.jobs, Path(tmp), probes)
            entry["machine"] = {"cpus": os.cpu_count(), "platform": platform.platform(), "python": platform.python_version()}
            results["runs"][name] = entry
            print(json.dumps(entry, indent=2))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    tmp_out = args.out.with_suffix(".json.tmp")
    tmp_out.write_text(json.dumps(results, indent=2, sort_keys=True) + "\n")
    os.replace(tmp_out, args.out)


if __name__ == "__main__":
    main()

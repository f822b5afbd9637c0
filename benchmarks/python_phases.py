"""Python's own phases of ``certify`` (sample, render, write) in CPU seconds of this process, so
that the shared machine's load does not enter: ``certify_dataset`` is run in-process with its
phase clock (``time.perf_counter``) replaced by ``time.process_time``. Lean runs in child
processes, so the ``lean`` phases count only Python's waiting and bookkeeping. With a warm
store (the default one) Lean is asked nothing and the run is Python's alone.

Run it with ``PYTHONPATH`` naming another checkout to measure that code (e.g. main's, for a
before/after pair); the code measured is named in the output.

    PYTHONPATH=$PWD .venv/bin/python -m benchmarks.python_phases [--atoms 4] [--tier 1] [--probes]
        [--repeat 3] [--label after] [--out results/certify.json]
"""
from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
import types
from pathlib import Path

import leanbridge.certificates as certificates
import leanbridge.certify as certify
from chains.rewrite.dataset import PROBE_TEST_LENGTHS, DatasetSpec
from chains.rewrite.space import Domain


def measure(spec: DatasetSpec, store: Path) -> dict:
    clock = types.SimpleNamespace(perf_counter=time.process_time)
    saved, certify.time, certificates.time = certify.time, clock, clock  # the phases, and Lean at work
    try:
        with tempfile.TemporaryDirectory(prefix="python-phases-") as tmp:
            manifest = certify.certify_dataset(spec, Path(tmp) / "data", store)
    finally:
        certify.time = certificates.time = saved
    return {"cpu_seconds": manifest["phase_seconds"], "kernel_checked": manifest["kernel_checked"],
            "files": {name: meta["sha256"] for name, meta in sorted(manifest["files"].items())}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--atoms", type=int, default=4)
    parser.add_argument("--tier", type=int, default=1)
    parser.add_argument("--probes", action="store_true")
    parser.add_argument("--repeat", type=int, default=3, help="runs; the least CPU time per phase is kept")
    parser.add_argument("--store", type=Path, default=None, help="certificate store (default: the user's, warm)")
    parser.add_argument("--label", default="after", help="name of this measurement (e.g. before, after)")
    parser.add_argument("--out", type=Path, default=None,
                        help="record under python_phases.<dataset>.<label> in this JSON file, keeping the rest")
    args = parser.parse_args()
    spec = DatasetSpec(domain=Domain(args.atoms, args.tier), probes=args.probes,
                       **({"test_lengths": PROBE_TEST_LENGTHS} if args.probes else {}))
    store = args.store or certificates.default_store()
    runs = [measure(spec, store) for _ in range(args.repeat)]
    if any(run["files"] != runs[0]["files"] for run in runs):
        raise SystemExit("two runs of the same spec wrote different bytes")
    best = {phase: min(run["cpu_seconds"][phase] for run in runs) for phase in runs[0]["cpu_seconds"]}
    dataset = f"tier{args.tier}-a{args.atoms}" + ("-probes" if args.probes else "")
    row = {"code": str(Path(certify.__file__).resolve().parents[1]), "label": args.label,
           "cpu_seconds_least_of_runs": best, "python_cpu_seconds": round(sum(
               v for k, v in best.items() if not k.startswith("lean")), 2),
           "runs": args.repeat, "load_average": round(os.getloadavg()[0], 2), "files_sha256": runs[0]["files"]}
    print(json.dumps(row, indent=1))
    if args.out:
        results = json.loads(args.out.read_text()) if args.out.exists() else {}
        results.setdefault("python_phases", {}).setdefault(dataset, {})[args.label] = {
            "command": f"benchmarks/python_phases.py --atoms {args.atoms} --tier {args.tier}"
                       + (" --probes" if args.probes else "") + f" --repeat {args.repeat} --label {args.label}",
            **row}
        args.out.write_text(json.dumps(results, indent=2, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()

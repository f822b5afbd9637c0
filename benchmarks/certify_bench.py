"""Benchmark: certify the default datasets from an empty certificate store, here and on a
two-node Ray cluster started on this machine.

Writes results/certify.json with, per run, the whole run's wall seconds, distinct statements
checked by Lean per second (and per Lean core-second), step instances certified per second,
each phase's seconds and share of the wall time, the load average around the run (the machine
is shared), and the identity of everything involved (Lean, core library, package, seed,
machine). ``--cluster-atoms K`` certifies the K-atom tier-1 dataset on the local backend and on
a two-node local cluster (one CPU per node) in one run and states the cluster's overhead as a
ratio; ``--estimate`` counts the distinct statements of larger datasets by sampling alone and
says, from the measured statements per core-second, what a 64-core cluster would take. The
seed paper's figure: about 1.3 million certificates in about fifteen minutes on a laptop
(Lean 4.35), about 1,440 per second.

    .venv/bin/python -m benchmarks.certify_bench [--tiers 1,2] [--atoms 4] [--jobs N]
        [--checker elaborator|kernel] [--cluster-atoms 5] [--estimate] [--probes]

With ``--checker kernel`` the steps and equivalences go through the kernel route (kcheck) and
the entries are named with a ``-kernel`` suffix beside the elaborator's.

With ``--probes`` the default tier-1 dataset is also certified with probe verdicts (entry
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

from chains.rewrite.dataset import PROBE_TEST_LENGTHS, DatasetSpec
from chains.rewrite.sampling import sample_split
from chains.rewrite.space import Domain, StateSpace
from chains.seeds import split_rng
from leanbridge.asker import AskConfig
from leanbridge.certify import certify_dataset
from leanbridge.checker import CHECKERS, Checker

SEED_STEPS_PER_SECOND = 1.3e6 / (15 * 60)
ESTIMATE_CORES = 64


def bench(spec: DatasetSpec, config: AskConfig, cores: int, workdir: Path, label: str) -> dict:
    load_before = os.getloadavg()[0]
    started = time.perf_counter()
    out = workdir / label
    manifest = certify_dataset(spec, out, workdir / f"store-{label}.sqlite", config)
    wall = time.perf_counter() - started
    instances = manifest["steps"] + manifest["equivalences"]
    phases = manifest["phase_seconds"]
    where = f"--cluster {config.cluster}" if config.cluster else f"--jobs {config.jobs}"
    where += f" --checker {config.checker.value}"
    return {
        "atoms": spec.domain.atoms,
        "tier": spec.domain.tier,
        "command": f"certify --atoms {spec.domain.atoms} --tier {spec.domain.tier} {where} (empty store)",
        "backend": "ray" if config.cluster else "local",
        "checker": manifest["checker"],
        "lean_cores": cores,
        "wall_seconds": round(wall, 2),
        "phase_seconds": phases,
        "phase_share": {k: round(v / wall, 3) for k, v in phases.items()},
        "step_instances": manifest["steps"],
        "equivalence_instances": manifest["equivalences"],
        "distinct_statements": manifest["certified"],
        "kernel_checked": manifest["kernel_checked"],
        "failed": manifest["failed"],
        "distinct_checked_per_second": round(manifest["kernel_checked"] / wall, 1),
        "distinct_checked_per_lean_second": round(manifest["kernel_checked"] / max(phases["lean"], 1e-9), 1),
        "distinct_checked_per_lean_core_second": round(manifest["kernel_checked"] / max(phases["lean"], 1e-9) / cores, 1),
        "render_write_seconds_per_instance": (phases["render"] + phases["write"]) / instances,
        "step_instances_per_second": round(instances / wall),
        "ratio_to_seed_steps_per_second": round(instances / wall / SEED_STEPS_PER_SECOND, 1),
        "lean_processes": manifest["lean_processes"],
        "load_average_before_after": [round(load_before, 2), round(os.getloadavg()[0], 2)],
        "seed": manifest["seed"],
        "lean": manifest["lean"],
        "core_hash": manifest["core_hash"],
        "package_version": manifest["package_version"],
        **({"probes": _probe_figures(manifest)} if spec.probes else {}),
    }


def _probe_figures(manifest: dict) -> dict:
    p = manifest["probes"]
    return {**{k: p[k] for k in ("probes", "distinct_probes", "kernel_checked", "referee_disagreements",
                                 "accepted_fraction", "seed_accepted_fraction", "by_kind")},
            "distinct_probes_per_lean_second": round(p["kernel_checked"] / manifest["phase_seconds"]["lean probes"], 1)}


def cluster_comparison(atoms: int, jobs: int, workdir: Path, checker: Checker) -> dict:
    """The same dataset on the local backend and on a two-node Ray cluster, one after the other."""
    import ray
    from ray.cluster_utils import Cluster

    spec = DatasetSpec(domain=Domain(atoms=atoms, tier=1))
    node = {"num_cpus": 1, "object_store_memory": 80 * 1024 * 1024}
    started = time.perf_counter()
    # Ray runs its workers at nice 15 by default; on this shared machine that hands Lean's CPU
    # to everyone else's work, so the comparison runs them at the local backend's priority.
    cluster = Cluster(initialize_head=True, head_node_args={**node, "include_dashboard": False,
                                                            "_system_config": {"worker_niceness": 0}})
    cluster.add_node(**node)
    cluster.wait_for_nodes()
    cluster_start = time.perf_counter() - started
    try:
        on_cluster = bench(spec, AskConfig(cluster=cluster.address, checker=checker), 2, workdir, f"ray-a{atoms}")
    finally:
        ray.shutdown()
        cluster.shutdown()
    local = bench(spec, AskConfig(jobs=jobs, checker=checker), jobs, workdir, f"local-a{atoms}")
    return {
        "what": f"tier 1, {atoms} atoms, default dataset, from empty stores: the local backend (--jobs {jobs}) "
                "and a two-node Ray cluster on this machine (ray.cluster_utils.Cluster, one CPU per node, "
                "workers at nice 0), "
                "one after the other in one process",
        "cluster_start_seconds": round(cluster_start, 2),
        "local": local,
        "ray": on_cluster,
        "overhead_ratio_wall": round(on_cluster["wall_seconds"] / local["wall_seconds"], 3),
        "overhead_ratio_lean_phase": round(on_cluster["phase_seconds"]["lean"] / local["phase_seconds"]["lean"], 3),
    }


def count_distinct(spec: DatasetSpec) -> dict:
    """Distinct step and equivalence statements of ``spec``'s dataset, by sampling alone (no Lean):
    a step statement is one per (tree, event), an equivalence one per pair of end trees."""
    started = time.perf_counter()
    space = StateSpace(spec.domain)
    steps: set = set()
    ends: set = set()
    instances = 0
    for name, count, length in spec.splits():
        for sample in sample_split(space, split_rng(spec.seed, name), count, length, spec.partners):
            for walk in (sample.chain, *sample.partners):
                steps.update(zip(walk.states, walk.events))
                instances += len(walk.events)
            ends.update((sample.chain.end, mate.end) for mate in sample.partners)
            instances += len(sample.partners)
    return {"atoms": spec.domain.atoms, "tier": spec.domain.tier, "distinct_statements": len(steps) + len(ends),
            "instances": instances, "sampling_seconds": round(time.perf_counter() - started, 2)}


def estimate(measured: dict, target: DatasetSpec, cores: int = ESTIMATE_CORES) -> dict:
    """On paper: ``target`` on ``cores`` Lean cores at the measured statements per core-second,
    with the driver's Python (one process: sampling ``target`` as measured here, rendering and
    writing at the measured seconds per instance) before and after it."""
    counted = count_distinct(target)
    rate = measured["distinct_checked_per_lean_core_second"]
    lean = counted["distinct_statements"] / (rate * cores)
    driver = counted["sampling_seconds"] + counted["instances"] * measured["render_write_seconds_per_instance"]
    return {**counted, "cores": cores, "statements_per_core_second": rate,
            "rate_measured_on": measured["command"],
            "lean_seconds": round(lean, 1), "driver_python_seconds": round(driver, 1),
            "wall_seconds": round(lean + driver, 1),
            "formula": "distinct / (rate x cores) + sampling seconds measured here + instances x measured "
                       "render-and-write seconds per instance"}


def route_comparison(runs: dict) -> dict:
    """Each dataset measured by both checkers (entries ``NAME`` and ``NAME-kernel``): wall seconds,
    distinct statements per second and each phase's share, before (the elaborator's text route)
    and after (the kernel route), with the ratio."""
    def figures(entry: dict) -> dict:
        return {k: entry[k] for k in ("command", "wall_seconds", "distinct_statements", "distinct_checked_per_second",
                                      "phase_share", "load_average_before_after")}

    return {name: {"elaborator": figures(runs[name]), "kernel": figures(runs[f"{name}-kernel"]),
                   "wall_ratio": round(runs[name]["wall_seconds"] / runs[f"{name}-kernel"]["wall_seconds"], 2)}
            for name in sorted(runs) if f"{name}-kernel" in runs}


def estimate_from_counts(counted: dict, measured: dict, cores: int = ESTIMATE_CORES) -> dict:
    """``estimate`` from counts made earlier (``counted``: a previous estimate's distinct
    statements, instances and sampling seconds), at ``measured``'s rate: counting by sampling
    takes minutes (tier 2 at five atoms, about 18), the arithmetic none."""
    rate = measured["distinct_checked_per_lean_core_second"]
    lean = counted["distinct_statements"] / (rate * cores)
    driver = counted["sampling_seconds"] + counted["instances"] * measured["render_write_seconds_per_instance"]
    return {**{k: counted[k] for k in ("atoms", "tier", "distinct_statements", "instances", "sampling_seconds")},
            "cores": cores, "statements_per_core_second": rate, "rate_measured_on": measured["command"],
            "lean_seconds": round(lean, 1), "driver_python_seconds": round(driver, 1),
            "wall_seconds": round(lean + driver, 1), "counts_from": "an earlier run's sampling (--estimate recounts)",
            "formula": "distinct / (rate x cores) + sampling seconds measured then + instances x measured "
                       "render-and-write seconds per instance"}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tiers", default="1,2", help="comma-separated tiers to run on the local backend ('' for none)")
    parser.add_argument("--atoms", type=int, default=4, help="atoms of the --tiers runs")
    parser.add_argument("--jobs", type=int, default=os.cpu_count() or 1, help="Lean processes at once")
    parser.add_argument("--cluster-atoms", type=int, default=None,
                        help="also compare the local backend with a two-node local Ray cluster at this many atoms")
    parser.add_argument("--estimate", action="store_true",
                        help="with --cluster-atoms: 64-core estimates for six atoms and for tier 2 at five atoms, "
                             "counting their statements by sampling (minutes); without it the counts of an earlier "
                             "--estimate in --out are reused")
    parser.add_argument("--out", type=Path, default=Path("results/certify.json"))
    parser.add_argument("--probes", action="store_true", help="also the tier-1 dataset with probe verdicts")
    parser.add_argument("--checker", choices=CHECKERS, default="elaborator",
                        help="who certifies steps and equivalences (probes always go to the elaborator)")
    args = parser.parse_args()
    checker = Checker(args.checker)
    results = json.loads(args.out.read_text()) if args.out.exists() else {"runs": {}}
    machine = {"cpus": os.cpu_count(), "platform": platform.platform(), "python": platform.python_version()}
    suffix = "" if args.checker == "elaborator" else f"-{args.checker}"
    with tempfile.TemporaryDirectory(prefix="certify-bench-") as tmp:
        for tier in (int(t) for t in args.tiers.split(",") if t):
            spec = DatasetSpec(domain=Domain(atoms=args.atoms, tier=tier))
            entry = bench(spec, AskConfig(jobs=args.jobs, checker=checker), args.jobs, Path(tmp),
                          f"tier{tier}-a{args.atoms}")
            entry["machine"] = machine
            results["runs"][f"tier{tier}" + ("" if args.atoms == 4 else f"-a{args.atoms}") + suffix] = entry
            print(json.dumps(entry, indent=2), flush=True)
        if args.probes:
            spec = DatasetSpec(domain=Domain(atoms=4, tier=1), test_lengths=PROBE_TEST_LENGTHS, probes=True)
            entry = bench(spec, AskConfig(jobs=args.jobs, checker=checker), args.jobs, Path(tmp), "tier1-probes")
            entry["command"] += " --probes"
            entry["machine"] = machine
            results["runs"]["tier1-probes" + suffix] = entry
            print(json.dumps(entry, indent=2), flush=True)
        if args.cluster_atoms is not None:
            comparison = cluster_comparison(args.cluster_atoms, args.jobs, Path(tmp), checker)
            comparison["machine"] = machine
            measured = comparison["ray"]
            earlier = results.get("cluster", {}).get("estimates", {})
            if args.estimate:
                comparison["estimates"] = {
                    "tier1-a6": estimate(measured, DatasetSpec(domain=Domain(atoms=6, tier=1))),
                    "tier2-a5": estimate(measured, DatasetSpec(domain=Domain(atoms=5, tier=2))),
                }
            elif earlier:
                comparison["estimates"] = {name: estimate_from_counts(counted, measured)
                                           for name, counted in earlier.items()}
            results["cluster" + suffix] = comparison
            print(json.dumps(comparison, indent=2), flush=True)
    results["checker_comparison"] = route_comparison(results["runs"])
    args.out.parent.mkdir(parents=True, exist_ok=True)
    tmp_out = args.out.with_suffix(".json.tmp")
    tmp_out.write_text(json.dumps(results, indent=2, sort_keys=True) + "\n")
    os.replace(tmp_out, args.out)


if __name__ == "__main__":
    main()

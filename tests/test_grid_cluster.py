"""A grid of runs (benchmarks/grid.py) on a two-node Ray cluster started on this machine: the same
reports as the local driver, and a run whose worker, or whose whole node, is killed mid-run
resumes from its checkpoint to the bits of an uninterrupted run (CPU, one thread). Without
--cluster Ray is never imported."""
import json
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest
import torch

from chains.rewrite.dataset import DatasetSpec
from chains.rewrite.space import Domain
from leanbridge.certify import certify_dataset

# two-node Ray clusters started on this machine: make test-cluster (and make test-slow) run them
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]

STEPS = 40
TIMED = {"seconds", "steps_per_second"}  # what differs between two runs of the same bits
TIMED_EVALUATION = {"eval_seconds", "eval_seconds_by_length"}


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    root = tmp_path_factory.mktemp("grid")
    certify_dataset(DatasetSpec(domain=Domain(3, 1), chains=40, test_lengths=(8,), test_chains=4), root / "data",
                    root / "store.sqlite")
    return root / "data"


def grid_args(data: Path, runs: Path, out: Path, arms=("combo", "plain"), seeds="0,1") -> list[str]:
    args = [f"--arm={arm}" for arm in arms]
    return args + ["--seeds", seeds, "--data", str(data), "--steps", str(STEPS), "--set", "batch_chains=4",
                   "--set", "width=32", "--set", "checkpoint_every=10", "--set", "warmup_steps=5",
                   "--eval-chains", "4", "--runs", str(runs), "--out", str(out), "--device", "cpu", "--quiet"]


def run_grid(args: list[str]) -> subprocess.CompletedProcess:
    """``python -m benchmarks.grid ARGS`` with this checkout's code, each run at one thread."""
    return subprocess.run([sys.executable, "-m", "benchmarks.grid", *args], capture_output=True, text=True,
                          env={**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"})


def untimed(report: dict) -> dict:
    out = {k: v for k, v in report.items() if k not in TIMED}
    out["evaluation"] = {k: v for k, v in report["evaluation"].items() if k not in TIMED_EVALUATION}
    return out


@pytest.fixture(scope="module")
def local_grid(tiny, tmp_path_factory):
    """The grid trained by the local driver, one run after another at one thread."""
    root = tmp_path_factory.mktemp("local-grid")
    result = run_grid(grid_args(tiny, root / "runs", root / "grid.json"))
    assert result.returncode == 0, result.stderr
    return root


def test_a_grid_on_a_two_node_cluster_gives_the_local_driver_s_reports(cluster, tiny, local_grid, tmp_path):
    out = tmp_path / "grid.json"
    result = run_grid(grid_args(tiny, tmp_path / "runs", out) + ["--cluster", cluster.address])
    assert result.returncode == 0, result.stderr
    remote, local = (json.loads(p.read_text())["runs"] for p in (out, local_grid / "grid.json"))
    assert [(r["arm"], r["seed"]) for r in remote] == [("combo", 0), ("plain", 0), ("combo", 1), ("plain", 1)]
    assert [untimed(r) for r in remote] == [untimed(r) for r in local]
    assert all(r["device"] == "cpu" and r["torch_threads"] == 1 and r["steps"] == STEPS for r in remote)
    # collected again: every run is finished, nothing is trained twice
    again = run_grid(grid_args(tiny, tmp_path / "runs", out) + ["--cluster", cluster.address])
    assert again.returncode == 0 and "to the cluster" not in again.stderr, again.stderr


def worker_running_a_run(cluster) -> int | None:
    """The pid of the cluster's worker process executing a grid run, if one is."""
    return next((pid for pid, cmd in cluster.processes().items() if "ray::train_on_node" in cmd), None)


def killed_mid_run(cluster, tiny: Path, tmp_path: Path, kill: Callable[[int], Any]) -> tuple[Path, Any, dict]:
    """A grid of one run (combo, seed 0) driven on ``cluster`` from a thread and watched for up to
    two minutes: the first time a worker executes the run after its first checkpoint and before
    its report, ``kill(worker)``. Returns, once the thread is done, the run's directory, what
    ``kill`` returned (None: the run was never caught mid-run) and the thread's result: the
    command's, under "cli"."""
    runs, out = tmp_path / "runs", tmp_path / "grid.json"
    run = runs / "combo-s0"
    result: dict = {}

    def drive() -> None:
        result["cli"] = run_grid(grid_args(tiny, runs, out, arms=("combo",), seeds="0") + ["--cluster", cluster.address])

    thread = threading.Thread(target=drive)
    thread.start()
    killed = None
    deadline = time.time() + 120
    while killed is None and thread.is_alive() and time.time() < deadline:
        worker = worker_running_a_run(cluster)
        if worker is not None and (run / "checkpoint.pt").is_file() and not (run / "report.json").exists():
            killed = kill(worker)  # mid-run, after its first checkpoint
        time.sleep(0.01)
    thread.join(timeout=600)  # the retry trains the run again: minutes on a loaded machine
    assert not thread.is_alive(), "the grid did not finish within ten minutes of the kill"
    return run, killed, result


def same_bits_as_the_uninterrupted_run(run: Path, local_grid: Path) -> None:
    """The run resumed from a checkpoint of its first attempt and ended with the weights and the
    report (timings and the resumption aside) of the local driver's run, which never stopped."""
    report = json.loads((run / "report.json").read_text())
    assert report["resumed_from_step"] in (10, 20, 30), report["resumed_from_step"]
    straight = torch.load(local_grid / "runs" / "combo-s0" / "checkpoint.pt", weights_only=False)
    resumed = torch.load(run / "checkpoint.pt", weights_only=False)
    assert resumed["step"] == straight["step"] == STEPS
    for part in ("model", "nextlat_head"):
        assert all(torch.equal(straight[part][k], resumed[part][k]) for k in straight[part]), part
    local = json.loads((local_grid / "grid.json").read_text())["runs"][0]
    assert {k: v for k, v in untimed(report).items() if k != "resumed_from_step"} == \
        {k: v for k, v in untimed(local).items() if k not in ("resumed_from_step", "arm")}


def test_a_worker_killed_mid_run_resumes_from_its_checkpoint_to_the_same_bits(cluster, tiny, local_grid, tmp_path):
    def kill(worker: int) -> float:
        os.kill(worker, signal.SIGKILL)
        return time.time()

    run, killed_at, result = killed_mid_run(cluster, tiny, tmp_path, kill)
    assert killed_at is not None, "no worker was caught mid-run"
    assert result["cli"].returncode == 0, result["cli"].stderr
    same_bits_as_the_uninterrupted_run(run, local_grid)


def test_a_node_killed_mid_run_resumes_on_the_head_from_its_checkpoint_to_the_same_bits(cluster, tiny, local_grid,
                                                                                        tmp_path):
    # A third node joins for this test and the run is made to land there: every CPU of the
    # head and the second node is held by an idle actor. Once the run has written a checkpoint
    # the third node dies whole (raylet, workers and all, no chance to shut down), the head's
    # CPU is let go, and Ray's retry of the task can only run on the head, from the checkpoint
    # on the storage both nodes share.
    import ray
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    from leanbridge.cluster import connect

    connect(cluster.address)
    head, second = cluster.nodes[:2]
    doomed = cluster.add_node()

    @ray.remote(num_cpus=1)
    class Hold:
        def ready(self) -> bool:
            return True

    holds = {node.node_id: Hold.options(scheduling_strategy=NodeAffinitySchedulingStrategy(node.node_id, soft=False))
             .remote() for node in (head, second)}

    def kill(worker: int) -> set[int]:
        assert worker in cluster.node_processes(doomed), "the run is not on the node to be killed"
        killed = cluster.kill_node(doomed)
        ray.kill(holds.pop(head.node_id))  # the head's CPU, for the retry
        return killed

    try:
        ray.get([hold.ready.remote() for hold in holds.values()])
        run, killed, result = killed_mid_run(cluster, tiny, tmp_path, kill)
    finally:
        for hold in holds.values():
            ray.kill(hold)
    assert killed, "the run was not caught mid-run on the third node"
    assert result["cli"].returncode == 0, result["cli"].stderr
    same_bits_as_the_uninterrupted_run(run, local_grid)
    assert not killed & set(cluster.processes()), "a process of the killed node survived it"


def test_without_a_cluster_ray_is_never_imported(tiny, tmp_path):
    args = grid_args(tiny, tmp_path / "runs", tmp_path / "grid.json", seeds="0")
    args[args.index("--steps") + 1] = "2"
    # -X importtime: every module the command imports, one line each on stderr
    done = subprocess.run([sys.executable, "-X", "importtime", "-m", "benchmarks.grid", *args], capture_output=True,
                          text=True, env={**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"})
    assert done.returncode == 0, done.stderr[-2000:]
    assert not re.search(r"^import time:.*\|\s+ray(\.|$)", done.stderr, re.M), "ray was imported"
    assert len(json.loads((tmp_path / "grid.json").read_text())["runs"]) == 2

"""The oracle batches (benchmarks/oracle_comparison.py, benchmarks/oracle_completion.py) on a
two-node Ray cluster started on this machine: each run one task, the same reports, figures and
weights as the local driver's (CPU, one thread), finished runs never trained again."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from click.testing import CliRunner

from benchmarks.harness import comparison
from leanbridge.cli import main as certify

# two-node Ray clusters started on this machine: make test-cluster (and make test-slow) run them
pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]
GATE_VALIDATION = comparison("oracle-gate").config("chosen", 0).validation  # relative to the working directory

STEPS = 3
TIMED = {"seconds", "steps_per_second", "load_seconds", "eval_seconds", "eval_seconds_by_length"}


@pytest.fixture(scope="module")
def workspace(tmp_path_factory):
    """A directory to drive the batches from: a tiny probe dataset (tests/test_oracle.py's) in
    ``tiny``, and one of another seed where the gate's recipe finds its validation chains
    (``GATE_VALIDATION``, a path relative to the working directory)."""
    root = tmp_path_factory.mktemp("oracle-cluster")
    for seed, out in ((0, root / "tiny"), (1, root / GATE_VALIDATION)):
        result = CliRunner().invoke(certify, ["--atoms", "4", "--tier", "1", "--chains", "20", "--test-chains", "8",
                                              "--test-lengths", "8,16", "--probes", "--seed", str(seed),
                                              "--out", str(out), "--store", str(root / "store.sqlite")])
        assert result.exit_code == 0, result.output
    return root


@pytest.fixture
def here(workspace, monkeypatch):
    """In the workspace, at one torch thread (the count is restored afterwards)."""
    monkeypatch.chdir(workspace)
    before = torch.get_num_threads()
    yield workspace
    torch.set_num_threads(before)


def untimed(value):
    """``value`` without the figures that differ between two runs of the same bits."""
    if isinstance(value, dict):
        return {k: untimed(v) for k, v in value.items() if k not in TIMED}
    if isinstance(value, list):
        return [untimed(v) for v in value]
    return value


def drive(module: str, where: str, extra: list[str]) -> subprocess.CompletedProcess:
    """``python -m benchmarks.<module>`` on the tiny dataset, from the working directory."""
    args = ["--data", "tiny", "--seeds", "0,1", "--steps", str(STEPS), "--threads", "1", "--device", "cpu",
            "--runs", f"{where}/runs", "--out", f"{where}/oracle.json", "--quiet"]
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    result = subprocess.run([sys.executable, "-m", f"benchmarks.{module}", *args, *extra], env=env,
                            capture_output=True, text=True)
    assert result.returncode == 0, result.stderr
    return result


def same_weights(a: Path, b: Path) -> None:
    left, right = (torch.load(p / "checkpoint.pt", weights_only=False) for p in (a, b))
    assert left["step"] == right["step"] == STEPS
    assert left["model"].keys() == right["model"].keys()
    assert all(torch.equal(left["model"][k], right["model"][k]) for k in left["model"])
    assert left["comparison"] == right["comparison"]


@pytest.mark.parametrize("driver, section, runs", [
    ("oracle_comparison", "gate", ["oracle-recurrence-combo-s0", "oracle-recurrence-combo-s1"]),
    # the same harness path as the gate's batch, another driver's sections: kept for make test-slow
    pytest.param("oracle_completion", "completion", ["oracle-recurrence-nerode-s0", "oracle-recurrence-nerode-s1"],
                 marks=pytest.mark.slow),
])
def test_an_oracle_batch_on_a_two_node_cluster_gives_the_local_driver_s_reports(cluster, here, driver, section, runs):
    arms = ["--arms", "chosen"] if driver == "oracle_comparison" else []
    drive(driver, f"local-{section}", arms)
    remote = drive(driver, f"cluster-{section}", arms + ["--cluster", cluster.address])
    assert "2 run(s) to the cluster" in remote.stderr, remote.stderr
    local, there = (json.loads((here / f"{w}-{section}" / "oracle.json").read_text())[section]
                    for w in ("local", "cluster"))
    assert [r["seed"] for r in there["runs"]] == [0, 1]
    assert all(r["device"] == "cpu" and r["torch_threads"] == 1 and r["steps"] == STEPS for r in there["runs"])
    assert untimed(there) == untimed(local)  # every figure, the predictions' verdicts with them
    for run in runs:
        same_weights(here / f"local-{section}" / "runs" / run, here / f"cluster-{section}" / "runs" / run)
        figures = sorted(p.name for p in (here / f"cluster-{section}" / "runs" / run).glob("*.png"))
        assert figures and figures == sorted(p.name for p in (here / f"local-{section}" / "runs" / run).glob("*.png"))
    # driven again: every run is finished, nothing goes to the cluster
    again = drive(driver, f"cluster-{section}", arms + ["--cluster", cluster.address])
    assert "to the cluster" not in again.stderr, again.stderr

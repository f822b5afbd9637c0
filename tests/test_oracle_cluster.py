"""The oracle batches (benchmarks/oracle_comparison.py, benchmarks/oracle_completion.py) on a
two-node Ray cluster started on this machine: each run one task, the same reports, figures and
weights as the local driver's (CPU, one thread), finished runs never trained again."""
import json
from pathlib import Path

import pytest
import torch
from click.testing import CliRunner

from benchmarks import oracle_comparison, oracle_completion
from leanbridge.cli import main as certify

STEPS = 3
TIMED = {"seconds", "steps_per_second", "load_seconds", "eval_seconds", "eval_seconds_by_length"}


@pytest.fixture(scope="module")
def workspace(tmp_path_factory):
    """A directory to drive the batches from: a tiny probe dataset (tests/test_oracle.py's) in
    ``tiny``, and one of another seed where the gate's recipe finds its validation chains
    (``GATE_VALIDATION``, a path relative to the working directory)."""
    root = tmp_path_factory.mktemp("oracle-cluster")
    for seed, out in ((0, root / "tiny"), (1, root / oracle_comparison.GATE_VALIDATION)):
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


def drive(main, where: str, extra: list[str]):
    args = ["--data", "tiny", "--seeds", "0,1", "--steps", str(STEPS), "--threads", "1", "--device", "cpu",
            "--runs", f"{where}/runs", "--out", f"{where}/oracle.json", "--quiet"]
    result = CliRunner().invoke(main, args + extra)
    assert result.exit_code == 0, result.output
    return result


def same_weights(a: Path, b: Path) -> None:
    left, right = (torch.load(p / "checkpoint.pt", weights_only=False) for p in (a, b))
    assert left["step"] == right["step"] == STEPS
    assert left["model"].keys() == right["model"].keys()
    assert all(torch.equal(left["model"][k], right["model"][k]) for k in left["model"])
    assert left["comparison"] == right["comparison"]


@pytest.mark.parametrize("driver, section, runs", [
    (oracle_comparison, "gate", ["oracle-recurrence-combo-s0", "oracle-recurrence-combo-s1"]),
    (oracle_completion, "completion", ["oracle-recurrence-nerode-s0", "oracle-recurrence-nerode-s1"]),
])
def test_an_oracle_batch_on_a_two_node_cluster_gives_the_local_driver_s_reports(cluster, here, driver, section, runs):
    arms = ["--arms", "chosen"] if driver is oracle_comparison else []
    drive(driver.main, f"local-{section}", arms)
    remote = drive(driver.main, f"cluster-{section}", arms + ["--cluster", cluster.address])
    assert "2 run(s) to the cluster" in remote.output, remote.output
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
    again = drive(driver.main, f"cluster-{section}", arms + ["--cluster", cluster.address])
    assert "to the cluster" not in again.output, again.output

"""The reproducibility check: its comparisons (``tracker.bits``) call equal what is equal and
different what differs by one bit, and the whole check (``python -m benchmarks.reproduce_check``)
of a tiny run against the code of HEAD itself (a worktree, its own process) finds the run's report
reproduced and its resumed weights identical. The docs page's table is the one its results file
gives."""
from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from click.testing import CliRunner

from tracker.bits import compare_checkpoints, compare_figures

ROOT = Path(__file__).resolve().parent.parent
CHECK = [sys.executable, "-m", "benchmarks.reproduce_check"]


def in_a_checkout() -> bool:
    if shutil.which("git") is None:
        return False
    done = subprocess.run(["git", "rev-parse", "--verify", "HEAD"], cwd=ROOT, capture_output=True)
    return done.returncode == 0


needs_git = pytest.mark.skipif(not in_a_checkout(), reason="needs git and a checkout (the reference is a worktree)")


def small_state(seed: int = 0) -> dict:
    g = torch.Generator().manual_seed(seed)
    model = {"w": torch.randn(4, 3, generator=g), "b": torch.zeros(3), "ids": torch.arange(5)}
    optimizer = {"state": {0: {"step": torch.tensor(7.0), "exp_avg": torch.randn(4, 3, generator=g)}},
                 "param_groups": [{"lr": 0.002, "params": [0, 1]}]}
    return {"model": model, "nextlat_head": None, "optimizer": optimizer, "step": 7}


def test_the_same_state_is_identical_and_one_bit_is_different():
    a, b = small_state(), small_state()
    assert compare_checkpoints(a, b)["verdict"] == "identical"
    assert compare_checkpoints(a, b)["parts"]["model"]["tensors"] == 3
    b["model"]["w"][1, 2] = torch.nextafter(b["model"]["w"][1, 2], torch.tensor(1e9))  # one ulp
    found = compare_checkpoints(a, b)
    assert found["verdict"] == "different"
    assert [d["at"] for d in found["parts"]["model"]["first"]] == ["model.w"]
    assert 0 < found["parts"]["model"]["first"][0]["max_abs_diff"] < 1e-6
    assert found["parts"]["optimizer"]["differences"] == 0


@pytest.mark.parametrize("change", ["dtype", "optimizer", "step", "key", "lr"])
def test_every_part_of_the_state_counts(change):
    a, b = small_state(), small_state()
    if change == "dtype":
        b["model"]["ids"] = b["model"]["ids"].int()
    elif change == "optimizer":
        b["optimizer"]["state"][0]["exp_avg"] = b["optimizer"]["state"][0]["exp_avg"] * 1.0001
    elif change == "step":
        b["step"] = 8
    elif change == "key":
        b["model"]["extra"] = torch.zeros(1)
    else:
        b["optimizer"]["param_groups"][0]["lr"] = 0.0021
    assert compare_checkpoints(a, b)["verdict"] == "different"


def test_figures_are_compared_exactly_at_the_lengths_evaluated():
    report = {"exact": {"8": 1.0, "64": 0.5, "4096": 0.25}, "pair_growth": 2.0,
              "binary": {"binary_accuracy": {"8": 1.0, "4096": 0.9}}, "pooled": {"accuracy": 0.7}}
    reproduced = {"exact": {"8": 1.0, "64": 0.5}, "pair_growth": 2.0, "binary": {"binary_accuracy": {"8": 1.0}},
                  "pooled": {"accuracy": 0.6}}  # pooled over other lengths: not comparable when cut
    figures = ("exact", "pair_growth", "binary", "+pooled", "validation.accuracy")
    cut = compare_figures(report, reproduced, figures, 256)
    assert cut["verdict"] == "identical" and cut["figures"] == 4
    assert any("pooled" in s for s in cut["skipped"]) and any("validation" in s for s in cut["skipped"])
    whole = compare_figures(report, reproduced, figures, None)
    assert whole["verdict"] == "different"
    assert {m["figure"] for m in whole["mismatches"]} == {"exact.4096", "binary.binary_accuracy.4096",
                                                          "pooled.accuracy"}
    off = dict(reproduced, exact={"8": 1.0, "64": 0.5 + 2 ** -40})
    assert compare_figures(report, off, figures, 256)["mismatches"][0]["figure"] == "exact.64"


@needs_git
def test_a_tiny_run_checked_against_head_itself_is_identical(lean, tmp_path):
    from leanbridge.cli import main as certify
    from tracker.data import load_dataset
    from tracker.evaluate import EvalConfig
    from tracker.train import TrainConfig, train

    result = CliRunner().invoke(certify, ["--atoms", "4", "--tier", "1", "--chains", "20", "--test-chains", "8",
                                          "--test-lengths", "8,16", "--jobs", "1", "--out", str(tmp_path / "data"),
                                          "--store", str(tmp_path / "store.sqlite")])
    assert result.exit_code == 0, result.output
    config = TrainConfig(data=str(tmp_path / "data"), steps=6, batch_chains=4, width=32, warmup_steps=2)
    before = torch.get_num_threads()
    torch.set_num_threads(1)  # the worker's count: its re-evaluation must repeat this report
    try:
        train(config, tmp_path / "run", show_progress=False, eval_config=EvalConfig(threads=1),
              data=load_dataset(config.data))
    finally:
        torch.set_num_threads(before)

    out = tmp_path / "r.json"
    done = subprocess.run([*CHECK, "run", str(tmp_path / "run"), "--reference", "HEAD", "--current", "HEAD",
                           "--steps", "3", "--max-length", "0", "--no-fresh", "--quiet", "--out", str(out)],
                          cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    results = json.loads(out.read_text())
    assert results["command"].startswith("python -m benchmarks.reproduce_check run run --reference HEAD")
    run = results["runs"][0]
    assert run["kind"] == "tracker" and run["step"] == 6
    assert run["evaluation"]["verdict"] == "identical", run["evaluation"]
    assert run["evaluation"]["figures"] >= 8 and run["evaluation"]["lengths"] == [8, 16]
    assert run["resume"]["verdict"] == "identical" and run["resume"]["steps"] == [6, 9]
    assert run["resume"]["parts"]["model"]["tensors"] > 0
    head = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True, text=True).stdout.strip()
    assert results["reference"]["commit"] == head == results["current"]["commit"]
    assert "/" not in run["run"]  # a path outside the checkout is named by its last part only
    listed = subprocess.run(["git", "worktree", "list"], cwd=ROOT, capture_output=True, text=True).stdout
    assert "reproduce-" not in listed  # the worktrees are gone


def test_the_docs_table_is_the_results_table():
    results = ROOT / "results" / "reproduce.json"
    page = ROOT / "docs" / "experiments" / "reproducibility.md"
    if not results.is_file():
        pytest.skip("no results/reproduce.json yet")
    done = subprocess.run([*CHECK, "table"], cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    table = done.stdout.strip()
    assert table.startswith("| run |") and table in page.read_text(), \
        "rerun: python -m benchmarks.reproduce_check table, and paste it into the page"

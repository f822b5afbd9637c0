"""Where a tracker goes wrong (benchmarks/tracker_where.py): the groups split the same verdicts
as the report's exact, and the tier-2 events are counted from the rules themselves."""
import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from chains.rewrite.dataset import DatasetSpec
from chains.rewrite.rules import RULES, Event, tier2_events, tier2_group
from chains.rewrite.space import Domain
from leanbridge.certify import certify_dataset
from tracker.evaluate import EvalConfig
from tracker.train import TrainConfig, train

ROOT = Path(__file__).resolve().parents[1]


def benchmark(module: str, *args: str) -> subprocess.CompletedProcess:
    """``python -m benchmarks.<module> ARGS`` with this checkout's code, at one thread."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    return subprocess.run([sys.executable, "-m", f"benchmarks.{module}", *args], env=env, capture_output=True,
                          text=True)


def where_rows(runs: Path, recorded: dict, max_chains: int, reports: list[dict] | tuple = ()) -> dict:
    """The tier-2 batch's where-wrong rows for the runs under ``runs`` (``batch-where``), given the
    rows ``recorded`` and the batch's ``reports`` already in its results file."""
    out = runs.parent / "tier2.json"
    out.write_text(json.dumps({"batch_where": recorded, **({"runs": list(reports)} if reports else {})}))
    done = benchmark("tracker_tier2", "batch-where", "--runs", str(runs), "--out", str(out),
                     "--max-chains", str(max_chains))
    assert done.returncode == 0, done.stderr
    return json.loads(out.read_text())["batch_where"]


def test_tier2_events_are_the_size_changing_rules():
    assert {name for name, rule in RULES.items() if rule.tier == 2} == {"distrib_left", "distrib_right",
                                                                       "factor_left", "factor_right"}
    events = tuple(Event.parse(e) for e in ("mul_comm@01", "distrib_left@", "add_assoc@1", "factor_right@0"))
    assert tier2_events(events) == 2
    assert [tier2_group(n) for n in (0, 1, 2, 3, 9)] == ["0", "1-2", "1-2", "3+", "3+"]


@pytest.fixture(scope="module")
def tier2_run(tmp_path_factory):
    root = tmp_path_factory.mktemp("where")
    spec = DatasetSpec(domain=Domain(atoms=3, tier=2, max_size=9), chains=16, length=4, test_lengths=(8, 16), test_chains=16)
    certify_dataset(spec, root / "data", root / "store.sqlite")
    config = TrainConfig(data=str(root / "data"), objective="plain", steps=20, batch_chains=4, width=16)
    report = train(config, root / "run", show_progress=False, eval_config=EvalConfig(pair_lengths=(8,)))
    return root, report


def test_the_groups_split_the_reports_verdicts(tier2_run, tmp_path):
    root, report = tier2_run
    out = tmp_path / "where.json"
    result = benchmark("tracker_where", str(root / "run"), "--lengths", "8,16", "--out", str(out))
    assert result.returncode == 0, result.stderr
    (found,) = json.loads(out.read_text())["runs"]
    for length, at in found["lengths"].items():
        assert at["exact"] == report["exact"][length] and at["chains"] == 16
        for kind in ("tier-2 events", "end size"):
            groups = [g for name, g in at["groups"].items() if name.startswith(kind)]
            assert sum(g["chains"] for g in groups) == 16
            assert sum(g["exact"] * g["chains"] for g in groups) == pytest.approx(at["exact"] * 16)
    again = benchmark("tracker_where", str(root / "run"), "--lengths", "8", "--out", str(out))
    assert again.returncode == 0 and len(json.loads(out.read_text())["runs"]) == 1  # the same run replaced


def test_a_run_and_a_dataset_that_do_not_belong_together_are_refused(tier2_run, tmp_path):
    root, _ = tier2_run
    data = tmp_path / "data"
    shutil.copytree(root / "data", data, ignore=shutil.ignore_patterns(".cache"))
    lines = (data / "test-8.jsonl").read_text().splitlines()
    (data / "test-8.jsonl").write_text("\n".join(lines[1:]) + "\n")  # another dataset now at that path
    manifest = json.loads((data / "manifest.json").read_text())
    manifest["files"]["test-8.jsonl"]["sha256"] = "0" * 64
    (data / "manifest.json").write_text(json.dumps(manifest))
    run = tmp_path / "run"
    shutil.copytree(root / "run", run)
    blob = torch.load(run / "checkpoint.pt", weights_only=False)
    blob["config"]["data"] = str(data)  # the run now names the altered copy as its dataset
    torch.save(blob, run / "checkpoint.pt")
    result = benchmark("tracker_where", str(run), "--out", str(tmp_path / "w.json"))
    assert result.returncode == 1 and "trained on" in result.stderr and "Traceback" not in result.stderr
    assert not (tmp_path / "w.json").exists()
    missing = benchmark("tracker_where", str(root / "run"), "--lengths", "64", "--out", str(tmp_path / "w.json"))
    assert missing.returncode == 1 and "no test split of length 64" in missing.stderr


def test_the_tier2_batch_records_where_each_finished_run_goes_wrong(tier2_run, tmp_path):
    root, report = tier2_run
    runs = tmp_path / "runs"
    shutil.copytree(root / "run", runs / "combo-s1")
    (runs / "plain-s0").mkdir(parents=True)  # unfinished: no report yet, so no row
    rows = where_rows(runs, {"combo-s9": {"kept": True}}, 16)
    assert set(rows) == {"combo-s1", "combo-s9"} and rows["combo-s9"] == {"kept": True}
    row = rows["combo-s1"]
    assert row["arm"] == "combo" and row["seed"] == 1 and row["steps"] == report["steps"]
    assert {length: at["exact"] for length, at in row["lengths"].items()} == report["exact"]
    assert set(row["coverage"]) == {"end size 5", "end size 7"}  # three atoms: one distributivity at most
    assert where_rows(runs, {"combo-s1": {**row, "lengths": {}}}, 16)["combo-s1"]["lengths"] == {}  # not redone
    # a row says whether its model is the recorded run's: the same exact figures, or a model trained again
    recorded = [{"arm": "combo", "seed": 1, "exact": report["exact"]}]
    assert where_rows(runs, rows, 16, recorded)["combo-s1"]["matches_recorded"] is True
    other = [{"arm": "combo", "seed": 1, "exact": {n: e + 0.5 for n, e in report["exact"].items()}}]
    assert where_rows(runs, rows, 16, other)["combo-s1"]["matches_recorded"] is False
    assert "matches_recorded" not in where_rows(runs, {}, 16)["combo-s1"]  # nothing recorded to match


def test_coverage_counts_the_domain_and_the_training_states_by_size(tier2_run, tmp_path):
    root, report = tier2_run
    shutil.copytree(root / "run", tmp_path / "runs" / "combo-s0")
    # the batch's coverage reads its first 4,096 training chains: all 16 of this dataset's
    found = where_rows(tmp_path / "runs", {}, 16)["combo-s0"]["coverage"]
    manifest = json.loads((root / "data" / "manifest.json").read_text())
    assert sum(g["domain_trees"] for g in found.values()) == manifest["trees"]
    assert sum(g["training_states"] for g in found.values()) == 16 * (4 + 1)  # every step, the start included
    assert sum(g["training_ends"] for g in found.values()) == 16
    assert all(0 < g["training_trees"] <= min(g["training_states"], g["domain_trees"])
               for g in found.values() if g["training_states"])
    assert all(name.startswith("end size ") and int(name.split()[-1]) % 2 for name in found)  # odd sizes only
    # the fit by end size splits the report's own training fit (its first chains are these 16)
    fit = sum(g["fit"] * g["training_ends"] for g in found.values() if g["training_ends"])
    assert fit == pytest.approx(report["in_distribution"]["train"] * 16)
    assert all(g["fit"] is None for g in found.values() if not g["training_ends"])

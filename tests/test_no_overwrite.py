"""No user work is lost: certify, train-tracker and train-oracle refuse an output made with other
settings (naming what differs) unless --force; the same settings again are idempotent."""
from __future__ import annotations

import json

import pytest
from click.testing import CliRunner

from chains.holdout import HoldOut
from chains.manifest import read_manifest_json, rewrite_settings
from chains.rewrite.dataset import DatasetSpec
from conftest import run_certify

TINY = ["--chains", "30", "--test-chains", "4", "--test-lengths", "8,16"]


@pytest.fixture(scope="module")
def made(tmp_path_factory, store):
    out = tmp_path_factory.mktemp("refuse") / "data"
    code, output = run_certify([*TINY, "--out", str(out), "--store", str(store)])
    assert code == 0, output
    return out


def test_certify_refuses_a_dataset_made_with_other_settings_and_keeps_it(made, store):
    before = {p.name: p.read_bytes() for p in made.iterdir() if p.is_file()}
    code, output = run_certify([*TINY, "--hold-out", "events:2", "--out", str(made), "--store", str(store)])
    assert code != 0
    assert "made with other settings (hold-out None -> events:2)" in output and "--force" in output
    assert len(output.strip().splitlines()) == 1
    assert {p.name: p.read_bytes() for p in made.iterdir() if p.is_file()} == before


def test_certify_with_the_same_settings_makes_the_same_files_again(made, store):
    before = {p.name: p.read_bytes() for p in made.glob("*.jsonl")}
    code, output = run_certify([*TINY, "--out", str(made), "--store", str(store)])
    assert code == 0, output
    assert {p.name: p.read_bytes() for p in made.glob("*.jsonl")} == before


def test_certify_force_replaces_the_dataset(made, store, tmp_path):
    other = tmp_path / "data"
    assert run_certify([*TINY, "--out", str(other), "--store", str(store)])[0] == 0
    code, output = run_certify([*TINY, "--seed", "4", "--force", "--out", str(other), "--store", str(store)])
    assert code == 0, output
    assert read_manifest_json(other)["seed"] == 4


@pytest.mark.parametrize("spec", [
    DatasetSpec(chains=30, test_lengths=(8, 16), test_chains=4),
    DatasetSpec(chains=30, test_lengths=(8, 16), test_chains=4, holdout=HoldOut.parse("pairs:2"), seed=2),
])
def test_a_specs_settings_are_those_its_manifest_reads_back(spec, store, tmp_path):
    from leanbridge.certificates import DATASET_BRIDGE
    from leanbridge.certify import certify_dataset

    manifest = certify_dataset(spec, tmp_path / "d", store)
    assert rewrite_settings(manifest) == spec.settings(DATASET_BRIDGE.checker.identity)


def test_train_tracker_refuses_a_finished_run_of_other_settings_unless_forced(made, tmp_path):
    from tracker.cli import main as train_tracker

    out = tmp_path / "run"
    args = ["--data", str(made), "--steps", "4", "--threads", "1", "--eval-chains", "2", "--check-every", "0",
            "--quiet", "--out", str(out)]
    runner = CliRunner()
    assert runner.invoke(train_tracker, args).exit_code == 0
    report = (out / "report.json").read_bytes()
    again = runner.invoke(train_tracker, args)  # the same settings: trained again, the same figures
    assert again.exit_code == 0, again.output
    assert json.loads((out / "report.json").read_bytes())["exact"] == json.loads(report)["exact"]
    other = runner.invoke(train_tracker, [*args[:-2], "--steps", "6", "--out", str(out)])
    assert other.exit_code != 0
    assert "holds a finished run made with other settings (steps 4 -> 6)" in other.output
    assert json.loads((out / "report.json").read_bytes())["steps"] == 4
    forced = runner.invoke(train_tracker, [*args[:-2], "--steps", "6", "--force", "--out", str(out)])
    assert forced.exit_code == 0, forced.output
    assert json.loads((out / "report.json").read_bytes())["steps"] == 6


def test_a_finished_run_from_before_a_setting_was_added_counts_it_at_its_default(made, tmp_path):
    from tracker.cli import main as train_tracker

    out = tmp_path / "run"
    args = ["--data", str(made), "--steps", "4", "--threads", "1", "--eval-chains", "2", "--quiet", "--out", str(out)]
    runner = CliRunner()
    assert runner.invoke(train_tracker, args).exit_code == 0
    report = json.loads((out / "report.json").read_text())
    del report["config"]["slot_noise"]  # as a report written before the setting existed
    (out / "report.json").write_text(json.dumps(report))
    assert runner.invoke(train_tracker, args).exit_code == 0  # the same settings: trained again
    report = json.loads((out / "report.json").read_text())
    del report["config"]["slot_noise"]
    (out / "report.json").write_text(json.dumps(report))
    other = runner.invoke(train_tracker, [*args[:-2], "--set", "slot_noise=0.1", "--out", str(out)])
    assert other.exit_code != 0 and "other settings" in other.output


def test_train_tracker_refuses_to_start_over_an_unfinished_run(made, tmp_path):
    from tracker.cli import main as train_tracker
    from training.checkpoint import CHECKPOINT

    out = tmp_path / "run"
    out.mkdir()
    (out / CHECKPOINT).write_bytes(b"an interrupted run's checkpoint")
    result = CliRunner().invoke(train_tracker, ["--data", str(made), "--steps", "4", "--out", str(out), "--quiet"])
    assert result.exit_code != 0
    assert "holds an unfinished run" in result.output and "--resume" in result.output
    assert (out / CHECKPOINT).read_bytes() == b"an interrupted run's checkpoint"

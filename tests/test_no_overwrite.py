"""No user work is lost: certify refuses a dataset made with other settings (naming what differs)
unless --force, and makes the same files again from the same settings; train-tracker refuses any
run already in --out, finished or not, whatever changed, unless --resume continues or extends it or
--force replaces it, and a run killed midway leaves no report that disagrees with its checkpoint."""
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


def _files(out):
    return {p.name: p.read_bytes() for p in out.iterdir() if p.is_file()}


RUN = ["--steps", "4", "--threads", "1", "--eval-chains", "2", "--check-every", "0", "--checkpoint-every", "2", "--quiet"]


@pytest.fixture()
def finished(made, tmp_path):
    """A finished train-tracker run: its arguments (with --out) and its directory."""
    from tracker.cli import main as train_tracker

    out = tmp_path / "run"
    args = ["--data", str(made), *RUN, "--out", str(out)]
    result = CliRunner().invoke(train_tracker, args)
    assert result.exit_code == 0, result.output
    return args, out


def test_train_tracker_refuses_a_finished_run_run_again_with_the_same_command(finished):
    from tracker.cli import main as train_tracker

    args, out = finished
    before = _files(out)
    again = CliRunner().invoke(train_tracker, args)
    assert again.exit_code == 1
    assert again.output.strip().splitlines() == [
        f"Error: {out} holds a finished run; --resume with more --steps extends it, --force replaces it, "
        "or choose another --out"]
    assert _files(out) == before


@pytest.mark.parametrize("change", [["--check-every", "2"], ["--eval-chains", "3"], ["--steps", "6"]])
def test_train_tracker_refuses_a_finished_run_whatever_option_changed(finished, change):
    from tracker.cli import main as train_tracker

    args, out = finished
    before = _files(out)
    other = CliRunner().invoke(train_tracker, [*args, *change])
    assert other.exit_code == 1
    assert len(other.output.strip().splitlines()) == 1 and str(out) in other.output
    assert "holds a finished run" in other.output and "--force" in other.output
    assert _files(out) == before


def test_train_tracker_names_the_settings_that_differ_from_a_finished_run(finished):
    from tracker.cli import main as train_tracker

    args, out = finished
    other = CliRunner().invoke(train_tracker, [*args, "--steps", "6"])
    assert "holds a finished run made with other settings (steps 4 -> 6)" in other.output
    assert other.output.strip().endswith("give --force to replace it, or --resume to extend it")
    assert json.loads((out / "report.json").read_bytes())["steps"] == 4


def test_train_tracker_force_replaces_a_finished_run(finished):
    from tracker.cli import main as train_tracker
    from training.checkpoint import load_checkpoint

    args, out = finished
    forced = CliRunner().invoke(train_tracker, [*args, "--steps", "6", "--force"])
    assert forced.exit_code == 0, forced.output
    assert json.loads((out / "report.json").read_bytes())["steps"] == 6
    assert load_checkpoint(out / "checkpoint.pt")["step"] == 6


def test_train_tracker_resume_extends_a_finished_run(finished):
    from tracker.cli import main as train_tracker

    args, out = finished
    extended = CliRunner().invoke(train_tracker, [*args, "--steps", "6", "--resume"])
    assert extended.exit_code == 0, extended.output
    report = json.loads((out / "report.json").read_bytes())
    assert (report["steps"], report["resumed_from_step"], report["extension"]["extended_from"]) == (6, 4, 4)


class Killed(Exception):
    """The process dying midway, as a test stands it in."""


def _killed_at(monkeypatch, step):
    """Training dies before optimiser step ``step`` (after the checkpoints written up to it)."""
    from tracker.train import Trainer

    real = Trainer.train_step

    def train_step(self, at, lr=None):
        if at == step:
            raise Killed(f"killed before step {at}")
        return real(self, at, lr)

    monkeypatch.setattr(Trainer, "train_step", train_step)


@pytest.mark.parametrize("how", [["--steps", "8", "--resume"], ["--steps", "8", "--force"]])
def test_a_run_killed_midway_leaves_no_report_that_disagrees_with_its_checkpoint(finished, monkeypatch, how):
    from tracker.cli import main as train_tracker
    from training.checkpoint import load_checkpoint

    args, out = finished
    _killed_at(monkeypatch, 6)
    killed = CliRunner().invoke(train_tracker, [*args, *how])
    assert isinstance(killed.exception, Killed)
    assert load_checkpoint(out / "checkpoint.pt")["step"] in (4, 6)
    assert not (out / "report.json").exists()  # the report of the 4 steps no longer stands beside it
    monkeypatch.undo()
    refused = CliRunner().invoke(train_tracker, [*args, "--steps", "8"])
    assert refused.exit_code == 1 and "holds an unfinished run" in refused.output


def test_resume_continues_a_killed_run_to_the_straight_runs_report(made, tmp_path, monkeypatch):
    from tracker.cli import main as train_tracker

    args = ["--data", str(made), *RUN[2:], "--steps", "6"]
    straight = CliRunner().invoke(train_tracker, [*args, "--out", str(tmp_path / "straight")])
    assert straight.exit_code == 0, straight.output
    _killed_at(monkeypatch, 3)
    out = tmp_path / "killed"
    killed = CliRunner().invoke(train_tracker, [*args, "--out", str(out)])
    assert isinstance(killed.exception, Killed) and not (out / "report.json").exists()
    monkeypatch.undo()
    resumed = CliRunner().invoke(train_tracker, [*args, "--out", str(out), "--resume"])
    assert resumed.exit_code == 0, resumed.output
    one, other = (json.loads((d / "report.json").read_bytes()) for d in (tmp_path / "straight", out))
    assert other["resumed_from_step"] == 2
    assert (other["exact"], other["final_losses"]) == (one["exact"], one["final_losses"])


def test_one_command_line_with_resume_starts_a_run_and_continues_it_once_killed(made, tmp_path, monkeypatch):
    """What make run does: the same command line, --resume included, starts the run where --out holds
    none and continues it from its last checkpoint once it was cut short."""
    from tracker.cli import main as train_tracker

    out = tmp_path / "run"
    args = ["--data", str(made), *RUN[2:], "--steps", "6", "--out", str(out), "--resume"]
    _killed_at(monkeypatch, 3)
    killed = CliRunner().invoke(train_tracker, args)
    assert isinstance(killed.exception, Killed) and not (out / "report.json").exists()
    assert f"no checkpoint in {out}: starting the run" in killed.stderr
    monkeypatch.undo()
    resumed = CliRunner().invoke(train_tracker, args)
    assert resumed.exit_code == 0, resumed.output
    assert "no checkpoint" not in resumed.stderr
    assert json.loads((out / "report.json").read_bytes())["resumed_from_step"] == 2


def test_a_finished_run_from_before_a_setting_was_added_counts_it_at_its_default(finished):
    from tracker.cli import main as train_tracker

    args, out = finished
    report = json.loads((out / "report.json").read_text())
    del report["config"]["slot_noise"]  # as a report written before the setting existed
    (out / "report.json").write_text(json.dumps(report))
    same = CliRunner().invoke(train_tracker, args)
    assert same.exit_code == 1 and "holds a finished run;" in same.output  # the same settings
    other = CliRunner().invoke(train_tracker, [*args, "--set", "slot_noise=0.1"])
    assert other.exit_code != 0 and "other settings (slot-noise 0.0 -> 0.1)" in other.output


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


@pytest.mark.parametrize("kind", ["tracker.config.TrainConfig", "oracle.config.OracleConfig",
                                  "stepwise.config.StepwiseConfig"])
def test_every_trainer_refuses_a_finished_run_of_its_own_settings(kind, tmp_path):
    import importlib
    from dataclasses import asdict

    from chains.files import OutputError
    from training.checkpoint import start_or_resume

    module, name = kind.rsplit(".", 1)
    config = getattr(importlib.import_module(module), name)()
    (tmp_path / "report.json").write_text(json.dumps({"config": json.loads(json.dumps(asdict(config), default=str))}))

    def never(*args):
        raise AssertionError("a trainer was built over a finished run")

    with pytest.raises(OutputError, match="holds a finished run; --resume"):
        start_or_resume(never, config, None, tmp_path, "cpu", resume=False)
    assert (tmp_path / "report.json").is_file()

"""A run's record: metrics.jsonl written as training goes (and continued by a resumed run without
duplicates), runs extended by --resume with more steps, sample sizes in reports, no machine paths in
results or manifests, files written with the user's umask, and the packages' ``python -m`` commands."""
import importlib.util
import json
import math
import os
import re
import subprocess
import sys
from dataclasses import replace
from pathlib import Path

import pytest
import torch
from click.testing import CliRunner
from hypothesis import given, settings, strategies as st

from chains.files import atomic_path, user_mode
from chains.rewrite.dataset import DatasetSpec
from leanbridge.certify import certify_dataset
from leanbridge.paths import CACHE_ENV, portable_path
from oracle.cli import main as train_oracle
from tracker.cli import main as train_tracker
from tracker.config import TrainConfig
from tracker.data import load_dataset
from tracker.evaluate import EvalConfig
from tracker.stopping import StopConfig
from tracker.train import Trainer, train
from training.checkpoint import CheckpointError
from training.loop import extension, lr_at
from training.runlog import METRICS, LogConfig, RunLog, TensorBoardMissing

pytestmark = pytest.mark.usefixtures("one_thread_module")
ROOT = Path(__file__).resolve().parent.parent
EVAL = EvalConfig(max_chains=8, pair_lengths=(8,))


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    root = tmp_path_factory.mktemp("runlog")
    certify_dataset(DatasetSpec(chains=40, test_lengths=(8, 16), test_chains=8), root / "data", root / "store.sqlite")
    return root / "data"


def _lines(out: Path) -> list[dict]:
    return [json.loads(line) for line in (out / METRICS).read_text().splitlines()]


def _steps(out: Path) -> list[dict]:
    return [r for r in _lines(out) if r["kind"] == "step"]


# ---- metrics.jsonl ---------------------------------------------------------------------------

def test_a_run_logs_every_step_its_learning_rate_loss_terms_checks_and_evaluation(tiny, tmp_path):
    config = TrainConfig(data=str(tiny), objective="combo", steps=6, batch_chains=4, warmup_steps=2)
    report = train(config, tmp_path, show_progress=False, eval_config=EVAL, log=LogConfig(every=2),
                   stop=StopConfig(every=3, chains=4, patience=5))
    steps = _steps(tmp_path)
    assert [r["step"] for r in steps] == [2, 4, 6]
    assert [r["lr"] for r in steps] == [lr_at(config, s - 1) for s in (2, 4, 6)]
    assert all(set(r["losses"]) == {"ce", "invariance", "nextlat"} for r in steps)
    assert steps[-1]["losses"] == report["final_losses"]
    checks = [r for r in _lines(tmp_path) if r["kind"] == "check"]
    assert [c["step"] for c in checks] == [3, 6]
    assert [c["exact"] for c in checks] == [c["exact"] for c in report["stop"]["checks"]]
    assert all(c["chains"] == {n: 4 for n in c["exact"]} for c in checks)
    last = _lines(tmp_path)[-1]
    assert last["kind"] == "evaluation" and last["exact"] == report["exact"]
    assert last["chains"] == {"8": 4, "16": 4}  # of 8 a split: the 4 the checks did not read


def test_a_resumed_run_continues_the_log_without_duplicates(tiny, tmp_path):
    """A run killed after step 6 with its checkpoint at step 4 logged steps 5 and 6 (and perhaps
    half a line); resumed, it trains them again: the log holds each step once, as a straight run's."""
    config = TrainConfig(data=str(tiny), objective="plain", steps=8, batch_chains=4, checkpoint_every=4)
    train(config, tmp_path / "straight", show_progress=False, eval_config=EVAL, log=LogConfig(every=1))
    trainer = Trainer(config, load_dataset(config.data))
    for step in range(4):
        trainer.train_step(step)
        trainer.step += 1
    out = tmp_path / "resumed"
    out.mkdir()
    torch.save(trainer.checkpoint(), out / "checkpoint.pt")
    straight = _steps(tmp_path / "straight")
    stale = [{**r, "losses": {"ce": 999.0}} if r["step"] > 4 else r for r in straight[:6]]
    (out / METRICS).write_text("".join(json.dumps(r) + "\n" for r in stale) + '{"kind": "step", "st')
    train(config, out, resume=True, show_progress=False, eval_config=EVAL, log=LogConfig(every=1))
    resumed = _steps(out)
    assert [r["step"] for r in resumed] == list(range(1, 9))
    assert [(r["step"], r["lr"], r["losses"]) for r in resumed] == [(r["step"], r["lr"], r["losses"]) for r in straight]


def test_a_fresh_run_in_a_used_directory_starts_a_new_log(tiny, tmp_path):
    config = TrainConfig(data=str(tiny), objective="plain", steps=2, batch_chains=4)
    (tmp_path / METRICS).write_text('{"kind": "step", "step": 50, "lr": 1, "losses": {}}\n')
    train(config, tmp_path, show_progress=False, eval_config=EVAL)
    assert [r["step"] for r in _steps(tmp_path)] == [2]


def test_tensorboard_event_files_on_request(tiny, tmp_path):
    pytest.importorskip("tensorboard")
    config = TrainConfig(data=str(tiny), objective="plain", steps=2, batch_chains=4)
    train(config, tmp_path, show_progress=False, eval_config=EVAL, log=LogConfig(every=1, tensorboard=True))
    assert list((tmp_path / "tensorboard").glob("events.out.tfevents.*"))


def test_tensorboard_without_the_package_is_one_line(tmp_path, monkeypatch):
    monkeypatch.setitem(sys.modules, "torch.utils.tensorboard", None)  # as where tensorboard is not installed
    with pytest.raises(TensorBoardMissing, match=r"pip install 'exact-state\[tensorboard\]'"):
        RunLog(tmp_path, LogConfig(tensorboard=True))


def test_tensorboard_missing_is_said_before_the_dataset_is_read(tmp_path):
    """The missing package is the first thing said, not what follows minutes of loading."""
    if importlib.util.find_spec("tensorboard") is not None:
        pytest.skip("tensorboard is installed here")
    result = CliRunner().invoke(train_tracker, ["--data", str(tmp_path / "no-such-dataset"), "--tensorboard",
                                                "--out", str(tmp_path / "run")])
    assert result.exit_code != 0 and "pip install 'exact-state[tensorboard]'" in result.output
    assert "no-such-dataset" not in result.output and "Traceback" not in result.output


def test_the_oracle_logs_its_steps_and_evaluation(tiny_probes, tmp_path):
    args = ["--data", str(tiny_probes), "--steps", "3", "--batch-chains", "4", "--width", "32", "--out",
            str(tmp_path), "--quiet", "--log-every", "1"]
    result = CliRunner().invoke(train_oracle, args)
    assert result.exit_code == 0, result.output
    report = json.loads((tmp_path / "report.json").read_text())
    assert [r["step"] for r in _steps(tmp_path)] == [1, 2, 3]
    assert _steps(tmp_path)[-1]["losses"] == report["final_losses"]
    last = _lines(tmp_path)[-1]
    assert last["kind"] == "evaluation" and last["accuracy"] == report["accuracy"]


# ---- extending a run -------------------------------------------------------------------------

@settings(max_examples=60, deadline=None)
@given(st.integers(1, 400), st.integers(0, 100), st.floats(0, 1), st.integers(1, 300))
def test_an_extension_continues_the_schedule_at_its_final_learning_rate(steps, warmup, fraction, more):
    config = TrainConfig(steps=steps, warmup_steps=min(warmup, steps), final_lr_fraction=fraction)
    for step in range(steps, steps + more):
        assert math.isclose(lr_at(config, step), config.lr * fraction, rel_tol=1e-12, abs_tol=1e-15)
    assert extension(config, steps) is None
    assert extension(config, steps + more)["extended_from"] == steps


@settings(max_examples=60, deadline=None)
@given(st.integers(1, 400), st.floats(0, 1), st.floats(0, 1), st.integers(1, 300))
def test_an_extension_keeps_every_term_at_its_last_weight(steps, delay, ramp, more):
    config = TrainConfig(steps=steps, nextlat_delay=delay, nextlat_ramp=ramp)
    last = config.weight("nextlat", steps - 1)
    assert all(config.weight("nextlat", step) == last for step in range(steps, steps + more))


def test_resume_with_more_steps_extends_the_run(tiny, tmp_path):
    config = TrainConfig(data=str(tiny), objective="combo", steps=4, batch_chains=4, warmup_steps=2)
    train(config, tmp_path / "short", show_progress=False, eval_config=EVAL, log=LogConfig(every=1))
    train(config, tmp_path / "long", show_progress=False, eval_config=EVAL, log=LogConfig(every=1))
    report = train(replace(config, steps=7), tmp_path / "long", resume=True, show_progress=False, eval_config=EVAL,
                   log=LogConfig(every=1))
    assert report["steps"] == 7 and report["resumed_from_step"] == 4
    assert report["extension"]["extended_from"] == 4 and report["config"]["steps"] == 4
    steps = _steps(tmp_path / "long")
    assert [r["step"] for r in steps] == list(range(1, 8))
    # the original run's steps, to the bit
    assert [(r["lr"], r["losses"]) for r in steps[:4]] == [(r["lr"], r["losses"]) for r in _steps(tmp_path / "short")]
    assert all(r["lr"] == pytest.approx(config.lr * config.final_lr_fraction) for r in steps[4:])
    blob = torch.load(tmp_path / "long" / "checkpoint.pt", weights_only=False)
    assert blob["step"] == 7 and blob["config"]["steps"] == 4
    # extended again, then resumed as it is: nothing more to train
    again = train(replace(config, steps=9), tmp_path / "long", resume=True, show_progress=False, eval_config=EVAL)
    assert again["steps"] == 9 and again["extension"]["extended_from"] == 4
    with pytest.raises(CheckpointError, match="never fewer"):
        train(replace(config, steps=3), tmp_path / "long", resume=True, show_progress=False)
    with pytest.raises(CheckpointError, match="other settings.*lr"):
        train(replace(config, steps=12, lr=1e-3), tmp_path / "long", resume=True, show_progress=False)


def test_the_command_extends_a_run_and_says_so(tiny, tmp_path):
    args = ["--data", str(tiny), "--batch-chains", "4", "--objective", "plain", "--out", str(tmp_path), "--quiet",
            "--eval-chains", "4"]
    assert CliRunner().invoke(train_tracker, args + ["--steps", "2"]).exit_code == 0
    result = CliRunner().invoke(train_tracker, args + ["--steps", "3", "--resume"])
    assert result.exit_code == 0, result.output
    assert '"extended_from": 2' in result.output
    refused = CliRunner().invoke(train_tracker, args + ["--steps", "4", "--seed", "1", "--resume"])
    assert refused.exit_code != 0 and "seed" in refused.output and "Traceback" not in refused.output


# ---- sample sizes ----------------------------------------------------------------------------

def test_a_report_says_how_many_chains_each_figure_counts_and_when_fewer_were_there(tiny, tmp_path, capfd):
    config = TrainConfig(data=str(tiny), objective="combo", steps=1, batch_chains=4)
    report = train(config, tmp_path / "many", show_progress=False, eval_config=EvalConfig(max_chains=512,
                                                                                       pair_lengths=(8,)))
    said = capfd.readouterr().err
    assert "512 held-out chains per length asked for" in said and "8 at length 16" in said
    evaluation = report["evaluation"]
    assert evaluation["chains"] == {"8": 8, "16": 8} and evaluation["chains_asked"] == 512
    assert evaluation["fewer_chains_than_asked"] == {"8": 8, "16": 8}
    assert evaluation["pairs"] == {"8": 8 * 2}  # two certified partners per chain
    report = train(config, tmp_path / "few", show_progress=False, eval_config=EvalConfig(max_chains=4,
                                                                                      pair_lengths=(8,)))
    assert "asked for" not in capfd.readouterr().err
    assert report["evaluation"]["chains"] == {"8": 4, "16": 4} and "fewer_chains_than_asked" not in report["evaluation"]


# ---- no machine paths --------------------------------------------------------------------------

# an absolute path into a home, the cache's usual places or a scratch directory
MACHINE_PATH = re.compile(r"(?<![\w.~<>$-])/(?:root|home|Users|tmp|var|work|mnt|scratch|private)/")


def test_no_file_under_results_holds_a_machine_path():
    texts = [f for f in (ROOT / "results").rglob("*") if f.suffix in (".json", ".jsonl", ".md", ".csv", ".txt")]
    assert texts
    found = [f"{f}: {m.group(0)}" for f in texts for m in MACHINE_PATH.finditer(f.read_text())]
    assert not found, found[:5]


def test_a_new_manifest_holds_no_machine_path(tiny):
    text = (tiny / "manifest.json").read_text()
    assert not MACHINE_PATH.search(text), text
    manifest = json.loads(text)
    assert manifest["lean"]["path"].startswith("<cache>/") or manifest["lean"]["source"] != "bundled"
    assert manifest["lean"]["version"] and len(manifest["lean"]["githash"]) == 40 and len(manifest["core_hash"]) == 64
    assert not manifest["store"].startswith("/")


@settings(max_examples=40, deadline=None)
@given(st.lists(st.text("abcxyz-_.0", min_size=1, max_size=6).filter(lambda s: s not in (".", "..")),
                min_size=1, max_size=3))
def test_a_portable_path_is_relative_to_the_cache_or_the_working_directory(parts):
    rest = Path(*parts)
    before = os.environ.get(CACHE_ENV)
    os.environ[CACHE_ENV] = "/nowhere-cache/exact-state"
    try:
        assert portable_path(Path("/nowhere-cache/exact-state") / rest) == f"<cache>/{rest.as_posix()}"
        assert portable_path(Path.cwd() / rest) == rest.as_posix()
        assert portable_path(Path("/nowhere-here") / rest) == f"<elsewhere>/{rest.name}"
    finally:
        if before is None:
            del os.environ[CACHE_ENV]
        else:
            os.environ[CACHE_ENV] = before


# ---- the user's umask --------------------------------------------------------------------------

@pytest.mark.parametrize("mask", [0o022, 0o077, 0o002])
def test_outputs_follow_the_umask(tmp_path, mask):
    before = os.umask(mask)
    try:
        assert user_mode() == 0o666 & ~mask and user_mode(directory=True) == 0o777 & ~mask
        with atomic_path(tmp_path / "out.bin") as tmp:
            tmp.write_bytes(b"x")
    finally:
        os.umask(before)
    assert (tmp_path / "out.bin").stat().st_mode & 0o777 == 0o666 & ~mask


def test_a_checkpoint_follows_the_umask(tiny, tmp_path):
    before = os.umask(0o022)
    try:
        train(TrainConfig(data=str(tiny), objective="plain", steps=1, batch_chains=4), tmp_path, show_progress=False,
              eval_config=EVAL)
    finally:
        os.umask(before)
    for name in ("checkpoint.pt", "report.json", METRICS):
        assert (tmp_path / name).stat().st_mode & 0o777 == 0o644, name


# ---- python -m -----------------------------------------------------------------------------------

@pytest.mark.parametrize("package, command", [("leanbridge", "certify"), ("tracker", "train-tracker"),
                                              ("oracle", "train-oracle"), ("prover", "prove")])
def test_every_command_runs_as_python_m(package, command):
    result = subprocess.run([sys.executable, "-m", package, "--help"], cwd=ROOT, capture_output=True, text=True,
                            timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith(f"Usage: {command} ")

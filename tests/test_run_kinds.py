"""A run of one trainer given where the other's is expected is named for what it is, in one line,
by every loader and by --resume: never a misfit of weights or an unknown objective."""
from __future__ import annotations

from dataclasses import asdict

import pytest
import torch

from oracle.config import OracleConfig
from stepwise.config import StepwiseConfig
from tracker.config import TrainConfig
from training.checkpoint import CHECKPOINT, Checkpoint, CheckpointError, RunUnavailable, written_by

IDENTITY = {"dataset": {"path": "data/x", "dataset_id": "0" * 64}}


def tracker_run(tmp_path):
    run = tmp_path / "tracker"
    run.mkdir()
    config = asdict(TrainConfig(objective="invariance"))  # an objective the oracle does not know
    torch.save({"config": config, "model": {"embed.item_tokens": torch.zeros(2, 3)}, "identity": IDENTITY, "step": 1},
               run / CHECKPOINT)
    return run


def oracle_run(tmp_path):
    run = tmp_path / "oracle"
    run.mkdir()
    torch.save({"config": asdict(OracleConfig()), "model": {}, "identity": IDENTITY, "step": 1,
                "verdicts": ["accepted", "complete"]}, run / CHECKPOINT)
    return run


def test_each_loader_names_the_other_trainers_run(tmp_path):
    from oracle.inference import load_run as load_oracle
    from tracker.inference import load_run as load_tracker

    with pytest.raises(RunUnavailable, match="this is a train-tracker run, where a train-oracle run is expected"):
        load_oracle(tracker_run(tmp_path))
    with pytest.raises(RunUnavailable, match="this is a train-oracle run, where a train-tracker run is expected"):
        load_tracker(oracle_run(tmp_path))


def test_resume_names_the_other_trainers_run(tmp_path):
    run = tracker_run(tmp_path)
    with pytest.raises(CheckpointError, match=f"{run}: this is a train-tracker run, where a train-oracle run"):
        Checkpoint.to_continue(run, OracleConfig(), IDENTITY["dataset"])
    assert Checkpoint.of_run(run, TrainConfig).config.objective == "invariance"  # its own kind reads it


def test_written_by_tells_the_trainers_apart():
    assert written_by({"config": asdict(TrainConfig())}) == "train-tracker"
    assert written_by({"config": asdict(OracleConfig())}) == "train-oracle"
    assert written_by({"config": {}, "verdicts": []}) == "train-oracle"
    assert written_by({"config": asdict(StepwiseConfig())}) == "train-stepwise"
    assert written_by({"config": None}) == "train-tracker"


def test_a_refused_resume_names_only_what_stops_it(tmp_path):
    """More steps are an allowed extension: a resume refused for another setting names that
    setting, not the steps beside it."""
    run = tracker_run(tmp_path)
    stored = TrainConfig(objective="invariance")
    with pytest.raises(CheckpointError, match=r"other settings \(lr 0\.002 -> 0\.001\)$"):
        Checkpoint.to_continue(run, TrainConfig(objective="invariance", lr=1e-3, steps=stored.steps * 2),
                               IDENTITY["dataset"])
    with pytest.raises(CheckpointError, match=r"steps 12000 -> 6000; lr"):
        Checkpoint.to_continue(run, TrainConfig(objective="invariance", lr=1e-3, steps=6000), IDENTITY["dataset"])

"""The one training loop and the one optimiser and terms config, shared by the tracker and the
oracle: both configs are TermsConfigs (OptimConfigs) whose settings stay flat fields (a
checkpoint's and a report's ``config`` keep their keys), and the loop's checkpoints, early end,
learning-rate override and stop requests, on a stand-in trainer that needs no dataset."""
from __future__ import annotations

import os
import signal
from dataclasses import asdict, fields

import pytest
import torch

from oracle.config import OracleConfig
from oracle.train import config_from_checkpoint as oracle_config
from tracker.config import TermsConfig, TrainConfig
from tracker.train import config_from_checkpoint as tracker_config
from training.checkpoint import CheckpointError, check_resumable, load_checkpoint, settings_from_checkpoint
from training.config import OptimConfig
from training.loop import TrainingInterrupted, lr_at, train_loop

# the keys of each config as every checkpoint and report before the shared config wrote them
TRACKER_KEYS = {"data", "objective", "arch", "width", "fixed_norm", "seed", "steps", "batch_chains", "lr",
                "final_lr_fraction", "warmup_steps", "weight_decay", "grad_clip", "mu", "invariance_delay",
                "invariance_ramp", "nextlat_weight", "nextlat_delay", "nextlat_ramp", "metric_weight", "metric_delay",
                "metric_ramp", "gamma", "checkpoint_every", "ticks", "slot_init", "embed_init_std", "slot_noise",
                "slot_noise_delay", "dropout", "layout", "ce_positions", "moves", "tables",
                # settings whose defaults leave a run as it was (a checkpoint without them reads them so)
                "table_sharpness", "move_readout", "encoder", "invariance_distance", "stream", "uniform_share",
                "uniform_length"}
ORACLE_KEYS = {"data", "objective", "arch", "width", "probe_width", "fixed_norm", "seed", "steps", "batch_chains",
               "lr", "final_lr_fraction", "warmup_steps", "weight_decay", "grad_clip", "mu", "invariance_delay",
               "invariance_ramp", "nextlat_weight", "nextlat_delay", "nextlat_ramp", "metric_weight", "metric_delay",
               "metric_ramp", "gamma", "metric_pairs", "completion_margin", "checkpoint_every", "validation",
               # added since, with defaults that leave a run as it was (older checkpoints read them as such)
               "completion_weight", "completion_negatives", "tree_weight"}


def test_both_configs_are_one_optimiser_and_terms_config_with_their_old_keys():
    shared = {f.name for f in fields(TermsConfig)}
    assert {f.name for f in fields(OptimConfig)} < shared
    for config, keys in ((TrainConfig(), TRACKER_KEYS), (OracleConfig(), ORACLE_KEYS)):
        assert isinstance(config, TermsConfig) and set(asdict(config)) == keys and shared <= keys
    own = {"steps", "metric_delay", "metric_ramp"}  # each keeps its own defaults of these
    assert TrainConfig().steps == 12_000 and OracleConfig().steps == 8_000
    assert (TrainConfig().metric_delay, OracleConfig().metric_delay) == (0.2, 0.0)
    for field in shared - own:
        assert getattr(TrainConfig(), field) == getattr(OracleConfig(), field)
    config = OracleConfig(steps=100, invariance_delay=0.5, invariance_ramp=0.1, mu=2.0)
    assert [config.weight("invariance", s) for s in (49, 50, 54, 60)] == [0.0, 0.2, 1.0, 2.0]
    with pytest.raises(ValueError, match="gamma"):
        TrainConfig(gamma=1.0)
    with pytest.raises(ValueError, match="batch_chains"):
        OracleConfig(batch_chains=1)
    with pytest.raises(ValueError, match="lr"):
        TrainConfig(lr=0.0)


def test_a_checkpoint_written_before_the_shared_config_loads_into_an_equal_config():
    # the old dataclasses' field order, with a key the config no longer knows: dropped
    tracker = {k: getattr(TrainConfig(), k) for k in sorted(TRACKER_KEYS)} | {"steps": 77, "retired": 1}
    assert tracker_config({"config": tracker}) == TrainConfig(steps=77)
    oracle = {k: getattr(OracleConfig(), k) for k in sorted(ORACLE_KEYS)} | {"validation": "v", "seed": 3}
    assert oracle_config({"config": oracle}) == OracleConfig(validation="v", seed=3)
    with pytest.raises(CheckpointError, match="settings are not valid"):
        settings_from_checkpoint({"config": {**oracle, "steps": 0}}, OracleConfig)


def test_the_schedule_warms_up_and_decays_to_its_floor():
    config = OptimConfig(steps=100, warmup_steps=10, lr=1.0, final_lr_fraction=0.1)
    assert lr_at(config, 0) == pytest.approx(0.1) and lr_at(config, 9) == pytest.approx(1.0)
    assert lr_at(config, 10) == pytest.approx(1.0) and lr_at(config, 100) == pytest.approx(0.1)
    assert lr_at(config, 10_000) == pytest.approx(0.1)
    assert all(lr_at(config, s) >= lr_at(config, s + 1) for s in range(10, 120))


class Stand:
    """A trainer with one weight: each step records its learning rate and moves the weight."""

    def __init__(self, config: OptimConfig, stop_at: int | None = None) -> None:
        self.config, self.step, self.train_seconds = config, 0, 0.0
        self.weight, self.rates, self.stop_at = 0.0, [], stop_at

    def train_step(self, step: int, lr: float | None = None) -> dict[str, float]:
        rate = lr_at(self.config, step) if lr is None else lr
        self.rates.append(rate)
        self.weight += rate
        if step + 1 == self.stop_at:
            os.kill(os.getpid(), signal.SIGINT)  # Ctrl-C in the middle of a step: it finishes first
        return {"loss": float(step)}

    def checkpoint(self) -> dict:
        return {"model": {"w": torch.tensor(self.weight, dtype=torch.float64)}, "config": asdict(self.config), "step": self.step,
                "train_seconds": self.train_seconds,
                "identity": {"dataset": {"dataset_id": "stand", "path": "nowhere"}}}


def test_the_loop_checkpoints_ends_when_asked_and_overrides_the_rate(tmp_path):
    config = OptimConfig(steps=7, checkpoint_every=3, warmup_steps=2)
    path = tmp_path / "checkpoint.pt"
    saved = []
    stand = Stand(config)
    written = stand.checkpoint
    stand.checkpoint = lambda: saved.append(stand.step) or written()  # which steps were checkpointed
    assert train_loop(stand, config, path, show_progress=False) == {"loss": 6.0}
    assert saved == [3, 6, 7] and load_checkpoint(path)["step"] == 7
    # a finished run resumed: no step, the checkpoint stays
    assert train_loop(stand, config, path, show_progress=False) == {} and stand.step == 7
    # an early end (a checkpoint at once) and a learning rate that replaces the schedule's
    other, seen = Stand(config), []
    losses = train_loop(other, config, tmp_path / "early.pt", show_progress=False,
                        lr=lambda step: 0.5 if step >= 2 else None,
                        check=lambda step, write: seen.append(step) or step == 4)
    assert losses == {"loss": 3.0} and other.step == 4 and load_checkpoint(tmp_path / "early.pt")["step"] == 4
    assert seen == [1, 2, 3, 4] and other.rates[2:] == [0.5, 0.5] and other.rates[0] == lr_at(config, 0)


def test_a_stop_request_checkpoints_between_steps_and_resumes_to_the_same_state(tmp_path):
    config = OptimConfig(steps=9, checkpoint_every=100)
    straight = Stand(config)
    train_loop(straight, config, tmp_path / "straight.pt", show_progress=False)
    stopped = Stand(config, stop_at=4)
    path = tmp_path / "stopped.pt"
    with pytest.raises(TrainingInterrupted, match="interrupted at step 4"):
        train_loop(stopped, config, path, show_progress=False)
    blob = load_checkpoint(path)
    assert blob["step"] == 4 and stopped.step == 4
    check_resumable(blob, config, {"dataset_id": "stand"}, path)
    with pytest.raises(CheckpointError, match="seed 0 -> 1"):
        check_resumable(blob, OptimConfig(steps=9, checkpoint_every=100, seed=1), {"dataset_id": "stand"},
                        path)
    with pytest.raises(CheckpointError, match="another dataset"):
        check_resumable(blob, config, {"dataset_id": "other"}, path)
    resumed = Stand(config)
    resumed.step, resumed.weight = blob["step"], float(blob["model"]["w"])
    train_loop(resumed, config, path, show_progress=False)
    assert resumed.step == 9 and resumed.weight == straight.weight and resumed.rates == straight.rates[4:]

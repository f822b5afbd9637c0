"""--device: the spec's resolution, the CPU's bits pinned, a device that is not here refused in one
line with nothing written, the device check's rows set beside the CPU's, and (on a machine with
CUDA only) training, resuming and loading there."""
import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from click.testing import CliRunner
from conftest import torch_threads
from devices import (cuda_only, no_cuda, pinned_torch, pins_for_these_kernels, same_weights_on_the_cpu, stopped_after,
                     train_steps, weights_hash)

from benchmarks.harness import device_cpu_rows, device_row, device_table
from chains.rewrite.dataset import DatasetSpec
from chains.rewrite.space import Domain
from leanbridge.certify import certify_dataset
from tracker.cli import main as train_tracker
from tracker.config import TrainConfig
from tracker.data import load_dataset
from tracker.evaluate import EvalConfig, evaluate
from tracker.stopping import StopConfig
from tracker.train import Trainer, config_from_checkpoint, train
from training.checkpoint import load_checkpoint
from training.device import DeviceUnavailable, cpu_kernels, resolve_device, to_cpu

@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    root = tmp_path_factory.mktemp("device")
    certify_dataset(DatasetSpec(domain=Domain(3, 1), chains=40, test_lengths=(8,), test_chains=4), root / "data",
                    root / "store.sqlite")
    return root / "data"


def test_specs_resolve_to_devices():
    assert resolve_device("cpu") == torch.device("cpu")
    assert resolve_device(" CPU ") == torch.device("cpu")
    assert resolve_device(torch.device("cpu")) == torch.device("cpu")
    assert resolve_device("auto") == (torch.device("cuda") if torch.cuda.is_available() else torch.device("cpu"))
    for bad in ("tpu", "cuda:x", "gpu", ""):
        with pytest.raises(DeviceUnavailable, match="unknown device"):
            resolve_device(bad)


def test_the_kernel_fingerprint_is_the_machines_not_the_thread_counts_nor_the_generators():
    cpu_kernels.cache_clear()
    with torch_threads(2):
        first = cpu_kernels()
        assert torch.get_num_threads() == 2  # the count the caller had, back
    cpu_kernels.cache_clear()
    with torch_threads(1):
        torch.manual_seed(3)
        assert cpu_kernels() == first
        drawn = torch.rand(4)
    torch.manual_seed(3)
    assert torch.equal(drawn, torch.rand(4))  # the caller's generator, untouched
    assert len(first["fingerprint"]) == 16 and int(first["fingerprint"], 16) >= 0


@no_cuda
def test_cuda_without_cuda_is_one_line():
    for spec in ("cuda", "cuda:0", "cuda:3"):
        with pytest.raises(DeviceUnavailable, match="no CUDA device on this machine") as e:
            resolve_device(spec)
        assert "\n" not in str(e.value)


# The weights after 12 steps at one thread on the test's dataset, by the CPU kernels they were made
# on (training.device.cpu_kernels), with torch 2.13.0 on x86-64: a change that moves the CPU's bits
# changes these. On the AVX-512 kernels below, the code of the commit that first pinned the bits
# (pinned then on other kernels) makes these same bits; on the AVX2 ones, the code of the commit that
# first pinned per kernel makes the same bits as the code that added their pins, and so it does on
# the second AVX-512 kernels (67ba31c2ed2b6132, AMD EPYC).
PINNED = {"7c44bcc597f98f09": {("recurrence", "combo"): "6c6a509aed42327e", ("transformer", "plain"): "aab3a5a91be43875",
                               ("deltaproduct", "nerode"): "b42fcf6b7c948a25"},
          "8a844f82d4a3b727": {("recurrence", "combo"): "96a01957420accf8", ("transformer", "plain"): "b04debb35934a01e",
                               ("deltaproduct", "nerode"): "ce2478ca593b097b"},
          "67ba31c2ed2b6132": {("recurrence", "combo"): "355a47993bfbd75f", ("transformer", "plain"): "ed627adb16afb7c4",
                               ("deltaproduct", "nerode"): "a450a5dae2d8f83c"}}
ARMS = [("recurrence", "combo"), ("transformer", "plain"), ("deltaproduct", "nerode")]


@pinned_torch
@pytest.mark.parametrize("arch,objective", ARMS)
def test_cpu_bits_are_the_pinned_ones(tiny, one_thread, arch, objective):
    pins = pins_for_these_kernels(PINNED)
    config = TrainConfig(data=str(tiny), arch=arch, objective=objective, width=32, steps=12, batch_chains=4,
                         warmup_steps=4)
    trainer = Trainer(config, load_dataset(tiny), "cpu")
    train_steps(trainer, config.steps)
    assert weights_hash(trainer.model.state_dict()) == pins[arch, objective]


@no_cuda
def test_the_command_refuses_cuda_in_one_line_and_writes_nothing(tiny, tmp_path):
    out = tmp_path / "run"
    result = CliRunner().invoke(train_tracker, ["--data", str(tiny), "--steps", "2", "--device", "cuda",
                                                "--out", str(out), "--quiet"])
    assert result.exit_code != 0
    assert result.output.strip().count("\n") == 0 and "no CUDA device" in result.output, result.output
    assert "Traceback" not in result.output and not out.exists()
    # the library refuses as early: before the dataset is read or a directory made
    with pytest.raises(DeviceUnavailable):
        train(TrainConfig(data=str(tmp_path / "nowhere"), steps=2), out, show_progress=False, device="cuda")
    assert not out.exists()


def test_a_run_records_its_device_and_its_checkpoint_loads_on_the_cpu(tiny, tmp_path):
    config = TrainConfig(data=str(tiny), width=32, steps=3, batch_chains=4)
    report = train(config, tmp_path, show_progress=False, eval_config=EvalConfig(pair_lengths=(8,)), device="cpu")
    assert report["device"] == "cpu" and report["resumed_from_step"] is None
    assert report["cpu_kernels"] == cpu_kernels() and report["cpu_kernels"]["capability"] in ("DEFAULT", "AVX2", "AVX512")
    blob = load_checkpoint(tmp_path / "checkpoint.pt")
    assert blob["device"] == "cpu" and config_from_checkpoint(blob) == config
    assert all(t.device.type == "cpu" for t in blob["model"].values())
    assert to_cpu({"a": [torch.ones(1)], "b": 2})["b"] == 2


DEVICE_CHECK = [sys.executable, "-m", "benchmarks.device_check"]
ROOT = Path(__file__).resolve().parents[1]


def device_check(*args: str) -> subprocess.CompletedProcess:
    """``python -m benchmarks.device_check ARGS`` from the checkout, as a user runs it."""
    return subprocess.run([*DEVICE_CHECK, *args], cwd=ROOT, capture_output=True, text=True)


@no_cuda
def test_the_device_check_stops_in_one_line_without_a_gpu_and_writes_nothing(tmp_path):
    for device in ("cuda", "cpu", "auto"):
        done = device_check("--device", device, "--runs", str(tmp_path / "runs"),
                            "--out", str(tmp_path / "device-check.json"))
        assert done.returncode == 1 and not done.stdout, (done.stdout, done.stderr)
        assert done.stderr.strip().count("\n") == 0 and "Traceback" not in done.stderr, done.stderr
        assert "wrote nothing" in done.stderr, done.stderr
    assert not any(tmp_path.iterdir())


@cuda_only
def test_on_cuda_the_device_check_takes_the_gpu_and_names_a_missing_dataset_in_one_line(tmp_path):
    # the GPU is accepted and the dataset read next (training there is the cuda_only tests' below)
    done = device_check("--data", str(tmp_path / "nowhere"), "--runs", str(tmp_path / "runs"),
                        "--out", str(tmp_path / "device-check.json"))
    assert done.returncode == 1 and done.stderr.strip().count("\n") == 0, done.stderr
    assert "nowhere" in done.stderr and "measures a GPU" not in done.stderr and "Traceback" not in done.stderr
    assert not (tmp_path / "device-check.json").exists()


FAST_CPU = {"candidate": "fast", "seed": 0, "stop": {"every": 250, "chains": 64, "patience": 2, "threshold": 0.99},
            "steps": 3000, "steps_per_second": 23.6, "exact_at_step": 2750, "wall_seconds": 152.3,
            "exact": {"8": 1.0, "256": 1.0, "4096": 0.998}, "machine": "cpu-box", "torch_threads": 1}


def test_the_device_check_takes_the_cpu_rows_of_its_seeds_under_its_stop_rule(tmp_path):
    rows = [FAST_CPU,
            {**FAST_CPU, "stop": {**FAST_CPU["stop"], "every": 500}, "steps": 1},  # another stop rule
            {**FAST_CPU, "candidate": "default", "steps": 2},  # another schedule
            {**FAST_CPU, "seed": 3, "steps": 3},  # a seed not asked for
            {**FAST_CPU, "seed": 1, "stop": {**FAST_CPU["stop"], "cooldown": 0}, "steps": 4000},
            {**FAST_CPU, "seed": 1, "stop": {**FAST_CPU["stop"], "cooldown": 100}, "steps": 5}]  # a cooldown
    path = tmp_path / "time-to-exact.json"
    path.write_text(json.dumps({"runs": rows}))
    found = device_cpu_rows(path, (0, 1, 2), StopConfig(every=250))
    assert sorted(found) == [0, 1] and found[0]["steps"] == 3000 and found[1]["steps"] == 4000
    assert found[0]["machine"] == "cpu-box" and found[0]["runs_in_flight"] is None and "candidate" not in found[0]
    assert device_cpu_rows(tmp_path / "none.json", (0,), StopConfig(every=250)) == {}  # no CPU figures yet
    path.write_text(json.dumps({"runs": [FAST_CPU, {**FAST_CPU, "steps": 2500}]}))
    assert device_cpu_rows(path, (0,), StopConfig(every=250))[0]["steps"] == 2500  # a seed's last row counts


def test_the_device_check_sets_its_rows_beside_the_cpu_s():
    report = {"steps": 1500, "steps_per_second": 212.5, "exact": {"8": 1.0, "256": 1.0, "4096": 0.99805},
              "pair_distance": 0.01, "unrelated_distance": 0.9, "device": "cuda:0", "dataset": {"dataset_id": "d1"},
              "evaluation": {"eval_seconds": 4.0},
              "stop": {"exact_at_step": 1250, "exact_at_seconds": 6.1, "train_seconds": 7.0, "check_seconds": 0.5,
                       "wall_seconds": 7.5}}
    gpu = [device_row(0, report, 11.237), device_row(1, {**report, "exact": {"8": 0.5}}, 2.0)]
    assert gpu[0]["seed"] == 0 and gpu[0]["exact_at_step"] == 1250 and gpu[0]["run_seconds"] == 11.24
    assert gpu[0]["eval_seconds"] == 4.0 and gpu[0]["dataset_id"] == "d1" and gpu[0]["device"] == "cuda:0"
    lines = device_table(gpu, {0: {k: FAST_CPU[k] for k in ("steps", "steps_per_second", "exact_at_step",
                                                            "wall_seconds", "exact")}}).splitlines()
    assert lines[0].startswith("| seed | where | steps |") and lines[0].endswith("| exact@4096 |")
    assert lines[2:] == ["| 0 | gpu | 1500 | 212.500 | 1250 | 8 | 1.000 | 1.000 | 0.998 |",
                         "| 0 | cpu | 3000 | 23.600 | 2750 | 152 | 1.000 | 1.000 | 0.998 |",
                         "| 1 | gpu | 1500 | 212.500 | 1250 | 8 | 0.500 | – | – |",
                         "| 1 | cpu | no CPU row for this seed | | | | | | |"]


@cuda_only
@pytest.mark.parametrize("settings", [{"objective": "combo"}, {"objective": "nerode", "arch": "deltaproduct"},
                                      {"objective": "plain", "arch": "transformer", "dropout": 0.1},
                                      {"objective": "invariance", "slot_noise": 0.1}])
def test_on_cuda_a_run_trains_resumes_to_the_same_bits_and_loads_on_the_cpu(tiny, tmp_path, settings):
    config = TrainConfig(data=str(tiny), width=32, steps=6, batch_chains=4, checkpoint_every=3, **settings)
    eval_config = EvalConfig(pair_lengths=(8,))
    report = train(config, tmp_path / "straight", show_progress=False, eval_config=eval_config, device="cuda")
    assert report["device"].startswith("cuda")
    stopped_after(Trainer(config, load_dataset(tiny), "cuda"), 3, tmp_path / "resumed")
    resumed = train(config, tmp_path / "resumed", resume=True, show_progress=False, eval_config=eval_config,
                    device="cuda")
    assert resumed["resumed_from_step"] == 3
    straight = same_weights_on_the_cpu(tmp_path / "straight", tmp_path / "resumed")
    # the GPU's checkpoint evaluates on the CPU (the figures agree to float tolerance, not bit for bit)
    cpu = Trainer(config, load_dataset(tiny), "cpu")
    cpu.load(straight)
    results = evaluate(cpu.model, cpu.data, eval_config)
    assert set(results["exact"]) == set(report["exact"])

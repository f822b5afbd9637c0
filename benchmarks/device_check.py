"""The device check: train the fast schedule on a GPU as ``make run`` trains it on the CPU (stop
once exact on a few held-out chains of every length for two checks in a row), evaluate on the
512 held-out chains of every length up to 4,096 events, and set its steps per second and
exactness beside the CPU's figures for the same seeds (the fast schedule's rows of
``results/time-to-exact.json``).

    python -m benchmarks.device_check                        # seed 0 on the first CUDA device
    python -m benchmarks.device_check --seeds 0,1,2 --device cuda:1 --machine h100-node

It measures a GPU and nothing else: on a machine without the device asked for it stops with one
line and writes nothing. The GPU's rows go to ``results/device-check.json`` (device name, torch
and CUDA versions, per seed: steps, steps per second, when it became exact, exact by length),
with the CPU rows they are set beside.
"""
from __future__ import annotations

import json
import time
from dataclasses import asdict
from functools import partial
from pathlib import Path

import click
import torch

from benchmarks.harness import (DEVICE_LONGEST, Plan, device_cpu_rows, device_row, device_table, seed_list,
                                write_results)
from tracker.config import TrainConfig
from tracker.evaluate import EvalConfig
from tracker.grid import RunSpec
from tracker.schedules import scheduled
from tracker.stopping import StopConfig
from training.device import DeviceUnavailable, resolve_device


def gpu_device(spec: str) -> torch.device:
    """The GPU that ``spec`` names; a one-line click error when it is not here or is the CPU."""
    try:
        device = resolve_device(spec)
    except DeviceUnavailable as e:
        reason = str(e).split("; use --device")[0]  # the check has no CPU fallback to offer
        raise click.ClickException(f"{reason}; the device check measures a GPU and wrote nothing") from None
    if device.type == "cpu":
        raise click.ClickException(f"device {spec!r} is the CPU here; the device check measures a GPU "
                                   "(the CPU's figures are in results/time-to-exact.json) and wrote nothing")
    return device


def device_name(device: torch.device) -> str:
    return torch.cuda.get_device_name(device) if device.type == "cuda" else device.type


def fast_config(arm: str, seed: int, *, data: str) -> TrainConfig:
    """The fast schedule at ``seed`` on ``data`` (the check's one arm)."""
    return scheduled("fast", data=data, seed=seed)


def run_dir(arm: str, seed: int, *, runs: Path) -> Path:
    """``<runs>/<arm>-s<seed>``: ``<runs>/fast-s<seed>``."""
    return runs / f"{arm}-s{seed}"


def plan(data: str, runs: Path, stop: StopConfig, device: torch.device) -> Plan:
    """The check's runs: the fast schedule stopped when exact, evaluated on 512 chains a length,
    each trained from step 0 on ``device`` (its time is what the check measures)."""
    return Plan(partial(fast_config, data=data), partial(run_dir, runs=runs),
                partial(RunSpec, eval_config=EvalConfig(max_chains=512), stop=stop, fresh=True), device=str(device))


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--device", default="cuda", show_default=True, help="The GPU to measure: cuda, cuda:N or mps.")
@click.option("--seeds", default="0", show_default=True, help="Comma-separated seeds.")
@click.option("--data", default="data/tier1-a4", show_default=True,
              help="Certified dataset directory, with held-out chains of 4,096 events.")
@click.option("--runs", type=click.Path(path_type=Path), default=Path("runs/device-check"), show_default=True)
@click.option("--out", type=click.Path(path_type=Path), default=Path("results/device-check.json"), show_default=True)
@click.option("--cpu-results", type=click.Path(path_type=Path), default=Path("results/time-to-exact.json"),
              show_default=True, help="Where the CPU's figures for the fast schedule are read from.")
@click.option("--machine", default=None, help="Label of the machine, kept with the rows [default: the GPU's name].")
@click.option("--check-every", type=click.IntRange(1), default=250, show_default=True,
              help="Steps between the stop-when-exact checks (make run's 250).")
def main(device, seeds, data, runs, out, cpu_results, machine, check_every) -> None:
    """Train the fast schedule on a GPU, evaluate it at every length up to 4,096 events, and set its
    steps per second and exactness beside the CPU's."""
    where = gpu_device(device)  # before anything is read or written
    chosen = seed_list(seeds)
    stop = StopConfig(every=check_every)
    runs_of = plan(data, runs, stop, where)
    rows = []
    for seed in chosen:
        began = time.perf_counter()
        try:
            report = runs_of.run("fast", seed, quiet=True, threads=None)
        except ValueError as e:  # the dataset, a checkpoint
            raise click.ClickException(" ".join(str(e).split())) from None
        if DEVICE_LONGEST not in report["exact"]:
            raise click.ClickException(f"{data} has no held-out chains of {DEVICE_LONGEST} events; certify the default "
                                       "tier-1 dataset")
        rows.append(device_row(seed, report, time.perf_counter() - began))
        click.echo(f"== seed {seed}: {rows[-1]['steps_per_second']} steps/s, exact {json.dumps(report['exact'])}",
                   err=True)
    cpu = device_cpu_rows(cpu_results, chosen, stop)
    write_results(out, {"device": device_name(where), "machine": machine or device_name(where),
                        "torch_version": torch.__version__, "cuda_version": torch.version.cuda,
                        "schedule": "fast", "stop": asdict(stop), "data": data,
                        "runs": rows, "cpu": [{"seed": s, **r} for s, r in sorted(cpu.items())]})
    click.echo(device_table(rows, cpu))
    click.echo(f"wrote {out}", err=True)


if __name__ == "__main__":
    main()

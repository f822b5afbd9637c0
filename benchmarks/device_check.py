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
from pathlib import Path

import click
import torch

from benchmarks.harness import seed_list, write_results
from tracker.device import DeviceUnavailable, resolve_device
from tracker.evaluate import EvalConfig
from tracker.schedules import scheduled
from tracker.stopping import StopConfig
from tracker.train import train

LONGEST = "4096"


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


def cpu_rows(path: Path, seeds: tuple[int, ...], stop: StopConfig) -> dict[int, dict]:
    """The fast schedule's CPU rows of the time-to-exact results under the same stop rule, by seed
    (the last of each seed's rows)."""
    rows = json.loads(path.read_text())["runs"] if path.is_file() else []
    wanted = asdict(stop)
    found = {}
    for r in rows:
        if r["candidate"] == "fast" and r["seed"] in seeds and {"cooldown": 0, **r["stop"]} == wanted:
            found[r["seed"]] = {k: r.get(k) for k in ("machine", "torch_threads", "runs_in_flight", "steps",
                                                       "steps_per_second", "exact_at_step", "wall_seconds",
                                                       "exact", "torch_version")}
    return found


def row_of(seed: int, report: dict, run_seconds: float) -> dict:
    s = report["stop"]
    return {"seed": seed, "steps": report["steps"], "steps_per_second": report["steps_per_second"],
            "exact_at_step": s["exact_at_step"], "exact_at_seconds": s["exact_at_seconds"],
            "train_seconds": s["train_seconds"], "check_seconds": s["check_seconds"],
            "wall_seconds": s["wall_seconds"], "eval_seconds": report["evaluation"]["eval_seconds"],
            "run_seconds": round(run_seconds, 2), "exact": report["exact"],
            "pair_distance": report["pair_distance"], "unrelated_distance": report["unrelated_distance"],
            "device": report["device"], "dataset_id": report["dataset"]["dataset_id"]}


def _fmt(v, digits: int = 3) -> str:
    return "–" if v is None else (f"{v:.{digits}f}" if isinstance(v, float) else str(v))


def table(gpu: list[dict], cpu: dict[int, dict]) -> str:
    head = ["seed", "where", "steps", "steps/s", "exact at step", "wall s", "exact@8", "exact@256", "exact@4096"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in gpu:
        for where, row in (("gpu", r), ("cpu", cpu.get(r["seed"]))):
            if row is None:
                lines.append(f"| {r['seed']} | cpu | no CPU row for this seed | | | | | | |")
                continue
            exact = row["exact"]
            lines.append("| " + " | ".join([str(r["seed"]), where, _fmt(row["steps"]), _fmt(row["steps_per_second"]),
                                            _fmt(row["exact_at_step"]), _fmt(row["wall_seconds"], 0),
                                            _fmt(exact.get("8")), _fmt(exact.get("256")),
                                            _fmt(exact.get(LONGEST))]) + " |")
    return "\n".join(lines)


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
    rows = []
    for seed in chosen:
        config = scheduled("fast", data=data, seed=seed)
        began = time.perf_counter()
        try:
            report = train(config, runs / f"fast-s{seed}", show_progress=False, stop=stop,
                           eval_config=EvalConfig(max_chains=512), device=where)
        except ValueError as e:  # the dataset, a checkpoint
            raise click.ClickException(" ".join(str(e).split())) from None
        if LONGEST not in report["exact"]:
            raise click.ClickException(f"{data} has no held-out chains of {LONGEST} events; certify the default "
                                       "tier-1 dataset")
        rows.append(row_of(seed, report, time.perf_counter() - began))
        click.echo(f"== seed {seed}: {rows[-1]['steps_per_second']} steps/s, exact {json.dumps(report['exact'])}",
                   err=True)
    cpu = cpu_rows(cpu_results, chosen, stop)
    write_results(out, {"device": device_name(where), "machine": machine or device_name(where),
                        "torch_version": torch.__version__, "cuda_version": torch.version.cuda,
                        "schedule": "fast", "stop": asdict(stop), "data": data,
                        "runs": rows, "cpu": [{"seed": s, **r} for s, r in sorted(cpu.items())]})
    click.echo(table(rows, cpu))
    click.echo(f"wrote {out}", err=True)


if __name__ == "__main__":
    main()

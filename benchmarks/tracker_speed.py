"""Benchmark: where a default training step's time goes, and how long evaluation takes.

Times ``--steps`` optimiser steps of the default recipe (recurrence, combo, width 128, 28 chains
per step) after a short warm-up, splits one profiled stretch of steps by operator family, and
times the free-running evaluation of the 512 test chains at 4,096 events. Writes
``results/tracker_speed.json``. Run it on a quiet machine: other processes share the cores. ``--set SETTING=VALUE`` changes one training setting of the schedule
(``tracker.config.TrainConfig``'s field of that name), so that a registered arm's whole recipe is timed.

    .venv/bin/python -m benchmarks.tracker_speed [--steps 200] [--threads 2] [--schedule registers --out F]
        [--set tables=free --set move_readout=0]

``--schedule`` times another recipe (``tracker.schedules``) the same way: the registers arch beside
the recurrence, each at one thread (``--threads 1``); ``--set`` over the registers schedule times its
earlier variants (above: hard moves with free tables, the beyond batch's first registers arms). Beside the wall clock it records the process's
own CPU time per step, which at one thread stays close to a quiet machine's figure when other
processes share the cores.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import tempfile
import time
from pathlib import Path

import torch
from torch.profiler import ProfilerActivity, profile

from chains.files import user_mode
from chains.version import package_version
from tracker.data import load_dataset
from tracker.evaluate import EvalConfig, end_views
from tracker.schedules import parse_settings, scheduled
from tracker.train import Trainer

# operator families: the first pattern an aten op's name contains decides its family
FAMILIES = (("matmul (MLP, keys/values, readout)", ("mm", "addmm", "linear")),
            ("gelu", ("gelu",)), ("layer norm", ("layer_norm",)), ("softmax", ("softmax",)),
            ("indexing and copies", ("index", "gather", "copy", "cat", "scatter", "where")),
            ("elementwise", ("mul", "add", "sum", "div", "sub", "norm", "mean", "masked_fill", "pow")),
            ("optimiser", ("_foreach", "adam", "lerp", "sqrt", "addcdiv", "addcmul")))


def family(name: str) -> str:
    op = name.removeprefix("aten::")
    for label, patterns in FAMILIES:
        if any(p in op for p in patterns):
            return label
    return "other"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--data", default="data/tier1-a4")
    ap.add_argument("--steps", type=int, default=200, help="timed optimiser steps")
    ap.add_argument("--threads", type=int, default=os.cpu_count() or 1)
    ap.add_argument("--out", default="results/tracker_speed.json")
    ap.add_argument("--schedule", default="default", help="the recipe timed (tracker.schedules)")
    ap.add_argument("--eval-chains", type=int, default=512, help="test chains whose evaluation is timed (0: none)")
    ap.add_argument("--set", action="append", default=[], metavar="SETTING=VALUE",
                    help="a training setting over the schedule's, e.g. tables=inherited (repeatable)")
    args = ap.parse_args()
    try:
        changed = parse_settings(args.set)
        config = scheduled(args.schedule, **changed, data=args.data)
    except ValueError as e:
        raise SystemExit(f"tracker_speed: {e}") from None
    torch.set_num_threads(args.threads)
    data = load_dataset(args.data)
    trainer = Trainer(config, data)
    start = int(0.75 * config.steps)  # past the terms' delays, so every term of the objective is live
    for step in range(start - 20, start):
        trainer.train_step(step)
    began, cpu_began = time.perf_counter(), time.process_time()
    for step in range(start, start + args.steps):
        trainer.train_step(step)
    per_step = (time.perf_counter() - began) / args.steps
    # the process's own CPU time: at one thread, what a quiet machine's wall clock would show
    cpu_per_step = (time.process_time() - cpu_began) / args.steps

    with profile(activities=[ProfilerActivity.CPU]) as prof:
        for step in range(start, start + 20):
            trainer.train_step(step)
    shares: dict[str, float] = {}
    for event in prof.key_averages():
        if event.key.startswith("aten::"):
            shares[family(event.key)] = shares.get(family(event.key), 0.0) + event.self_cpu_time_total
    total = sum(shares.values()) or 1.0

    items = data.tests[max(data.tests)]["chain_items"][:args.eval_chains]
    began = time.perf_counter()
    if len(items):
        end_views(trainer.model, items, EvalConfig().chunk)
    eval_seconds = time.perf_counter() - began if len(items) else None

    result = {
        "threads": args.threads, "timed_steps": args.steps, "seconds_per_step": round(per_step, 4),
        "steps_per_second": round(1 / per_step, 2),
        "cpu_seconds_per_step": round(cpu_per_step, 4), "steps_per_cpu_second": round(1 / cpu_per_step, 2),
        "projected_training_minutes": round(config.steps * per_step / 60, 2),
        "time_by_operator_family": {k: round(v / total, 3) for k, v in sorted(shares.items(), key=lambda kv: -kv[1])},
        "eval_chains": int(items.shape[0]), "eval_length": int(max(data.tests)),
        "eval_seconds": None if eval_seconds is None else round(eval_seconds, 2),
        "schedule": args.schedule, "overrides": changed,
        "config": {"arch": config.arch, "objective": config.objective, "width": config.width,
                   "batch_chains": config.batch_chains, "fixed_norm": config.fixed_norm, "steps": config.steps,
                   "seed": config.seed, "moves": config.moves, "tables": config.tables,
                   "move_readout": config.move_readout},
        "dataset": data.identity["dataset"], "lean": data.identity["lean"],
        "package_version": package_version(), "torch_version": torch.__version__,
        "machine": {"cpus": os.cpu_count(), "platform": platform.platform()},
    }
    out = Path(args.out)
    out.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=out.parent, prefix=f".{out.name}.tmp-")
    os.fchmod(fd, user_mode())  # mkstemp's 0600 would outlive the rename
    with os.fdopen(fd, "w") as handle:
        json.dump(result, handle, indent=2)
        handle.write("\n")
    os.replace(tmp, out)
    print(json.dumps({k: result[k] for k in ("steps_per_second", "steps_per_cpu_second", "projected_training_minutes",
                                             "time_by_operator_family", "eval_seconds")}, indent=2))


if __name__ == "__main__":
    main()

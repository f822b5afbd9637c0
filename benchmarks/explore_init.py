"""Exploration for the time-to-exact comparison: which change makes the fixed-norm recurrence learn sooner.

Each variant trains for a fixed wall budget at one thread and records, every 100 steps, exact on
the last 64 held-out chains of each length (shortest first, up to the first failing length).
The init changes are applied after the seeded init, as they were on the device run recorded in
``results/time-to-exact-exploration.json``; the ``slot_init``, ``embed_init_std`` and ``ticks``
settings of TrainConfig now make them properly.

    python -m benchmarks.explore_init OUT.json BUDGET_SECONDS [DATA_DIR]   # 14 processes at once
"""
import json
import sys
import time
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import replace
from multiprocessing import get_context
from pathlib import Path

import torch


VARIANTS = {
    "base-b28": {},
    "base-b16-lr3": {"cfg": {"batch_chains": 16, "lr": 3e-3, "warmup_steps": 50}},
    "w0small": {"w0": 0.05},
    "emb1": {"emb": 1.0},
    "emb1-kv": {"emb": 1.0, "kv": 0.09},
    "w0small-emb1": {"w0": 0.05, "emb": 1.0},
    "w0small-emb1-kv": {"w0": 0.05, "emb": 1.0, "kv": 0.09},
    "w0small-emb1-b16-lr3": {"w0": 0.05, "emb": 1.0, "cfg": {"batch_chains": 16, "lr": 3e-3, "warmup_steps": 50}},
    "w0small-emb1-b16-lr5": {"w0": 0.05, "emb": 1.0, "cfg": {"batch_chains": 16, "lr": 5e-3, "warmup_steps": 50}},
    "w0small-emb1-ticks2": {"w0": 0.05, "emb": 1.0, "ticks": 2},
    "w0small-emb1-w64-b16": {"w0": 0.05, "emb": 1.0, "cfg": {"width": 64, "batch_chains": 16, "lr": 3e-3, "warmup_steps": 50}},
    "torchinit": {"torchinit": True},
    "free": {"cfg": {"fixed_norm": False}},
    "w0small-emb1-plain": {"w0": 0.05, "emb": 1.0, "cfg": {"objective": "plain"}},
}


def run(name: str, budget: float, data_dir: str) -> dict:
    torch.set_num_threads(1)
    from tracker.data import load_dataset
    from tracker.train import Trainer, TrainConfig
    from tracker.stopping import check_exact
    v = VARIANTS[name]
    data = load_dataset(data_dir)
    cfg = replace(TrainConfig(data=data_dir), **{"steps": 3000, **v.get("cfg", {})})
    tr = Trainer(cfg, data)
    m = tr.model
    if "ticks" in v:
        object.__setattr__(m.config, "ticks", v["ticks"])
    if v.get("torchinit"):
        for mod in m.modules():
            if hasattr(mod, "reset_parameters") and mod is not m:
                mod.reset_parameters()
    if "w0" in v:
        with torch.no_grad():
            m.w0.mul_(v["w0"])
    if "emb" in v:
        torch.nn.init.normal_(m.embed.table.weight, std=v["emb"])
    if "kv" in v:
        torch.nn.init.normal_(m.key.weight, std=v["kv"])
        torch.nn.init.normal_(m.value.weight, std=v["kv"])
    t0 = time.time()
    curve = []
    step = 0
    while time.time() - t0 < budget and step < cfg.steps:
        losses = tr.train_step(step)
        step += 1
        if step % 100 == 0:
            ex = check_exact(m, data, 64, 0.99)
            curve.append({"step": step, "s": round(time.time() - t0, 1), "ce": round(losses["ce"], 4), "exact": ex})
    return {"name": name, "variant": v, "steps": step, "curve": curve}


if __name__ == "__main__":
    out, budget = sys.argv[1], float(sys.argv[2])
    data_dir = sys.argv[3] if len(sys.argv) > 3 else "data/tier1-a4"
    rows = []
    with ProcessPoolExecutor(14, mp_context=get_context("spawn")) as pool:
        futs = [pool.submit(run, n, budget, data_dir) for n in VARIANTS]
        for f in as_completed(futs):
            r = f.result()
            rows.append(r)
            Path(out).write_text(json.dumps(rows, indent=1))
            last = r["curve"][-1] if r["curve"] else None
            print(r["name"], r["steps"], last, flush=True)

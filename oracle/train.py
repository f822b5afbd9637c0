"""Training an oracle arm on probe verdicts, with checkpoints that survive Ctrl-C and kills.

One step: sample B training chains (with their K certified partners for ``combo``), run the
histories through the arm, and take the cross-entropy of every probe's verdict class against
Lean's. ``combo`` adds the tracker's NextLat and invariance terms on the carried state, with the
tracker's schedules. Batches come from a generator seeded by (seed, step), so a resumed run sees
exactly the batches the uninterrupted one would have.
"""
from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path

import torch
import torch.nn.functional as F
from tqdm import tqdm

from chains.files import staged_files
from oracle.data import OracleData, ProbeBatch, load_probe_dataset, sample_probe_batch
from oracle.evaluate import OracleEvalConfig, evaluate
from oracle.model import ARCHS, STATEFUL, Oracle, OracleModelConfig
from tracker.data import save_atomic
from tracker.objectives import NextLatHead, invariance, nextlat, schedule
from tracker.train import (CheckpointError, TrainingInterrupted, descend, load_checkpoint, lr_at, package_version,
                           stop_requests)

CHECKPOINT = "checkpoint.pt"
OBJECTIVES = ("plain", "combo")


@dataclass(frozen=True)
class OracleConfig:
    data: str = "data/tier1-a4"  # certified dataset directory made with certify --probes
    objective: str = "combo"  # plain: verdict cross-entropy; combo: + NextLat + invariance on certified partners
    arch: str = "recurrence"  # one of oracle.model.ARCHS
    width: int = 128  # slot width C (the seed's 128)
    probe_width: int = 64  # D: width of the probe encoding of the bilinear head
    fixed_norm: bool = True  # recurrence: rescale the slot to a fixed norm after every event (section 52's closure)
    seed: int = 0  # model init and batch order
    steps: int = 8_000  # optimiser steps: one default run fits 15 minutes on 2 CPU cores (README, "Oracle")
    batch_chains: int = 28  # B chains per step, each with its probes (and K partners for combo)
    lr: float = 2e-3  # peak AdamW learning rate (the tracker's)
    final_lr_fraction: float = 0.1  # cosine decay to lr * this
    warmup_steps: int = 200  # linear learning-rate warm-up
    weight_decay: float = 0.0  # AdamW weight decay
    grad_clip: float = 1.0  # global gradient-norm clip
    mu: float = 1.0  # invariance weight (the seed's mu = 1)
    invariance_delay: float = 0.2  # fraction of steps with the invariance term held at 0
    invariance_ramp: float = 0.1  # fraction of steps over which it then ramps linearly to mu
    nextlat_weight: float = 1.0  # NextLat weight
    nextlat_delay: float = 0.0  # fraction of steps with NextLat held at 0
    nextlat_ramp: float = 0.0  # fraction of steps of its linear ramp
    checkpoint_every: int = 500  # steps between checkpoints (one is also written at the end)

    def __post_init__(self) -> None:
        if self.objective not in OBJECTIVES:
            raise ValueError(f"unknown objective {self.objective!r}; choose one of {', '.join(OBJECTIVES)}")
        if self.arch not in ARCHS:
            raise ValueError(f"unknown arch {self.arch!r}; choose one of {', '.join(ARCHS)}")
        if self.objective == "combo" and self.arch not in STATEFUL:
            raise ValueError(f"the {self.arch} arm carries no state for NextLat and invariance to act on; "
                             "train it with --objective plain")
        if self.steps < 1 or self.batch_chains < 2 or self.width < 8 or self.probe_width < 1 \
                or self.checkpoint_every < 1:
            raise ValueError("steps, checkpoint_every, probe_width must be >= 1, batch_chains >= 2, width >= 8")

    @property
    def model(self) -> OracleModelConfig:
        return OracleModelConfig(arch=self.arch, width=self.width, probe_width=self.probe_width,
                                 fixed_norm=self.fixed_norm)

    @property
    def terms(self) -> set[str]:
        return {"nextlat", "invariance"} if self.objective == "combo" else set()


class OracleTrainer:
    """The arm, the NextLat head and the optimiser, and one step of the chosen objective."""

    def __init__(self, config: OracleConfig, data: OracleData) -> None:
        self.config, self.data = config, data
        refuse_unservable(config, data)
        torch.manual_seed(config.seed)
        self.model = Oracle(replace(config.model, embedding=data.embedding), data.item_tokens, data.probe_tokens,
                            data.vocab_size, len(data.verdicts))
        self.nextlat_head = NextLatHead(config.width) if "nextlat" in config.terms else None
        params = list(self.model.parameters())
        if self.nextlat_head is not None:
            params += list(self.nextlat_head.parameters())
        self.params = params
        self.optimizer = torch.optim.AdamW(params, lr=config.lr, weight_decay=config.weight_decay)
        self.step = 0
        self.train_seconds = 0.0

    def losses(self, batch: ProbeBatch, step: int) -> dict[str, torch.Tensor]:
        cfg = self.config
        histories = batch.histories
        logits, z = self.model(histories.items, batch.probes, batch.truth_items)  # (B, S, P, V), (H, T, C)
        real = batch.verdicts >= 0
        out = {"verdict": F.cross_entropy(logits[real], batch.verdicts[real])}
        if "invariance" in cfg.terms:
            b, k = histories.chains, histories.partners
            z_end = z[torch.arange(len(z)), histories.lengths - 1]  # (H, C)
            chain_end, partner_end = z_end[:b], z_end[b:].view(b, k, -1)
            w = cfg.mu * schedule(step, cfg.steps, cfg.invariance_delay, cfg.invariance_ramp)
            out["invariance"] = w * invariance(chain_end[:, None].expand_as(partner_end).reshape(-1, z.shape[-1]),
                                               partner_end.reshape(-1, z.shape[-1]))
        if "nextlat" in cfg.terms:
            w = cfg.nextlat_weight * schedule(step, cfg.steps, cfg.nextlat_delay, cfg.nextlat_ramp)
            events = self.model.tracker.embed.pooled(histories.items)  # (H, T, C)
            out["nextlat"] = w * nextlat(self.nextlat_head, z, events, histories.mask)
        return out

    def train_step(self, step: int) -> dict[str, float]:
        generator = torch.Generator().manual_seed(self.config.seed * 1_000_003 + step)
        batch = sample_probe_batch(self.data, self.config.batch_chains, bool(self.config.terms), generator)
        return descend(self.optimizer, self.params, self.losses(batch, step), lr_at(self.config, step),
                       self.config.grad_clip)

    def checkpoint(self) -> dict:
        return {"model": self.model.state_dict(),
                "nextlat_head": None if self.nextlat_head is None else self.nextlat_head.state_dict(),
                "optimizer": self.optimizer.state_dict(), "config": asdict(self.config), "step": self.step,
                "train_seconds": self.train_seconds, "identity": self.data.identity,
                "verdicts": list(self.data.verdicts), "kinds": list(self.data.kinds),
                **self.data.encoding,
                "package_version": package_version(), "torch_version": torch.__version__}

    def load(self, blob: dict) -> None:
        self.model.load_state_dict(blob["model"])
        if self.nextlat_head is not None:
            self.nextlat_head.load_state_dict(blob["nextlat_head"])
        self.optimizer.load_state_dict(blob["optimizer"])
        self.step, self.train_seconds = blob["step"], blob["train_seconds"]


def refuse_unservable(config: OracleConfig, data: OracleData) -> None:
    """ValueError, in one line saying why, for an arm or objective the dataset cannot serve."""
    mathlib = data.tracker is None
    if config.terms and data.train["partner_items"].shape[1] == 0:
        why = ("a Mathlib probe dataset has no certified partners (equivalent proofs)" if mathlib
               else "the dataset has none")
        raise ValueError(f"the {config.objective} objective needs certified partners for its invariance term: "
                         f"{why}; train with --objective plain")
    if config.arch == "truth" and mathlib:
        raise ValueError("the truth arm is handed the true proof state at every step, and a Mathlib probe record "
                         "holds only the initial one; choose --arch recurrence, transformer, blind or probe-slot")


def config_from_checkpoint(blob: dict) -> OracleConfig:
    known = {f.name for f in fields(OracleConfig)}
    return OracleConfig(**{k: v for k, v in blob["config"].items() if k in known})


def _check_resumable(blob: dict, config: OracleConfig, data: OracleData, path: Path) -> None:
    stored = config_from_checkpoint(blob)
    if stored != config:
        diff = [f"{f.name} {getattr(stored, f.name)!r} -> {getattr(config, f.name)!r}"
                for f in fields(OracleConfig) if getattr(stored, f.name) != getattr(config, f.name)]
        raise CheckpointError(f"{path}: trained with other settings ({'; '.join(diff)})")
    if blob["identity"]["dataset"]["dataset_id"] != data.identity["dataset"]["dataset_id"]:
        raise CheckpointError(f"{path}: trained on another dataset ({blob['identity']['dataset']['path']})")


def train(config: OracleConfig, out: Path, resume: bool = False, show_progress: bool = True,
          eval_config: OracleEvalConfig = OracleEvalConfig(), data: OracleData | None = None) -> dict:
    """Train (or continue) into ``out``; evaluate; return the report (also written there)."""
    out = Path(out)
    started = time.perf_counter()
    data = data if data is not None else load_probe_dataset(config.data)
    load_seconds = time.perf_counter() - started
    trainer = OracleTrainer(config, data)
    path = out / CHECKPOINT
    if resume:
        blob = load_checkpoint(path)
        _check_resumable(blob, config, data, path)
        trainer.load(blob)
    out.mkdir(parents=True, exist_ok=True)

    last_losses: dict[str, float] = {}
    bar = tqdm(total=config.steps, initial=trainer.step, disable=not show_progress, desc="train-oracle",
               unit="step", dynamic_ncols=True)
    with stop_requests() as stop:
        while trainer.step < config.steps:
            t0 = time.perf_counter()
            last_losses = trainer.train_step(trainer.step)
            trainer.train_seconds += time.perf_counter() - t0
            trainer.step += 1
            bar.update(1)
            if trainer.step % 20 == 0:
                bar.set_postfix({k: f"{v:.4f}" for k, v in last_losses.items()})
            if trainer.step % config.checkpoint_every == 0 or trainer.step == config.steps:
                save_atomic(trainer.checkpoint(), path)
            if stop["stop"]:
                save_atomic(trainer.checkpoint(), path)
                bar.close()
                raise TrainingInterrupted(trainer.step, path)
    bar.close()
    if not path.is_file():  # resumed a finished run
        save_atomic(trainer.checkpoint(), path)

    results = evaluate(trainer.model, data, eval_config, show_progress=show_progress)
    report = {
        "arch": config.arch, "objective": config.objective, "seed": config.seed, "steps": config.steps,
        **results,
        "seconds": round(trainer.train_seconds, 2),
        "steps_per_second": round(config.steps / trainer.train_seconds, 3) if trainer.train_seconds else None,
        "load_seconds": round(load_seconds, 2),
        "dataset": data.identity["dataset"], "lean": data.identity["lean"],
        "package_version": package_version(), "torch_version": torch.__version__,
        "torch_threads": torch.get_num_threads(),  # bits repeat at the same thread count
        "parameters": sum(p.numel() for p in trainer.model.parameters()),
        "compute_note": COMPUTE_NOTES[config.arch],
        "final_losses": last_losses,
        "config": asdict(config),
    }
    write_report(report, out)
    return report


def write_report(report: dict, out: Path) -> None:
    """report.json and the plots beside it, all together or none."""
    from oracle.plots import write_plots  # matplotlib only when a report is written

    with staged_files(out) as staging:
        (staging / "report.json").write_text(json.dumps(report, indent=2) + "\n")
        write_plots([report], staging)


# Per-event compute, in multiply-adds at C = 128, D = 64, V verdict classes, P probes per step.
COMPUTE_NOTES = {
    "recurrence": "slot recurrence, width 128, four ticks per event (~46C^2 per event); bilinear head C*V*D per "
                  "state + V*D per probe",
    "transformer": "causal transformer over events, depth 4, width 128: equal per-event compute (4 x 12C^2 vs the "
                   "recurrence's ~46C^2) plus attention over the history; the same bilinear head",
    "blind": "no state: the bilinear head on one learned vector; only the probe's encoding varies",
    "truth": "the recurrence's read of the true proof state (T_t, goal) from its initial slot at every step "
             "(~46C^2 per step, no carried state); the same bilinear head",
    "probe-slot": "slot recurrence as above; per probe one more full slot update (four ticks, ~40C^2) and a "
                  "linear head on LN of it: the seed's failed configuration (control)",
}

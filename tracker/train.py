"""Training a tracker on a certified dataset, with checkpoints that survive Ctrl-C and kills.

One step: sample B training chains with their K certified partners, run all B(1+K) histories
through the tracker in lockstep, and add the objective's terms to the cross-entropy on the
tree after every event. Batches come from a generator seeded by (seed, step), so a resumed run
sees exactly the batches the uninterrupted one would have.
"""
from __future__ import annotations

import json
import math
import signal
import time
from contextlib import contextmanager
from dataclasses import asdict, dataclass, fields, replace
from importlib import metadata
from pathlib import Path

import torch
import torch.nn.functional as F
from tqdm import tqdm

from chains.files import staged_files
from tracker.data import (Batch, TrackerData, UnreadableFile, common_successor, load_dataset, load_torch_file,
                          sample_batch, save_atomic)
from tracker.device import default_device, resolve_device, to_cpu
from tracker.evaluate import EvalConfig, evaluate, torch_threads
from tracker.layouts import LAYOUTS, PAD_ID, laid_out
from tracker.models import ARCHS, ModelConfig, Tracker, build_model
from tracker.objectives import OBJECTIVES, NextLatHead, invariance, metric, nextlat, output_tv, schedule
from tracker.stopping import Cooldown, StopConfig, StopRule, check_exact

CHECKPOINT = "checkpoint.pt"
IGNORED = -100  # a readout target the cross-entropy skips (F.cross_entropy's ignore_index)


@dataclass(frozen=True)
class TrainConfig:
    data: str = "data/tier1-a4"  # certified dataset directory
    objective: str = "combo"  # one of OBJECTIVES
    arch: str = "recurrence"  # one of ARCHS
    width: int = 128  # slot width C (the seed's 128)
    fixed_norm: bool = True  # recurrence: rescale the slot to a fixed norm after every event (section 52's closure)
    seed: int = 0  # model init and batch order
    steps: int = 12_000  # optimiser steps (the seed's 12,000)
    batch_chains: int = 28  # B chains per step with their K partners (B(1+K) histories); 12,000 steps fit 15 min on 2 CPU cores
    lr: float = 2e-3  # peak AdamW learning rate
    final_lr_fraction: float = 0.1  # cosine decay to lr * this (the floor of the pair distance scales with it)
    warmup_steps: int = 200  # linear learning-rate warm-up
    weight_decay: float = 0.0  # AdamW weight decay
    grad_clip: float = 1.0  # global gradient-norm clip
    mu: float = 1.0  # invariance (and control) weight: the seed's mu = 1
    invariance_delay: float = 0.2  # fraction of steps with the invariance term held at 0 (2,400 of 12,000)
    invariance_ramp: float = 0.1  # fraction of steps over which it then ramps linearly to mu
    nextlat_weight: float = 1.0  # NextLat weight
    nextlat_delay: float = 0.0  # fraction of steps with NextLat held at 0
    nextlat_ramp: float = 0.0  # fraction of steps of its linear ramp
    metric_weight: float = 1.0  # Nerode metric-loss weight
    metric_delay: float = 0.2  # fraction of steps with the metric loss held at 0
    metric_ramp: float = 0.1  # fraction of steps of its linear ramp
    gamma: float = 0.9  # metric loss discount (section 47)
    checkpoint_every: int = 500  # steps between checkpoints (one is also written at the end)
    ticks: int = 4  # recurrence: attention + MLP updates per event
    slot_init: float = 1.0  # recurrence: scale of the start slot's N(0, I) init
    embed_init_std: float = 0.02  # std of the token embeddings at init
    slot_noise: float = 0.0  # recurrence: std of N(0, I) noise added to the slot after every event in training
    slot_noise_delay: float = 0.0  # fraction of steps trained without the noise
    dropout: float = 0.0  # transformers: dropout rate of the blocks' residual branches in training
    layout: str = "polish"  # which tree position each readout slot names (tracker.layouts)
    ce_positions: str = "all"  # cross-entropy (and exactness) on every readout position, or "tree": its own only

    def __post_init__(self) -> None:
        if self.objective not in OBJECTIVES:
            raise ValueError(f"unknown objective {self.objective!r}; choose one of {', '.join(OBJECTIVES)}")
        if self.arch not in ARCHS:
            raise ValueError(f"unknown arch {self.arch!r}; choose one of {', '.join(ARCHS)}")
        if self.steps < 1 or self.batch_chains < 2 or self.width < 8 or self.checkpoint_every < 1 or self.ticks < 1:
            raise ValueError("steps, checkpoint_every, ticks must be >= 1, batch_chains >= 2, width >= 8")
        if self.slot_init <= 0 or self.embed_init_std <= 0:
            raise ValueError("slot_init and embed_init_std must be > 0")
        if self.slot_noise < 0 or (self.slot_noise > 0 and self.arch != "recurrence"):
            raise ValueError("slot_noise must be >= 0, and > 0 only for the recurrence (the slot it perturbs)")
        if not 0 <= self.dropout < 1 or (self.dropout > 0 and not self.arch.startswith("transformer")):
            raise ValueError("dropout must lie in [0, 1), and be > 0 only for a transformer")
        if not 0 < self.gamma < 1:
            raise ValueError("gamma must lie in (0, 1)")
        if self.ce_positions not in ("all", "tree"):
            raise ValueError(f"unknown ce_positions {self.ce_positions!r}; choose all or tree")
        if self.layout not in LAYOUTS:
            raise ValueError(f"unknown layout {self.layout!r}; choose one of {', '.join(LAYOUTS)}")

    @property
    def model(self) -> ModelConfig:
        return ModelConfig(arch=self.arch, width=self.width, fixed_norm=self.fixed_norm, ticks=self.ticks,
                           slot_init=self.slot_init, embed_init_std=self.embed_init_std)

    @property
    def terms(self) -> set[str]:
        return {"plain": set(), "invariance": {"invariance"}, "nextlat": {"nextlat"}, "metric": {"metric"},
                "combo": {"invariance", "nextlat"}, "nerode": {"invariance", "nextlat", "metric"},
                "control": {"control"}}[self.objective]


class TrainingInterrupted(Exception):
    """Ctrl-C or SIGTERM: the checkpoint at ``step`` was written and --resume continues from it."""

    def __init__(self, step: int, path: Path) -> None:
        super().__init__(f"interrupted at step {step}; checkpoint {path}; rerun with --resume to continue")
        self.step, self.path = step, path


class CheckpointError(ValueError):
    """A checkpoint that is missing or does not belong to this run."""


def package_version() -> str:
    try:
        return metadata.version("exact-state")
    except metadata.PackageNotFoundError:
        return "unknown"


def lr_at(config: TrainConfig, step: int) -> float:
    if step < config.warmup_steps:
        return config.lr * (step + 1) / config.warmup_steps
    progress = (step - config.warmup_steps) / max(1, config.steps - config.warmup_steps)
    floor = config.lr * config.final_lr_fraction
    return floor + (config.lr - floor) * 0.5 * (1 + math.cos(math.pi * min(1.0, progress)))


def descend(optimizer: torch.optim.Optimizer, params: list[torch.nn.Parameter], losses: dict[str, torch.Tensor],
            lr: float, grad_clip: float) -> dict[str, float]:
    """One optimiser step at ``lr`` on the sum of ``losses``, the global gradient norm clipped to
    ``grad_clip``; the losses as numbers."""
    for group in optimizer.param_groups:
        group["lr"] = lr
    total = sum(losses.values())
    optimizer.zero_grad(set_to_none=True)
    total.backward()
    torch.nn.utils.clip_grad_norm_(params, grad_clip)
    optimizer.step()
    return {name: value.item() for name, value in losses.items()}


@contextmanager
def stop_requests():
    """Turn SIGINT/SIGTERM into a flag checked between steps, so a stop never lands mid-update."""
    flag = {"stop": False}

    def handler(signum, frame):
        flag["stop"] = True

    previous = {}
    for sig in (signal.SIGINT, signal.SIGTERM):
        try:
            previous[sig] = signal.signal(sig, handler)
        except ValueError:  # not the main thread: signals stay as they are
            pass
    try:
        yield flag
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


class Trainer:
    """The model, its heads and optimiser, and one step of the chosen objective, on ``device``
    (the data, the model, every batch and loss, and the step's random generator live there)."""

    def __init__(self, config: TrainConfig, data: TrackerData, device: torch.device | str = "cpu") -> None:
        self.device = torch.device(device)
        targets = laid_out(data.tree_tokens, config.layout)  # (R, P) readout targets
        if config.ce_positions == "tree":  # positions off the tree: ignored by the loss and by exactness
            targets = torch.where(targets == PAD_ID, IGNORED, targets)
        data = replace(data, tree_tokens=targets)
        self.config, self.data = config, data.to(self.device)
        torch.manual_seed(config.seed)
        # built from the CPU's generator and then moved: the same initial weights on every device
        self.model: Tracker = build_model(config.model, data.item_tokens, data.vocab.size, data.vocab.n_out,
                                          data.tree_len).to(self.device)
        self.nextlat_head = NextLatHead(config.width).to(self.device) if "nextlat" in config.terms else None
        params = list(self.model.parameters())
        if self.nextlat_head is not None:
            params += list(self.nextlat_head.parameters())
        self.optimizer = torch.optim.AdamW(params, lr=config.lr, weight_decay=config.weight_decay)
        self.params = params
        self.step = 0
        self.train_seconds = 0.0
        if data.train["partner_items"].shape[1] == 0 and config.terms & {"invariance", "control", "metric"}:
            raise ValueError(f"the {config.objective} objective needs certified partners; the dataset has none")

    def losses(self, batch: Batch, step: int, generator: torch.Generator) -> dict[str, torch.Tensor]:
        cfg, data, model = self.config, self.data, self.model
        b, k = batch.chains, batch.partners
        if cfg.slot_noise > 0 and step >= cfg.slot_noise_delay * cfg.steps:
            # the slot perturbed after every event: the next events and the readout must undo it
            z, state = model(batch.items, noise=cfg.slot_noise, generator=generator)  # (H, T, C)
        elif cfg.dropout > 0:
            z, state = model(batch.items, dropout=cfg.dropout, generator=generator)
        else:
            z, state = model(batch.items)
        mask = batch.mask
        logits = model.readout(z)  # (H, T, P, V)
        target = data.tree_tokens[batch.trees.clamp(min=0)]  # (H, T, P)
        out = {"ce": F.cross_entropy(logits[mask].flatten(0, -2), target[mask].flatten())}
        last = batch.lengths - 1
        z_end = z[torch.arange(len(z), device=z.device), last]  # (H, C)
        chain_end = z_end[:b]  # (B, C)
        partner_end = z_end[b:].view(b, k, -1)  # (B, K, C)
        ends = batch.ends
        if "invariance" in cfg.terms:
            w = cfg.mu * schedule(step, cfg.steps, cfg.invariance_delay, cfg.invariance_ramp)
            out["invariance"] = w * invariance(chain_end[:, None].expand_as(partner_end).reshape(-1, z.shape[-1]),
                                               partner_end.reshape(-1, z.shape[-1]))
        if "control" in cfg.terms:
            # the same term at the same cost on inequivalent pairs: chain b against chain b+1's partners
            w = cfg.mu * schedule(step, cfg.steps, cfg.invariance_delay, cfg.invariance_ramp)
            other = torch.roll(partner_end, 1, dims=0).reshape(-1, z.shape[-1])
            other_ends = torch.roll(ends[b:].view(b, k), 1, dims=0).reshape(-1)
            differ = (ends[:b].repeat_interleave(k) != other_ends).float()
            out["control"] = w * invariance(chain_end.repeat_interleave(k, 0), other, differ)
        if "nextlat" in cfg.terms:
            w = cfg.nextlat_weight * schedule(step, cfg.steps, cfg.nextlat_delay, cfg.nextlat_ramp)
            events = model.embed.pooled(batch.items)  # (H, T, C)
            out["nextlat"] = w * nextlat(self.nextlat_head, z, events, mask)
        if "metric" in cfg.terms:
            w = cfg.metric_weight * schedule(step, cfg.steps, cfg.metric_delay, cfg.metric_ramp)
            c = z.shape[-1]
            # certified equivalent pairs: target 0
            eq = metric(chain_end[:, None].expand_as(partner_end).reshape(-1, c), partner_end.reshape(-1, c),
                        torch.zeros(b * k, device=z.device), None, None, None, cfg.gamma)
            # chain b against chain b+1: target from their outputs and one common next event
            u = torch.arange(b, device=z.device)
            v = torch.roll(u, 1)
            item, _, _, found = common_successor(data, ends[u], ends[v], generator)
            item = torch.where(found, item, data.tree_items[0])  # any real item; unused where not found
            zux, zvx = model.advance(state, u, item), model.advance(state, v, item)
            tv = output_tv(data.tree_tokens[ends[u]], data.tree_tokens[ends[v]])
            neq = metric(chain_end[u], chain_end[v], tv, zux, zvx, found, cfg.gamma)
            out["metric"] = w * (eq * b * k + neq * b) / (b * k + b)
        return out

    def train_step(self, step: int, lr: float | None = None) -> dict[str, float]:
        """One optimiser step at the schedule's learning rate, or at ``lr`` when given."""
        # the step's generator, on the device: the batch, the metric loss's next events and the
        # slot noise or dropout masks are drawn from it, so a resumed run repeats the straight one
        generator = torch.Generator(device=self.device).manual_seed(self.config.seed * 1_000_003 + step)
        batch = sample_batch(self.data, self.config.batch_chains, generator)
        with default_device(self.device):
            losses = self.losses(batch, step, generator)
        return descend(self.optimizer, self.params, losses, lr_at(self.config, step) if lr is None else lr,
                       self.config.grad_clip)

    def checkpoint(self) -> dict:
        """Weights, optimiser state, settings and dataset identity, every tensor on the CPU (a
        checkpoint made on a GPU loads on a machine without one); ``device`` says where it trained."""
        state = {"model": self.model.state_dict(),
                 "nextlat_head": None if self.nextlat_head is None else self.nextlat_head.state_dict(),
                 "optimizer": self.optimizer.state_dict()}
        if self.device.type != "cpu":
            state = to_cpu(state)
        return {**state, "config": asdict(self.config), "step": self.step,
                "train_seconds": self.train_seconds, "identity": self.data.identity,
                "package_version": package_version(), "torch_version": torch.__version__,
                "device": str(self.device)}

    def load(self, blob: dict) -> None:
        """Restore the state of ``blob`` (from ``load_checkpoint``, made on any device) onto this
        trainer's device; CheckpointError when its weights or optimiser state do not fit this run's model."""
        try:
            self.model.load_state_dict(blob["model"])
            if self.nextlat_head is not None:
                self.nextlat_head.load_state_dict(blob["nextlat_head"])
            self.optimizer.load_state_dict(blob["optimizer"])
            step, seconds = blob["step"], blob["train_seconds"]
        except (KeyError, TypeError, ValueError, RuntimeError) as e:
            raise CheckpointError(f"the checkpoint does not fit this run ({' '.join(str(e).split())[:200]})") from None
        if not isinstance(step, int) or not isinstance(seconds, (int, float)):
            raise CheckpointError("the checkpoint's step or time is not a number")
        self.step, self.train_seconds = step, seconds


def load_checkpoint(path: Path) -> dict:
    """The checkpoint at ``path``: weights, settings and dataset identity, its tensors on the CPU
    whatever device it was made on. Loaded without running any code it may hold (torch's
    weights-only unpickler); CheckpointError when it is missing or is not a checkpoint."""
    if not path.is_file():
        raise CheckpointError(f"{path}: no checkpoint to resume from")
    try:
        # checkpoints record torch.__version__, a str subclass the weights-only unpickler must be told of
        blob = load_torch_file(path, allowed=(torch.torch_version.TorchVersion,), map_location="cpu")
    except UnreadableFile as e:
        raise CheckpointError(f"{path}: not a readable checkpoint ({e})") from None
    identity = blob.get("identity") if isinstance(blob, dict) else None
    dataset = identity.get("dataset") if isinstance(identity, dict) else None
    if not (isinstance(dataset, dict) and isinstance(dataset.get("dataset_id"), str)
            and isinstance(blob.get("config"), dict) and isinstance(blob.get("model"), dict)):
        raise CheckpointError(f"{path}: not a train-tracker checkpoint (no settings, weights or dataset identity)")
    return blob


def config_from_checkpoint(blob: dict) -> TrainConfig:
    known = {f.name for f in fields(TrainConfig)}
    try:
        return TrainConfig(**{k: v for k, v in blob["config"].items() if k in known})
    except (TypeError, ValueError) as e:
        raise CheckpointError(f"the checkpoint's settings are not valid ({e})") from None


def train(config: TrainConfig, out: Path, resume: bool = False, show_progress: bool = True,
          eval_config: EvalConfig = EvalConfig(), data: TrackerData | None = None,
          stop: StopConfig = StopConfig(), device: torch.device | str = "cpu") -> dict:
    """Train (or continue) into ``out`` on ``device`` (a torch.device or a spec such as
    ``auto``; DeviceUnavailable before anything is read or written when it is not here),
    stopping early when ``stop`` says so; evaluate; return the report (also written there)."""
    out = Path(out)
    device = resolve_device(device)
    data = data if data is not None else load_dataset(config.data)
    trainer = Trainer(config, data, device)
    data = trainer.data  # on the device
    path = out / CHECKPOINT
    resumed_from = None
    if resume:
        blob = load_checkpoint(path)
        stored = config_from_checkpoint(blob)
        if stored != config:
            diff = [f"{f.name} {getattr(stored, f.name)!r} -> {getattr(config, f.name)!r}"
                    for f in fields(TrainConfig) if getattr(stored, f.name) != getattr(config, f.name)]
            raise CheckpointError(f"{path}: trained with other settings ({'; '.join(diff)})")
        if blob["identity"]["dataset"]["dataset_id"] != data.identity["dataset"]["dataset_id"]:
            raise CheckpointError(f"{path}: trained on another dataset ({blob['identity']['dataset']['path']})")
        trainer.load(blob)
        resumed_from = trainer.step
    out.mkdir(parents=True, exist_ok=True)

    rule = StopRule(stop, tuple(sorted(data.tests)))
    cooldown: Cooldown | None = None  # set once the checks say stop, if stop.cooldown
    check_seconds = 0.0  # time spent in checks; they read no batch and draw no random number
    last_losses: dict[str, float] = {}
    bar = tqdm(total=config.steps, initial=trainer.step, disable=not show_progress, desc="train", unit="step",
               dynamic_ncols=True)
    with stop_requests() as interrupt:
        while trainer.step < config.steps:
            t0 = time.perf_counter()
            last_losses = trainer.train_step(trainer.step, None if cooldown is None else cooldown.lr_at(trainer.step))
            trainer.train_seconds += time.perf_counter() - t0
            trainer.step += 1
            bar.update(1)
            if trainer.step % 20 == 0:
                bar.set_postfix({k: f"{v:.4f}" for k, v in last_losses.items()})
            done = cooldown is not None and cooldown.finished(trainer.step)
            if cooldown is None and stop.enabled and trainer.step % stop.every == 0:
                t0 = time.perf_counter()
                # at the evaluation's threads: its views are the same bits at any count, and a check
                # draws no random number, so training at one thread repeats bit for bit either way
                with torch_threads(eval_config.threads):
                    exact = check_exact(trainer.model, data, stop.chains, stop.threshold)
                check_seconds += time.perf_counter() - t0
                done = rule.record(trainer.step, trainer.train_seconds + check_seconds, exact)
                if show_progress:
                    bar.write(f"check at step {trainer.step}: exact {exact}")
                if done and stop.cooldown:
                    cooldown, done = Cooldown(trainer.step, lr_at(config, trainer.step), stop.cooldown), False
            if trainer.step % config.checkpoint_every == 0 or trainer.step == config.steps or done:
                save_atomic(trainer.checkpoint(), path)
            if interrupt["stop"]:
                save_atomic(trainer.checkpoint(), path)
                bar.close()
                raise TrainingInterrupted(trainer.step, path)
            if done:
                break
    bar.close()
    if not path.is_file():  # resumed a finished run
        save_atomic(trainer.checkpoint(), path)

    results = evaluate(trainer.model, data, eval_config)
    correct = results.pop("correct")  # per chain; only the stop report reads it
    from tracker.schedules import schedule_of  # schedules build on TrainConfig, defined here

    report = {
        "objective": config.objective, "arch": config.arch, "seed": config.seed, "steps": trainer.step,
        "schedule": schedule_of(config),
        **{k: results[k] for k in ("exact", "pair_distance", "pair_growth", "unrelated_distance", "in_distribution")},
        "seconds": round(trainer.train_seconds, 2),
        "steps_per_second": round(trainer.step / trainer.train_seconds, 3) if trainer.train_seconds else None,
        "dataset": data.identity["dataset"], "lean": data.identity["lean"],
        "package_version": package_version(), "torch_version": torch.__version__,
        "torch_threads": torch.get_num_threads(),  # bits repeat at the same thread count
        "device": str(device),  # and on the same device
        "resumed_from_step": resumed_from,  # the checkpoint's step this call continued from (None: from the start)
        "parameters": sum(p.numel() for p in trainer.model.parameters()),
        "compute_note": compute_note(config),
        "final_losses": last_losses,
        "evaluation": {k: v for k, v in results.items()
                       if k not in ("exact", "pair_distance", "pair_growth", "unrelated_distance",
                                    "in_distribution")},
        "config": asdict(config),
    }
    if stop.enabled:
        report["stop"] = stop_report(stop, rule, cooldown, check_seconds, trainer, data, correct)
    write_report(report, out)
    return report


def stop_report(stop: StopConfig, rule: StopRule, cooldown: Cooldown | None, check_seconds: float,
                trainer: Trainer, data: TrackerData, correct: dict[str, torch.Tensor]) -> dict:
    """What the checks saw: when the tracker became exact, where training stopped, every check,
    and exact at the longest length on the evaluated chains the checks never read."""
    became = rule.became_exact
    longest = str(max(data.tests))
    # (N,) per evaluated chain (the first N of the split); the checks read the split's last stop.chains
    correct = correct.get(longest, torch.zeros(0, dtype=torch.bool))
    unseen = max(0, min(len(data.tests[int(longest)]["end"]) - stop.chains, len(correct)))
    unseen_exact = correct[:unseen].float().mean().item() if unseen else None
    return {"config": asdict(stop), "stopped_early": rule.streak >= stop.patience,
            "exact_at_step": None if became is None else became["step"],
            "exact_at_seconds": None if became is None else became["seconds"],
            "cooldown_from_step": None if cooldown is None else cooldown.start,
            "stopped_at_step": trainer.step, "train_seconds": round(trainer.train_seconds, 2),
            "check_seconds": round(check_seconds, 2),
            "wall_seconds": round(trainer.train_seconds + check_seconds, 2),
            f"exact_{longest}_unseen_by_checks": unseen_exact, "unseen_chains": unseen,
            "checks": rule.checks}


def write_report(report: dict, out: Path) -> None:
    """report.json and the two plots beside it."""
    from tracker.plots import write_plots  # matplotlib only when a report is written

    with staged_files(out) as staging:  # all three appear together or none does
        (staging / "report.json").write_text(json.dumps(report, indent=2) + "\n")
        write_plots([report], staging)


def compute_note(config: TrainConfig) -> str:
    if config.arch == "recurrence" and (config.width, config.ticks) != (128, 4):
        return f"slot recurrence, width {config.width}, {config.ticks} ticks per event"
    return {"recurrence": "slot recurrence, width 128, four ticks per event",
            "transformer": "causal transformer over events, depth 4, width 128: equal per-event compute "
                           "(12C^2 per layer per event vs ~46C^2 for the recurrence's event)",
            "transformer2x": "causal transformer over events, depth 8, width 128: ~2x the recurrence's "
                             "per-event compute",
            "deltaproduct": "DeltaProduct, 2 blocks, 2 Householder factors per event, beta in (0, 2)"}[config.arch]

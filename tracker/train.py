"""Training a tracker on a certified dataset, with checkpoints that survive Ctrl-C and kills.

One step: sample B training chains with their K certified partners, run all B(1+K) histories
through the tracker in lockstep, and add the objective's terms to the cross-entropy on the
tree after every event. Batches come from a generator seeded by (seed, step), so a resumed run
sees exactly the batches the uninterrupted one would have. The optimiser's settings, the loop,
its checkpoints and its stop requests are the ones the oracle trains with (``training.loop``).
"""
from __future__ import annotations

import json
import sys
import time
from contextlib import nullcontext
from dataclasses import asdict, replace
from pathlib import Path

import torch

from chains.files import staged_files
from chains.version import package_version
from tracker.build import build_model
from tracker.config import TrainConfig
from tracker.data import Batch, TrackerData, load_dataset, sample_batch
from tracker.evaluate import EvalConfig, evaluate, requested_chains, torch_threads
from tracker.fresh import FreshStream, FreshStreamRefused, fresh_stream
from tracker.layouts import PAD_ID, laid_out
from tracker.losses import NextLatHead, tracker_losses
from tracker.models import Tracker, is_own_arch
from tracker.schedules import schedule_of
from tracker.stopping import (Cooldown, StopConfig, StopRule, check_exact, checked_lengths, checks_read,
                              split_for_checks)
from training.checkpoint import CHECKPOINT, settings_from_checkpoint, start_or_resume
from training.device import cpu_kernels, default_device, resolve_device
from training.loop import Optimised, Write, descend, extension, lr_at, train_loop
from training.runlog import LogConfig, RunLog

IGNORED = -100  # a readout target the cross-entropy skips (F.cross_entropy's ignore_index)


class Trainer(Optimised):
    """The model, its heads and optimiser, and one step of the chosen objective, on ``device``
    (the data, the model, every batch and loss, and the step's random generator live there)."""

    def __init__(self, config: TrainConfig, data: TrackerData, device: torch.device | str = "cpu") -> None:
        self.device = torch.device(device)
        data = replace(data, tree_tokens=readout_targets(data.tree_tokens, config))
        self.config, self.data = config, data.to(self.device)
        torch.manual_seed(config.seed)
        # built from the CPU's generator and then moved: the same initial weights on every device
        self.model: Tracker = build_model(config.model, data.item_tokens, data.vocab.size, data.vocab.n_out,
                                          data.tree_len, domain=data.vocab.domain).to(self.device)
        self.nextlat_head = (NextLatHead(self.model.view_width, config.width).to(self.device)
                             if "nextlat" in config.terms else None)
        self.optimise(config)
        # by test length, the last chains any stop check of this run has read, kept in its checkpoint
        # so that a resumed run reports on none of them whatever checks it is given
        self.held_apart: dict[str, int] = {}
        paired = {"invariance", "control", "metric", "distill"}  # the terms read certified partners
        if data.train["partner_items"].shape[1] == 0 and config.terms & paired:
            raise ValueError(f"the {config.objective} objective needs certified partners; the dataset has none")
        # with --stream fresh, every step's histories drawn afresh and certified (tracker.fresh)
        self.fresh: FreshStream | None = None
        if config.stream == "fresh":
            if not hasattr(self.model, "reading"):
                raise FreshStreamRefused(f"{config.arch} has no item table a fresh batch can be read through "
                                         "(tracker.models.Tracker.reading); train it with --stream dataset")
            self.fresh = fresh_stream(data.identity["dataset"]["path"], data, config.seed, config.batch_chains,
                                      config.uniform_share, config.uniform_length)

    def losses(self, batch: Batch, step: int, generator: torch.Generator,
               data: TrackerData | None = None) -> dict[str, torch.Tensor]:
        """The step's loss terms (``tracker.losses.tracker_losses``) on ``batch`` of ``data`` (the
        dataset's unless a fresh batch brings its own tables)."""
        return tracker_losses(self.config, self.model, self.nextlat_head, data or self.data, batch, step, generator)

    def batch(self, step: int, generator: torch.Generator) -> tuple[TrackerData, Batch]:
        """The step's batch and the tensors its ids name: B chains of the dataset's training split
        drawn with ``generator``, or the step's fresh certified histories with tables of their own."""
        if self.fresh is None:
            return self.data, sample_batch(self.data, self.config.batch_chains, generator)
        data, batch = self.fresh.batch(step)
        data = replace(data, tree_tokens=readout_targets(data.tree_tokens, self.config)).to(self.device)
        return data, replace(batch, items=batch.items.to(self.device), trees=batch.trees.to(self.device))

    def train_step(self, step: int, lr: float | None = None) -> dict[str, float]:
        """One optimiser step at the schedule's learning rate, or at ``lr`` when given."""
        # the step's generator, on the device: the batch, the metric loss's next events and the
        # slot noise or dropout masks are drawn from it, so a resumed run repeats the straight one
        generator = torch.Generator(device=self.device).manual_seed(self.config.seed * 1_000_003 + step)
        data, batch = self.batch(step, generator)
        with default_device(self.device), self.reading(data):
            losses = self.losses(batch, step, generator, data)
        return descend(self.optimizer, self.params, losses, lr_at(self.config, step) if lr is None else lr,
                       self.config.grad_clip)

    def reading(self, data: TrackerData):
        """The model reading ``data``'s items: a fresh batch's own table, or the dataset's as built."""
        return nullcontext() if data is self.data else self.model.reading(data.item_tokens)

    def checkpoint(self) -> dict:
        """Weights, optimiser state (on the CPU; ``device`` says where it trained), settings and
        dataset identity; with stop checks, the chains they have read (``held_apart``)."""
        held = {"checks_held_apart": self.held_apart} if any(self.held_apart.values()) else {}
        return {**self.training_state(), "config": asdict(self.config), "identity": self.data.identity, **held}

    def load(self, blob: dict) -> None:
        """The checkpoint's state (``training.loop.Optimised.load``) and the chains its checks read."""
        super().load(blob)
        held = blob.get("checks_held_apart")
        self.held_apart = {str(n): int(k) for n, k in held.items()} if isinstance(held, dict) else {}


def readout_targets(tree_tokens: torch.Tensor, config: TrainConfig) -> torch.Tensor:
    """(R, P) the readout's targets for each state's tokens (R, P): laid out as ``config`` reads
    them, the positions off a tree ignored where the cross-entropy reads the tree's own only."""
    targets = laid_out(tree_tokens, config.layout)
    if config.ce_positions == "tree":  # positions off the tree: ignored by the loss and by exactness
        targets = torch.where(targets == PAD_ID, IGNORED, targets)
    return targets


def config_from_checkpoint(blob: dict) -> TrainConfig:
    return settings_from_checkpoint(blob, TrainConfig)


def train(config: TrainConfig, out: Path, resume: bool = False, show_progress: bool = True,
          eval_config: EvalConfig = EvalConfig(), data: TrackerData | None = None,
          stop: StopConfig = StopConfig(), device: torch.device | str = "cpu", log: LogConfig = LogConfig(),
          corrupted_checker: bool = False, force: bool = False) -> dict:
    """Train (or continue) into ``out`` on ``device`` (a torch.device or a spec such as
    ``auto``; DeviceUnavailable before anything is read or written when it is not here),
    stopping early when ``stop`` says so, logging to ``out``/metrics.jsonl as ``log`` says;
    evaluate; return the report (also written there). ``resume`` with more ``config.steps`` than
    the checkpoint's settings extends the run (``training.loop.extension``). A dataset with wrong
    partners on purpose is refused unless ``corrupted_checker``; the report's ``dataset`` then
    carries its ``corrupt_partners``. A fresh run does not replace a run of other settings at
    ``out`` unless ``force`` (``training.checkpoint.refuse_replacing``)."""
    out = Path(out)
    device = resolve_device(device)
    if data is None:
        if show_progress:  # a first read replays the dataset into tensors (cached for the next run)
            sys.stderr.write(f"reading {config.data}\n")
        data = load_dataset(config.data, corrupted_checker=corrupted_checker)
    path = out / CHECKPOINT
    until = config.steps
    split_for_checks(data, stop)  # a split too small for checks is refused before the run in ``out`` is touched
    config, trainer, resumed_from = start_or_resume(Trainer, config, data, out, device, resume, force)
    # on the device; the checks read their own chains, the evaluation and every figure the rest
    data, checked, held = split_for_checks(trainer.data, stop, trainer.held_apart)
    checked = checked_lengths(checked, stop)
    trainer.held_apart = held
    out.mkdir(parents=True, exist_ok=True)
    eval_config = eval_config.resolved(data.tests)  # the report records how many chains a split it read
    requested_chains(eval_config.max_chains, data.tests)  # a warning, before training, when the dataset is small

    with RunLog(out, log, resumed_from) as run_log:
        checks = ExactChecks(stop, trainer, checked, config, eval_config, show_progress, run_log)
        last_losses = train_loop(trainer, config, path, show_progress, "train", lr=checks.lr, check=checks,
                                 until=until, log=run_log)
        results = evaluate(trainer.model, data, eval_config, show_progress)
        run_log.figures("evaluation", trainer.step, {k: results[k] for k in ("exact", "pair_distance", "chains")})
    correct = results.pop("correct")  # per chain; only the stop report reads it

    report = {
        "objective": config.objective, "arch": config.arch, "seed": config.seed, "steps": trainer.step,
        "schedule": schedule_of(config, data.vocab.domain),
        **{k: results[k] for k in ("exact", "pair_distance", "pair_growth", "unrelated_distance", "in_distribution",
                                   "beyond")},
        "seconds": round(trainer.train_seconds, 2),
        "steps_per_second": round(trainer.step / trainer.train_seconds, 3) if trainer.train_seconds else None,
        "dataset": data.identity["dataset"], "lean": data.identity["lean"],
        "package_version": package_version(), "torch_version": torch.__version__,
        "torch_threads": torch.get_num_threads(),  # bits repeat at the same thread count
        "device": str(device),  # and on the same device
        "cpu_kernels": cpu_kernels() if device.type == "cpu" else None,  # and, on the CPU, the same kernels
        "resumed_from_step": resumed_from,  # the checkpoint's step this call continued from (None: from the start)
        "parameters": sum(p.numel() for p in trainer.model.parameters()),
        "compute_note": compute_note(config),
        "final_losses": last_losses,
        "evaluation": {k: v for k, v in results.items()
                       if k not in ("exact", "pair_distance", "pair_growth", "unrelated_distance",
                                    "in_distribution", "beyond")},
        "eval_config": asdict(eval_config),  # what the figures were evaluated with, to evaluate them again
        "checks_read": checks_read(held),  # never a chain any figure above counts
        "config": asdict(config),
    }
    if any(held.values()):  # by length, the chains the checks read (what reproduce_check evaluates without)
        report["checks_held_apart"] = held
    extended = extension(config, trainer.step)
    if extended is not None:  # only then: a run not extended keeps its report's keys
        report["extension"] = extended
    if trainer.fresh is not None:  # only then, as the extension: the stream every step was drawn from
        report["fresh_stream"] = trainer.fresh.describe()
    if config.encoder:  # only then, as the extension: the frozen code model that read the items
        report["encoder"] = trainer.model.embed.describe()
    if stop.enabled:
        report["stop"] = stop_report(stop, checks.rule, checks.cooldown, checks.seconds, trainer, correct)
    if stop.enabled and stop.until == "fit":  # only then: whether the run fitted, on chains no check read
        report["fit"] = fit_report(stop, checks.rule, results["exact"])
    write_report(report, out)
    return report


class ExactChecks:
    """Stop when exact, as the loop's ``check``: every ``stop.every`` steps read a few held-out
    chains of every length (``data``'s test splits: the chains held apart for the checks); once
    the rule says stop, end there, or first train ``stop.cooldown`` more steps with the learning
    rate falling towards zero (``lr``)."""

    def __init__(self, stop: StopConfig, trainer: Trainer, data: TrackerData, config: TrainConfig,
                 eval_config: EvalConfig, show_progress: bool, log: RunLog | None = None) -> None:
        self.stop, self.trainer, self.data, self.config = stop, trainer, data, config
        self.eval_config, self.show_progress, self.log = eval_config, show_progress, log
        self.rule = StopRule(stop, tuple(sorted(data.tests)))
        self.cooldown: Cooldown | None = None  # set once the checks say stop, if stop.cooldown
        self.seconds = 0.0  # time spent in checks; they read no batch and draw no random number
        # fit first waits for every term of the objective at full weight: a run that fits before
        # its terms act would never be trained by them
        self.first_check = config.full_weight_step() if stop.until == "fit" else 0

    def lr(self, step: int) -> float | None:
        return None if self.cooldown is None else self.cooldown.lr_at(step)

    def __call__(self, step: int, write: Write) -> bool:
        stop, cooldown = self.stop, self.cooldown
        done = cooldown is not None and cooldown.finished(step)
        if cooldown is None and stop.enabled and step % stop.every == 0 and step >= self.first_check:
            t0 = time.perf_counter()
            # at the evaluation's threads: its views are the same bits at any count, and a check
            # draws no random number, so training at one thread repeats bit for bit either way
            with torch_threads(self.eval_config.threads):
                exact = check_exact(self.trainer.model, self.data, stop.chains, stop.threshold)
            self.seconds += time.perf_counter() - t0
            done = self.rule.record(step, self.trainer.train_seconds + self.seconds, exact)
            if self.log is not None:
                read = {n: len(self.data.tests[int(n)]["end"]) for n in exact}
                self.log.figures("check", step, {"exact": exact, "chains": read,
                                                 "seconds": round(self.trainer.train_seconds + self.seconds, 2)})
            if self.show_progress:
                write(f"check at step {step}: exact {exact}")
            if done and stop.cooldown:
                self.cooldown, done = Cooldown(step, lr_at(self.config, step), stop.cooldown), False
        return done


def stop_report(stop: StopConfig, rule: StopRule, cooldown: Cooldown | None, check_seconds: float,
                trainer: Trainer, correct: dict[str, torch.Tensor]) -> dict:
    """What the checks saw: when the tracker became exact, where training stopped, every check,
    and exact at the longest length, on the evaluated chains (none of which a check read)."""
    became = rule.became_exact
    longest = str(max(int(n) for n in rule.lengths))
    correct = correct.get(longest, torch.zeros(0, dtype=torch.bool))  # (N,) per evaluated chain
    return {"config": asdict(stop), "stopped_early": rule.streak >= stop.patience,
            "exact_at_step": None if became is None else became["step"],
            "exact_at_seconds": None if became is None else became["seconds"],
            "cooldown_from_step": None if cooldown is None else cooldown.start,
            "stopped_at_step": trainer.step, "train_seconds": round(trainer.train_seconds, 2),
            "check_seconds": round(check_seconds, 2),
            "wall_seconds": round(trainer.train_seconds + check_seconds, 2),
            f"exact_{longest}_unseen_by_checks": correct.float().mean().item() if len(correct) else None,
            "unseen_chains": len(correct),
            "checks": rule.checks}


def fit_report(stop: StopConfig, rule: StopRule, exact: dict[str, float | None]) -> dict:
    """Fit first: the training length, exact there on the evaluated chains (none of which a check
    read), whether that is a fit (>= the threshold), and the step the checks first found it so."""
    length = str(max(rule.lengths))
    became = rule.became_exact
    fitted = exact.get(length) is not None and exact[length] >= stop.threshold
    return {"length": int(length), "exact": exact.get(length), "fitted": fitted,
            "checks_fitted_at_step": None if became is None else became["step"],
            "verdict": "fitted" if fitted else "did not fit: not judged at length"}


def write_report(report: dict, out: Path) -> None:
    """report.json and the two plots beside it."""
    from tracker.plots import run_title, write_plots  # matplotlib only when a report is written

    with staged_files(out) as staging:  # all three appear together or none does
        (staging / "report.json").write_text(json.dumps(report, indent=2) + "\n")
        write_plots([report], staging, run_title(report, Path(out).resolve().name))


def compute_note(config: TrainConfig) -> str:
    if config.arch == "recurrence" and (config.width, config.ticks) != (128, 4):
        return f"slot recurrence, width {config.width}, {config.ticks} ticks per event"
    if is_own_arch(config.arch):
        return f"a model of one's own, {config.arch}, width {config.width}"
    return {"recurrence": "slot recurrence, width 128, four ticks per event",
            "transformer": "causal transformer over events, depth 4, width 128: equal per-event compute "
                           "(12C^2 per layer per event vs ~46C^2 for the recurrence's event)",
            "transformer2x": "causal transformer over events, depth 8, width 128: ~2x the recurrence's "
                             "per-event compute",
            "deltaproduct": "DeltaProduct, 2 blocks, 2 Householder factors per event, beta in (0, 2)",
            "registers": f"one register of width {config.width} per tree position, moved by per-rule tables over "
                         "relative heads, a shared update network, each register normalised after every event"}[config.arch]

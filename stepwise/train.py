"""Training the step-by-step model on the certified training chains, with checkpoints that survive
Ctrl-C and kills, then its free-running evaluation (``stepwise.evaluate``) and report.json.

One step: sample B training chains' sequences and take the cross-entropy of the next token at the
positions the model writes (the states and their EOS; ``stepwise.data.written_loss``), never at the
given start or events. In the state form (``context="state"``) the sequences are windows, the true
state before an event, the event and the state after it (``stepwise.windows``): B x n of them a step.
Batches come from a generator seeded by (seed, step), so a resumed run sees exactly the batches the
uninterrupted one would have. The optimiser's settings, the loop, its checkpoints and its stop
requests are the tracker's and the oracle's (``training.loop``).
"""
from __future__ import annotations

import json
import sys
import time
from dataclasses import asdict
from pathlib import Path

import torch

from chains.files import staged_files
from chains.manifest import read_manifest
from chains.rewrite.space import StateSpace, domain_of
from chains.version import package_version
from leanbridge.asker import AskConfig
from leanbridge.certificates import default_store, quiet
from leanbridge.confirm import StepCertifier, claim_certifier
from leanbridge.corelib import build_core
from leanbridge.discovery import find_lean
from stepwise.config import StepwiseConfig
from stepwise.data import StepwiseData, load_stepwise
from stepwise.distill import DistillSchedule, LongHistories
from stepwise.domain_data import StepwiseDomainData
from stepwise.domain_pairs import DomainPairs
from stepwise.evaluate import StepwiseEvalConfig, evaluate
from stepwise.model import SHIFT, StepwiseModel
from stepwise.rewrite_pairs import RewritePairs
from stepwise.sequences import sample_sequences, written_loss
from stepwise.windows import TrainingWindows
from tracker.domain_data import DomainBuilder
from tracker.stream import dataset_checker
from training.checkpoint import CHECKPOINT, settings_from_checkpoint, start_or_resume
from training.device import cpu_kernels, resolve_device
from training.loop import Optimised, descend, extension, lr_at, train_loop
from training.runlog import LogConfig, RunLog


class StepwiseTrainer(Optimised):
    """The model and its optimiser, and one step of next-token training on written positions, on ``device``."""

    def __init__(self, config: StepwiseConfig, data: StepwiseData, device: torch.device | str = "cpu") -> None:
        self.device = torch.device(device)
        self.config, self.data = config, data
        torch.manual_seed(config.seed)
        # built from the CPU's generator and then moved: the same initial weights on every device
        self.model = StepwiseModel(config.model(data.vocab.size)).to(self.device)
        self.nextlat_head = None  # the loop's slot for a second module: none here
        self.long: LongHistories | None = None  # the long histories' term, set by ``train`` for an objective with one
        self.saved_teacher: dict | None = None  # a resumed run's teacher, from its checkpoint
        self.rounds = DistillSchedule(config.steps, config.rounds, config.round_steps, data.training_length)
        # the state form's training windows, cut once; the history form reads the data's whole sequences
        self.windows = TrainingWindows(data) if config.context == "state" else None
        self.optimise(config)

    def train_step(self, step: int, lr: float | None = None) -> dict[str, float]:
        """One optimiser step at the schedule's learning rate, or at ``lr`` when given."""
        generator = torch.Generator().manual_seed(self.config.seed * 1_000_003 + step)
        batch = (sample_sequences(self.data, self.config.batch_chains, generator) if self.windows is None
                 else self.windows.sample(self.config.batch_chains, generator))
        ids, written = batch.ids.to(self.device), batch.written.to(self.device)  # (B, L)
        starts = None  # shifted positions: each sequence from a random position (drawn with the step's generator)
        if self.config.positions == "shifted":
            starts = torch.randint(0, SHIFT, (ids.shape[0],), generator=generator).to(self.device)
        losses = {"ce": written_loss(self.model(ids, starts), ids, written)}
        if self.long is not None:
            losses.update(self.long.losses(self.model, step))
        return descend(self.optimizer, self.params, losses, lr_at(self.config, step) if lr is None else lr,
                       self.config.grad_clip)

    def rate(self, step: int) -> float | None:
        """The learning rate of a step in the rounds, the schedule's capped at ``round_lr``; None
        before them (the schedule's)."""
        return min(lr_at(self.config, step), self.config.round_lr) if self.rounds.round(step) else None

    def checkpoint(self) -> dict:
        """Weights, optimiser state (on the CPU), settings, dataset identity, the vocabulary and the
        round's teacher (an objective with rounds, once they began)."""
        blob = {**self.training_state(), "config": asdict(self.config), "identity": self.data.identity,
                "stepwise_tokens": list(self.data.vocab.tokens)}
        teacher = None if self.long is None else self.long.saved()
        return blob if teacher is None else {**blob, "teacher": teacher}

    def load(self, blob: dict) -> None:
        """The checkpoint's state; its teacher is kept for ``train`` to hand to the long histories."""
        super().load(blob)
        self.saved_teacher = blob.get("teacher")


def config_from_checkpoint(blob: dict) -> StepwiseConfig:
    return settings_from_checkpoint(blob, StepwiseConfig)


def long_histories(config: StepwiseConfig, data: StepwiseData | StepwiseDomainData, store: Path | None,
                   rounds: DistillSchedule) -> LongHistories:
    """The objective's term on long histories over the dataset's domain in the trainer's ``rounds``,
    its steps certified through ``store``: rewrite steps by the checker that certified the dataset
    (``stepwise.rewrite_pairs``), another domain's by its own certifier (``stepwise.domain_pairs``)."""
    store = store or default_store()
    if isinstance(data, StepwiseData):
        manifest = read_manifest(Path(config.data))
        space = StateSpace(domain_of(manifest, config.data))
        lean = find_lean()
        steps = StepCertifier(space, lean, build_core(lean), AskConfig(checker=dataset_checker(manifest)), store, quiet)
        source = RewritePairs(space, rounds.base, steps)
    else:
        builder = DomainBuilder(data.domain)
        source = DomainPairs(data.domain, rounds.base, claim_certifier(data.domain, builder, store, quiet), builder)
    return LongHistories(config.objective, rounds, config.seed, config.long_chains, config.cuts, config.long_weight,
                         data.vocab, source, data.replay, data.max_state_tokens + 1, config.context)


def train(config: StepwiseConfig, out: Path, resume: bool = False, show_progress: bool = True,
          eval_config: StepwiseEvalConfig = StepwiseEvalConfig(), data: StepwiseData | None = None,
          device: torch.device | str = "cpu", log: LogConfig = LogConfig(), force: bool = False,
          store: Path | None = None) -> dict:
    """Train (or continue) into ``out`` on ``device``, logging to ``out``/metrics.jsonl as ``log``
    says; evaluate free-running; return the report (also written there, atomically). ``resume``
    with more ``config.steps`` than the checkpoint's settings extends the run
    (``training.loop.extension``). A fresh run does not replace a run of other settings at ``out``
    unless ``force`` (``training.checkpoint.refuse_replacing``). An objective with long histories
    certifies their steps through the certificate store at ``store`` (the default store when None).
    ValueError, before training, for evaluation lengths the dataset lacks."""
    out = Path(out)
    device = resolve_device(device)
    if data is None:
        if show_progress:
            sys.stderr.write(f"reading {config.data}\n")
        data = load_stepwise(config.data)
    unknown = sorted(set(eval_config.lengths or ()) - set(data.test_lengths))
    if unknown:
        raise ValueError(f"{config.data}: no test chains of {unknown[0]} events to evaluate (it has "
                         f"{', '.join(map(str, data.test_lengths))})")
    path, until = out / CHECKPOINT, config.steps
    config, trainer, resumed_from = start_or_resume(StepwiseTrainer, config, data, out, device, resume, force)
    if config.objective != "plain":
        trainer.long = long_histories(config, data, store, trainer.rounds)
        trainer.long.restore(trainer.saved_teacher, trainer.model)
    out.mkdir(parents=True, exist_ok=True)
    with RunLog(out, log, resumed_from) as run_log:
        last_losses = train_loop(trainer, config, path, show_progress, "train-stepwise", until=until, log=run_log,
                                 lr=trainer.rate)
        started = time.perf_counter()
        results = evaluate(trainer.model, data, eval_config, show_progress, trainer.device, config.context)
        eval_seconds = time.perf_counter() - started
        run_log.figures("evaluation", trainer.step, {n: r["exact"] for n, r in results.items()})
    report = {
        "seed": config.seed, "steps": trainer.step,
        "exact": {n: r["exact"] for n, r in results.items()},
        "evaluation": results,
        "eval_chains": eval_config.chains,
        "seconds": round(trainer.train_seconds, 2),
        "steps_per_second": round(trainer.step / trainer.train_seconds, 3) if trainer.train_seconds else None,
        "eval_seconds": round(eval_seconds, 2),
        "dataset": data.identity["dataset"], "lean": data.identity["lean"],
        "package_version": package_version(), "torch_version": torch.__version__,
        "torch_threads": torch.get_num_threads(),  # bits repeat at the same thread count
        "device": str(device),
        "cpu_kernels": cpu_kernels() if device.type == "cpu" else None,
        "resumed_from_step": resumed_from,
        "parameters": sum(p.numel() for p in trainer.model.parameters()),
        "final_losses": last_losses,
        "config": asdict(config),
    }
    extended = extension(config, trainer.step)
    if extended is not None:  # only then: a run not extended keeps its report's keys
        report["extension"] = extended
    with staged_files(out) as staging:  # report.json appears whole or not at all
        (staging / "report.json").write_text(json.dumps(report, indent=2) + "\n")
    return report

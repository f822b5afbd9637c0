"""The one training loop, shared by the tracker (``tracker.train``) and the oracle (``oracle.train``).

What a run is trained with, apart from what it is and what it learns, is
``training.config.OptimConfig``: the seed, the steps, the batch, AdamW with warm-up and cosine
decay, the gradient clip and the checkpoint interval.

The loop (``train_loop``) runs a ``Stepper``'s steps from where it stands to ``config.steps``:
a step's learning rate from ``lr_at`` (or a caller's override), one ``descend`` on the sum of the
step's losses, a checkpoint every ``checkpoint_every`` steps and at the end, written atomically
(read back and restored by ``training.checkpoint``);
Ctrl-C or SIGTERM between steps (``stop_requests``) writes a checkpoint and raises
``TrainingInterrupted``. A step draws its random numbers from a generator seeded by (seed, step),
so the loop itself draws none and a resumed run repeats the straight one bit for bit.
``Optimised`` is what both trainers hold for it: the model and its NextLat head on one device,
the AdamW over them, the step and the time, and their checkpoint state.
"""
from __future__ import annotations

import math
import signal
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Protocol

import torch

from chains.version import package_version
from leanbridge.cliutil import progress_bar
from training.checkpoint import CheckpointError
from training.config import OptimConfig
from training.device import to_cpu
from training.files import save_atomic
from training.runlog import RunLog


class TrainingInterrupted(Exception):
    """Ctrl-C or SIGTERM: the checkpoint at ``step`` was written and --resume continues from it."""

    def __init__(self, step: int, path: Path) -> None:
        super().__init__(f"interrupted at step {step}; checkpoint {path}; rerun with --resume to continue")
        self.step, self.path = step, path


def lr_at(config: OptimConfig, step: int) -> float:
    """The learning rate of ``step``: linear warm-up to ``lr``, then cosine decay to
    ``lr * final_lr_fraction`` at the last step; past the last step (an extended run) that final
    rate, even when the schedule ended inside its warm-up."""
    if step >= config.steps:
        return config.lr * config.final_lr_fraction
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
def stop_requests() -> Iterator[dict[str, bool]]:
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


def extension(config: OptimConfig, steps: int) -> dict | None:
    """What a report records of a run trained to ``steps`` with settings ``config`` (None when
    ``steps`` is not past ``config.steps``): an extended run keeps its schedule and continues it.
    Its first ``config.steps`` steps are the original run's, bit for bit; every step after them
    trains at the schedule's final learning rate (``lr * final_lr_fraction``, where the cosine
    ended) and every loss term at the weight it had at the original run's end."""
    if steps <= config.steps:
        return None
    return {"extended_from": config.steps, "steps": steps,
            "schedule": f"continued: steps {config.steps + 1}-{steps} at the final learning rate "
                        f"{lr_at(config, config.steps):.3g}, every term at its weight at step {config.steps}"}


class Optimised:
    """What a trainer holds for the loop: ``model`` and ``nextlat_head`` (or None) on ``device``,
    AdamW over their parameters, the ``step`` reached and the ``train_seconds`` it took. A
    trainer builds its modules (from the CPU's generator, then moved), calls ``optimise``, and
    defines ``train_step``."""

    model: torch.nn.Module
    nextlat_head: torch.nn.Module | None
    device: torch.device

    def optimise(self, config: OptimConfig) -> None:
        """AdamW over the model's parameters, then the NextLat head's (the order fixes the bits)."""
        params = list(self.model.parameters())
        if self.nextlat_head is not None:
            params += list(self.nextlat_head.parameters())
        self.params = params
        self.optimizer = torch.optim.AdamW(params, lr=config.lr, weight_decay=config.weight_decay)
        self.step = 0
        self.train_seconds = 0.0

    def training_state(self) -> dict:
        """Weights and optimiser state, every tensor on the CPU (a checkpoint made on a GPU loads
        on a machine without one), with the step, the time and where it trained."""
        state = {"model": self.model.state_dict(),
                 "nextlat_head": None if self.nextlat_head is None else self.nextlat_head.state_dict(),
                 "optimizer": self.optimizer.state_dict()}
        if self.device.type != "cpu":
            state = to_cpu(state)
        return {**state, "step": self.step, "train_seconds": self.train_seconds,
                "package_version": package_version(), "torch_version": torch.__version__,
                "device": str(self.device)}

    def load(self, blob: dict) -> None:
        """Restore the state of ``blob`` (from ``training.checkpoint``, made on any device) onto this
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


class Stepper(Protocol):
    """What ``train_loop`` drives: a trainer with a step counter, its time, and its checkpoint."""

    step: int
    train_seconds: float

    def train_step(self, step: int, lr: float | None = None) -> dict[str, float]: ...

    def checkpoint(self) -> dict: ...


Write = Callable[[str], None]  # a line for the person watching (above the progress bar)


def train_loop(trainer: Stepper, config: OptimConfig, path: Path, show_progress: bool = True, desc: str = "train",
               lr: Callable[[int], float | None] | None = None, check: Callable[[int, Write], bool] | None = None,
               until: int | None = None, log: RunLog | None = None) -> dict[str, float]:
    """Train from ``trainer.step`` to ``until`` (default ``config.steps``; more extends the run,
    see ``extension``), checkpointing to ``path``; the last step's losses (empty when no step was
    left). ``lr(step)``: a learning rate that replaces the schedule's at that step (None keeps
    it). ``check(step, write)``, after every step: True ends training there (a checkpoint is
    written first); it may ``write`` a line. ``log``: the run's metrics.jsonl, written as it goes."""
    end = config.steps if until is None else until
    last_losses: dict[str, float] = {}
    bar = progress_bar(end, desc, initial=trainer.step, unit="step", show=show_progress, leave=True)
    with stop_requests() as interrupt:
        while trainer.step < end:
            t0 = time.perf_counter()
            override = None if lr is None else lr(trainer.step)
            last_losses = trainer.train_step(trainer.step, override)
            trainer.train_seconds += time.perf_counter() - t0
            trainer.step += 1
            bar.update(1)
            if trainer.step % 20 == 0:
                bar.set_postfix({k: f"{v:.4f}" for k, v in last_losses.items()})
            if log is not None and log.wants(trainer.step, end):
                log.step(trainer.step, lr_at(config, trainer.step - 1) if override is None else override, last_losses,
                         trainer.train_seconds)
            done = check is not None and check(trainer.step, bar.write)
            if trainer.step % config.checkpoint_every == 0 or trainer.step == end or done:
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
    return last_losses

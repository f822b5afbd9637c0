"""The training log of a run: ``metrics.jsonl`` beside its checkpoint, TensorBoard event files on request.

One JSON object a line, written as training goes (appended and flushed, so a run killed at any
moment leaves every line it logged whole, bar perhaps a torn last one):

- ``{"kind": "step", "step": N, "lr": ..., "losses": {term: value}, "seconds": ...}`` every
  ``every`` steps and at the last step: ``step`` counts the optimiser steps done, ``lr`` is the
  learning rate the N-th step took, ``losses`` its loss terms (weighted as they entered the sum),
  ``seconds`` the training time so far;
- ``{"kind": "check", "step": N, ...}`` per held-out check of a tracker (``--check-every``), with
  its figures;
- ``{"kind": "evaluation", "step": N, ...}`` once, the final evaluation's headline figures.

A resumed run continues the same file: the lines past the checkpoint it resumes from (logged by
the run that was stopped before its next checkpoint, and about to be trained again) are dropped
first, so every step appears once. TensorBoard's files (``tensorboard/`` in the run directory,
scalars ``losses/<term>``, ``charts/lr``, ``checks/exact_<L>``, ``evaluation/exact_<L>``) need the
optional ``tensorboard`` package (``pip install 'exact-state[tensorboard]'``).
"""
from __future__ import annotations

import importlib.util
import json
import shutil
from dataclasses import dataclass
from pathlib import Path

from chains.files import write_bytes_atomic
from training.checkpoint import CHECKPOINT

METRICS = "metrics.jsonl"
TENSORBOARD = "tensorboard"
TENSORBOARD_MISSING = "--tensorboard needs the tensorboard package: pip install 'exact-state[tensorboard]'"


class TensorBoardMissing(ValueError):
    """--tensorboard without the tensorboard package; the message says how to install it."""


@dataclass(frozen=True)
class LogConfig:
    every: int = 10  # optimiser steps between logged lines (the last step is always logged)
    tensorboard: bool = False  # also write TensorBoard event files into <run>/tensorboard

    def __post_init__(self) -> None:
        if self.every < 1:
            raise ValueError("the log interval must be >= 1 step")
        if self.tensorboard and importlib.util.find_spec("tensorboard") is None:  # said before any work starts
            raise TensorBoardMissing(TENSORBOARD_MISSING)


def _lines_up_to(path: Path, step: int) -> bytes:
    """The whole lines of ``path`` (a metrics.jsonl) whose step is at most ``step``."""
    kept = []
    for line in path.read_bytes().splitlines():
        try:
            record = json.loads(line)
        except ValueError:  # a torn last line from a killed run
            continue
        if isinstance(record, dict) and isinstance(record.get("step"), int) and record["step"] <= step:
            kept.append(line + b"\n")
    return b"".join(kept)


class RunLog:
    """The open log of one run in ``out``; ``resumed_from``: the checkpoint's step when the run
    continues, None when it starts (a log left by an earlier run of that directory is replaced)."""

    def __init__(self, out: Path, config: LogConfig = LogConfig(), resumed_from: int | None = None) -> None:
        self.config, self.out, self.fresh = config, Path(out), resumed_from is None
        self.path = Path(out) / METRICS
        self.board = None
        if config.tensorboard:
            try:
                from torch.utils.tensorboard import SummaryWriter
            except ImportError:
                raise TensorBoardMissing(TENSORBOARD_MISSING) from None
            # purge_step: events a stopped run logged past its checkpoint are hidden, as in metrics.jsonl
            self.board = SummaryWriter(str(Path(out) / TENSORBOARD), purge_step=resumed_from or None)
        kept = _lines_up_to(self.path, resumed_from) if resumed_from is not None and self.path.is_file() else b""
        write_bytes_atomic(self.path, kept)
        self.handle = open(self.path, "a")

    def _write(self, record: dict) -> None:
        self.handle.write(json.dumps(record) + "\n")
        self.handle.flush()

    def wants(self, step: int, last: int) -> bool:
        """Whether the step after which ``step`` steps are done is logged (``last``: the run's final step)."""
        return step % self.config.every == 0 or step == last

    def step(self, step: int, lr: float, losses: dict[str, float], seconds: float) -> None:
        self._write({"kind": "step", "step": step, "lr": lr, "losses": losses, "seconds": round(seconds, 3)})
        if self.board is not None:
            for name, value in losses.items():
                self.board.add_scalar(f"losses/{name}", value, step)
            self.board.add_scalar("charts/lr", lr, step)

    def figures(self, kind: str, step: int, figures: dict) -> None:
        """A check's or the evaluation's figures (``kind``: check or evaluation); each
        ``exact`` by length also goes to TensorBoard."""
        self._write({"kind": kind, "step": step, **figures})
        if self.board is not None:
            for length, value in (figures.get("exact") or {}).items():
                if value is not None:
                    self.board.add_scalar(f"{kind}s/exact_{length}" if kind == "check" else f"{kind}/exact_{length}",
                                          value, step)

    def close(self) -> None:
        self.handle.close()
        if self.board is not None:
            self.board.close()

    def __enter__(self) -> RunLog:
        return self

    def __exit__(self, kind, *exc) -> None:
        self.close()
        # a fresh run that fails before its first checkpoint leaves no log of itself (nothing half-written)
        if kind is not None and self.fresh and not (self.out / CHECKPOINT).exists():
            self.path.unlink(missing_ok=True)
            shutil.rmtree(self.out / TENSORBOARD, ignore_errors=True)

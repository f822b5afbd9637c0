"""What every training command (``train-tracker``, ``train-oracle``, ``train-stepwise``) does around
its training, in one place: the device checked before anything is read or written, the settings
checked into a config, and the run itself with bad input and Ctrl-C reported in one line and an
output directory it created left only when something was written there.

    where = command_device(device)
    config = command_config(lambda: TrainConfig(**settings))
    with training_run(out, threads):
        report = train(config, out, resume=resuming(out, resume), ...)
"""
from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TypeVar

import click
import torch

from chains.files import output_directory
from leanbridge.cliutil import user_errors
from training.checkpoint import CHECKPOINT, CheckpointError
from training.device import DeviceUnavailable, resolve_device
from training.loop import TrainingInterrupted

C = TypeVar("C")


def command_device(device: str) -> torch.device:
    """The torch device ``--device`` names; a one-line error when it is not on this machine (checked
    first, so a device that is not here leaves nothing behind)."""
    try:
        return resolve_device(device)
    except DeviceUnavailable as e:
        raise click.ClickException(str(e)) from None


def command_config(make: Callable[[], C]) -> C:
    """The config ``make`` builds from the options; a usage error (one line) for settings it refuses."""
    try:
        return make()
    except ValueError as e:
        raise click.UsageError(str(e)) from None


def resuming(out: Path, resume: bool) -> bool:
    """Whether the run continues from a checkpoint: ``--resume`` with one in ``out``. With none there
    (the run never started, or was cut short before its first checkpoint) ``--resume`` starts it, saying
    so on stderr, so that one command line both starts a run and continues it after an interruption."""
    if resume and not (Path(out) / CHECKPOINT).is_file():
        click.echo(f"no checkpoint in {out}: starting the run", err=True)
        return False
    return resume


@contextmanager
def training_run(out: Path, threads: int | None) -> Iterator[None]:
    """The training itself: torch at ``threads`` when given; a checkpoint that does not fit, an
    objective the dataset cannot serve (ValueError) or Ctrl-C reported in one line (Ctrl-C while
    training leaves the last checkpoint, which ``--resume`` continues); ``out`` removed again when
    the run fails having created it and written nothing."""
    if threads is not None:
        torch.set_num_threads(threads)
    with user_errors(CheckpointError, TrainingInterrupted, ValueError,
                     interrupted=f"interrupted; any checkpoint in {out} is intact (--resume continues)"), \
            output_directory(out):
        yield

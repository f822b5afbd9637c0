"""Carry the unfinished runs of a registered batch from one checkout to the next.

``runs/`` is not tracked, so a fresh checkout loses a run stopped mid-way and would train it again
from step 0. ``save`` copies the checkpoint of every unfinished run (a ``checkpoint.pt`` without a
``report.json`` beside it) into the tracked ``in-flight/`` and drops the copies of runs that have
since finished; ``restore`` puts them back where the batch resumes them (its own settings and
dataset checks still decide whether a checkpoint is resumed).

    python -m benchmarks.in_flight save       # before committing at the end of a sitting
    python -m benchmarks.in_flight restore    # in a fresh checkout, before resuming the batch
"""
from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path

import click

from chains.files import user_mode
from training.checkpoint import CHECKPOINT


def unfinished(runs: Path) -> list[Path]:
    """The checkpoints under ``runs`` whose run has not written its report, relative to ``runs``."""
    return sorted(p.relative_to(runs) for p in runs.rglob(CHECKPOINT) if not (p.parent / "report.json").is_file())


def copy_atomically(source: Path, target: Path) -> None:
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.tmp-")
    os.fchmod(fd, user_mode())  # mkstemp's 0600 would outlive the rename
    os.close(fd)
    shutil.copyfile(source, tmp)
    os.replace(tmp, target)


def save(runs: Path, carry: Path) -> tuple[list[Path], list[Path]]:
    """Copy the unfinished runs' checkpoints from ``runs`` into ``carry``; drop the carried copies
    of runs finished since. Returns (saved, dropped), relative paths."""
    saved = unfinished(runs)
    for rel in saved:
        copy_atomically(runs / rel, carry / rel)
    dropped = [rel for rel in (p.relative_to(carry) for p in carry.rglob(CHECKPOINT))
               if (runs / rel.parent / "report.json").is_file()]
    for rel in dropped:
        (carry / rel).unlink()
    return saved, dropped


def restore(carry: Path, runs: Path) -> tuple[list[Path], list[Path]]:
    """Copy the carried checkpoints into ``runs``, except where the run already has a checkpoint
    or a report of its own (the local one is as new or newer). Returns (restored, kept)."""
    restored, kept = [], []
    for rel in sorted(p.relative_to(carry) for p in carry.rglob(CHECKPOINT)):
        if (runs / rel).exists() or (runs / rel.parent / "report.json").exists():
            kept.append(rel)
        else:
            copy_atomically(carry / rel, runs / rel)
            restored.append(rel)
    return restored, kept


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
def main() -> None:
    """Carry unfinished batch runs across checkouts through the tracked in-flight/ directory."""


@main.command("save")
@click.option("--runs", type=click.Path(path_type=Path), default=Path("runs"), show_default=True)
@click.option("--carry", type=click.Path(path_type=Path), default=Path("in-flight"), show_default=True)
def save_command(runs: Path, carry: Path) -> None:
    """Copy the unfinished runs' checkpoints into the carry directory."""
    saved, dropped = save(runs, carry)
    for rel in saved:
        click.echo(f"saved {rel}")
    for rel in dropped:
        click.echo(f"dropped {rel} (finished)")


@main.command("restore")
@click.option("--carry", type=click.Path(path_type=Path), default=Path("in-flight"), show_default=True)
@click.option("--runs", type=click.Path(path_type=Path), default=Path("runs"), show_default=True)
def restore_command(carry: Path, runs: Path) -> None:
    """Put the carried checkpoints back under the runs directory."""
    restored, kept = restore(carry, runs)
    for rel in restored:
        click.echo(f"restored {rel}")
    for rel in kept:
        click.echo(f"kept the local {rel}")


if __name__ == "__main__":
    main()

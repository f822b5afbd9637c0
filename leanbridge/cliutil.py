"""Pieces the click commands share: a progress bar per phase and a comma-separated list option."""
from __future__ import annotations

import sys

import click
from tqdm import tqdm


class PhaseBars:
    """A progress callback ``(phase, done, total)``: one bar per phase, on stderr."""

    def __init__(self) -> None:
        self.bar: tqdm | None = None
        self.phase = ""

    def __call__(self, phase: str, done: int, total: int) -> None:
        if phase != self.phase:
            self.close()
            self.phase = phase
            self.bar = tqdm(total=total, desc=phase, leave=False, file=sys.stderr, disable=None, dynamic_ncols=True)
        if self.bar is not None:
            self.bar.n = done
            self.bar.refresh()

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()
            self.bar = None


def positive_ints(ctx, param, value: str | None) -> tuple[int, ...] | None:
    """click callback: ``"8,64,256"`` -> ``(8, 64, 256)``; None stays None."""
    if value is None:
        return None
    try:
        out = tuple(int(x) for x in value.split(",") if x.strip())
    except ValueError:
        raise click.BadParameter(f"{value!r} is not a comma-separated list of integers") from None
    if not out or min(out) < 1:
        raise click.BadParameter(f"{param.name.replace('_', ' ')} must be positive integers")
    return out

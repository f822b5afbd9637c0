"""Pieces the click commands share: bad input and faults as one line, a progress bar per phase
and a comma-separated list option."""
from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import contextmanager

import click
from tqdm import tqdm

from chains.files import OutputError
from chains.manifest import DatasetError
from leanbridge.errors import LeanBridgeError

# What the libraries raise for bad input, a failing Lean or an output that cannot be written,
# and what the operating system raises on a file it cannot read or write (disk full, a
# directory where a file should be): each is one line a user can act on, never a traceback.
USER_ERRORS: tuple[type[Exception], ...] = (DatasetError, OutputError, LeanBridgeError, OSError)


def one_line(e: BaseException) -> str:
    """The message of ``e`` on one line, control characters escaped (it may quote what a
    faulty program printed); an OSError as "<file>: <reason>"."""
    if isinstance(e, OSError) and e.strerror:
        files = " -> ".join(str(f) for f in (e.filename, e.filename2) if f is not None)
        text = f"{files}: {e.strerror}" if files else e.strerror
    else:
        text = str(e)
    text = " ".join(text.split())
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text) or type(e).__name__


def _nothing() -> None:
    pass


@contextmanager
def user_errors(*kinds: type[Exception], interrupted: str,
                cleanup: Callable[[], None] = _nothing) -> Iterator[None]:
    """Turn ``USER_ERRORS`` and ``kinds`` raised in the block into a one-line ``click``
    error (exit status 1), and Ctrl-C into ``interrupted``; ``cleanup`` (closing progress bars)
    runs first. Anything else is a bug and keeps its traceback."""
    try:
        yield
    except (*USER_ERRORS, *kinds) as e:
        cleanup()
        raise click.ClickException(one_line(e)) from None
    except KeyboardInterrupt:
        cleanup()
        raise click.ClickException(interrupted) from None


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

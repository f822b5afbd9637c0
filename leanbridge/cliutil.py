"""Pieces the click commands share: bad input and faults as one line (``OneLineCommand``, the class
of every console command, and ``user_errors``), progress (a bar on a terminal, plain lines in a
log) and a comma-separated list option."""
from __future__ import annotations

import sys
import time
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


def one_line_usage(e: click.UsageError) -> click.ClickException:
    """A usage error as one line, "Error: <reason>", with its exit status (2), without the usage
    text and the "Try --help" hint click prints above it."""
    flat = click.ClickException(one_line(click.ClickException(e.format_message())))
    flat.exit_code = e.exit_code
    return flat


class OneLineCommand(click.Command):
    """A click command whose bad options are one line on stderr, as every other fault of the
    commands is: ``Error: <reason>``, exit status 2. Give it as ``@click.command(cls=OneLineCommand)``."""

    def make_context(self, info_name, args, parent=None, **extra) -> click.Context:
        try:  # the options are read here: unknown ones, bad values, missing arguments
            return super().make_context(info_name, args, parent, **extra)
        except click.UsageError as e:
            raise one_line_usage(e) from None

    def invoke(self, ctx: click.Context):
        try:  # the command's own refusals of a combination of options
            return super().invoke(ctx)
        except click.UsageError as e:
            raise one_line_usage(e) from None


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


LOG_EVERY_S = 30.0  # seconds between the progress lines written where stderr is not a terminal


class LogLines:
    """Progress for a log file: where stderr is not a terminal, a plain line every ``LOG_EVERY_S``
    seconds ("train: 1,500/12,000 step (12%), loss 0.1234") and a last one when closed, never a
    carriage return. A run shorter than ``LOG_EVERY_S`` writes nothing. The calls are tqdm's that
    the commands use (``update``, ``n``, ``refresh``, ``set_postfix``, ``write``, ``close``)."""

    def __init__(self, total: int, desc: str, initial: int = 0, unit: str = "", file=None) -> None:
        self.total, self.desc, self.n, self.unit = total, desc, initial, unit
        self.file = file if file is not None else sys.stderr
        self.postfix = ""
        self.started = self.last = time.monotonic()
        self.shown = initial

    def update(self, n: int = 1) -> None:
        self.n += n
        self.refresh()

    def refresh(self) -> None:
        if time.monotonic() - self.last >= LOG_EVERY_S:
            self._line()

    def set_postfix(self, values: dict) -> None:
        self.postfix = ", ".join(f"{k} {v}" for k, v in values.items())

    def write(self, line: str) -> None:
        print(line, file=self.file, flush=True)

    def close(self) -> None:
        if self.last > self.started and self.n != self.shown:  # a long run's last figure
            self._line()

    def _line(self) -> None:
        self.last, self.shown = time.monotonic(), self.n
        share = f" ({100 * self.n / self.total:.0f}%)" if self.total else ""
        unit = f" {self.unit}" if self.unit else ""
        extra = f", {self.postfix}" if self.postfix else ""
        self.write(f"{self.desc}: {self.n:,}/{self.total:,}{unit}{share}{extra}")


def progress_bar(total: int, desc: str, initial: int = 0, unit: str = "", show: bool = True, leave: bool = False):
    """A progress display on stderr: tqdm's bar on a terminal (kept when done with ``leave``),
    ``LogLines`` elsewhere (a log, a pipe), a disabled bar when ``show`` is false."""
    if show and not sys.stderr.isatty():
        return LogLines(total, desc, initial, unit)
    return tqdm(total=total, initial=initial, desc=desc, unit=unit or "it", leave=leave, file=sys.stderr,
                disable=not show, dynamic_ncols=True)


def progress_over(items: list, desc: str, unit: str = "", show: bool = True) -> Iterator:
    """``items`` one by one, with ``progress_bar`` counting them."""
    bar = progress_bar(len(items), desc, unit=unit, show=show)
    try:
        for item in items:
            yield item
            bar.update(1)
    finally:
        bar.close()


class PhaseBars:
    """A progress callback ``(phase, done, total)``: one bar per phase on stderr (plain lines every
    ``LOG_EVERY_S`` seconds where stderr is not a terminal)."""

    def __init__(self) -> None:
        self.bar: tqdm | LogLines | None = None
        self.phase = ""

    def __call__(self, phase: str, done: int, total: int) -> None:
        if phase != self.phase:
            self.close()
            self.phase = phase
            self.bar = progress_bar(total, phase)
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

"""Run one Lean file as an owned process and parse its ``--json`` messages.

The process lives in its own session and is killed with its whole group on every exit path
(normal return, time-out, exception, Ctrl-C): ``leanbridge.process.lean_process``. A crash or
time-out is an exception here; the asker decides what it means for the questions in the file.
"""
from __future__ import annotations

import json
import os
import subprocess
import tempfile
import time
from collections.abc import Callable
from typing import TypeVar
from dataclasses import dataclass
from pathlib import Path

from leanbridge.discovery import LeanInstall
from leanbridge.errors import LeanBridgeError
from leanbridge.process import LeanLimits, lean_process


MAX_ERRORS = 1_000_000


class LeanRunError(LeanBridgeError):
    """Lean crashed, ran out of memory or printed something that is not its JSON."""


class LeanTimeout(LeanRunError):
    """Lean ran past its time limit and was killed."""


@dataclass(frozen=True)
class Message:
    """One message of ``lean --json``."""

    severity: str  # "information", "warning" or "error"
    line: int  # 1-based line of the message's start
    text: str


Result = TypeVar("Result")


def with_retries(call: Callable[[], Result], retries: int, tally: list) -> Result:
    """``call()`` (one Lean or kcheck process), rerun up to ``retries`` times when it crashes; a
    time-out is raised at once (the same input would time out again: the caller bisects).
    ``tally`` ([processes started, seconds spent]) counts every attempt."""
    for attempt in range(retries + 1):
        start = time.perf_counter()
        tally[0] += 1
        try:
            return call()
        except LeanTimeout:
            raise
        except LeanRunError:
            if attempt == retries:
                raise
        finally:
            tally[1] += time.perf_counter() - start
    raise AssertionError("unreachable")


def run_lean_file(lean: LeanInstall, source: str, lean_path: Path, limits: LeanLimits) -> list[Message]:
    """Elaborate ``source`` (a whole file) and return Lean's messages.

    Raises LeanTimeout past ``limits.timeout_s`` and LeanRunError when Lean dies or its output
    is not JSON messages. Exit status 1 with messages is Lean reporting errors, not a crash.
    """
    env = {**os.environ, "LEAN_PATH": str(lean_path)}
    with tempfile.TemporaryDirectory(prefix="leanbridge-") as tmp:
        path = Path(tmp) / "Check.lean"
        path.write_text(source)
        # Lean stops a file after 100 errors unless told otherwise (an option read only from the
        # command line); most probes are rejected, and every rejection is an answer.
        argv = [str(lean.path), f"-DmaxErrors={MAX_ERRORS}", "--json", str(path)]
        with lean_process(argv, env, limits) as proc:
            try:
                stdout, stderr = proc.communicate(timeout=limits.timeout_s)
            except subprocess.TimeoutExpired as e:
                raise LeanTimeout(f"Lean ran past {limits.timeout_s:.0f} s") from e
    if proc.returncode not in (0, 1):
        reason = f"signal {-proc.returncode}" if proc.returncode < 0 else f"exit status {proc.returncode}"
        raise LeanRunError(f"Lean died ({reason}): {stderr.decode(errors='replace').strip()[:200]}")
    messages = []
    for raw in stdout.decode(errors="replace").splitlines():
        if not raw.strip():
            continue
        try:
            obj = json.loads(raw)
            messages.append(Message(obj["severity"], int(obj["pos"]["line"]), str(obj["data"])))
        except (ValueError, KeyError, TypeError) as e:
            raise LeanRunError(f"Lean printed a line that is not a JSON message: {raw[:120]!r}") from e
    if proc.returncode == 1 and not any(m.severity == "error" for m in messages):
        raise LeanRunError(f"Lean failed without an error message: {stderr.decode(errors='replace').strip()[:200]}")
    return messages

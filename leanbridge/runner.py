"""Run one Lean file as an owned process and parse its ``--json`` messages.

The process lives in its own session and is killed with its whole group on every exit path
(normal return, time-out, exception, Ctrl-C). A crash or time-out is an exception here; the
asker decides what it means for the questions in the file.
"""
from __future__ import annotations

import ctypes
import json
import os
import resource
import signal
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import TypeVar
from dataclasses import dataclass
from pathlib import Path

from leanbridge.discovery import LeanInstall
from leanbridge.errors import LeanBridgeError


MAX_ERRORS = 1_000_000
PR_SET_PDEATHSIG = 1  # linux/prctl.h


class LeanRunError(LeanBridgeError):
    """Lean crashed, ran out of memory or printed something that is not its JSON."""


class LeanTimeout(LeanRunError):
    """Lean ran past its time limit and was killed."""


@dataclass(frozen=True)
class LeanLimits:
    timeout_s: float = 600.0  # wall-clock limit for one file
    memory_mb: int = 8192  # address-space limit for one Lean process


@dataclass(frozen=True)
class Message:
    """One message of ``lean --json``."""

    severity: str  # "information", "warning" or "error"
    line: int  # 1-based line of the message's start
    text: str


@contextmanager
def lean_process(argv: list[str], env: dict[str, str], limits: LeanLimits,
                 cwd: Path | None = None) -> Iterator[subprocess.Popen]:
    """A Lean process (run in ``cwd``) that cannot outlive this block, nor this process: it is
    killed with its group on every exit path of the block, and (Linux) by the kernel when the
    thread that started it dies, so that a Python process killed with SIGKILL (a Ray worker,
    say) leaves no Lean behind."""
    parent = os.getpid()
    libc = ctypes.CDLL(None, use_errno=True)  # loaded before the fork: the child only calls it

    def prepare() -> None:
        size = limits.memory_mb * 1024 * 1024
        resource.setrlimit(resource.RLIMIT_AS, (size, size))
        if libc.prctl(PR_SET_PDEATHSIG, signal.SIGKILL, 0, 0, 0) != 0 or os.getppid() != parent:
            os._exit(127)  # cannot be tied to the parent, or the parent is already gone

    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, stdin=subprocess.DEVNULL,
                            env=env, cwd=cwd, start_new_session=True, preexec_fn=prepare)
    try:
        yield proc
    finally:
        if proc.poll() is None:
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        proc.wait()
        for stream in (proc.stdout, proc.stderr):
            if stream is not None:
                stream.close()


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

"""A Lean (or kcheck) process with a time-out, a memory limit and an owner that kills it.

Every process the bridge starts goes through ``lean_process``: finding Lean (``leanbridge.discovery``
asks a binary its version), running a file (``leanbridge.runner``), building the core library
(``leanbridge.corelib``) and the kernel route (``leanbridge.kernel``).
"""
from __future__ import annotations

import ctypes
import os
import resource
import signal
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

PR_SET_PDEATHSIG = 1  # linux/prctl.h


@dataclass(frozen=True)
class LeanLimits:
    timeout_s: float = 600.0  # wall-clock limit for one file
    memory_mb: int = 8192  # address-space limit for one Lean process


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

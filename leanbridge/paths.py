"""Where the bridge keeps its cache (launcher, kcheck, compiled core library, default store),
and how it builds a C program into it."""
from __future__ import annotations

import fcntl
import os
import shutil
import subprocess
import tempfile
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from pathlib import Path

CACHE_ENV = "EXACT_STATE_CACHE"


def cache_dir() -> Path:
    """``$EXACT_STATE_CACHE``, else ``$XDG_CACHE_HOME/exact-state``, else ``~/.cache/exact-state``."""
    explicit = os.environ.get(CACHE_ENV)
    if explicit:
        return Path(explicit)
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "exact-state"


CACHE_MARK = "<cache>"  # stands for cache_dir() in a recorded path
ELSEWHERE_MARK = "<elsewhere>"  # stands for the directory of a recorded file outside the cache and the working directory


def portable_path(path: Path | str) -> str:
    """``path`` as reports and manifests record it, without this machine's layout: a path in the
    cache directory as ``<cache>/...``, one under the working directory relative to it, any other
    as ``<elsewhere>/`` and its name. What identifies a Lean build is its version and githash, and
    a dataset its files' hashes; the path only says where it lay."""
    given = Path(path)
    resolved = given.resolve()
    for base, shown in ((cache_dir().resolve(), CACHE_MARK), (Path.cwd().resolve(), None)):
        if resolved.is_relative_to(base):
            rest = resolved.relative_to(base).as_posix()
            return rest if shown is None else f"{shown}/{rest}" if rest != "." else shown
    return given.as_posix() if not given.is_absolute() else f"{ELSEWHERE_MARK}/{given.name}"


@contextmanager
def file_lock(path: Path) -> Iterator[None]:
    """An exclusive advisory lock, so concurrent runs build a shared artefact once."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "a") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(handle, fcntl.LOCK_UN)


class BuildError(Exception):
    """gcc is missing or could not build a program; the message is one line, for the user."""


def built_with_gcc(target: Path, sources: Mapping[str, bytes], main: str, libdir: Path, flags: tuple[str, ...] = (),
                   what: str = "the program") -> Path:
    """``target``, compiled on first use from ``sources`` (file name -> bytes; ``main`` is the one
    compiled) against libleanshared in ``libdir``. Concurrent runs build it once (a lock beside it);
    it appears under its name only whole (compiled in a temporary directory, then renamed)."""
    if target.exists():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with file_lock(target.parent / ".lock"):
        if target.exists():
            return target
        if shutil.which("gcc") is None:
            raise BuildError(f"building {what} needs gcc, which is not on PATH")
        with tempfile.TemporaryDirectory(dir=target.parent) as tmp:
            for name, text in sources.items():
                (Path(tmp) / name).write_bytes(text)
            built = Path(tmp) / target.name
            result = subprocess.run(["gcc", *flags, str(Path(tmp) / main), "-o", str(built), f"-L{libdir}",
                                     "-lleanshared", f"-Wl,-rpath,{libdir}"], capture_output=True, text=True)
            if result.returncode != 0 or not built.is_file():
                said = " ".join((result.stderr.strip() or result.stdout.strip()).split())[:300]
                raise BuildError(f"gcc could not build {what}: {said or f'exit status {result.returncode}'}")
            os.replace(built, target)
    return target

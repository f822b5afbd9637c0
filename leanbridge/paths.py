"""Where the bridge keeps its cache (launcher, compiled core library, default store)."""
from __future__ import annotations

import fcntl
import os
from collections.abc import Iterator
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

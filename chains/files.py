"""Outputs that appear whole or not at all, for every command.

A file is written under a temporary name in its destination's directory and renamed into
place once complete; a set of files (a report with its plots, a dataset) is written into a
hidden staging directory beside its destination and moved in only when all of it is written.
A failed, killed or out-of-space run therefore leaves the previous output or none, never a
truncated one. A write that fails raises ``OutputError`` naming the file and the reason.
"""
from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path


class OutputError(Exception):
    """An output could not be written; the message names the file and the reason."""


def reason(e: OSError) -> str:
    """The operating system's words for ``e`` ("No space left on device"), without the errno."""
    return e.strerror or str(e)


def cannot_write(path: Path | str, e: OSError) -> OutputError:
    return OutputError(f"cannot write {path}: {reason(e)}")


def user_mode(directory: bool = False) -> int:
    """The mode a new file (``directory``: a new directory) gets under the process's umask, as
    ``open`` and ``mkdir`` give it: tempfile creates its files 0600 and directories 0700 whatever
    the umask, so what it made is set to this before it is renamed into place."""
    mask = os.umask(0)  # reading the umask means setting it: set it straight back
    os.umask(mask)
    return (0o777 if directory else 0o666) & ~mask


def _fsync_write(path: Path, data: bytes) -> None:
    with open(path, "wb") as handle:
        handle.write(data)
        handle.flush()
        os.fsync(handle.fileno())


@contextmanager
def atomic_path(path: Path) -> Iterator[Path]:
    """A temporary path beside ``path`` (same suffix) for the block to write; renamed onto
    ``path`` when the block succeeds, removed whatever happens. OSError becomes OutputError."""
    path = Path(path)
    try:
        fd, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.tmp-", suffix=path.suffix)
        os.fchmod(fd, user_mode())  # mkstemp's 0600 would outlive the rename
        os.close(fd)
    except OSError as e:
        raise cannot_write(path, e) from None
    tmp = Path(name)
    try:
        yield tmp
        os.replace(tmp, path)
    except OSError as e:
        raise cannot_write(path, e) from None
    finally:
        tmp.unlink(missing_ok=True)


def write_bytes_atomic(path: Path, data: bytes) -> None:
    with atomic_path(path) as tmp:
        _fsync_write(tmp, data)


def _pid_alive(text: str) -> bool:
    try:
        os.kill(int(text), 0)
    except (ValueError, ProcessLookupError):
        return False
    except PermissionError:
        return True
    return True


def staging_dir(out: Path) -> Path:
    """A fresh hidden directory ``.<name>.tmp-<pid>`` beside ``out`` (its parent created if
    need be). Staging directories of runs whose process is gone (killed) are swept first."""
    out = Path(out)
    parent = out.resolve().parent
    name = out.resolve().name
    try:
        parent.mkdir(parents=True, exist_ok=True)
        for stale in parent.glob(f".{name}.tmp-*"):
            if stale.is_dir() and not _pid_alive(stale.name.rsplit("-", 1)[-1]):
                shutil.rmtree(stale, ignore_errors=True)
        staging = parent / f".{name}.tmp-{os.getpid()}"
        shutil.rmtree(staging, ignore_errors=True)  # left by this very process on an earlier call
        staging.mkdir()
    except OSError as e:
        raise cannot_write(out, e) from None
    return staging


@contextmanager
def staged_files(out: Path) -> Iterator[Path]:
    """A staging directory for the block to write files into; when the block succeeds they are
    moved into ``out`` (created if missing) together, each by a rename. When it fails, ``out``
    is left as it was, not even created. OSError becomes OutputError."""
    out = Path(out)
    staging = staging_dir(out)
    try:
        yield staging
        out.mkdir(exist_ok=True)
        for path in sorted(staging.iterdir()):
            os.replace(path, out / path.name)
    except OSError as e:
        raise cannot_write(out, e) from None
    finally:
        shutil.rmtree(staging, ignore_errors=True)


@contextmanager
def output_directory(out: Path) -> Iterator[Path]:
    """``out`` for the block to create and fill: OutputError at once when it is a file; removed
    again when the block fails after creating it and leaves it empty."""
    out = Path(out)
    if out.exists() and not out.is_dir():
        raise OutputError(f"cannot write to {out}: it is a file, not a directory")
    existed = out.exists()
    try:
        yield out
    except BaseException:
        if not existed and out.is_dir() and not any(out.iterdir()):
            out.rmdir()
        raise

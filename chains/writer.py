"""Writing a dataset of any domain: staged beside its directory, moved into place whole on commit,
and never over a dataset made with other settings unless forced.
"""
from __future__ import annotations

import hashlib
import os
import shutil
from collections.abc import Iterator
from pathlib import Path

from chains.files import OutputError, cannot_write, staging_dir
from chains.manifest import MANIFEST, DatasetError, Manifest, is_dataset, read_manifest_json, settings_differ, settings_of, write_manifest


def _refuse_other_settings(out: Path, settings: dict) -> None:
    """OutputError when the dataset at ``out`` was made with other settings than ``settings``."""
    try:
        old = settings_of(read_manifest_json(out))
    except DatasetError:
        old = {}
    differ = settings_differ(old, settings)
    if differ:
        raise OutputError(f"{out} holds a dataset made with other settings ({'; '.join(differ[:4])}"
                          f"{'; …' if len(differ) > 4 else ''}); choose another --out, or give --force to replace it")

def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()

class DatasetWriter:
    """Writes a dataset into a hidden staging directory beside ``out`` and moves it into
    place only on ``commit``, so a failed or killed run leaves no half-written dataset.
    Staging directories left by killed runs (their process gone) are swept on the next run.
    ``out`` may be missing, empty or a dataset; anything else is refused, so that a mistyped
    ``--out`` never replaces a directory of other files. A dataset already there is replaced only
    when it was made with the same ``settings`` (``chains.manifest.settings_of``: the run then makes
    the same files again), or with ``force``; otherwise it is refused, naming what differs."""

    def __init__(self, out: Path, settings: dict | None = None, force: bool = False) -> None:
        self.out = Path(out)
        try:
            if self.out.exists() and not self.out.is_dir():
                raise OutputError(f"cannot write to {self.out}: it is a file, not a dataset directory")
            if self.out.is_dir() and any(self.out.iterdir()) and not is_dataset(self.out):
                raise OutputError(f"cannot write to {self.out}: a directory of other files, not a dataset; "
                                  "choose an empty or new directory")
            if settings is not None and not force and is_dataset(self.out):
                _refuse_other_settings(self.out, settings)
        except OSError as e:
            raise cannot_write(self.out, e) from None
        self.staging = staging_dir(self.out)

    def write_lines(self, name: str, lines: Iterator[str]) -> Path:
        path = self.staging / name
        try:
            with open(path, "w", encoding="utf-8") as handle:
                for line in lines:
                    handle.write(line)
                    handle.write("\n")
        except OSError as e:
            raise cannot_write(self.out / name, e) from None
        return path

    def commit(self, manifest: Manifest | dict) -> None:
        """Write ``manifest`` (``chains.manifest.write_manifest``) and move the dataset into place,
        replacing what was at ``out``."""
        try:
            write_manifest(self.staging, manifest)
        except OSError as e:
            raise cannot_write(self.out / MANIFEST, e) from None
        old = None
        try:
            if self.out.exists():
                old = self.out.with_name(f".{self.out.name}.old-{os.getpid()}")
                os.replace(self.out, old)
            os.replace(self.staging, self.out)
        except OSError as e:
            if old is not None and not self.out.exists():
                os.replace(old, self.out)  # put the previous dataset back
            raise cannot_write(self.out, e) from None
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)

    def abort(self) -> None:
        shutil.rmtree(self.staging, ignore_errors=True)

"""Torch files written whole (a temporary name, then a rename) and read without running their code.
"""
from __future__ import annotations

import io
import pickle
import warnings
from pathlib import Path

import torch

from chains.files import write_bytes_atomic


class UnreadableFile(Exception):
    """A file that is not a torch file of tensors and plain values; the message says why."""

def load_torch_file(path: Path, allowed: tuple[type, ...] = (), map_location: str | None = None) -> object:
    """``torch.load`` that runs no code from the file (weights only: tensors, plain values and
    the classes in ``allowed``) and keeps torch's warnings about the file's format to itself;
    ``map_location`` (e.g. "cpu") is where its tensors land. UnreadableFile when the file is not
    such a torch file (garbage, truncated, other objects)."""
    try:
        with warnings.catch_warnings(), torch.serialization.safe_globals(list(allowed)):
            warnings.simplefilter("ignore")
            return torch.load(path, weights_only=True, map_location=map_location)
    except pickle.UnpicklingError:
        raise UnreadableFile("not a torch file of tensors and plain values") from None
    except (RuntimeError, EOFError) as e:
        first = shortened(" ".join(str(e).split()), 100)
        raise UnreadableFile(f"truncated or not a torch file{': ' + first if first else ''}") from None
    except OSError as e:
        raise UnreadableFile(e.strerror or str(e)) from None

def save_atomic(obj: dict, path: Path) -> None:
    """``torch.save`` to a temporary file beside ``path``, then rename: a kill or a full disk
    leaves the old file or the new one. OutputError when it cannot be written."""
    buffer = io.BytesIO()
    torch.save(obj, buffer)
    write_bytes_atomic(path, buffer.getvalue())


def shortened(text: str, limit: int) -> str:
    """``text`` cut to at most ``limit`` characters at a word's end, with an ellipsis when cut."""
    if len(text) <= limit:
        return text
    cut = text[: limit - 1].rsplit(" ", 1)[0].rstrip(" ,;:")
    return f"{cut}…"

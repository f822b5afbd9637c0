"""Who certifies the steps and equivalences, as one value with its identity.

``Checker.ELABORATOR``: Lean text through Lean's parser, elaborator and kernel, with ``#print
axioms``; ``Checker.KERNEL``: explicit kernel terms straight to the kernel through kcheck
(``leanbridge.kernel``). A name (``certify --checker``) or a manifest's record is read into a
``Checker`` once, where it enters; inside, only the value travels.

The checker is part of a certificate's identity: a kernel-route statement's key and a dataset's
manifest name ``kernel:<sha256 of kcheck's sources>`` (``Checker.identity``), so a kernel-route
certificate never answers for the elaborator's, nor the other way round, nor for another kcheck's.
An elaborator statement's key is the statement alone (the keys of the stores and datasets it
certified), and its identity is ``elaborator`` (what a manifest without a checker reads as).
"""
from __future__ import annotations

import enum
import hashlib
from collections.abc import Mapping
from functools import cache
from pathlib import Path
from types import MappingProxyType

from leanbridge.errors import LeanBridgeError

SOURCE_DIR = Path(__file__).resolve().parent / "kcheck"
SOURCES = ("kcheck.c", "lean_abi.h")
KERNEL_PREFIX = "kernel:"  # a kernel-route identity: this, then kcheck's sources' sha256


class KernelCheckerError(LeanBridgeError):
    """kcheck cannot be built, or refuses to start (its axiom audit, another Lean build)."""


@cache
def kcheck_sources() -> Mapping[str, bytes]:
    """kcheck's source files, name -> bytes, read once: the bytes hashed are the bytes compiled."""
    sources = {}
    for name in SOURCES:
        try:
            sources[name] = (SOURCE_DIR / name).read_bytes()
        except OSError as e:
            raise KernelCheckerError(f"kcheck source {SOURCE_DIR / name}: {e.strerror or e} "
                                     "(reinstall the package)") from None
    return MappingProxyType(sources)


@cache
def sources_hash() -> str:
    """sha256 over kcheck's source files (names and bytes): its identity in certificate keys."""
    digest = hashlib.sha256()
    for name, data in kcheck_sources().items():
        digest.update(f"{name}\n{len(data)}\n".encode() + data)
    return digest.hexdigest()


class Checker(enum.Enum):
    """Who certifies steps and equivalences; the value is the name a user types."""

    ELABORATOR = "elaborator"
    KERNEL = "kernel"

    @property
    def identity(self) -> str:
        """What manifests, reports and (for the kernel route) certificate keys record:
        ``elaborator``, or ``kernel:<kcheck sources' sha256>``."""
        return f"{KERNEL_PREFIX}{sources_hash()}" if self is Checker.KERNEL else self.value

    @property
    def keyed(self) -> str | None:
        """What a statement's key names besides the statement (``render.Statement.key``): the
        kernel route's identity; nothing for the elaborator, whose keys are the statement alone."""
        return self.identity if self is Checker.KERNEL else None

    @classmethod
    def recorded(cls, identity: str) -> Checker:
        """The route a manifest's ``checker`` names: the kernel for ``kernel:<sha256>``, else the
        elaborator (whether that kcheck is this package's is the caller's to judge)."""
        return cls.KERNEL if str(identity).startswith(KERNEL_PREFIX) else cls.ELABORATOR


CHECKERS = tuple(checker.value for checker in Checker)  # the names ``--checker`` takes

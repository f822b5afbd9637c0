"""Held-out protocols as ``certify --hold-out`` names them (``events:K``, ``pairs:K``, ``states``),
shared by every domain; what each domain holds out under them is its own (the rewrite tiers':
``chains.rewrite.holdout``; programs': ``chains.programs.dataset``).
"""
from __future__ import annotations

from dataclasses import dataclass


KINDS = ("events", "pairs", "states")  # the protocols, as --hold-out names them

class HoldOutRefused(ValueError):
    """A held-out protocol this domain and seed cannot satisfy; the message says why and what to try."""

@dataclass(frozen=True)
class HoldOut:
    """A held-out protocol as ``--hold-out`` names it: ``events:K``, ``pairs:K`` or ``states``."""

    kind: str  # one of KINDS
    count: int = 0  # events or pairs held out (0 with states)

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"hold-out kind must be one of {', '.join(KINDS)}, not {self.kind!r}")
        if self.kind == "states" and self.count != 0:
            raise ValueError("states holds out no count: write --hold-out states")
        if self.kind != "states" and self.count < 1:
            raise ValueError(f"{self.kind}:K needs K of at least 1")

    def __str__(self) -> str:
        return self.kind if self.kind == "states" else f"{self.kind}:{self.count}"

    @classmethod
    def parse(cls, text: str) -> HoldOut:
        """``events:K``, ``pairs:K`` or ``states``; ValueError saying what is expected."""
        kind, colon, count = text.strip().partition(":")
        if kind == "states" and not colon:
            return cls("states")
        if kind in ("events", "pairs") and colon and count.strip().isdigit():
            return cls(kind, int(count))
        raise ValueError(f"{text!r} is not events:K, pairs:K or states")

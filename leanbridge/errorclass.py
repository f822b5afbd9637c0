"""Classes of Lean error messages, read from Lean's own headline wording."""
from __future__ import annotations

import re

ERROR_CLASSES = ("type_mismatch", "application_type_mismatch", "unknown_identifier", "unknown_constant",
                 "failed_to_synthesize", "motive_not_type_correct", "pattern_not_found", "linarith_failed",
                 "simp_failed", "omega_failed", "unsolved_goals", "timeout", "other")

_HEADLINES = (
    ("application_type_mismatch", re.compile(r"^application type mismatch", re.IGNORECASE)),
    ("type_mismatch", re.compile(r"^type mismatch", re.IGNORECASE)),
    ("unknown_identifier", re.compile(r"^unknown identifier", re.IGNORECASE)),
    ("unknown_constant", re.compile(r"^unknown (constant|declaration)", re.IGNORECASE)),
)


def classify_error(message: str) -> str:
    """The class of one Lean error message (``other`` when no headline matches)."""
    text = message.strip()
    for name, pattern in _HEADLINES:
        if pattern.search(text):
            return name
    return "other"

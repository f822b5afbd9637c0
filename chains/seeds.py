"""Seeds of a dataset's random draws, shared by every domain.
"""
from __future__ import annotations

import random


def split_rng(seed: int, split: str) -> random.Random:
    """An independent generator per dataset split, so adding a split changes no other."""
    return random.Random(f"{seed}:{split}")

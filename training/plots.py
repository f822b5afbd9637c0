"""What every figure of the project shares: pyplot drawing to files, points by length, seed styles.
"""
from __future__ import annotations


def pyplot():
    """matplotlib's pyplot, drawing to files only (imported when a figure is made, not before)."""
    import matplotlib

    matplotlib.use("Agg")  # files only, no display
    import matplotlib.pyplot as plt

    return plt

def by_length(mapping: dict) -> tuple[list[int], list[float]]:
    """A report's {length: value} as sorted x and y lists, leaving out lengths with no value."""
    points = sorted((int(k), v) for k, v in mapping.items() if v is not None)
    return [p[0] for p in points], [p[1] for p in points]

SEED_STYLES = (("-", "solid"), ("--", "dashed"), (":", "dotted"), ("-.", "dashdot"))  # (matplotlib style, name)

def seed_handles(seeds: list[int]) -> list:
    """Legend entries that say which line style is which seed (grey, no marker)."""
    from matplotlib.lines import Line2D

    return [Line2D([], [], color="0.35", linestyle=SEED_STYLES[s % len(SEED_STYLES)][0], label=f"seed {s}")
            for s in seeds]

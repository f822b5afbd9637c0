"""Figures of a report (or several): exact match and partner distance against chain length."""
from __future__ import annotations

from pathlib import Path


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


def _arm(report: dict) -> str:
    """What a run trained: the objective for the recurrence (with its norm when free), else the arch."""
    if report["arch"] != "recurrence":
        return report["arch"] if report["objective"] == "plain" else f"{report['arch']} ({report['objective']})"
    free = report.get("config", {}).get("fixed_norm") is False
    return report["objective"] + (", norm free" if free else "")


SEED_STYLES = (("-", "solid"), ("--", "dashed"), (":", "dotted"), ("-.", "dashdot"))  # (matplotlib style, name)


def _plot_by_length(reports: list[dict], key: str, path: Path, ylabel: str, log_y: bool) -> Path:
    """``report[key]`` (keyed by chain length) against length, log2 x axis: one colour and
    marker per arm, one line style per seed, one legend entry per arm."""
    plt = pyplot()
    arms = list(dict.fromkeys(_arm(r) for r in reports))
    colours = plt.get_cmap("tab10")
    markers = "osD^v<>phX"
    fig, ax = plt.subplots(figsize=(6.5, 3.5))
    labelled = set()
    for report in reports:
        x, y = by_length(report[key])
        if not x:
            continue
        arm = _arm(report)
        i = arms.index(arm)
        ax.plot(x, [max(v, 1e-7) for v in y] if log_y else y, color=colours(i % 10), marker=markers[i % len(markers)],
                linestyle=SEED_STYLES[report["seed"] % len(SEED_STYLES)][0], markersize=4, alpha=0.85,
                label=None if arm in labelled else arm)
        labelled.add(arm)
    ax.set_xscale("log", base=2)
    if log_y:
        ax.set_yscale("log")
    else:
        ax.set_ylim(-0.02, 1.02)
    ax.set_xlabel("chain length (events)")
    ax.set_ylabel(ylabel)
    seeds = sorted({r["seed"] for r in reports})
    title = None if len(seeds) < 2 else "seed " + ", ".join(
        f"{s} {SEED_STYLES[s % len(SEED_STYLES)][1]}" for s in seeds)
    ax.legend(fontsize=7, title=title, title_fontsize=6, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def plot_exact(reports: list[dict], path: Path) -> Path:
    return _plot_by_length(reports, "exact", path, "exact match at the last step", log_y=False)


def plot_pair_distance(reports: list[dict], path: Path) -> Path:
    return _plot_by_length(reports, "pair_distance", path, "centred-cosine distance, certified partners", log_y=True)


def write_plots(reports: list[dict], directory: Path) -> list[Path]:
    directory = Path(directory)
    return [plot_exact(reports, directory / "exact.png"),
            plot_pair_distance(reports, directory / "pair_distance.png")]

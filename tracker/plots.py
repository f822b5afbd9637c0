"""Figures of a report (or several): exact match and partner distance against chain length."""
from __future__ import annotations

from pathlib import Path


def _pyplot():
    import matplotlib

    matplotlib.use("Agg")  # files only, no display
    import matplotlib.pyplot as plt

    return plt


def _series(mapping: dict) -> tuple[list[int], list[float]]:
    points = sorted((int(k), v) for k, v in mapping.items() if v is not None)
    return [p[0] for p in points], [p[1] for p in points]


def _label(report: dict) -> str:
    return f"{report['arch']}-{report['objective']}-s{report['seed']}"


def _plot_by_length(reports: list[dict], key: str, path: Path, ylabel: str, log_y: bool) -> Path:
    """One line per report: ``report[key]`` (keyed by chain length) against length, log2 x axis."""
    plt = _pyplot()
    fig, ax = plt.subplots(figsize=(5, 3.5))
    for report in reports:
        x, y = _series(report[key])
        if x:
            ax.plot(x, [max(v, 1e-7) for v in y] if log_y else y, marker="o", label=_label(report))
    ax.set_xscale("log", base=2)
    if log_y:
        ax.set_yscale("log")
    else:
        ax.set_ylim(-0.02, 1.02)
    ax.set_xlabel("chain length (events)")
    ax.set_ylabel(ylabel)
    ax.legend(fontsize=7)
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

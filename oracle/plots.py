"""Figures of oracle reports (one run or a comparison): verdict accuracy by chain length per arm,
accuracy per probe kind per arm, and hard-class balanced accuracy by depth band per arm."""
from __future__ import annotations

from pathlib import Path

from training.plots import SEED_STYLES, by_length, pyplot, seed_handles


def arm_name(report: dict) -> str:
    """The arm a run trained: the arch, with its objective where the arch admits two."""
    return report["arch"] if report["arch"] in ("blind", "truth") else f"{report['arch']} ({report['objective']})"


def _colours(reports: list[dict]):
    plt = pyplot()
    arms = list(dict.fromkeys(arm_name(r) for r in reports))
    cmap = plt.get_cmap("tab10")
    return plt, arms, {a: cmap(i % 10) for i, a in enumerate(arms)}


def run_title(report: dict, name: str) -> str:
    """A run figure's title: the run's name and what it trained."""
    return f"{name}: {arm_name(report)}, seed {report['seed']}, {report['steps']:,} steps"


def _save_by_length(plt, fig, ax, ylabel: str, path: Path, seeds: list[int], extra: list | None = None,
                    title: str | None = None, leading: list | None = None) -> Path:
    """A fraction against chain length on a log-2 axis, saved to ``path``; the legend, outside,
    names the colours' arms (``leading`` handles first, where given), then what each line style is
    (``seeds``' styles and ``extra`` handles)."""
    ax.set_xscale("log", base=2)
    lengths = sorted({int(x) for line in ax.get_lines() for x in line.get_xdata()})
    ax.set_xticks(lengths, [f"{n:,}" for n in lengths])  # every length drawn, labelled as a number
    ax.minorticks_off()
    ax.set_ylim(-0.02, 1.02)
    ax.set_xlabel("chain length (events)")
    ax.set_ylabel(ylabel)
    handles, _ = ax.get_legend_handles_labels()
    ax.legend(handles=(leading or []) + handles + seed_handles(seeds) + (extra or []), fontsize=7, loc="upper left",
              bbox_to_anchor=(1.01, 1.0))
    if title:
        ax.set_title(title, fontsize=8, loc="left")
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def plot_accuracy(reports: list[dict], path: Path, title: str | None = None) -> Path:
    """Verdict accuracy (o markers) and the fraction of chains right on every verdict (faint, x
    markers) against chain length: one colour per arm, one line style per seed."""
    plt, arms, colour = _colours(reports)
    fig, ax = plt.subplots(figsize=(7, 3.6))
    labelled = set()
    for r in reports:
        arm = arm_name(r)
        style = SEED_STYLES[r["seed"] % len(SEED_STYLES)][0]
        x, y = by_length(r["accuracy"])
        ax.plot(x, y, color=colour[arm], linestyle=style, marker="o", markersize=4,
                label=None if arm in labelled else arm)
        x, y = by_length(r["all_right"])
        ax.plot(x, y, color=colour[arm], linestyle=style, marker="x", markersize=4, alpha=0.35)
        labelled.add(arm)
    from matplotlib.lines import Line2D

    markers = [Line2D([], [], color="0.35", marker="o", linestyle="none", label="verdict accuracy"),
               Line2D([], [], color="0.35", marker="x", linestyle="none", alpha=0.5, label="chains all right")]
    return _save_by_length(plt, fig, ax, "verdict accuracy (o); chains all right (x)", path,
                           sorted({r["seed"] for r in reports}), markers, title)


def _bars(reports: list[dict], values, groups: list[str], path: Path, ylabel: str, title: str) -> Path:
    """Grouped bars: one group per entry of ``groups``, one bar per arm (mean over its seeds)."""
    plt, arms, colour = _colours(reports)
    fig, ax = plt.subplots(figsize=(7.5, 3.6))
    width = 0.8 / max(1, len(arms))
    for i, arm in enumerate(arms):
        runs = [r for r in reports if arm_name(r) == arm and r.get("pooled")]
        means = []
        for g in groups:
            got = [v for v in (values(r, g) for r in runs) if v is not None]
            means.append(sum(got) / len(got) if got else 0.0)
        ax.bar([j + i * width for j in range(len(groups))], means, width, color=colour[arm], label=arm)
    ax.set_xticks([j + 0.4 - width / 2 for j in range(len(groups))], groups)
    ax.set_ylim(0, 1.02)
    ax.set_ylabel(ylabel)
    ax.set_title(title, fontsize=8)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def plot_kinds(reports: list[dict], path: Path) -> Path:
    kinds = list(dict.fromkeys(k for r in reports for k in r.get("kinds", [])))
    return _bars(reports, lambda r, k: r["pooled"]["by_kind"].get(k), kinds, path, "verdict accuracy",
                 "per probe kind, pooled over chain lengths up to 1,024 (mean over seeds)")


def plot_depth(reports: list[dict], path: Path) -> Path:
    bands = list(dict.fromkeys(b for r in reports if r.get("pooled") for b in r["pooled"]["hard"]))
    return _bars(reports, lambda r, b: r["pooled"]["hard"][b]["balanced"], bands, path,
                 "balanced accuracy, misplaced gold", "the hard class by depth band (mean over seeds)")


def write_plots(reports: list[dict], directory: Path, title: str | None = None) -> list[Path]:
    """accuracy.png, kinds.png and depth.png of ``reports`` in ``directory``; ``title`` heads the
    first (a run's figures: ``run_title``)."""
    directory = Path(directory)
    return [plot_accuracy(reports, directory / "accuracy.png", title), plot_kinds(reports, directory / "kinds.png"),
            plot_depth(reports, directory / "depth.png")]


def plot_gate(batches: dict[str, list[dict]], path: Path) -> Path:
    """The chain gate's own figure: the fraction of held-out chains with every five-class verdict
    right (complete by comparison) against chain length, one colour per batch, one line style per
    seed (the legend says which). ``batches``: a label -> the reports of its stateful runs."""
    from matplotlib.patches import Patch

    plt = pyplot()
    cmap = plt.get_cmap("tab10")
    fig, ax = plt.subplots(figsize=(7, 3.6))
    colours = []  # one legend entry per batch: its colour alone (a line would stand for one seed's style)
    for i, (label, reports) in enumerate(batches.items()):
        drawn = 0
        for r in sorted(reports, key=lambda r: r["seed"]):
            all_right = (r.get("comparison") or {}).get("all_right")
            if not all_right:
                continue
            x, y = by_length(all_right)
            ax.plot(x, y, color=cmap(i % 10), linestyle=SEED_STYLES[r["seed"] % len(SEED_STYLES)][0], marker="o",
                    markersize=4)
            drawn += 1
        if drawn:
            colours.append(Patch(color=cmap(i % 10), label=f"{label} ({drawn} run{'s' if drawn > 1 else ''})"))
    seeds = sorted({r["seed"] for reports in batches.values() for r in reports
                    if (r.get("comparison") or {}).get("all_right")})
    return _save_by_length(plt, fig, ax, "chains with every verdict right", path, seeds, leading=colours)

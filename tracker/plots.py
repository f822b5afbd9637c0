"""Figures of a report (or several): exact match and partner distance against chain length."""
from __future__ import annotations

from pathlib import Path

from training.plots import SEED_STYLES, by_length, pyplot, seed_handles


def _arm(report: dict) -> str:
    """What a run trained: the objective for the recurrence (with its norm when free), else the arch."""
    if report["arch"] != "recurrence":
        return report["arch"] if report["objective"] == "plain" else f"{report['arch']} ({report['objective']})"
    free = report.get("config", {}).get("fixed_norm") is False
    return report["objective"] + (", norm free" if free else "")


def run_title(report: dict, name: str) -> str:
    """A run figure's title: the run's name and what it trained."""
    schedule = (report.get("schedule") or {}).get("name")
    return (f"{name}: {_arm(report)}, {report['arch']}, seed {report['seed']}, {report['steps']:,} steps"
            + (f", schedule {schedule}" if schedule else ""))


def first_heldout(report: dict) -> dict:
    """A report's exact just after the first held-out event (pair) of each chain, by length ({} when the
    dataset holds none out)."""
    first = (report.get("beyond") or {}).get("first_heldout") or {}
    return {length: figure["exact"] for length, figure in first.items()}


def _plot_by_length(reports: list[dict], key: str, path: Path, ylabel: str, fraction: bool,
                    title: str | None = None) -> Path:
    """``report[key]`` (keyed by chain length) against length, log2 x axis, one panel per arm
    (one colour and marker each), one line style per seed, the legend saying which is which. A
    fraction's y axis is [0, 1]; any other starts at zero, so a flat line looks flat."""
    plt = pyplot()
    arms = list(dict.fromkeys(_arm(r) for r in reports if by_length(r[key])[0]))
    colours = plt.get_cmap("tab10")
    markers = "osD^v<>phX"
    columns = min(4, max(1, len(arms)))
    rows = -(-max(1, len(arms)) // columns)
    fig, axes = plt.subplots(rows, columns, figsize=(3.3 * columns + (3.2 if len(arms) == 1 else 0.5), 2.8 * rows + 0.6),
                             sharex=True, sharey=fraction, squeeze=False)
    for ax in axes.flat[len(arms):]:
        ax.set_visible(False)
    for i, arm in enumerate(arms):
        ax = axes.flat[i]
        runs = sorted((r for r in reports if _arm(r) == arm), key=lambda r: r["seed"])
        top, ticks = 0.0, set()
        for report in runs:
            x, y = by_length(report[key])
            if not x:
                continue
            top, style = max(top, max(y)), SEED_STYLES[report["seed"] % len(SEED_STYLES)][0]
            ticks.update(x)
            ax.plot(x, y, color=colours(i % 10), marker=markers[i % len(markers)], linestyle=style, markersize=4,
                    alpha=0.85, label=f"seed {report['seed']}")
            x, y = by_length(first_heldout(report)) if key == "exact" else ([], [])
            if x:  # held-out events or pairs: right just after the first one, beside the end of the chain
                ax.plot(x, y, color="0.3", marker="x", linestyle=style, markersize=4, alpha=0.85,
                        label=f"seed {report['seed']}, just after its first held-out event")
        ax.set_xscale("log", base=2)
        ax.set_xticks(sorted(ticks), [f"{x:,}" for x in sorted(ticks)])  # every length labelled, 8 included
        ax.minorticks_off()
        unread = sorted({int(k) for r in runs for k, v in r[key].items() if v is None})
        if unread:  # lengths a run was not evaluated at (a transformer past its reading length)
            ax.text(0.98, 0.5, f"not evaluated at {', '.join(f'{n:,}' for n in unread)}:\nbeyond the length it reads",
                    transform=ax.transAxes, ha="right", va="center", fontsize=6, color="0.35")
        ax.set_ylim(*((-0.02, 1.02) if fraction else (0, 1.1 * top or 1)))
        if not fraction:
            ax.ticklabel_format(axis="y", style="sci", scilimits=(-2, 3))
        if len(arms) > 1:
            ax.set_title(arm, fontsize=8)
        ax.set_xlabel("chain length (events)", fontsize=8)
        if i % columns == 0:
            ax.set_ylabel(ylabel, fontsize=8)
        ax.tick_params(labelsize=7)
    seeds = sorted({r["seed"] for r in reports})
    if len(arms) == 1:  # one arm: its seeds in the panel's legend, outside on the right
        axes.flat[0].legend(fontsize=7, title=arms[0], title_fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    elif arms:
        fig.legend(handles=seed_handles(seeds), fontsize=7, loc="upper right", ncol=len(seeds), frameon=False)
    if title:
        fig.suptitle(title, fontsize=8, x=0.01, ha="left")
    fig.tight_layout(rect=(0, 0, 1, 0.95 if (title or len(arms) > 1) else 1))
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def plot_exact(reports: list[dict], path: Path, title: str | None = None) -> Path:
    return _plot_by_length(reports, "exact", path, "exact match at the last step", fraction=True, title=title)


def plot_pair_distance(reports: list[dict], path: Path, title: str | None = None) -> Path:
    return _plot_by_length(reports, "pair_distance", path, "centred-cosine distance, certified partners",
                           fraction=False, title=title)


def write_plots(reports: list[dict], directory: Path, title: str | None = None) -> list[Path]:
    """exact.png and pair_distance.png of ``reports`` in ``directory``; ``title`` heads both (a
    run's figures: ``run_title``)."""
    directory = Path(directory)
    return [plot_exact(reports, directory / "exact.png", title),
            plot_pair_distance(reports, directory / "pair_distance.png", title)]

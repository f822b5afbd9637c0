"""Figures of a report (or several): exact match and partner distance against chain length."""
from __future__ import annotations

from pathlib import Path

from chains.manifest import DatasetError, dataset_id, read_manifest_json
from training.plots import SEED_STYLES, by_length, pyplot

SEED_MARKERS = "osD^v<>phX"  # one marker a seed (with its line style), hollow, so seeds on one line all show
DODGE = 0.15  # octaves between neighbouring seeds' points: equal figures of several seeds sit side by side


def _seed_style(seed: int) -> dict:
    """How one seed's line is drawn in every panel: its line style, marker and marker size."""
    return {"linestyle": SEED_STYLES[seed % len(SEED_STYLES)][0], "marker": SEED_MARKERS[seed % len(SEED_MARKERS)],
            "markersize": 5, "markerfacecolor": "none"}


def seed_handles(seeds: list[int]) -> list:
    """Legend entries that say which line style and marker is which seed (grey)."""
    from matplotlib.lines import Line2D

    return [Line2D([], [], color="0.35", label=f"seed {s}", **_seed_style(s)) for s in seeds]


def domain_words(report: dict) -> tuple[str, str]:
    """What a report's histories and their events are called: programs of statements on programs,
    chains of events on every other domain."""
    domain = (report.get("dataset") or {}).get("domain")
    programs = isinstance(domain, dict) and domain.get("name") == "programs"
    return ("program", "statement") if programs else ("chain", "event")


def floor_of(report: dict) -> dict[str, float]:
    """By length, the exact share of naming the commonest value, where the report carries it (a
    stream report's ``beside_exact``, a comparison's ``floor``), else where its dataset's manifest
    records it (a programs dataset's ``floor``, by test split) and that dataset is still the one the
    report read; {} when neither has one."""
    carried = report.get("floor") or (report.get("beside_exact") or {}).get("floor")
    if isinstance(carried, dict):
        return {str(k): v for k, v in carried.items()}
    dataset = report.get("dataset") or {}
    if not dataset.get("path"):
        return {}
    try:
        manifest = read_manifest_json(dataset["path"])
    except DatasetError:
        return {}
    if not isinstance(manifest, dict) or not isinstance(manifest.get("floor"), dict):
        return {}
    if dataset.get("dataset_id") and dataset_id(manifest) != dataset["dataset_id"]:
        return {}
    return {k.removeprefix("test-"): v for k, v in manifest["floor"].items()}


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
    """``report[key]`` (keyed by chain length) against length, log2 x axis, one panel per arm (one
    colour each, its title naming its seeds), one line style and marker per seed, the seeds' points
    set a little apart along x so that equal figures stay visible, the legend saying which is which;
    on exact, the floor of naming the commonest value where there is one (``floor_of``). A
    fraction's y axis is [0, 1]; any other starts at zero, so a flat line looks flat."""
    plt = pyplot()
    arms = list(dict.fromkeys(_arm(r) for r in reports if by_length(r[key])[0]))
    colours = plt.get_cmap("tab10")
    history, event = domain_words(reports[0]) if reports else ("chain", "event")
    columns = min(4, max(1, len(arms)))
    rows = -(-max(1, len(arms)) // columns)
    fig, axes = plt.subplots(rows, columns, figsize=(3.3 * columns + (3.2 if len(arms) == 1 else 0.5), 2.8 * rows + 0.6),
                             sharex=True, sharey=fraction, squeeze=False)
    for ax in axes.flat[len(arms):]:
        ax.set_visible(False)
    floors = False
    for i, arm in enumerate(arms):
        ax = axes.flat[i]
        runs = sorted((r for r in reports if _arm(r) == arm), key=lambda r: r["seed"])
        top, ticks = 0.0, set()
        for j, report in enumerate(runs):
            x, y = by_length(report[key])
            if not x:
                continue
            top, style = max(top, max(y)), _seed_style(report["seed"])
            ticks.update(x)
            shift = 2 ** (DODGE * (j - (len(runs) - 1) / 2))  # the seeds a little apart; ticks at the true lengths
            ax.plot([n * shift for n in x], y, color=colours(i % 10), alpha=0.85, label=f"seed {report['seed']}", **style)
            x, y = by_length(first_heldout(report)) if key == "exact" else ([], [])
            if x:  # held-out events or pairs: right just after the first one, beside the end of the chain
                ax.plot([n * shift for n in x], y, color="0.3", alpha=0.85, label=f"seed {report['seed']}, just after its first held-out {event}",
                        **{**style, "marker": "x", "markersize": 4})
        if key == "exact":
            floors |= _draw_floors(ax, runs, ticks)
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
            seeds = sorted({r["seed"] for r in runs})
            ax.set_title(f"{arm} (seed{'s' if len(seeds) > 1 else ''} {', '.join(map(str, seeds))})", fontsize=8)
        ax.set_xlabel(f"{history} length ({event}s)", fontsize=8)
        if i % columns == 0:
            ax.set_ylabel(ylabel, fontsize=8)
        ax.tick_params(labelsize=7)
    seeds = sorted({r["seed"] for r in reports})
    if len(arms) == 1:  # one arm: its seeds in the panel's legend, outside on the right
        axes.flat[0].legend(fontsize=7, title=arms[0], title_fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    elif arms:
        handles = seed_handles(seeds) + (_floor_handles(reports[0]) if floors else [])
        fig.legend(handles=handles, fontsize=7, loc="upper right", ncol=len(handles), frameon=False)
    if title:
        fig.suptitle(title, fontsize=8, x=0.01, ha="left")
    fig.tight_layout(rect=(0, 0, 1, 0.95 if (title or len(arms) > 1) else 1))
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return path


def floor_label(report: dict) -> str:
    """What the floor is on ``report``'s domain: programs name each variable's commonest value, the
    other domains the commonest state."""
    return ("floor: each variable's commonest value" if domain_words(report)[1] == "statement"
            else "floor: the commonest state")


def _draw_floors(ax, runs: list[dict], lengths: set[int]) -> bool:
    """Each distinct floor of ``runs``' datasets (``floor_of``) as a dashed grey line at the lengths
    drawn; whether any was."""
    drawn = {}
    for report in runs:
        floor = {k: v for k, v in floor_of(report).items() if int(k) in lengths}
        if floor:
            drawn.setdefault((report.get("dataset") or {}).get("dataset_id"), floor)
    for n, floor in enumerate(drawn.values()):
        x, y = by_length(floor)
        ax.plot(x, y, color="0.55", linestyle="--", linewidth=1.0, marker="", label=floor_label(runs[0]) if n == 0 else "_nolegend_")
    return bool(drawn)


def _floor_handles(report: dict) -> list:
    from matplotlib.lines import Line2D

    return [Line2D([], [], color="0.55", linestyle="--", linewidth=1.0, label=floor_label(report))]


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

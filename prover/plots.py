"""prove.png: a search's success and kernel calls per solved problem against the problems' distance,
for every domain (``prover.run``'s rewrite reports and ``prover.domain_search``'s)."""
from __future__ import annotations

from pathlib import Path

from training.plots import pyplot


def prove_title(report: dict) -> str:
    """The searcher, its budget, and what it searched: the prefix on rewrite chains, the domain on the
    others (a programs machine named beside it)."""
    parts = [f"budget {report['budget_calls']}"]
    if "prefix" in report:
        parts.append(f"prefix {report['prefix']}")
    domain = report.get("domain")
    if isinstance(domain, dict):
        machine = domain.get("machine")
        parts.append(f"{domain.get('name', 'domain')}" + (f", {machine}" if machine else ""))
    return f"{report['searcher']} ({', '.join(parts)})"


def _distances_axis(ax, ds: list[int]) -> None:
    """Every distance a tick, the axis spanning them (a panel with nothing drawn keeps the same axis)."""
    ax.set_xticks(ds)
    low, high = (min(ds), max(ds)) if ds else (0, 1)
    pad = max(0.5, 0.05 * (high - low))
    ax.set_xlim(low - pad, high + pad)


def plot_prove(report: dict, path: Path):
    """Two panels against distance (or walk length, as the report's ``distance_measure`` says): the
    share solved, and kernel calls per solved problem (log); the report's ``baseline`` searcher, when
    it ran, drawn beside the searcher. A distance where nothing was solved has no calls-per-solved
    point; when no distance has one, the panel says the searcher solved none instead of drawing an
    empty axis. Returns the figure (closed)."""
    plt = pyplot()
    rows = report["by_distance"]
    ds = sorted(int(d) for d in rows)
    measure = report.get("distance_measure", "distance")
    series = [(report["searcher"], rows)]
    if report.get("baseline"):
        series.append((f"{report['baseline']['searcher']} (baseline)", report["baseline"]["by_distance"]))
    fig, (left, right) = plt.subplots(1, 2, figsize=(9, 3.5))
    for name, by in series:
        left.plot(ds, [by[str(d)]["success"] for d in ds], "o-", label=name)
    left.set(xlabel=measure, ylabel="share of problems solved", ylim=(-0.02, 1.02), title="success")
    if len(series) > 1:
        left.legend(fontsize=7)
    _distances_axis(left, ds)
    solved = [(d, rows[str(d)]["kernel_calls_per_solved"]) for d in ds
              if rows[str(d)]["kernel_calls_per_solved"] is not None]
    right.set(xlabel=measure, ylabel="kernel calls per solved problem", title="kernel calls")
    if solved:
        for (name, by), style in zip(series, ("o-", "s--")):
            points = [(d, by[str(d)]["kernel_calls_per_solved"]) for d in ds
                      if by[str(d)]["kernel_calls_per_solved"] is not None]
            right.plot([d for d, _ in points], [c for _, c in points], style, label=name)
        right.set_yscale("log")
        unsolved = [d for d in ds if d not in dict(solved)]
        if unsolved:
            right.text(0.98, 0.04, f"solved none at distance {', '.join(map(str, unsolved))}",
                       transform=right.transAxes, ha="right", va="bottom", fontsize=7, color="0.35")
    else:
        right.set_ylim(0, 1)
        right.set_yticks([])
        right.text(0.5, 0.5, f"solved none of {report.get('problems', 0)} problems:\nno kernel calls per solved problem",
                   transform=right.transAxes, ha="center", va="center", fontsize=9, color="0.35")
    _distances_axis(right, ds)
    fig.suptitle(prove_title(report))
    fig.tight_layout()
    fig.savefig(path, dpi=120)
    plt.close(fig)
    return fig

"""A ``prove`` report as the lines the command prints: a table of problems solved and kernel calls
per solved problem, by distance (or walk length) and searcher, the baseline beside the searcher
where it ran, and a last row over every distance."""
from __future__ import annotations


def _cells(searcher: str, where: str, row: dict) -> list[str]:
    per, length = row.get("kernel_calls_per_solved"), row.get("mean_program_length")
    return [where, searcher, f"{row['solved']}/{row['problems']}", f"{row['kernel_calls']:,}",
            "-" if per is None else f"{per:.2f}", "-" if length is None else f"{length:.2f}"]


def summary_lines(report: dict) -> list[str]:
    """The table's lines, columns aligned."""
    measure = report.get("distance_measure", "distance")
    searchers = [(report["searcher"], report)]
    if report.get("baseline"):
        searchers.append((f"{report['baseline']['searcher']} (baseline)", report["baseline"]))
    rows = [[measure, "searcher", "solved", "kernel calls", "calls/solved", "mean length"]]
    for d in sorted(report["by_distance"], key=int):
        rows += [_cells(name, d, part["by_distance"][d]) for name, part in searchers]
    rows += [_cells(name, "all", part) for name, part in searchers]
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    return ["  ".join(c.ljust(w) if i < 2 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))).rstrip()
            for r in rows]

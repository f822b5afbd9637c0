"""A run's figures: every length labelled, and on held-out events the figure just after the first
one drawn beside the end-of-chain figure."""
from __future__ import annotations

from tracker.plots import first_heldout, plot_exact


def report(seed: int, beyond: dict | None = None) -> dict:
    return {"arch": "recurrence", "objective": "combo", "seed": seed, "config": {},
            "exact": {"8": 1.0, "64": 0.9, "4096": 0.5}, **({"beyond": beyond} if beyond else {})}


def test_the_exact_figure_labels_every_length_and_shows_the_first_held_out_event(tmp_path, monkeypatch):
    import matplotlib.axes

    drawn, ticks = [], []
    plot, set_xticks = matplotlib.axes.Axes.plot, matplotlib.axes.Axes.set_xticks
    monkeypatch.setattr(matplotlib.axes.Axes, "plot", lambda ax, x, y, **kw: drawn.append((list(x), kw["label"]))
                        or plot(ax, x, y, **kw))
    monkeypatch.setattr(matplotlib.axes.Axes, "set_xticks",
                        lambda ax, at, labels=None, **kw: ticks.append(list(labels)) or set_xticks(ax, at, labels, **kw))
    held = {"first_heldout": {"8": {"exact": 0.75, "chains": 4}, "64": {"exact": 0.5, "chains": 4}}}
    path = plot_exact([report(0, held), report(1)], tmp_path / "exact.png")
    assert path.is_file() and path.stat().st_size > 0
    assert ([8, 64], "seed 0, just after its first held-out event") in drawn
    assert ([8, 64, 4096], "seed 1") in drawn and len(drawn) == 3  # seed 1 holds nothing out: no empty line
    assert ticks == [["8", "64", "4,096"]]


def test_a_report_without_held_out_events_has_no_first_held_out_figure():
    assert first_heldout(report(0)) == {}
    assert first_heldout(report(0, {"by_end_seen": {}, "first_heldout": {}})) == {}

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


def test_the_gate_figure_names_each_batch_by_its_colour_and_each_seed_by_its_style(tmp_path, monkeypatch):
    """The legend says one colour per batch with how many runs it draws, then one line style per seed:
    never a batch's entry drawn in one seed's style, as if it were one line."""
    import matplotlib.axes
    from matplotlib.patches import Patch

    from oracle.plots import plot_gate

    legends = []
    legend = matplotlib.axes.Axes.legend
    monkeypatch.setattr(matplotlib.axes.Axes, "legend", lambda ax, *a, **kw: legends.append(kw["handles"])
                        or legend(ax, *a, **kw))
    run = lambda seed, right: {"seed": seed, "comparison": {"all_right": {"8": right, "64": right}}}  # noqa: E731
    path = plot_gate({"gate": [run(0, 0.2), run(1, 0.1), run(0, 0.3)], "tree": [run(0, 1.0), run(1, 1.0)],
                      "none": [{"seed": 0, "comparison": {}}]}, tmp_path / "gate.png")
    assert path.stat().st_size > 0
    handles = legends[-1]
    assert [h.get_label() for h in handles if isinstance(h, Patch)] == ["gate (3 runs)", "tree (2 runs)"]
    assert [h.get_label() for h in handles if not isinstance(h, Patch)] == ["seed 0", "seed 1"]

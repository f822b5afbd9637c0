"""A run's figures: every length labelled, and on held-out events the figure just after the first
one drawn beside the end-of-chain figure."""
from __future__ import annotations

import math

from tracker.plots import first_heldout, plot_exact


def report(seed: int, beyond: dict | None = None) -> dict:
    return {"arch": "recurrence", "objective": "combo", "seed": seed, "config": {},
            "exact": {"8": 1.0, "64": 0.9, "4096": 0.5}, **({"beyond": beyond} if beyond else {})}


def test_the_exact_figure_labels_every_length_and_shows_the_first_held_out_event(tmp_path, monkeypatch):
    import matplotlib.axes

    drawn, ticks = [], []
    plot, set_xticks = matplotlib.axes.Axes.plot, matplotlib.axes.Axes.set_xticks
    # the lengths drawn, undone of the small shift that sets seeds apart (under a quarter of an octave)
    monkeypatch.setattr(matplotlib.axes.Axes, "plot", lambda ax, x, y, **kw: drawn.append(
        ([2 ** round(math.log2(n)) for n in x], kw["label"])) or plot(ax, x, y, **kw))
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


# ---- every promised figure readable: what each says, read off the matplotlib objects, not pixels ----

import json  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture
def saved(monkeypatch):
    """Every figure saved while the test runs (closed, but its artists still readable)."""
    import matplotlib.figure

    figures = []
    savefig = matplotlib.figure.Figure.savefig
    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", lambda fig, *a, **kw: figures.append(fig)
                        or savefig(fig, *a, **kw))
    return figures


def texts(ax) -> list[str]:
    return [t.get_text() for t in ax.texts]


def prove_report(per_solved: dict, **extra) -> dict:
    rows = {str(d): {"success": 0.0 if c is None else 1.0, "kernel_calls_per_solved": c} for d, c in per_solved.items()}
    return {"searcher": "kernel-uniform", "budget_calls": 50, "problems": 2 * len(rows), "by_distance": rows, **extra}


def test_a_searcher_that_solved_nothing_says_so_on_an_axis_spanning_the_distances(tmp_path):
    from prover.plots import plot_prove

    fig = plot_prove(prove_report({2: None, 4: None, 8: None}, domain={"name": "programs", "machine": "bits"}),
                     tmp_path / "prove.png")
    assert (tmp_path / "prove.png").stat().st_size > 0
    left, right = fig.axes
    assert any(t.startswith("solved none of 6 problems") for t in texts(right))
    assert right.get_xlim()[0] < 2 and right.get_xlim()[1] > 8  # the problems' distances, not -0.04 to 0.04
    assert list(right.get_xticks()) == [2, 4, 8] and not right.lines
    assert fig._suptitle.get_text() == "kernel-uniform (budget 50, programs, bits)"


def test_the_prove_figure_draws_the_solved_distances_and_names_the_unsolved(tmp_path):
    from prover.plots import plot_prove

    fig = plot_prove(prove_report({2: 3.0, 4: 7.5, 8: None}, prefix=3), tmp_path / "prove.png")
    right = fig.axes[1]
    assert [list(line.get_xdata()) for line in right.lines] == [[2, 4]] and right.get_yscale() == "log"
    assert texts(right) == ["solved none at distance 8"]
    assert fig._suptitle.get_text() == "kernel-uniform (budget 50, prefix 3)"


def test_the_prove_figure_draws_the_baseline_beside_the_searcher_against_walk_lengths(tmp_path):
    from prover.plots import plot_prove

    baseline = prove_report({2: 1.0, 4: 1.0})
    fig = plot_prove(prove_report({2: 40.0, 4: None}, distance_measure="walk length",
                                  baseline={"searcher": "short-history", "by_distance": baseline["by_distance"]}),
                     tmp_path / "prove.png")
    left, right = fig.axes
    assert left.get_xlabel() == right.get_xlabel() == "walk length"
    assert [line.get_label() for line in left.lines] == ["kernel-uniform", "short-history (baseline)"]
    assert [list(line.get_ydata()) for line in right.lines] == [[40.0], [1.0, 1.0]]


def programs_report(seed: int, **extra) -> dict:
    return {"arch": "registers", "objective": "combo", "seed": seed, "config": {},
            "exact": {"16": 1.0, "64": 0.5, "256": 0.25},
            "dataset": {"path": None, "domain": {"name": "programs", "machine": "bits"}}, **extra}


def test_a_programs_exact_figure_counts_statements_and_draws_the_floor(tmp_path, saved):
    from tracker.plots import plot_exact

    plot_exact([programs_report(0, floor={"16": 0.03, "64": 0.02, "256": 0.0})], tmp_path / "exact.png")
    ax = saved[-1].axes[0]
    assert ax.get_xlabel() == "program length (statements)"
    floor = [line for line in ax.lines if line.get_label() == "floor: each variable's commonest value"]
    assert len(floor) == 1 and floor[0].get_linestyle() == "--" and list(floor[0].get_ydata()) == [0.03, 0.02, 0.0]
    assert "floor: each variable's commonest value" in [t.get_text() for t in ax.get_legend().get_texts()]


def test_a_chain_exact_figure_counts_events_and_draws_no_floor_it_does_not_have(tmp_path, saved):
    from tracker.plots import plot_exact

    plot_exact([report(0)], tmp_path / "exact.png")
    ax = saved[-1].axes[0]
    assert ax.get_xlabel() == "chain length (events)"
    assert not [line for line in ax.lines if line.get_label().startswith("floor")]


def test_a_training_report_on_programs_draws_its_dataset_s_floor(tmp_path):
    from chains.manifest import dataset_id
    from tracker.plots import floor_of

    manifest = {"format": "programs", "seed": 3, "files": {"test-16.jsonl": {"sha256": "ab"}},
                "floor": {"test-16": 0.05, "test-64": 0.0}}
    (tmp_path / "manifest.json").write_text(json.dumps(manifest))
    dataset = {"path": str(tmp_path), "dataset_id": dataset_id(manifest)}
    assert floor_of({"dataset": dataset}) == {"16": 0.05, "64": 0.0}
    assert floor_of({"dataset": {**dataset, "dataset_id": "another"}}) == {}  # the dataset changed since
    assert floor_of({"dataset": {"path": str(tmp_path / "gone")}}) == {}
    assert floor_of({"beside_exact": {"floor": {"16": 0.1}}}) == {"16": 0.1}  # a stream report's


def test_each_seed_has_its_own_marker_and_line_style_and_the_legend_says_which(tmp_path, saved):
    """The README's figure (the tracker comparison's exact.png): seeds exact on one line stay told apart."""
    from tracker.plots import plot_exact

    runs = [report(s) for s in (0, 1, 2)] + [{**report(0), "objective": "plain"}]
    plot_exact(runs, tmp_path / "exact.png")
    fig = saved[-1]
    combo = fig.axes[0]
    styles = {(line.get_marker(), line.get_linestyle()) for line in combo.lines}
    assert len(styles) == 3
    assert len({tuple(line.get_xdata()) for line in combo.lines}) == 3  # set a little apart along x
    assert combo.get_title() == "combo (seeds 0, 1, 2)" and fig.axes[1].get_title() == "plain (seed 0)"
    legend = fig.legends[0]
    assert [t.get_text() for t in legend.get_texts()] == ["seed 0", "seed 1", "seed 2"]
    assert len({(h.get_marker(), h.get_linestyle()) for h in legend.legend_handles}) == 3


def analysis_report(run: str) -> dict:
    text = (ROOT / "results" / "mechanism-runs" / "recurrence-combo-s2" / "analysis.json").read_text()
    return {**json.loads(text), "run": {"run": run}}


def test_the_analysis_figure_names_the_run_not_its_path_and_its_legend_covers_no_bar(tmp_path, saved):
    from tracker.analysis import plot_analysis

    plot_analysis(analysis_report("/an/absolute/path/runs/combo-s2"), tmp_path / "analysis.png")
    fig = saved[-1]
    assert fig._suptitle.get_text() == "combo-s2: what the state is"
    assert all(ax.get_legend() is None for ax in fig.axes[1:])  # no legend over the residuals' bars
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["permutation", "fitted", "rotation"]
    bars = fig.axes[2]
    assert fig.legends[0].get_window_extent().y1 <= bars.get_tightbbox().y0 + 1  # below the panels


def test_the_domain_analysis_figure_names_the_run_not_its_path(tmp_path, saved):
    from tracker.domain_analysis import plot_domain_analysis

    kind = {"interpreter": 0.1, "fitted": 0.01, "rotation": 0.5}
    sv = {"min": 0.1, "p05": 0.2, "median": 1.0, "p95": 2.0, "max": 3.0, "maps": 4}
    report = {"run": {"run": "/an/absolute/path/runs/programs-s0"}, "domain": {"name": "programs"},
              "dimension": {"curve": [0.5, 1.0], "values_curve": [0.4, 1.0], "pc95": 2, "pc99": 2},
              "clusters": {"curve": {"clusters": [1, 2], "purity": [0.5, 1.0]}, "states": 2,
                           "purity_at_states": 1.0, "fewest_pure": 2},
              "statements": {"by_kind": {"set": kind, "not": kind}, "singular_values": sv},
              "affine": {"r2": 0.9, "read_back": {"states": 0.5}}}
    plot_domain_analysis(report, tmp_path / "analysis.png")
    fig = saved[-1]
    assert fig._suptitle.get_text() == "programs-s0: what the state is (programs)"
    assert all(ax.get_legend() is None for ax in fig.axes[1:])
    assert [t.get_text() for t in fig.legends[0].get_texts()] == ["interpreter", "fitted", "rotation"]

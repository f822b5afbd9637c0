"""The plane through three runs' weights (tracker.plane, analyse-tracker --plane): the plane's
geometry on random points; on three tiny runs of one seed (plain, nextlat, combo) trained on a
dataset certified here, the runs' own points are their checkpoints' losses and exact match, the
grid reproduces a run where it passes through it, and the command writes its report and figure
and refuses, in one line, runs that span no plane or come from different datasets."""
from __future__ import annotations

import json
import math

import numpy as np
import pytest
import torch
import torch.nn.functional as F
from click.testing import CliRunner
from hypothesis import assume, given, settings, strategies as st
from hypothesis.extra.numpy import arrays

from chains.rewrite.dataset import DatasetSpec
from leanbridge.certify import certify_dataset
from tracker.analysis_cli import main as analyse_tracker
from tracker.data import load_dataset
from tracker.evaluate import EvalConfig, evaluate
from tracker.inference import load_run
from tracker.plane import PlaneConfig, PlaneError, axis, plane_report, plane_through
from tracker.train import TrainConfig, train

pytestmark = pytest.mark.usefixtures("one_thread_module")

OBJECTIVES = {"A": "plain", "B": "nextlat", "C": "combo"}
CONFIG = PlaneConfig(grid=3, train_chains=16, eval_chains=8, length=8)


def points(n: int):
    return arrays(np.float64, n, elements=st.floats(-10, 10, allow_nan=False, allow_infinity=False))


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 30).flatmap(lambda n: st.tuples(points(n), points(n), points(n))))
def test_the_plane_has_orthonormal_axes_and_holds_the_three_points(abc):
    a, b, c = (torch.from_numpy(p) for p in abc)
    try:
        plane = plane_through(a, b, c, ["a", "b", "c"])
    except PlaneError:
        ab = float((b - a).norm())
        off = (c - a) - ((c - a) @ (b - a)) / max(ab ** 2, 1e-300) * (b - a)  # C off the line through A and B
        assert ab == 0 or float(off.norm()) <= 1e-5 * max(float((c - a).norm()), ab)
        assume(False)
    u, v = plane.u, plane.v
    assert abs(float(u.norm()) - 1) < 1e-9 and abs(float(v.norm()) - 1) < 1e-9 and abs(float(u @ v)) < 1e-9
    (xa, ya), (xb, yb), (xc, yc) = plane.coordinates
    assert (xa, ya, yb) == (0.0, 0.0, 0.0) and xb > 0 and yc > 0
    scale = 1e-9 * (1 + float(torch.stack([a, b, c]).abs().max()))
    assert torch.allclose(plane.point(xb, yb), b, atol=scale) and torch.allclose(plane.point(xc, yc), c, atol=scale)


def test_three_points_on_one_line_span_no_plane():
    a, b = torch.zeros(6, dtype=torch.float64), torch.arange(6, dtype=torch.float64)
    for c in (a + 2.5 * (b - a), b, a):
        with pytest.raises(PlaneError, match="collinear"):
            plane_through(a, b, c, ["a", "b", "c"])
    with pytest.raises(PlaneError, match="same weights"):
        plane_through(a, a, b, ["a", "b", "c"])


def test_the_grid_spans_the_runs_and_the_margin():
    assert axis([0.0, 2.0, 1.0], 0.25, 5) == pytest.approx([-0.5, 0.25, 1.0, 1.75, 2.5])
    assert axis([0.0, 0.0, 3.0], 0.0, 4) == pytest.approx([0.0, 1.0, 2.0, 3.0])


# ---- on three trained runs --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    """Three tiny runs of one seed on one dataset certified here (A plain, B nextlat, C combo), and a
    run of the same model on another dataset ("other")."""
    root = tmp_path_factory.mktemp("plane")
    for name, seed in (("data", 0), ("other-data", 1)):
        certify_dataset(DatasetSpec(chains=24, test_lengths=(8,), test_chains=8, seed=seed), root / name,
                        root / "store.sqlite")
    out = {"root": root}
    for name, objective, data in (*((n, o, "data") for n, o in OBJECTIVES.items()), ("other", "plain", "other-data")):
        config = TrainConfig(data=str(root / data), objective=objective, width=16, steps=6, batch_chains=4,
                             checkpoint_every=6, warmup_steps=2)
        train(config, root / name, show_progress=False, eval_config=EvalConfig(pair_lengths=(8,)))
        out[name] = root / name
    return out


@pytest.fixture(scope="module")
def report(runs):
    return plane_report([runs[n] for n in "ABC"], None, CONFIG)


def flat(run) -> torch.Tensor:
    return torch.cat([t.reshape(-1).double() for t in run.model.state_dict().values() if t.is_floating_point()])


@pytest.mark.lean
def test_the_runs_points_are_their_checkpoints(runs, report):
    data = load_dataset(runs["root"] / "data")
    n = CONFIG.train_chains
    items = torch.cat([data.train["chain_items"][:n], data.train["partner_items"][:n].flatten(0, 1)]).long()
    trees = torch.cat([data.train["chain_trees"][:n], data.train["partner_trees"][:n].flatten(0, 1)]).long()
    mask = items != 0
    for name, objective in OBJECTIVES.items():
        model = load_run(runs[name]).model
        with torch.no_grad():
            logits = model.readout(model(items)[0])  # (H, T, P, V)
            ce = F.cross_entropy(logits[mask].flatten(0, -2), data.tree_tokens[trees.clamp(min=0)][mask].flatten())
        exact = evaluate(model, data, EvalConfig(max_chains=CONFIG.eval_chains, pair_lengths=()))["exact"]["8"]
        at = report["at_runs"][name]
        assert report["runs"][name]["objective"] == objective
        assert at["ce"] == pytest.approx(ce.item(), rel=1e-6) and report["valleys"][name] == at["ce"]
        assert at["exact"] == exact
        assert at["nerode"] == pytest.approx(at["ce"] + at["equivalence"] + at["nextlat"], rel=1e-6)
        assert report["lifts"][name] == {"nerode": at["nerode"], "equivalence": at["equivalence"]}
    assert report["nextlat_head"] == "C"  # the combo run's head reads every point's nextlat
    assert len({report["valleys"][n] for n in "ABC"}) == 3


@pytest.mark.lean
def test_the_runs_coordinates_are_their_distances(runs, report):
    a, b, c = (flat(load_run(runs[n])) for n in "ABC")
    coords = {n: report["runs"][n]["coordinates"] for n in "ABC"}
    assert coords["A"] == [0.0, 0.0] and coords["B"][1] == 0.0 and coords["C"][1] > 0
    assert coords["B"][0] == pytest.approx(float((b - a).norm()), rel=1e-9)
    assert math.hypot(*coords["C"]) == pytest.approx(float((c - a).norm()), rel=1e-9)
    assert math.dist(coords["B"], coords["C"]) == pytest.approx(float((c - b).norm()), rel=1e-9)
    assert report["axes"]["parameters"] == len(a)


@pytest.mark.lean
def test_every_cell_of_the_grid_is_a_finite_figure(report):
    xs, ys = report["grid"]["x"], report["grid"]["y"]
    assert len(xs) == len(ys) == CONFIG.grid
    for figure in ("ce", "equivalence", "nextlat", "nerode"):
        cells = [v for row in report["heights"][figure] for v in row]
        assert len(cells) == CONFIG.grid ** 2 and all(isinstance(v, float) and math.isfinite(v) for v in cells), figure
    cells = [v for row in report["exact"] for v in row]
    assert len(cells) == CONFIG.grid ** 2 and all(0 <= v <= 1 for v in cells)
    span = [report["runs"][n]["coordinates"] for n in "ABC"]
    assert xs[0] < min(p[0] for p in span) and xs[-1] > max(p[0] for p in span) and ys[0] < 0
    assert report["dataset"]["dataset_id"] and report["lean"]["githash"] and report["package_version"]


@pytest.mark.lean
def test_the_grid_passes_through_the_runs_without_a_margin(runs, report):
    tight = plane_report([runs[n] for n in "ABC"], None, PlaneConfig(grid=3, margin=0.0, train_chains=16,
                                                                      eval_chains=8, length=8))
    ce = tight["heights"]["ce"]  # rows y: A at (0, 0), B at (|B - A|, 0), the corners of the first row
    assert ce[0][0] == report["at_runs"]["A"]["ce"]
    assert ce[0][-1] == pytest.approx(report["at_runs"]["B"]["ce"], rel=1e-5)
    assert tight["exact"][0][0] == report["at_runs"]["A"]["exact"]


def invoke(*args: str):
    return CliRunner().invoke(analyse_tracker, [*map(str, args), "--quiet"])


@pytest.mark.lean
def test_the_command_writes_the_plane_and_refuses_in_one_line(runs, tmp_path):
    out = tmp_path / "plane"
    result = invoke(runs["A"], "--plane", runs["B"], runs["C"], "--grid", "2", "--length", "8", "--train-chains", "8",
                    "--eval-chains", "4", "--out", out)
    assert result.exit_code == 0, result.output
    written = json.loads((out / "plane.json").read_text())
    assert sorted(p.name for p in out.iterdir()) == ["plane.json", "plane.png"] and (out / "plane.png").stat().st_size
    assert written["config"]["grid"] == 2 and len(written["exact"]) == 2 and written["batch"]["chains"] == 8
    cases = [((runs["A"], "--plane", runs["B"], runs["other"]), "different datasets"),
             ((runs["A"], "--plane", runs["B"], runs["B"]), "collinear"),
             ((runs["A"], "--plane", runs["A"], runs["B"]), "collinear"),
             ((runs["A"], "--plane", runs["B"], runs["C"], "--length", "64"), "no test split of 64"),
             ((runs["A"], "--plane", runs["B"], runs["C"], "--chains", "8"), "--chains: not read with --plane"),
             ((runs["A"], "--grid", "4"), "--grid: read only with --plane")]
    for args, words in cases:
        result = invoke("--length", "8", *args, "--out", tmp_path / "refused")  # a --length in args comes last
        assert result.exit_code != 0 and words in result.output, result.output
        assert "Traceback" not in result.output and len(result.output.strip().splitlines()) == 1
        assert not (tmp_path / "refused").exists()

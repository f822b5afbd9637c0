"""The loss surface on the plane through three trained runs' weights (a cut through weight
space): can the training loss alone pick the exact tracker?

Three ``train-tracker`` runs of one model on one dataset (in the seed's cut: ordinary training,
which drifts; + NextLat; + NextLat + invariance, both exact) are three points θA, θB, θC of weight
space, each run's floating weights flattened in its state dict's key order. The plane through
them has its origin at θA, first axis u = (θB − θA)/|θB − θA| and second axis v, the part of
θC − θA orthogonal to u, normalised (Gram–Schmidt; no filter normalisation). The runs sit at
A (0, 0), B (|θB − θA|, 0) and C (⟨θC − θA, u⟩, ⟨θC − θA, v⟩). A grid of ``grid`` × ``grid``
points covers their coordinates and ``margin`` of their extent on each side; at every point
θA + x u + y v one model is read for

- its heights, on one fixed batch (the first ``train_chains`` training chains with their certified
  partners, laid out as training lays out a batch): ``ce``, the cross-entropy (plain's training
  loss); ``equivalence``, 1 − centred cosine between each chain's end view and its partners'
  (unweighted: mu = 1, no schedule); ``nextlat``, NextLat's error under one fixed head (run C's,
  else run B's; None when neither has one); ``nerode``, the sum of those present;
- its colour: exact match after the last event of the first ``eval_chains`` held-out chains of
  ``length`` events.

The same figures at the three runs' own checkpoints give each valley's depth (``ce``) and how far
the Nerode terms lift it (``nerode``, ``equivalence``). Grids are lists of rows: row i is y[i],
column j is x[j].
"""
from __future__ import annotations

import copy
import json
import math
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path

import numpy as np
import torch

from chains.files import staged_files
from chains.version import package_version
from tracker.build import build_model
from tracker.config import TrainConfig
from tracker.data import Batch, TrackerData, load_dataset
from tracker.evaluate import EvalConfig, end_views, right_trees, torch_threads
from tracker.layouts import PAD_ID, laid_out
from tracker.losses import NextLatHead, tracker_losses
from tracker.models import ModelConfig, Tracker
from tracker.train import IGNORED
from training.checkpoint import RunCheckpoint
from training.plots import pyplot

NAMES = ("A", "B", "C")
TERMS = ("ce", "equivalence", "nextlat", "nerode")  # the heights
FIGURES = (*TERMS, "exact")  # what every point is read for
# the model settings that only set the initial weights: runs may differ in them and still be one model
INIT_ONLY = ("slot_init", "embed_init_std")
# C nearer the line through θA and θB than this share of the larger of |θC − θA|, |θB − θA|: no plane
COLLINEAR = 1e-6
EXACT = 0.99  # the colour's second layer: exact at least this
MISFIT = (KeyError, AttributeError, IndexError, RuntimeError, ValueError)  # a checkpoint's weights that do not fit

Progress = Callable[[str], None]


class PlaneError(ValueError):
    """Three runs that span no plane, or that are not one model on one dataset; one line naming them."""


@dataclass(frozen=True)
class PlaneConfig:
    grid: int = 25  # points per axis
    margin: float = 0.25  # the grid spans the runs' coordinates and this share of their extent on each side
    train_chains: int = 256  # the heights are read on the first this many training chains and their partners
    eval_chains: int = 128  # the colour is read on the first this many held-out chains
    length: int = 1024  # events of the held-out chains (one of the dataset's test lengths)
    seed: int = 0  # the generator handed to the loss terms (the terms measured draw nothing from it)
    threads: int | None = None  # torch threads [None: the caller's]

    def __post_init__(self) -> None:
        if self.grid < 2 or self.train_chains < 1 or self.eval_chains < 1 or self.length < 1:
            raise PlaneError("grid must be >= 2; train_chains, eval_chains and length >= 1")
        if not self.margin >= 0:
            raise PlaneError(f"margin must be >= 0, not {self.margin}")


# ---- the three runs, one model on one dataset ------------------------------------------------------


def read_runs(dirs: Sequence[Path]) -> list[RunCheckpoint]:
    """The checkpoints of the three runs; PlaneError naming two of them when they are not one model
    (settings other than the initial weights' scales, or the cross-entropy's positions) or were
    trained on different datasets, or naming a run whose items are read by a frozen code model."""
    runs = [RunCheckpoint.read(d, "tracker", TrainConfig) for d in dirs]
    for run in runs:
        if run.config.encoder:
            raise PlaneError(f"tracker {run.run_dir} reads its items through a frozen code model "
                             f"({run.config.encoder}); the plane reads runs with their own item embedding only")
    first = runs[0]
    for run in runs[1:]:
        differ = [f"{f.name} {getattr(first.config.model, f.name)!r} vs {getattr(run.config.model, f.name)!r}"
                  for f in fields(ModelConfig) if f.name not in INIT_ONLY
                  and getattr(first.config.model, f.name) != getattr(run.config.model, f.name)]
        if first.config.ce_positions != run.config.ce_positions:
            differ.append(f"ce_positions {first.config.ce_positions!r} vs {run.config.ce_positions!r}")
        if differ:
            raise PlaneError(f"runs {first.run_dir} and {run.run_dir} are not one model ({'; '.join(differ)}); "
                             "the plane passes through three runs of one architecture and shape")
        if run.trained_on["dataset_id"] != first.trained_on["dataset_id"]:
            raise PlaneError(f"runs {first.run_dir} and {run.run_dir} were trained on different datasets "
                             f"({first.trained_on.get('path')}, {run.trained_on.get('path')}); the plane compares "
                             "runs of one dataset")
    return runs


def plane_data(run: RunCheckpoint, data: Path | None) -> TrackerData:
    """The dataset the runs were trained on (``data``, or where ``run`` recorded it), its readout
    targets laid out as training reads them (``tracker.train.Trainer``: the run's layout, and
    positions off the tree ignored when its cross-entropy reads the tree's own positions only);
    PlaneError when it is not there or is another dataset (DatasetError when it is no certified dataset)."""
    trained_on = run.trained_on
    where = Path(data if data is not None else trained_on.get("path") or "")
    if data is None and not where.is_dir():
        raise PlaneError(f"tracker {run.run_dir} was trained on {where}, which is not there; pass its dataset (--data)")
    loaded = load_dataset(where, corrupted_checker="corrupt_partners" in trained_on)  # DatasetError: one line
    if loaded.identity["dataset"]["dataset_id"] != trained_on["dataset_id"]:
        raise PlaneError(f"dataset {where} is not the one the runs were trained on ({trained_on.get('path')})")
    targets = laid_out(loaded.tree_tokens, run.config.layout)  # (R, P) readout targets
    if run.config.ce_positions == "tree":
        targets = torch.where(targets == PAD_ID, IGNORED, targets)
    return replace(loaded, tree_tokens=targets)


def restored(run: RunCheckpoint, data: TrackerData) -> Tracker:
    """The run's model with its checkpoint's weights, built for ``data`` as training builds it (the
    caller's random state kept: building draws initial weights that the checkpoint replaces)."""
    def build() -> torch.nn.Module:
        return build_model(run.config.model, data.item_tokens, data.vocab.size, data.vocab.n_out, data.tree_len,
                           domain=data.vocab.domain)

    with torch.random.fork_rng(devices=[]):
        return run.restored_model(build, "its weights do not fit its settings", MISFIT)


def fixed_head(runs: Sequence[RunCheckpoint], model: Tracker) -> tuple[str | None, NextLatHead | None]:
    """The NextLat head every point's ``nextlat`` is read with: run C's, else run B's, with its name;
    (None, None) when neither run trained one."""
    for name, run in zip(("C", "B"), (runs[2], runs[1])):
        state = run.blob.get("nextlat_head")
        if state:
            with torch.random.fork_rng(devices=[]), run.fitting("its NextLat head does not fit its settings", MISFIT):
                head = NextLatHead(model.view_width, run.config.width)
                head.load_state_dict(state)
            return name, head.eval()
    return None, None


# ---- the plane ---------------------------------------------------------------------------------------


def floating(model: torch.nn.Module) -> dict[str, torch.Tensor]:
    """The model's floating state-dict entries in its key order; each shares its storage with the
    model's own weight, so writing into it sets the model's weight."""
    return {key: value for key, value in model.state_dict().items() if value.is_floating_point()}


def flat_weights(models: Sequence[Tracker], dirs: Sequence[Path]) -> list[torch.Tensor]:
    """θ (P,) of each model in float64; PlaneError when two models' weights differ in name or shape."""
    shapes = [{key: tuple(t.shape) for key, t in floating(m).items()} for m in models]
    for shape, where in zip(shapes[1:], dirs[1:]):
        if list(shape.items()) != list(shapes[0].items()):
            key = next((k for k in {**shapes[0], **shape} if shapes[0].get(k) != shape.get(k)), "the key order")
            raise PlaneError(f"runs {dirs[0]} and {where} have weights of other shapes ({key}: "
                             f"{shapes[0].get(key)} vs {shape.get(key)}); the plane passes through one model's weights")
    return [torch.cat([t.reshape(-1).double() for t in floating(m).values()]) for m in models]


@dataclass(frozen=True)
class Plane:
    """The plane through three points of weight space: origin θA and orthonormal axes u, v (P,), float64."""

    origin: torch.Tensor
    u: torch.Tensor
    v: torch.Tensor
    coordinates: tuple[tuple[float, float], ...]  # A, B and C in (x, y)

    def point(self, x: float, y: float) -> torch.Tensor:
        return self.origin + x * self.u + y * self.v


def plane_through(a: torch.Tensor, b: torch.Tensor, c: torch.Tensor, dirs: Sequence[Path]) -> Plane:
    """The plane through θA, θB, θC (P,) (module docstring); PlaneError when they lie on one line."""
    ab = float((b - a).norm())
    if ab == 0:
        raise PlaneError(f"runs {dirs[0]} and {dirs[1]} have the same weights, so the three runs are collinear "
                         "and span no plane; pass three runs with different weights")
    u = (b - a) / ab
    ac = c - a
    off = ac - (ac @ u) * u
    off = off - (off @ u) * u  # a second pass of Gram–Schmidt keeps v orthogonal to u at float64's precision
    across = float(off.norm())
    if across <= COLLINEAR * max(float(ac.norm()), ab):
        raise PlaneError(f"runs {', '.join(map(str, dirs))} are collinear in weight space (the third lies on the line "
                         "through the first two) and span no plane; pass three runs not on one line")
    v = off / across
    return Plane(a, u, v, ((0.0, 0.0), (ab, 0.0), (float(ac @ u), across)))


def axis(values: Sequence[float], margin: float, points: int) -> list[float]:
    """``points`` evenly spaced from min − margin · extent to max + margin · extent of ``values``."""
    lo, hi = min(values), max(values)
    pad = margin * (hi - lo)
    return np.linspace(lo - pad, hi + pad, points).tolist()


def load_point(live: dict[str, torch.Tensor], theta: torch.Tensor) -> None:
    """Write θ (P,) into a model's floating weights ``live`` (``floating``), in their key order."""
    at = 0
    with torch.no_grad():
        for tensor in live.values():
            tensor.copy_(theta[at: at + tensor.numel()].view(tensor.shape))
            at += tensor.numel()


# ---- what a point is read for ------------------------------------------------------------------------


def first_batch(data: TrackerData, chains: int) -> Batch:
    """The first ``chains`` training chains (all, when the dataset holds fewer) and their K partners,
    laid out as ``tracker.data.sample_batch`` lays out a drawn batch."""
    train = data.train
    n = min(chains, train["chain_items"].shape[0])
    pi, pt = train["partner_items"][:n], train["partner_trees"][:n]  # (B, K, T)
    items = torch.cat([train["chain_items"][:n], pi.reshape(-1, pi.shape[-1])]).long()
    trees = torch.cat([train["chain_trees"][:n], pt.reshape(-1, pt.shape[-1])]).long()
    return Batch(items=items, trees=trees, chains=n, partners=pi.shape[1])


@dataclass(frozen=True)
class Bench:
    """What every point is read on: the dataset (its targets as training reads them), the fixed batch,
    the terms measured (``terms``: settings whose objective has them, each at weight 1 from the first
    step), the NextLat head, and the held-out chains (items (N, T)) with their end trees (N,)."""

    data: TrackerData
    batch: Batch
    terms: TrainConfig
    head: NextLatHead | None
    items: torch.Tensor
    ends: torch.Tensor
    seed: int


def bench_for(config: TrainConfig, data: TrackerData, head: NextLatHead | None, plane: PlaneConfig,
              where: str) -> Bench:
    """The bench for runs of settings ``config`` on ``data``; PlaneError when the dataset has no test
    split of ``plane.length`` events."""
    split = data.tests.get(plane.length)
    if split is None:
        raise PlaneError(f"dataset {where} has no test split of {plane.length} events (it has "
                         f"{', '.join(map(str, sorted(data.tests))) or 'none'}); pass --length")
    batch = first_batch(data, plane.train_chains)
    objective = {(True, True): "combo", (True, False): "invariance", (False, True): "nextlat",
                 (False, False): "plain"}[batch.partners > 0, head is not None]
    # the terms unweighted and unscheduled, and nothing of training's noise, dropout or extra terms
    terms = replace(config, objective=objective, mu=1.0, invariance_delay=0.0, invariance_ramp=0.0,
                    nextlat_weight=1.0, nextlat_delay=0.0, nextlat_ramp=0.0, slot_noise=0.0, dropout=0.0,
                    move_readout=0.0, table_sharpness=0.0)
    return Bench(data, batch, terms, head, split["chain_items"][: plane.eval_chains],
                 split["end"][: plane.eval_chains].long(), plane.seed)


def number(value: torch.Tensor | float | None) -> float | None:
    """A figure for the report: a float, None when missing or not finite (JSON has no NaN)."""
    if value is None:
        return None
    value = float(value)
    return value if math.isfinite(value) else None


def measure(model: Tracker, bench: Bench) -> dict[str, float | None]:
    """``model``'s heights on the bench's batch and its exact match on the held-out chains."""
    generator = torch.Generator().manual_seed(bench.seed)
    with torch.inference_mode():
        terms = tracker_losses(bench.terms, model, bench.head, bench.data, bench.batch, 0, generator)
        right = right_trees(model, end_views(model, bench.items, EvalConfig.chunk), bench.ends, bench.data)
    ce, equivalence, nextlat = terms["ce"], terms.get("invariance"), terms.get("nextlat")
    return {"ce": number(ce), "equivalence": number(equivalence), "nextlat": number(nextlat),
            "nerode": number(sum(t for t in (ce, equivalence, nextlat) if t is not None)),
            "exact": right.float().mean().item()}


def survey(probe: Tracker, plane: Plane, xs: Sequence[float], ys: Sequence[float], bench: Bench,
           progress: Progress | None) -> dict[str, list[list[float | None]]]:
    """Every figure on the grid (row i: y[i], column j: x[j]), ``probe`` set to each point in turn."""
    live = floating(probe)
    grids: dict[str, list[list[float | None]]] = {k: [] for k in FIGURES}
    for i, y in enumerate(ys):
        rows: dict[str, list[float | None]] = {k: [] for k in FIGURES}
        for x in xs:
            load_point(live, plane.point(x, y))
            for key, value in measure(probe, bench).items():
                rows[key].append(value)
        for key in FIGURES:
            grids[key].append(rows[key])
        if progress is not None:
            progress(f"plane: row {i + 1}/{len(ys)} read ({len(xs)} points)")
    return grids


# ---- the report and its figure -----------------------------------------------------------------------


def plane_report(dirs: Sequence[Path | str], data: Path | None = None, config: PlaneConfig = PlaneConfig(),
                 progress: Progress | None = None) -> dict:
    """The plane through the runs in ``dirs`` (A, B, C), read on ``data`` (default: the dataset they
    were trained on, where run A recorded it): the runs and their coordinates, the grid, every
    height and the colour on it, the same figures at the runs' own weights, the valleys and lifts,
    and the settings, dataset, Lean build and package that made it."""
    t0 = time.perf_counter()
    dirs = [Path(d) for d in dirs]
    if len(dirs) != 3:
        raise PlaneError(f"a plane passes through three runs, not {len(dirs)}")
    with torch_threads(config.threads):
        runs = read_runs(dirs)
        dataset = plane_data(runs[0], data)
        models = [restored(run, dataset) for run in runs]
        plane = plane_through(*flat_weights(models, dirs), dirs)
        head_of, head = fixed_head(runs, models[0])
        bench = bench_for(runs[0].config, dataset, head, config, str(data or runs[0].trained_on.get("path")))
        at_runs = {name: measure(model, bench) for name, model in zip(NAMES, models)}
        xs = axis([c[0] for c in plane.coordinates], config.margin, config.grid)
        ys = axis([c[1] for c in plane.coordinates], config.margin, config.grid)
        grids = survey(copy.deepcopy(models[0]), plane, xs, ys, bench, progress)
        threads = torch.get_num_threads()
    (_, _), (ab, _), (along, across) = plane.coordinates
    # the heights of the terms measured (an equivalence needs partners, a nextlat a head); the others None
    measured = {"ce", "nerode"} | {{"invariance": "equivalence", "nextlat": "nextlat"}[t] for t in bench.terms.terms}
    return {
        "runs": {name: {"run": str(run.run_dir), "objective": run.config.objective, "arch": run.config.arch,
                        "seed": run.config.seed, "steps": run.blob.get("step"), "coordinates": list(xy)}
                 for name, run, xy in zip(NAMES, runs, plane.coordinates)},
        "axes": {"parameters": int(plane.origin.numel()), "ab": ab, "c_along": along, "c_across": across,
                 "x": [xs[0], xs[-1]], "y": [ys[0], ys[-1]]},
        "grid": {"x": xs, "y": ys},
        "heights": {term: grids[term] if term in measured else None for term in TERMS},
        "exact": grids["exact"],
        "at_runs": at_runs,
        "valleys": {name: figures["ce"] for name, figures in at_runs.items()},
        "lifts": {name: {"nerode": figures["nerode"], "equivalence": figures["equivalence"]}
                  for name, figures in at_runs.items()},
        "nextlat_head": head_of,
        "batch": {"chains": bench.batch.chains, "partners": bench.batch.partners,
                  "histories": int(bench.batch.items.shape[0])},
        "held_out": {"length": config.length, "chains": int(bench.items.shape[0])},
        "config": asdict(config), "dataset": dataset.identity["dataset"], "lean": dataset.identity["lean"],
        "package_version": package_version(), "torch_version": torch.__version__, "torch_threads": threads,
        "seconds": round(time.perf_counter() - t0, 2),
    }


def write_plane(report: dict, out: Path) -> None:
    """plane.json and plane.png into ``out``, together or not at all."""
    with staged_files(out) as staging:
        (staging / "plane.json").write_text(json.dumps(report, indent=2) + "\n")
        plot_plane(report, staging / "plane.png")


def plot_plane(report: dict, path: Path) -> None:
    """Two panels over the plane: log10 of the height (ce; ce with the Nerode terms) as filled
    contours, the region exact at least ``EXACT`` hatched and outlined, the three runs marked."""
    plt = pyplot()
    from matplotlib.patches import Patch
    from matplotlib.patheffects import withStroke

    xs, ys = np.array(report["grid"]["x"]), np.array(report["grid"]["y"])
    exact = np.array(report["exact"], dtype=float)  # (y, x)
    terms = [k for k in ("equivalence", "nextlat") if report["heights"].get(k) is not None]
    panels = [("ce", "next-token loss (ce)"), ("nerode", " + ".join(["ce", *terms]))]
    fig, axes = plt.subplots(1, 2, figsize=(12.5, 5.2))
    for ax, (key, title) in zip(axes, panels):
        height = np.array([[np.nan if v is None else v for v in row] for row in report["heights"][key]], dtype=float)
        logged = np.ma.masked_invalid(np.log10(np.clip(height, 1e-12, None)))
        lo, hi = (float(logged.min()), float(logged.max())) if logged.count() else (0.0, 1.0)
        filled = ax.contourf(xs, ys, logged, levels=np.linspace(lo, hi if hi > lo else lo + 1, 21), cmap="viridis")
        fig.colorbar(filled, ax=ax, label=f"log10 {key}")
        if (exact >= EXACT).any():
            ax.contourf(xs, ys, exact, levels=[EXACT, 1.0 + 1e-9], colors="none", hatches=["///"])
        if (exact >= EXACT).any() and (exact < EXACT).any():
            ax.contour(xs, ys, exact, levels=[EXACT], colors="white", linewidths=1.2)
        for name, run in report["runs"].items():
            x, y = run["coordinates"]
            ax.plot(x, y, "o", color="red", markeredgecolor="white", markersize=7)
            ax.annotate(f"{name}: {run['objective']}", (x, y), textcoords="offset points", xytext=(6, 6), fontsize=8,
                        fontweight="bold", path_effects=[withStroke(linewidth=2.5, foreground="white")])
        ax.set(xlabel="u: toward B (weight-space distance)", ylabel="v: toward C, orthogonal to u",
               title=f"height: log10 {title}")
        ax.legend(handles=[Patch(facecolor="none", hatch="///", edgecolor="black",
                                 label=f"exact ≥ {EXACT} at {report['held_out']['length']:,} events")],
                  fontsize=7, loc="lower right")
    fig.suptitle(f"the plane through {', '.join(Path(r['run']).name for r in report['runs'].values())}; "
                 f"{report['batch']['chains']} training chains, {report['held_out']['chains']} held-out chains",
                 fontsize=9)
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)

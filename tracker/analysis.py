"""What the exact state is: a trained tracker's held-out states measured as a code.

A tracker of any architecture reads held-out histories (the test chains of its dataset, or fresh
ones drawn from a seed); the views of their end states (what the readout reads, ``TrackedRun.view``)
are the *code*, one row per state. Four measurements:

- **Clusters.** Single-linkage clustering in the centred-cosine distance the objectives use, cut
  at every number of clusters: the purity at as many clusters as there are trees (the share of
  states whose cluster's majority tree is their own), how many of those clusters hold one tree,
  and the fewest clusters at which the cut is pure, and at 99% purity. An exact state of a
  minimal automaton gives one pure cluster per tree.
- **Dimension.** Principal components to 95% and to 99% of the code's variance, beside the same
  figures for the trees' one-hot Polish strings.
- **Affine.** The R^2 of a least-squares affine map from a tree's one-hot Polish string (the
  tree token by token, each operator before its arguments; position x token, flattened) to the
  code of its states. With ``string="paths"`` the tree's string is its heap layout instead (the
  node at each path from the root), the string a ``paths`` readout names and the registers hold.
- **Rewrites.** Every event that applies to a state's tree moves the state one step (and a random
  second event a second step). On tier 1 an event permutes the Polish string; does it act on the
  code as that permutation's linear map? Prediction: decode the code to a string with a fitted
  affine map (least squares from codes to strings), permute it, encode with the affine map above.
  Against it: one fitted affine map per
  (lemma, position), and one rotation per (lemma, position) (orthogonal Procrustes); the singular
  values of the fitted maps say how far they are from rotations. A residual is the share of the
  next codes' variance a prediction misses: sum ||predicted - actual||^2 / sum ||actual - mean||^2.

Where the dataset the run was trained on is at its recorded path, the report also counts the end
trees its training never visited and gives the cross-fitted affine R² on their states alone.

A run trained on programs is measured by ``tracker.domain_analysis`` (its state read as its
variables' one-hot values; statements in place of rewrites); the fits and clusters both use are
``tracker.code_fits``'s.

Every fit is cross-fitted: the distinct trees are split in two halves by the seed, each map is
fitted on the states (or steps) that start at one half's trees and measured on the other's, and
the two measurements are pooled. Per-event maps are fitted in the code's principal subspace to
99% of its variance, with a small ridge; their predictions are measured in the whole code.
"""
from __future__ import annotations

import json
import random
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Protocol

import numpy as np
import torch

from chains.files import staged_files
from chains.manifest import dataset_id, manifest_path, read_manifest
from chains.rewrite.dataset import read_split, training_trees
from chains.rewrite.rules import Event, apply, successors
from chains.rewrite.space import Domain, domain_of
from chains.rewrite.trees import OPS, Tree, all_trees, count_trees, random_tree, tokens
from chains.version import package_version
from tracker.code_fits import (  # noqa: F401  (its callers import them from here)
    CHUNK, READ_BACK, READ_BACK_RCOND, RIDGE, STRINGS, AnalysisConfig, AnalysisError, Encoder, Progress,
    affine_apply, affine_fit, cluster_summary, components, in_chunks, procrustes, residual, spectrum,
    variance_curve)
from tracker.domain_analysis import analyse_domain_run, plot_domain_analysis, run_name
from tracker.inference import TrackedRun, checked_history, load_run
from tracker.layouts import heap_positions
from training.checkpoint import CHECKPOINT, load_checkpoint

Hist = tuple[Tree, tuple[Event, ...]]  # (start tree, events)


class Machine(Protocol):
    """What the analysis reads of a tracker: ``TrackedRun`` (through ``RunCodes``), or a stand-in."""

    domain: Domain

    def encode_batch(self, histories: Sequence[Hist]) -> list: ...

    def step_batch(self, states: Sequence, events: Sequence[Event]) -> list: ...

    def codes(self, states: Sequence) -> np.ndarray: ...  # (N, D) float64


class RunCodes:
    """A loaded run as a ``Machine``: its states, moved in batches, and their views as the code."""

    def __init__(self, run: TrackedRun) -> None:
        self.run, self.domain = run, run.domain

    def encode_batch(self, histories: Sequence[Hist]) -> list:
        return self.run.encode_batch(histories)

    def step_batch(self, states: Sequence, events: Sequence[Event]) -> list:
        return self.run.step_batch(states, events)

    def codes(self, states: Sequence) -> np.ndarray:
        model = self.run.model
        with torch.no_grad():
            if self.run.batched:
                rows = [model.view(torch.stack(list(states[i:i + CHUNK]))) for i in range(0, len(states), CHUNK)]
            else:
                rows = [torch.stack([self.run.view(s) for s in states])]
        return torch.cat(rows).double().cpu().numpy()  # (N, D)


# ---- histories ------------------------------------------------------------------------------------


def fresh_histories(domain: Domain, config: AnalysisConfig) -> list[Hist]:
    """``config.chains`` histories of ``config.length`` events drawn from ``config.seed``. On tier 1
    each ends at a chosen tree (every tree of the domain in turn, in a shuffled order, when there
    are no more trees than histories; else a uniformly random tree) and is a uniformly random
    backward walk from it, read forwards; on tier 2 a uniformly random walk from a random start tree."""
    rng = random.Random(f"analysis:{config.seed}")
    atoms = domain.atom_names
    if domain.tier == 1:
        every = count_trees(domain.atoms) <= config.chains
        order = sorted(all_trees(atoms), key=tokens) if every else []
        rng.shuffle(order)
        out = []
        for n in range(config.chains):
            tree = order[n % len(order)] if every else random_tree(rng, atoms)
            back = []
            for _ in range(config.length):
                event, tree = rng.choice(successors(tree, domain.rules))
                back.append(event.inverse)  # the event that undoes it, read forwards
            out.append((tree, tuple(reversed(back))))
        return out
    out = []
    for _ in range(config.chains):
        start = tree = random_tree(rng, atoms)
        events = []
        for _ in range(config.length):
            event, tree = rng.choice(successors(tree, domain.rules, domain.size_bound))
            events.append(event)
        out.append((start, tuple(events)))
    return out


def test_histories(data: Path, config: AnalysisConfig) -> tuple[Domain, list[Hist]]:
    """The first ``config.chains`` chains of the dataset's test split of ``config.length`` events."""
    manifest = read_manifest(Path(data))
    domain = domain_of(manifest, str(manifest_path(data)))
    path = Path(data) / f"test-{config.length}.jsonl"
    if not path.is_file():
        have = sorted(int(p.stem.split("-")[1]) for p in Path(data).glob("test-*.jsonl") if p.stem[5:].isdigit())
        raise AnalysisError(f"dataset {data} has no test split of {config.length} events "
                            f"(it has {', '.join(map(str, have)) or 'none'}); pass --length")
    out = []
    for _, record in read_split(path, domain):
        if len(out) == config.chains:
            break
        out.append((record.start, tuple(record.events)))
    return domain, out


# ---- the tree's string and the permutation an event induces on it ---------------------------------
# ``polish``: the tree token by token, each operator before its arguments, left-aligned, padding after.
# ``paths``: position i holds the node at heap position i (the root 0, the children of i at 2i + 1 and
# 2i + 2), padding where the tree has none; the readout layout of tracker.layouts' ``paths``.


def string_vocab(domain: Domain, string: str = "polish") -> tuple[tuple[str, ...], int]:
    """The one-hot string's tokens (padding first, the operators, the atoms) and its positions."""
    if string not in STRINGS:
        raise AnalysisError(f"unknown string {string!r}; choose one of {', '.join(STRINGS)}")
    tokens_at_most = 2 * domain.atoms - 1 if domain.tier == 1 else domain.size_bound
    positions = 2 ** ((tokens_at_most + 1) // 2) - 1 if string == "paths" else tokens_at_most
    return ("", *OPS, *domain.atom_names), positions


def laid_out(tree: Tree, string: str) -> dict[int, str]:
    """The tree's tokens by position in ``string``: {position: token}, padding left out."""
    polish = tokens(tree)
    return heap_positions(polish, lambda t: t in OPS) if string == "paths" else dict(enumerate(polish))


def one_hot(trees: Sequence[Tree], domain: Domain, string: str = "polish") -> np.ndarray:
    """Trees -> their one-hot strings (N, P, V) in ``string``'s positions, padding where no token is."""
    vocab, positions = string_vocab(domain, string)
    index = {t: i for i, t in enumerate(vocab)}
    out = np.zeros((len(trees), positions, len(vocab)))
    out[:, :, 0] = 1.0
    for n, tree in enumerate(trees):
        for i, tok in laid_out(tree, string).items():
            out[n, i, 0], out[n, i, index[tok]] = 0.0, 1.0
    return out


def induced_permutation(tree: Tree, event: Event, string: str = "polish") -> tuple[int, ...] | None:
    """The map of string positions the event makes of the tree's string: the token at new position
    i was at old position pi[i]; -1 where the new string has padding (``paths``: every position; ``polish``:
    the tree's tokens, the padding after them staying). None when the event changes the tree's size
    (or does not apply). Leaves are followed by name; an operator by its order among the operators
    of its symbol (two equal operators that swap leave the string as it was)."""
    counter = iter(range(10 ** 9))

    def tagged(t):  # every leaf renamed apart; the size-keeping rules never read leaf names
        i = next(counter)
        return f"#{i}" if isinstance(t, str) else (t[0], tagged(t[1]), tagged(t[2]))

    marked = tagged(tree)
    moved = apply(marked, event)
    if moved is None or len(tokens(moved)) != len(tokens(tree)):
        return None
    before, after = laid_out(marked, string), laid_out(moved, string)
    # the positions the map covers: the tree's tokens (polish), or through the deepest node before or
    # after (paths); past them both strings are padding
    pi = [-1] * (len(after) if string == "polish" else max(*before, *after) + 1)
    for op in OPS:
        old = sorted(i for i, t in before.items() if t == op)
        new = sorted(i for i, t in after.items() if t == op)
        for i, j in zip(new, old):
            pi[i] = j
    where = {t: i for i, t in before.items()}
    for i, t in after.items():
        if t.startswith("#"):
            pi[i] = where[t]
    return tuple(pi)


def permuted(strings: np.ndarray, perms: Sequence[tuple[int, ...]]) -> np.ndarray:
    """strings (N, P, V) with row n's positions moved by perms[n] (-1: padding; positions past it stay)."""
    out = strings.copy()
    pad = np.zeros(strings.shape[2])
    pad[0] = 1.0
    for n, pi in enumerate(perms):
        idx = np.array(pi, dtype=int)
        rows = strings[n, np.maximum(idx, 0)]
        rows[idx < 0] = pad
        out[n, :len(pi)] = rows
    return out


# ---- the analysis ---------------------------------------------------------------------------------


@dataclass
class _Steps:
    """Moves from the analysed states: row j starts at state ``source[j]`` (N_s,), takes ``events[j]``
    to tree ``trees[j]``; ``perms[j]`` is the permutation it makes of the string (None: none)."""

    source: np.ndarray
    events: list[Event]
    trees: list[Tree]
    perms: list[tuple[int, ...] | None]


def _first_steps(trees: Sequence[Tree], domain: Domain, string: str) -> _Steps:
    source, events, after, perms = [], [], [], []
    for i, tree in enumerate(trees):
        for event, nxt in successors(tree, domain.rules, domain.size_bound):
            source.append(i), events.append(event), after.append(nxt)
            perms.append(induced_permutation(tree, event, string))
    return _Steps(np.array(source, dtype=int), events, after, perms)


def _second_steps(first: _Steps, domain: Domain, rng: random.Random, string: str) -> _Steps:
    events, after, perms = [], [], []
    for tree in first.trees:
        event, nxt = rng.choice(successors(tree, domain.rules, domain.size_bound))
        events.append(event), after.append(nxt), perms.append(induced_permutation(tree, event, string))
    return _Steps(np.arange(len(first.trees)), events, after, perms)


def analyse(machine: Machine, histories: Sequence[Hist], config: AnalysisConfig = AnalysisConfig(),
            progress: Progress | None = None, visited: set[Tree] | None = None) -> dict:
    """The measurements of the module's docstring on the end states of ``histories`` (each
    replayed with the domain's rules first: HistoryError names a step that does not apply). With
    ``visited`` (the trees the run's training visited) the report also counts the end trees
    training never visited and gives the cross-fitted affine R² on their states alone."""
    say = progress or (lambda _: None)
    domain = machine.domain
    string_vocab(domain, config.string)  # an unknown string is refused before any work
    ends = [checked_history(start, events, domain)[-1] for start, events in histories]
    distinct = sorted(set(ends), key=tokens)
    if len(distinct) < 4:
        raise AnalysisError(f"{len(histories)} histories end at {len(distinct)} trees; the fits need at least 4")
    tree_id = {t: i for i, t in enumerate(distinct)}
    labels = [tree_id[t] for t in ends]
    rng = random.Random(f"analysis-folds:{config.seed}")
    halves = list(range(len(distinct)))
    rng.shuffle(halves)
    half_of_tree = np.zeros(len(distinct), dtype=int)
    half_of_tree[halves[1::2]] = 1
    half = half_of_tree[labels]  # (N,) the half of each state's tree

    say(f"reading {len(histories)} histories")
    states = in_chunks(list(histories), machine.encode_batch)
    codes = machine.codes(states)  # (N, D)
    strings = one_hot(ends, domain, config.string)  # (N, P, V)
    flat = strings.reshape(len(ends), -1)

    say(f"clustering {len(codes)} states")
    clusters = cluster_summary(codes, labels)
    pc95, pc99 = components(codes, (0.95, 0.99))
    s95, s99 = components(flat, (0.95, 0.99))
    dimension = {"code_width": int(codes.shape[1]), "pc95": pc95, "pc99": pc99, "string_pc95": s95,
                 "string_pc99": s99, "curve": variance_curve(codes), "string_curve": variance_curve(flat)}

    # the code's principal subspace to 99% of its variance, where the per-event maps read the code
    mean = codes.mean(0)
    basis = np.linalg.svd(codes - mean, full_matrices=False)[2][:pc99].T  # (D, k)
    # the string's affine map to the code, one per half of the trees
    enc = [Encoder.fit(flat[half == f], codes[half == f], READ_BACK_RCOND) for f in (0, 1)]
    held = np.zeros_like(codes)
    for f in (0, 1):
        held[half != f] = enc[f].code(flat[half != f])
    affine = {"r2": 1 - residual(held, codes, mean),
              "r2_in_sample": 1 - residual(Encoder.fit(flat, codes, READ_BACK_RCOND).code(flat), codes, mean)}
    training = None
    if visited is not None:
        unvisited = np.array([t not in visited for t in ends])  # (N,) states at trees training never reached
        training = {"visited_trees": len(visited), "end_trees": len(distinct),
                    "unvisited_end_trees": sum(t not in visited for t in distinct), "unvisited_states": int(unvisited.sum()),
                    "r2_unvisited": 1 - residual(held[unvisited], codes[unvisited], mean) if unvisited.any() else None}

    say("moving every state by every event that applies to its tree, then one more")
    first = _first_steps(ends, domain, config.string)
    second = _second_steps(first, domain, rng, config.string)
    moved = in_chunks(list(range(len(first.events))),
                       lambda rows: machine.step_batch([states[first.source[j]] for j in rows],
                                                       [first.events[j] for j in rows]))
    again = in_chunks(list(range(len(second.events))),
                       lambda rows: machine.step_batch([moved[j] for j in rows], [second.events[j] for j in rows]))
    rewrites = _rewrites(codes, machine.codes(moved), machine.codes(again), first, second, half[first.source],
                         enc, basis, strings.shape[1:])
    return {"config": asdict(config), "states": len(codes), "clusters": clusters, "dimension": dimension,
            "affine": affine, "rewrites": rewrites, "training": training}


def _rewrites(codes: np.ndarray, moved: np.ndarray, again: np.ndarray, first: _Steps, second: _Steps,
              half: np.ndarray, enc: list[Encoder], basis: np.ndarray,
              shape: tuple[int, int]) -> dict:
    """The rewrite measurements: codes (N, D) of the states, moved (M, D) after one event, again
    (M, D) after a second; ``half`` (M,) the half of each step's source tree; ``enc`` the string's
    map to the code per half; ``basis`` (D, k) the code's principal subspace."""
    src = codes[first.source]  # (M, D)
    m = len(src)
    mean = codes.mean(0)

    def sub(x):
        return (x - mean) @ basis  # (.., k)

    def full(z):
        return z @ basis.T + mean

    keys = sorted({str(e) for e in first.events})
    maps: dict[tuple[str, int], np.ndarray] = {}
    rotations: dict[tuple[str, int], tuple] = {}
    singular: list[float] = []
    for key in keys:
        for f in (0, 1):
            rows = [j for j in range(m) if half[j] == f and str(first.events[j]) == key]
            if len(rows) < 2:
                continue
            x, y = sub(src[rows]), sub(moved[rows])
            maps[key, f] = affine_fit(x, y, RIDGE)
            rotations[key, f] = procrustes(x, y)
            singular += np.linalg.svd(maps[key, f][:-1], compute_uv=False).tolist()

    def by_map(key: str, f: int, x: np.ndarray) -> np.ndarray:
        return full(affine_apply(maps[key, f], sub(x)))

    def by_rotation(key: str, f: int, x: np.ndarray) -> np.ndarray:
        q, mx, my = rotations[key, f]
        return full((sub(x) - mx) @ q + my)

    def by_permutation(f: int, x: np.ndarray, pi: tuple[int, ...]) -> np.ndarray:
        string = enc[f].string(x[None]).reshape(1, *shape)
        return enc[f].code(permuted(string, [pi]).reshape(1, -1))[0]

    # the steps every predictor can be judged on: a permutation, and per-event maps fitted on the other half
    judged = [j for j in range(m) if first.perms[j] is not None and (str(first.events[j]), 1 - half[j]) in maps]
    twice = [j for j in judged if second.perms[j] is not None and (str(second.events[j]), 1 - half[j]) in maps]
    one = {name: np.zeros((len(judged), codes.shape[1])) for name in ("permutation", "fitted", "rotation")}
    for r, j in enumerate(judged):
        f, key = 1 - half[j], str(first.events[j])
        one["permutation"][r] = by_permutation(f, src[j], first.perms[j])
        one["fitted"][r] = by_map(key, f, src[j][None])[0]
        one["rotation"][r] = by_rotation(key, f, src[j][None])[0]
    two = {name: np.zeros((len(twice), codes.shape[1])) for name in ("permutation", "fitted")}
    for r, j in enumerate(twice):
        f, key1, key2 = 1 - half[j], str(first.events[j]), str(second.events[j])
        two["permutation"][r] = by_permutation(f, by_permutation(f, src[j], first.perms[j]), second.perms[j])
        two["fitted"][r] = by_map(key2, f, by_map(key1, f, src[j][None]))[0]
    actual1, actual2 = moved[judged], again[twice]

    def share(pred: np.ndarray, actual: np.ndarray) -> float | None:
        return residual(pred, actual, actual.mean(0)) if len(actual) else None

    by_event = {}
    for key in keys:
        rows = [r for r, j in enumerate(judged) if str(first.events[j]) == key]
        if rows:
            by_event[key] = {"steps": len(rows), **{name: share(pred[rows], actual1[rows]) for name, pred in one.items()}}
    sv = np.array(singular) if singular else np.zeros(1)
    return {
        "steps": m, "not_permutations": sum(p is None for p in first.perms), "judged": len(judged),
        "judged_two_steps": len(twice), "subspace": basis.shape[1], "read_back": READ_BACK,
        "permutation": {"one_step": share(one["permutation"], actual1), "two_steps": share(two["permutation"], actual2)},
        "fitted": {"one_step": share(one["fitted"], actual1), "two_steps": share(two["fitted"], actual2)},
        "rotation": {"one_step": share(one["rotation"], actual1)},
        "singular_values": spectrum(sv, len(maps)),
        "by_event": by_event,
    }


# ---- a run, its report and its figure -----------------------------------------------------------------


def analyse_run(run_dir: Path, data: Path | None = None, config: AnalysisConfig = AnalysisConfig(),
                progress: Progress | None = None) -> dict:
    """``analyse`` on a ``train-tracker`` run: on the first ``config.chains`` test chains of
    ``config.length`` events of ``data`` (the dataset it was trained on), or on fresh histories of
    its domain; the report names the run, the histories, the Lean build and core library its
    dataset was certified with, the package and torch versions, and the seconds it took. A run
    trained on programs is measured by ``tracker.domain_analysis.analyse_domain_run``."""
    t0 = time.perf_counter()
    run = load_run(run_dir, data)
    if not isinstance(run, TrackedRun):  # a run on programs: its states read as values (tracker.domain_analysis)
        return analyse_domain_run(run, data, config, progress)
    if data is not None:
        _, histories = test_histories(Path(data), config)
        source = {"source": "test chains", "data": str(data), "split": f"test-{config.length}.jsonl"}
    else:
        histories = fresh_histories(run.domain, config)
        source = {"source": "fresh histories", "seed": config.seed}
    report = analyse(RunCodes(run), histories, config, progress, training_visits(run))
    identity = load_checkpoint(Path(run_dir) / CHECKPOINT).get("identity", {})
    return {"run": run.describe(), "histories": {**source, "chains": len(histories), "length": config.length},
            "domain": asdict(run.domain), **report, "seed": config.seed, "lean": identity.get("lean"),
            "package_version": package_version(), "torch_version": torch.__version__,
            "torch_threads": torch.get_num_threads(), "seconds": round(time.perf_counter() - t0, 2)}


def training_visits(run: TrackedRun) -> set[Tree] | None:
    """The trees the run's training split visits, read from the dataset it was trained on where that
    dataset is on disk at its recorded path and is the same one (its id); None otherwise."""
    trained_on = run.describe().get("trained_on", {})
    where = Path(trained_on.get("path") or "-")
    if not (where / "train.jsonl").is_file() or not manifest_path(where).is_file():
        return None
    if dataset_id(read_manifest(where)) != trained_on.get("dataset_id"):
        return None
    return training_trees(where, run.domain)


def write_analysis(report: dict, out: Path) -> None:
    """analysis.json and analysis.png into ``out``, together or not at all (a report of a run on
    programs, with its ``statements``, is plotted by ``plot_domain_analysis``)."""
    plot = plot_domain_analysis if "statements" in report else plot_analysis
    with staged_files(out) as staging:
        (staging / "analysis.json").write_text(json.dumps(report, indent=2) + "\n")
        plot(report, staging / "analysis.png")


def plot_analysis(report: dict, path: Path) -> None:
    """Four panels: variance against components (code and string), purity against clusters,
    each event's residual under the three predictors, the fitted maps' singular values."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(2, 2, figsize=(11, 8))
    dim, cl, rw = report["dimension"], report["clusters"], report["rewrites"]
    for curve, name in ((dim["curve"], "code"), (dim["string_curve"], f"one-hot {report['config'].get('string', 'polish')} string")):
        ax[0, 0].plot(range(1, len(curve) + 1), curve, label=name)
    for share in (0.95, 0.99):
        ax[0, 0].axhline(share, color="grey", lw=0.5, ls=":")
    ax[0, 0].set(xlabel="principal components", ylabel="share of variance", xscale="log",
                 title=f"dimension: {dim['pc95']} to 95%, {dim['pc99']} to 99%")
    ax[0, 0].legend()
    ax[0, 1].plot(cl["curve"]["clusters"], cl["curve"]["purity"])
    ax[0, 1].axvline(cl["trees"], color="grey", lw=0.5, ls=":")
    ax[0, 1].set(xlabel="clusters (single linkage)", ylabel="purity", xscale="log",
                 title=f"{cl['trees']} trees: purity {cl['purity_at_trees']:.3f}, fewest pure {cl['fewest_pure']}")
    events = list(rw["by_event"])
    for n, name in enumerate(("permutation", "fitted", "rotation")):
        values = [rw["by_event"][e][name] or 0.0 for e in events]
        ax[1, 0].bar(np.arange(len(events)) + 0.27 * (n - 1), values, 0.27, label=name)
    ax[1, 0].set_xticks(range(len(events)), events, rotation=90, fontsize=6)
    ax[1, 0].set(ylabel="residual share of variance", yscale="log",
                 title=f"affine R² {report['affine']['r2']:.3f}; one step by (lemma, position)")
    sv = rw["singular_values"]
    ax[1, 1].bar(["min", "p05", "median", "p95", "max"], [sv[k] for k in ("min", "p05", "median", "p95", "max")])
    ax[1, 1].axhline(1.0, color="grey", lw=0.5, ls=":")
    ax[1, 1].set(ylabel="singular value", title=f"fitted maps' singular values ({sv['maps']} maps; rotation: all 1)")
    fig.suptitle(f"{run_name(report)}: what the state is", fontsize=10)
    # the predictors' legend below the panels, where it covers no bar
    handles, labels = ax[1, 0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=len(labels), fontsize=8, frameon=False)
    fig.tight_layout(rect=(0, 0.04, 1, 1))
    fig.savefig(path, dpi=110)
    plt.close(fig)

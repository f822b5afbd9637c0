"""What a tracker's state is on programs (``analyse-tracker`` on a run trained on a programs dataset):
its held-out states measured as a code, as ``tracker.analysis`` measures a rewrite tracker's.

The tracker reads held-out programs (the test programs of its dataset, or fresh ones drawn from a
seed over its machine); the views of their end states are the *code*, one row per state. A state
is read as its *values*: the one-hot value of each variable (variable × value, flattened), the
string a programs tracker's readout names. Measured:

- **Clusters** by state and the code's **dimension** beside the values' (as on trees).
- **Affine.** The R² of a least-squares affine map from a state's one-hot values to its code, and
  the **read-back**: each code read back to values (least squares from codes to values, then the
  likeliest value of each variable), the share of states read back whole and of variables right.
- **Statements.** Every analysed state is moved by each of ``STATEMENTS`` statements drawn from the
  seed, then by a second drawn among them. Does a statement act on the code as a fixed map? Three
  predictions of the next code: one affine map fitted per statement, one rotation per statement
  (orthogonal Procrustes), and the *interpreter*: the state read back from the code, the statement
  run by Python's interpreter, the result encoded by the affine map (what an exact, affine code
  does; it stands where the permutation a rewrite makes of a tree's string stands on trees).
  Residuals (the share of the next codes' variance a prediction misses) for one and two steps,
  per statement kind (its operation), and the fitted maps' singular values.

Every fit is cross-fitted over two halves of the distinct end states drawn by the seed, as on
trees; the per-statement maps are fitted in the code's principal subspace to 99% of its variance,
with a small ridge. What the rewrite analysis measures that has no meaning here is named in the
report's ``not_applicable``. A domain is read this way when its state is its readout's classes
(programs: the eight values). The report of a domain of one's own says the same in that domain's
words (events, a state's readout positions: ``DomainWords``) and names them in its ``words``; its keys
are the programs report's but for the read-back's share of readout positions right.
"""
from __future__ import annotations

import random
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Protocol

import numpy as np
import torch

from chains.domains import recorded_histories
from chains.manifest import DatasetError, dataset_id, manifest_path, read_manifest
from chains.protocol import EventRefused, StateDomain
from chains.version import package_version
from tracker.code_fits import (CHUNK, READ_BACK, RIDGE, AnalysisConfig, AnalysisError, Encoder, Progress, affine_apply,
                               affine_fit, cluster_summary, components, procrustes, residual, spectrum, variance_curve)
from tracker.domain_run import DomainRun
from training.checkpoint import CHECKPOINT, load_checkpoint

STATEMENTS = 24  # statements every analysed state is moved by
NOT_APPLICABLE = {
    "permutation": "a statement moves no token between positions of the state's string; the interpreter prediction "
                   "(read back, run the statement, encode) stands in its place",
    "string": "a program state is read as its variables' one-hot values; polish and paths are strings of trees",
    "by (lemma, position)": "statements are judged one by one and by operation",
}

# On a domain of one's own the same, in its words: events, and a state's readout positions
OWN_NOT_APPLICABLE = {
    "permutation": "an event moves no token between positions of the state's string; the interpreter prediction "
                   "(read back, apply the event by the domain's rules, encode) stands in its place",
    "string": "a state is read as its readout positions' one-hot classes; polish and paths are strings of trees",
    "by (lemma, position)": "events are judged one by one and by kind",
}


@dataclass(frozen=True)
class DomainWords:
    """How the report and its reading name a domain's events and the parts of its states."""

    event: str  # one event: a statement on programs
    events: str
    parts: str  # the read-back's key for the share of a state's readout positions right: variables on programs
    histories: str  # what the analysed histories are called: programs on programs
    kind: str  # what the per-kind residuals group events by
    not_applicable: dict = field(compare=False)  # NOT_APPLICABLE in these words


PROGRAMS_WORDS = DomainWords("statement", "statements", "variables", "programs", "operation", NOT_APPLICABLE)
OWN_WORDS = DomainWords("event", "events", "readout_positions", "histories", "kind", OWN_NOT_APPLICABLE)


def words_of(domain: StateDomain) -> DomainWords:
    """Programs' words on programs; events and readout positions on a domain of one's own."""
    return PROGRAMS_WORDS if domain.name == "programs" else OWN_WORDS


History = tuple[object, tuple]  # (start state, events)


class StateMachine(Protocol):
    """What the analysis reads of a tracker: a ``DomainRun`` (through ``DomainCodes``), or a stand-in.
    States are rows of a tensor (N, ...)."""

    domain: StateDomain

    def encode_batch(self, starts: Sequence) -> torch.Tensor: ...

    def step_batch(self, w: torch.Tensor, events: Sequence) -> torch.Tensor: ...

    def codes(self, w: torch.Tensor) -> np.ndarray: ...  # (N, D) float64


class DomainCodes:
    """A loaded ``DomainRun`` as a ``StateMachine``: its states, moved in batches, their views the code."""

    def __init__(self, run: DomainRun) -> None:
        self.run, self.domain = run, run.domain

    def encode_batch(self, starts: Sequence) -> torch.Tensor:
        return self.run.encode_batch(starts)

    def step_batch(self, w: torch.Tensor, events: Sequence) -> torch.Tensor:
        return self.run.step_batch(w, events)

    def codes(self, w: torch.Tensor) -> np.ndarray:
        with torch.no_grad():
            rows = [self.run.model.view(w[i:i + CHUNK]) for i in range(0, len(w), CHUNK)]
        return torch.cat(rows).double().cpu().numpy()  # (N, D)


# ---- histories and the states' values ----------------------------------------------------------------


def fresh_programs(domain: StateDomain, config: AnalysisConfig) -> list[History]:
    """``config.chains`` histories of ``config.length`` events drawn from ``config.seed``: the domain's
    start state, then its ``sample_events`` (programs: ``chains.programs.sampling.random_program``)."""
    rng = random.Random(f"analysis:{config.seed}")
    out = []
    for _ in range(config.chains):
        start = domain.start_state(rng)
        out.append((start, tuple(domain.sample_events(rng, start, config.length))))
    return out


def test_programs(data: Path, domain: StateDomain, config: AnalysisConfig) -> list[History]:
    """The first ``config.chains`` histories of the dataset's test split of ``config.length`` events."""
    path = Path(data) / f"test-{config.length}.jsonl"
    if not path.is_file():
        have = sorted(int(p.stem.split("-")[1]) for p in Path(data).glob("test-*.jsonl") if p.stem[5:].isdigit())
        raise AnalysisError(f"dataset {data} has no test split of {config.length} {words_of(domain).events} "
                            f"(it has {', '.join(map(str, have)) or 'none'}); pass --length")
    out = []
    for history, _ in recorded_histories(domain, path):
        if len(out) == config.chains:
            break
        out.append((history[0], tuple(history[1])))
    return out



def end_state(domain: StateDomain, start, events: Sequence, where: str):
    """The state ``events`` lead to from ``start``; AnalysisError naming the step that does not apply."""
    for k, event in enumerate(events):
        try:
            start = domain.apply(start, event)
        except EventRefused as e:
            raise AnalysisError(f"{where} step {k}: {e}") from None
    return start


def one_hot_values(states: Sequence, domain: StateDomain) -> np.ndarray:
    """States -> their one-hot values (N, P, V): P readout positions, V the most classes of any."""
    readout = domain.readout()
    out = np.zeros((len(states), len(readout), max(readout)))
    if states:
        classes = np.array([domain.state_classes(s) for s in states])  # (N, P)
        np.put_along_axis(out, classes[:, :, None], 1.0, axis=2)
    return out


# ---- the analysis --------------------------------------------------------------------------------------


def _moved(machine: StateMachine, w: torch.Tensor, events: Sequence) -> torch.Tensor:
    """Each state of ``w`` (N, ...) moved by its event, CHUNK states a call."""
    return torch.cat([machine.step_batch(w[i:i + CHUNK], events[i:i + CHUNK]) for i in range(0, len(w), CHUNK)])


def _read(machine: StateMachine, histories: Sequence[History]) -> torch.Tensor:
    """The tracker's states (N, ...) after reading each history, free from its start."""
    if len({len(events) for _, events in histories}) > 1:
        raise AnalysisError("the histories must be of one length")
    parts = []
    for i in range(0, len(histories), CHUNK):
        chunk = histories[i:i + CHUNK]
        w = machine.encode_batch([start for start, _ in chunk])
        for t in range(len(chunk[0][1])):
            w = machine.step_batch(w, [events[t] for _, events in chunk])
        parts.append(w)
    return torch.cat(parts)


@dataclass
class _Moves:
    """Every analysed state moved by each drawn statement, then by a second: row j starts at state
    ``source[j]``, takes statement ``first[j]`` then ``second[j]`` (indices into ``statements``)."""

    statements: list
    source: np.ndarray  # (M,)
    first: np.ndarray  # (M,)
    second: np.ndarray  # (M,)


def _draw_moves(domain: StateDomain, ends: Sequence, rng: random.Random) -> _Moves:
    chosen: dict = {}
    start = domain.start_state(rng)
    for _ in range(100 * STATEMENTS):  # distinct statements, drawn as the histories draw theirs
        if len(chosen) == STATEMENTS:
            break
        chosen[domain.sample_events(rng, start, 1)[0]] = None
    n, m = len(ends), len(chosen)
    second = np.array([rng.randrange(m) for _ in range(n * m)], dtype=int)
    return _Moves(list(chosen), np.tile(np.arange(n), m), np.repeat(np.arange(m), n), second)


def analyse_states(machine: StateMachine, histories: Sequence[History], config: AnalysisConfig = AnalysisConfig(),
                   progress: Progress | None = None, visited: set | None = None) -> dict:
    """The measurements of the module's docstring on the end states of ``histories`` (each replayed
    with the domain's rules first: AnalysisError names a step that does not apply). With ``visited``
    (the states the run's training visited) the report also counts the end states training never
    visited and gives the cross-fitted affine R² on them alone."""
    say = progress or (lambda _: None)
    domain = machine.domain
    words = words_of(domain)
    if config.string != "polish":
        raise AnalysisError(f"--string {config.string} reads trees; {words.not_applicable['string']}")
    ends = [end_state(domain, start, events, f"history {n}") for n, (start, events) in enumerate(histories)]
    distinct = sorted(set(ends), key=domain.state_key)
    if len(distinct) < 4:
        raise AnalysisError(f"{len(histories)} histories end at {len(distinct)} states; the fits need at least 4")
    state_id = {s: i for i, s in enumerate(distinct)}
    labels = [state_id[s] for s in ends]
    rng = random.Random(f"analysis-folds:{config.seed}")
    order = list(range(len(distinct)))
    rng.shuffle(order)
    half_of = np.zeros(len(distinct), dtype=int)
    half_of[order[1::2]] = 1
    half = half_of[labels]  # (N,) the half of each state

    say(f"reading {len(histories)} histories")
    w = _read(machine, histories)
    codes = machine.codes(w)  # (N, D)
    values = one_hot_values(ends, domain)  # (N, P, V)
    flat = values.reshape(len(ends), -1)
    say(f"clustering {len(codes)} states")
    report = {"config": asdict(config), "states": len(codes), "clusters": _clusters(codes, labels),
              "dimension": _dimension(codes, flat)}
    enc = [Encoder.fit(flat[half == f], codes[half == f]) for f in (0, 1)]
    report["affine"], held = _affine(codes, flat, values, half, enc, words)
    report["training"] = _training(ends, distinct, visited, held, codes) if visited is not None else None
    say(f"moving every state by {STATEMENTS} {words.events}, then one more")
    moves = _draw_moves(domain, ends, rng)
    moved = _moved(machine, w[moves.source], [moves.statements[a] for a in moves.first])
    again = _moved(machine, moved, [moves.statements[b] for b in moves.second])
    basis = np.linalg.svd(codes - codes.mean(0), full_matrices=False)[2][:report["dimension"]["pc99"]].T  # (D, k)
    report["statements"] = _statements(codes, machine.codes(moved), machine.codes(again), moves, half, enc, basis,
                                       domain, values.shape[1:])
    report["not_applicable"] = words.not_applicable
    if words is not PROGRAMS_WORDS:  # how the reading names this domain's events (a programs report has no such key)
        report["words"] = {"event": words.event, "events": words.events, "kind": words.kind}
    return report


def _clusters(codes: np.ndarray, labels: Sequence[int]) -> dict:
    """``cluster_summary`` said of states: clusters by the state each code stands for."""
    summary = cluster_summary(codes, labels)
    return {"histories": summary["states"], "states": summary["trees"], "purity_at_states": summary["purity_at_trees"],
            "pure_clusters_at_states": summary["pure_clusters_at_trees"], "fewest_pure": summary["fewest_pure"],
            "fewest_at_99": summary["fewest_at_99"], "curve": summary["curve"]}


def _dimension(codes: np.ndarray, flat: np.ndarray) -> dict:
    pc95, pc99 = components(codes, (0.95, 0.99))
    v95, v99 = components(flat, (0.95, 0.99))
    return {"code_width": int(codes.shape[1]), "pc95": pc95, "pc99": pc99, "values_pc95": v95, "values_pc99": v99,
            "curve": variance_curve(codes), "values_curve": variance_curve(flat)}


def _affine(codes: np.ndarray, flat: np.ndarray, values: np.ndarray, half: np.ndarray,
            enc: list[Encoder], words: DomainWords = PROGRAMS_WORDS) -> tuple[dict, np.ndarray]:
    """The affine R² (cross-fitted and in sample) and the read-back, and the codes each state's
    values predict through the other half's map (N, D)."""
    mean = codes.mean(0)
    held = np.zeros_like(codes)
    read = np.zeros(values.shape[:2], dtype=int)  # (N, P) each variable's value read back
    for f in (0, 1):
        held[half != f] = enc[f].code(flat[half != f])
        read[half != f] = enc[f].string(codes[half != f]).reshape(-1, *values.shape[1:]).argmax(-1)
    right = read == values.argmax(-1)  # (N, P)
    read_back = {"states": float(right.all(1).mean()), words.parts: float(right.mean()), "how": READ_BACK}
    in_sample = Encoder.fit(flat, codes).code(flat)
    return {"r2": 1 - residual(held, codes, mean), "r2_in_sample": 1 - residual(in_sample, codes, mean),
            "read_back": read_back}, held


def _training(ends: Sequence, distinct: Sequence, visited: set, held: np.ndarray, codes: np.ndarray) -> dict:
    unvisited = np.array([s not in visited for s in ends])  # (N,) states training never reached
    return {"visited_states": len(visited), "end_states": len(distinct),
            "unvisited_end_states": sum(s not in visited for s in distinct),
            "unvisited_histories": int(unvisited.sum()),
            "r2_unvisited": 1 - residual(held[unvisited], codes[unvisited], codes.mean(0)) if unvisited.any() else None}


def _interpreted(enc: Encoder, h: np.ndarray, statements: Sequence, domain: StateDomain,
                 shape: tuple[int, int]) -> np.ndarray:
    """Codes h (R, D) read back to states, each moved by its statement with the domain's rules, encoded (R, D).
    A read-back that names no state, or one the statement does not apply to, stays where it is (and is
    judged wrong)."""
    read = enc.string(h).reshape(len(h), *shape).argmax(-1).tolist()  # (R, P): each state's classes
    after = [_moved_classes(domain, row, s) for row, s in zip(read, statements)]
    out = np.zeros((len(after), *shape))
    if after:
        np.put_along_axis(out, np.array(after)[:, :, None], 1.0, axis=2)
    return enc.code(out.reshape(len(after), -1))


def _moved_classes(domain: StateDomain, classes: list[int], event) -> list[int]:
    try:
        return domain.state_classes(domain.apply(domain.state_of_classes(classes), event))
    except ValueError:  # names no state, or the event does not apply there (EventRefused)
        return classes


def _statements(codes: np.ndarray, moved: np.ndarray, again: np.ndarray, moves: _Moves, half: np.ndarray,
                enc: list[Encoder], basis: np.ndarray, domain: StateDomain, shape: tuple[int, int]) -> dict:
    """The statement measurements: codes (N, D), moved (M, D) after the first statement, again (M, D)
    after the second; ``half`` (N,) each state's half, ``enc`` the values' map per half, ``basis``
    (D, k) the code's principal subspace. Each row is judged by maps fitted on the other half."""
    mean = codes.mean(0)
    src, other = codes[moves.source], 1 - half[moves.source]  # (M, D), (M,) the half whose maps judge a row
    maps, rotations, singular = {}, {}, []
    for a in range(len(moves.statements)):
        for f in (0, 1):
            rows = np.flatnonzero((moves.first == a) & (half[moves.source] == f))
            if len(rows) >= 2:
                x, y = (src[rows] - mean) @ basis, (moved[rows] - mean) @ basis
                maps[a, f], rotations[a, f] = affine_fit(x, y, RIDGE), procrustes(x, y)
                singular += np.linalg.svd(maps[a, f][:-1], compute_uv=False).tolist()
    fitted = {key: lambda x, b=b: affine_apply(b, (x - mean) @ basis) @ basis.T + mean for key, b in maps.items()}
    judged = np.array([(a, f) in maps for a, f in zip(moves.first, other)], dtype=bool)
    twice = judged & np.array([(b, f) in maps for b, f in zip(moves.second, other)], dtype=bool)
    errors = {name: np.zeros(len(src)) for name in ("interpreter", "fitted", "rotation", "interpreter2", "fitted2")}
    for a in range(len(moves.statements)):
        for f in (0, 1):
            rows = np.flatnonzero(judged & (moves.first == a) & (other == f))
            if not len(rows):
                continue
            q, mx, my = rotations[a, f]
            one = {"fitted": fitted[a, f](src[rows]),
                   "rotation": (((src[rows] - mean) @ basis - mx) @ q + my) @ basis.T + mean,
                   "interpreter": _interpreted(enc[f], src[rows], [moves.statements[a]] * len(rows), domain, shape)}
            for name, pred in one.items():
                errors[name][rows] = ((pred - moved[rows]) ** 2).sum(1)
            two = rows[twice[rows]]
            if len(two):
                seconds = [moves.statements[b] for b in moves.second[two]]
                inner = _interpreted(enc[f], src[two], [moves.statements[a]] * len(two), domain, shape)
                by_interpreter = _interpreted(enc[f], inner, seconds, domain, shape)
                errors["interpreter2"][two] = ((by_interpreter - again[two]) ** 2).sum(1)
                by_map = fitted[a, f](src[two])
                for b in np.unique(moves.second[two]).tolist():  # the second statement's map, where it moved
                    at = moves.second[two] == b
                    by_map[at] = fitted[b, f](by_map[at])
                errors["fitted2"][two] = ((by_map - again[two]) ** 2).sum(1)
    return _statement_summary(moves, maps, singular, errors, judged, twice, moved, again, basis.shape[1])


def _statement_summary(moves: _Moves, maps: dict, singular: list[float], errors: dict[str, np.ndarray],
                       judged: np.ndarray, twice: np.ndarray, moved: np.ndarray, again: np.ndarray, k: int) -> dict:
    """Residual shares from per-row squared errors: pooled, and per statement kind (its operation)."""

    def share(name: str, rows: np.ndarray, actual: np.ndarray) -> float | None:
        if not rows.any():
            return None
        total = float(((actual[rows] - actual[rows].mean(0)) ** 2).sum())
        return float(errors[name][rows].sum()) / total if total > 0 else 0.0

    kinds = np.array([str(getattr(moves.statements[a], "op", "")) for a in moves.first])  # (M,) each row's first
    by_kind = {}
    for kind in sorted(set(kinds.tolist())):
        rows = judged & (kinds == kind)
        by_kind[kind] = {"statements": len({str(moves.statements[a]) for a in moves.first[kinds == kind]}),
                         "steps": int(rows.sum()),
                         **{name: share(name, rows, moved) for name in ("interpreter", "fitted", "rotation")}}
    sv = np.array(singular) if singular else np.zeros(1)
    return {
        "drawn": len(moves.statements), "steps": len(moves.first), "judged": int(judged.sum()),
        "judged_two_steps": int(twice.sum()), "subspace": k, "read_back": READ_BACK,
        "interpreter": {"one_step": share("interpreter", judged, moved),
                        "two_steps": share("interpreter2", twice, again)},
        "fitted": {"one_step": share("fitted", judged, moved), "two_steps": share("fitted2", twice, again)},
        "rotation": {"one_step": share("rotation", judged, moved)},
        "singular_values": spectrum(sv, len(maps)),
        "by_kind": by_kind,
    }


# ---- a run, its report and its figure -----------------------------------------------------------------


def analyse_domain_run(run: DomainRun, data: Path | None = None, config: AnalysisConfig = AnalysisConfig(),
                       progress: Progress | None = None) -> dict:
    """``analyse_states`` on a loaded run of a programs dataset: on the first ``config.chains`` test
    programs of ``config.length`` statements of ``data`` (the dataset it was trained on), or on fresh
    programs drawn over its machine; the report as ``tracker.analysis.analyse_run`` writes it."""
    t0 = time.perf_counter()
    words = words_of(run.domain)
    if data is not None:
        histories = test_programs(Path(data), run.domain, config)
        source = {"source": f"test {words.histories}", "data": str(data), "split": f"test-{config.length}.jsonl"}
    else:
        histories = fresh_programs(run.domain, config)
        source = {"source": f"fresh {words.histories}", "seed": config.seed}
    report = analyse_states(DomainCodes(run), histories, config, progress, training_states(run))
    identity = load_checkpoint(Path(run.describe()["run"]) / CHECKPOINT).get("identity", {})
    return {"run": run.describe(), "histories": {**source, "chains": len(histories), "length": config.length},
            "domain": run.domain.describe(), **report, "seed": config.seed, "lean": identity.get("lean"),
            "package_version": package_version(), "torch_version": torch.__version__,
            "torch_threads": torch.get_num_threads(), "seconds": round(time.perf_counter() - t0, 2)}


def training_states(run: DomainRun) -> set | None:
    """The states the run's training split visits (its programs and partners), read from the
    dataset it was trained on where that dataset is on disk at its recorded path and is the same one
    (its id); None otherwise."""
    trained_on = run.describe().get("trained_on", {})
    where = Path(trained_on.get("path") or "-")
    if not (where / "train.jsonl").is_file() or not manifest_path(where).is_file():
        return None
    try:
        if dataset_id(read_manifest(where)) != trained_on.get("dataset_id"):
            return None
        seen = set()
        for history, partners in recorded_histories(run.domain, where / "train.jsonl"):
            for state, events in (history, *partners):
                seen.add(state)
                for event in events:
                    state = run.domain.apply(state, event)
                    seen.add(state)
        return seen
    except DatasetError:
        return None


def run_name(report: dict) -> str:
    """The analysed run's directory name, as an analysis figure's title names it (the report keeps
    the whole path; a figure shows no path of the machine it was drawn on)."""
    return Path(report.get("run", {}).get("run", "")).name


def plot_domain_analysis(report: dict, path: Path) -> None:
    """Four panels: variance against components (code and values), purity against clusters, each
    statement kind's residual under the three predictions, the fitted maps' singular values."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(2, 2, figsize=(11, 8))
    dim, cl, st = report["dimension"], report["clusters"], report["statements"]
    words = report.get("words", {"kind": PROGRAMS_WORDS.kind})  # a domain of one's own says its words
    for curve, name in ((dim["curve"], "code"), (dim["values_curve"], "one-hot values")):
        ax[0, 0].plot(range(1, len(curve) + 1), curve, label=name)
    for level in (0.95, 0.99):
        ax[0, 0].axhline(level, color="grey", lw=0.5, ls=":")
    ax[0, 0].set(xlabel="principal components", ylabel="share of variance", xscale="log",
                 title=f"dimension: {dim['pc95']} to 95%, {dim['pc99']} to 99%")
    ax[0, 0].legend()
    ax[0, 1].plot(cl["curve"]["clusters"], cl["curve"]["purity"])
    ax[0, 1].axvline(cl["states"], color="grey", lw=0.5, ls=":")
    ax[0, 1].set(xlabel="clusters (single linkage)", ylabel="purity", xscale="log",
                 title=f"{cl['states']} states: purity {cl['purity_at_states']:.3f}, fewest pure {cl['fewest_pure']}")
    kinds = list(st["by_kind"])
    for n, name in enumerate(("interpreter", "fitted", "rotation")):
        shares = [max(st["by_kind"][k][name] or 0.0, 1e-12) for k in kinds]
        ax[1, 0].bar(np.arange(len(kinds)) + 0.27 * (n - 1), shares, 0.27, label=name)
    ax[1, 0].set_xticks(range(len(kinds)), kinds)
    read = report["affine"]["read_back"]["states"]
    ax[1, 0].set(ylabel="residual share of variance", yscale="log",
                 title=f"affine R² {report['affine']['r2']:.3f}, read back {read:.3f}; one step by {words['kind']}")
    sv = st["singular_values"]
    ax[1, 1].bar(["min", "p05", "median", "p95", "max"], [sv[k] for k in ("min", "p05", "median", "p95", "max")])
    ax[1, 1].axhline(1.0, color="grey", lw=0.5, ls=":")
    ax[1, 1].set(ylabel="singular value", title=f"fitted maps' singular values ({sv['maps']} maps; rotation: all 1)")
    domain = report.get("domain", {}).get("name", "programs")
    fig.suptitle(f"{run_name(report)}: what the state is ({domain})", fontsize=10)
    # the predictors' legend below the panels, where it covers no bar
    handles, labels = ax[1, 0].get_legend_handles_labels()
    fig.legend(handles, labels, loc="lower center", ncol=len(labels), fontsize=8, frameon=False)
    fig.tight_layout(rect=(0, 0.04, 1, 1))
    fig.savefig(path, dpi=110)
    plt.close(fig)

"""What the analyses of a tracker's state (``tracker.analysis`` on trees, ``tracker.domain_analysis``
on programs) measure of a code, whatever it encodes: rows (N, D) of codes, one per analysed state.

- affine maps fitted by least squares (``affine_fit``, with a ridge), the string's affine map to the
  code with the read-back of a code's string (``Encoder``), and the rotation nearest a map
  (``procrustes``);
- principal components to shares of the variance (``components``, ``variance_curve``) and the share
  of a variance a prediction misses (``residual``);
- single-linkage clusters in the objectives' centred-cosine distance, cut at every number of
  clusters, against each state's label (``cluster_summary``).

The analyses' settings (``AnalysisConfig``, analyse-tracker's options) and their error live here too.
"""
from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from training.config import setting

PURITY_BAR = 0.99  # the clustering also reports the fewest clusters at this purity
RIDGE = 1e-3  # per-event maps: ridge weight, relative to the rows times the mean variance of the inputs
# how a code's string is read back for the permutation prediction; an analysis made another way is not reused
READ_BACK = "least squares, rcond 1e-5"
# the read-back's cut: directions of a half's codes whose singular value is below this share of the
# largest hold the float32 rounding of the model's outputs, not a string; a code wider than the
# states of a half (six atoms' registers: 2,016 against 1,024) would otherwise be fitted exactly
# through them, and read the other half's rounding as string
READ_BACK_RCOND = 1e-5
CHUNK = 1024  # states moved or viewed per call
STRINGS = ("polish", "paths")  # the tree's strings a code can be read against (tracker.layouts' layouts)

Progress = Callable[[str], None]


class AnalysisError(ValueError):
    """Analysis input that cannot be used (a test split that is not there, too few states)."""


@dataclass(frozen=True)
class AnalysisConfig:
    """Which held-out states are analysed (analyse-tracker's options are made from these fields)."""

    chains: int = setting(2048, "Histories analysed: fresh ones, or the first this many test chains.", low=4)
    length: int = setting(64, "Events per history: the fresh histories' length, or the test split read "
                              "(test-LENGTH.jsonl).", low=1)
    seed: int = setting(0, "Draws the fresh histories, the two halves of the trees (program states) the fits are "
                           "crossed over and the second steps.")
    string: str = setting("polish", "The tree's string the code is read against: polish (token by token, the seed's) "
                                    "or paths (by heap position, the paths readout layout); a program state is read "
                                    "as its variables' one-hot values.", choices=STRINGS)


def affine_fit(x: np.ndarray, y: np.ndarray, ridge: float = 0.0) -> np.ndarray:
    """Least squares y ~ [x 1] B (ridge on x's rows of B, relative to N times x's mean variance) -> B (Dx + 1, Dy)."""
    a = np.hstack([x, np.ones((len(x), 1))])
    if ridge > 0:
        penalty = ridge * len(x) * max(float(x.var(0).mean()), 1e-12)
        reg = np.eye(a.shape[1]) * penalty
        reg[-1, -1] = 0.0  # the offset is not shrunk
        return np.linalg.solve(a.T @ a + reg, a.T @ y)
    return np.linalg.lstsq(a, y, rcond=None)[0]


def affine_apply(b: np.ndarray, x: np.ndarray) -> np.ndarray:
    return x @ b[:-1] + b[-1]


@dataclass(frozen=True)
class Encoder:
    """An affine map from one-hot strings to codes, h = (x - x_mean) E + h_mean, and the read-back
    of a code's string, x = (h - h_mean) R + x_mean, both fitted by least squares on the same
    states. R is fitted, not E's pseudo-inverse: a trained code is only mostly affine and E is far
    from an isometry, and the pseudo-inverse amplifies the part that is not affine along E's weak
    directions (docs/experiments/mechanism.md, "The read-back")."""

    e: np.ndarray  # (P V, D)
    r: np.ndarray  # (D, P V)
    x_mean: np.ndarray  # (P V,)
    h_mean: np.ndarray  # (D,)

    @classmethod
    def fit(cls, x: np.ndarray, h: np.ndarray, rcond: float | None = READ_BACK_RCOND) -> Encoder:
        """Both maps fitted on strings x (N, P V) and codes h (N, D); ``rcond`` is the read-back's cut."""
        xm, hm = x.mean(0), h.mean(0)
        e = np.linalg.lstsq(x - xm, h - hm, rcond=None)[0]
        r = np.linalg.lstsq(h - hm, x - xm, rcond=rcond)[0]
        return cls(e, r, xm, hm)

    def code(self, x: np.ndarray) -> np.ndarray:
        return (x - self.x_mean) @ self.e + self.h_mean

    def string(self, h: np.ndarray) -> np.ndarray:
        return (h - self.h_mean) @ self.r + self.x_mean


def procrustes(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The rotation Q (orthogonal) and the means mx, my minimising ||(y - my) - (x - mx) Q||."""
    mx, my = x.mean(0), y.mean(0)
    u, _, vt = np.linalg.svd((x - mx).T @ (y - my), full_matrices=False)
    return u @ vt, mx, my


def spectrum(singular: np.ndarray, maps: int) -> dict:
    """The fitted maps' singular values pooled (a rotation's are all 1): min, 5th percentile,
    median, 95th percentile, max, and how many maps they come from."""
    return {"min": float(singular.min()), "p05": float(np.percentile(singular, 5)),
            "median": float(np.median(singular)), "p95": float(np.percentile(singular, 95)),
            "max": float(singular.max()), "maps": maps}


def components(x: np.ndarray, shares: Sequence[float]) -> list[int]:
    """Principal components needed for each share of the variance of rows x (N, D)."""
    s = np.linalg.svd(x - x.mean(0), compute_uv=False) ** 2
    if s.sum() <= 0:
        return [0 for _ in shares]
    cum = np.cumsum(s) / s.sum()
    return [int(np.searchsorted(cum, share - 1e-12) + 1) for share in shares]


def variance_curve(x: np.ndarray, most: int = 160) -> list[float]:
    """The cumulative share of variance of the first principal components (up to ``most``)."""
    s = np.linalg.svd(x - x.mean(0), compute_uv=False) ** 2
    return [] if s.sum() <= 0 else [float(v) for v in (np.cumsum(s) / s.sum())[:most]]


def residual(predicted: np.ndarray, actual: np.ndarray, mean: np.ndarray) -> float:
    """Share of the variance of ``actual`` (about ``mean``) the prediction misses."""
    total = float(((actual - mean) ** 2).sum())
    return float(((predicted - actual) ** 2).sum()) / total if total > 0 else 0.0


# ---- clusters ----------------------------------------------------------------------------------------


def _spanning_edges(codes: np.ndarray) -> list[tuple[float, int, int]]:
    """The minimum spanning tree of ``codes`` (N, D) in the centred-cosine distance, shortest edge
    first (Prim's algorithm: O(N^2) time, O(N) memory beyond the codes)."""
    n = len(codes)
    u = codes - codes.mean(1, keepdims=True)
    u = u / np.maximum(np.linalg.norm(u, axis=1, keepdims=True), 1e-12)
    best, parent = np.full(n, np.inf), np.zeros(n, dtype=int)
    inside = np.zeros(n, dtype=bool)
    edges, current = [], 0
    for _ in range(n - 1):
        inside[current] = True
        d = 1.0 - u @ u[current]  # (N,)
        closer = (~inside) & (d < best)
        best[closer], parent[closer] = d[closer], current
        best_out = np.where(inside, np.inf, best)
        current = int(best_out.argmin())
        edges.append((float(best_out[current]), int(parent[current]), current))
    return sorted(edges)


def single_linkage(codes: np.ndarray, labels: Sequence[int], cut: int) -> tuple[np.ndarray, list[int]]:
    """The single-linkage clustering of ``codes`` (N, D) in the centred-cosine distance, merged from
    N singletons to one cluster: purity[k] at k clusters (index 0 unused; merging never raises
    purity, so it falls as k does), and each state's cluster id at ``cut`` clusters."""
    n = len(codes)
    root = list(range(n))
    counts = [{label: 1} for label in labels]  # per cluster root: states per tree
    majority = [1] * n  # per cluster root: its largest tree's states
    total = n  # the sum of the clusters' majorities
    purity = np.zeros(n + 1)
    purity[n] = 1.0

    def find(i: int) -> int:
        while root[i] != i:
            root[i] = root[root[i]]
            i = root[i]
        return i

    at_cut = [find(i) for i in range(n)] if cut >= n else []
    clusters = n
    for _, a, b in _spanning_edges(codes):
        a, b = find(a), find(b)
        if len(counts[a]) < len(counts[b]):
            a, b = b, a
        for label, c in counts[b].items():
            counts[a][label] = counts[a].get(label, 0) + c
        total -= majority[a] + majority[b]
        majority[a] = max(counts[a].values())
        total += majority[a]
        root[b], counts[b] = a, {}
        clusters -= 1
        purity[clusters] = total / n
        if clusters == cut:
            at_cut = [find(i) for i in range(n)]
    return purity, at_cut


def cluster_summary(codes: np.ndarray, labels: Sequence[int]) -> dict:
    """The clusters' figures (see the module's docstring) and the purity curve, sampled."""
    n, trees = len(codes), len(set(labels))
    purity, at_trees = single_linkage(codes, labels, trees)
    members: dict[int, set[int]] = {}
    for c, label in zip(at_trees, labels):
        members.setdefault(c, set()).add(label)
    fewest = {bar: int(np.argmax(purity[1:] >= bar - 1e-12) + 1) for bar in (1.0, PURITY_BAR)}
    ks = sorted({int(k) for k in np.geomspace(1, n, 60).round()} | {trees})
    return {"states": n, "trees": trees, "purity_at_trees": float(purity[trees]),
            "pure_clusters_at_trees": sum(len(m) == 1 for m in members.values()),
            "fewest_pure": fewest[1.0], "fewest_at_99": fewest[PURITY_BAR],
            "curve": {"clusters": ks, "purity": [float(purity[k]) for k in ks]}}


def in_chunks(items: Sequence, move: Callable[[Sequence], list]) -> list:
    """``move`` called on ``items`` CHUNK at a time, the results joined."""
    out: list = []
    for i in range(0, len(items), CHUNK):
        out += move(items[i:i + CHUNK])
    return out

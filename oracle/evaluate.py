"""Free-running evaluation of an oracle arm on the held-out probe chains.

The arm reads each probe-carrying held-out chain with nothing but its own carried state (the
proof state once, then the gold events; never an intermediate tree, except the ``truth`` arm,
which is handed it) and predicts Lean's verdict class for every probe at every step. Reported:

- per chain length L: ``accuracy[L]`` (fraction of probes whose class is right),
  ``all_right[L]`` (fraction of chains right on every verdict), ``by_kind_by_length[L]``;
- pooled over the splits up to ``pooled_max_length`` (every arm runs them), by the probe's
  depth t + 1 (bands 1, 2-3, 4-6, 7-12, 13-64, 65+): accuracy per band, per kind, per verdict
  class (recall) and the confusion matrix; on the hard class (misplaced gold) the balanced
  accuracy (mean of the recalls of "accepted or complete" and of "rejected", a class read as
  its accepting/rejecting half) per band with a bootstrap 95% interval over chains;
- the prover guard at depths 4-6: the threshold on P(accepted or complete) that keeps
  ``guard_keep`` of the truly accepted probes, and the fraction of truly rejected ones it rejects;
- for the arms with a carried state, the centred-cosine distance between a chain's end view and
  its certified partners' (``pair_distance[L]``) and between unrelated chains' end views;
- on Mathlib probes, the same pooled metrics on the test proofs marked ``novel_premise`` alone
  (the seed's headline set), with their accuracy and the fraction of them right on every verdict.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import torch
from tqdm import tqdm

from oracle.data import OracleData
from oracle.model import Oracle
from tracker.objectives import centred_cosine_distance

BANDS = ((1, 1), (2, 3), (4, 6), (7, 12), (13, 64), (65, None))  # depth bands, inclusive; None: no upper end


def band_name(band: tuple[int, int | None]) -> str:
    low, high = band
    return str(low) if high == low else (f"{low}+" if high is None else f"{low}-{high}")


@dataclass(frozen=True)
class OracleEvalConfig:
    pooled_max_length: int = 1024  # depth bands, kinds, classes, hard class and guard pool the splits up to here
    transformer_max_length: int = 1024  # the transformer's cost grows with L^2; longer splits are skipped
    pair_lengths: tuple[int, ...] = (8, 64, 256)  # lengths at which partner distances are measured
    chunk: int = 32  # chains run in lockstep at once
    step_chunk: int = 256  # probe steps scored at once
    bootstrap: int = 1000  # resamples of chains for the hard class's interval
    bootstrap_seed: int = 0  # the resampling's seed (fixed: the interval repeats)
    guard_keep: float = 0.9  # fraction of truly accepted probes the prover guard keeps
    guard_depths: tuple[int, int] = (4, 6)  # depths (inclusive) at which the guard is judged


@dataclass
class SplitPredictions:
    """One split's verdicts and the arm's answers. Shapes (N, S, P) as in OracleData."""

    verdicts: torch.Tensor  # true class, -1 = no probe
    kinds: torch.Tensor  # kind index, -1 = no probe
    predicted: torch.Tensor  # argmax class
    accept_score: torch.Tensor  # P(accepted or complete)
    end_views: torch.Tensor | None  # (N, C) the view after the last event, for the distances


@torch.no_grad()
def predict_split(model: Oracle, data: OracleData, split: dict[str, torch.Tensor], config: OracleEvalConfig
                  ) -> SplitPredictions:
    accepting = data.accepting
    predicted = torch.empty(split["probes"].shape, dtype=torch.int8)
    score = torch.empty(split["probes"].shape, dtype=torch.float32)
    ends = []
    for lo in range(0, len(split["items"]), config.chunk):
        rows = slice(lo, lo + config.chunk)
        items = split["items"][rows].long()
        r, z = model.reader(items, split["truth_items"][rows].long())  # (n, S, C), (n, T, C)
        for s0 in range(0, r.shape[1], config.step_chunk):
            steps = slice(s0, s0 + config.step_chunk)
            p = model.score(r[:, steps], split["probes"][rows, steps].long()).softmax(-1)  # (n, s, P, V)
            predicted[rows, steps] = p.argmax(-1).to(torch.int8)
            score[rows, steps] = p[..., accepting].sum(-1)
        if z is not None:
            ends.append(z[torch.arange(len(z)), (items != 0).sum(1) - 1])
    return SplitPredictions(split["verdicts"], split["kinds"], predicted, score, torch.cat(ends) if ends else None)


def _accuracy(right: torch.Tensor, mask: torch.Tensor) -> float | None:
    n = int(mask.sum())
    return None if n == 0 else float(right[mask].sum()) / n


def balanced_counts(true_accept: torch.Tensor, pred_accept: torch.Tensor, group: torch.Tensor, groups: int
                    ) -> torch.Tensor:
    """Per group (a chain): (groups, 4) counts [accepted right, accepted, rejected right, rejected]."""
    out = torch.zeros(groups, 4)
    for col, values in enumerate((true_accept & pred_accept, true_accept, ~true_accept & ~pred_accept,
                                  ~true_accept)):
        out[:, col].index_add_(0, group, values.float())
    return out


def balanced_from_counts(counts: torch.Tensor) -> torch.Tensor:
    """(..., 4) summed counts -> (...) balanced accuracy (NaN where a half is empty)."""
    return 0.5 * (counts[..., 0] / counts[..., 1] + counts[..., 2] / counts[..., 3])


def hard_class(true_accept: torch.Tensor, pred_accept: torch.Tensor, chain: torch.Tensor, chains: int,
               config: OracleEvalConfig) -> dict:
    """Balanced accuracy of accepted-or-complete against rejected, with a bootstrap 95% interval
    from resampling chains (with replacement, fixed seed)."""
    counts = balanced_counts(true_accept, pred_accept, chain, chains)  # (chains, 4)
    total = counts.sum(0)
    if total[1] == 0 or total[3] == 0:
        return {"balanced": None, "low": None, "high": None, "probes": int(total[1] + total[3])}
    generator = torch.Generator().manual_seed(config.bootstrap_seed)
    idx = torch.randint(0, chains, (config.bootstrap, chains), generator=generator)
    resampled = balanced_from_counts(counts[idx].sum(1))  # (bootstrap,)
    resampled = resampled[~resampled.isnan()]
    low, high = torch.quantile(resampled, torch.tensor([0.025, 0.975])).tolist()
    return {"balanced": float(balanced_from_counts(total)), "low": low, "high": high,
            "accepted_recall": float(total[0] / total[1]), "rejected_recall": float(total[2] / total[3]),
            "probes": int(total[1] + total[3])}


def guard(true_accept: torch.Tensor, score: torch.Tensor, keep: float) -> dict:
    """The threshold on the accept score that keeps ``keep`` of the truly accepted probes, and
    the fraction of the truly rejected ones that fall below it."""
    accepted, rejected = score[true_accept], score[~true_accept]
    if len(accepted) == 0 or len(rejected) == 0:
        return {"threshold": None, "kept_accepted": None, "rejected_rejected": None,
                "accepted": len(accepted), "rejected": len(rejected)}
    # the lower order statistic, so that at least ``keep`` of them lie at or above it
    threshold = float(torch.quantile(accepted.double(), 1 - keep, interpolation="lower"))
    return {"threshold": threshold, "kept_accepted": float((accepted >= threshold).float().mean()),
            "rejected_rejected": float((rejected < threshold).float().mean()),
            "accepted": len(accepted), "rejected": len(rejected)}


def pooled_metrics(splits: dict[int, SplitPredictions], data: OracleData, config: OracleEvalConfig) -> dict:
    """Every probe of the given splits, by depth band, kind and class; the hard class; the guard."""
    accepting = data.accepting
    verdicts, kinds, predicted, score, depth, chain = [], [], [], [], [], []
    chains = 0
    for length in sorted(splits):
        s = splits[length]
        n, steps, p = s.verdicts.shape
        valid = s.verdicts >= 0
        verdicts.append(s.verdicts[valid].long())
        kinds.append(s.kinds[valid].long())
        predicted.append(s.predicted[valid].long())
        score.append(s.accept_score[valid])
        depth.append((torch.arange(steps) + 1)[None, :, None].expand(n, steps, p)[valid])
        chain.append((torch.arange(n) + chains)[:, None, None].expand(n, steps, p)[valid])
        chains += n
    verdicts, kinds, predicted = torch.cat(verdicts), torch.cat(kinds), torch.cat(predicted)
    score, depth, chain = torch.cat(score), torch.cat(depth), torch.cat(chain)
    right = predicted == verdicts
    true_accept, pred_accept = accepting[verdicts], accepting[predicted]
    hard = kinds == data.hard_kind

    def in_band(band) -> torch.Tensor:
        low, high = band
        return (depth >= low) & (depth <= (high if high is not None else depth.max()))

    v = len(data.verdicts)
    confusion = torch.zeros(v * v, dtype=torch.long).index_add_(0, verdicts * v + predicted,
                                                                 torch.ones_like(verdicts)).view(v, v)
    low, high = config.guard_depths
    at_guard = (depth >= low) & (depth <= high)
    return {
        "lengths": sorted(splits),
        "accuracy": _accuracy(right, torch.ones_like(right)),
        "by_depth": {band_name(b): _accuracy(right, in_band(b)) for b in BANDS},
        "by_kind": {k: _accuracy(right, kinds == i) for i, k in enumerate(data.kinds)},
        "by_verdict": {name: _accuracy(right, verdicts == i) for i, name in enumerate(data.verdicts)},
        "confusion": confusion.tolist(),  # rows: Lean's class, columns: predicted, in verdict_classes order
        "hard": {band_name(b): hard_class(true_accept[hard & in_band(b)], pred_accept[hard & in_band(b)],
                                          chain[hard & in_band(b)], chains, config) for b in BANDS},
        "hard_all": hard_class(true_accept[hard], pred_accept[hard], chain[hard], chains, config),
        "guard": {"depths": [low, high], "keep": config.guard_keep,
                  **guard(true_accept[at_guard], score[at_guard], config.guard_keep)},
    }


def novel_premise_metrics(splits: dict[int, SplitPredictions], data: OracleData, config: OracleEvalConfig
                          ) -> dict:
    """The pooled metrics of the test proofs marked ``novel_premise`` (they name a premise no
    training proof names), and their accuracy and fraction right on every verdict."""
    subset = {}
    for length, s in splits.items():
        novel = data.tests[length].get("novel")
        if novel is not None and bool(novel.any()):
            subset[length] = SplitPredictions(s.verdicts[novel], s.kinds[novel], s.predicted[novel],
                                              s.accept_score[novel], None)
    if not subset:
        return {"proofs": 0, "accuracy": None, "all_right": None, "pooled": None}
    proofs = probes = correct = all_right = 0
    for s in subset.values():
        valid = s.verdicts >= 0
        right = (s.predicted == s.verdicts) & valid
        proofs, probes, correct = proofs + len(valid), probes + int(valid.sum()), correct + int(right.sum())
        all_right += int((right | ~valid).flatten(1).all(1).sum())
    return {"proofs": proofs, "accuracy": correct / probes if probes else None, "all_right": all_right / proofs,
            "pooled": pooled_metrics(subset, data, config)}


@torch.no_grad()
def evaluate(model: Oracle, data: OracleData, config: OracleEvalConfig = OracleEvalConfig(),
             show_progress: bool = False) -> dict:
    was_training = model.training
    model.eval()
    started = time.perf_counter()
    accepting = data.accepting
    accuracy, all_right, by_kind, pair, unrelated, seconds = {}, {}, {}, {}, {}, {}
    predictions: dict[int, SplitPredictions] = {}
    lengths = sorted(data.tests)
    for length in tqdm(lengths, desc="evaluate", unit="split", disable=not show_progress):
        if model.config.arch == "transformer" and length > config.transformer_max_length:
            accuracy[str(length)] = all_right[str(length)] = None
            continue
        t0 = time.perf_counter()
        split = data.tests[length]
        s = predict_split(model, data, split, config)
        valid = s.verdicts >= 0
        right = (s.predicted == s.verdicts) | ~valid
        accuracy[str(length)] = _accuracy(right, valid)
        all_right[str(length)] = float(right.flatten(1).all(1).float().mean())
        by_kind[str(length)] = {k: _accuracy(right, s.kinds == i) for i, k in enumerate(data.kinds)}
        if s.end_views is not None:
            goals = data.goal_keys(split["items"][:, 0].long())  # (N, ·) equal rows: the same goal
            other = torch.roll(torch.arange(len(goals)), 1)
            differ = (goals != goals[other]).any(1)
            if bool(differ.any()):
                unrelated[str(length)] = float(centred_cosine_distance(s.end_views[differ],
                                                                       s.end_views[other][differ]).mean())
            mates = split["partner_items"]  # (N, K, T)
            if length in config.pair_lengths and mates.shape[1] > 0:
                flat = mates.reshape(-1, mates.shape[-1]).long()
                zp = torch.cat([model.tracker.final_view(part) for part in flat.split(config.chunk)])
                zp = zp.view(len(goals), mates.shape[1], -1)
                pair[str(length)] = float(centred_cosine_distance(s.end_views[:, None].expand_as(zp), zp).mean())
        if length <= config.pooled_max_length:
            predictions[length] = s
        seconds[str(length)] = round(time.perf_counter() - t0, 3)
    model.train(was_training)
    marked = any("novel" in split for split in data.tests.values())  # Mathlib probes mark novel premises
    novel = {"novel_premise": novel_premise_metrics(predictions, data, config)} if marked else {}
    return {"verdict_classes": list(data.verdicts), "kinds": list(data.kinds),
            "accepting": [v for v, a in zip(data.verdicts, accepting.tolist()) if a],
            "probe_chains": {str(n): len(data.tests[n]["items"]) for n in lengths},
            "accuracy": accuracy, "all_right": all_right, "by_kind_by_length": by_kind,
            "pooled": pooled_metrics(predictions, data, config) if predictions else None,
            "pair_distance": pair, "unrelated_distance": unrelated, **novel,
            "eval_seconds": round(time.perf_counter() - started, 3), "eval_seconds_by_length": seconds}

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
  (the seed's headline set), with their accuracy and the fraction of them right on every verdict;
- ``binary``: accepted-or-complete vs rejected, per length (accuracy and chains all right), beside
  the five classes;
- ``comparison`` (the arms with a slot transition, on chains): the same five-class figures when
  *complete* is decided by comparison (``oracle.compare``): a probe the head predicts accepted
  (its most probable class is accepted or complete) is complete when its imagined successor lies
  within the threshold of the goal read as a start, else accepted; a probe predicted rejected
  keeps the head's rejection class, so both readouts agree on accepted-or-complete vs rejected. With ``choose_threshold`` the threshold is chosen here, on these chains.
"""
from __future__ import annotations

import time
from dataclasses import dataclass

import torch

from leanbridge.cliutil import progress_over
from oracle.compare import choose_threshold
from oracle.data import OracleData
from oracle.model import Oracle
from tracker.losses import centred_cosine_distance

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
    goal_distance: torch.Tensor | None = None  # distance of the imagined successor to the goal (comparing arms)


def model_device(model: torch.nn.Module) -> torch.device:
    """Where ``model``'s weights are: where it reads and scores."""
    return next(model.parameters()).device


@torch.no_grad()
def predict_split(model: Oracle, data: OracleData, split: dict[str, torch.Tensor], config: OracleEvalConfig
                  ) -> SplitPredictions:
    """The arm's answers on one split: run where the model is, ``config.chunk`` chains at a time
    (each chunk moved there), the answers gathered on the CPU."""
    device = model_device(model)
    accepting = data.accepting.to(device)
    predicted = torch.empty(split["probes"].shape, dtype=torch.int8)
    score = torch.empty(split["probes"].shape, dtype=torch.float32)
    compares = model.compares and "goal_items" in split
    distance = torch.empty(split["probes"].shape, dtype=torch.float32) if compares else None
    ends = []
    for lo in range(0, len(split["items"]), config.chunk):
        rows = slice(lo, lo + config.chunk)
        items = split["items"][rows].to(device).long()  # (n, T)
        truth = split["truth_items"][rows].to(device).long()  # (n, S)
        r, z, w = model.states(items, truth)  # (n, S, C), (n, T, C), (n, S, C)
        goal = model.goal_view(split["goal_items"][rows].to(device).long()) if compares else None  # (n, C)
        for s0 in range(0, r.shape[1], config.step_chunk):
            steps = slice(s0, s0 + config.step_chunk)
            probes = split["probes"][rows, steps].to(device).long()  # (n, s, P)
            p = model.score(r[:, steps], probes).softmax(-1)  # (n, s, P, V)
            predicted[rows, steps] = p.argmax(-1).to(torch.int8).cpu()
            score[rows, steps] = p[..., accepting].sum(-1).cpu()
            if compares:
                ws = w[:, steps]
                distance[rows, steps] = model.goal_distance(ws, probes, goal[:, None].expand_as(ws)).cpu()
        if z is not None:
            ends.append(z[torch.arange(len(z), device=device), (items != 0).sum(1) - 1].cpu())  # (n, C)
    return SplitPredictions(split["verdicts"].cpu(), split["kinds"].cpu(), predicted, score,
                            torch.cat(ends) if ends else None, distance)


def compared(s: SplitPredictions, data: OracleData, threshold: float) -> torch.Tensor:
    """The five-class answer with *complete* decided by comparison: (N, S, P) classes."""
    accepted, complete = data.verdicts.index("accepted"), data.verdicts.index("complete")
    by_goal = torch.where(s.goal_distance < threshold, complete, accepted).to(torch.int8)
    head_accepts = data.accepting[s.predicted.long().clamp(min=0)]  # the head's argmax is accepted or complete
    return torch.where(head_accepts, by_goal, s.predicted)


def readout_figures(splits: dict[int, SplitPredictions], predicted: dict[int, torch.Tensor], data: OracleData
                    ) -> dict:
    """Accuracy and chains all right per length, five classes and accepted-or-complete vs
    rejected, and the pooled confusion matrix and recall per class, for one readout."""
    accepting = data.accepting
    out = {"accuracy": {}, "all_right": {}, "binary_accuracy": {}, "binary_all_right": {}}
    v = len(data.verdicts)
    confusion = torch.zeros(v * v, dtype=torch.long)
    for length in sorted(splits):
        s, pred = splits[length], predicted[length].long()
        valid = s.verdicts >= 0
        truth = s.verdicts.long().clamp(min=0)
        for key, right in (("", pred == truth), ("binary_", accepting[pred] == accepting[truth])):
            right = right | ~valid
            out[f"{key}accuracy"][str(length)] = _accuracy(right, valid)
            out[f"{key}all_right"][str(length)] = float(right.flatten(1).all(1).float().mean())
        confusion.index_add_(0, truth[valid] * v + pred[valid], torch.ones(int(valid.sum()), dtype=torch.long))
    confusion = confusion.view(v, v)
    out["confusion"] = confusion.tolist()
    out["by_verdict"] = {name: (float(confusion[i, i]) / float(confusion[i].sum()) if confusion[i].sum() else None)
                         for i, name in enumerate(data.verdicts)}
    return out


def goal_distance_summary(splits: dict[int, SplitPredictions], data: OracleData) -> dict:
    """Quantiles of the imagined successors' distance to the goal on Lean's complete and on
    Lean's accepted probes: how far apart the comparison's two populations sit."""
    accepted, complete = data.verdicts.index("accepted"), data.verdicts.index("complete")
    out = {}
    for name, cls in (("complete", complete), ("accepted", accepted)):
        d = torch.cat([s.goal_distance[s.verdicts == cls] for s in splits.values()]).double()
        out[name] = None if len(d) == 0 else {
            "probes": len(d), "mean": float(d.mean()),
            **{f"q{int(q * 1000):03d}": float(torch.quantile(d[:1_000_000], q)) for q in (0.001, 0.5, 0.999)},
            "min": float(d.min()), "max": float(d.max())}
    return out


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
             show_progress: bool = False, threshold: float | None = None, choose: bool = False,
             threshold_source: str = "given", max_length: int | None = None) -> dict:
    """Every figure of the module docstring on ``data``'s probe chains (the splits up to
    ``max_length``); the comparison readout at ``threshold``, or at one chosen on these chains
    when ``choose``."""
    was_training = model.training
    model.eval()
    started = time.perf_counter()
    device = model_device(model)
    data = data.to("cpu")  # the figures are counted on the CPU; the model reads chunks where it is
    accepting = data.accepting
    accuracy, all_right, by_kind, pair, unrelated, seconds = {}, {}, {}, {}, {}, {}
    predictions: dict[int, SplitPredictions] = {}
    lengths = sorted(n for n in data.tests if max_length is None or n <= max_length)
    every: dict[int, SplitPredictions] = {}
    for length in progress_over(lengths, "evaluate", unit="split", show=show_progress):
        if model.config.arch == "transformer" and length > config.transformer_max_length:
            accuracy[str(length)] = all_right[str(length)] = None
            continue
        t0 = time.perf_counter()
        split = data.tests[length]
        s = predict_split(model, data, split, config)
        every[length] = s
        valid = s.verdicts >= 0
        right = (s.predicted == s.verdicts) | ~valid
        accuracy[str(length)] = _accuracy(right, valid)
        all_right[str(length)] = float(right.flatten(1).all(1).float().mean())
        by_kind[str(length)] = {k: _accuracy(right, s.kinds == i) for i, k in enumerate(data.kinds)}
        if s.end_views is not None:
            goals = data.goal_keys(split)  # (N, ·) equal rows: the same goal
            other = torch.roll(torch.arange(len(goals)), 1)
            differ = (goals != goals[other]).any(1)
            if bool(differ.any()):
                unrelated[str(length)] = float(centred_cosine_distance(s.end_views[differ],
                                                                       s.end_views[other][differ]).mean())
            mates = split["partner_items"]  # (N, K, T)
            if length in config.pair_lengths and mates.shape[1] > 0:
                flat = mates.reshape(-1, mates.shape[-1]).long()  # (N K, T)
                zp = torch.cat([model.tracker.final_view(part.to(device)).cpu() for part in flat.split(config.chunk)])
                zp = zp.view(len(goals), mates.shape[1], -1)
                pair[str(length)] = float(centred_cosine_distance(s.end_views[:, None].expand_as(zp), zp).mean())
        if length <= config.pooled_max_length:
            predictions[length] = s
        seconds[str(length)] = round(time.perf_counter() - t0, 3)
    model.train(was_training)
    marked = any("novel" in split for split in data.tests.values())  # Mathlib probes mark novel premises
    novel = {"novel_premise": novel_premise_metrics(predictions, data, config)} if marked else {}
    head = readout_figures(every, {n: s.predicted for n, s in every.items()}, data) if every else None
    comparison = None
    comparable = {n: s for n, s in every.items() if s.goal_distance is not None}
    if comparable:
        accepted, complete = data.verdicts.index("accepted"), data.verdicts.index("complete")
        chosen = None
        if choose:
            d = torch.cat([s.goal_distance[(s.verdicts == accepted) | (s.verdicts == complete)]
                           for s in comparable.values()])
            y = torch.cat([s.verdicts[(s.verdicts == accepted) | (s.verdicts == complete)] == complete
                           for s in comparable.values()])
            shortest = str(min(comparable))
            chosen = choose_threshold(d, y, pair.get(min((k for k in pair), key=int, default=shortest)),
                                      unrelated.get(shortest))
            chosen.update({"pair_floor": pair.get(min(pair, key=int)) if pair else None,
                           "unrelated": unrelated.get(shortest)})
            threshold, threshold_source = chosen["threshold"], "chosen on these chains"
        comparison = {"threshold": threshold, "threshold_source": threshold_source, "choice": chosen,
                      "goal_distance": goal_distance_summary(comparable, data)}
        if threshold is not None:
            comparison.update(readout_figures(comparable, {n: compared(s, data, threshold)
                                                           for n, s in comparable.items()}, data))
    return {"verdict_classes": list(data.verdicts), "kinds": list(data.kinds),
            "accepting": [v for v, a in zip(data.verdicts, accepting.tolist()) if a],
            "probe_chains": {str(n): len(data.tests[n]["items"]) for n in lengths}, "lengths_evaluated": lengths,
            "accuracy": accuracy, "all_right": all_right, "by_kind_by_length": by_kind,
            "pooled": pooled_metrics(predictions, data, config) if predictions else None,
            "pair_distance": pair, "unrelated_distance": unrelated, **novel,
            "binary": None if head is None else {k: head[k] for k in ("binary_accuracy", "binary_all_right")},
            "head": head, "comparison": comparison,
            "eval_seconds": round(time.perf_counter() - started, 3), "eval_seconds_by_length": seconds}

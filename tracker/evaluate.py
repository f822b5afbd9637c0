"""Free-running evaluation on the held-out splits.

The tracker reads the start tree and then every event of a held-out chain with nothing but its
own carried state (no teacher forcing: no gold state is ever fed back), all chains of a split
in lockstep. Reported per chain length L:

- ``exact[L]``: fraction of chains whose whole decoded tree (argmax per position, PAD included)
  is right after the last event;
- ``pair_distance[L]`` (L in ``pair_lengths``): mean centred-cosine distance between a chain's
  end view and each certified partner's end view (partners have every length 0..L);
- ``unrelated_distance_by_length[L]``: mean centred-cosine distance between the end views of
  chain i and chain i+1 where their end trees differ (the collapse detector);
- ``in_distribution``: exact on the first chains of the training set (the training fit) beside
  exact on the held-out chains of the training length (fresh chains from the same distribution);
  a tracker that fits the first and not the second memorised its chains;
- ``pair_growth``: pair_distance at the longest pair length over that at the shortest (256 over
  8 by default). Above 1 the states of equivalent histories drift apart along the chain: the
  drift diagnostic. None when either distance is missing or the shortest is 0.
- ``state_rms[L]`` (with ``state_norms``, the slot recurrence): the slot's mean RMS coordinate after
  the last event; 1 at a fixed norm, and where the norm is free a clock if it grows with L (the
  seed's reading of why its programs trackers lose exactness past 256 statements).
- ``chains[L]``: how many chains each figure of length L counts (``chains_asked`` were asked for:
  a split holding fewer is read whole, and ``fewer_chains_than_asked`` says where);
  ``pairs[L]``: how many certified partner pairs ``pair_distance[L]`` averages over.

Beyond the training distribution (``beyond``), on every dataset where the figure exists:

- ``by_end_seen[L]``: exact on the chains whose end tree training visits (a chain or a partner)
  and on those whose end tree it never visits, with their counts (when some end is unseen);
- ``by_end_size[L]``: exact by the end tree's size in tokens, with counts (when sizes differ: tier 2);
- ``first_heldout[L]``: with held-out events (pairs), the share of chains whose decoded tree is
  right just after their first held-out event (the second event of their first held-out pair),
  read free from the start like every figure here.
"""
from __future__ import annotations

import sys
import time
from contextlib import contextmanager
from dataclasses import dataclass, replace

import torch

from leanbridge.cliutil import progress_over
from tracker.data import TrackerData
from tracker.losses import centred_cosine_distance
from tracker.models import Tracker
from training.device import default_device


@dataclass(frozen=True)
class EvalConfig:
    # chains per test split (the first ones); None: every chain the dataset holds (``resolved``)
    max_chains: int | None = 512
    pair_lengths: tuple[int, ...] = (8, 64, 256)  # lengths at which partner distances are measured
    transformer_max_length: int = 1024  # the transformer's cost grows with L^2; longer splits are skipped
    chunk: int = 512  # histories run in lockstep at once
    # torch threads while evaluating [None: the caller's]. The views come out bit for bit the same
    # at 1 and 2 threads (tests/test_tracker.py holds it), so a run trained at one thread can be
    # evaluated on every core without changing its report.
    threads: int | None = None
    # the slot recurrence's own state: report its RMS coordinate after the last event by length
    # ("state_rms"; 1 at a fixed norm, a clock where it grows with the length)
    state_norms: bool = False
    # training chains the fit (``in_distribution.train``) reads, the first ones [None: max_chains]
    fit_chains: int | None = None

    def resolved(self, tests: dict[int, dict]) -> EvalConfig:
        """This config with ``max_chains`` a number: as given, or (None) the most chains a split of
        ``tests`` holds, so that every test chain is read and none is asked for that is not there;
        the fit then reads ``FIT_CHAINS`` training chains unless ``fit_chains`` says otherwise."""
        if self.max_chains is not None:
            return self
        return replace(self, max_chains=max((len(split["end"]) for split in tests.values()), default=1),
                       fit_chains=FIT_CHAINS if self.fit_chains is None else self.fit_chains)

    @property
    def fit(self) -> int | None:
        """The training chains the fit reads."""
        return self.max_chains if self.fit_chains is None else self.fit_chains


FIT_CHAINS = 512  # the fit's training chains when the test chains read are the dataset's own count


def fewer_chains(asked: int, tests: dict[int, dict]) -> dict[str, int]:
    """{length: chains it holds} for every test split of ``tests`` holding fewer than the
    ``asked`` chains per length (figures there count every chain of the split)."""
    return {str(n): len(split["end"]) for n, split in sorted(tests.items()) if len(split["end"]) < asked}


def requested_chains(asked: int, tests: dict[int, dict]) -> dict[str, int]:
    """``fewer_chains``, said in one line on stderr when not empty."""
    short = fewer_chains(asked, tests)
    if short:
        held = ", ".join(f"{count} at length {n}" for n, count in short.items())
        sys.stderr.write(f"warning: {asked} held-out chains per length asked for, the dataset holds fewer ({held}); "
                         "the figures there count those\n")
    return short


@contextmanager
def torch_threads(n: int | None):
    """Run the block at ``n`` torch threads (None: as they are), then restore the caller's count."""
    before = torch.get_num_threads()
    torch.set_num_threads(n or before)
    try:
        yield
    finally:
        torch.set_num_threads(before)


@torch.inference_mode()
def end_views(model: Tracker, items: torch.Tensor, chunk: int) -> torch.Tensor:
    """items (H, T) -> view at each history's end (H, C), in chunks of ``chunk`` histories."""
    return torch.cat([model.final_view(part.long()) for part in items.split(chunk)])


def right_trees(model: Tracker, views: torch.Tensor, ends: torch.Tensor, data: TrackerData) -> torch.Tensor:
    """views (N, C) at the chains' ends, ends (N,) their true tree ids -> (N,) whether the whole
    decoded tree (argmax per position, PAD included) is the true one. A negative target (a
    position a run trained with the cross-entropy on the tree's own positions does not read)
    matches anything: a tree read from the root stops where the true tree does once each of its
    own positions is right."""
    target = data.tree_tokens[ends]  # (N, P)
    return ((model.readout(views).argmax(-1) == target) | (target < 0)).all(-1)


def model_device(model: Tracker) -> torch.device:
    return next(model.parameters()).device


def evaluate(model: Tracker, data: TrackerData, config: EvalConfig = EvalConfig(), show_progress: bool = False) -> dict:
    """The free-running evaluation, on the model's device (the data is moved there); a progress
    bar over the test lengths on stderr when ``show_progress``."""
    was_training = model.training
    model.eval()
    device = model_device(model)
    try:
        with torch_threads(config.threads), torch.inference_mode(), default_device(device):
            return _evaluate(model, data.to(device), config.resolved(data.tests), show_progress)
    finally:
        model.train(was_training)


@torch.inference_mode()
def training_fit(model: Tracker, data: TrackerData, config: EvalConfig) -> dict:
    """Exact after the last event on the first ``config.fit`` training chains, run free like the
    test chains: {"length": events per training chain (the longest), "train": fraction exact}."""
    trees = data.train["chain_trees"][: config.fit].long()  # (N, T), -1 after a chain's end
    items = data.train["chain_items"][: config.fit]
    last = (trees >= 0).sum(1) - 1  # (N,) index of each chain's last step
    ends = trees[torch.arange(len(trees), device=trees.device), last]
    train = right_trees(model, end_views(model, items, config.chunk), ends, data).float().mean().item()
    return {"length": int(last.max()), "train": train}


def _evaluate(model: Tracker, data: TrackerData, config: EvalConfig, show_progress: bool = False) -> dict:
    started = time.perf_counter()
    exact: dict[str, float | None] = {}
    correct: dict[str, torch.Tensor] = {}  # per length: (N,) whether each chain's tree came out right
    pair: dict[str, float] = {}
    pairs: dict[str, int] = {}  # per length: the partner pairs pair[length] averages over
    unrelated: dict[str, float] = {}
    seconds: dict[str, float] = {}
    rms: dict[str, float] = {}  # per length: the slot's mean RMS coordinate after the last event
    is_transformer = model.config.arch.startswith("transformer")
    for length in progress_over(sorted(data.tests), "evaluate", unit="length", show=show_progress):
        split = data.tests[length]
        if is_transformer and length > config.transformer_max_length:
            exact[str(length)] = None
            continue
        t0 = time.perf_counter()
        items = split["chain_items"][: config.max_chains]
        ends = split["end"][: config.max_chains]
        z = end_views(model, items, config.chunk)  # (N, C)
        correct[str(length)] = right_trees(model, z, ends, data)
        exact[str(length)] = correct[str(length)].float().mean().item()
        other = torch.roll(torch.arange(len(ends), device=ends.device), 1)
        differ = ends != ends[other]
        if bool(differ.any()):
            unrelated[str(length)] = centred_cosine_distance(z[differ], z[other][differ]).mean().item()
        if length in config.pair_lengths:
            mates = split["partner_items"][: config.max_chains]  # (N, K, T)
            k = mates.shape[1]
            if k > 0:
                zp = end_views(model, mates.reshape(-1, mates.shape[-1]), config.chunk).view(len(ends), k, -1)
                pair[str(length)] = centred_cosine_distance(z[:, None, :].expand_as(zp), zp).mean().item()
                pairs[str(length)] = len(ends) * k
        if config.state_norms and hasattr(model, "end_slot"):
            slots = torch.cat([model.end_slot(items[i:i + config.chunk]) for i in range(0, len(items), config.chunk)])
            rms[str(length)] = (slots.norm(dim=-1) / slots.shape[-1] ** 0.5).mean().item()
        seconds[str(length)] = round(time.perf_counter() - t0, 3)
    lengths = sorted(int(n) for n in pair)
    fit = training_fit(model, data, config)
    beyond = beyond_training(model, data, config, correct)
    growth = None
    if len(lengths) >= 2 and pair[str(lengths[0])] > 0:
        growth = pair[str(lengths[-1])] / pair[str(lengths[0])]
    shortest = str(min(data.tests)) if data.tests else None
    return {"exact": exact, "pair_distance": pair, "pair_growth": growth,
            "pair_growth_lengths": [lengths[0], lengths[-1]] if len(lengths) >= 2 else None,
            "unrelated_distance": unrelated.get(shortest) if shortest else None,
            "in_distribution": {**fit, "fresh": exact.get(str(fit["length"]))},
            "unrelated_distance_by_length": unrelated, "beyond": beyond,
            "chains": {n: len(c) for n, c in correct.items()}, "chains_asked": config.max_chains,
            **({"fewer_chains_than_asked": short} if (short := fewer_chains(config.max_chains, data.tests)) else {}),
            "pairs": pairs, **({"state_rms": rms} if config.state_norms else {}),
            "eval_seconds": round(time.perf_counter() - started, 3),
            "eval_seconds_by_length": seconds, "eval_threads": torch.get_num_threads(), "correct": correct}


def _share(right: torch.Tensor, where: torch.Tensor) -> dict:
    """{"exact": share of ``right`` (N,) over the rows ``where`` (N,) holds, "chains": how many}."""
    n = int(where.sum())
    return {"exact": right[where].float().mean().item() if n else None, "chains": n}


@torch.inference_mode()
def beyond_training(model: Tracker, data: TrackerData, config: EvalConfig, correct: dict[str, torch.Tensor]) -> dict:
    """The figures on what training did not show (see the module docstring), from the per-chain
    results ``correct`` of the free-running evaluation and, for held-out events, one more free run
    of each chain's prefix up to its first held-out event."""
    by_seen: dict[str, dict] = {}
    by_size: dict[str, dict] = {}
    first: dict[str, dict] = {}
    # a tree's size: its real positions (neither PAD nor a position the cross-entropy ignores)
    sizes = ((data.tree_tokens != 0) & (data.tree_tokens >= 0)).sum(-1)  # (R,)
    for length, right in correct.items():
        split = data.tests[int(length)]
        n = len(right)
        ends = split["end"][:n]
        seen = split.get("end_seen")
        if seen is not None and not bool(seen[:n].all()):
            by_seen[length] = {"seen": _share(right, seen[:n]), "unseen": _share(right, ~seen[:n])}
        end_sizes = sizes[ends]
        if len(set(end_sizes.tolist())) > 1:
            by_size[length] = {str(k): _share(right, end_sizes == k) for k in sorted(set(end_sizes.tolist()))}
        if "first_heldout" in split:
            at = split["first_heldout"][:n]
            held = at >= 0
            if bool(held.any()):
                items = split["chain_items"][:n][held].long()
                steps = torch.arange(items.shape[1], device=items.device)
                prefix = torch.where(steps[None, :] <= at[held][:, None], items, torch.zeros_like(items))
                prefix = prefix[:, : int(at[held].max()) + 1]
                ok = right_trees(model, end_views(model, prefix, config.chunk), split["first_heldout_tree"][:n][held], data)
                first[length] = {"exact": ok.float().mean().item(), "chains": int(held.sum())}
    return {"by_end_seen": by_seen, "by_end_size": by_size, "first_heldout": first}

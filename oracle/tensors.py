"""What a probe dataset is as the oracle's tensors, whichever reader made it: ``OracleData``, the
probe kinds, and the probes of each step packed as (N, S, P) tensors.

Two readers give it: ``oracle.data`` (a chain dataset made with ``certify --probes``) and
``oracle.mathlib.tensors`` (a Mathlib probe dataset made with ``certify --mathlib``); every arm,
objective and metric reads either.
"""
from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace

import torch

from tracker.data import TrackerData

# The probe kinds of ``chains.rewrite.probes`` in a fixed order for reports; kinds the manifest names beyond
# these follow them, sorted.
KNOWN_KINDS = ("gold", "misplaced", "swap", "permuted", "random")
HARD_KIND = "misplaced"  # the event of another step of the same chain: the hard class


@dataclass
class OracleData:
    """One probe dataset as tensors. Shapes: I items, E tokens per item, Q distinct probe
    events (row 0 padding), Ep tokens per probe, N chains, K partners, T = length + 1 items per
    history, S = T - 1 probe steps, P probes per step (padded: probe id 0, verdict -1).
    On Mathlib probes a chain is a proof: items are its initial proof state and its tactics."""

    tracker: TrackerData | None  # chains: the tracker's tensors (vocabulary, events, trees); None on Mathlib
    item_tokens: torch.Tensor  # (I, E) token ids: the tracker's items, then the trees T_t and goals; Mathlib:
    #                            initial proof states and tactics, as Lean text's tokens
    probe_tokens: torch.Tensor  # (Q, Ep) token ids of each distinct probe event: rule, then path bits (a tactic's)
    probe_events: tuple[str, ...]  # (Q,) the event text of each probe row ("" for row 0)
    verdicts: tuple[str, ...]  # verdict classes, in the manifest's order (the class index is the target)
    kinds: tuple[str, ...]  # probe kinds
    train: dict[str, torch.Tensor]  # see the readers' ``_pack``; every training chain carries probes
    tests: dict[int, dict[str, torch.Tensor]]  # per length: the chains of the split that carry probes
    probe_chains: int  # chains per test split that carry probes (from the manifest)
    vocab_size: int  # token ids of items and probes lie in [0, vocab_size)
    identity: dict  # dataset and Lean identity, written beside every run
    encoding: dict  # what a reader of a checkpoint needs to encode inputs as these tensors do

    @property
    def device(self) -> torch.device:
        return self.item_tokens.device

    def to(self, device: torch.device | str) -> OracleData:
        """The dataset with every tensor on ``device`` (the tracker's tensors too); itself when it
        is there already (on the CPU nothing is copied)."""
        device = torch.device(device)
        if self.device == device:
            return self

        def moved(split: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
            return {k: v.to(device) for k, v in split.items()}

        return replace(self, tracker=None if self.tracker is None else self.tracker.to(device),
                       item_tokens=self.item_tokens.to(device), probe_tokens=self.probe_tokens.to(device),
                       train=moved(self.train), tests={n: moved(split) for n, split in self.tests.items()})

    @property
    def accepting(self) -> torch.Tensor:
        """(V,) bool, on the dataset's device: the classes in which Lean accepted the probe
        (accepted, complete)."""
        return torch.tensor([not v.startswith("rejected") for v in self.verdicts], device=self.device)

    @property
    def hard_kind(self) -> int:
        return self.kinds.index(HARD_KIND)

    @property
    def embedding(self) -> str:
        """How the models embed these tokens (``tracker.models.EMBEDDINGS``): Lean text has a
        vocabulary too large for one row per (position, token)."""
        return "bound" if self.tracker is not None else "factored"

    def goal_keys(self, split: dict[str, torch.Tensor]) -> torch.Tensor:
        """(N, ·) one row per chain of ``split``, equal for chains of one goal: the goal tree's
        item on chains, the initial proof state's item on Mathlib proofs."""
        if "goal_items" in split:
            return split["goal_items"].long()[:, None]
        return split["items"][:, :1].long()


def ordered_kinds(found: Iterable[str]) -> tuple[str, ...]:
    found = set(found)
    return tuple(k for k in KNOWN_KINDS if k in found) + tuple(sorted(found - set(KNOWN_KINDS)))


def pack_probe_rows(rows: list[list[list[tuple[int, int, int]]]], steps: int) -> dict[str, torch.Tensor]:
    """probes (int32, 0 = none), verdicts and kinds (int8, -1 = none), each (N, S, P), from each
    chain's rows: per step, (probe id, verdict class, kind) of each probe tried there."""
    width = max((len(r) for chain in rows for r in chain), default=1)
    probes = torch.zeros(len(rows), steps, width, dtype=torch.int32)
    verdicts = torch.full((len(rows), steps, width), -1, dtype=torch.int8)
    kinds = torch.full((len(rows), steps, width), -1, dtype=torch.int8)
    for n, chain in enumerate(rows):
        for t, row in enumerate(chain):
            if row:
                block = torch.tensor(row, dtype=torch.int32)  # (P_t, 3)
                probes[n, t, : len(row)] = block[:, 0]
                verdicts[n, t, : len(row)] = block[:, 1].to(torch.int8)
                kinds[n, t, : len(row)] = block[:, 2].to(torch.int8)
    return {"probes": probes, "verdicts": verdicts, "kinds": kinds}

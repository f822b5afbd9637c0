"""Probe data as tensors: the kernel's verdicts on probe events along certified chains.

A dataset made with ``certify --probes`` carries, on every training chain and on the first
``probe_chains`` chains of each test split, a field ``probes``: entry t lists the probes tried
on the tree T_t reached after the first t events, as ``[kind, event, verdict]``, the verdict
Lean's (``accepted``, ``complete``: accepted and the result is the chain's end tree, or
``rejected:<class>``). The classes are read from the manifest, never assumed.

On top of the tracker's tensors (``tracker.data.load_dataset``, which checks the dataset's
certification and replays its chains) this adds:

- the goal of every chain (its end tree) as an item of its own, read as a start: the slot
  tracks the tree only (a history starts with its start tree, as the tracker's do), and
  whether an accepted probe *completes* the proof is a comparison of the imagined successor
  with the goal read as a start (``oracle.model``), not something the slot must carry;
- every probe step of a chain: the probe's id in a table of distinct probe events, its
  verdict class and kind, and the item of the true tree T_t for the arm that is handed it.

Built once and cached beside the dataset, like the tracker's tensors. A Mathlib probe dataset
(``certify --mathlib``) gives the same tensors (``oracle.tensors.OracleData``) from Lean text:
``oracle.mathlib.tensors``; ``load_probe_dataset`` reads either, by the manifest's format.
"""
from __future__ import annotations

import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

import torch

from chains.manifest import (DATASET_FORMATS, FORMAT_VERSION, MATHLIB_FORMAT, DatasetError, manifest_bytes,
                             manifest_path, read_manifest, read_manifest_json)
from chains.rewrite.rules import Event, EventSyntaxError, apply
from chains.rewrite.space import Domain
from chains.rewrite.trees import Tree, parse_polish, tokens
from oracle.tensors import HARD_KIND, OracleData, ordered_kinds, pack_probe_rows
from tracker.data import Batch, TrackerData, load_dataset
from training.files import save_atomic

# Bump when the cached tensors change meaning; it is part of the cache key.
CACHE_VERSION = 2


def probe_tokens(event: Event, index: dict[str, int]) -> list[int]:
    """The rule's token, then one token per bit of the path (as the tracker reads an event)."""
    return [index[event.rule]] + [index[b] for b in event.path]


class _ProbeBuilder:
    """Interns proof-state items and probe events while the split files are read."""

    def __init__(self, tracker: TrackerData, domain: Domain, verdicts: tuple[str, ...], kinds: tuple[str, ...]):
        self.domain = domain
        self.index = tracker.vocab.index()
        self.tree_len = tracker.tree_len
        self.verdict_id = {v: i for i, v in enumerate(verdicts)}
        self.kind_id = {k: i for i, k in enumerate(kinds)}
        self.first_state = tracker.n_items  # proof-state items follow the tracker's items
        self.states: dict[Tree, int] = {}
        self.state_rows: list[list[int]] = []
        self.probes: dict[str, int] = {"": 0}
        self.probe_rows: list[list[int]] = [[]]
        self.trees: dict[Tree, list[int]] = {}
        self.steps: dict[tuple[Tree, str], Tree] = {}

    def tree_tokens(self, tree: Tree) -> list[int]:
        if tree not in self.trees:
            ids = [self.index[t] for t in tokens(tree)]
            self.trees[tree] = ids + [0] * (self.tree_len - len(ids))
        return self.trees[tree]

    def state(self, tree: Tree) -> int:
        """The item id of ``tree`` read as a start (a true tree T_t, or a goal)."""
        if tree not in self.states:
            self.states[tree] = self.first_state + len(self.state_rows)
            self.state_rows.append(self.tree_tokens(tree))
        return self.states[tree]

    def probe(self, text: str, where: str) -> int:
        if text not in self.probes:
            try:
                event = Event.parse(text)
            except EventSyntaxError as e:
                raise DatasetError(f"{where}: {e}") from None
            self.probes[text] = len(self.probe_rows)
            self.probe_rows.append(probe_tokens(event, self.index))
        return self.probes[text]

    def step(self, tree: Tree, event: Event) -> Tree:
        key = (tree, str(event))
        if key not in self.steps:
            self.steps[key] = apply(tree, event, self.domain.size_bound)
        return self.steps[key]

    def chain(self, record: dict, where: str) -> dict:
        """One probe-carrying chain: its true trees' and goal's items and its probe rows."""
        atoms = self.domain.atom_names
        start, goal = parse_polish(record["start"], atoms), parse_polish(record["end"], atoms)
        events = [Event.parse(e) for e in record["events"]]
        probes = record["probes"]
        if not isinstance(probes, list) or len(probes) != len(events):
            raise DatasetError(f"{where}: probes must list one entry per step ({len(events)}), "
                               f"found {len(probes) if isinstance(probes, list) else type(probes).__name__}")
        tree, truth, rows = start, [], []
        for t, entry in enumerate(probes):
            truth.append(self.state(tree))
            if not isinstance(entry, list):
                raise DatasetError(f"{where} step {t}: the probes of a step must be a list")
            row = []
            for probe in entry:
                if not (isinstance(probe, list) and len(probe) == 3 and all(isinstance(x, str) for x in probe)):
                    raise DatasetError(f"{where} step {t}: a probe must be [kind, event, verdict], got {probe!r:.80}")
                kind, text, verdict = probe
                if kind not in self.kind_id or verdict not in self.verdict_id:
                    raise DatasetError(f"{where} step {t}: kind {kind!r} or verdict {verdict!r} is not in the "
                                       "manifest's probe summary")
                if kind == "gold" and text != record["events"][t]:
                    raise DatasetError(f"{where} step {t}: the gold probe {text} is not the chain's event "
                                       f"{record['events'][t]}")
                row.append((self.probe(text, f"{where} step {t}"), self.verdict_id[verdict], self.kind_id[kind]))
            rows.append(row)
            tree = self.step(tree, events[t])
        return {"goal": self.state(goal), "truth": truth, "rows": rows}


def _pack(chains: list[dict], tracker_split: dict[str, torch.Tensor], rows: list[int]) -> dict[str, torch.Tensor]:
    """Tensors of the probe-carrying chains ``rows`` of a split: items (N, T) and partner_items
    (N, K, T) as the tracker's (start tree, then events), goal_items (N,), truth_items (N, S),
    probes / verdicts / kinds (N, S, P)."""
    items = tracker_split["chain_items"][rows].clone()  # (N, T): start tree, then the events
    partner_items = tracker_split["partner_items"][rows].clone()  # (N, K, T)
    steps = items.shape[1] - 1
    truth = torch.zeros(len(chains), steps, dtype=torch.int32)
    for n, chain in enumerate(chains):
        truth[n, : len(chain["truth"])] = torch.tensor(chain["truth"], dtype=torch.int32)
    goals = torch.tensor([c["goal"] for c in chains], dtype=torch.int32)
    return {"items": items, "partner_items": partner_items, "truth_items": truth, "goal_items": goals,
            **pack_probe_rows([c["rows"] for c in chains], steps)}


def probe_summary(manifest: dict, where: str) -> tuple[tuple[str, ...], tuple[str, ...], int]:
    """(verdict classes, kinds, probe chains per test split) from the manifest's probe summary."""
    summary = manifest.get("probes")
    if not isinstance(summary, dict) or not isinstance(summary.get("verdicts"), list) or not summary["verdicts"]:
        raise DatasetError(f"{where}: no probe summary in the manifest; make the dataset with certify --probes")
    by_kind = summary.get("by_kind")
    if not isinstance(by_kind, dict) or not by_kind:
        raise DatasetError(f"{where}: the probe summary lists no probe kinds")
    kinds = ordered_kinds(by_kind)
    if HARD_KIND not in kinds:
        raise DatasetError(f"{where}: the probe summary has no {HARD_KIND!r} probes (the hard class)")
    return tuple(summary["verdicts"]), kinds, int(summary.get("probe_chains", 0))


def _build(directory: Path, manifest: dict, tracker: TrackerData) -> dict:
    where = str(manifest_path(directory))
    verdicts, kinds, probe_chains = probe_summary(manifest, where)
    domain = Domain(atoms=manifest["atoms"], tier=manifest["tier"], max_size=manifest.get("max_size"))
    builder = _ProbeBuilder(tracker, domain, verdicts, kinds)
    splits: dict[str, dict[str, torch.Tensor]] = {}
    for name in sorted(manifest["files"]):
        chains, rows = [], []
        with open(directory / name, encoding="utf-8") as handle:
            for n, line in enumerate(handle):
                if '"probes"' not in line:  # skip parsing the long chains that carry none
                    continue
                record = json.loads(line)
                if "probes" not in record:
                    continue
                chain = builder.chain(record, f"{directory / name} line {n + 1} (chain {record.get('id')})")
                chains.append(chain)
                rows.append(n)
        if name == "train.jsonl" and len(rows) != manifest["files"][name].get("chains"):
            raise DatasetError(f"{directory / name}: {len(rows)} of {manifest['files'][name].get('chains')} "
                               "training chains carry probes; every one must")
        if rows:
            split = tracker.train if name == "train.jsonl" else tracker.tests[int(name[len("test-"):-len(".jsonl")])]
            splits[name] = _pack(chains, split, rows)
    if "train.jsonl" not in splits:
        raise DatasetError(f"{directory}: no training chain carries probes")
    width = max(tracker.item_len, tracker.tree_len, max(len(r) for r in builder.probe_rows))
    item_tokens = torch.zeros(tracker.n_items + len(builder.state_rows), width, dtype=torch.long)
    item_tokens[: tracker.n_items, : tracker.item_len] = tracker.item_tokens
    if builder.state_rows:
        item_tokens[tracker.n_items:, : tracker.tree_len] = torch.tensor(builder.state_rows)
    probe_len = max(len(r) for r in builder.probe_rows)
    probe_table = torch.zeros(len(builder.probe_rows), probe_len, dtype=torch.long)
    for q, row in enumerate(builder.probe_rows):
        probe_table[q, : len(row)] = torch.tensor(row, dtype=torch.long)
    return {"cache_version": CACHE_VERSION, "item_tokens": item_tokens, "probe_tokens": probe_table,
            "probe_events": list(builder.probes), "verdicts": list(verdicts), "kinds": list(kinds),
            "probe_chains": probe_chains, "train": splits.pop("train.jsonl"),
            "tests": {int(name[len("test-"):-len(".jsonl")]): split for name, split in splits.items()}}


def cache_path(directory: Path) -> Path:
    key = hashlib.sha256(manifest_bytes(directory) + f"oracle-v{CACHE_VERSION}".encode())
    return Path(directory) / ".cache" / f"oracle-{key.hexdigest()[:16]}.pt"


def load_probe_dataset(directory: Path | str, use_cache: bool = True, corrupted_checker: bool = False) -> OracleData:
    """Either format, by the manifest's ``format``: a chain dataset made with ``certify --probes``
    (``load_chain_probes``; with wrong partners on purpose, refused unless ``corrupted_checker``)
    or a Mathlib probe dataset made with ``certify --mathlib``."""
    directory = Path(directory)
    manifest = read_manifest_json(directory)
    found = manifest.get("format") if isinstance(manifest, dict) else None
    if found == MATHLIB_FORMAT:
        from oracle.mathlib.tensors import load_mathlib_probes  # Lean text: the Mathlib records' own reader

        return load_mathlib_probes(directory, manifest)
    if found not in DATASET_FORMATS:
        raise DatasetError(f"{manifest_path(directory)}: format {found!r} is none of this project's "
                           f"probe datasets ({FORMAT_VERSION}: chains, {MATHLIB_FORMAT!r}: Mathlib probes)")
    return load_chain_probes(directory, use_cache, corrupted_checker)


def load_chain_probes(directory: Path, use_cache: bool = True, corrupted_checker: bool = False) -> OracleData:
    """The tracker's tensors (certification checked there, ``corrupted_checker`` as
    ``tracker.data.load_dataset`` takes it) and the probes, from the cache when the manifest and
    this code's cache version match."""
    tracker = load_dataset(directory, use_cache=use_cache, corrupted_checker=corrupted_checker)
    manifest = read_manifest(directory)
    cached = cache_path(directory)
    blob = torch.load(cached, weights_only=True) if use_cache and cached.is_file() else None
    if blob is None or blob.get("cache_version") != CACHE_VERSION:
        blob = _build(directory, manifest, tracker)
        if use_cache and os.access(cached.parent, os.W_OK):  # the tracker made .cache/ where it could
            save_atomic(blob, cached)
    return OracleData(tracker=tracker, item_tokens=blob["item_tokens"], probe_tokens=blob["probe_tokens"],
                      probe_events=tuple(blob["probe_events"]), verdicts=tuple(blob["verdicts"]),
                      kinds=tuple(blob["kinds"]), train=blob["train"],
                      tests={int(k): v for k, v in blob["tests"].items()}, probe_chains=blob["probe_chains"],
                      vocab_size=tracker.vocab.size, identity=tracker.identity,
                      # what a reader of the checkpoint needs to encode any tree and event (oracle.scorer)
                      encoding={"vocab": {"atoms": list(tracker.vocab.atoms), "rules": list(tracker.vocab.rules)},
                                "tree_len": tracker.tree_len})


@dataclass
class ProbeBatch:
    """B training chains (with their K partners when the objective needs them) and their probes."""

    histories: Batch  # items (H, T): the B chains first, then partner k of chain b at row B + b * K + k
    probes: torch.Tensor  # (B, S, P) probe ids, 0 = none
    verdicts: torch.Tensor  # (B, S, P) verdict class, -1 = none
    truth_items: torch.Tensor  # (B, S) the item of the true tree T_t
    goal_items: torch.Tensor | None  # (B,) the item of each chain's goal (None on Mathlib proofs)


def sample_probe_batch(data: OracleData, chains: int, with_partners: bool, generator: torch.Generator
                       ) -> ProbeBatch:
    """B = ``chains`` training chains drawn with ``generator`` (on the data's device), with their
    partners when ``with_partners``."""
    train = data.train
    idx = torch.randint(0, train["items"].shape[0], (chains,), generator=generator, device=generator.device)
    items = train["items"][idx]  # (B, T)
    k = 0
    if with_partners:
        mates = train["partner_items"][idx]  # (B, K, T)
        k = mates.shape[1]
        items = torch.cat([items, mates.reshape(-1, mates.shape[-1])])
    if data.tracker is None:  # Mathlib proofs: no trees (the oracle decodes none)
        trees = torch.full(items.shape, -1, device=items.device)
    else:
        trees = data.tracker.train["chain_trees"][idx]
        if with_partners:
            trees = torch.cat([trees, data.tracker.train["partner_trees"][idx].reshape(-1, trees.shape[-1])])
    return ProbeBatch(histories=Batch(items=items.long(), trees=trees.long(), chains=chains, partners=k),
                      probes=train["probes"][idx].long(), verdicts=train["verdicts"][idx].long(),
                      truth_items=train["truth_items"][idx].long(),
                      goal_items=train["goal_items"][idx].long() if "goal_items" in train else None)

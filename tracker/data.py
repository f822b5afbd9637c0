"""A certified dataset as tensors: vocabulary, loading (once, cached beside the dataset),
and batches of chains with their partners.

Every history becomes a row of *item* ids. An item is what the tracker reads at one step:
the start tree (its Polish tokens) or one rewrite event (the rule's token, then one token per
bit of its position). Item 0 is padding. For every step we also keep the id of the tree the
history is at after it (found once, at load time, by replaying the events with
``chains.rewrite.rules.apply``), which is the cross-entropy target.
"""
from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import ClassVar, Protocol

import torch

from chains.domains import domain_of_manifest
from chains.files import OutputError
from chains.manifest import (DOMAIN_FORMAT, PROGRAMS_FORMAT, DatasetError, check_count, check_steps, dataset_id,
                             manifest_bytes, manifest_path, read_manifest)
from chains.rewrite.dataset import read_split
from chains.rewrite.holdout import HeldOut
from chains.rewrite.rules import Event, apply, successors
from chains.rewrite.space import Domain, domain_of
from chains.rewrite.trees import OPS, Tree, polish, tokens
from chains.writer import file_sha256
from tracker.packing import PAD, Row, pack, successor_tables
from training.files import UnreadableFile, load_torch_file, save_atomic

# Bump when the cached tensors change meaning; it is part of the cache key.
CACHE_VERSION = 2
BITS = ("0", "1")


@dataclass(frozen=True)
class Vocab:
    """Token ids shared by every model. Output tokens (tree tokens and PAD) come first, so a
    tree target uses ids ``[0, n_out)`` of the same table."""

    atoms: tuple[str, ...]
    rules: tuple[str, ...]
    domain: ClassVar[str] = "rewrite"  # the domain's name, as models are told it (``DomainVocab.domain``)

    @property
    def tokens(self) -> tuple[str, ...]:
        return (PAD, *OPS, *self.atoms, *self.rules, *BITS)

    @property
    def n_out(self) -> int:  # PAD, the operators and the atoms
        return 1 + len(OPS) + len(self.atoms)

    def output_ids(self, classes: Sequence[int]) -> list[int]:
        """A readout's classes (``RewriteDomain.state_classes``) as output ids: the same numbers
        (class 0 is the padding after a tree's end, the others its tokens in this order)."""
        return list(classes)

    def classes_of(self, ids: Sequence[int]) -> list[int]:
        return list(ids)

    @property
    def size(self) -> int:
        return len(self.tokens)

    def index(self) -> dict[str, int]:
        return {tok: i for i, tok in enumerate(self.tokens)}


@dataclass
class TrackerData:
    """One dataset as tensors. Shapes: I items, E tokens per item, R trees, P tree positions,
    N chains, K partners per chain, T = length + 1 steps (the start is step 0)."""

    vocab: Vocab
    item_tokens: torch.Tensor  # (I, E) token ids; row 0 is padding
    tree_tokens: torch.Tensor  # (R, P) output token ids, PAD after the tree's end
    tree_items: torch.Tensor  # (R,) the item id that reads tree r as a start
    train: dict[str, torch.Tensor]  # chain_items (N,T), chain_trees (N,T), partner_items (N,K,T), partner_trees (N,K,T)
    # per length: chain_items (N,T), end (N,), partner_items (N,K,T), end_seen (N,) whether training
    # (a chain or a partner) visits the end tree, and with a held-out protocol of events or pairs
    # first_heldout (N,) the item index right after the first held-out event (or the second event
    # of the first held-out pair), first_heldout_tree (N,) the tree there; -1 where none
    tests: dict[int, dict[str, torch.Tensor]]
    succ_items: torch.Tensor  # (R, A) item ids of the events applicable to tree r, -1 after the last
    succ_trees: torch.Tensor  # (R, A) the tree each of those events leads to, -1 after the last
    identity: dict  # dataset and Lean identity, from the manifest

    @property
    def tree_len(self) -> int:
        return self.tree_tokens.shape[1]

    @property
    def item_len(self) -> int:
        return self.item_tokens.shape[1]

    @property
    def n_items(self) -> int:
        return self.item_tokens.shape[0]

    @property
    def device(self) -> torch.device:
        return self.item_tokens.device

    def to(self, device: torch.device | str) -> TrackerData:
        """The dataset with every tensor on ``device``; itself when it is there already (on the
        CPU nothing is copied)."""
        device = torch.device(device)
        if self.device == device:
            return self

        def moved(split: dict[str, torch.Tensor]) -> dict[str, torch.Tensor]:
            return {k: v.to(device) for k, v in split.items()}

        return replace(self, item_tokens=self.item_tokens.to(device), tree_tokens=self.tree_tokens.to(device),
                       tree_items=self.tree_items.to(device), train=moved(self.train),
                       tests={n: moved(split) for n, split in self.tests.items()},
                       succ_items=self.succ_items.to(device), succ_trees=self.succ_trees.to(device))


def check_certified(directory: Path, corrupted_checker: bool = False) -> dict:
    """The manifest, if it says every step was certified and its files are the certified
    ones; otherwise DatasetError naming the file. (Re-running Lean is ``verify_dataset``'s job;
    this is the cheap check that the certified flag can be trusted.) A dataset whose partners
    are partly wrong on purpose (``certify --corrupt-partners``) is refused unless
    ``corrupted_checker`` says the caller means to train on a corrupted checker."""
    directory = Path(directory)
    manifest = read_manifest(directory)
    where = manifest_path(directory)
    corrupt = manifest.get("corrupt_partners")
    if corrupt is not None and not corrupted_checker:
        raise DatasetError(f"{where}: {corrupt.get('replaced')} of its {corrupt.get('partners')} training partners "
                           f"are wrong on purpose ({corrupt.get('kind')}:{corrupt.get('share')}); refusing to train "
                           "on a corrupted checker unless told so (--corrupted-checker)")
    failed, certified = manifest.get("failed"), manifest.get("certified")
    if failed != 0:
        raise DatasetError(f"{where}: {failed} statement(s) failed certification; refusing to train on it")
    if not isinstance(certified, int) or certified <= 0:
        raise DatasetError(f"{where}: no certified statements recorded; refusing to train on it")
    # a programs dataset's steps are certified by traces (chains.programs.files)
    distinct = manifest.get("distinct_steps", manifest.get("distinct_traces", 0)) + manifest.get("distinct_equivalences", 0)
    if certified != distinct:
        raise DatasetError(f"{where}: {certified} certified of {distinct} distinct statements; "
                           "not every step is certified")
    files = manifest.get("files")
    if not isinstance(files, dict) or "train.jsonl" not in files:
        raise DatasetError(f"{where}: lists no train.jsonl")
    for name, meta in sorted(files.items()):
        path = directory / name
        if not path.is_file():
            raise DatasetError(f"{path}: listed in the manifest but missing")
        if file_sha256(path) != meta.get("sha256"):
            raise DatasetError(f"{path}: contents differ from the certified hash in the manifest (edited after "
                               "certification); re-run certify")
    return manifest


class Replayable(Protocol):
    """A history as the builder replays it: a dataset's record, or a chain drawn afresh."""

    start: Tree
    events: Sequence[Event]
    end: Tree


class _Builder:
    """Interns trees and items while a dataset is replayed."""

    def __init__(self, vocab: Vocab, max_size: int | None) -> None:
        self.vocab = vocab
        self.tok = vocab.index()
        self.max_size = max_size
        self.trees: list[Tree] = []
        self.tree_id: dict[Tree, int] = {}
        self.events: list[Event] = []
        self.event_id: dict[Event, int] = {}
        self.step_memo: dict[tuple[int, int], int | None] = {}

    def tree(self, tree: Tree) -> int:
        if tree not in self.tree_id:
            self.tree_id[tree] = len(self.trees)
            self.trees.append(tree)
        return self.tree_id[tree]

    def event(self, event: Event) -> int:
        if event not in self.event_id:
            self.event_id[event] = len(self.events)
            self.events.append(event)
        return self.event_id[event]

    def step(self, tree: int, event: int) -> int | None:
        key = (tree, event)
        if key not in self.step_memo:
            after = apply(self.trees[tree], self.events[event], self.max_size)
            self.step_memo[key] = None if after is None else self.tree(after)
        return self.step_memo[key]

    def history(self, record: Replayable, where: str) -> tuple[list[tuple[str, int]], list[int]]:
        """(items, trees after each step); items are ("tree", id) or ("event", id) for now."""
        here = self.tree(record.start)
        items, trees = [("tree", here)], [here]
        for k, event in enumerate(record.events):
            after = self.step(here, self.event(event))
            if after is None:
                raise DatasetError(f"{where} step {k}: event {event} does not apply, so it cannot be certified")
            here = after
            items.append(("event", self.event_id[event]))
            trees.append(here)
        if self.trees[here] != record.end:
            raise DatasetError(f"{where}: the stored end tree does not follow from its events")
        return items, trees


def _replay_splits(directory: Path, manifest: dict, domain: Domain, builder: _Builder) -> dict[str, list[Row]]:
    """Every split's chains and partners replayed by ``builder``, checked against the manifest's
    counts: split file name -> rows."""
    where_manifest = str(manifest_path(directory))
    for name in manifest["files"]:
        if name != "train.jsonl" and not re.fullmatch(r"test-[1-9][0-9]*\.jsonl", name):
            raise DatasetError(f"{where_manifest}: {name} is neither train.jsonl nor test-<length>.jsonl")
    splits: dict[str, list[Row]] = {}
    steps = 0
    for name in sorted(manifest["files"]):
        rows = []
        for where, record in read_split(directory / name, domain):
            chain = builder.history(record, where)
            mates = []
            for p, mate in enumerate(record.partners):
                if mate.wrong and not manifest.get("corrupt_partners"):
                    raise DatasetError(f"{where} partner {p}: marked wrong, and the manifest declares no wrong "
                                       "partners")
                if mate.end != record.end and not mate.wrong:  # a wrong partner is trained on as a partner
                    raise DatasetError(f"{where} partner {p}: does not end at its chain's tree")
                mates.append(builder.history(mate, f"{where} partner {p}"))
            steps += len(record.events) + sum(len(m.events) for m in record.partners)
            rows.append((chain, mates))
        check_count(directory / name, len(rows), manifest["files"][name].get("chains"), "chain")
        splits[name] = rows
    check_steps(where_manifest, steps, manifest)
    return splits


def _item_tables(builder: _Builder, domain: Domain) -> tuple[torch.Tensor, torch.Tensor]:
    """(item_tokens (1 + R + events, E), tree_tokens (R, P)): the item table is 0 = pad, then the
    trees (as starts), then the events."""
    tok = builder.tok
    trees = [[tok[t] for t in tokens(tree)] for tree in builder.trees]  # each tree's token ids
    events = [[tok[event.rule]] + [tok[b] for b in event.path] for event in builder.events]
    tree_len = max(map(len, trees))
    if domain.size_bound is not None:
        tree_len = max(tree_len, domain.size_bound)
    item_len = max(tree_len, max(map(len, events), default=1))
    # rows padded with 0 (PAD) and made tensors at once: a fresh stream builds a table every step
    tree_tokens = torch.tensor([ids + [0] * (tree_len - len(ids)) for ids in trees], dtype=torch.long)
    item_tokens = torch.tensor([[0] * item_len] + [ids + [0] * (item_len - len(ids)) for ids in trees + events],
                               dtype=torch.long)
    return item_tokens, tree_tokens


def _look_ahead(builder: _Builder, domain: Domain, ends: Sequence[int]) -> dict[int, list[tuple[int, int]]]:
    """The metric loss's one-step look-ahead: per end tree id, (event id, tree id) of every event that
    applies to it, in ``successors``' order, interned by ``builder`` (before its item table is built)."""
    return {r: [(builder.event(e), builder.tree(t)) for e, t in successors(builder.trees[r], domain.rules,
                                                                          domain.size_bound)]
            for r in ends}


def history_tensors(vocab: Vocab, domain: Domain, rows: Sequence[tuple[Replayable, Sequence[Replayable]]],
                    where: str) -> TrackerData:
    """Histories (each a chain and its partners, with ``start``, ``events`` and ``end`` trees) as a
    training split of their own, replayed and packed as the loader packs a dataset's (``_build``):
    an item table, trees and successor tables of these histories only, no test split. ``where``
    names them in a DatasetError (an event that does not apply, a stored end that does not follow)."""
    builder = _Builder(vocab, domain.size_bound)
    replayed = [(builder.history(chain, f"{where} chain {n}"),
                 [builder.history(mate, f"{where} chain {n} partner {p}") for p, mate in enumerate(mates)])
                for n, (chain, mates) in enumerate(rows)]
    succ = _look_ahead(builder, domain, sorted({chain[1][-1] for chain, _ in replayed}))
    item_tokens, tree_tokens = _item_tables(builder, domain)
    n_trees = len(builder.trees)
    succ_items, succ_trees = successor_tables(succ, n_trees)
    return TrackerData(vocab=vocab, item_tokens=item_tokens, tree_tokens=tree_tokens,
                       tree_items=torch.arange(1, n_trees + 1), train=pack(replayed, n_trees, with_trees=True),
                       tests={}, succ_items=succ_items, succ_trees=succ_trees, identity={})


def held_out(manifest: dict) -> HeldOut | None:
    """What the manifest's ``holdout`` field holds out, when its protocol holds out events or
    pairs; None otherwise (no protocol, or states)."""
    holdout = manifest.get("holdout")
    if not holdout or holdout.get("kind") not in ("events", "pairs"):
        return None
    return HeldOut.from_field(holdout, "holdout")


def first_heldout(events: Sequence[Event], held: HeldOut) -> int | None:
    """The item index right after a history's first held-out event (with pairs: after the second
    event of its first held-out pair), or None when it holds none; item 0 is the start tree."""
    found = held.first_held(events)
    return None if found is None else found[0] + 1


def _test_splits(splits: dict[str, list[Row]], seen: set[int], held: HeldOut | None, builder: _Builder
                 ) -> dict[int, dict[str, torch.Tensor]]:
    """The test splits packed, by length, with end_seen and (held-out events or pairs) the first
    held-out occurrence and the tree there."""
    n_trees = len(builder.trees)
    tests = {}
    for name, rows in splits.items():
        split = pack(rows, n_trees, with_trees=False)
        split["end_seen"] = torch.tensor([chain[1][-1] in seen for chain, _ in rows], dtype=torch.bool)
        if held is not None:
            firsts = [first_heldout([builder.events[i] for _, i in chain[0][1:]], held) for chain, _ in rows]
            split["first_heldout"] = torch.tensor([-1 if k is None else k for k in firsts], dtype=torch.long)
            split["first_heldout_tree"] = torch.tensor([-1 if k is None else chain[1][k]
                                                        for k, (chain, _) in zip(firsts, rows)], dtype=torch.long)
        tests[int(name[len("test-"):-len(".jsonl")])] = split
    return tests


def _build(directory: Path, manifest: dict) -> dict:
    """Replay every split into plain tensors (the cache's contents)."""
    domain = domain_of(manifest, str(manifest_path(directory)))
    vocab = Vocab(domain.atom_names, domain.rules)
    builder = _Builder(vocab, domain.size_bound)
    splits = _replay_splits(directory, manifest, domain, builder)
    succ = _look_ahead(builder, domain, sorted({chain[1][-1] for chain, _ in splits["train.jsonl"]}))
    item_tokens, tree_tokens = _item_tables(builder, domain)
    n_trees = len(builder.trees)
    train_rows = splits.pop("train.jsonl")
    train = pack(train_rows, n_trees, with_trees=True)
    seen = {r for chain, mates in train_rows for _, trees in [chain, *mates] for r in trees}
    tests = _test_splits(splits, seen, held_out(manifest), builder)
    succ_items, succ_trees = successor_tables(succ, n_trees)
    return {"cache_version": CACHE_VERSION, "atoms": list(vocab.atoms), "rules": list(vocab.rules),
            "item_tokens": item_tokens, "tree_tokens": tree_tokens,
            "tree_items": torch.arange(1, n_trees + 1), "train": train, "tests": tests,
            "succ_items": succ_items, "succ_trees": succ_trees,
            "trees": [polish(t) for t in builder.trees]}


def _build_domain(directory: Path, manifest: dict) -> dict:
    """A dataset of another domain than rewrite chains (programs, a domain of one's own) through
    ``tracker.domain_data``."""
    if manifest.get("format") == DOMAIN_FORMAT:
        from chains.imported.holdout import held_of
        from chains.records import read_splits
        from tracker.domain_data import build_tensors

        where = str(manifest_path(directory))
        domain = domain_of_manifest(manifest, where)
        held = held_of(domain, manifest, where)
        first_held = None if held is None or held.kind == "states" else held.first_held
        return {"cache_version": CACHE_VERSION,
                **build_tensors(domain, read_splits(domain.domain, directory, manifest, where), first_held)}
    from chains.programs.dataset import HeldPrograms
    from chains.programs.domain import ProgramsDomain
    from chains.programs.files import machine_of, split_histories
    from chains.programs.syntax import parse_statement
    from tracker.domain_data import build_tensors

    machine = machine_of(manifest, str(manifest_path(directory)))
    holdout = manifest.get("holdout") or {}
    first_held = None
    if holdout.get("kind") == "events":
        held = HeldPrograms("events", statements=tuple(parse_statement(t, machine) for t in holdout["events"]))
        first_held = held.first_held
    elif holdout.get("kind") == "pairs":
        held = HeldPrograms("pairs", pairs=tuple((parse_statement(a, machine), parse_statement(b, machine))
                                                 for a, b in holdout["pairs"]))
        first_held = held.first_held
    blob = build_tensors(ProgramsDomain(machine), split_histories(directory, manifest), first_held)
    return {"cache_version": CACHE_VERSION, **blob}


def identity_of(directory: Path, manifest: dict) -> dict:
    """The dataset and Lean a run trains on, as its checkpoint and report record them; with
    wrong partners on purpose, the manifest's ``corrupt_partners`` too (a run on a corrupted
    checker says so wherever its dataset is named)."""
    lean = manifest.get("lean", {})
    dataset = {"path": str(directory), "dataset_id": dataset_id(manifest),
               "seed": manifest.get("seed"), "tier": manifest.get("tier"), "atoms": manifest.get("atoms")}
    if manifest.get("corrupt_partners") is not None:
        dataset["corrupt_partners"] = manifest["corrupt_partners"]
    if "domain" in manifest:  # another domain than rewrite chains (a rewrite identity names no domain)
        dataset["domain"] = manifest["domain"]
    return {"dataset": dataset,
            "lean": {"version": lean.get("version"), "githash": lean.get("githash"),
                     "core_hash": manifest.get("core_hash")}}


def cache_path(directory: Path) -> Path:
    key = hashlib.sha256(manifest_bytes(directory) + f"v{CACHE_VERSION}".encode())
    return Path(directory) / ".cache" / f"tracker-{key.hexdigest()[:16]}.pt"


def load_dataset(directory: Path | str, use_cache: bool = True, corrupted_checker: bool = False) -> TrackerData:
    """Check the dataset's certification, then read it into tensors (from the cache when the
    manifest and this code's cache version match, else by replaying it and writing the cache).
    A dataset with wrong partners on purpose is refused unless ``corrupted_checker``; with it,
    each wrong partner is read as a partner of its chain (what a soft checker would hand over)."""
    directory = Path(directory)
    manifest = check_certified(directory, corrupted_checker)
    cached = cache_path(directory)
    other_domain = manifest.get("format") in (PROGRAMS_FORMAT, DOMAIN_FORMAT)
    blob = _load_cache(cached, DOMAIN_CACHE_KEYS if other_domain else CACHE_KEYS) if use_cache else None
    if blob is None:
        blob = _build_domain(directory, manifest) if other_domain else _build(directory, manifest)
        if use_cache:
            _save_cache(blob, cached)
    if other_domain:
        from tracker.domain_data import DomainVocab
        # the domain itself, not only its name: a model built for the dataset may ask it (the registers' geometry)
        domain = domain_of_manifest(manifest, str(manifest_path(directory)))
        vocab = DomainVocab(blob["vocab"]["classes"], tuple(blob["vocab"]["inputs"]), domain)
    else:
        vocab = Vocab(tuple(blob["atoms"]), tuple(blob["rules"]))
    return TrackerData(
        vocab=vocab,
        item_tokens=blob["item_tokens"], tree_tokens=blob["tree_tokens"], tree_items=blob["tree_items"],
        train=blob["train"], tests={int(k): v for k, v in blob["tests"].items()},
        succ_items=blob["succ_items"], succ_trees=blob["succ_trees"],
        identity=identity_of(directory, manifest))


CACHE_KEYS = {"cache_version", "atoms", "rules", "item_tokens", "tree_tokens", "tree_items", "train", "tests",
              "succ_items", "succ_trees"}
DOMAIN_CACHE_KEYS = CACHE_KEYS - {"atoms", "rules"} | {"vocab"}  # another domain's (tracker.domain_data)


def _load_cache(path: Path, keys: set[str] = CACHE_KEYS) -> dict | None:
    """The cached tensors, or None when there is no usable cache (none yet, truncated, not a
    torch file, another cache version): the dataset is then replayed again."""
    if not path.is_file():
        return None
    try:
        blob = load_torch_file(path)
    except UnreadableFile:
        return None
    if not isinstance(blob, dict) or blob.get("cache_version") != CACHE_VERSION or not keys <= set(blob):
        return None
    return blob


def _save_cache(blob: dict, path: Path) -> None:
    # The cache only saves time: a dataset directory that is read-only or on a full disk is
    # read without one rather than refused.
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        save_atomic(blob, path)
    except (OSError, OutputError):
        return


@dataclass
class Batch:
    """B chains and their K partners, flattened into H = B * (1 + K) histories: rows [0, B)
    are the chains, then partner k of chain b is row B + b * K + k."""

    items: torch.Tensor  # (H, T) item ids, 0 = padding after a history's end
    trees: torch.Tensor  # (H, T) tree id after each step, -1 at padding
    chains: int  # B
    partners: int  # K

    @property
    def mask(self) -> torch.Tensor:  # (H, T)
        return self.items != 0

    @property
    def lengths(self) -> torch.Tensor:  # (H,) steps per history, the start included
        return self.mask.sum(1)

    @property
    def ends(self) -> torch.Tensor:  # (H,) the tree each history ends at
        return self.trees.gather(1, (self.lengths - 1)[:, None])[:, 0].long()


def sample_batch(data: TrackerData, chains: int, generator: torch.Generator) -> Batch:
    """B = ``chains`` training chains drawn with ``generator`` (on the data's device) and their partners."""
    train = data.train
    idx = torch.randint(0, train["chain_items"].shape[0], (chains,), generator=generator, device=generator.device)
    ci, ct = train["chain_items"][idx], train["chain_trees"][idx]  # (B, T)
    pi, pt = train["partner_items"][idx], train["partner_trees"][idx]  # (B, K, T)
    k = pi.shape[1]
    items = torch.cat([ci, pi.reshape(-1, pi.shape[-1])]).long()
    trees = torch.cat([ct, pt.reshape(-1, pt.shape[-1])]).long()
    return Batch(items=items, trees=trees, chains=chains, partners=k)


def common_successor(data: TrackerData, u: torch.Tensor, v: torch.Tensor, generator: torch.Generator
                     ) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor, torch.Tensor]:
    """For end trees u, v (both (M,)), a random event applicable to both: (item (M,), tree
    after u (M,), tree after v (M,), found (M,) bool). Where no event applies to both, found is
    False and the other outputs are 0."""
    su, sv = data.succ_items[u], data.succ_items[v]  # (M, A)
    match = (su[:, :, None] == sv[:, None, :]) & (su[:, :, None] >= 0)  # (M, A, A)
    flat = match.flatten(1).float()
    found = flat.sum(1) > 0
    pick = torch.multinomial(flat + (~found)[:, None].float(), 1, generator=generator)[:, 0]  # (M,)
    a, b = pick // su.shape[1], pick % su.shape[1]
    rows = torch.arange(len(u), device=u.device)
    item = torch.where(found, su[rows, a], 0)
    tu = torch.where(found, data.succ_trees[u][rows, a], 0)
    tv = torch.where(found, data.succ_trees[v][rows, b], 0)
    return item, tu, tv, found

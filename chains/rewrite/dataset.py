"""Datasets on disk: a directory with ``manifest.json`` and one JSON Lines file per split.

A line holds one chain: its id, start tree, events, end tree, the id of the certificate of
each step, and its partners (start, events, end, step certificates, and the certificate of
the equivalence with the chain; a wrong partner, put there on purpose by ``chains.rewrite.corrupt``,
has no such certificate and says ``"wrong": "near"`` or ``"far"`` instead). Reading is strict: every tree is parsed against the
grammar and every event against the rules, and a bad line is reported with its file, line,
chain and step.
"""
from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

from chains.files import reason
from chains.holdout import HoldOut
from chains.manifest import STARTS, DatasetError, parse_json
from chains.rewrite.corrupt import KINDS as WRONG_KINDS, Corruption
from chains.rewrite.probes import PROBE_KINDS, ProbeRecord
from chains.rewrite.rules import Event, EventSyntaxError, apply
from chains.rewrite.space import Domain
from chains.rewrite.trees import Tree, TreeSyntaxError, parse_polish

DEFAULT_TEST_LENGTHS = (8, 64, 256, 1024, 4096)
PROBE_TEST_LENGTHS = (8, 16, 64, 256, 1024, 4096)  # the oracle is also read at 16 steps


@dataclass(frozen=True, kw_only=True)
class DatasetSpec:
    """Everything that decides a dataset's contents; the same spec gives the same bytes."""

    domain: Domain = field(default_factory=Domain)
    chains: int = 5000  # training chains
    length: int = 8  # events per training chain
    partners: int = 2  # certified partners per chain
    test_lengths: tuple[int, ...] = DEFAULT_TEST_LENGTHS  # one held-out split per length
    test_chains: int = 512  # chains per test split
    seed: int = 0
    probes: bool = False  # probe events with Lean's verdicts at every step (see chains.rewrite.probes)
    probe_chains: int = 128  # test chains per split that carry probes (every training chain does)
    # training chains start where a random walk of this many events from a random start tree
    # ends (0: at the start tree); test chains always start at a start tree
    start_walk: int = 0
    # training chains pick each applicable tier-2 (size-changing) event this many times as often
    # as each applicable tier-1 event (1: uniformly); test chains always pick uniformly
    tier2_weight: float = 1.0
    # where training chains start (before any start walk): "start", a random start tree;
    # "reachable", a tree drawn uniformly among all the domain's reachable trees (see
    # chains.rewrite.sampling.STARTS); test chains always start at a start tree
    starts: str = "start"
    # a held-out protocol (see chains.rewrite.holdout): events or ordered event pairs no training chain or
    # partner holds and every test chain does, or the trees training visits counted (None: none)
    holdout: HoldOut | None = None
    # a soft checker on purpose (see chains.rewrite.corrupt): this share of the training partners replaced
    # by wrong ones, near misses or far classes, written without an equivalence certificate (None: none)
    corrupt: Corruption | None = None

    def __post_init__(self) -> None:
        for name in ("chains", "length", "test_chains", "probe_chains"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1")
        if self.partners < 0 or self.start_walk < 0:
            raise ValueError("partners and start_walk must be at least 0")
        if self.starts not in STARTS:
            raise ValueError(f"starts must be one of {', '.join(STARTS)}, not {self.starts!r}")
        if not self.tier2_weight > 0 or (self.tier2_weight != 1.0 and self.domain.tier != 2):
            raise ValueError("tier2_weight must be > 0, and other than 1 only on tier 2")
        if any(n < 1 for n in self.test_lengths) or len(set(self.test_lengths)) != len(self.test_lengths):
            raise ValueError("test lengths must be distinct positive integers")
        if self.holdout is not None and not isinstance(self.holdout, HoldOut):
            raise ValueError(f"holdout must be a HoldOut, not {type(self.holdout).__name__}")
        if self.holdout is not None and self.holdout.kind == "pairs" and min(self.test_lengths) < 2:
            raise ValueError("--hold-out pairs needs test lengths of at least 2 (a test chain holds a pair)")
        if self.holdout is not None and self.holdout.kind != "states" and self.probes:
            raise ValueError(f"--hold-out {self.holdout.kind} and --probes do not go together: probe events "
                             "would show held-out items in training")
        if self.corrupt is not None and not isinstance(self.corrupt, Corruption):
            raise ValueError(f"corrupt must be a Corruption, not {type(self.corrupt).__name__}")
        if self.corrupt is not None and (self.partners < 1 or self.holdout is not None):
            raise ValueError("--corrupt-partners needs partners to replace (--partners of at least 1) and goes "
                             "with no --hold-out (a wrong partner's walk could hold a held-out item)")

    def settings(self, checker: str) -> dict:
        """The settings this spec makes a dataset with, certified by ``checker`` (its manifest
        identity), as ``chains.manifest.rewrite_settings`` reads them back from the manifest."""
        return {"atoms": self.domain.atoms, "tier": self.domain.tier, "max_size": self.domain.size_bound,
                "chains": self.chains, "length": self.length, "partners": self.partners,
                "test_lengths": list(self.test_lengths), "test_chains": self.test_chains, "seed": self.seed,
                "starts": self.starts, "start_walk": self.start_walk, "tier2_weight": self.tier2_weight,
                "hold_out": None if self.holdout is None else str(self.holdout),
                "corrupt_partners": None if self.corrupt is None else f"{self.corrupt.kind}:{self.corrupt.share}",
                "probe_chains": self.probe_chains if self.probes else None, "checker": checker}

    def splits(self) -> list[tuple[str, int, int]]:
        """(name, chains, length) of every split, training first."""
        return [("train", self.chains, self.length)] + [
            (f"test-{n}", self.test_chains, n) for n in self.test_lengths]


@dataclass(frozen=True)
class History:
    start: Tree
    events: tuple[Event, ...]
    end: Tree
    certs: tuple[str, ...]  # certificate id of each step


@dataclass(frozen=True)
class Partner(History):
    equivalence: str = ""  # certificate id of "this history ends where the chain ends" ("" when wrong)
    # "near" or "far" (chains.rewrite.corrupt): a wrong partner, ending at another tree than its chain,
    # put there on purpose and never certified as equivalent; "" for a certified partner
    wrong: str = ""


@dataclass(frozen=True)
class ChainRecord(History):
    id: str = ""
    partners: tuple[Partner, ...] = ()
    # with probes: one tuple per step t, the probes tried on the tree before event t
    probes: tuple[tuple[ProbeRecord, ...], ...] | None = None


def _largest_tree(domain: Domain) -> int:
    """Tokens of the largest tree of ``domain``: a tier-1 tree keeps its start's size."""
    return domain.size_bound or 2 * domain.atoms - 1


def _parse_tree(obj: dict, key: str, domain: Domain, where: str) -> Tree:
    if key not in obj:
        raise DatasetError(f"{where}: missing field {key!r}")
    text = obj[key]
    # checked before parsing: the parser and every tree walk recurse once per level
    if isinstance(text, str) and text.count(" ") >= _largest_tree(domain):
        raise DatasetError(f"{where}: bad tree: more than the domain's {_largest_tree(domain)} tokens")
    try:
        return parse_polish(text, domain.atom_names)
    except TreeSyntaxError as e:
        raise DatasetError(f"{where}: bad tree: {e}") from None


_HEX = "0123456789abcdef"


@lru_cache(maxsize=1 << 16)
def _event(text: str) -> Event:
    """``Event.parse``, remembered: a dataset spells its few distinct events millions of times."""
    return Event.parse(text)


def _parse_history(obj: dict, domain: Domain, where: str) -> dict:
    if not isinstance(obj, dict):
        raise DatasetError(f"{where}: not a JSON object")
    start = _parse_tree(obj, "start", domain, where)
    end = _parse_tree(obj, "end", domain, where)
    events, certs = obj.get("events"), obj.get("certs")
    if not isinstance(events, list) or not isinstance(certs, list) or len(events) != len(certs):
        raise DatasetError(f"{where}: events and certs must be lists of equal length")
    parsed = []
    for k, text in enumerate(events):
        try:
            parsed.append(_event(text) if isinstance(text, str) else Event.parse(text))
        except EventSyntaxError as e:
            raise DatasetError(f"{where} step {k}: {e}") from None
    if not (all(isinstance(cert, str) and len(cert) == 16 for cert in certs)
            and not "".join(certs).strip(_HEX)):  # one pass over the chain's ids; the loop names the first bad one
        for k, cert in enumerate(certs):
            if not (isinstance(cert, str) and len(cert) == 16 and not cert.strip(_HEX)):
                raise DatasetError(f"{where} step {k}: certificate id {cert!r:.40} is not 16 hex digits")
    return {"start": start, "events": tuple(parsed), "end": end, "certs": tuple(certs)}


_VERDICT = re.compile(r"accepted|complete|rejected:[a-z_]+")


def _parse_probes(probes: object, steps: int, where: str) -> tuple[tuple[ProbeRecord, ...], ...]:
    if not isinstance(probes, list) or len(probes) != steps:
        raise DatasetError(f"{where}: probes must be a list with one entry per step")
    parsed = []
    for t, entry in enumerate(probes):
        if not isinstance(entry, list):
            raise DatasetError(f"{where} step {t}: probes must be a list")
        here = []
        for j, probe in enumerate(entry):
            at = f"{where} step {t} probe {j}"
            if not (isinstance(probe, list) and len(probe) == 3 and all(isinstance(x, str) for x in probe)):
                raise DatasetError(f"{at}: a probe is [kind, event, verdict]")
            kind, event, verdict = probe
            if kind not in PROBE_KINDS:
                raise DatasetError(f"{at}: unknown probe kind {kind!r:.40}")
            if not _VERDICT.fullmatch(verdict):
                raise DatasetError(f"{at}: verdict {verdict!r:.40} is not accepted, complete or rejected:<class>")
            try:
                here.append(ProbeRecord(kind, Event.parse(event), verdict))
            except EventSyntaxError as e:
                raise DatasetError(f"{at}: {e}") from None
        parsed.append(tuple(here))
    return tuple(parsed)
def shown_id(text: str) -> str:
    """A chain id as messages show it: at most 40 characters, quoted when not printable."""
    return text[:40] if text.isprintable() else repr(text[:40])


def parse_chain_line(line: str, domain: Domain, where: str) -> ChainRecord:
    """Parse one JSON line strictly; ``where`` ("file line N") prefixes every error."""
    obj = parse_json(line, where)
    if not isinstance(obj, dict) or not isinstance(obj.get("id"), str):
        raise DatasetError(f"{where}: a chain must be an object with a string id")
    where = f"{where} (chain {shown_id(obj['id'])})"
    base = _parse_history(obj, domain, where)
    partners = obj.get("partners")
    if not isinstance(partners, list):
        raise DatasetError(f"{where}: partners must be a list")
    parsed = []
    for p, mate in enumerate(partners):
        fields = _parse_history(mate, domain, f"{where} partner {p}")
        if "wrong" in mate:
            if mate["wrong"] not in WRONG_KINDS or "equivalence" in mate:
                raise DatasetError(f"{where} partner {p}: a wrong partner is marked near or far and carries "
                                   "no equivalence certificate")
            parsed.append(Partner(**fields, wrong=mate["wrong"]))
            continue
        equivalence = mate.get("equivalence")
        if not (isinstance(equivalence, str) and len(equivalence) == 16):
            raise DatasetError(f"{where} partner {p}: equivalence certificate id missing")
        parsed.append(Partner(**fields, equivalence=equivalence))
    probes = None if "probes" not in obj else _parse_probes(obj["probes"], len(base["events"]), where)
    return ChainRecord(**base, id=obj["id"], partners=tuple(parsed), probes=probes)


def read_split(path: Path, domain: Domain) -> Iterator[tuple[str, ChainRecord]]:
    """(where, record) for every line of a split file."""
    try:
        with open(path, "rb") as handle:
            for n, raw in enumerate(handle, 1):
                where = f"{path} line {n}"
                try:
                    line = raw.decode("utf-8")
                except UnicodeDecodeError as e:
                    raise DatasetError(f"{where}: not UTF-8 text (byte {e.start + 1} of the line)") from None
                record = parse_chain_line(line, domain, where)
                yield f"{where} (chain {shown_id(record.id)})", record
    except OSError as e:
        raise DatasetError(f"{path}: cannot read it ({reason(e)})") from None


def training_trees(directory: Path, domain: Domain) -> set[Tree]:
    """Every tree the training split of the dataset in ``directory`` visits: every state of every
    training chain and partner (the set a manifest's ``holdout`` counts); DatasetError on a bad line."""
    seen: set[Tree] = set()
    for where, record in read_split(Path(directory) / "train.jsonl", domain):
        for p, history in enumerate((record, *record.partners)):
            tree = history.start
            seen.add(tree)
            for k, event in enumerate(history.events):
                tree = apply(tree, event, domain.size_bound)
                if tree is None:
                    part = f" partner {p - 1}" if p else ""
                    raise DatasetError(f"{where}{part} step {k}: event {event} does not apply")
                seen.add(tree)
    return seen



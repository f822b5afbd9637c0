"""Datasets on disk: a directory with ``manifest.json`` and one JSON Lines file per split.

A line holds one chain: its id, start tree, events, end tree, the id of the certificate of
each step, and its partners (start, events, end, step certificates, and the certificate of
the equivalence with the chain). Reading is strict: every tree is parsed against the
grammar and every event against the rules, and a bad line is reported with its file, line,
chain and step.
"""
from __future__ import annotations

import hashlib
import json
import os
import re
import shutil
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

from chains.probes import PROBE_KINDS, ProbeRecord
from chains.rules import Event, EventSyntaxError
from chains.space import Domain
from chains.trees import Tree, TreeSyntaxError, parse_polish, polish

MANIFEST = "manifest.json"
FORMAT_VERSION = 1
DEFAULT_TEST_LENGTHS = (8, 64, 256, 1024, 4096)
PROBE_TEST_LENGTHS = (8, 16, 64, 256, 1024, 4096)  # the oracle is also read at 16 steps


@dataclass(frozen=True)
class DatasetSpec:
    """Everything that decides a dataset's contents; the same spec gives the same bytes."""

    domain: Domain = field(default_factory=Domain)
    chains: int = 5000  # training chains
    length: int = 8  # events per training chain
    partners: int = 2  # certified partners per chain
    test_lengths: tuple[int, ...] = DEFAULT_TEST_LENGTHS  # one held-out split per length
    test_chains: int = 512  # chains per test split
    seed: int = 0
    probes: bool = False  # probe events with Lean's verdicts at every step (see chains.probes)
    probe_chains: int = 128  # test chains per split that carry probes (every training chain does)

    def __post_init__(self) -> None:
        for name in ("chains", "length", "test_chains", "probe_chains"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1")
        if self.partners < 0:
            raise ValueError("partners must be at least 0")
        if any(n < 1 for n in self.test_lengths) or len(set(self.test_lengths)) != len(self.test_lengths):
            raise ValueError("test lengths must be distinct positive integers")

    def splits(self) -> list[tuple[str, int, int]]:
        """(name, chains, length) of every split, training first."""
        return [("train", self.chains, self.length)] + [
            (f"test-{n}", self.test_chains, n) for n in self.test_lengths]


class DatasetError(ValueError):
    """A dataset that is malformed, tampered with or not certified; the message names the place."""


@dataclass(frozen=True)
class History:
    start: Tree
    events: tuple[Event, ...]
    end: Tree
    certs: tuple[str, ...]  # certificate id of each step


@dataclass(frozen=True)
class Partner(History):
    equivalence: str = ""  # certificate id of "this history ends where the chain ends"


@dataclass(frozen=True)
class ChainRecord(History):
    id: str = ""
    partners: tuple[Partner, ...] = ()
    # with probes: one tuple per step t, the probes tried on the tree before event t
    probes: tuple[tuple[ProbeRecord, ...], ...] | None = None


def encode_history(start: Tree, events, end: Tree, certs) -> dict:
    return {"start": polish(start), "events": [str(e) for e in events], "end": polish(end), "certs": list(certs)}


def _parse_history(obj: dict, atoms, where: str) -> dict:
    if not isinstance(obj, dict):
        raise DatasetError(f"{where}: not a JSON object")
    try:
        start = parse_polish(obj["start"], atoms)
        end = parse_polish(obj["end"], atoms)
    except KeyError as e:
        raise DatasetError(f"{where}: missing field {e}") from None
    except TreeSyntaxError as e:
        raise DatasetError(f"{where}: bad tree: {e}") from None
    events, certs = obj.get("events"), obj.get("certs")
    if not isinstance(events, list) or not isinstance(certs, list) or len(events) != len(certs):
        raise DatasetError(f"{where}: events and certs must be lists of equal length")
    parsed = []
    for k, text in enumerate(events):
        try:
            parsed.append(Event.parse(text))
        except EventSyntaxError as e:
            raise DatasetError(f"{where} step {k}: {e}") from None
    for k, cert in enumerate(certs):
        if not (isinstance(cert, str) and len(cert) == 16 and not cert.strip("0123456789abcdef")):
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


def parse_chain_line(line: str, domain: Domain, where: str) -> ChainRecord:
    """Parse one JSON line strictly; ``where`` ("file line N") prefixes every error."""
    try:
        obj = json.loads(line)
    except ValueError as e:
        raise DatasetError(f"{where}: not JSON ({e})") from None
    if not isinstance(obj, dict) or not isinstance(obj.get("id"), str):
        raise DatasetError(f"{where}: a chain must be an object with a string id")
    where = f"{where} (chain {obj['id'][:40]})"
    base = _parse_history(obj, domain.atom_names, where)
    partners = obj.get("partners")
    if not isinstance(partners, list):
        raise DatasetError(f"{where}: partners must be a list")
    parsed = []
    for p, mate in enumerate(partners):
        fields = _parse_history(mate, domain.atom_names, f"{where} partner {p}")
        equivalence = mate.get("equivalence")
        if not (isinstance(equivalence, str) and len(equivalence) == 16):
            raise DatasetError(f"{where} partner {p}: equivalence certificate id missing")
        parsed.append(Partner(**fields, equivalence=equivalence))
    probes = None if "probes" not in obj else _parse_probes(obj["probes"], len(base["events"]), where)
    return ChainRecord(**base, id=obj["id"], partners=tuple(parsed), probes=probes)


def read_split(path: Path, domain: Domain) -> Iterator[tuple[str, ChainRecord]]:
    """(where, record) for every line of a split file."""
    with open(path, encoding="utf-8") as handle:
        for n, line in enumerate(handle, 1):
            record = parse_chain_line(line, domain, f"{path} line {n}")
            yield f"{path} line {n} (chain {record.id})", record


def read_manifest(directory: Path) -> dict:
    path = Path(directory) / MANIFEST
    try:
        manifest = json.loads(path.read_text())
    except FileNotFoundError:
        raise DatasetError(f"{path}: no manifest; is {directory} a dataset directory?") from None
    except ValueError as e:
        raise DatasetError(f"{path}: not JSON ({e})") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT_VERSION:
        raise DatasetError(f"{path}: not a dataset manifest of format {FORMAT_VERSION}")
    return manifest


def domain_of(manifest: dict, where: str) -> Domain:
    try:
        return Domain(atoms=manifest["atoms"], tier=manifest["tier"], max_size=manifest.get("max_size"))
    except (KeyError, TypeError, ValueError) as e:
        raise DatasetError(f"{where}: bad domain in manifest ({e})") from None


def dataset_id(manifest: dict) -> str:
    """Content identity of a dataset: its domain, seed and the sha256 of each file. Unlike the
    manifest's own hash it survives re-certifying the same spec (timings and store paths differ)."""
    files = manifest.get("files") or {}
    content = {"atoms": manifest.get("atoms"), "tier": manifest.get("tier"), "max_size": manifest.get("max_size"),
               "seed": manifest.get("seed"), "files": {name: meta.get("sha256") for name, meta in sorted(files.items())}}
    return hashlib.sha256(json.dumps(content, sort_keys=True).encode()).hexdigest()


def file_sha256(path: Path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


class DatasetWriter:
    """Writes a dataset into a hidden staging directory beside ``out`` and moves it into
    place only on ``commit``, so a failed or killed run leaves no half-written dataset.
    Staging directories left by killed runs (their process gone) are swept on the next run."""

    def __init__(self, out: Path) -> None:
        self.out = Path(out)
        parent = self.out.resolve().parent
        try:
            parent.mkdir(parents=True, exist_ok=True)
        except OSError as e:
            raise DatasetError(f"cannot write to {self.out}: {e.strerror or e}") from None
        if not os.access(parent, os.W_OK):
            raise DatasetError(f"cannot write to {self.out}: {parent} is not writable")
        for stale in parent.glob(f".{self.out.name}.tmp-*"):
            if not _pid_alive(stale.name.rsplit("-", 1)[-1]):
                shutil.rmtree(stale, ignore_errors=True)
        self.staging = parent / f".{self.out.name}.tmp-{os.getpid()}"

    def write_lines(self, name: str, lines: Iterator[str]) -> Path:
        self.staging.mkdir(exist_ok=True)
        path = self.staging / name
        with open(path, "w", encoding="utf-8") as handle:
            for line in lines:
                handle.write(line)
                handle.write("\n")
        return path

    def commit(self, manifest: dict) -> None:
        self.staging.mkdir(exist_ok=True)
        (self.staging / MANIFEST).write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
        old = None
        if self.out.exists():
            old = self.out.with_name(f".{self.out.name}.old-{os.getpid()}")
            os.replace(self.out, old)
        os.replace(self.staging, self.out)
        if old is not None:
            shutil.rmtree(old, ignore_errors=True)

    def abort(self) -> None:
        shutil.rmtree(self.staging, ignore_errors=True)


def _pid_alive(text: str) -> bool:
    try:
        os.kill(int(text), 0)
    except (ValueError, ProcessLookupError):
        return False
    except PermissionError:
        return True
    return True

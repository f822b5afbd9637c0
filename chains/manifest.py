"""A dataset's manifest: the one place ``manifest.json`` is read, written and made sense of.

Every dataset this project writes (chains from ``certify``, Mathlib probe records from
``certify --mathlib``) is a directory holding ``manifest.json``; its bytes are
``manifest_text`` of its JSON object (two-space indent, keys sorted, a final newline), written
by ``write_manifest`` (through ``chains.writer.DatasetWriter.commit``) and read back by
``read_manifest_json`` (any format, unchecked), ``read_manifest`` (a chain dataset, its structure
checked, as a dict) or ``load_manifest`` (the same as a typed ``Manifest``). Readers that key a
cache on the manifest take its bytes from ``manifest_bytes``, and messages name it by
``manifest_path``.

``Manifest.to_json`` gives the JSON object ``certify`` writes; ``Manifest.from_json`` reads one
back, its structure checked by ``check_manifest`` first, then every field's type. The optional
fields are written only when they say something: ``starts`` when training chains start at a
reachable tree rather than a start tree, ``start_walk`` when they start after a walk (and
``start_sampling`` with either), ``tier2_weight`` and ``event_sampling`` when tier-2 events are
weighted, ``probes`` with ``--probes``, ``holdout`` with ``--hold-out`` (``chains.rewrite.holdout``),
``corrupt_partners`` with ``--corrupt-partners`` (``chains.rewrite.corrupt``); a manifest without
``starts`` reads as ``start``. The ``*_sampling`` texts are derived from the
fields, never read.

Readers that only need a field or two may keep the plain dict of ``read_manifest``: the keys
are the same.
"""
from __future__ import annotations

import dataclasses
import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from chains.files import reason

STARTS = ("start", "reachable")  # where a rewrite dataset's training chains start (its manifest's ``starts``)
MANIFEST = "manifest.json"  # the manifest's file name inside a dataset directory
FORMAT_VERSION = 1  # the chain datasets' format
MATHLIB_FORMAT = "mathlib-probes/1"  # the Mathlib probe records' format
PROGRAMS_FORMAT = "programs/1"  # a programs dataset's format (chains.programs.files)
DOMAIN_FORMAT = "domain/1"  # a dataset of a domain of one's own (chains.records)
DATASET_FORMATS = (FORMAT_VERSION, MATHLIB_FORMAT, PROGRAMS_FORMAT, DOMAIN_FORMAT)  # every format this project writes
# the formats of histories with partners (rewrite chains, programs, a domain of one's own)
CHAIN_FORMATS = (FORMAT_VERSION, PROGRAMS_FORMAT, DOMAIN_FORMAT)


class DatasetError(ValueError):
    """A dataset that is malformed, tampered with or not certified; the message names the place."""


def numbered_lines(path: Path) -> Iterator[tuple[str, str]]:
    """Each line of a dataset file with where it is (``"train.jsonl line 3"``); DatasetError when
    the file cannot be read."""
    try:
        handle = open(path, encoding="utf-8")
    except OSError as e:
        raise DatasetError(f"{path}: cannot read it ({e.strerror or e})") from None
    with handle:
        for number, line in enumerate(handle, 1):
            yield f"{Path(path).name} line {number}", line


def check_count(path: Path | str, count: int, listed, noun: str) -> None:
    """DatasetError unless the file at ``path``, holding ``count`` records (each a ``noun``), holds the
    ``listed`` count its manifest gives."""
    if count != listed:
        raise DatasetError(f"{path}: {count} {noun}s, the manifest says {listed}")


def check_steps(where: str, steps: int, manifest: dict) -> None:
    """DatasetError unless the files' ``steps`` (chains and partners, every split) are the manifest's
    (``where`` names the manifest)."""
    if steps != manifest.get("steps"):
        raise DatasetError(f"{where}: the manifest says {manifest.get('steps')} steps, the files hold {steps}")


MANIFEST_WHERE = "manifest.json"  # how messages name a manifest read from no particular directory
ELABORATOR = "elaborator"  # the checker of a dataset whose manifest names none

PARTNER_SAMPLING = ("per partner, a length uniform in [0, chain length]; a uniformly random "
                    "backward walk of that length from the chain's end, read forwards")
START_SAMPLING = ("training chains start where a uniformly random walk of start_walk events from "
                  "a uniformly random start tree ends; test chains start at the start tree")
REACHABLE_SAMPLING = ("training chains start at a tree drawn uniformly among the domain's reachable trees "
                      "(every tree a chain can visit within the size bound, in the order of their Polish "
                      "strings); test chains start at a uniformly random start tree")
REACHABLE_WALK_SAMPLING = ("training chains start where a uniformly random walk of start_walk events from a "
                           "tree drawn uniformly among the domain's reachable trees (every tree a chain can "
                           "visit within the size bound, in the order of their Polish strings) ends; test "
                           "chains start at a uniformly random start tree")
EVENT_SAMPLING = ("training chains pick each applicable tier-2 event tier2_weight times as often as "
                  "each applicable tier-1 event; test chains pick uniformly")


@dataclass(frozen=True)
class Manifest:
    """Everything ``manifest.json`` says about a chain dataset. The dict fields hold JSON as it
    stands in the file (they are never edited after construction)."""

    # the domain
    atoms: int  # distinct atoms per start tree
    tier: int  # 1: commutativity and associativity; 2: adds distributivity and factoring
    max_size: int | None  # tier 2: the largest tree in tokens a step may produce (None on tier 1)
    rules: tuple[str, ...]  # the tier's rule names, in order
    trees: int  # the domain's trees (tier 2: those reachable within max_size)
    classes: int  # its equivalence classes
    trees_counted: str  # how ``trees`` was counted
    # the spec
    seed: int  # seed of every random choice
    chains: int  # training chains
    length: int  # events per training chain
    partners: int  # certified partners per chain
    test_lengths: tuple[int, ...]  # one held-out split per length
    test_chains: int  # chains per test split
    # what the files hold
    steps: int  # step instances, chains and partners, every split
    steps_by_rule: dict[str, int]  # the same per rule name, sorted by name
    distinct_steps: int  # distinct step statements
    equivalences: int  # equivalence instances (one per certified partner; a wrong partner has none)
    distinct_equivalences: int  # distinct equivalence statements
    files: dict[str, dict]  # file name -> {"chains": count, "sha256": hex digest}
    # certification
    kernel_checked: int  # statements this run sent to Lean (the others came from the store)
    certified: int  # distinct statements the store holds as certified
    failed: int  # statements Lean rejected: always 0 in a written dataset
    lean_processes: int  # Lean processes started for the steps and equivalences
    lean: dict  # the Lean install: version, githash, path, source
    core_hash: str  # sha256 of the core library
    checker: str  # "elaborator" or "kernel:<sha256 of kcheck's sources>"
    package_version: str  # the package that wrote the dataset
    store: str  # the certificate store used
    # written only when given
    starts: str = "start"  # where training chains start: "start" (a start tree), "reachable" (any reachable tree)
    start_walk: int = 0  # training chains start after a random walk of this many events (0: at the drawn tree)
    tier2_weight: float = 1.0  # weight of each applicable tier-2 event in training chains (1.0: uniform)
    probes: dict | None = None  # with --probes: kinds, verdicts, counts by kind, accepted fractions, ...
    # with --hold-out: kind, what was held out (events, pairs), visited_trees, visited_share,
    # unseen_end_chains and the protocol in words (chains.rewrite.holdout.HeldOut.manifest_field)
    holdout: dict | None = None
    # with --corrupt-partners: kind, share, split, replaced, partners, which and sampling in words
    # (chains.rewrite.corrupt.manifest_field); the replaced partners carry no equivalence certificate
    corrupt_partners: dict | None = None
    # timings: not part of the dataset's identity
    phase_seconds: dict[str, float] | None = None  # wall seconds per phase of the run
    seconds: float | None = None  # wall seconds of the whole run
    format: int = FORMAT_VERSION

    @property
    def dataset_id(self) -> str:
        """The content identity (``chains.manifest.dataset_id``): domain, seed and file hashes."""
        return dataset_id(self.to_json())

    def to_json(self) -> dict:
        """The JSON object of ``manifest.json``, the keys in the order certify builds them
        (the file sorts them)."""
        out = {
            "format": self.format,
            "atoms": self.atoms,
            "tier": self.tier,
            "max_size": self.max_size,
            "rules": list(self.rules),
            "seed": self.seed,
            "chains": self.chains,
            "length": self.length,
            "partners": self.partners,
            "partner_sampling": PARTNER_SAMPLING,
        }
        if self.starts != "start":
            out["starts"] = self.starts
        if self.start_walk:
            out["start_walk"] = self.start_walk
        if self.starts != "start" or self.start_walk:
            out["start_sampling"] = self.start_sampling
        if self.tier2_weight != 1.0:
            out["tier2_weight"] = self.tier2_weight
            out["event_sampling"] = EVENT_SAMPLING
        if self.holdout is not None:
            out["holdout"] = self.holdout
        if self.corrupt_partners is not None:
            out["corrupt_partners"] = self.corrupt_partners
        out.update({
            "test_lengths": list(self.test_lengths),
            "test_chains": self.test_chains,
            "trees": self.trees,
            "classes": self.classes,
            "trees_counted": self.trees_counted,
            "steps": self.steps,
            "steps_by_rule": dict(self.steps_by_rule),
            "distinct_steps": self.distinct_steps,
            "equivalences": self.equivalences,
            "distinct_equivalences": self.distinct_equivalences,
            "kernel_checked": self.kernel_checked,
            "certified": self.certified,
            "failed": self.failed,
            "lean_processes": self.lean_processes,
            "lean": dict(self.lean),
            "core_hash": self.core_hash,
            "checker": self.checker,
            "package_version": self.package_version,
            "store": self.store,
            "files": {name: dict(meta) for name, meta in self.files.items()},
        })
        if self.probes is not None:
            out["probes"] = self.probes
        if self.phase_seconds is not None:
            out["phase_seconds"] = dict(self.phase_seconds)
        if self.seconds is not None:
            out["seconds"] = self.seconds
        return out

    @property
    def start_sampling(self) -> str:
        """How the training chains' starts were drawn, in words (written as ``start_sampling``)."""
        if self.starts == "reachable":
            return REACHABLE_WALK_SAMPLING if self.start_walk else REACHABLE_SAMPLING
        return START_SAMPLING

    @classmethod
    def from_json(cls, obj, where: str | Path = MANIFEST_WHERE) -> Manifest:
        """The manifest of parsed JSON ``obj``; DatasetError naming ``where`` and the first field
        that is missing or of the wrong type. ``checker`` absent reads as ``elaborator`` and the
        timings absent as None (a manifest may lack them); ``starts`` absent
        reads as ``start``, and any value but those of ``STARTS`` is refused."""
        check_manifest(obj, Path(where))
        values = {}
        for f in dataclasses.fields(cls):
            if f.name not in obj:
                if f.name == "checker":
                    values[f.name] = ELABORATOR
                elif f.default is dataclasses.MISSING:
                    raise DatasetError(f"{where}: no {f.name}")
                continue
            value = obj[f.name]
            if not _is(value, _TYPES[f.name]):
                raise DatasetError(f"{where}: {f.name} is {str(value)[:40]!r}, not {_NAMES[_TYPES[f.name]]}")
            values[f.name] = tuple(value) if f.name in ("rules", "test_lengths") else value
        if any(not _is(n, _INT) for n in values["test_lengths"]) or any(not _is(r, _STR) for r in values["rules"]):
            raise DatasetError(f"{where}: rules must be names and test_lengths integers")
        if values.get("starts", "start") not in STARTS:
            raise DatasetError(f"{where}: starts is {str(values['starts'])[:40]!r}, not one of {', '.join(STARTS)}")
        return cls(**values)

_INT, _OPT_INT, _NUMBER, _OPT_NUMBER, _STR, _LIST, _DICT, _OPT_DICT = range(8)
_TYPES = {"atoms": _INT, "tier": _INT, "max_size": _OPT_INT, "rules": _LIST, "trees": _INT, "classes": _INT,
          "trees_counted": _STR, "seed": _INT, "chains": _INT, "length": _INT, "partners": _INT,
          "test_lengths": _LIST, "test_chains": _INT, "steps": _INT, "steps_by_rule": _DICT,
          "distinct_steps": _INT, "equivalences": _INT, "distinct_equivalences": _INT, "files": _DICT,
          "kernel_checked": _INT, "certified": _INT, "failed": _INT, "lean_processes": _INT, "lean": _DICT,
          "core_hash": _STR, "checker": _STR, "package_version": _STR, "store": _STR, "starts": _STR,
          "start_walk": _INT, "tier2_weight": _NUMBER, "probes": _OPT_DICT, "holdout": _OPT_DICT,
          "corrupt_partners": _OPT_DICT, "phase_seconds": _OPT_DICT, "seconds": _OPT_NUMBER, "format": _INT}
_NAMES = {_INT: "an integer", _OPT_INT: "an integer or null", _NUMBER: "a number", _OPT_NUMBER: "a number or null",
          _STR: "a string", _LIST: "a list", _DICT: "an object", _OPT_DICT: "an object or null"}


def _is(value, kind: int) -> bool:
    if value is None:
        return kind in (_OPT_INT, _OPT_NUMBER, _OPT_DICT)
    if isinstance(value, bool):
        return False
    if kind in (_INT, _OPT_INT):
        return isinstance(value, int)
    if kind in (_NUMBER, _OPT_NUMBER):
        return isinstance(value, (int, float))
    return isinstance(value, {_STR: str, _LIST: list, _DICT: dict, _OPT_DICT: dict}[kind])


# ---- the file: where it is, its bytes, reading and writing ----

def manifest_path(directory: Path | str) -> Path:
    """Where the manifest of the dataset in ``directory`` lives (also how messages name it)."""
    return Path(directory) / MANIFEST


def has_manifest(directory: Path | str) -> bool:
    """Whether ``directory`` holds a manifest file at all (of any format, unread)."""
    return manifest_path(directory).is_file()


def manifest_bytes(directory: Path | str) -> bytes:
    """The manifest's bytes as they are on disk, for keys of caches built from the dataset (any
    change to the manifest, and so to a file's hash, makes a new key)."""
    return manifest_path(directory).read_bytes()


def manifest_text(manifest: Manifest | dict) -> str:
    """The text of ``manifest.json`` for ``manifest`` (a typed chain manifest, or the JSON object
    of a manifest of any format): two-space indent, keys sorted, a final newline. Every
    dataset's manifest has exactly these bytes; its files' hashes and the caches keyed on them
    depend on it."""
    obj = manifest.to_json() if isinstance(manifest, Manifest) else manifest
    return json.dumps(obj, indent=2, sort_keys=True) + "\n"


def write_manifest(directory: Path | str, manifest: Manifest | dict) -> Path:
    """Write ``manifest`` as ``directory``'s ``manifest.json`` and return its path. OSError is
    left to the caller, which knows the dataset's final name (``DatasetWriter.commit`` writes
    into a staging directory)."""
    path = manifest_path(directory)
    path.write_text(manifest_text(manifest))
    return path


def parse_json(text: str, where: str):
    """``text`` as JSON; DatasetError naming ``where`` when it is not."""
    try:
        return json.loads(text)
    except (ValueError, RecursionError) as e:  # RecursionError: brackets nested past Python's stack
        raise DatasetError(f"{where}: not JSON ({str(e).splitlines()[0][:200]})") from None


def read_manifest_json(directory: Path | str):
    """The manifest of a dataset of any format as parsed JSON, unchecked; DatasetError when
    there is none or it is not JSON."""
    path = manifest_path(directory)
    try:
        data = path.read_bytes()
    except FileNotFoundError:
        raise DatasetError(f"{path}: no manifest; is {directory} a dataset directory?") from None
    except NotADirectoryError:
        raise DatasetError(f"{directory}: not a directory; a dataset is a directory holding {MANIFEST}") from None
    except OSError as e:
        raise DatasetError(f"{path}: cannot read it ({reason(e)})") from None
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise DatasetError(f"{path}: not UTF-8 text (byte {e.start + 1})") from None
    return parse_json(text, str(path))


def is_dataset(directory: Path | str) -> bool:
    """``directory`` holds a manifest of one of the project's dataset formats (so a new dataset
    may replace it); False on anything unreadable."""
    try:
        manifest = json.loads(manifest_path(directory).read_text(encoding="utf-8"))
    except (OSError, ValueError, RecursionError):
        return False
    return isinstance(manifest, dict) and manifest.get("format") in DATASET_FORMATS


def _is_count(value) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 0


COUNTS = ("chains", "length", "partners", "steps", "equivalences", "distinct_steps", "distinct_equivalences",
          "kernel_checked", "certified", "failed")


def check_manifest(manifest, path: Path | str) -> dict:
    """The manifest if its structure is what every reader relies on: the listed files are plain
    names in the directory, each with a chain count and a sha256; counts are non-negative
    integers; the Lean identity is an object. Otherwise DatasetError naming the field."""
    if not isinstance(manifest, dict) or manifest.get("format") not in CHAIN_FORMATS:
        raise DatasetError(f"{path}: not a dataset manifest of format {FORMAT_VERSION}, {PROGRAMS_FORMAT} or "
                          f"{DOMAIN_FORMAT}")
    files = manifest.get("files")
    if not isinstance(files, dict) or not files:
        raise DatasetError(f"{path}: lists no files")
    for name, meta in files.items():
        if not name.endswith(".jsonl") or Path(name).name != name or name.startswith("."):
            raise DatasetError(f"{path}: listed file {name[:60]!r} is not a .jsonl file of the dataset directory")
        if not isinstance(meta, dict) or not _is_count(meta.get("chains")):
            raise DatasetError(f"{path}: {name} has no chain count")
        sha = meta.get("sha256")
        if not (isinstance(sha, str) and len(sha) == 64 and not sha.strip("0123456789abcdef")):
            raise DatasetError(f"{path}: {name} has no sha256")
    for key in COUNTS:
        if key in manifest and not _is_count(manifest[key]):
            raise DatasetError(f"{path}: {key} is {str(manifest[key])[:40]!r}, not a count")
    if not isinstance(manifest.get("lean", {}), dict):
        raise DatasetError(f"{path}: lean is not an object")
    return manifest


def read_manifest(directory: Path | str) -> dict:
    """The manifest of a chain dataset, its structure checked (``check_manifest``), as a dict;
    ``load_manifest`` gives the same as a typed ``Manifest``."""
    return check_manifest(read_manifest_json(directory), manifest_path(directory))


def load_manifest(directory: Path | str) -> Manifest:
    """The typed manifest of the chain dataset in ``directory``."""
    return Manifest.from_json(read_manifest(directory), str(manifest_path(directory)))


# ---- what a manifest says: the domain, the dataset's identity ----

def domain_name(manifest: dict) -> str:
    """The name of the domain a chain dataset holds, as its models are told it: ``rewrite``,
    ``programs``, or the name a domain of one's own gives itself (``groups``, ...)."""
    if manifest.get("format") not in (PROGRAMS_FORMAT, DOMAIN_FORMAT):
        return "rewrite"
    domain = manifest.get("domain")
    name = domain.get("name") if isinstance(domain, dict) else None
    return name if isinstance(name, str) and name else "unnamed"


def dataset_id(manifest: dict) -> str:
    """Content identity of a dataset: its domain, seed and the sha256 of each file. Unlike the
    manifest's own hash it survives re-certifying the same spec (timings and store paths differ)."""
    files = manifest.get("files") or {}
    content = {"atoms": manifest.get("atoms"), "tier": manifest.get("tier"), "max_size": manifest.get("max_size"),
               "seed": manifest.get("seed"), "files": {name: meta.get("sha256") for name, meta in sorted(files.items())}}
    return hashlib.sha256(json.dumps(content, sort_keys=True).encode()).hexdigest()


# ---- what decides a dataset's contents: a new run over an existing dataset must ask for the same ----

def rewrite_settings(manifest: dict) -> dict:
    """The settings a rewrite-chain manifest was made with (what ``DatasetSpec.settings`` gives
    for the spec and checker that made it); timings, counts and paths left out."""
    holdout = manifest.get("holdout")
    if holdout:
        held = holdout.get("events") or holdout.get("pairs") or ()
        holdout = holdout["kind"] if holdout.get("kind") == "states" else f"{holdout.get('kind')}:{len(held)}"
    corrupt = manifest.get("corrupt_partners")
    probes = manifest.get("probes")
    return {"atoms": manifest.get("atoms"), "tier": manifest.get("tier"), "max_size": manifest.get("max_size"),
            "chains": manifest.get("chains"), "length": manifest.get("length"), "partners": manifest.get("partners"),
            "test_lengths": list(manifest.get("test_lengths") or ()), "test_chains": manifest.get("test_chains"),
            "seed": manifest.get("seed"), "starts": manifest.get("starts", "start"),
            "start_walk": manifest.get("start_walk", 0), "tier2_weight": manifest.get("tier2_weight", 1.0),
            "hold_out": holdout or None,
            "corrupt_partners": f"{corrupt['kind']}:{corrupt['share']}" if corrupt else None,
            "probe_chains": probes.get("probe_chains") if probes else None,
            "checker": manifest.get("checker", ELABORATOR)}


def programs_settings(manifest: dict) -> dict:
    """The settings a programs manifest was made with (``ProgramsSpec.settings``)."""
    domain = manifest.get("domain") or {}
    return {"domain": domain.get("name"), "values": domain.get("values"), "chains": manifest.get("chains"),
            "min_length": manifest.get("min_length"), "max_length": manifest.get("max_length"),
            "partners": manifest.get("partners"), "test_lengths": list(manifest.get("test_lengths") or ()),
            "test_chains": manifest.get("test_chains"), "seed": manifest.get("seed"),
            "hold_out": _hold_out_text(manifest.get("holdout"))}


def _hold_out_text(holdout: dict | None) -> str | None:
    """A manifest's ``holdout`` as ``--hold-out`` wrote it: ``events:K``, ``pairs:K`` or ``states``."""
    if not holdout:
        return None
    held = holdout.get("events") or holdout.get("pairs") or ()
    return holdout["kind"] if holdout.get("kind") == "states" else f"{holdout.get('kind')}:{len(held)}"


def imported_settings(manifest: dict) -> dict:
    """The settings a manifest of a domain of one's own was made with (``DomainSpec.settings``)."""
    domain = manifest.get("domain") or {}
    return {"domain": domain.get("import"), "chains": manifest.get("chains"), "length": manifest.get("length"),
            "partners": manifest.get("partners"), "test_lengths": list(manifest.get("test_lengths") or ()),
            "test_chains": manifest.get("test_chains"), "seed": manifest.get("seed"),
            "hold_out": _hold_out_text(manifest.get("holdout"))}


def settings_of(manifest: dict) -> dict:
    """The settings that decided a dataset's contents, whatever its domain."""
    kind = manifest.get("format")
    if kind == PROGRAMS_FORMAT:
        return programs_settings(manifest)
    return imported_settings(manifest) if kind == DOMAIN_FORMAT else rewrite_settings(manifest)


def settings_differ(old: dict, new: dict) -> list[str]:
    """``name old -> new`` for every setting that differs (a setting only one side has included)."""
    return [f"{k.replace('_', '-')} {old.get(k)} -> {new.get(k)}" for k in sorted(set(old) | set(new))
            if old.get(k) != new.get(k)]


def trained_elsewhere(identity: dict, manifest: dict) -> str | None:
    """Where a run with this ``identity`` (its checkpoint's) was trained, when that is not the
    dataset of ``manifest``; None when it is."""
    trained_on = identity.get("dataset", {}) if isinstance(identity, dict) else {}
    return None if trained_on.get("dataset_id") == dataset_id(manifest) else str(trained_on.get("path", "?"))

"""Read LeanDojo Benchmark 4: its theorems with their traced tactics, and its premise corpus.

The layout, as LeanDojo writes it::

    BENCHMARK_DIR/
      corpus.jsonl        one line per Lean file: {"path", "imports", "premises": [{"full_name",
                          "code", "start", "end", "kind"}, ...]}
      metadata.json       {"creation_time", "from_repo": {"url", "commit"}, "leandojo_version"}
      random/             {train,val,test}.json: a JSON list of theorems each
      novel_premises/     the same theorems, split so that test proofs use premises train never does

A theorem is ``{"url", "commit", "file_path", "full_name", "start", "end", "traced_tactics"}``; a
traced tactic is ``{"tactic", "annotated_tactic": [text with <a>…</a> around each premise,
[{"full_name", "def_path", "def_pos", "def_end_pos"}, ...]], "state_before", "state_after"}``,
and ``state_after`` is ``"no goals"`` when the tactic closes the proof.
"""
from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

SPLITS = ("random", "novel_premises")
PARTS = ("train", "val", "test")
NO_GOALS = "no goals"
_MARK = re.compile(r"<a>(.*?)</a>", re.DOTALL)


class BenchmarkError(Exception):
    """The directory is not LeanDojo Benchmark 4, or a file in it is malformed. One line."""


@dataclass(frozen=True)
class Premise:
    """A premise a tactic names, as the benchmark's annotation records it."""

    full_name: str  # e.g. "Nat.succ_le_iff"
    def_path: str  # the Lean file that defines it, e.g. "Mathlib/Data/Nat/Basic.lean"


@dataclass(frozen=True)
class TracedTactic:
    tactic: str  # the tactic as written in the source
    annotated: str  # the same text with <a>…</a> around every premise occurrence
    premises: tuple[Premise, ...]  # one per <a>…</a> mark, in order
    state_before: str  # the pretty-printed goals before the tactic
    state_after: str  # after it; NO_GOALS when it closes the proof

    @property
    def marks(self) -> tuple[str, ...]:
        """The text inside each <a>…</a> mark, as it stands in the tactic."""
        return tuple(_MARK.findall(self.annotated))


@dataclass(frozen=True)
class BenchTheorem:
    url: str  # the repository traced (Mathlib 4)
    commit: str
    file_path: str  # e.g. "Mathlib/Data/Nat/Basic.lean"
    full_name: str
    start: tuple[int, int]  # (line, column) of the declaration in file_path
    end: tuple[int, int]
    tactics: tuple[TracedTactic, ...]
    part: str  # which benchmark file it came from: "train", "val" or "test"

    @property
    def key(self) -> str:
        """Unique within a benchmark: the file and the name."""
        return f"{self.file_path}:{self.full_name}"

    @property
    def premise_names(self) -> frozenset[str]:
        return frozenset(p.full_name for t in self.tactics for p in t.premises)

    @property
    def linear(self) -> bool:
        """Every step starts where the one before ended and the last closes the proof: a proof a
        replay of its tactics one after another, on the whole state, can confirm."""
        if not self.tactics or self.tactics[-1].state_after != NO_GOALS:
            return False
        return all(a.state_after == b.state_before for a, b in zip(self.tactics, self.tactics[1:]))


@dataclass(frozen=True)
class CorpusPremise:
    """A declaration of the traced repository, from corpus.jsonl."""

    full_name: str
    path: str  # the file that declares it
    kind: str  # one of PREMISE_KINDS
    start: tuple[int, int]


def _pos(value, where: str) -> tuple[int, int]:
    if not (isinstance(value, list) and len(value) == 2 and all(isinstance(x, int) for x in value)):
        raise BenchmarkError(f"{where}: a position must be [line, column], got {value!r:.60}")
    return (value[0], value[1])


def _str(obj: dict, field: str, where: str) -> str:
    value = obj.get(field)
    if not isinstance(value, str):
        raise BenchmarkError(f"{where}: field {field!r} is missing or not a string")
    return value


def parse_tactic(obj, where: str) -> TracedTactic:
    if not isinstance(obj, dict):
        raise BenchmarkError(f"{where}: a traced tactic must be an object")
    annotated = obj.get("annotated_tactic")
    if not (isinstance(annotated, list) and len(annotated) == 2 and isinstance(annotated[0], str)
            and isinstance(annotated[1], list)):
        raise BenchmarkError(f"{where}: annotated_tactic must be [text, [premise, ...]]")
    premises = []
    for j, p in enumerate(annotated[1]):
        if not isinstance(p, dict):
            raise BenchmarkError(f"{where}: premise {j} must be an object")
        premises.append(Premise(_str(p, "full_name", f"{where} premise {j}"), _str(p, "def_path", f"{where} premise {j}")))
    tactic = TracedTactic(_str(obj, "tactic", where), annotated[0], tuple(premises),
                          _str(obj, "state_before", where), _str(obj, "state_after", where))
    if len(tactic.marks) != len(premises):
        raise BenchmarkError(f"{where}: {len(tactic.marks)} <a> marks but {len(premises)} premises")
    return tactic


def parse_theorem(obj, part: str, where: str) -> BenchTheorem:
    if not isinstance(obj, dict):
        raise BenchmarkError(f"{where}: a theorem must be an object")
    tactics = obj.get("traced_tactics")
    if not isinstance(tactics, list):
        raise BenchmarkError(f"{where}: traced_tactics must be a list")
    return BenchTheorem(
        url=_str(obj, "url", where), commit=_str(obj, "commit", where), file_path=_str(obj, "file_path", where),
        full_name=_str(obj, "full_name", where), start=_pos(obj.get("start"), f"{where} start"),
        end=_pos(obj.get("end"), f"{where} end"),
        tactics=tuple(parse_tactic(t, f"{where} tactic {i}") for i, t in enumerate(tactics)), part=part)


def _load_json(path: Path):
    try:
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except FileNotFoundError:
        raise BenchmarkError(f"{path} is missing: not a LeanDojo Benchmark 4 directory") from None
    except (OSError, ValueError) as e:
        raise BenchmarkError(f"{path} is not readable JSON: {e}") from None


def read_metadata(root: Path) -> dict:
    meta = _load_json(Path(root) / "metadata.json")
    if not isinstance(meta, dict):
        raise BenchmarkError(f"{root}/metadata.json must be an object")
    return meta


def read_theorems(root: Path, split: str = "random", keep: Callable[[str], bool] | None = None) -> list[BenchTheorem]:
    """Every theorem of ``split`` (train, val and test together: the length split is ours), in
    file order; with ``keep``, only those whose file path it accepts (the others are not parsed).
    A theorem listed twice is an error."""
    return _read(root, split, keep)[0]


def count_and_read_theorems(root: Path, split: str,
                            keep: Callable[[str], bool] | None = None) -> tuple[list[BenchTheorem], int]:
    """``read_theorems`` and the number of theorems in the split before ``keep``."""
    return _read(root, split, keep)


def _read(root: Path, split: str, keep: Callable[[str], bool] | None) -> tuple[list[BenchTheorem], int]:
    if split not in SPLITS:
        raise BenchmarkError(f"unknown split {split!r}; LeanDojo Benchmark 4 has {', '.join(SPLITS)}")
    theorems, seen, total = [], set(), 0
    for part in PARTS:
        path = Path(root) / split / f"{part}.json"
        data = _load_json(path)
        if not isinstance(data, list):
            raise BenchmarkError(f"{path} must hold a JSON list of theorems")
        total += len(data)
        for i, obj in enumerate(data):
            if keep is not None and isinstance(obj, dict) and isinstance(obj.get("file_path"), str) \
                    and not keep(obj["file_path"]):
                continue
            thm = parse_theorem(obj, part, f"{path} theorem {i}")
            if thm.key in seen:
                raise BenchmarkError(f"{path} theorem {i}: {thm.key} is listed twice")
            seen.add(thm.key)
            theorems.append(thm)
        del data
    return theorems, total


_KEYWORD = re.compile(r"\b(theorem|lemma|alias|def|abbrev|irreducible_def|opaque|instance|structure|class|inductive|"
                      r"axiom)\b")
_KEYWORD_KIND = {"lemma": "theorem", "alias": "theorem", "abbrev": "def", "irreducible_def": "def", "opaque": "def",
                 "class": "structure"}
# LeanDojo's corpus records the kind of the declaration's syntax node: "commanddeclaration" for
# theorems and definitions alike, so the code decides; these node kinds are theorems whatever it says.
_NODE_KIND = {"lemma": "theorem", "mathlibtacticlemma": "theorem", "stdtacticaliasalias": "theorem",
              "stdtacticaliasaliaslr": "theorem", "leanelabcommandcommandirreducibledef": "def"}
PREMISE_KINDS = ("theorem", "def", "instance", "structure", "inductive", "axiom", "other")


def premise_kind(code: str, node_kind: str = "") -> str:
    """The kind of a premise, one of PREMISE_KINDS: the declaration keyword of its source (after
    doc comment, attributes and modifiers; lemma and alias count as theorem, abbrev as def), else
    what LeanDojo's syntax-node kind implies."""
    m = _KEYWORD.search(re.sub(r"/--.*?-/|@\[[^\]]*\]", " ", code, flags=re.DOTALL))
    if m is not None:
        return _KEYWORD_KIND.get(m.group(1), m.group(1))
    return _NODE_KIND.get(node_kind, "other")


def iter_corpus(root: Path) -> Iterator[CorpusPremise]:
    """Every premise of corpus.jsonl, file by file, with its kind (see ``premise_kind``)."""
    path = Path(root) / "corpus.jsonl"
    try:
        f = open(path, encoding="utf-8")
    except FileNotFoundError:
        raise BenchmarkError(f"{path} is missing: not a LeanDojo Benchmark 4 directory") from None
    with f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                continue
            try:
                obj = json.loads(line)
            except ValueError as e:
                raise BenchmarkError(f"{path} line {n} is not JSON: {e}") from None
            where = f"{path} line {n}"
            if not isinstance(obj, dict) or not isinstance(obj.get("premises"), list):
                raise BenchmarkError(f"{where}: expected {{'path', 'premises': [...]}}")
            file_path = _str(obj, "path", where)
            for j, p in enumerate(obj["premises"]):
                if not isinstance(p, dict):
                    raise BenchmarkError(f"{where} premise {j} must be an object")
                code, node_kind = p.get("code"), p.get("kind")
                kind = premise_kind(code if isinstance(code, str) else "", node_kind if isinstance(node_kind, str) else "")
                yield CorpusPremise(_str(p, "full_name", f"{where} premise {j}"), file_path, kind,
                                    _pos(p.get("start"), f"{where} premise {j} start"))

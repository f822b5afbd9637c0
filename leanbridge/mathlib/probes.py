"""Probe tactics for each step of a proof: five kinds, as for rewrite chains (``chains.rewrite.probes``).

At step t (the state before the proof's t-th tactic) a proof gets at most one probe of each kind:

- ``gold``: the tactic the proof ran there;
- ``misplaced``: the tactic of another step of the same proof (the hard class: often it applies);
- ``swap``: the gold tactic with one premise it names replaced by another premise of the corpus of
  the same kind (theorem for theorem, def for def), taken from the file that declares the
  original where that file has another one the proof can see, else from the whole corpus;
- ``permuted``: the gold tactic with its arguments permuted: the items of its first ``[...]`` or
  ``⟨...⟩`` list, else the arguments after the tactic's head word (and the function, for
  term tactics such as ``exact``), on one-line tactics;
- ``random``: a tactic of another proof of the same split.

A kind is left out at a step where it cannot be built or would repeat the gold text. Every
choice is drawn from a generator seeded by (seed, proof, step, kind), so the probes of a proof
do not depend on which other proofs were selected, except ``random``, which draws from them.
"""
from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from leanbridge.mathlib.benchmark import BenchTheorem, CorpusPremise, TracedTactic
from leanbridge.mathlib.selection import seeded_rng

PROBE_KINDS = ("gold", "misplaced", "swap", "permuted", "random")

_OPEN, _CLOSE = "([{⟨", ")]}⟩"
_MARK = re.compile(r"<a>(.*?)</a>", re.DOTALL)
# Names no proof can write: auxiliary and private declarations.
_AUXILIARY = re.compile(r"(^|\.)_|\.(match|proof|eq|sizeOf_spec)_\d+$|^_private\.")
# Words that end the argument list of a tactic: what follows is a location, a clause or a combinator.
_STOP_WORDS = {"at", "with", "using", "generalizing", "in", "from", "says", ":=", ":", "=>", "|", "<;>", ";",
               "<|>", "fun", "λ", "by", "then", "else", "only"}
# Tactics whose first argument is the function of an application; its arguments are what to permute.
_TERM_HEADS = {"exact", "apply", "refine", "refine'", "convert", "specialize", "exact_mod_cast", "apply_mod_cast",
               "rcases", "cases", "cases'", "induction", "induction'", "trans"}
# One argument: a name (with dots, primes, subscripts), a number, a hole, or a bracketed term.
_ARGUMENT = re.compile(r"^(?:[\w.'!?₀-₉ᵢ-ᵪ]+|[(\[{⟨].*)$", re.DOTALL)


@dataclass(frozen=True)
class Probe:
    kind: str  # one of PROBE_KINDS
    text: str  # the tactic to run on the state before the step


@dataclass(frozen=True)
class PremiseIndex:
    """The corpus's premises by kind and by (file, kind), for swaps."""

    kind_of: dict[str, str]  # full name -> kind
    by_kind: dict[str, tuple[CorpusPremise, ...]]
    by_file_kind: dict[tuple[str, str], tuple[CorpusPremise, ...]]

    @classmethod
    def build(cls, premises: Iterable[CorpusPremise]) -> "PremiseIndex":
        kind_of: dict[str, str] = {}
        by_kind: dict[str, list[CorpusPremise]] = defaultdict(list)
        by_file_kind: dict[tuple[str, str], list[CorpusPremise]] = defaultdict(list)
        for p in premises:
            if _AUXILIARY.search(p.full_name) or p.full_name in kind_of:
                continue
            kind_of[p.full_name] = p.kind
            by_kind[p.kind].append(p)
            by_file_kind[(p.path, p.kind)].append(p)
        return cls(kind_of, {k: tuple(v) for k, v in by_kind.items()},
                   {k: tuple(v) for k, v in by_file_kind.items()})

    def __len__(self) -> int:
        return len(self.kind_of)


def plain_text(annotated: str) -> str:
    """The tactic an annotated tactic stands for: its marks removed."""
    return _MARK.sub(lambda m: m.group(1), annotated)


def _visible(p: CorpusPremise, thm: BenchTheorem) -> bool:
    """A premise declared in the proof's own file is visible only above the theorem."""
    return p.path != thm.file_path or tuple(p.start) < tuple(thm.start)


def swap_premise(thm: BenchTheorem, tactic: TracedTactic, index: PremiseIndex, rng) -> str | None:
    """The tactic with one premise occurrence replaced by another premise of the same kind."""
    if not tactic.premises or plain_text(tactic.annotated) != tactic.tactic:
        return None
    order = list(range(len(tactic.premises)))
    rng.shuffle(order)
    for i in order:
        original = tactic.premises[i]
        kind = index.kind_of.get(original.full_name)
        if kind is None:
            continue
        candidates = [p for p in index.by_file_kind.get((original.def_path, kind), ())
                      if p.full_name != original.full_name and _visible(p, thm)]
        if candidates:
            replacement = rng.choice(candidates).full_name
        else:
            # the whole corpus of the kind: drawn until one fits, not filtered (it can be 10^5 long)
            pool = index.by_kind.get(kind, ())
            drawn = (rng.choice(pool) for _ in range(64 if pool else 0))
            fit = next((p for p in drawn if p.full_name != original.full_name and _visible(p, thm)), None)
            if fit is None:
                continue
            replacement = fit.full_name
        pieces = _MARK.split(tactic.annotated)  # text, mark, text, mark, ..., text
        pieces[2 * i + 1] = replacement
        return "".join(pieces)
    return None


def _spans(text: str, start: int, stop: int, sep: str | None) -> list[tuple[int, int]] | None:
    """Split text[start:stop] at depth 0 on ``sep`` (or on whitespace when None); None when the
    brackets do not balance."""
    spans, depth, begin, quoted = [], 0, start, False
    for i in range(start, stop):
        c = text[i]
        if quoted:
            quoted = c != '"'
            continue
        if c == '"':
            quoted = True
        elif c in _OPEN:
            depth += 1
        elif c in _CLOSE:
            depth -= 1
            if depth < 0:
                return None
        elif depth == 0 and (c == sep if sep is not None else c.isspace()):
            spans.append((begin, i))
            begin = i + 1
    if depth != 0 or quoted:
        return None
    spans.append((begin, stop))
    return [(a, b) for a, b in spans if text[a:b].strip()] if sep is None else spans


def _first_list(text: str) -> tuple[int, int] | None:
    """(start, stop) of the inside of the first top-level ``[...]`` or ``⟨...⟩``."""
    depth = 0
    for i, c in enumerate(text):
        if c in _OPEN:
            if depth == 0 and c in "[⟨":
                close = "]" if c == "[" else "⟩"
                inner_depth = 0
                for j in range(i + 1, len(text)):
                    if text[j] in _OPEN:
                        inner_depth += 1
                    elif text[j] in _CLOSE:
                        if inner_depth == 0:
                            return (i + 1, j) if text[j] == close else None
                        inner_depth -= 1
                return None
            depth += 1
        elif c in _CLOSE:
            depth -= 1
    return None


def _shuffled(items: list[str], rng) -> list[str] | None:
    if len(set(items)) < 2:
        return None
    for _ in range(20):
        order = items[:]
        rng.shuffle(order)
        if order != items:
            return order
    return None


def permute_arguments(tactic: str, rng) -> str | None:
    """The tactic with its arguments in another order, or None when it has fewer than two
    distinct ones. A tactic with a top-level list permutes that list's items and nothing else;
    otherwise every argument must be a name, a number or a bracketed term (no infix operator)."""
    found = _first_list(tactic)
    if found is not None:
        spans = _spans(tactic, found[0], found[1], ",")
        if spans is None or len(spans) < 2:
            return None
        order = _shuffled([tactic[a:b].strip() for a, b in spans], rng)
        return None if order is None else tactic[:found[0]] + ", ".join(order) + tactic[found[1]:]
    if "\n" in tactic.strip():
        return None
    spans = _spans(tactic, 0, len(tactic), None)
    if not spans:
        return None
    words = [tactic[a:b] for a, b in spans]
    stop = next((i for i, w in enumerate(words) if i > 0 and w in _STOP_WORDS), len(words))
    first = 2 if words[0] in _TERM_HEADS else 1
    args = words[first:stop]
    if not all(_ARGUMENT.match(w) for w in args):
        return None
    order = _shuffled(args, rng)
    if order is None:
        return None
    return " ".join(words[:first] + order + words[stop:])


def step_probes(thm: BenchTheorem, t: int, pool: Sequence[BenchTheorem], index: PremiseIndex,
                seed: int) -> list[Probe]:
    """The probes at step ``t`` of ``thm``; ``pool`` is its split (for ``random``)."""
    gold = thm.tactics[t].tactic
    probes = [Probe("gold", gold)]

    def rng(kind: str):
        return seeded_rng(seed, thm.key, t, kind)

    others = sorted({s.tactic for i, s in enumerate(thm.tactics) if i != t and s.tactic != gold})
    if others:
        probes.append(Probe("misplaced", rng("misplaced").choice(others)))
    swapped = swap_premise(thm, thm.tactics[t], index, rng("swap"))
    if swapped is not None and swapped != gold:
        probes.append(Probe("swap", swapped))
    permuted = permute_arguments(gold, rng("permuted"))
    if permuted is not None and permuted != gold:
        probes.append(Probe("permuted", permuted))
    r = rng("random")
    candidates = [p for p in pool if p.key != thm.key and p.tactics]
    for _ in range(20 if candidates else 0):
        other = r.choice(candidates)
        text = r.choice(other.tactics).tactic
        if text != gold:
            probes.append(Probe("random", text))
            break
    return probes


def proof_probes(thm: BenchTheorem, pool: Sequence[BenchTheorem], index: PremiseIndex, seed: int) -> list[list[Probe]]:
    """The probes of every step of ``thm``, one list per step."""
    return [step_probes(thm, t, pool, index, seed) for t in range(len(thm.tactics))]

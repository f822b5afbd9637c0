"""Tokens of Lean text (proof states and tactics) for the oracle on Mathlib probe data.

Splitting is fixed and needs no training: a name is cut at its dots (``Nat.succ_le_iff`` ->
``Nat``, ``.``, ``succ_le_iff``), so that a namespace or a field is shared between names; a
number is one token; a line break is one token ``\\n`` (it separates hypotheses and goals);
a few multi-character operators (``:=``, ``<;>``, ``=>``, ``<-``, ...) are one token each;
every other character that is not a space is a token of its own (brackets, ``⊢``, ``≤``, ``∀``).

The vocabulary is built from the training split only: the tokens seen there at least
``min_count`` times, commonest first (ties in text order), after ``<pad>`` (id 0, also the
padding of every tensor) and ``<unk>`` (id 1, any other token, the test split's new names
included). The same texts and settings give the same ids on every machine.
"""
from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from functools import cached_property

PAD, UNK = "<pad>", "<unk>"

_TOKEN = re.compile(r"""
    \n[\s]*                           # a line break (and the indentation after it)
  | [^\W\d][\w'!?✝]*                 # a name component: letters, digits, _, primes, sub/superscripts
  | \d+                               # a number
  | :=|<;>|=>|->|<-|<\||\|>|\.\.|::|\+\+|<=|>=|!=|&&|\|\|   # operators Lean spells with two or three characters
  | \S                                # anything else, one character at a time
""", re.VERBOSE)


def split(text: str) -> list[str]:
    """The tokens of ``text``, in order (a line break as ``\\n``)."""
    return ["\n" if m.group()[0] == "\n" else m.group() for m in _TOKEN.finditer(text)]


@dataclass(frozen=True)
class TokenizerSpec:
    """How Lean text becomes token ids; recorded beside every run."""

    min_count: int = 2  # a token enters the vocabulary when the training split holds it this often
    state_tokens: int = 256  # a proof state keeps its last this many tokens (the goal ends it)
    tactic_tokens: int = 64  # a tactic keeps its first this many tokens

    def __post_init__(self) -> None:
        if self.min_count < 1 or self.state_tokens < 1 or self.tactic_tokens < 1:
            raise ValueError("min_count, state_tokens and tactic_tokens must be at least 1")


@dataclass(frozen=True)
class TextVocab:
    """Token ids of Lean text: ``<pad>`` = 0, ``<unk>`` = 1, then the kept tokens."""

    tokens: tuple[str, ...]

    @classmethod
    def build(cls, texts: Iterable[str], min_count: int) -> "TextVocab":
        counts = Counter(tok for text in texts for tok in split(text))
        kept = sorted((tok for tok, n in counts.items() if n >= min_count and tok not in (PAD, UNK)),
                      key=lambda tok: (-counts[tok], tok))
        return cls((PAD, UNK, *kept))

    @property
    def size(self) -> int:
        return len(self.tokens)

    @cached_property
    def index(self) -> dict[str, int]:
        return {tok: i for i, tok in enumerate(self.tokens)}

    def encode(self, text: str, max_len: int, keep: str = "head") -> list[int]:
        """At most ``max_len`` ids (never 0) of ``text``'s tokens: the first ones (``keep="head"``)
        or the last ones (``keep="tail"``); a token outside the vocabulary is ``<unk>``."""
        return self.ids(split(text), max_len, keep)

    def ids(self, toks: list[str], max_len: int, keep: str = "head") -> list[int]:
        """``encode`` of text already split into ``toks``."""
        toks = toks[:max_len] if keep == "head" else toks[max(0, len(toks) - max_len):]
        unk = self.index[UNK]
        return [self.index.get(tok, unk) for tok in toks]

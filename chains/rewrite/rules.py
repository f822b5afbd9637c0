"""Rewrite rules and events: one lemma applied at one position of a tree.

Each rule rewrites a pattern over metavariables ``x, y, z`` (arbitrary subtrees) into
another. Tier 1 has commutativity and associativity of both operators, associativity also
right to left; tier 2 adds distributivity on either side and factoring, its reverse, which
applies only when the shared factor is the same subtree on both sides.
"""
from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from chains.rewrite.trees import ADD, MUL, Tree, internal_positions, replace, size, subtree


@dataclass(frozen=True)
class Rule:
    name: str
    tier: int
    # bindings of x, y[, z] when the tree has this rule's left side at its root, else None
    match: Callable[[Tree], tuple | None]
    # the right side built from the bindings
    build: Callable[..., Tree]
    # the rule undoing this one at the same position
    inverse: str


def _op(tree: Tree, op: str) -> bool:
    return not isinstance(tree, str) and tree[0] == op


def _comm(op: str) -> tuple[Callable, Callable]:
    return (lambda t: (t[1], t[2]) if _op(t, op) else None), (lambda x, y: (op, y, x))


def _assoc(op: str) -> tuple[Callable, Callable]:
    # (x op y) op z  ->  x op (y op z)
    def match(t):
        return (t[1][1], t[1][2], t[2]) if _op(t, op) and _op(t[1], op) else None

    return match, lambda x, y, z: (op, x, (op, y, z))


def _assoc_rev(op: str) -> tuple[Callable, Callable]:
    # x op (y op z)  ->  (x op y) op z
    def match(t):
        return (t[1], t[2][1], t[2][2]) if _op(t, op) and _op(t[2], op) else None

    return match, lambda x, y, z: (op, (op, x, y), z)


def _distrib_left(t):
    # x * (y + z)  ->  x * y + x * z
    return (t[1], t[2][1], t[2][2]) if _op(t, MUL) and _op(t[2], ADD) else None


def _distrib_right(t):
    # (x + y) * z  ->  x * z + y * z
    return (t[1][1], t[1][2], t[2]) if _op(t, MUL) and _op(t[1], ADD) else None


def _factor_left(t):
    # x * y + x * z  ->  x * (y + z), the same x on both sides
    if _op(t, ADD) and _op(t[1], MUL) and _op(t[2], MUL) and t[1][1] == t[2][1]:
        return (t[1][1], t[1][2], t[2][2])
    return None


def _factor_right(t):
    # x * z + y * z  ->  (x + y) * z, the same z on both sides
    if _op(t, ADD) and _op(t[1], MUL) and _op(t[2], MUL) and t[1][2] == t[2][2]:
        return (t[1][1], t[2][1], t[1][2])
    return None


RULES: dict[str, Rule] = {
    rule.name: rule
    for rule in (
        Rule("add_comm", 1, *_comm(ADD), inverse="add_comm"),
        Rule("mul_comm", 1, *_comm(MUL), inverse="mul_comm"),
        Rule("add_assoc", 1, *_assoc(ADD), inverse="add_assoc_rev"),
        Rule("mul_assoc", 1, *_assoc(MUL), inverse="mul_assoc_rev"),
        Rule("add_assoc_rev", 1, *_assoc_rev(ADD), inverse="add_assoc"),
        Rule("mul_assoc_rev", 1, *_assoc_rev(MUL), inverse="mul_assoc"),
        Rule("distrib_left", 2, _distrib_left, lambda x, y, z: (ADD, (MUL, x, y), (MUL, x, z)),
             inverse="factor_left"),
        Rule("distrib_right", 2, _distrib_right, lambda x, y, z: (ADD, (MUL, x, z), (MUL, y, z)),
             inverse="factor_right"),
        Rule("factor_left", 2, _factor_left, lambda x, y, z: (MUL, x, (ADD, y, z)),
             inverse="distrib_left"),
        Rule("factor_right", 2, _factor_right, lambda x, y, z: (MUL, (ADD, x, y), z),
             inverse="distrib_right"),
    )
}

TIERS = (1, 2)


def tier_rules(tier: int) -> tuple[str, ...]:
    """Names of the rules of ``tier`` (tier 2 includes tier 1), in a fixed order."""
    if tier not in TIERS:
        raise ValueError(f"tier must be one of {TIERS}, got {tier}")
    return tuple(name for name, rule in RULES.items() if rule.tier <= tier)


class EventSyntaxError(ValueError):
    """Text that is not ``rule@position``."""


@dataclass(frozen=True, order=True)
class Event:
    """Rule ``rule`` applied at the node reached by ``path`` (``0`` left, ``1`` right)."""

    rule: str
    path: str

    def __str__(self) -> str:
        return f"{self.rule}@{self.path}"

    @classmethod
    def parse(cls, text: str) -> Event:
        if not isinstance(text, str) or text.count("@") != 1:
            raise EventSyntaxError(f"event {text!r} is not of the form rule@position")
        rule, path = text.split("@")
        if rule not in RULES:
            raise EventSyntaxError(f"event {text!r} names no known rule")
        if path.strip("01"):
            raise EventSyntaxError(f"event {text!r} has a position other than 0s and 1s")
        return cls(rule, path)

    @property
    def inverse(self) -> Event:
        return Event(RULES[self.rule].inverse, self.path)


def tier2_events(events: tuple[Event, ...]) -> int:
    """How many of a chain's events apply a tier-2 rule."""
    return sum(RULES[event.rule].tier == 2 for event in events)


def tier2_group(n: int) -> str:
    """The band of a chain by its count of tier-2 events: none, one or two, three or more."""
    return "0" if n == 0 else ("1-2" if n <= 2 else "3+")


def redex(tree: Tree, event: Event) -> tuple | None:
    """The bindings of the event's rule at its position, or None when it does not apply."""
    node = subtree(tree, event.path)
    if node is None:
        return None
    return RULES[event.rule].match(node)


def apply(tree: Tree, event: Event, max_size: int | None = None) -> Tree | None:
    """The tree after ``event``, or None when the rule's left side is not at the position
    or the result would exceed ``max_size`` tokens."""
    bindings = redex(tree, event)
    if bindings is None:
        return None
    result = replace(tree, event.path, RULES[event.rule].build(*bindings))
    if max_size is not None and size(result) > max_size:
        return None
    return result


def successors(tree: Tree, rules: tuple[str, ...], max_size: int | None = None
               ) -> list[tuple[Event, Tree]]:
    """Every applicable event with its result, positions in Polish order, rules in order."""
    out = []
    for path in internal_positions(tree):
        for name in rules:
            event = Event(name, path)
            result = apply(tree, event, max_size)
            if result is not None:
                out.append((event, result))
    return out

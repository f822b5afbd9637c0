"""A group's Lean module: its points, its elements and the generators' action, in prelude mode.

The module defines, in namespace ``Group<name>``, the points ``Pt.x0 … Pt.x{n-1}``, an element as
``Elem.mk a0 … a{n-1}`` (the point at each position, one-line notation), the events ``Gen`` (the
generators, then ``id``) and ``step : Gen → Elem → Elem``: one ``Elem.rec`` that takes the element
apart and one ``Gen.rec`` table that puts it together again, so the kernel evaluates a step by two
iota reductions and a history by as many steps as it has. The distractor ``id`` is in every
module, drawn or not, so that datasets with and without it share one module and its certificates.
Every name written here comes from the group's definition (checked identifiers), never from a user.
"""
from __future__ import annotations

from chains.groups.group import Group

DISTRACTOR = "id"  # the event that changes nothing


def namespace(group: Group) -> str:
    return f"Group{group.name}"


def lean_source(group: Group) -> str:
    """The module's whole text (it begins with ``prelude`` and ``import Core``)."""
    n = group.points
    slots = " ".join(f"a{i}" for i in range(n))
    rows = [f"      (Elem.mk {' '.join(f'a{i}' for i in g)})  -- {name}" for name, g in group.generators]
    rows.append(f"      (Elem.mk {slots})  -- {DISTRACTOR}")
    return "\n".join([
        "prelude",
        "import Core",
        "",
        f"/-! The group {group.name}: {group.about} -/",
        "",
        f"namespace {namespace(group)}",
        "",
        f"/-- The points 0 … {n - 1}. -/",
        "inductive Pt where",
        f"  | {' | '.join(f'x{i}' for i in range(n))}",
        "",
        "/-- An element: the point at each position (one-line notation). -/",
        "inductive Elem where",
        f"  | mk ({slots} : Pt)",
        "",
        f"/-- The events: the generators, then `{DISTRACTOR}`, which changes nothing. -/",
        "inductive Gen where",
        f"  | {' | '.join([*(name for name, _ in group.generators), DISTRACTOR])}",
        "",
        "/-- The element times the generator: position i takes the point at position g(i). -/",
        "noncomputable def step (e : Gen) (p : Elem) : Elem :=",
        "  Elem.rec (motive := fun _ => Elem)",
        f"    (fun {slots} => Gen.rec (motive := fun _ => Elem)",
        *rows,
        "      e)",
        "    p",
        "",
        f"end {namespace(group)}",
        "",
    ])

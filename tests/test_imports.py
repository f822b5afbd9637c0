"""The import graph points one way (ARCHITECTURE.md): chains < leanbridge < tracker < oracle <
prover. ``chains`` knows nothing of Lean or torch; ``leanbridge`` knows Lean and nothing of models;
no package imports one above it. Read from the sources with ast, imports inside functions included."""
from __future__ import annotations

import ast
from functools import cache
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
ORDER = ("chains", "leanbridge", "tracker", "stepwise", "oracle", "prover")  # each may import only those before it
FORBIDDEN_OUTSIDE = {"chains": {"torch"}, "leanbridge": {"torch"}}

# Known exceptions, each one edge (module, imported package), to be removed when the code moves.
# None now: the Mathlib extraction and replay live in leanbridge/mathlib, the oracle keeps its tensors.
KNOWN: set[tuple[str, str]] = set()


def imports(path: Path) -> set[str]:
    """Top-level names of every module ``path`` imports (absolute imports; relative ones stay inside)."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), filename=str(path))):
        if isinstance(node, ast.Import):
            names |= {alias.name.split(".")[0] for alias in node.names}
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
            names.add(node.module.split(".")[0])
    return names


@cache
def edges() -> tuple[tuple[str, str, str], ...]:
    """(module path, its package, the imported top-level name) for every package module."""
    found = []
    for package in ORDER:
        for path in sorted((ROOT / package).rglob("*.py")):
            for name in imports(path):
                found.append((path.relative_to(ROOT).as_posix(), package, name))
    return tuple(found)


def test_the_graph_is_read():
    names = {(module, name) for module, _, name in edges()}
    assert ("leanbridge/certify.py", "chains") in names and ("tracker/train.py", "torch") in names


def test_no_package_imports_one_above_it():
    wrong = []
    for module, package, name in edges():
        if name in ORDER and ORDER.index(name) > ORDER.index(package) and (module, name) not in KNOWN:
            wrong.append(f"{module} imports {name}, which is above {package}")
    assert not wrong, "\n".join(wrong)


def test_chains_and_leanbridge_know_no_models():
    wrong = [f"{module} imports {name}" for module, package, name in edges()
             if name in FORBIDDEN_OUTSIDE.get(package, ())]
    assert not wrong, "\n".join(wrong)


def test_leanbridge_imports_nothing_of_the_oracle_tracker_or_prover():
    """No exception here: the certify command's Mathlib branch included."""
    wrong = [f"{module} imports {name}" for module, package, name in edges()
             if package == "leanbridge" and name in {"oracle", "tracker", "prover"}]
    assert not wrong, "\n".join(wrong)


def test_chains_imports_no_other_package():
    wrong = [f"{module} imports {name}" for module, package, name in edges()
             if package == "chains" and name in set(ORDER) - {"chains"}]
    assert not wrong, "\n".join(wrong)


def test_every_known_exception_is_still_there():
    """When the code moves, the exception must go too (so the list never outlives the edge)."""
    present = {(module, name) for module, _, name in edges()}
    assert KNOWN <= present, f"no longer imported, remove from KNOWN: {sorted(KNOWN - present)}"

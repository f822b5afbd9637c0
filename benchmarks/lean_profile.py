"""Where Lean's time goes on certification files: the same distinct tier-1 step statements
written several ways, one Lean process per variant, measured by the process's CPU seconds or,
with ``--callgrind``, by the instructions it executes (valgrind; deterministic, so it is the
measure to trust on a shared machine, at about 50 times the run time).

- ``header``: the header alone (process start, ``import Core``): the fixed cost of a file;
- ``before``: the rendering before the throughput work (``theorem q : ∀ (a b : N), Eq … :=
  fun a b => proof``, then ``#print axioms q``; header with the linters on);
- ``linters-off``: ``before`` under today's header (``set_option linter.all false``);
- ``after``: today's rendering (``leanbridge.questions.render``: atoms bound before the colon,
  no ``fun``) under today's header;
- ``no-axioms``: ``after`` without the ``#print axioms`` lines (the audit's share; not a valid
  certificate);
- ``explicit``: ``after`` with every implicit argument of ``congrArg``/``Eq.symm`` given
  (``@congrArg N N x y (fun t => …) h``), so that Lean need not unify (tried, not adopted).

Tried since, each against ``after`` (the statement's text, and so every store key, changes
with those marked *text*; the others change the file only):

- ``trivial``: ``theorem q : Eq N.zero N.zero := rfl`` and its ``#print axioms``: the floor
  of a declaration and its audit, whatever the statement (a measure, not a certificate);
- ``holes`` (*text*): the lemma's arguments as holes (``N.add_comm _ _``), left to unification;
- ``fun-untyped`` (*text*): the congruence context's binder without its type (``fun t => …``);
- ``holes-fun-untyped`` (*text*): both;
- ``navigate`` (*text*): the proof as a probe's, the path walked by the core's
  ``congr_fst``/``congr_snd`` with every other argument a hole (``congr_snd _ (N.add_comm _ _)``),
  no congruence context at all;
- ``open-N`` (*text*): ``open N`` in the header and the short names (``add``, ``add_comm``);
- ``def``, ``opaque``: the declaration keyword (outside the statement's text);
- ``cmdline-snapshots``: ``set_option internal.cmdlineSnapshots true`` in the header.

    .venv/bin/python -m benchmarks.lean_profile [--atoms 4] [--count 1000] [--callgrind]
"""
from __future__ import annotations

import argparse
import json
import os
import re
import resource
import subprocess
import tempfile
import time
from pathlib import Path

from chains.rewrite.rules import apply, redex
from chains.rewrite.space import Domain, StateSpace
from chains.rewrite.trees import subtree
from leanbridge.corelib import build_core
from leanbridge.discovery import find_lean
from leanbridge.questions import Certify, header, probe_term, render
from leanbridge.render import HOLE, LEMMAS, _arg, _term, bound_atoms, step_proof, step_statement
from leanbridge.runner import MAX_ERRORS, LeanLimits, run_lean_file

VARIANTS = ("header", "before", "linters-off", "after", "no-axioms", "explicit", "trivial", "holes", "fun-untyped",
            "holes-fun-untyped", "navigate", "open-N", "def", "opaque", "cmdline-snapshots")
TEXT_VARIANTS = ("holes", "fun-untyped", "holes-fun-untyped", "navigate", "open-N")  # change the statement's text
OLD_HEADER_LINE = "set_option linter.defProp false"


def steps(atoms: int, count: int) -> list[tuple]:
    """The first ``count`` distinct (tree, event) steps of the tier-1 domain, start trees in order."""
    domain = Domain(atoms, 1)
    space = StateSpace(domain)
    out = []
    for i in space.start_trees():
        out.extend((space.trees[i], event) for event, _ in space.successors(i))
        if len(out) >= count:
            break
    return out[:count]


def explicit_proof(tree, event) -> str:
    bindings = redex(tree, event)
    lemma, reverse = LEMMAS[event.rule]
    result = apply(tree, event)
    before, after = _arg(subtree(tree, event.path), None, ""), _arg(subtree(result, event.path), None, "")
    proof = f"{lemma} {' '.join(_arg(b, None, '') for b in bindings)}"
    if reverse:
        proof = f"@Eq.symm N {after} {before} ({proof})"
    if event.path:
        proof = f"@congrArg N N {before} {after} (fun ({HOLE} : N) => {_term(tree, hole=event.path)}) ({proof})"
    return proof


def text_variant(variant: str, tree, event, atoms: tuple[str, ...]) -> str:
    """The statement's text (after ``theorem <name> ``) of a *text* variant."""
    if variant == "navigate":
        proof = probe_term(event)
    else:
        proof = step_proof(tree, event)
        if variant in ("holes", "holes-fun-untyped"):
            lemma, _ = LEMMAS[event.rule]
            proof = proof.replace(f"{lemma} {' '.join(_arg(b, None, '') for b in redex(tree, event))}",
                                  f"{lemma} {' '.join('_' for _ in redex(tree, event))}")
        if variant in ("fun-untyped", "holes-fun-untyped"):
            proof = proof.replace(f"fun ({HOLE} : N) =>", f"fun {HOLE} =>")
    text = f"{step_statement(tree, event, atoms).text.split(' := ')[0]} := {proof}"
    if variant == "open-N":
        text = re.sub(r"\bN\.(add|mul)", r"\1", text)
    return text


def source(variant: str, atoms: tuple[str, ...], items: list[tuple]) -> str:
    head = header("Core")
    if variant in ("header", "before"):
        head = [OLD_HEADER_LINE if line.startswith("set_option linter") else line for line in head]
    if variant == "open-N":
        head = [*head, "open N"]
    if variant == "cmdline-snapshots":
        head = [*head, "set_option internal.cmdlineSnapshots true"]
    lines = list(head)
    if variant == "header":
        return "\n".join(lines) + "\n"
    for k, (tree, event) in enumerate(items):
        name = f"q{k}"
        if variant == "trivial":
            lines += [f"theorem {name} : Eq N.zero N.zero := rfl", f"#print axioms {name}"]
        elif variant in TEXT_VARIANTS:
            lines += [f"theorem {name} {text_variant(variant, tree, event, atoms)}", f"#print axioms {name}"]
        elif variant in ("def", "opaque"):
            block = render(Certify(step_statement(tree, event, atoms)), name, atoms).lines
            lines += [block[0].replace("theorem ", f"{variant} ", 1), *block[1:]]
        elif variant in ("before", "linters-off"):
            bound = " ".join(bound_atoms(atoms, [tree]))
            lines.append(f"theorem {name} : ∀ ({bound} : N), Eq ({_term(tree)}) ({_term(apply(tree, event))}) := "
                         f"fun {bound} => {step_proof(tree, event)}")
            lines.append(f"#print axioms {name}")
        elif variant == "explicit":
            text = step_statement(tree, event, atoms).text.split(" := ")[0]
            lines += [f"theorem {name} {text} := {explicit_proof(tree, event)}", f"#print axioms {name}"]
        else:
            block = render(Certify(step_statement(tree, event, atoms)), name, atoms).lines
            lines.extend(block[:-1] if variant == "no-axioms" else block)
    return "\n".join(lines) + "\n"


def cpu_seconds(lean, core, text: str) -> dict:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    messages = run_lean_file(lean, text, core.olean_dir, LeanLimits())
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    bad = [m for m in messages if m.severity != "information"]
    if bad:
        raise SystemExit(f"Lean complained: {bad[0].text[:300]}")
    return {"wall_s": round(time.perf_counter() - start, 3),
            "cpu_s": round(after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime, 3)}


def instructions(lean, core, text: str) -> dict:
    with tempfile.TemporaryDirectory(prefix="lean-profile-") as tmp:
        path = Path(tmp) / "Check.lean"
        path.write_text(text)
        done = subprocess.run(["valgrind", "--tool=callgrind", f"--callgrind-out-file={tmp}/cg.out",
                               str(lean.path), f"-DmaxErrors={MAX_ERRORS}", "--json", str(path)],
                              capture_output=True, text=True, env={**os.environ, "LEAN_PATH": str(core.olean_dir)})
    found = re.search(r"Collected : (\d+)", done.stderr)
    if found is None or "error" in done.stdout:
        raise SystemExit(f"callgrind run failed: {done.stderr[-300:]} {done.stdout[:300]}")
    return {"instructions": int(found.group(1))}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--atoms", type=int, default=4)
    parser.add_argument("--count", type=int, default=1000)
    parser.add_argument("--variants", default=",".join(VARIANTS))
    parser.add_argument("--callgrind", action="store_true", help="count instructions under valgrind")
    parser.add_argument("--out", type=Path, default=None,
                        help="record the rows in this JSON file (e.g. results/certify.json) under "
                             "lean_profile.<instructions|cpu>, keeping what else it holds")
    args = parser.parse_args()
    lean = find_lean()
    core = build_core(lean)
    atoms = Domain(args.atoms, 1).atom_names
    items = steps(args.atoms, args.count)
    measure = instructions if args.callgrind else cpu_seconds
    rows, base = [], None
    for variant in args.variants.split(","):
        text = source(variant, atoms, items)
        row = {"variant": variant, "statements": 0 if variant == "header" else len(items), "bytes": len(text),
               **measure(lean, core, text)}
        if variant == "header":
            base = row
        elif base is not None and "instructions" in row:
            row["instructions_per_statement"] = round((row["instructions"] - base["instructions"]) / len(items))
        elif "cpu_s" in row:
            row["per_cpu_second"] = round(len(items) / row["cpu_s"], 1)
        rows.append(row)
        print(json.dumps(row), flush=True)
    if args.out:
        results = json.loads(args.out.read_text()) if args.out.exists() else {}
        results.setdefault("lean_profile", {})["instructions" if args.callgrind else "cpu"] = {
            "command": f"benchmarks/lean_profile.py --atoms {args.atoms} --count {args.count}"
                       + (" --callgrind" if args.callgrind else ""),
            "load_average": round(os.getloadavg()[0], 2), "rows": rows}
        args.out.write_text(json.dumps(results, indent=2, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()

"""Where Lean's time goes on certification files: one Lean process per variant and file size,
on the same distinct tier-1 step statements, timed by wall clock and by the process's CPU
seconds (the CPU figure is the one to trust on a shared machine).

Variants are cumulative removals or alternatives, each a file Lean finishes without error:

- ``header``: the header alone (process start and ``import Core``);
- ``current``: each statement as certified (theorem, then ``#print axioms``);
- ``no-axioms``: the theorems without ``#print axioms`` (the audit's cost);
- ``no-kernel``: as ``no-axioms`` with ``debug.skipKernelTC`` (the kernel's share; measurement only);
- ``explicit``: the production rendering (see ``leanbridge.render``) with every implicit
  argument of ``congrArg``/``Eq.symm`` given, so Lean need not unify.

    .venv/bin/python benchmarks/lean_profile.py [--atoms 4] [--count 2000] [--sizes 500,2000]
"""
from __future__ import annotations

import argparse
import json
import resource
import time
from pathlib import Path

from chains.space import Domain, StateSpace
from leanbridge.corelib import build_core
from leanbridge.discovery import find_lean
from leanbridge.questions import header
from leanbridge.render import step_statement
from leanbridge.runner import LeanLimits, run_lean_file


def statements(atoms: int, tier: int, count: int) -> list[str]:
    domain = Domain(atoms, tier)
    space = StateSpace(domain)
    out: list[str] = []
    for i in space.start_trees():
        for event, _ in space.successors(i):
            out.append(step_statement(space.trees[i], event, domain.atom_names).text)
            if len(out) == count:
                return out
    return out


def variant_lines(name: str, texts: list[str]) -> list[str]:
    lines = []
    if name == "no-kernel":
        lines.append("set_option debug.skipKernelTC true")
    for k, text in enumerate(texts):
        lines.append(f"theorem q{k} : {text}")
        if name in ("current", "explicit"):
            lines.append(f"#print axioms q{k}")
    return lines


def timed(lean, core, source: str) -> tuple[float, float, int]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    messages = run_lean_file(lean, source, core.olean_dir, LeanLimits())
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    bad = [m for m in messages if m.severity != "information"]
    if bad:
        raise SystemExit(f"Lean complained: {bad[0].text[:300]}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime), len(messages)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--atoms", type=int, default=4)
    parser.add_argument("--tier", type=int, default=1)
    parser.add_argument("--count", type=int, default=2000)
    parser.add_argument("--sizes", default="500,2000")
    parser.add_argument("--variants", default="header,current,no-axioms,no-kernel,explicit")
    parser.add_argument("--out", type=Path, default=None, help="write the table as JSON here")
    args = parser.parse_args()
    lean = find_lean()
    core = build_core(lean)
    texts = statements(args.atoms, args.tier, args.count)
    head = header(core.module)
    rows = []
    for size in (int(s) for s in args.sizes.split(",")):
        for name in args.variants.split(","):
            chunk = [] if name == "header" else texts[:size]
            source = "\n".join(head + variant_lines(name, chunk)) + "\n"
            wall, cpu, messages = timed(lean, core, source)
            row = {"variant": name, "statements": len(chunk), "bytes": len(source), "wall_s": round(wall, 3),
                   "cpu_s": round(cpu, 3), "messages": messages,
                   "per_cpu_second": round(len(chunk) / cpu, 1) if chunk else None}
            rows.append(row)
            print(json.dumps(row), flush=True)
    if args.out:
        args.out.write_text(json.dumps(rows, indent=2) + "\n")


if __name__ == "__main__":
    main()

"""The kernel route (``certify --checker kernel``): steps and equivalences checked by the Lean
kernel directly, through kcheck, a small C program linked against the bundled Lean library
(``leanbridge/kcheck/``, package data, compiled with the machine's gcc into the cache on first
use, one binary per sources' hash and Lean githash).

kcheck skips Lean's parser and elaborator: it reads each statement as a fully explicit kernel
term (``leanbridge.kernelterms``) and hands the theorem to ``lean_add_decl``, about twenty
times as many statements per CPU-second as the text route. A statement is certified only when
(a) kcheck started, which it does only once its own audit found no axiom in the closure of the
constants a statement may name, and once Lean's ``#print axioms`` confirmed each of those
constants for this build of the core library (``corelib.audited_constants``); (b) the kernel
added the theorem; and (c) Lean's rendering of the type of the constant it added reads back,
with the product's parser, as exactly the question's two trees. A kcheck that crashes, hangs or
answers out of turn is an exception: the batch is retried, then bisected, as in
``leanbridge.batch``, until the statement at fault is isolated (``QuestionFailed``).
"""
from __future__ import annotations

import hashlib
import os
import re
import subprocess
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path

from leanbridge.checker import KernelCheckerError, kcheck_sources, sources_hash
from leanbridge.corelib import CoreLibrary, audited_constants
from leanbridge.discovery import LEAN_GITHASH, LeanInstall, bundled_lean_library
from leanbridge.errors import LeanBridgeError, shown
from leanbridge.kernelterms import KernelStatement, kernel_statement, kernel_type_text
from leanbridge.paths import BuildError, built_with_gcc, cache_dir
from leanbridge.process import LeanLimits, lean_process
from leanbridge.questions import InferredTypeError, Question, parse_kernel_type
from leanbridge.runner import LeanRunError, LeanTimeout, with_retries
from leanbridge.verdicts import Answer, Complete, Rejected

# The constants kcheck lets a statement name (its ALLOWED table); Lean's text-route audit must
# have confirmed each of them too.
ALLOWED = ("N", "N.add", "N.mul", "Eq", "rfl", "Eq.symm", "Eq.trans", "congrArg", "N.add_comm", "N.mul_comm",
           "N.add_assoc", "N.mul_assoc", "N.left_distrib", "N.right_distrib")
EXIT_REFUSED = 3  # kcheck's exit status when it will not check anything (its audit failed)
# kcheck's answer to one statement, after its name (kcheck.c's header): anything else, or output
# that does not end with a whole line, is a faulty kcheck, never a verdict for the store
VERDICT = re.compile(r"ok \S.*|rejected [A-Za-z][A-Za-z0-9_]*(: .*)?|parse_error column [0-9]+")


def running_identity(lean: LeanInstall) -> tuple[str, str]:
    """kcheck as this process runs it with ``lean``: (its sources' sha256, the Lean githash it
    runs). ``run_kcheck`` refuses a kcheck that says it runs another Lean than ``lean``, and
    ``build_kcheck`` builds one only for the bundled library, so the pair names every kcheck
    answer this process gives; a cluster's driver compares its nodes' with its own."""
    return sources_hash(), lean.githash


def build_kcheck(lean: LeanInstall) -> Path:
    """The kcheck binary for these sources and the bundled Lean library, built with gcc into the
    cache on first use."""
    if lean.githash != LEAN_GITHASH:
        raise KernelCheckerError(f"the kernel route runs the bundled Lean library ({LEAN_GITHASH[:12]}); this run's "
                                 f"Lean {lean.path} is {lean.githash[:12]}: use --checker elaborator")
    try:
        libdir = bundled_lean_library()
    except LeanBridgeError as e:
        raise KernelCheckerError(f"the kernel route needs the bundled Lean library: {e}") from None
    # one build per library directory too: the binary's run path names it (resolved, so that a venv
    # reached through a link is named by where it is), and another environment's copy may be gone
    libdir = Path(libdir).resolve()
    place = hashlib.sha256(str(libdir).encode()).hexdigest()[:8]
    target = cache_dir() / "kcheck" / f"{LEAN_GITHASH[:12]}-{sources_hash()[:16]}-{place}" / "kcheck"
    try:
        return built_with_gcc(target, kcheck_sources(), "kcheck.c", libdir, ("-O2", "-std=gnu11"),
                              what="the kernel checker kcheck")
    except BuildError as e:
        raise KernelCheckerError(str(e)) from None


def prepare(lean: LeanInstall, core: CoreLibrary, limits: LeanLimits) -> Path:
    """kcheck, built, for a core library whose text-route audit covers every constant kcheck
    allows; a run checks this before it asks anything or opens anything for writing."""
    confirmed = audited_constants(lean, core, limits)
    missing = [name for name in ALLOWED if name not in confirmed]
    if missing:
        raise KernelCheckerError(f"Lean's audit of the core library did not confirm {', '.join(missing)}: "
                                 "the kernel route will not start")
    return build_kcheck(lean)


def run_kcheck(binary: Path, core: CoreLibrary, lines: Sequence[str], limits: LeanLimits,
               githash: str) -> list[str]:
    """kcheck's answer lines to ``lines``, one per line, in order (each begins with its name).

    Raises KernelCheckerError when kcheck refuses to start, LeanTimeout past ``limits``, and
    LeanRunError when it dies or answers anything but one line per statement, in its protocol."""
    with tempfile.TemporaryDirectory(prefix="leanbridge-kernel-") as tmp:
        path = Path(tmp) / "statements.k"
        path.write_text("".join(f"{line}\n" for line in lines))
        argv = [str(binary), str(core.olean_dir), core.module, str(path)]
        with lean_process(argv, dict(os.environ), limits) as proc:
            try:
                stdout, stderr = proc.communicate(timeout=limits.timeout_s)
            except subprocess.TimeoutExpired as e:
                raise LeanTimeout(f"kcheck ran past {limits.timeout_s:.0f} s") from e
    said = shown(stderr.decode(errors="replace").strip())
    if proc.returncode == EXIT_REFUSED:
        raise KernelCheckerError(said or "kcheck refused to start")
    if proc.returncode != 0:
        reason = f"signal {-proc.returncode}" if proc.returncode < 0 else f"exit status {proc.returncode}"
        raise LeanRunError(f"kcheck died ({reason}){': ' + said if said else ''}")
    out = stdout.decode(errors="replace").splitlines()
    ready = out[0].split() if out else []
    if len(ready) != 3 or ready[0] != "ready":
        raise LeanRunError(f"kcheck did not say it was ready: {shown(out[0] if out else '')}")
    if ready[1] != githash:
        raise KernelCheckerError(f"kcheck runs Lean {shown(ready[1], 12)}, this run uses {githash[:12]}")
    answers = out[1:]
    names = [line.split(" ", 1)[0] for line in lines]
    if len(answers) != len(lines) or any(a.split(" ", 1)[0] != n for a, n in zip(answers, names)):
        raise LeanRunError(f"kcheck answered {len(answers)} lines to {len(lines)} statements, or out of turn")
    bad = next((a for a in answers if not VERDICT.fullmatch(a.split(" ", 1)[1] if " " in a else "")), None)
    if bad is not None or not stdout.endswith(b"\n"):
        raise LeanRunError(f"kcheck answered outside its protocol: {shown(bad if bad is not None else out[-1], 80)}")
    return answers


def read_answer(statement: KernelStatement, said: str, atoms: Sequence[str]) -> Answer:
    """The answer to one statement from kcheck's line about it: certified only when the kernel
    added the theorem and Lean's rendering of its type is the question's equation.

    A rendering that is, character for character, ``kernel_type_text`` of the question's trees
    is that equation without being parsed again (``parse_kernel_type`` reads that text as exactly
    those binders and trees: ``tests/test_kernel_checker.py`` holds the two to it); any other
    rendering is parsed, and certified only when it reads as the same equation."""
    _, verdict, rest = (said.split(" ", 2) + [""])[:3]
    if verdict == "ok":
        if rest == kernel_type_text(statement, atoms):
            return Complete()
        try:
            binders, lhs, rhs = parse_kernel_type(rest, atoms)
        except InferredTypeError as e:
            return Rejected("type_readback", f"cannot read the kernel's type ({e}): {rest[:120]}")
        if (tuple(binders), lhs, rhs) != (statement.binders, statement.lhs, statement.rhs):
            return Rejected("type_readback", f"the kernel checked another statement: {rest[:120]}")
        return Complete()
    if verdict == "rejected":
        kind, _, message = rest.partition(": ")
        return Rejected(kind, message or f"the kernel rejected the theorem ({kind})")
    return Rejected("parse_error", f"kcheck could not read the statement ({verdict} {rest})".strip())


def answer_kernel_batch(lean: LeanInstall, core: CoreLibrary, atoms: Sequence[str], limits: LeanLimits,
                        items: Sequence[tuple[int, Question]], retries: int,
                        failed: Callable[[str, int], Exception]) -> tuple[list[tuple[int, Answer]], int, float]:
    """Answer ``(index, Certify question)`` pairs with kcheck: (answers, processes, seconds).
    ``failed(message, index)`` makes the exception for kcheck failing on one question alone."""
    binary = prepare(lean, core, limits)
    runs = [0, 0.0]

    def run(batch: list[tuple[int, KernelStatement]]) -> list[str]:
        return with_retries(lambda: run_kcheck(binary, core, [st.line for _, st in batch], limits, lean.githash),
                            retries, runs)

    def answer(batch: list[tuple[int, KernelStatement]]) -> list[tuple[int, Answer]]:
        try:
            said = run(batch)
        except LeanRunError as e:
            if len(batch) > 1:
                mid = len(batch) // 2
                return answer(batch[:mid]) + answer(batch[mid:])
            raise failed(f"kcheck failed on certify {batch[0][0]}: {e}", batch[0][0]) from e
        return [(index, read_answer(st, line, atoms)) for (index, st), line in zip(batch, said)]

    statements = [(index, kernel_statement(q, f"q{index}", atoms)) for index, q in items]
    answers = answer(statements) if statements else []
    return answers, runs[0], runs[1]

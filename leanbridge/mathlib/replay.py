"""Lean's verdicts on probe tactics, by replaying each proof in LeanDojo.

For each proof a ``lean_dojo.Dojo`` opens the theorem in the traced Mathlib with the proof
removed; the gold tactics are run one after another from the initial state, and at each step
every probe is run on the state before the step (LeanDojo's states are values: running a probe
does not move the proof on). What Lean answers becomes an answer of ``leanbridge.verdicts``, as
every other question's does:

- ``TacticState`` -> ``Accepted``, with its number of goals left;
- ``ProofFinished`` -> ``Complete``;
- ``LeanError`` -> ``Rejected``, the class read from Lean's message by
  ``leanbridge.errorclass.classify_error`` (the chain probes' classifier);
- ``ProofGivenUp`` -> ``Rejected`` of class ``given_up`` (LeanDojo's answer to ``sorry``/``admit``).

A time-out or a crash is no answer: the probe's outcome is the exception (``LeanTimeout``,
``LeanRunError``), kept in its place. The Lean process is then busy or dead, so the theorem is
opened again and the gold prefix replayed before the next probe. The probe records keep a
time-out as ``rejected:timeout`` and leave a crashed probe out (``probe_record``).

A proof counts only when Lean confirms it at every step: each gold tactic but the last leaves
goals, the last completes the proof. ``lean_dojo`` is imported here and nowhere else, and only
when a replayer is made; where it is missing or cannot reach a traced Mathlib the replayer
raises ``ReplayUnavailable`` with one line saying what is missing and how to provide it.
"""
from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from dataclasses import dataclass, field

from leanbridge.errorclass import classify_error
from leanbridge.mathlib.benchmark import BenchTheorem
from leanbridge.mathlib.probes import Probe
from leanbridge.runner import LeanRunError, LeanTimeout
from leanbridge.verdicts import Accepted, Answer, Complete, Rejected, label

SETUP = "see README, 'Mathlib probes'"


class ReplayUnavailable(Exception):
    """This machine cannot replay Mathlib proofs. The message is one line: what is missing, and
    how to provide it."""


@dataclass(frozen=True)
class ReplayConfig:
    timeout_s: int = 120  # LeanDojo's limit on one interaction (opening the theorem, or one tactic), seconds
    repo: str | None = None  # open theorems in this repository (a local clone at the benchmark's commit)
    #                          instead of the benchmark's GitHub URL, which LeanDojo resolves through GitHub's API
    max_reopen: int = 3  # times one proof may be reopened after time-outs or crashes before it is given up
    unavailable_after: int = 3  # theorems in a row that cannot be opened, before any could, mean no replay here


# What one probe's replay gives: Lean's answer (``leanbridge.verdicts``), or the exception that
# stopped Lean answering: ``LeanTimeout`` (the records keep it as ``rejected:timeout``) or
# another ``LeanRunError``, a crash (the records leave the probe out).
Outcome = Answer | LeanRunError
TIMEOUT = "rejected:timeout"  # how a probe record stores a time-out


def probe_label(outcome: Outcome) -> str | None:
    """The verdict a probe record stores: Lean's answer's ``label``, ``rejected:timeout`` for a
    time-out; None for a crash, whose probe is left out."""
    if isinstance(outcome, LeanTimeout):
        return TIMEOUT
    if isinstance(outcome, LeanRunError):
        return None
    return label(outcome)


def probe_record(probe: Probe, outcome: Outcome) -> list:
    """The probe record of an outcome that is not a crash: [kind, text, verdict], and the goals
    left when Lean accepted the tactic."""
    out = [probe.kind, probe.text, probe_label(outcome)]
    if isinstance(outcome, Accepted):
        out.append(outcome.goals_left)
    return out


@dataclass(frozen=True)
class ProofReplay:
    confirmed: bool  # Lean confirmed every gold step
    start: str  # the initial state as LeanDojo printed it
    verdicts: list[list[Outcome]] = field(default_factory=list)  # per step, per probe
    reason: str = ""  # why the proof is not confirmed
    reopened: int = 0


def load_lean_dojo():
    """The ``lean_dojo`` module, with its logging silenced unless VERBOSE is set."""
    try:
        import lean_dojo
    except ImportError as e:
        what = "lean_dojo is not installed" if e.name == "lean_dojo" else f"lean_dojo cannot be imported ({e})"
        raise ReplayUnavailable(f"{what}: pip install -e '.[mathlib]' (lean-dojo==4.20.0); {SETUP}") from None
    except (subprocess.CalledProcessError, AssertionError, OSError) as e:
        # lean_dojo checks `git --version` when imported
        raise ReplayUnavailable(f"lean_dojo cannot start: {str(e).strip() or type(e).__name__} "
                                f"(it needs git >= 2.25 on PATH); {SETUP}") from None
    if "VERBOSE" not in os.environ and "DEBUG" not in os.environ:
        from loguru import logger
        logger.disable("lean_dojo")
    return lean_dojo


def verdict_of(result, ld) -> Answer:
    """Lean's answer in one ``run_tac`` result of the ``lean_dojo`` module ``ld``."""
    if isinstance(result, ld.TacticState):
        return Accepted(goals_left=result.num_goals)
    if isinstance(result, ld.ProofFinished):
        return Complete()
    if isinstance(result, ld.LeanError):
        return Rejected(classify_error(result.error), result.error)
    if isinstance(result, ld.ProofGivenUp):
        return Rejected("given_up", "")
    raise TypeError(f"LeanDojo returned {type(result).__name__}, not a tactic result")


class _Unconfirmed(Exception):
    pass


class _Walk:
    """One proof's Dojo sessions: the current one, and the state before a step reached by the
    gold tactics in a fresh session after a time-out or a crash."""

    def __init__(self, open_session: Callable[[], AbstractContextManager], ld, golds: Sequence[str]) -> None:
        self.open_session, self.ld, self.golds = open_session, ld, golds
        self.sessions: list[AbstractContextManager] = []
        self.number = 0  # which session the current state belongs to
        self.dojo = None

    def close(self) -> None:
        while self.sessions:
            self.sessions.pop().__exit__(None, None, None)

    def open_at(self, t: int):
        """A fresh session and the state before step t, reached by the gold tactics."""
        self.close()
        session = self.open_session()
        self.dojo, state = session.__enter__()
        self.sessions.append(session)
        self.number += 1
        for s in range(t):
            state = self.gold(state, s)
            if not isinstance(state, self.ld.TacticState):
                raise _Unconfirmed(f"step {s}: the gold tactic no longer leaves goals after a reopen")
        return state

    def gold(self, state, s: int):
        """The result of step s's gold tactic on ``state``."""
        try:
            return self.dojo.run_tac(state, self.golds[s])
        except (self.ld.DojoTacticTimeoutError, self.ld.DojoCrashError, AssertionError) as e:
            raise _Unconfirmed(f"step {s}: the gold tactic failed on a replay ({type(e).__name__})") from None

    def reopen_at(self, t: int):
        try:
            return self.open_at(t)
        except _Unconfirmed:
            raise
        except Exception as e:  # the theorem opened before: whatever stops it now ends this proof only
            raise _Unconfirmed(f"step {t}: reopening failed: {type(e).__name__}: {_first_line(e)}") from None


def replay_proof(open_session: Callable[[], AbstractContextManager], ld, golds: Sequence[str],
                 probes: Sequence[Sequence[Probe]], max_reopen: int = 3) -> ProofReplay:
    """Replay one proof. ``open_session()`` is a context manager giving ``(dojo, initial state)``
    (a ``lean_dojo.Dojo``); ``ld`` supplies the result and exception types. An error opening the
    theorem the first time propagates; any later failure makes the proof unconfirmed."""
    walk = _Walk(open_session, ld, golds)
    reopened = 0
    verdicts: list[list[Outcome]] = []
    try:
        state = walk.open_at(0)
        start = state.pp
        for t, step in enumerate(probes):
            row: list[Outcome] = []
            gold_result, gold_session = None, 0
            for probe in step:
                result, outcome = _try_probe(walk.dojo, state, probe, ld, t)
                if isinstance(outcome, LeanRunError) and not isinstance(outcome, _Unparsed):
                    # the Lean process is busy or dead: reopen, walk back to this step
                    reopened += 1
                    if reopened > max_reopen:
                        raise _Unconfirmed(f"step {t}: more than {max_reopen} time-outs or crashes") from None
                    state = walk.reopen_at(t)
                row.append(outcome)
                if probe.kind == "gold":
                    gold_result, gold_session = result, walk.number
            verdicts.append(row)
            if isinstance(gold_result, ld.TacticState) and gold_session != walk.number:
                gold_result = walk.gold(state, t)  # its state lived in a closed session
            state = _next_state(gold_result, t, t == len(probes) - 1, ld)
        return ProofReplay(True, start, verdicts, reopened=reopened)
    except _Unconfirmed as e:
        return ProofReplay(False, "", verdicts, reason=str(e), reopened=reopened)
    finally:
        walk.close()


class _Unparsed(LeanRunError):
    """LeanDojo answered but could not parse the goals it printed: no verdict, the session is still usable."""


def _try_probe(dojo, state, probe: Probe, ld, t: int) -> tuple[object, Outcome]:
    """(LeanDojo's result or None, the outcome) of one probe on the state before step t."""
    try:
        result = dojo.run_tac(state, probe.text)
        return result, verdict_of(result, ld)
    except AssertionError:
        return None, _Unparsed(f"step {t}: LeanDojo could not read its own answer to {probe.text!r}")
    except ld.DojoTacticTimeoutError:
        return None, LeanTimeout(f"step {t}: {probe.text!r} timed out")
    except ld.DojoCrashError as e:
        return None, LeanRunError(f"step {t}: Lean crashed on {probe.text!r}: {_first_line(e)}")


def _next_state(gold_result, t: int, last: bool, ld):
    """The state step t's gold tactic leads to; _Unconfirmed unless the last one completes the
    proof and every other leaves goals."""
    if last and not isinstance(gold_result, ld.ProofFinished):
        raise _Unconfirmed(f"step {t}: the last gold tactic does not complete the proof "
                           f"({_describe(gold_result, ld)})")
    if not last and not isinstance(gold_result, ld.TacticState):
        raise _Unconfirmed(f"step {t}: the gold tactic leaves no state to go on from "
                           f"({_describe(gold_result, ld)})")
    return gold_result


def _describe(result, ld) -> str:
    if result is None:
        return "timed out or crashed"
    answer = verdict_of(result, ld)
    message = answer.message if isinstance(answer, Rejected) else ""
    return label(answer) + (f": {message.splitlines()[0][:120]}" if message else "")


class DojoReplayer:
    """Replays proofs of one traced repository (the benchmark's Mathlib commit) with LeanDojo.

    Making one checks what can be checked before any proof is opened: ``lean_dojo`` imports,
    ``lake`` is on PATH, the repository resolves, and LeanDojo's cache holds (or its remote cache
    provides) the traced repository. If the first ``unavailable_after`` theorems all fail to open,
    that is ``ReplayUnavailable`` too; otherwise a theorem that cannot be opened is a proof dropped."""

    def __init__(self, url: str, commit: str, config: ReplayConfig = ReplayConfig(),
                 progress: Callable[[str, int, int], None] | None = None) -> None:
        self.config = config
        self.ld = ld = load_lean_dojo()
        self.opened = 0  # theorems opened so far
        self.failed_before_first = 0  # theorems that could not be opened before the first that could
        if shutil.which("lake") is None:
            raise ReplayUnavailable("no `lake` on PATH: LeanDojo runs the traced Mathlib through lake; install elan "
                                    f"with the traced commit's toolchain; {SETUP}")
        source = config.repo or url
        try:
            self.repo = ld.LeanGitRepo(source, commit)
        except OSError as e:  # requests' ConnectionError and urllib's URLError are OSErrors
            # GitHub's API for a GitHub URL; LeanDojo's remote cache unless DISABLE_REMOTE_CACHE is set
            raise ReplayUnavailable(
                f"LeanDojo needs the network to open {source} ({type(e).__name__}): with no network, set "
                f"DISABLE_REMOTE_CACHE=1, CACHE_DIR to a directory holding a traced Mathlib, and pass --repo a local "
                f"clone of {url} at {commit[:12]}; {SETUP}") from None
        except Exception as e:  # GitHub API refusals, bad paths: LeanDojo raises what its clients raise
            raise ReplayUnavailable(f"LeanDojo cannot open the repository {source}@{commit[:12]}: "
                                    f"{type(e).__name__}: {_first_line(e)}; {SETUP}") from None
        cache_dir = ld.constants.CACHE_DIR
        if progress is not None:  # a first run may download the traced repository here (gigabytes)
            progress(f"LeanDojo: the traced repository in {cache_dir}", 0, 1)
        try:
            available = ld.is_available_in_cache(self.repo)
        except OSError as e:
            raise ReplayUnavailable(
                f"no traced {source}@{commit[:12]} in LeanDojo's cache {cache_dir} and its remote cache is unreachable "
                f"({type(e).__name__}): set DISABLE_REMOTE_CACHE=1 and CACHE_DIR to a directory holding a traced "
                f"Mathlib; {SETUP}") from None
        except Exception as e:  # e.g. a cache directory without the repository LeanDojo expects in it
            raise ReplayUnavailable(f"LeanDojo's cache {cache_dir} cannot give {source}@{commit[:12]}: "
                                    f"{type(e).__name__}: {_first_line(e)}; {SETUP}") from None
        if not available:
            raise ReplayUnavailable(
                f"no traced {source}@{commit[:12]} in LeanDojo's cache {cache_dir}: set CACHE_DIR to a directory "
                f"holding one (tracing Mathlib takes hours; {SETUP})")

    def _session(self, thm: BenchTheorem) -> AbstractContextManager:
        theorem = self.ld.Theorem(self.repo, thm.file_path, thm.full_name)
        return self.ld.Dojo(theorem, timeout=self.config.timeout_s)

    def replay(self, thm: BenchTheorem, probes: Sequence[Sequence[Probe]]) -> ProofReplay:
        ld = self.ld
        try:
            result = replay_proof(lambda: self._session(thm), ld, [t.tactic for t in thm.tactics], probes,
                                  self.config.max_reopen)
        except (ld.DojoInitError, ld.DojoCrashError, ld.DojoTacticTimeoutError, subprocess.CalledProcessError,
                OSError, AssertionError) as e:
            why = f"{type(e).__name__}: {_first_line(e)}"
            if self.opened == 0:
                # one theorem may be one LeanDojo cannot handle (a `where` clause, a prelude file);
                # several in a row, before any opened, is this machine
                self.failed_before_first += 1
                if self.failed_before_first >= self.config.unavailable_after:
                    raise ReplayUnavailable(
                        f"LeanDojo could not open any of the first {self.failed_before_first} theorems (the last, "
                        f"{thm.full_name} in {thm.file_path}: {why}); {SETUP}") from None
            return ProofReplay(False, "", reason=f"cannot open: {why}")
        self.opened += 1
        return result


def _first_line(e: BaseException) -> str:
    text = str(e).strip()
    return text.splitlines()[0][:200] if text else type(e).__name__


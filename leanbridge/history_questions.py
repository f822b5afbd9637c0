"""Asking Lean the questions of a dataset of histories (programs, a domain of one's own) and
re-reading such a dataset against its manifest.

``Questions`` gathers the distinct questions by certificate-store key, each with the first place it
is used, so that a rejection names a chain and a step. ``ask_missing`` asks Lean the questions the
store does not hold as certified for this Lean build and library and records every answer;
``ask_afresh`` asks them all, trusting nothing stored (a dataset's verification). ``reread`` reads a
dataset's files strictly, each record checked, and holds counts, hashes and totals against the
manifest.
"""
from __future__ import annotations

import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from chains.manifest import DatasetError, check_count
from chains.records import Record, Words
from chains.writer import file_sha256
from leanbridge.asker import AskConfig
from leanbridge.certificates import PROGRESS_EVERY, CertificationFailed, Progress, quiet
from leanbridge.discovery import LeanInstall
from leanbridge.process import LeanLimits
from leanbridge.programs import Executor, ProgramQuestion, check_programs
from leanbridge.store import CertificateStore
from leanbridge.verdicts import Answer, Complete, Rejected


@dataclass
class Questions:
    """Distinct questions by store key, with the first place each is used."""

    library_hash: str
    githash: str
    by_key: dict[str, ProgramQuestion] = field(default_factory=dict)
    first_use: dict[str, str] = field(default_factory=dict)
    claims: dict[str, str] = field(default_factory=dict)  # key -> what it claims, in the domain's words

    def add(self, question: ProgramQuestion, where: str, claim: Callable[[], str] | None = None) -> str:
        """The question's key; where it is first used and ``claim()`` (what it claims, for the
        message naming it when Lean rejects it; called only for a question not yet added)."""
        key = question.key(self.library_hash, self.githash)
        if key not in self.by_key:
            self.by_key[key] = question
            self.first_use[key] = where
            if claim is not None:
                self.claims[key] = claim()
        return key

    def rejected(self, key: str, answer: Answer) -> str:
        """The message for a question Lean did not certify: its first use, what it claims, Lean's reason."""
        return f"{self.first_use[key]}: Lean rejected {self.claims.get(key, 'the statement')} ({reason(answer)})"


def ask_missing(questions: Questions, keys: list[str], store: CertificateStore, bridge: AskConfig, lean, library,
                progress: Progress, executor: Executor, explain: Callable[[str, Answer], str] | None = None
                ) -> tuple[int, int]:
    """Ask Lean every key the store does not hold as certified, through ``executor``; (statements
    asked, processes). CertificationFailed at the first rejected statement, its message
    ``explain(key, answer)`` (by default ``Questions.rejected``: its first use, its claim, Lean's reason)."""
    held = store.certified(keys) if keys else set()
    missing = [k for k in dict.fromkeys(keys) if k not in held]
    processes = 0
    done = 0
    batch_size = 512 * executor.slots  # questions between progress reports and store commits
    if missing:  # nothing to ask: no phase (a stream's blocks would each open one)
        progress("certify", 0, len(missing))
    for i in range(0, len(missing), batch_size):
        batch = missing[i:i + batch_size]
        started = time.perf_counter()
        answers, used = check_programs([questions.by_key[k] for k in batch], lean, library, bridge.limits,
                                       executor=executor)
        processes += used
        share = (time.perf_counter() - started) / max(1, len(batch))
        store.record((k, questions.by_key[k].kind, questions.by_key[k].text, a, share) for k, a in zip(batch, answers))
        for k, a in zip(batch, answers):
            if not isinstance(a, Complete):
                raise CertificationFailed(explain(k, a) if explain is not None else questions.rejected(k, a))
        done += len(batch)
        progress("certify", done, len(missing))
    return len(missing), processes


def reason(answer: Answer) -> str:
    return f"{answer.error_class}: {answer.message}" if isinstance(answer, Rejected) else "not certified"


def cut(text: str, limit: int = 60) -> str:
    """``text`` quoted for a one-line message: whitespace runs collapsed and, past ``limit``
    characters, its middle left out."""
    text = " ".join(str(text).split())
    if len(text) > limit:
        half = (limit - 1) // 2
        text = f"{text[:half]}…{text[-half:]}"
    return repr(text)


def step_claim(event: str, before: str, after: str, noun: str = "event") -> str:
    """What a step claims, as a rejection names it: the event (a ``noun``), the state before it and
    the claimed state after it, each as the domain writes it."""
    return f"{noun} {cut(event)} from state {cut(before)} to the claimed state {cut(after)}"


def reread(directory: Path, manifest: dict, where: str, read: Callable[[Path], Iterable[Record]],
           check: Callable[[str, str, Record], int], words: Words, progress: Progress = quiet) -> tuple[int, int]:
    """Every file ``manifest`` lists, read strictly by ``read`` and each record checked by
    ``check(file name, where the record is, record)`` (which returns its equivalences counted), then
    the file's count and hash and the dataset's totals held against the manifest: (steps,
    equivalences). DatasetError naming the first fault (``where`` names the manifest). ``progress``
    hears of every ``PROGRESS_EVERY`` records, a phase a file ("replay train.jsonl")."""
    files = manifest.get("files")
    if not isinstance(files, dict) or "train.jsonl" not in files:
        raise DatasetError(f"{where}: lists no train.jsonl")
    steps = equivalences = 0
    for name, meta in sorted(files.items()):
        path = Path(directory) / name
        if not path.is_file():
            raise DatasetError(f"{path}: listed in the manifest but missing")
        count = 0
        expected = meta.get("chains") if isinstance(meta, dict) and isinstance(meta.get("chains"), int) else 0
        for number, record in enumerate(read(path), 1):
            if count % PROGRESS_EVERY == 0:
                progress(f"replay {name}", count, expected)
            count += 1
            equivalences += check(name, f"{name} line {number} {words.history} {record.id}", record)
            steps += len(record.history.events) + sum(len(m.events) for m in record.partners)
        progress(f"replay {name}", count, count)
        check_count(path, count, meta.get("chains"), words.history)
        if file_sha256(path) != meta.get("sha256"):
            raise DatasetError(f"{path}: contents differ from the manifest's hash (edited after certification)")
    if steps != manifest.get("steps") or equivalences != manifest.get("equivalences"):
        raise DatasetError(f"{where}: the files hold {steps} {words.events} and {equivalences} equivalences, the "
                           f"manifest says {manifest.get('steps')} and {manifest.get('equivalences')}")
    return steps, equivalences


def ask_afresh(questions: Questions, lean: LeanInstall, library, limits: LeanLimits, executor: Executor,
               progress: Progress, explain: Callable[[str, Answer], str] | None = None) -> dict:
    """Every distinct question asked of Lean, nothing taken from the store: CertificationFailed at the
    first it does not certify, its message ``explain(key, answer)`` (by default ``Questions.rejected``);
    else what was asked and how long it took."""
    keys = list(questions.by_key)
    started = time.perf_counter()
    processes = 0
    batch_size = 512 * executor.slots  # questions between progress reports, as ask_missing asks them
    progress("verify", 0, len(keys))
    for i in range(0, len(keys), batch_size):
        batch = keys[i:i + batch_size]
        answers, used = check_programs([questions.by_key[k] for k in batch], lean, library, limits, executor=executor)
        processes += used
        for key, answer in zip(batch, answers):
            if not isinstance(answer, Complete):
                explained = explain(key, answer) if explain is not None else questions.rejected(key, answer)
                raise CertificationFailed(explained)
        progress("verify", i + len(batch), len(keys))
    return {"distinct_statements": len(keys), "lean_processes": processes,
            "seconds": round(time.perf_counter() - started, 3),
            "lean": {"version": lean.version, "githash": lean.githash}, "library_hash": library.library_hash}

"""A Mathlib probe dataset: select proofs, build their probes, have Lean judge them, write records.

The output has the chain probes' format, so ``train-oracle --data`` reads either: a directory
with ``manifest.json``, ``train.jsonl`` and ``test.jsonl``, one proof a line::

    {"id": "test-00003", "full_name": "Nat.succ_le_succ_iff", "file_path": "Mathlib/Data/Nat/Basic.lean",
     "start": "<initial state>", "events": ["<gold tactic>", ...], "novel_premise": true,
     "premises": [["Nat.succ_le_iff"], []],
     "probes": [[["gold", "rw [h]", "accepted", 1], ["swap", "rw [Nat.foo]", "rejected:pattern_not_found"], ...], ...]}

``probes`` has one list per step t (0 .. steps - 1), each probe ``[kind, text, verdict]`` plus
the goals left when the verdict is ``accepted``. Only proofs Lean confirms at every step are
written; the others are counted in the manifest. A probe whose replay crashed Lean is left out.
"""
from __future__ import annotations

import hashlib
import json
import os
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path

from chains.manifest import MATHLIB_FORMAT, DatasetError
from chains.writer import DatasetWriter, file_sha256
from leanbridge.errorclass import ERROR_CLASSES, headline
from leanbridge.mathlib.benchmark import BenchmarkError, BenchTheorem, count_and_read_theorems, iter_corpus, read_metadata
from leanbridge.mathlib.probes import PROBE_KINDS, PremiseIndex, Probe, proof_probes
from leanbridge.mathlib.replay import (TIMEOUT, DojoReplayer, Outcome, ProofReplay, ReplayConfig, probe_label,
                                       probe_record)
from leanbridge.mathlib.selection import Selection, SelectionSpec, in_dirs, select
from leanbridge.runner import LeanRunError, LeanTimeout
from leanbridge.verdicts import Accepted, Complete, Rejected

SPLIT_NAMES = ("train", "test")
FORMAT = MATHLIB_FORMAT

Progress = Callable[[str, int, int], None]


def _no_progress(phase: str, done: int, total: int) -> None:
    pass


@dataclass(frozen=True)
class Plan:
    """Everything decided before Lean is asked: the proofs and their probes."""

    benchmark: Path
    split: str
    spec: SelectionSpec
    metadata: dict
    selection: Selection
    probes: dict[str, list[list[Probe]]]  # theorem key -> probes per step
    corpus_premises: int

    def jobs(self, part: str) -> list[tuple[BenchTheorem, list[list[Probe]]]]:
        return [(thm, self.probes[thm.key]) for thm in self.selection.split(part)]

    def probe_counts(self) -> dict:
        by_part = {}
        for part in SPLIT_NAMES:
            kinds = Counter(p.kind for thm in self.selection.split(part) for step in self.probes[thm.key] for p in step)
            by_part[part] = {
                "proofs": len(self.selection.split(part)),
                "steps": sum(len(t.tactics) for t in self.selection.split(part)),
                "probes": sum(kinds.values()),
                "by_kind": {k: kinds.get(k, 0) for k in PROBE_KINDS},
            }
        return by_part


def plan(benchmark: Path, split: str, spec: SelectionSpec, progress: Progress = _no_progress) -> Plan:
    """Read the benchmark, select and split the proofs, and build every probe."""
    benchmark = Path(benchmark)
    metadata = read_metadata(benchmark)
    progress("reading theorems", 0, 1)
    theorems, total = count_and_read_theorems(benchmark, split, keep=lambda path: in_dirs(path, spec.dirs))
    selection = select(theorems, spec, total)
    progress("reading the premise corpus", 0, 1)
    index = PremiseIndex.build(iter_corpus(benchmark))
    probes: dict[str, list[list[Probe]]] = {}
    total = len(selection.train) + len(selection.test)
    for part in SPLIT_NAMES:
        pool = selection.split(part)
        for thm in pool:
            probes[thm.key] = proof_probes(thm, pool, index, spec.seed)
            progress("building probes", len(probes), total)
    return Plan(benchmark, split, spec, metadata, selection, probes, len(index))


def dry_run_report(p: Plan) -> dict:
    """What a replay would ask Lean, counted: no verdicts."""
    return {
        "benchmark": str(p.benchmark), "split": p.split, "dirs": list(p.spec.dirs),
        "from_repo": p.metadata.get("from_repo"),
        "selection": p.selection.counts, "corpus_premises": p.corpus_premises,
        "probes": p.probe_counts(),
    }


def check_writable(out: Path) -> None:
    """Fail before any work if ``out`` cannot be written, creating nothing."""
    parent = Path(out).resolve().parent
    while not parent.exists():
        parent = parent.parent
    if not os.access(parent, os.W_OK):
        raise DatasetError(f"cannot write to {out}: {parent} is not writable")


def record(thm: BenchTheorem, replay, probes: list[list[Probe]], novel: bool, rid: str) -> dict:
    return {
        "id": rid, "full_name": thm.full_name, "file_path": thm.file_path, "start": replay.start,
        "events": [t.tactic for t in thm.tactics], "novel_premise": novel,
        "premises": [[p.full_name for p in t.premises] for t in thm.tactics],
        "probes": [[probe_record(probe, v) for probe, v in zip(step, verdicts) if probe_label(v) is not None]
                   for step, verdicts in zip(probes, replay.verdicts)],
    }


class ReplayJournal:
    """Every replay of a proof that opened, appended as it finishes, so that a killed run (a full
    pilot takes days) resumes where it stopped. One JSON line per replay, keyed by the repository
    commit, the proof, its probes and the time-out: a changed probe or setting is replayed again.
    It lives beside the dataset as a hidden file and is kept after the dataset is written."""

    def __init__(self, path: Path, commit: str, timeout_s: int) -> None:
        self.path, self.commit, self.timeout_s = Path(path), commit, timeout_s
        self.done: dict[str, ProofReplay] = {}
        if self.path.exists():
            with open(self.path, encoding="utf-8") as f:
                for line in f:
                    try:
                        obj = json.loads(line)
                        self.done[obj["key"]] = _replay_from_json(obj["replay"])
                    except (ValueError, KeyError, TypeError):
                        continue  # a line cut short by a kill

    def key(self, thm: BenchTheorem, probes: list[list[Probe]]) -> str:
        text = json.dumps([self.commit, thm.key, self.timeout_s, [[[p.kind, p.text] for p in step] for step in probes]],
                          ensure_ascii=False)
        return hashlib.sha256(text.encode()).hexdigest()

    def get(self, key: str) -> ProofReplay | None:
        return self.done.get(key)

    def add(self, key: str, replay: ProofReplay) -> None:
        self.done[key] = replay
        with open(self.path, "a", encoding="utf-8") as f:
            f.write(json.dumps({"key": key, "replay": _replay_to_json(replay)}, ensure_ascii=False) + "\n")
            f.flush()
            os.fsync(f.fileno())


def _replay_to_json(r: ProofReplay) -> dict:
    return {"confirmed": r.confirmed, "start": r.start, "reason": r.reason, "reopened": r.reopened,
            "verdicts": [[_outcome_to_json(v) for v in row] for row in r.verdicts]}


def _outcome_to_json(outcome: Outcome) -> list | None:
    """A probe's outcome as the journal keeps it: [verdict, goals left or null, the message's
    headline]; null for a crash."""
    verdict = probe_label(outcome)
    if verdict is None:
        return None
    goals = outcome.goals_left if isinstance(outcome, Accepted) else None
    return [verdict, goals, headline(outcome.message if isinstance(outcome, Rejected) else "")[:200]]


def _outcome_from_json(v: list | None) -> Outcome:
    if v is None:
        return LeanRunError("crashed (as the journal recorded)")
    verdict, goals, message = v
    if verdict == "accepted":
        return Accepted(goals_left=goals)
    if verdict == "complete":
        return Complete()
    if verdict == TIMEOUT and not message:
        return LeanTimeout("timed out (as the journal recorded)")
    return Rejected(verdict.removeprefix("rejected:"), message)


def _replay_from_json(obj: dict) -> ProofReplay:
    verdicts = [[_outcome_from_json(v) for v in row] for row in obj["verdicts"]]
    return ProofReplay(bool(obj["confirmed"]), str(obj["start"]), verdicts, str(obj["reason"]), int(obj["reopened"]))


def journal_path(out: Path) -> Path:
    out = Path(out)
    return out.resolve().parent / f".{out.name}.replays.jsonl"


def _drop_kind(reason: str) -> str:
    return "cannot_open" if reason.startswith("cannot open") else "unconfirmed"


@dataclass
class _Tally:
    """What the replays of a plan came to, for its manifest."""

    resumed: int = 0  # replays served by the journal
    novel_confirmed: int = 0  # novel-premise proofs confirmed at every step
    crashed_probes: int = 0  # probes whose replay crashed Lean (left out of the records)
    dropped: Counter = field(default_factory=Counter)  # unconfirmed proofs by why
    dropped_examples: list = field(default_factory=list)  # [name, reason] of the first 20 dropped
    by_kind_verdict: dict[str, Counter] = field(default_factory=lambda: {k: Counter() for k in PROBE_KINDS})
    other_headlines: Counter = field(default_factory=Counter)  # headlines of rejected:other messages

    def drop(self, thm: BenchTheorem, result: ProofReplay) -> None:
        self.dropped[_drop_kind(result.reason)] += 1
        if len(self.dropped_examples) < 20:
            self.dropped_examples.append([thm.full_name, result.reason])

    def count(self, probes: list[list[Probe]], result: ProofReplay) -> None:
        for step, verdicts in zip(probes, result.verdicts):
            for probe, outcome in zip(step, verdicts):
                verdict = probe_label(outcome)
                if verdict is None:
                    self.crashed_probes += 1
                    continue
                self.by_kind_verdict[probe.kind][verdict] += 1
                if verdict == "rejected:other":
                    self.other_headlines[headline(outcome.message)[:100]] += 1


def _replayed(p: Plan, part: str, replayer, journal: ReplayJournal, tally: _Tally,
              progress: Callable[[int], None]) -> list[str]:
    """The record lines of ``part``'s confirmed proofs, each proof from the journal or replayed
    now (and journalled once it opened); ``progress`` is called after each proof."""
    lines: list[str] = []
    for thm, probes in p.jobs(part):
        key = journal.key(thm, probes)
        result = journal.get(key)
        if result is not None:
            tally.resumed += 1
        else:
            result = replayer.replay(thm, probes)
            if not result.reason.startswith("cannot open"):  # it opened: worth keeping
                journal.add(key, result)
        progress(1)
        if not result.confirmed:
            tally.drop(thm, result)
            continue
        rid = f"{part}-{len(lines):05d}"
        novel = thm.key in p.selection.novel
        tally.novel_confirmed += novel
        lines.append(json.dumps(record(thm, result, probes, novel, rid), ensure_ascii=False, sort_keys=True))
        tally.count(probes, result)
    return lines


def replay_plan(p: Plan, replayer, out: Path, progress: Progress = _no_progress) -> dict:
    """Replay every selected proof with ``replayer`` (a ``DojoReplayer``) and write the dataset.
    Nothing is written before a theorem has opened in a Dojo; then each replay goes to the
    journal (``journal_path(out)``) as it finishes, and the dataset directory appears, whole,
    when every split is done. Proofs the journal already holds are not replayed again."""
    check_writable(out)
    journal = ReplayJournal(journal_path(out), repo_of(p.metadata)[1], replayer.config.timeout_s)
    writer: DatasetWriter | None = None
    started = time.time()
    files, counts, tally = {}, {}, _Tally()
    try:
        done, total = 0, len(p.selection.train) + len(p.selection.test)
        for part in SPLIT_NAMES:
            def advance(n: int, part: str = part) -> None:
                nonlocal done
                done += n
                progress(f"replaying in Lean ({part})", done, total)

            lines = _replayed(p, part, replayer, journal, tally, advance)
            if writer is None:
                writer = DatasetWriter(out)
            path = writer.write_lines(f"{part}.jsonl", iter(lines))
            files[f"{part}.jsonl"] = {"sha256": file_sha256(path), "records": len(lines)}
            counts[part] = len(lines)
        manifest = _manifest(p, replayer, tally, files, counts, started)
        writer.commit(manifest)
        return manifest
    except BaseException:
        if writer is not None:
            writer.abort()
        raise


def _manifest(p: Plan, replayer, tally: _Tally, files: dict, counts: dict, started: float) -> dict:
    """The manifest of a replayed plan."""
    verdict_totals = Counter()
    for c in tally.by_kind_verdict.values():
        verdict_totals.update(c)
    return {
        "format": FORMAT, "source": "mathlib",
        "benchmark": {"dir": str(p.benchmark), "split": p.split, "metadata": p.metadata},
        "selection": {**asdict(p.spec), "dirs": list(p.spec.dirs), "counts": p.selection.counts},
        "seed": p.spec.seed,
        "records": counts,
        "novel_premise_confirmed": tally.novel_confirmed,  # the seed's headline set: novel and confirmed at every step
        "dropped": dict(tally.dropped),
        "dropped_examples": tally.dropped_examples,
        "probes": {
            "by_kind": {k: sum(tally.by_kind_verdict[k].values()) for k in PROBE_KINDS},
            "by_verdict": dict(sorted(verdict_totals.items())),
            "by_kind_and_verdict": {k: dict(sorted(tally.by_kind_verdict[k].items())) for k in PROBE_KINDS},
            "crashed": tally.crashed_probes,
        },
        "error_classes": list(ERROR_CLASSES),
        "other_headlines": dict(tally.other_headlines.most_common(20)),
        "lean_dojo": {"version": getattr(replayer.ld, "__version__", None),
                      "timeout_s": replayer.config.timeout_s, "repo": replayer.config.repo},
        "files": files,
        "resumed_from_journal": tally.resumed,
        "seconds": round(time.time() - started, 1),
    }


def repo_of(metadata: dict) -> tuple[str, str]:
    """(url, commit) of the repository the benchmark was traced from."""
    repo = metadata.get("from_repo")
    if not (isinstance(repo, dict) and isinstance(repo.get("url"), str) and isinstance(repo.get("commit"), str)):
        raise BenchmarkError("metadata.json names no from_repo {url, commit}: not a LeanDojo Benchmark 4 directory")
    return repo["url"], repo["commit"]


def certify_mathlib(benchmark: Path, split: str, spec: SelectionSpec, out: Path, config: ReplayConfig,
                    dry_run: bool = False, progress: Progress = _no_progress) -> dict:
    """The ``certify --mathlib`` job. A dry run builds and counts the probes and writes nothing; a
    real run first makes sure LeanDojo can replay here (``ReplayUnavailable`` otherwise, before
    the benchmark is read and with nothing written), then replays and writes ``out``."""
    benchmark = Path(benchmark)
    metadata = read_metadata(benchmark)
    if dry_run:
        return dry_run_report(plan(benchmark, split, spec, progress))
    check_writable(out)
    replayer = DojoReplayer(*repo_of(metadata), config, progress)
    return replay_plan(plan(benchmark, split, spec, progress), replayer, out, progress)

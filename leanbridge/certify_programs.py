"""Build and verify a certified programs dataset.

``certify_programs`` samples the programs of a ``ProgramsSpec`` (``chains.programs.dataset``),
states what Lean must certify, asks Lean for every statement the certificate store does not
already hold as certified for this Lean build and library, and writes the dataset only when every
statement is certified. Two kinds of statements:

- a *trace*: from the state before them, the state after each of up to ``TRACE_CHUNK``
  consecutive statements of a program; every statement's certificate is the trace that covers it;
- an *equivalence* of a partner with its program: on the Bits machine for every start state (all
  256), on the Arithmetic machine from the zero state the programs start at. The manifest's
  ``certificate_forms`` says which.

The manifest's ``certificate`` names the route that certified every statement, ``trace`` (a dataset of
rewrite chains names its ``checker`` instead).

``verify_programs`` re-reads a dataset strictly and re-checks every statement in Lean, trusting
nothing stored. ``certify_traces`` certifies the steps of any histories (``Trace``) by the same
trace questions, through the same store: the streamed evaluation's programs (``evaluate-tracker``).

Lean is asked through ``programs_executor``: ``AskConfig.jobs`` processes here, or with
``AskConfig.cluster`` tasks on the nodes of a Ray cluster (``leanbridge.cluster``), whose answers
are taken only from nodes with this run's Lean and programs library; the driver alone writes the
certificate store, so a dataset certified on a cluster is the one certified here, byte for byte.
"""
from __future__ import annotations

import json
import time
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from chains.manifest import DatasetError, manifest_path, read_manifest_json
from chains.programs.dataset import HeldPrograms, ProgramsSpec, Sample, choose, sample_split, start_state, trace
from chains.programs.domain import PROGRAM_WORDS, ProgramsDomain
from chains.programs.files import PROGRAMS_FORMAT, machine_of, read_programs
from chains.programs.syntax import VARIABLES, Machine, State, Statement, state_text
from chains.records import History, Record, history_fields
from chains.version import package_version
from chains.writer import DatasetWriter, file_sha256
from leanbridge.asker import AskConfig, cluster_module
from leanbridge.certificates import Progress, cert_id, quiet
from leanbridge.discovery import PROBE_TIMEOUT_S, LeanInstall, find_lean
from leanbridge.history_questions import Questions, ask_afresh, ask_missing, reason, reread, step_claim
from leanbridge.paths import portable_path
from leanbridge.programs import (TRACE_CHUNK, EquivalenceQuestion, Executor, LocalExecutor, ProgramsLibrary,
                                 StepQuestion, TraceQuestion, build_programs, check_programs, equivalence_form,
                                 trace_questions)
from leanbridge.store import CertificateStore
from leanbridge.verdicts import Answer, Complete

CERTIFICATE = "trace"  # the manifest's certificate route: a statement is certified by the trace covering it


def _trace_keys(questions: Questions, machine: Machine, start: State, program: tuple[Statement, ...],
                where: str, firsts: dict[str, tuple[str, int]] | None = None) -> tuple[list[str], State]:
    """One certificate key a statement (the trace question covering it), and the end state; with
    ``firsts``, each new key's program (``where``) and the number of its first statement there."""
    states = trace(program, start, machine.values)
    keys: list[str] = []
    for first, question in zip(range(0, len(program), TRACE_CHUNK), trace_questions(machine, start, program, states)):
        key = questions.add(question, f"{where} step {first} (from 0)")
        if firsts is not None:
            firsts.setdefault(key, (where, first))
        keys += [key] * len(question.statements)
    return keys, (states[-1] if states else start)


def _equivalence_claim() -> str:
    """What a partner's equivalence claims, as a rejection names it."""
    return "its equivalence with its program"


class _Explainer:
    """The message naming a rejected question of a programs dataset: for a trace, the first of its
    statements that Lean rejects alone (each asked again, one at a time), counted from 0."""

    def __init__(self, questions: Questions, machine: Machine, lean, library, bridge: AskConfig,
                 executor: Executor) -> None:
        self.questions, self.machine, self.lean, self.library = questions, machine, lean, library
        self.bridge, self.executor = bridge, executor
        self.firsts: dict[str, tuple[str, int]] = {}  # a trace's key -> its program and first statement's number

    def __call__(self, key: str, answer: Answer) -> str:
        question = self.questions.by_key[key]
        if not isinstance(question, TraceQuestion) or key not in self.firsts:
            return self.questions.rejected(key, answer)
        where, first = self.firsts[key]
        return _rejected_step(self.machine, question, where, first, self.lean, self.library, self.bridge, answer,
                              self.executor, " (from 0)")


def _line(questions: Questions, machine: Machine, chain_id: str, sample: Sample, where: str,
          equivalence_start: State | None, firsts: dict[str, tuple[str, int]]) -> tuple[str, int]:
    """A program's JSON line; the questions it needs added to ``questions``; its statements counted."""
    start, domain = start_state(), ProgramsDomain(machine)
    keys, end = _trace_keys(questions, machine, start, sample.program, where, firsts)
    partners = []
    steps = len(sample.program)
    for p, mate in enumerate(sample.partners):
        here = f"{where} partner {p}"
        mate_keys, mate_end = _trace_keys(questions, machine, start, mate, here, firsts)
        if mate_end != end:
            raise AssertionError(f"{here}: the partner's sampler made an inequivalent program")
        equivalence = questions.add(EquivalenceQuestion(machine, sample.program, mate, equivalence_start), here,
                                    _equivalence_claim)
        partners.append(f'{{{history_fields(domain, start, mate, end, [cert_id(k) for k in mate_keys])},'
                        f'"equivalence":{json.dumps(cert_id(equivalence))}}}')
        steps += len(mate)
    fields = history_fields(domain, start, sample.program, end, [cert_id(k) for k in keys])
    line = f'{{"id":{json.dumps(chain_id)},{fields},"partners":[{",".join(partners)}]}}'
    return line, steps


def programs_executor(lean: LeanInstall, library: ProgramsLibrary, bridge: AskConfig) -> Executor:
    """Where program statements are answered: ``bridge.jobs`` Lean processes here, or tasks on the
    Ray cluster ``bridge.cluster`` (Ray is imported only then)."""
    if bridge.cluster is None:
        return LocalExecutor(lean, library, bridge.jobs)
    return cluster_module().RayProgramsExecutor(bridge.cluster, lean, library)


@dataclass(frozen=True)
class Trace:
    """Consecutive steps of one history to certify: from ``start``, ``statements`` run in turn pass
    through ``states`` (the claimed state after each); ``where`` names the history and ``first`` the
    number of its first step, for the messages ("chain 3", 65: "chain 3 step 65")."""

    start: State
    statements: tuple[Statement, ...]
    states: tuple[State, ...]
    where: str
    first: int


@dataclass(frozen=True)
class TracesCertified:
    """What ``certify_traces`` did: its distinct trace questions, how many the store answered and how
    many Lean was asked, the Lean processes, and each question's store key with the steps it covers."""

    distinct: int
    from_store: int
    asked: int
    lean_processes: int
    keys: dict[str, str]  # store key -> "chain 3 steps 65-128"


def certify_traces(machine: Machine, traces: Iterable[Trace], lean, library, store_path: Path, bridge: AskConfig,
                   progress: Progress = quiet) -> TracesCertified:
    """Certify every step of ``traces`` through the certificate store (opened with the library's
    ``library_hash`` and Lean's githash): a trace is cut into questions of ``TRACE_CHUNK`` statements
    as a dataset's programs are (``trace_questions``), the store answers those it holds as certified,
    Lean is asked the rest and every answer recorded. CertificationFailed names the first step Lean
    rejected (the rejected question's statements are then asked one at a time, to find it)."""
    questions = Questions(library.library_hash, lean.githash)
    covers: dict[str, tuple[Trace, int]] = {}  # key -> its trace and the offset of its first statement there
    keys: dict[str, str] = {}
    for t in traces:
        chunks = trace_questions(machine, t.start, t.statements, t.states)
        for offset, question in zip(range(0, len(t.statements), TRACE_CHUNK), chunks):
            last = t.first + offset + len(question.statements) - 1
            key = questions.add(question, f"{t.where} steps {t.first + offset}-{last}")
            covers.setdefault(key, (t, offset))
            keys.setdefault(key, questions.first_use[key])

    executor = programs_executor(lean, library, bridge)

    def explain(key: str, answer: Answer) -> str:
        trace, offset = covers[key]
        return _rejected_step(machine, questions.by_key[key], trace.where, trace.first + offset, lean, library, bridge,
                              answer, executor)

    with CertificateStore(store_path, library.library_hash, lean.githash) as store:
        asked, processes = ask_missing(questions, list(keys), store, bridge, lean, library, progress, executor, explain)
    return TracesCertified(len(keys), len(keys) - asked, asked, processes, keys)


def _rejected_step(machine: Machine, question: TraceQuestion, where: str, first: int, lean, library,
                   bridge: AskConfig, answer: Answer, executor: Executor, counted: str = "") -> str:
    """The message naming the first step of a rejected trace question that Lean rejects alone: its
    statement, the state before it and the claimed state after it (the question's first statement
    is step ``first`` of ``where``; ``counted`` says from what the steps count)."""
    befores = (question.start, *question.states[:-1])
    steps = [StepQuestion(machine, s, before, after)
             for s, before, after in zip(question.statements, befores, question.states)]
    answers, _ = check_programs(steps, lean, library, bridge.limits, executor=executor)
    for k, (step, said) in enumerate(zip(steps, answers)):
        if not isinstance(said, Complete):
            claim = step_claim(str(step.statement), state_text(step.before), state_text(step.after), "statement")
            return f"{where} step {first + k}{counted}: Lean rejected {claim} ({reason(said)})"
    return f"{where} steps {first}-{first + len(steps) - 1}{counted}: Lean rejected their trace ({reason(answer)})"


def _visited(samples: Iterable[Sample], machine: Machine) -> set[State]:
    seen: set[State] = {start_state()}
    for sample in samples:
        for program in (sample.program, *sample.partners):
            seen.update(trace(program, start_state(), machine.values))
    return seen


def _floor(train_ends: list[State], test_ends: dict[str, list[State]]) -> dict[str, float]:
    """Per test split, the exact share of a predictor that says each variable's commonest value at
    the end of the training programs (what a tracker must beat)."""
    commonest = tuple(Counter(end[v] for end in train_ends).most_common(1)[0][0] for v in range(VARIABLES))
    return {name: round(sum(end == commonest for end in ends) / max(1, len(ends)), 6) for name, ends in test_ends.items()}


def certify_programs(spec: ProgramsSpec, out: Path, store_path: Path, bridge: AskConfig,
                     progress: Progress = quiet, force: bool = False) -> dict:
    """Sample, certify and write the programs dataset of ``spec`` to ``out``; return its manifest.
    Raises CertificationFailed (and writes nothing) when Lean rejects any statement, and OutputError
    (before anything is asked) when ``out`` holds a dataset of other settings, unless ``force``."""
    started = time.perf_counter()
    machine = spec.machine
    held: HeldPrograms | None = choose(spec.holdout, machine, spec.seed) if spec.holdout is not None else None
    lean = find_lean(min(PROBE_TIMEOUT_S, bridge.limits.timeout_s))
    library = build_programs(lean, bridge.limits)
    writer = DatasetWriter(out, spec.settings(), force)
    store = CertificateStore(store_path, library.library_hash, lean.githash)
    try:
        questions = Questions(library.library_hash, lean.githash)
        executor = programs_executor(lean, library, bridge)
        explain = _Explainer(questions, machine, lean, library, bridge, executor)
        equivalence_start = None if machine.values == 2 else start_state()
        lines: dict[str, list[str]] = {}
        ends: dict[str, list[State]] = {}
        steps = equivalences = 0
        samples_train: list[Sample] = []
        for name, length in spec.split_names():
            samples = list(sample_split(spec, name, length, held))
            if length is None:
                samples_train = samples
            lines[name] = []
            ends[name] = []
            for n, sample in enumerate(samples):
                chain_id = f"{name}-{n:05d}"
                line, used = _line(questions, machine, chain_id, sample, f"{name}.jsonl program {chain_id}",
                                   equivalence_start, explain.firsts)
                lines[name].append(line)
                ends[name].append(trace(sample.program, start_state(), machine.values)[-1])
                steps += used
                equivalences += len(sample.partners)
            progress("sample", len(lines), len(spec.split_names()))
        checked, processes = ask_missing(questions, list(questions.by_key), store, bridge, lean, library, progress,
                                         executor, explain)
        files = {}
        for name, split_lines in lines.items():
            path = writer.write_lines(f"{name}.jsonl", iter(split_lines))
            files[f"{name}.jsonl"] = {"chains": len(split_lines), "sha256": file_sha256(path)}
        kinds = Counter(q.kind for q in questions.by_key.values())
        visited = _visited(samples_train, machine)
        manifest = {
            "format": PROGRAMS_FORMAT,
            "domain": {"name": "programs", "machine": machine.name, "values": machine.values, "variables": VARIABLES},
            "chains": spec.chains, "min_length": spec.min_length, "max_length": spec.max_length,
            "partners": spec.partners, "test_lengths": list(spec.test_lengths), "test_chains": spec.test_chains,
            "seed": spec.seed, "start": state_text(start_state()),
            "steps": steps, "equivalences": equivalences,
            "distinct_traces": kinds["trace"], "distinct_equivalences": kinds["equivalence"],
            "certified": len(questions.by_key), "failed": 0, "kernel_checked": checked, "lean_processes": processes,
            "certificate": CERTIFICATE,
            "certificate_forms": {"trace": f"the state after each of up to {TRACE_CHUNK} consecutive statements, "
                                           "from the state before them, by kernel evaluation",
                                  "equivalence": equivalence_form(machine)},
            "floor": _floor(ends["train"], {k: v for k, v in ends.items() if k != "train"}),
            "visited_states": len(visited), "states": machine.states,
            "lean": {"version": lean.version, "githash": lean.githash, "source": lean.source,
                     "path": portable_path(lean.path)},
            "core_hash": library.core.hash, "programs_hash": library.hash, "library_hash": library.library_hash,
            "package_version": package_version(), "files": files, "store": portable_path(store_path),
            "seconds": round(time.perf_counter() - started, 3),
        }
        if held is not None:
            manifest["holdout"] = _holdout_field(held, visited, ends)
        writer.commit(manifest)
        return manifest
    except BaseException:
        writer.abort()
        raise
    finally:
        store.close()


def _holdout_field(held: HeldPrograms, visited: set[State], ends: dict[str, list[State]]) -> dict:
    """The manifest's ``holdout``: what was held out, the states training visits, and per test split
    the programs ending at a state training never visited."""
    field_: dict = {"kind": held.kind}
    if held.kind == "events":
        field_["events"] = [str(s) for s in held.statements]
    elif held.kind == "pairs":
        field_["pairs"] = [[str(a), str(b)] for a, b in held.pairs]
    field_["visited_states"] = len(visited)
    field_["unseen_end_chains"] = {name: sum(end not in visited for end in split_ends)
                                   for name, split_ends in sorted(ends.items()) if name != "train"}
    return field_


def is_programs_dataset(directory: Path) -> bool:
    """``directory`` holds a programs dataset's manifest."""
    try:
        return read_manifest_json(directory).get("format") == PROGRAMS_FORMAT
    except (DatasetError, AttributeError):
        return False


def verify_programs(directory: Path, bridge: AskConfig, progress: Progress = quiet) -> dict:
    """Re-read a programs dataset strictly and re-check every statement in Lean, trusting nothing
    stored: every file's hash and count, every program re-run, every certificate id recomputed from
    its statement (a damaged line is named by file, line, program and step), then every distinct
    theorem asked of Lean afresh. Raises DatasetError or CertificationFailed naming the first fault."""
    directory = Path(directory)
    where = str(manifest_path(directory))
    manifest = read_manifest_json(directory)
    machine = machine_of(manifest, where)
    lean = find_lean(min(PROBE_TIMEOUT_S, bridge.limits.timeout_s))
    library = build_programs(lean, bridge.limits)
    if manifest.get("library_hash") != library.library_hash:
        raise DatasetError(f"{where}: certified against another programs or core library "
                           f"({str(manifest.get('library_hash'))[:12]}, this one is {library.library_hash[:12]})")
    questions = Questions(library.library_hash, lean.githash)
    executor = programs_executor(lean, library, bridge)
    explain = _Explainer(questions, machine, lean, library, bridge, executor)
    equivalence_start = None if machine.values == 2 else start_state()

    def check(name: str, here: str, record: Record) -> int:
        _check_history(questions, machine, record.history, here, record.history.end, explain.firsts)
        for p, mate in enumerate(record.partners):
            _check_history(questions, machine, mate, f"{here} partner {p}", record.history.end, explain.firsts)
            key = questions.add(EquivalenceQuestion(machine, record.history.events, mate.events, equivalence_start),
                                f"{here} partner {p}", _equivalence_claim)
            if cert_id(key) != mate.equivalence:
                raise DatasetError(f"{here} partner {p}: its equivalence id is not that of its statement")
        return len(record.partners)

    steps, equivalences = reread(directory, manifest, where, lambda path: read_programs(path, machine, check_end=False),
                                 check, PROGRAM_WORDS, progress)
    asked = ask_afresh(questions, lean, library, bridge.limits, executor, progress, explain)
    return {"dataset": str(directory), "domain": manifest.get("domain"), "certificate": CERTIFICATE, "steps": steps,
            "equivalences": equivalences, **asked}


def _check_history(questions: Questions, machine: Machine, history: History, where: str, end: State,
                   firsts: dict[str, tuple[str, int]]) -> None:
    """Each statement's certificate id is that of the trace question covering it (an edit is named
    by the steps its trace covers), and the statements end at ``end``, the program's recorded end."""
    keys, reached = _trace_keys(questions, machine, history.start, history.events, where, firsts)
    for k, (key, cert) in enumerate(zip(keys, history.certs)):
        if cert_id(key) != cert:
            last = min(len(history.events), k - k % TRACE_CHUNK + TRACE_CHUNK) - 1
            raise DatasetError(f"{where} steps {k - k % TRACE_CHUNK}-{last}: not the statements their trace "
                               "certificate states (edited after certification)")
    if reached != history.end or history.end != end:
        raise DatasetError(f"{where}: its statements end at {state_text(reached)}, not at the recorded end "
                           f"{state_text(end)}")

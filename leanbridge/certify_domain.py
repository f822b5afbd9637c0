"""Build and verify a certified dataset of a domain of one's own (``certify --domain package.module:Name``), or of
a shipped domain on the same route (``certify --domain groups``, named ``chains.groups:S5`` and so on).

``certify_domain`` imports the domain (``chains.imported.load``), compiles and audits its Lean module
(``leanbridge.domain_lean``), samples the histories of a ``DomainSpec`` through the domain's own
sampling, and states what Lean must certify:

- a *step*: ``Eq (step e s) s'`` by ``rfl`` for every distinct step of every history and partner
  (``s'`` is what the domain's Python ``apply`` says; Lean's evaluation of the module's ``step`` is
  the certificate);
- an *equivalence* of each partner with its history: both histories evaluated from their starts.

Every statement the certificate store does not hold as certified for this Lean build, core library
and module is asked of Lean, and the dataset is written only when every one is certified.
``verify_domain`` re-reads a dataset strictly and re-checks every statement in Lean, trusting
nothing stored. The manifest's ``certificate`` names that route, ``step`` (a dataset of rewrite chains
names its ``checker`` instead).
"""
from __future__ import annotations

import time
from collections import Counter
from pathlib import Path

from chains.domains import imported_domain, own_domain
from chains.imported.dataset import DomainSpec, Sample, sample_split
from chains.imported.holdout import HeldOut, choose, held_of
from chains.manifest import DOMAIN_FORMAT, DatasetError, manifest_path, read_manifest_json
from chains.protocol import EventRefused, StateDomain, run_events
from chains.records import History, Record, Words, history_fields, read_records
from chains.version import package_version
from chains.writer import DatasetWriter, file_sha256
from leanbridge.asker import AskConfig
from leanbridge.certificates import CertificationFailed, Progress, cert_id, quiet
from leanbridge.discovery import PROBE_TIMEOUT_S, find_lean
from leanbridge.domain_lean import DomainQuestion, build_domain_module, equivalence_statement, step_statement
from leanbridge.history_questions import Questions, ask_afresh, ask_missing, cut, reread, step_claim
from leanbridge.paths import portable_path
from leanbridge.programs.check import LocalExecutor
from leanbridge.store import CertificateStore

CERTIFICATE = "step"  # the manifest's certificate route: a step is certified by its own step theorem
CERTIFICATE_FORMS = {"step": "Eq (step e s) s' by rfl: the kernel evaluates the domain module's step function",
                     "equivalence": "Eq (run of one history) (run of the other) by rfl, both from their own starts"}


def _step_keys(questions: Questions, domain: StateDomain, start, events, where: str) -> tuple[list[str], object]:
    """One certificate key a step (its step question), and the end state."""
    keys = []
    state = start
    try:
        states = run_events(domain, start, events)
    except EventRefused as e:
        raise CertificationFailed(f"{where}: the domain's own sampling drew an event that does not apply ({e})") from None
    for k, (event, after) in enumerate(zip(events, states)):
        def claim(event=event, before=state, after=after) -> str:
            return step_claim(domain.event_text(event), domain.state_text(before), domain.state_text(after))

        keys.append(questions.add(DomainQuestion(step_statement(domain, state, event, after)),
                                  f"{where} step {k} (from 0)", claim))
        state = after
    return keys, state


def _equivalence_claim(domain: StateDomain, end):
    """What a partner's equivalence claims, as a rejection names it."""
    return lambda: f"its equivalence with its history (both claimed to end at state {cut(domain.state_text(end))})"


def _line(questions: Questions, domain: StateDomain, chain_id: str, sample: Sample, where: str) -> tuple[str, int]:
    """A history's JSON line; the questions it needs added to ``questions``; its steps counted."""
    keys, end = _step_keys(questions, domain, sample.start, sample.events, where)
    partners = []
    steps = len(sample.events)
    for p, (start, events) in enumerate(sample.partners):
        here = f"{where} partner {p}"
        mate_keys, mate_end = _step_keys(questions, domain, start, events, here)
        if mate_end != end:
            raise CertificationFailed(f"{here}: the domain's sample_partner made a history ending at "
                                      f"{domain.state_text(mate_end)}, not at {domain.state_text(end)}")
        statement = equivalence_statement(domain, sample.start, sample.events, start, events)
        equivalence = questions.add(DomainQuestion(statement), here, _equivalence_claim(domain, end))
        partners.append(f'{{{history_fields(domain, start, events, end, [cert_id(k) for k in mate_keys])},'
                        f'"equivalence":"{cert_id(equivalence)}"}}')
        steps += len(events)
    line = (f'{{"id":"{chain_id}",{history_fields(domain, sample.start, sample.events, end, [cert_id(k) for k in keys])},'
            f'"partners":[{",".join(partners)}]}}')
    return line, steps


def _module(domain: StateDomain, bridge: AskConfig):
    lean = find_lean(min(PROBE_TIMEOUT_S, bridge.limits.timeout_s))
    return lean, build_domain_module(domain, lean, bridge.limits)


def certify_domain(spec: DomainSpec, out: Path, store_path: Path, bridge: AskConfig, progress: Progress = quiet,
                   force: bool = False) -> dict:
    """Sample, certify and write the dataset of ``spec`` to ``out``; return its manifest. Raises
    DomainImportError for a path naming no domain, CertificationFailed (and writes nothing) when Lean
    rejects any statement, and OutputError (before anything is asked) when ``out`` holds a dataset of
    other settings, unless ``force``."""
    started = time.perf_counter()
    domain = own_domain(spec.domain)
    held = None if spec.holdout is None else choose(domain, spec.holdout, spec.seed)
    writer = DatasetWriter(out, spec.settings(), force)
    try:
        lean, module = _module(domain, bridge)
        questions = Questions(module.library_hash, lean.githash)
        lines: dict[str, list[str]] = {}
        samples: dict[str, list[Sample]] = {}
        steps = equivalences = 0
        for name, length in spec.split_names():
            lines[name], samples[name] = [], list(sample_split(domain, spec, name, length, held))
            for n, sample in enumerate(samples[name]):
                chain_id = f"{name}-{n:05d}"
                line, used = _line(questions, domain, chain_id, sample, f"{name}.jsonl chain {chain_id}")
                lines[name].append(line)
                steps += used
                equivalences += len(sample.partners)
            progress("sample", len(lines), len(spec.split_names()))
        with CertificateStore(store_path, module.library_hash, lean.githash) as store:
            checked, processes = ask_missing(questions, list(questions.by_key), store, bridge, lean, module, progress,
                                             LocalExecutor(lean, module, bridge.jobs))
        files = {}
        for name, split_lines in lines.items():
            path = writer.write_lines(f"{name}.jsonl", iter(split_lines))
            files[f"{name}.jsonl"] = {"chains": len(split_lines), "sha256": file_sha256(path)}
        kinds = Counter(q.kind for q in questions.by_key.values())
        manifest = {
            "format": DOMAIN_FORMAT, "domain": {**domain.describe(), "import": spec.domain},
            "chains": spec.chains, "length": spec.length, "partners": spec.partners,
            "test_lengths": list(spec.test_lengths), "test_chains": spec.test_chains, "seed": spec.seed,
            "steps": steps, "equivalences": equivalences,
            "distinct_steps": kinds["step"], "distinct_equivalences": kinds["equivalence"],
            "certified": len(questions.by_key), "failed": 0, "kernel_checked": checked, "lean_processes": processes,
            "certificate": CERTIFICATE, "certificate_forms": CERTIFICATE_FORMS,
            "lean": {"version": lean.version, "githash": lean.githash, "source": lean.source,
                     "path": portable_path(lean.path)},
            "core_hash": module.core.hash, "module": module.module, "module_hash": module.hash,
            "library_hash": module.library_hash, "package_version": package_version(), "files": files,
            "store": portable_path(store_path), "seconds": round(time.perf_counter() - started, 3),
        }
        if held is not None:
            manifest["holdout"] = _holdout_field(domain, held, samples)
        writer.commit(manifest)
        return manifest
    except BaseException:
        writer.abort()
        raise


def _holdout_field(domain: StateDomain, held: HeldOut, samples: dict[str, list[Sample]]) -> dict:
    """The manifest's ``holdout``: what was held out (in the domain's text), the states training
    visits, and per test split the histories ending at a state training never visited."""
    field_: dict = {"kind": held.kind}
    if held.kind == "events":
        field_["events"] = [domain.event_text(e) for e in held.events]
    elif held.kind == "pairs":
        field_["pairs"] = [[domain.event_text(a), domain.event_text(b)] for a, b in held.pairs]
    visited = set()
    for sample in samples["train"]:
        for start, events in ((sample.start, sample.events), *sample.partners):
            visited.update([start, *run_events(domain, start, events)])
    field_["visited_states"] = len(visited)
    field_["unseen_end_chains"] = {
        name: sum((run_events(domain, s.start, s.events)[-1] if s.events else s.start) not in visited for s in split)
        for name, split in sorted(samples.items()) if name != "train"}
    return field_


def is_domain_dataset(directory: Path) -> bool:
    """``directory`` holds the manifest of a dataset of a domain of one's own."""
    try:
        return read_manifest_json(directory).get("format") == DOMAIN_FORMAT
    except (DatasetError, AttributeError):
        return False


def _check_history(questions: Questions, domain: StateDomain, history: History, where: str, end) -> None:
    """Each step's certificate id is that of its step question, and the events end at ``end``."""
    keys, reached = _step_keys(questions, domain, history.start, history.events, where)
    for k, (key, cert) in enumerate(zip(keys, history.certs)):
        if cert_id(key) != cert:
            raise DatasetError(f"{where} step {k}: not the step its certificate states (edited after certification)")
    if reached != history.end or history.end != end:
        raise DatasetError(f"{where}: its events end at {domain.state_text(reached)}, not at the recorded end "
                           f"{domain.state_text(end)}")


def _check_held(held: HeldOut | None, name: str, where: str, history: History, partners) -> None:
    """A training history and its partners hold nothing held out; a test history holds it."""
    if held is None or held.kind == "states":
        return
    if name == "train.jsonl":
        for what, h in (("", history), *((f" partner {p}", m) for p, m in enumerate(partners))):
            if not held.allows(h.events):
                raise DatasetError(f"{where}{what}: holds a held-out {held.kind[:-1]} in training")
    elif held.first_held(history.events) is None:
        raise DatasetError(f"{where}: a test history without a held-out {held.kind[:-1]}")


def verify_domain(directory: Path, bridge: AskConfig, progress: Progress = quiet) -> dict:
    """Re-read a dataset of a domain of one's own strictly and re-check every statement in Lean,
    trusting nothing stored: every file's hash and count, every history replayed, every certificate
    id recomputed from its statement (a damaged line is named by file, line, chain and step), then
    every distinct theorem asked of Lean afresh. Raises DatasetError or CertificationFailed naming
    the first fault."""
    directory = Path(directory)
    where = str(manifest_path(directory))
    manifest = read_manifest_json(directory)
    domain = imported_domain(manifest, where).domain
    lean, module = _module(domain, bridge)
    if manifest.get("library_hash") != module.library_hash:
        raise DatasetError(f"{where}: certified against another core library or domain module "
                           f"({str(manifest.get('library_hash'))[:12]}, this one is {module.library_hash[:12]})")
    questions = Questions(module.library_hash, lean.githash)
    held = held_of(domain, manifest, where)

    def check(name: str, here: str, record: Record) -> int:
        h = record.history
        _check_held(held, name, here, h, record.partners)
        _check_history(questions, domain, h, here, h.end)
        for p, mate in enumerate(record.partners):
            _check_history(questions, domain, mate, f"{here} partner {p}", h.end)
            key = questions.add(DomainQuestion(equivalence_statement(domain, h.start, h.events, mate.start,
                                                                     mate.events)), f"{here} partner {p}",
                                _equivalence_claim(domain, h.end))
            if cert_id(key) != mate.equivalence:
                raise DatasetError(f"{here} partner {p}: its equivalence id is not that of its statement")
        return len(record.partners)

    steps, equivalences = reread(directory, manifest, where, lambda path: read_records(domain, path, check_end=False),
                                 check, Words(), progress)
    asked = ask_afresh(questions, lean, module, bridge.limits, LocalExecutor(lean, module, bridge.jobs), progress)
    return {"dataset": str(directory), "domain": manifest.get("domain"), "certificate": CERTIFICATE, "steps": steps,
            "equivalences": equivalences, **asked}


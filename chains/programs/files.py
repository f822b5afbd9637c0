"""Programs datasets on disk: the manifest's format, and strict reading of the JSON Lines files.

A line holds one program::

    {"id": "train-00000", "start": "00000000", "events": ["v3 = 1", "v1 = v3 xor v0"],
     "end": "01010000", "certs": ["<16 hex per statement>"],
     "partners": [{"start": "00000000", "events": […], "end": "01010000", "certs": […],
                   "equivalence": "<16 hex>"}]}

States are eight hexadecimal digits (``v0`` first), events are statements
(``chains.programs.syntax``). A statement's certificate is the trace certificate that covers it
(one Lean theorem certifies the state after each statement of a run of consecutive statements).
Reading parses every state and statement against the machine's grammar and re-runs every
program: a bad line is refused naming its file, line, program and step.
"""
from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from chains.manifest import PROGRAMS_FORMAT, DatasetError, manifest_path, numbered_lines
from chains.programs.syntax import Machine, ProgramSyntaxError, State, Statement, execute, parse_state, parse_statement

CERT_ID_LENGTH = 16


@dataclass(frozen=True)
class History:
    """A start state, its statements, the end state and each statement's certificate id."""

    start: State
    program: tuple[Statement, ...]
    end: State
    certs: tuple[str, ...]
    equivalence: str | None = None  # a partner's certificate of equivalence with its program


@dataclass(frozen=True)
class ProgramRecord:
    id: str
    history: History
    partners: tuple[History, ...]


def _cert(value, where: str) -> str:
    if not (isinstance(value, str) and len(value) == CERT_ID_LENGTH and not value.strip("0123456789abcdef")):
        raise DatasetError(f"{where}: {str(value)[:30]!r} is not a certificate id")
    return value


def _history(obj, machine: Machine, where: str, partner: bool, check_end: bool = True) -> History:
    if not isinstance(obj, dict):
        raise DatasetError(f"{where}: not an object")
    try:
        start = parse_state(obj.get("start"), machine)
        events = obj.get("events")
        if not isinstance(events, list):
            raise DatasetError(f"{where}: events is not a list")
        program = []
        state = start
        for k, text in enumerate(events):
            try:
                statement = parse_statement(text, machine)
            except ProgramSyntaxError as e:
                raise DatasetError(f"{where} step {k}: {e}") from None
            program.append(statement)
            state = execute(statement, state, machine.values)
        end = parse_state(obj.get("end"), machine)
    except ProgramSyntaxError as e:
        raise DatasetError(f"{where}: {e}") from None
    if check_end and state != end:
        raise DatasetError(f"{where}: its statements end at {''.join('%x' % v for v in state)}, "
                           f"not at the recorded end {obj.get('end')}")
    certs = obj.get("certs")
    if not isinstance(certs, list) or len(certs) != len(program):
        raise DatasetError(f"{where}: certs must hold one certificate id per statement")
    for k, c in enumerate(certs):
        _cert(c, f"{where} step {k}")
    equivalence = None
    if partner:
        equivalence = _cert(obj.get("equivalence"), f"{where} equivalence")
    return History(start, tuple(program), end, tuple(certs), equivalence)


def parse_record(line: str, machine: Machine, where: str, check_end: bool = True) -> ProgramRecord:
    """One line of a programs file; DatasetError naming ``where`` (file and line), the program and
    the step when it is not a program of ``machine`` (with ``check_end``, also when a history's
    statements do not lead to its recorded end; ``certify --verify`` checks the certificates first,
    to name the steps an edit touched)."""
    try:
        obj = json.loads(line)
    except ValueError as e:
        raise DatasetError(f"{where}: not JSON ({e})") from None
    if not isinstance(obj, dict) or not isinstance(obj.get("id"), str):
        raise DatasetError(f"{where}: not a program record (no id)")
    here = f"{where} program {obj['id'][:40]}"
    history = _history(obj, machine, here, partner=False, check_end=check_end)
    partners = obj.get("partners")
    if not isinstance(partners, list):
        raise DatasetError(f"{here}: partners is not a list")
    mates = tuple(_history(p, machine, f"{here} partner {i}", partner=True, check_end=check_end)
                  for i, p in enumerate(partners))
    for i, mate in enumerate(mates):
        if check_end and mate.end != history.end:
            raise DatasetError(f"{here} partner {i}: ends at another state than its program")
    return ProgramRecord(obj["id"], history, mates)


def read_programs(path: Path, machine: Machine, check_end: bool = True) -> Iterator[ProgramRecord]:
    """Every record of one file, strictly (see ``parse_record``)."""
    for where, line in numbered_lines(path):
        yield parse_record(line, machine, where, check_end)


def machine_of(manifest: dict, where: str) -> Machine:
    """The machine a programs manifest names; DatasetError when it names none."""
    domain = manifest.get("domain")
    if manifest.get("format") != PROGRAMS_FORMAT or not isinstance(domain, dict) or domain.get("name") != "programs":
        raise DatasetError(f"{where}: not a programs dataset manifest (format {PROGRAMS_FORMAT})")
    try:
        return Machine(domain.get("values"))
    except (TypeError, ValueError) as e:
        raise DatasetError(f"{where}: bad machine in manifest ({e})") from None


def split_histories(directory: Path, manifest: dict) -> dict[str, list[tuple[State, tuple, list[tuple[State, tuple]]]]]:
    """Every file of a programs dataset, strictly read, as (start, statements, [(partner start,
    partner statements)]) per program, checked against the manifest's counts."""
    machine = machine_of(manifest, str(manifest_path(directory)))
    out = {}
    steps = 0
    for name in sorted(manifest["files"]):
        rows = []
        for record in read_programs(Path(directory) / name, machine):
            h = record.history
            rows.append((h.start, h.program, [(p.start, p.program) for p in record.partners]))
            steps += len(h.program) + sum(len(p.program) for p in record.partners)
        if len(rows) != manifest["files"][name].get("chains"):
            raise DatasetError(f"{Path(directory) / name}: {len(rows)} programs, the manifest says "
                               f"{manifest['files'][name].get('chains')}")
        out[name] = rows
    if steps != manifest.get("steps"):
        raise DatasetError(f"{manifest_path(directory)}: steps is {manifest.get('steps')}, the files hold {steps}")
    return out

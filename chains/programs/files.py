"""Programs datasets on disk: the manifest's format, and strict reading of the JSON Lines files.

A line holds one program::

    {"id": "train-00000", "start": "00000000", "events": ["v3 = 1", "v1 = v3 xor v0"],
     "end": "01010000", "certs": ["<16 hex per statement>"],
     "partners": [{"start": "00000000", "events": […], "end": "01010000", "certs": […],
                   "equivalence": "<16 hex>"}]}

States are eight hexadecimal digits (``v0`` first), events are statements
(``chains.programs.syntax``). A statement's certificate is the trace certificate that covers it
(one Lean theorem certifies the state after each statement of a run of consecutive statements).
The lines are those of every domain (``chains.records``), read through the programs domain: every
state and statement parsed against the machine's grammar, every program re-run, a bad line
refused naming its file, line, program and step.
"""
from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from chains.manifest import PROGRAMS_FORMAT, DatasetError, manifest_path
from chains.programs.domain import PROGRAM_WORDS, ProgramsDomain
from chains.programs.syntax import Machine, State
from chains.records import Record, read_records, read_splits


def read_programs(path: Path, machine: Machine, check_end: bool = True) -> Iterator[Record]:
    """Every record of one programs file, strictly (``chains.records.parse_record``: a bad line is
    named by file, line, program and step)."""
    return read_records(ProgramsDomain(machine), path, check_end, PROGRAM_WORDS)


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
    where = str(manifest_path(directory))
    return read_splits(ProgramsDomain(machine_of(manifest, where)), directory, manifest, where, PROGRAM_WORDS)

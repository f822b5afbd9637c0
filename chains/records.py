"""A dataset's lines for any domain but rewrite chains: one JSON object a line, in the domain's own text.

A line holds one history and its certified partners::

    {"id": "train-00000", "start": "3", "events": ["turn", "half"], "end": "1",
     "certs": ["<16 hex per step>"],
     "partners": [{"start": "3", "events": [...], "end": "1", "certs": [...], "equivalence": "<16 hex>"}]}

States and events are written by the domain's ``state_text`` and ``event_text`` and read back by
its ``parse_state`` and ``parse_event``; every history is replayed with its ``apply``. A bad line
is refused naming its file, line, history and step, in the domain's words (``Words``: a programs
file names a program and its statements). The programs datasets (``chains.programs.files``) and
those of a domain of one's own (``chains.imported``) are read here.
"""
from __future__ import annotations

import json
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from pathlib import Path

from chains.manifest import DatasetError, check_count, check_steps, numbered_lines
from chains.protocol import EventRefused, StateDomain

CERT_ID_LENGTH = 16


@dataclass(frozen=True)
class Words:
    """How a domain's refusals name a history and its events."""

    history: str = "chain"  # "line 4 chain train-00003 step 2"
    events: str = "events"  # "its events end at …"


@dataclass(frozen=True)
class History:
    """A start state, its events, the end state and each step's certificate id."""

    start: object
    events: tuple
    end: object
    certs: tuple[str, ...]
    equivalence: str | None = None  # a partner's certificate of equivalence with its history


@dataclass(frozen=True)
class Record:
    id: str
    history: History
    partners: tuple[History, ...]


def _is_cert(value) -> bool:
    return isinstance(value, str) and len(value) == CERT_ID_LENGTH and not value.strip("0123456789abcdef")


def _cert(value, where: str) -> str:
    if not _is_cert(value):
        raise DatasetError(f"{where}: {str(value)[:30]!r} is not a certificate id")
    return value


def _parsed(parse, text, where: str):
    if not isinstance(text, str):
        raise DatasetError(f"{where}: {str(text)[:30]!r} is not text")
    try:
        return parse(text)
    except ValueError as e:
        raise DatasetError(f"{where}: {e}") from None


def _history(domain: StateDomain, obj, where: str, partner: bool, check_end: bool, words: Words) -> History:
    if not isinstance(obj, dict):
        raise DatasetError(f"{where}: not an object")
    texts = obj.get("events")
    if not isinstance(texts, list):
        raise DatasetError(f"{where}: events is not a list")
    start = state = _parsed(domain.parse_state, obj.get("start"), f"{where} start")
    events = []
    for k, text in enumerate(texts):  # the place is written out only for a message: a dataset has millions of steps
        if not isinstance(text, str):
            raise DatasetError(f"{where} step {k}: {str(text)[:30]!r} is not text")
        try:
            event = domain.parse_event(text)
        except ValueError as e:
            raise DatasetError(f"{where} step {k}: {e}") from None
        try:
            state = domain.apply(state, event)
        except EventRefused as e:
            raise DatasetError(f"{where} step {k}: {e}") from None
        events.append(event)
    end = _parsed(domain.parse_state, obj.get("end"), f"{where} end")
    if check_end and state != end:
        raise DatasetError(f"{where}: its {words.events} end at {domain.state_text(state)}, not at the recorded end "
                           f"{str(obj.get('end'))[:40]}")
    certs = obj.get("certs")
    if not isinstance(certs, list) or len(certs) != len(events):
        raise DatasetError(f"{where}: certs must hold one certificate id per step")
    for k, c in enumerate(certs):
        if not _is_cert(c):
            raise DatasetError(f"{where} step {k}: {str(c)[:30]!r} is not a certificate id")
    equivalence = _cert(obj.get("equivalence"), f"{where} equivalence") if partner else None
    return History(start, tuple(events), end, tuple(certs), equivalence)


def parse_record(domain: StateDomain, line: str, where: str, check_end: bool = True, words: Words = Words()
                 ) -> Record:
    """One line of a file; DatasetError naming ``where`` (file and line), the history and the step
    when it is not a history of ``domain`` (with ``check_end``, also when a history's events do not
    lead to its recorded end; ``certify --verify`` checks the certificates first, to name the steps
    an edit touched)."""
    try:
        obj = json.loads(line)
    except ValueError as e:
        raise DatasetError(f"{where}: not JSON ({e})") from None
    if not isinstance(obj, dict) or not isinstance(obj.get("id"), str):
        raise DatasetError(f"{where}: not a {words.history} record (no id)")
    here = f"{where} {words.history} {obj['id'][:40]}"
    history = _history(domain, obj, here, False, check_end, words)
    partners = obj.get("partners")
    if not isinstance(partners, list):
        raise DatasetError(f"{here}: partners is not a list")
    mates = tuple(_history(domain, p, f"{here} partner {i}", True, check_end, words) for i, p in enumerate(partners))
    for i, mate in enumerate(mates):
        if check_end and mate.end != history.end:
            raise DatasetError(f"{here} partner {i}: ends at another state than its {words.history}")
    return Record(obj["id"], history, mates)


def read_records(domain: StateDomain, path: Path, check_end: bool = True, words: Words = Words()
                 ) -> Iterator[Record]:
    """Every record of one file, strictly (see ``parse_record``)."""
    for where, line in numbered_lines(path):
        yield parse_record(domain, line, where, check_end, words)


def read_splits(domain: StateDomain, directory: Path, manifest: dict, where: str, words: Words = Words()
                ) -> dict[str, list[tuple[object, tuple, list[tuple[object, tuple]]]]]:
    """Every file of a dataset, strictly read, as (start, events, [(partner start, partner events)])
    per history, checked against the manifest's counts (``where`` names the manifest)."""
    out = {}
    steps = 0
    for name in sorted(manifest["files"]):
        rows = []
        for record in read_records(domain, Path(directory) / name, words=words):
            h = record.history
            rows.append((h.start, h.events, [(p.start, p.events) for p in record.partners]))
            steps += len(h.events) + sum(len(p.events) for p in record.partners)
        check_count(Path(directory) / name, len(rows), manifest["files"][name].get("chains"), words.history)
        out[name] = rows
    check_steps(where, steps, manifest)
    return out


def history_fields(domain: StateDomain, start, events: Sequence, end, certs: Sequence[str]) -> str:
    """A history's fields of a line (no braces), in the domain's text."""
    return (f'"start":{json.dumps(domain.state_text(start))},'
            f'"events":{json.dumps([domain.event_text(e) for e in events])},'
            f'"end":{json.dumps(domain.state_text(end))},"certs":{json.dumps(list(certs))}')

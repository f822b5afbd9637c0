"""The domains this package ships, by the name ``--domain`` and a manifest's ``domain`` give them.

``rewrite``: expression trees under rewrite rules (``chains.rewrite.trees``, ``chains.rewrite.rules``, tier 1 and 2);
``programs``: straight-line programs on a register machine (``chains.programs``). A domain of
one's own implements ``chains.protocol.StateDomain`` and ``KernelEvaluated`` and is named by its
import path, ``package.module:Name`` (``chains.imported``; docs/guide/bring-your-own-domain.md).
"""
from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

from chains.manifest import DOMAIN_FORMAT, PROGRAMS_FORMAT, DatasetError, numbered_lines
from chains.protocol import Recorded, StateDomain

DOMAINS = ("rewrite", "programs")


def domain_of_manifest(manifest: dict, where: str) -> StateDomain:
    """The domain a dataset's manifest names, as a value (a ``StateDomain`` that is also
    ``Recorded``: it reads the dataset's lines); DatasetError naming ``where`` when the manifest
    names none."""
    if manifest.get("format") == PROGRAMS_FORMAT:
        from chains.programs.domain import ProgramsDomain
        from chains.programs.files import machine_of

        return ProgramsDomain(machine_of(manifest, where))
    if manifest.get("format") == DOMAIN_FORMAT:
        return imported_domain(manifest, where)
    from chains.rewrite.domain import RewriteDomain
    from chains.rewrite.space import domain_of

    return RewriteDomain(domain_of(manifest, where))


def recorded_histories(domain: Recorded, path: Path) -> Iterator[tuple[tuple, list[tuple]]]:
    """Each line of a dataset file of ``domain`` (read by its ``parse_record``) as (history,
    partners), each (start, events); DatasetError naming the file and line of a bad one."""
    for where, line in numbered_lines(path):
        yield domain.record_histories(domain.parse_record(line, where))


def own_domain(path: str) -> StateDomain:
    """The domain of one's own ``path`` (``package.module:Name``) names (``chains.imported.load``);
    DomainImportError, in one line, when it names none or takes a shipped domain's name."""
    from chains.imported.load import DomainImportError, import_domain

    domain = import_domain(path)
    if domain.name in DOMAINS:
        raise DomainImportError(f"{path}: a domain of one's own needs a name other than {' or '.join(DOMAINS)}")
    return domain


def imported_domain(manifest: dict, where: str) -> StateDomain:
    """The domain of one's own a manifest names by its import path, reading its dataset's lines
    (``chains.imported.load.RecordedDomain``); DatasetError naming ``where`` when it cannot be
    imported or no longer describes itself as the manifest recorded it."""
    from chains.imported.load import DomainImportError, RecordedDomain

    recorded = manifest.get("domain")
    if not isinstance(recorded, dict) or not isinstance(recorded.get("import"), str):
        raise DatasetError(f"{where}: names no domain import path")
    try:
        domain = own_domain(recorded["import"])
    except DomainImportError as e:
        raise DatasetError(f"{where}: {e}") from None
    described = {**domain.describe(), "import": recorded["import"]}
    if described != recorded:
        raise DatasetError(f"{where}: the domain {recorded['import']} describes itself otherwise than when the "
                           f"dataset was certified ({json.dumps(described, sort_keys=True)[:80]} against "
                           f"{json.dumps(recorded, sort_keys=True)[:80]})")
    return RecordedDomain(domain, recorded["import"])

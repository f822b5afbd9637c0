"""The domains this package ships, by the name ``--domain`` and a manifest's ``domain`` give them.

``rewrite``: expression trees under rewrite rules (``chains.rewrite.trees``, ``chains.rewrite.rules``, tier 1 and 2);
``programs``: straight-line programs on a register machine (``chains.programs``). A domain of
one's own implements ``chains.protocol.StateDomain`` (docs/guide/bring-your-own-domain.md).
"""
from __future__ import annotations

from chains.manifest import PROGRAMS_FORMAT, DatasetError
from chains.protocol import StateDomain

DOMAINS = ("rewrite", "programs")


def domain_of_manifest(manifest: dict, where: str) -> StateDomain:
    """The ``StateDomain`` of a programs manifest; DatasetError naming ``where`` for another one."""
    from chains.programs.domain import ProgramsDomain
    from chains.programs.files import machine_of

    if manifest.get("format") != PROGRAMS_FORMAT:
        raise DatasetError(f"{where}: not a dataset of a StateDomain (the rewrite domain is read by its own loaders)")
    return ProgramsDomain(machine_of(manifest, where))

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
    """The domain a dataset's manifest names, as a value (a ``StateDomain`` that is also
    ``Recorded``: it reads the dataset's lines); DatasetError naming ``where`` when the manifest
    names none."""
    if manifest.get("format") == PROGRAMS_FORMAT:
        from chains.programs.domain import ProgramsDomain
        from chains.programs.files import machine_of

        return ProgramsDomain(machine_of(manifest, where))
    from chains.rewrite.domain import RewriteDomain
    from chains.rewrite.space import domain_of

    return RewriteDomain(domain_of(manifest, where))

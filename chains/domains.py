"""One registry of domains, by the name ``--domain`` and a dataset's manifest give them.

``register(name, factory)`` names a domain; ``resolve(spec, **params)`` makes one, ``spec`` being a
registered name (its factory called with ``params``) or a domain of one's own by its import path,
``package.module:Name`` (``chains.imported.load``; docs/guide/bring-your-own-domain.md). This package
registers:

- ``rewrite``: expression trees under rewrite rules (``atoms=4, tier=1, max_size=None``;
  ``chains.rewrite``), with datasets and loaders of its own;
- ``programs``: straight-line programs on a register machine (``values=2``; ``chains.programs``),
  with datasets of its own;
- ``groups``: group word problems (``group="S5", distractor=False``; ``chains.groups``), the first
  shipped domain on the generic route: its datasets are written and read as a domain of one's own's
  are, their manifests naming it by import path (``chains.groups:S5``).

A domain that a module other than the one that registered a name makes under that name is refused:
a domain of one's own needs a name of its own.
"""
from __future__ import annotations

import importlib
import json
from collections.abc import Callable, Iterator
from pathlib import Path

from chains.manifest import DOMAIN_FORMAT, PROGRAMS_FORMAT, DatasetError, numbered_lines
from chains.protocol import Recorded, StateDomain

Factory = Callable[..., StateDomain]

# name -> its factory, or the factory's import path (loaded on first use, so registering imports nothing)
_REGISTRY: dict[str, Factory | str] = {}


def register(name: str, factory: Factory | str) -> None:
    """Name a domain: ``resolve(name, **params)`` returns ``factory(**params)``. ``factory`` is a
    callable taking keyword parameters or its import path ``package.module:name``; ValueError when
    the name is taken by another factory or could be read as an import path."""
    if not name or ":" in name or name != name.strip():
        raise ValueError(f"{name!r:.40} cannot name a domain (no colon, no surrounding space)")
    if name in _REGISTRY and _REGISTRY[name] != factory:
        raise ValueError(f"the domain name {name} is taken")
    _REGISTRY[name] = factory


def registered() -> tuple[str, ...]:
    """Every registered name, in the order it was registered."""
    return tuple(_REGISTRY)


def _home(name: str) -> str:
    """The module a registered name's factory lives in."""
    factory = _REGISTRY[name]
    return factory.split(":")[0] if isinstance(factory, str) else factory.__module__


def _factory(name: str) -> Factory:
    """A registered name's factory, imported on first use (DomainImportError when it cannot be)."""
    from chains.imported.load import DomainImportError

    factory = _REGISTRY[name]
    if isinstance(factory, str):
        module, attribute = factory.split(":")
        try:
            factory = getattr(importlib.import_module(module), attribute)
        except (ImportError, AttributeError) as e:
            raise DomainImportError(f"the domain {name} is registered as {factory}, which cannot be imported: {e}"
                                    ) from None
    return factory


def resolve(spec: str, **params) -> StateDomain:
    """The domain ``spec`` names: a registered name, its factory given ``params``; or an import path
    ``package.module:Name`` (no ``params``). DomainImportError, in one line, when it names none or
    ``params`` do not fit it."""
    from chains.imported.load import DomainImportError, is_import_path

    if spec in _REGISTRY:
        try:
            return _factory(spec)(**params)
        except (TypeError, ValueError) as e:
            raise DomainImportError(f"--domain {spec}: {e}") from None
    if not is_import_path(spec):
        raise DomainImportError(f"{spec!r:.60} is neither a shipped domain ({', '.join(registered())}) nor an import "
                                "path package.module:Name")
    if params:
        raise DomainImportError(f"{spec}: a domain named by its import path takes no parameters")
    return own_domain(spec)


def _rewrite(atoms: int = 4, tier: int = 1, max_size: int | None = None) -> StateDomain:
    from chains.rewrite.domain import RewriteDomain
    from chains.rewrite.space import Domain

    return RewriteDomain(Domain(atoms, tier, max_size))


def _programs(values: int = 2) -> StateDomain:
    from chains.programs.domain import ProgramsDomain
    from chains.programs.syntax import Machine

    return ProgramsDomain(Machine(values))


register("rewrite", _rewrite)
register("programs", _programs)
register("groups", "chains.groups:group_domain")


def domain_of_manifest(manifest: dict, where: str) -> StateDomain:
    """The domain a dataset's manifest names, as a value (a ``StateDomain`` that is also
    ``Recorded``: it reads the dataset's lines); DatasetError naming ``where`` when the manifest
    names none."""
    if manifest.get("format") == PROGRAMS_FORMAT:
        from chains.programs.files import machine_of

        return resolve("programs", values=machine_of(manifest, where).values)
    if manifest.get("format") == DOMAIN_FORMAT:
        return imported_domain(manifest, where)
    from chains.rewrite.space import domain_of

    rewrite = domain_of(manifest, where)
    return resolve("rewrite", atoms=rewrite.atoms, tier=rewrite.tier, max_size=rewrite.max_size)


def recorded_histories(domain: Recorded, path: Path) -> Iterator[tuple[tuple, list[tuple]]]:
    """Each line of a dataset file of ``domain`` (read by its ``parse_record``) as (history,
    partners), each (start, events); DatasetError naming the file and line of a bad one."""
    for where, line in numbered_lines(path):
        yield domain.record_histories(domain.parse_record(line, where))


def own_domain(path: str) -> StateDomain:
    """The domain ``path`` (``package.module:Name``) names (``chains.imported.load``), a shipped one
    on the generic route (``chains.groups:S5``) or one's own; DomainImportError, in one line, when
    it names none or a module takes a name registered by another."""
    from chains.imported.load import DomainImportError, import_domain

    domain = import_domain(path)
    module = path.split(":")[0]
    if domain.name in _REGISTRY and not (module == _home(domain.name) or module.startswith(_home(domain.name) + ".")):
        raise DomainImportError(f"{path}: a domain of one's own needs a name other than the shipped domains' "
                                f"({', '.join(registered())})")
    return domain


def imported_domain(manifest: dict, where: str) -> StateDomain:
    """The domain a manifest names by its import path, reading its dataset's lines
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

"""Finding a domain of one's own by its import path, as ``certify --domain package.module:Name`` and
a dataset's manifest name it.

The path names a module importable here (installed, or on ``PYTHONPATH``) and an attribute of it:
a ``chains.protocol.StateDomain`` that is also ``KernelEvaluated`` (Lean certifies it by
evaluating its module), or a class or function that makes one when called with no argument.
Reading a dataset of such a domain imports the module its manifest names, as running the domain's
own code does; it is refused unless what the module makes now describes itself as it did when
the dataset was certified.
"""
from __future__ import annotations

import importlib
import re
from collections.abc import Sequence

from chains.protocol import KernelEvaluated, StateDomain
from chains.records import Record, parse_record

_PATH = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(\.[A-Za-z_][A-Za-z0-9_]*)*:[A-Za-z_][A-Za-z0-9_]*")


class DomainImportError(ValueError):
    """An import path that names no usable domain; the one-line message says why."""


def is_import_path(text: str) -> bool:
    """``text`` has the form ``package.module:Name``."""
    return bool(_PATH.fullmatch(text))


def import_domain(path: str) -> StateDomain:
    """The domain ``path`` (``package.module:Name``) names; DomainImportError when the module cannot be
    imported, lacks the name, or what it names is not a Lean-evaluated domain."""
    if not is_import_path(path):
        raise DomainImportError(f"{path!r:.80} is not an import path of the form package.module:Name")
    module_name, name = path.split(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as e:
        raise DomainImportError(f"cannot import {module_name} for the domain {path}: {e}") from None
    if not hasattr(module, name):
        raise DomainImportError(f"{module_name} has no {name}")
    domain = getattr(module, name)
    if isinstance(domain, type) or (callable(domain) and not isinstance(domain, StateDomain)):
        try:
            domain = domain()
        except Exception as e:  # the user's code: any failure is theirs to read, in one line
            raise DomainImportError(f"{path}() failed: {type(e).__name__}: {e}") from None
    missing = [what for what, protocol in (("StateDomain", StateDomain), ("KernelEvaluated", KernelEvaluated))
               if not isinstance(domain, protocol)]
    if missing:
        raise DomainImportError(f"{path} is not a domain: it does not implement chains.protocol."
                                f"{' and '.join(missing)} (docs/guide/bring-your-own-domain.md)")
    if not isinstance(getattr(domain, "name", None), str):
        raise DomainImportError(f"{path}: a domain needs a name (a string)")
    return domain


class RecordedDomain:
    """A domain of one's own that reads its datasets' lines (``chains.protocol.Recorded``, in the
    format of ``chains.records``): every other attribute is the domain's own."""

    def __init__(self, domain: StateDomain, import_path: str) -> None:
        self.domain, self.import_path = domain, import_path

    def __getattr__(self, name: str):
        if name.startswith("__") or name in ("domain", "import_path"):  # copying and pickling look before __init__
            raise AttributeError(name)
        return getattr(self.domain, name)

    def parse_record(self, line: str, where: str) -> Record:
        return parse_record(self.domain, line, where)

    def record_histories(self, record: Record) -> tuple[tuple[object, Sequence], list[tuple[object, Sequence]]]:
        return (record.history.start, record.history.events), [(m.start, m.events) for m in record.partners]

"""A domain of one's own certified by Lean: the kernel evaluates the domain's step function.

A ``chains.protocol.KernelEvaluated`` domain brings a prelude-mode module (importing the core
library) that defines ``<namespace>.step : Event → State → State`` with recursors and tables.
``build_domain_module`` compiles it once per (its hash, the core's hash, Lean build) and audits it
like the programs library (no ``sorry``, axiom or compiler escape hatch in its text; ``#print
axioms`` of its ``step`` clean). Statements are rendered from the domain's ``LeanTerm`` values,
never from text:

- a step: ``Eq (step e s) s'`` by ``rfl`` (the claimed ``s'`` is the caller's);
- an equivalence of two histories: ``Eq (step eₙ (… (step e₁ s))) (step e'ₘ (… s'))`` by ``rfl``.

They are checked many to a file with positive confirmation (``leanbridge.programs.check``).
"""
from __future__ import annotations

import hashlib
import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from chains.protocol import KernelEvaluated, LeanTerm
from leanbridge.corelib import CoreLibrary, build_core
from leanbridge.discovery import LeanInstall
from leanbridge.process import LeanLimits
from leanbridge.programs.check import CheckConfig, answer_statements
from leanbridge.errors import LeanModuleError
from leanbridge.programs.library import audit_source, build_module, library_hash
from leanbridge.programs.questions import TheoremQuestion
from leanbridge.render import Statement
from leanbridge.verdicts import Answer

_MODULE = re.compile(r"[A-Z][A-Za-z0-9]*")


@dataclass(frozen=True)
class DomainModule:
    """A domain's compiled Lean module."""

    core: CoreLibrary
    module: str  # its name, the domain's namespace
    hash: str  # sha256 of its source
    olean_dir: Path  # its .olean beside Core.olean: the LEAN_PATH of every check

    @property
    def library_hash(self) -> str:
        """The core library's and this module's hashes combined: the ``core_hash`` of a store of its
        certificates."""
        return library_hash(self.core.hash, self.hash)


def build_domain_module(domain: KernelEvaluated, lean: LeanInstall, limits: LeanLimits = LeanLimits(),
                        core: CoreLibrary | None = None) -> DomainModule:
    """Compile and audit ``domain``'s Lean module against ``core`` (built first when not given);
    LeanModuleError naming it when it is refused."""
    module = domain.lean_namespace()
    if not _MODULE.fullmatch(module):
        raise LeanModuleError(f"{module!r:.40} is not a module name (a capitalised identifier)")
    text = domain.lean_source()
    audit_source(text, f"the {module} module", LeanModuleError)
    data = text.encode()
    core = core if core is not None else build_core(lean, limits)
    target = build_module(lean, core, module, data, (f"{module}.step",), limits, f"the {module} module",
                          f"the {module} module", LeanModuleError)
    return DomainModule(core, module, hashlib.sha256(data).hexdigest(), target)


def render_term(term: LeanTerm) -> str:
    """``head`` or ``(head arg …)``, every name a checked identifier."""
    if not term.args:
        return term.head
    return f"({term.head} {' '.join(map(render_term, term.args))})"


def _run(domain: KernelEvaluated, start, events: Sequence) -> str:
    text = render_term(domain.lean_state(start))
    for event in events:
        text = f"({domain.lean_namespace()}.step {render_term(domain.lean_event(event))} {text})"
    return text


def step_statement(domain: KernelEvaluated, state, event, claimed) -> Statement:
    """``event`` from ``state`` leads to ``claimed``."""
    return Statement("step", f": Eq {_run(domain, state, [event])} {render_term(domain.lean_state(claimed))} := rfl")


def run_statement(domain: KernelEvaluated, start, events: Sequence, target) -> Statement:
    """A history leads from ``start`` to ``target`` (the prover's one call)."""
    return Statement("run", f": Eq {_run(domain, start, events)} {render_term(domain.lean_state(target))} := rfl")


def equivalence_statement(domain: KernelEvaluated, start, events: Sequence, other_start,
                          other_events: Sequence) -> Statement:
    """Two histories end in the same state."""
    return Statement("equivalence", f": Eq {_run(domain, start, events)} {_run(domain, other_start, other_events)} "
                                    ":= rfl")


def check_statements(module: DomainModule, statements: Sequence[Statement], lean: LeanInstall,
                     limits: LeanLimits = LeanLimits(), jobs: int = 1) -> list[Answer]:
    """Lean's answer to each statement, in order (``Complete`` or ``Rejected``)."""
    answers, _ = answer_statements(lean, module, statements, CheckConfig(jobs=jobs, limits=limits))
    return answers


@dataclass(frozen=True)
class DomainQuestion(TheoremQuestion):
    """One statement about a domain of one's own as a question a certificate store keys
    (``leanbridge.history_questions.ask_missing`` asks it) and ``check_statements`` answers."""

    statement: Statement

    def _render(self) -> Statement:
        return self.statement

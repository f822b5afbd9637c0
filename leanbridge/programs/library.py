"""The programs library: the register machines' interpreters in prelude-mode Lean, compiled once
per (its hash, the core library's hash, Lean githash) into the cache, and audited.

The library ships inside the package (``leanbridge/lean/Programs.lean``, package data); in a
checkout that file is a link to ``lake/Programs.lean``, a library of the Lake project beside the
core library it imports. Its build directory holds ``Programs.olean`` and a copy of the
``Core.olean`` it was compiled against, so that one directory is the ``LEAN_PATH`` of every check.
A build counts only once Lean's ``#print axioms`` confirmed that every constant in ``AUDITED``
depends on no axiom; the constants confirmed are recorded beside the .olean files.

A certificate about programs depends on both libraries: ``ProgramsLibrary.library_hash`` combines
their hashes (``library_hash``), and is the ``core_hash`` a certificate store of program statements
is opened with.
"""
from __future__ import annotations

import hashlib
import os
import re
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from chains.files import user_mode
from leanbridge.corelib import CORE_MODULE, CoreLibrary, build_core, compile_module
from leanbridge.discovery import LeanInstall
from leanbridge.errors import LeanModuleError
from leanbridge.paths import cache_dir, file_lock
from leanbridge.process import LeanLimits
from leanbridge.runner import LeanRunError, run_lean_file

PROGRAMS_ENV = "EXACT_STATE_PROGRAMS"
PROGRAMS_MODULE = "Programs"
# What a certificate's statement names and what its proof uses: the interpreters, the statements'
# propositions and every soundness lemma a proof applies (each lemma's closure covers the checks).
AUDITED = tuple(f"{machine}.{name}" for machine in ("Bits", "Arith") for name in (
    "exec", "run", "after", "Steps", "Effects", "eqState_sound", "check_sound", "checkWrites_sound", "run_nil",
    "run_cons")) + ("Bits.equivAll_sound", "Bits.lookState_init")
AUDIT_RECORD = "audited.txt"
# Words that would let a library prove what it has not checked; none may appear outside comments.
FORBIDDEN = ("sorry", "axiom", "native_decide", "implemented_by", "extern", "ofReduceBool", "unsafe", "opaque")


class ProgramsLibraryError(LeanModuleError):
    """The programs library is missing, does not compile, or fails its audit."""


@dataclass(frozen=True)
class ProgramsLibrary:
    core: CoreLibrary  # the core library it imports
    source: Path  # Programs.lean
    hash: str  # sha256 of its bytes
    olean_dir: Path  # Programs.olean and Core.olean: the LEAN_PATH of every check
    module: str = PROGRAMS_MODULE

    @property
    def library_hash(self) -> str:
        """Both libraries' hashes combined (``library_hash``): what keys a program certificate."""
        return library_hash(self.core.hash, self.hash)

    @property
    def programs_hash(self) -> str:
        return self.hash

    @property
    def core_hash(self) -> str:
        return self.core.hash


def library_hash(core_hash: str, programs_hash: str) -> str:
    """sha256 naming the pair (core library, programs library): the ``core_hash`` of a certificate
    store for program statements, so a certificate can never answer for another library."""
    return hashlib.sha256(f"core {core_hash}\nprograms {programs_hash}\n".encode()).hexdigest()


def programs_source() -> Path:
    """``$EXACT_STATE_PROGRAMS``, else the copy shipped in the package."""
    explicit = os.environ.get(PROGRAMS_ENV)
    path = (Path(explicit) if explicit
            else Path(__file__).resolve().parent.parent / "lean" / f"{PROGRAMS_MODULE}.lean")
    if not path.is_file():
        raise ProgramsLibraryError(f"programs library {path} not found (set {PROGRAMS_ENV} to its Programs.lean)")
    return path


def audit_source(text: str, what: str = "the programs library",
                 error: type[LeanModuleError] = ProgramsLibraryError) -> None:
    """Refuse a module that could admit anything unchecked: outside comments, none of ``FORBIDDEN``
    (``error`` naming the module as ``what``)."""
    code = re.sub(r"--[^\n]*", "", re.sub(r"/-.*?-/", " ", text, flags=re.DOTALL))
    for word in FORBIDDEN:
        if re.search(rf"\b{word}\b", code):
            raise error(f"{what} contains {word!r}")


def _read(path: Path) -> tuple[bytes, str]:
    try:
        data = path.read_bytes()
        return data, data.decode("utf-8")
    except OSError as e:
        raise ProgramsLibraryError(f"programs library {path}: cannot read it ({e.strerror or e})") from None
    except UnicodeDecodeError as e:
        raise ProgramsLibraryError(f"programs library {path}: not UTF-8 text (byte {e.start + 1})") from None


def build_programs(lean: LeanInstall, limits: LeanLimits = LeanLimits(), core: CoreLibrary | None = None
                   ) -> ProgramsLibrary:
    """Compile and audit the programs library for ``lean`` (and the core library, built first when
    not given); cached per programs hash, core hash and githash."""
    core = core if core is not None else build_core(lean, limits)
    source = programs_source()
    data, text = _read(source)
    audit_source(text)
    digest = hashlib.sha256(data).hexdigest()
    target = build_module(lean, core, PROGRAMS_MODULE, data, AUDITED, limits, str(source), "the programs library",
                          ProgramsLibraryError)
    return ProgramsLibrary(core, source, digest, target)


def build_module(lean: LeanInstall, core: CoreLibrary, module: str, data: bytes, audited: tuple[str, ...],
                 limits: LeanLimits, label: str, what: str, error: type[LeanModuleError] = LeanModuleError) -> Path:
    """Compile the prelude-mode module ``module`` (source bytes ``data``, which import the core
    library) into the cache, beside a copy of ``Core.olean``, once per (its hash, the core's hash,
    Lean githash), and confirm with ``#print axioms`` that each of ``audited`` depends on no axiom.
    Returns the build directory (the ``LEAN_PATH`` of every check); messages (``error``) name the
    source as ``label`` and the module as ``what``."""
    digest = hashlib.sha256(data).hexdigest()
    target = cache_dir() / module.lower() / f"{lean.githash[:12]}-{library_hash(core.hash, digest)[:16]}"
    if (target / AUDIT_RECORD).exists():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    with file_lock(target.parent / f".{target.name}.lock"):
        if (target / AUDIT_RECORD).exists():
            return target
        staging = Path(tempfile.mkdtemp(dir=target.parent, prefix=".build-"))
        staging.chmod(user_mode(directory=True))  # mkdtemp's 0700 would outlive the rename
        try:
            shutil.copyfile(core.olean_dir / f"{CORE_MODULE}.olean", staging / f"{CORE_MODULE}.olean")
            (staging / f"{module}.lean").write_bytes(data)
            compile_module(lean, staging, module, label, limits, error, lean_path=staging)
            _audit(lean, staging, module, audited, limits, what, error)
            shutil.rmtree(target, ignore_errors=True)  # a build without its audit record
            os.replace(staging, target)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    return target


def _audit(lean: LeanInstall, directory: Path, module: str, audited: tuple[str, ...], limits: LeanLimits,
           what: str, error: type[LeanModuleError]) -> None:
    lines = ["prelude", f"import {module}"] + [f"#print axioms {name}" for name in audited]
    try:
        messages = run_lean_file(lean, "\n".join(lines) + "\n", directory, limits)
    except LeanRunError as e:
        raise error(f"auditing {what} failed: {e}") from e
    problems = [m for m in messages if m.severity != "information"]
    if problems:
        raise error(f"auditing {what}: {problems[0].text.splitlines()[0]}")
    confirmed = {m.text for m in messages}
    for name in audited:
        if f"'{name}' does not depend on any axioms" not in confirmed:
            raise error(f"auditing {what}: Lean did not confirm that {name} depends on "
                        "no axiom (it is missing, depends on one, or Lean answered nothing)")
    (directory / AUDIT_RECORD).write_text("".join(f"{name}\n" for name in audited))

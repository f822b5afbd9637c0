"""The project's prelude-mode core library: its hash, its compiled .olean (built once per core
hash and Lean build, in the cache) and its audit.

The library ships inside the package (``leanbridge/lean/Core.lean``, package data, so an
installed wheel carries it); in a checkout that file is a link to ``lake/Core.lean``, the
source of the Lake project for users with their own Lean toolchain.
"""
from __future__ import annotations

import hashlib
import os
import re
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

from chains.files import user_mode
from leanbridge.discovery import LeanInstall
from leanbridge.errors import CoreLibraryError, shown
from leanbridge.paths import cache_dir, file_lock
from leanbridge.process import LeanLimits, lean_process
from leanbridge.runner import LeanRunError, run_lean_file

CORE_ENV = "EXACT_STATE_CORE"
CORE_MODULE = "Core"
# The only axioms the core may declare: the compiler's, never usable in a proof of a Prop.
ALLOWED_AXIOMS = {"lcAny", "lcErased", "lcProof", "lcUnreachable"}
# Constants every certificate may use (the lemmas, and the kernel route's whole whitelist: the
# numbers, their operations and Eq); each must itself depend on no axiom.
AUDITED = ("rfl", "Eq.symm", "Eq.trans", "congrArg", "N.add_comm", "N.mul_comm", "N.add_assoc",
           "N.mul_assoc", "N.left_distrib", "N.right_distrib", "congr_fst", "congr_snd", "N", "N.add", "N.mul", "Eq")
# Written beside Core.olean by the audit: the constants Lean confirmed, one a line.
AUDIT_RECORD = "audited.txt"


@dataclass(frozen=True)
class CoreLibrary:
    source: Path  # Core.lean
    hash: str  # sha256 of its bytes
    olean_dir: Path  # directory holding Core.olean: the LEAN_PATH of every check
    module: str = CORE_MODULE


def core_source() -> Path:
    """``$EXACT_STATE_CORE``, else the copy shipped in the package."""
    explicit = os.environ.get(CORE_ENV)
    path = Path(explicit) if explicit else Path(__file__).resolve().parent / "lean" / f"{CORE_MODULE}.lean"
    if not path.is_file():
        raise CoreLibraryError(f"core library {path} not found (set {CORE_ENV} to its Core.lean)")
    return path


def _read_core(path: Path) -> tuple[bytes, str]:
    try:
        data = path.read_bytes()
    except OSError as e:
        raise CoreLibraryError(f"core library {path}: cannot read it ({e.strerror or e})") from None
    try:
        return data, data.decode("utf-8")
    except UnicodeDecodeError as e:
        raise CoreLibraryError(f"core library {path}: not UTF-8 text (byte {e.start + 1})") from None


def _strip_comments(text: str) -> str:
    text = re.sub(r"/-.*?-/", " ", text, flags=re.DOTALL)  # block and doc comments (not nested here)
    return re.sub(r"--[^\n]*", "", text)


def audit_source(text: str) -> None:
    """Refuse a core library that admits anything: no sorry, no axiom but the compiler's four."""
    text = _strip_comments(text)
    if re.search(r"\bsorry\b", text):
        raise CoreLibraryError("core library contains sorry")
    for match in re.finditer(r"^\s*(?:unsafe\s+)?axiom\s+(\S+)", text, re.MULTILINE):
        name = match.group(1)
        if name not in ALLOWED_AXIOMS or "unsafe" not in match.group(0):
            raise CoreLibraryError(f"core library declares axiom {name}; only unsafe {sorted(ALLOWED_AXIOMS)} are allowed")


def build_core(lean: LeanInstall, limits: LeanLimits = LeanLimits()) -> CoreLibrary:
    """Compile and audit the core library for ``lean`` (cached per core hash and githash)."""
    source = core_source()
    data, text = _read_core(source)
    audit_source(text)
    digest = hashlib.sha256(data).hexdigest()
    target = cache_dir() / "core" / f"{lean.githash[:12]}-{digest[:16]}"
    core = CoreLibrary(source, digest, target)
    if (target / f"{CORE_MODULE}.olean").exists():
        return core
    target.parent.mkdir(parents=True, exist_ok=True)
    with file_lock(target.parent / f".{target.name}.lock"):
        if (target / f"{CORE_MODULE}.olean").exists():
            return core
        staging = Path(tempfile.mkdtemp(dir=target.parent, prefix=".build-"))
        staging.chmod(user_mode(directory=True))  # mkdtemp's 0700 would outlive the rename
        try:
            (staging / f"{CORE_MODULE}.lean").write_bytes(data)
            _compile(lean, staging, source, limits)
            _audit_lemmas(lean, staging, limits)
            os.replace(staging, target)
        finally:
            shutil.rmtree(staging, ignore_errors=True)
    return core


def _compile(lean: LeanInstall, directory: Path, source: Path, limits: LeanLimits) -> None:
    """``lean Core.lean -o Core.olean`` in ``directory``, as an owned process under ``limits``."""
    compile_module(lean, directory, CORE_MODULE, str(source), limits, CoreLibraryError)


def compile_module(lean: LeanInstall, directory: Path, module: str, label: str, limits: LeanLimits,
                   error: type[Exception], lean_path: Path | None = None) -> None:
    """``lean <module>.lean -o <module>.olean`` in ``directory``, as an owned process under ``limits``
    (``lean_path``: where the modules it imports are); ``error`` naming ``label`` when it fails."""
    env = dict(os.environ) if lean_path is None else {**os.environ, "LEAN_PATH": str(lean_path)}
    argv = [str(lean.path), f"{module}.lean", "-o", f"{module}.olean"]
    with lean_process(argv, env, limits, cwd=directory) as proc:
        try:
            stdout, stderr = proc.communicate(timeout=limits.timeout_s)
        except subprocess.TimeoutExpired:
            raise error(f"compiling {label} ran past {limits.timeout_s:g} s") from None
    said = shown((stdout + stderr).decode(errors="replace").strip().split("\n", 1)[0]) or "no output"
    if proc.returncode != 0:
        how = f"signal {-proc.returncode}" if proc.returncode < 0 else f"exit status {proc.returncode}"
        raise error(f"{label} does not compile ({how}): {said}")
    if not (directory / f"{module}.olean").is_file():
        raise error(f"compiling {label}: Lean wrote no {module}.olean ({said})")


def audited_constants(lean: LeanInstall, core: CoreLibrary, limits: LeanLimits = LeanLimits()) -> frozenset[str]:
    """The constants whose ``#print axioms`` Lean confirmed for this build of the core library:
    the audit's record, or (a core without the record, or with a shorter list)
    the audit run again now."""
    record = core.olean_dir / AUDIT_RECORD
    with file_lock(core.olean_dir.parent / f".{core.olean_dir.name}.lock"):
        names = frozenset(record.read_text().split()) if record.is_file() else frozenset()
        if not names >= set(AUDITED):
            _audit_lemmas(lean, core.olean_dir, limits)
            names = frozenset(record.read_text().split())
    return names


def _audit_lemmas(lean: LeanInstall, olean_dir: Path, limits: LeanLimits) -> None:
    lines = ["prelude", f"import {CORE_MODULE}"] + [f"#print axioms {name}" for name in AUDITED]
    try:
        messages = run_lean_file(lean, "\n".join(lines) + "\n", olean_dir, limits)
    except LeanRunError as e:
        raise CoreLibraryError(f"auditing the core library failed: {e}") from e
    confirmed = {m.text for m in messages if m.severity == "information"}
    for name in AUDITED:
        if f"'{name}' does not depend on any axioms" not in confirmed:
            raise CoreLibraryError(f"auditing the core library: Lean did not confirm that {name} depends on no "
                                   "axiom (it is missing, depends on one, or Lean answered nothing)")
    errors = [m for m in messages if m.severity != "information"]
    if errors:
        raise CoreLibraryError(f"auditing the core library: {errors[0].text.splitlines()[0]}")
    staged = olean_dir / f".{AUDIT_RECORD}.tmp"
    staged.write_text("".join(f"{name}\n" for name in AUDITED))
    os.replace(staged, olean_dir / AUDIT_RECORD)

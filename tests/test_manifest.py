"""chains.manifest is the one place a dataset's manifest.json is read and written: the bytes
on disk are the ones datasets have always had (their files' hashes, the caches keyed on the
manifest and every recorded dataset id depend on them), the typed manifest writes back exactly
what certify wrote, and no other module of the packages that route through it opens the file."""
from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest
from click.testing import CliRunner

from chains.manifest import (MANIFEST, DatasetError, Manifest, has_manifest, is_dataset, load_manifest,
                             manifest_bytes, manifest_path, manifest_text, read_manifest, read_manifest_json,
                             write_manifest)
from chains.writer import DatasetWriter

ROOT = Path(__file__).resolve().parent.parent

# A manifest's JSON object as certify's keys come out (not sorted), and the exact text the first
# format wrote for it: two-space indent, keys sorted at every depth, non-ASCII escaped, a newline.
OBJECT = {"format": 1, "b": [1, 2], "a": {"z": None, "y": 0.5, "x": "é"}, "files": {}}
TEXT = ('{\n  "a": {\n    "x": "\\u00e9",\n    "y": 0.5,\n    "z": null\n  },\n  "b": [\n    1,\n    2\n  ],\n'
        '  "files": {},\n  "format": 1\n}\n')

# Modules that still open manifest.json themselves: packages routed through chains.manifest by
# their own owners (to be emptied as they are).
ELSEWHERE: set[str] = set()
ROUTED = ("chains", "leanbridge", "tracker", "oracle", "prover", "benchmarks")


def test_the_manifest_text_is_the_first_format_s_bytes(tmp_path):
    assert manifest_text(OBJECT) == TEXT
    path = write_manifest(tmp_path, OBJECT)
    assert path == manifest_path(tmp_path) == tmp_path / MANIFEST
    assert manifest_bytes(tmp_path) == TEXT.encode() and read_manifest_json(tmp_path) == OBJECT


def test_the_dataset_writer_commits_the_manifest_through_it(tmp_path):
    out = tmp_path / "d"
    writer = DatasetWriter(out)
    writer.write_lines("train.jsonl", iter(["{}"]))
    writer.commit(OBJECT)
    assert manifest_bytes(out) == TEXT.encode() and has_manifest(out) and is_dataset(out)
    assert not has_manifest(tmp_path) and not is_dataset(tmp_path)


def test_reading_names_the_file_and_the_fault(tmp_path):
    with pytest.raises(DatasetError, match="no manifest"):
        read_manifest_json(tmp_path)
    manifest_path(tmp_path).write_text("{not json")
    with pytest.raises(DatasetError, match=rf"{MANIFEST}: not JSON"):
        read_manifest_json(tmp_path)
    assert not is_dataset(tmp_path)
    write_manifest(tmp_path, {**OBJECT, "format": 2})
    with pytest.raises(DatasetError, match="not a dataset manifest of format 1"):
        read_manifest(tmp_path)


@pytest.mark.lean
def test_a_certified_manifest_reads_back_to_its_own_bytes(tmp_path):
    from leanbridge.cli import main

    out = tmp_path / "d"
    args = ["--atoms", "3", "--tier", "2", "--chains", "6", "--test-lengths", "4", "--test-chains", "2",
            "--start-walk", "3", "--tier2-weight", "2", "--jobs", "1", "--out", str(out),
            "--store", str(tmp_path / "store.sqlite")]
    result = CliRunner().invoke(main, args, catch_exceptions=False)
    assert result.exit_code == 0, result.output
    on_disk = manifest_bytes(out)
    typed = load_manifest(out)
    assert manifest_text(typed).encode() == on_disk  # the typed value writes back the same bytes
    assert manifest_text(read_manifest_json(out)).encode() == on_disk
    assert Manifest.from_json(json.loads(on_disk)) == typed
    write_manifest(tmp_path, typed)
    assert manifest_bytes(tmp_path) == on_disk


def _opens_the_manifest(path: Path) -> bool:
    """Whether the module names the file by its literal name (in code, not in a docstring)."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    return any(isinstance(node, ast.Constant) and node.value == MANIFEST for node in ast.walk(tree))


def test_only_chains_manifest_names_the_file():
    found = {path.relative_to(ROOT).as_posix() for package in ROUTED for path in (ROOT / package).rglob("*.py")
             if _opens_the_manifest(path)}
    assert found - ELSEWHERE == {"chains/manifest.py"}


def _typed(**fields) -> Manifest:
    """A chain manifest with made-up counts (nothing here is certified)."""
    values = dict(atoms=3, tier=2, max_size=9, rules=("add_comm",), trees=72, classes=8, trees_counted="counted",
                  seed=0, chains=1, length=1, partners=0, test_lengths=(8,), test_chains=1, steps=1,
                  steps_by_rule={"add_comm": 1}, distinct_steps=1, equivalences=0, distinct_equivalences=0,
                  files={"train.jsonl": {"chains": 1, "sha256": "0" * 64}}, kernel_checked=1, certified=1, failed=0,
                  lean_processes=1, lean={"githash": "0" * 40}, core_hash="0" * 64, checker="elaborator",
                  package_version="0", store="s.sqlite")
    return Manifest(**{**values, **fields})


def test_reachable_starts_are_written_only_when_given_and_read_back():
    from chains.manifest import REACHABLE_SAMPLING, REACHABLE_WALK_SAMPLING, START_SAMPLING

    plain = _typed()
    assert "starts" not in plain.to_json() and "start_sampling" not in plain.to_json() and plain.starts == "start"
    assert _typed(start_walk=4).to_json()["start_sampling"] == START_SAMPLING
    for manifest, sentence in ((_typed(starts="reachable"), REACHABLE_SAMPLING),
                               (_typed(starts="reachable", start_walk=4), REACHABLE_WALK_SAMPLING)):
        obj = manifest.to_json()
        assert obj["starts"] == "reachable" and obj["start_sampling"] == sentence
        assert Manifest.from_json(json.loads(manifest_text(manifest))) == manifest


def test_a_manifest_without_starts_reads_as_start_and_an_unknown_one_is_refused_naming_it(tmp_path):
    old = _typed().to_json()
    assert Manifest.from_json(old).starts == "start"
    write_manifest(tmp_path, {**old, "starts": "anywhere"})
    named = rf"{tmp_path / MANIFEST}: starts is 'anywhere', not one of start, reachable"
    with pytest.raises(DatasetError, match=named):
        load_manifest(tmp_path)
    with pytest.raises(DatasetError, match="m.json: starts is '1', not a string"):
        Manifest.from_json({**old, "starts": 1}, "m.json")

"""The certify command end to end, against the real Lean binary."""
import hashlib
import json
import os
import shutil
import signal
import sqlite3
import subprocess
import sys
import time

import pytest

from conftest import run_certify as run

SMALL = ["--chains", "60", "--test-lengths", "8,32", "--test-chains", "12", "--jobs", "2"]
# The elaborator route, named: the fixtures' bytes are pinned (REFERENCE_SHA256) from before the
# kernel route became certify's default, and its certificate ids differ from the kernel route's.
ELABORATOR = ["--checker", "elaborator"]


@pytest.fixture(scope="module")
def tier1(tmp_path_factory, store):
    out = tmp_path_factory.mktemp("data") / "tier1"
    code, output = run([*SMALL, *ELABORATOR, "--out", str(out), "--store", str(store)])
    assert code == 0, output
    return out


@pytest.fixture(scope="module")
def tier2(tmp_path_factory, store):
    out = tmp_path_factory.mktemp("data") / "tier2"
    code, output = run(["--tier", "2", "--chains", "400", "--test-lengths", "8", "--test-chains", "8", *ELABORATOR,
                        "--out", str(out), "--store", str(store)])
    assert code == 0, output
    return out


def lines(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def tampered(src, tmp_path, name, edit):
    """A copy of dataset ``src`` with ``edit(records)`` applied to file ``name``."""
    copy = tmp_path / "copy"
    shutil.copytree(src, copy)
    records = lines(copy / name)
    edit(records)
    (copy / name).write_text("".join(json.dumps(r) + "\n" for r in records))
    return copy


def test_manifest_reports_the_domain_and_every_certificate(tier1):
    manifest = json.loads((tier1 / "manifest.json").read_text())
    assert manifest["trees"] == 960 and manifest["classes"] == 52
    assert manifest["failed"] == 0
    assert manifest["certified"] == manifest["distinct_steps"] + manifest["distinct_equivalences"]
    assert manifest["lean"]["version"] == "4.35.0" and len(manifest["lean"]["githash"]) == 40
    steps = equivalences = 0
    for name in manifest["files"]:
        for record in lines(tier1 / name):
            steps += len(record["events"]) + sum(len(p["events"]) for p in record["partners"])
            equivalences += len(record["partners"])
    assert (manifest["steps"], manifest["equivalences"]) == (steps, equivalences)
    for key in ("atoms", "tier", "seed", "steps", "kernel_checked", "seconds", "core_hash", "package_version"):
        assert key in manifest


# sha256 of each file of the SMALL and tier-2 fixtures' datasets as main wrote them before the
# sampler, the renderer and the writer were made fast (commit 1d95d02): the same seed must keep
# giving the same bits, since trained runs check their dataset's identity by these hashes. They
# change only with the statements' text, the core library or the Lean build (the certificate ids).
REFERENCE_SHA256 = {
    "tier1": {"train.jsonl": "1619b6999f8dd86bd8e454601659b99cd00f0f4c8c0bb64b505e2c60c56ed9d8",
              "test-8.jsonl": "ba506c5fdca40d5bd85be5b9f7d8f95abb99a382b55e29f1ab2104c71f1865c8",
              "test-32.jsonl": "72be23e2ede35a8d04801e2594b4ca900adc70925859ff4f74b8b0451796f08a"},
    "tier2": {"train.jsonl": "c96a65de5b776c48f5ae5006c7e7d0c5284d533333b048fc37268a4305d6b447",
              "test-8.jsonl": "74fc2df55057c55fa97e21ce49bfe3d6f19e4c427745eaca97533f571bc439fd"},
}


def test_the_same_seed_gives_the_bytes_it_always_gave(tier1, tier2):
    for name, out in (("tier1", tier1), ("tier2", tier2)):
        files = json.loads((out / "manifest.json").read_text())["files"]
        assert {f: meta["sha256"] for f, meta in files.items()} == REFERENCE_SHA256[name]
        assert {f: hashlib.sha256((out / f).read_bytes()).hexdigest() for f in files} == REFERENCE_SHA256[name]


def test_a_second_run_checks_nothing_again_and_writes_the_same_bytes(tier1, store, tmp_path):
    code, output = run([*SMALL, *ELABORATOR, "--out", str(tmp_path / "again"), "--store", str(store)])
    assert code == 0, output
    assert json.loads((tmp_path / "again" / "manifest.json").read_text())["kernel_checked"] == 0
    for name in ("train.jsonl", "test-8.jsonl", "test-32.jsonl"):
        assert (tmp_path / "again" / name).read_bytes() == (tier1 / name).read_bytes()


def histories(directory):
    """Every file's chains without their certificate ids (which name the checker)."""
    out = {}
    for path in sorted(directory.glob("*.jsonl")):
        records = lines(path)
        for record in records:
            for history in (record, *record["partners"]):
                history.pop("certs")
                history.pop("equivalence", None)
        out[path.name] = records
    return out


def test_the_default_kernel_route_gives_the_same_bytes_twice_and_the_elaborators_chains(tier1, tmp_path):
    from leanbridge.checker import Checker
    for n in (1, 2):  # two stores: the second run certifies every statement again
        code, output = run([*SMALL, "--out", str(tmp_path / f"k{n}"), "--store", str(tmp_path / f"s{n}.sqlite")])
        assert code == 0, output
    manifests = [json.loads((tmp_path / f"k{n}" / "manifest.json").read_text()) for n in (1, 2)]
    assert manifests[0]["checker"] == manifests[1]["checker"] == Checker.KERNEL.identity
    assert manifests[0]["kernel_checked"] == manifests[1]["kernel_checked"] == manifests[0]["certified"] > 0
    assert manifests[0]["files"] == manifests[1]["files"]
    for name in manifests[0]["files"]:
        assert (tmp_path / "k1" / name).read_bytes() == (tmp_path / "k2" / name).read_bytes(), name
    assert histories(tmp_path / "k1") == histories(tier1)  # the same chains; only the certificate ids differ
    code, output = run(["--verify", str(tmp_path / "k1")])
    assert code == 0 and '"checker": "kernel"' in output, output


def test_another_seed_gives_another_dataset(tier1, store, tmp_path):
    code, _ = run([*SMALL, "--seed", "1", "--out", str(tmp_path / "s1"), "--store", str(store)])
    assert code == 0
    assert (tmp_path / "s1" / "train.jsonl").read_bytes() != (tier1 / "train.jsonl").read_bytes()


def test_verify_passes_on_an_untouched_dataset(tier1):
    code, output = run(["--verify", str(tier1)])
    assert code == 0, output
    assert "verified" in output


def _swap_event(records):
    event = records[3]["events"][2]
    rule, path = event.split("@")
    records[3]["events"][2] = ("mul_comm" if rule != "mul_comm" else "add_comm") + "@" + path


@pytest.mark.parametrize("name, edit, expected", [
    ("train.jsonl", _swap_event, "line 4 (chain train-00003) step 2"),
    ("test-32.jsonl", lambda r: r[0].__setitem__("start", r[0]["start"].replace("a", "#exit", 1)), "bad tree"),
    ("test-8.jsonl", lambda r: r[1]["partners"][0].__setitem__("end", r[0]["end"]) if r[1]["end"] != r[0]["end"]
     else None, "partner 0"),
    ("train.jsonl", lambda r: r[0]["certs"].__setitem__(0, "0" * 16), "step 0: certificate id"),
    ("train.jsonl", lambda r: r[0].__setitem__("id", "renamed"), "edited after certification"),
    ("train.jsonl", lambda r: r[0]["events"].__setitem__(0, "add_comm@0\n#exit"), "step 0"),
    ("train.jsonl", lambda r: r.pop(), "chains, the manifest says"),
])
def test_verify_names_the_first_tampered_place(tier1, tmp_path, name, edit, expected):
    copy = tampered(tier1, tmp_path, name, edit)
    code, output = run(["--verify", str(copy)])
    assert code == 1
    assert expected in output
    assert "Traceback" not in output and len(output.strip().splitlines()) == 1


def test_tier2_has_every_rule_and_verifies(tier2):
    manifest = json.loads((tier2 / "manifest.json").read_text())
    assert manifest["failed"] == 0 and manifest["max_size"] == 15
    assert set(manifest["steps_by_rule"]) == set(manifest["rules"]) and len(manifest["rules"]) == 10
    assert all(count > 0 for count in manifest["steps_by_rule"].values())
    assert manifest["trees"] == 12864 and "reachable" in manifest["trees_counted"]
    code, output = run(["--verify", str(tier2)])
    assert code == 0, output


def test_verify_checks_the_id_of_a_step_it_has_replayed_before(tier1, tmp_path):
    """verify works each distinct step out once; a repeated step's stored id is still compared:
    the id of another step, put on a step whose statement appeared earlier, is named."""
    place = {}

    def wrong_id_on_a_repeat(records):
        seen = set()
        for i, record in enumerate(records):
            for k, cert in enumerate(record["certs"]):
                if cert in seen:
                    other = next(c for c in seen if c != cert)
                    record["certs"][k] = other
                    place.update(line=i + 1, step=k)
                    return
                seen.add(cert)

    copy = tampered(tier1, tmp_path, "train.jsonl", wrong_id_on_a_repeat)
    code, output = run(["--verify", str(copy)])
    assert code == 1 and "Traceback" not in output
    assert f"line {place['line']} " in output and f"step {place['step']}: certificate id" in output


def test_tier2_verify_fails_on_a_swapped_factor(tier2, tmp_path):
    def swap(records):
        for n, record in enumerate(records):
            for k, event in enumerate(record["events"]):
                if event.startswith("distrib_left@"):
                    record["events"][k] = event.replace("distrib_left", "distrib_right")
                    swap.place = f"line {n + 1} (chain {record['id']}) step {k}"
                    return
    copy = tampered(tier2, tmp_path, "train.jsonl", swap)
    code, output = run(["--verify", str(copy)])
    assert code == 1 and swap.place in output


@pytest.mark.parametrize("args, message", [
    (["--atoms", "7"], "Invalid value for '--atoms'"),
    (["--tier", "3"], "Invalid value for '--tier'"),
    (["--max-size", "9"], "tier 2 only"),
    (["--test-lengths", "8,x"], "comma-separated"),
])
def test_bad_options_are_usage_errors(args, message, tmp_path):
    code, output = run([*args, "--out", str(tmp_path / "out")])
    assert code == 2 and message in output
    assert not (tmp_path / "out").exists()


def test_an_unwritable_output_is_one_line(tmp_path):
    blocker = tmp_path / "file"
    blocker.write_text("")
    code, output = run([*SMALL, "--out", str(blocker / "out"), "--store", str(tmp_path / "s.sqlite")])
    assert code == 1 and "cannot write" in output and len(output.strip().splitlines()) == 1


def test_a_missing_lean_is_one_line_and_writes_nothing(tmp_path):
    code, output = run([*SMALL, "--out", str(tmp_path / "out")], env={"EXACT_STATE_LEAN": str(tmp_path / "no-lean")})
    assert code == 1 and "EXACT_STATE_LEAN" in output
    assert not (tmp_path / "out").exists()


def test_verify_of_a_directory_without_manifest_is_one_line(tmp_path):
    code, output = run(["--verify", str(tmp_path)])
    assert code == 1 and "no manifest" in output


def test_a_run_killed_mid_certification_resumes_without_loss(tmp_path):
    """kill -9 while Lean results are being committed; the rerun checks only what is missing."""
    store, out = tmp_path / "s.sqlite", tmp_path / "out"
    # the elaborator route: its Lean files take long enough that the kill lands mid-run
    args = [sys.executable, "-m", "leanbridge.cli", "--chains", "2000", "--test-lengths", "8", "--test-chains", "8",
            "--jobs", "1", *ELABORATOR, "--out", str(out), "--store", str(store)]
    proc = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, start_new_session=True)
    committed = 0
    deadline = time.time() + 120
    while time.time() < deadline and proc.poll() is None:
        time.sleep(0.05)
        try:
            with sqlite3.connect(store) as conn:
                committed = conn.execute("SELECT COUNT(*) FROM certificates").fetchone()[0]
        except sqlite3.Error:
            continue
        if committed:
            os.killpg(proc.pid, signal.SIGKILL)
            break
    proc.wait()
    assert committed > 0 and not out.exists(), "the run should have been killed mid-way"
    rerun = subprocess.run(args, capture_output=True, text=True)
    assert rerun.returncode == 0, rerun.stderr
    manifest = json.loads((out / "manifest.json").read_text())
    distinct = manifest["distinct_steps"] + manifest["distinct_equivalences"]
    with sqlite3.connect(store) as conn:
        rows = conn.execute("SELECT COUNT(*), COUNT(DISTINCT key), SUM(verdict = 'certified') FROM certificates").fetchone()
    assert rows == (distinct, distinct, distinct)
    assert manifest["kernel_checked"] <= distinct - committed
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".out")]


@pytest.mark.parametrize("atoms, tier, trees", [(2, 1, 4), (3, 1, 48), (5, 1, 26880), (6, 1, 967680), (3, 2, None)])
def test_every_atom_count_certifies(atoms, tier, trees, store, tmp_path):
    out = tmp_path / "d"
    code, output = run(["--atoms", str(atoms), "--tier", str(tier), "--chains", "20", "--test-lengths", "8",
                        "--test-chains", "4", "--out", str(out), "--store", str(store)])
    assert code == 0, output
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["failed"] == 0 and manifest["atoms"] == atoms
    if trees is not None:
        assert manifest["trees"] == trees
    assert set("".join(r["start"] for r in lines(out / "train.jsonl")).replace(" ", "")) - set("+*") \
        == set("abcdef"[:atoms])


def test_a_start_walk_changes_the_training_chains_only_and_verifies(tier2, store, tmp_path):
    out = tmp_path / "walked"
    code, output = run(["--tier", "2", "--chains", "400", "--test-lengths", "8", "--test-chains", "8", *ELABORATOR,
                        "--start-walk", "32", "--out", str(out), "--store", str(store)])
    assert code == 0, output
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["start_walk"] == 32 and "start_walk" not in json.loads((tier2 / "manifest.json").read_text())
    assert (out / "test-8.jsonl").read_bytes() == (tier2 / "test-8.jsonl").read_bytes()
    starts = [len(r["start"].split()) for r in lines(out / "train.jsonl")]
    assert max(starts) > 7 and min(starts) == 7  # larger trees among the starts, start trees too
    code, output = run(["--verify", str(out)])
    assert code == 0, output


# three atoms up to 9 tokens: 48 start trees of 5 tokens, 24 reachable trees of 7
TIER2_SMALL = ["--atoms", "3", "--tier", "2", "--max-size", "9", "--chains", "300", "--test-lengths", "8,32",
               "--test-chains", "16", "--seed", "4"]
TIER1_SMALL = ["--atoms", "4", "--chains", "300", "--test-lengths", "8", "--test-chains", "16", "--seed", "4"]


@pytest.fixture(scope="module")
def starts(tmp_path_factory, store):
    """Datasets of the same seed: (tier, starts) -> directory."""
    root = tmp_path_factory.mktemp("starts")
    out = {}
    for tier, base in ((2, TIER2_SMALL), (1, TIER1_SMALL)):
        for mode in ("start", "reachable"):
            extra = [] if mode == "start" else ["--starts", "reachable"]
            code, output = run([*base, *extra, "--out", str(root / f"t{tier}-{mode}"), "--store", str(store)])
            assert code == 0, output
            out[tier, mode] = root / f"t{tier}-{mode}"
    return out


def test_reachable_starts_reach_the_sizes_start_trees_never_have_and_leave_the_test_chains_alone(starts):
    default, reachable = starts[2, "start"], starts[2, "reachable"]
    sizes = {mode: [len(r["start"].split()) for r in lines(starts[2, mode] / "train.jsonl")] for mode in
             ("start", "reachable")}
    assert set(sizes["start"]) == {5}
    assert set(sizes["reachable"]) == {5, 7} and 0.2 < sizes["reachable"].count(7) / len(sizes["reachable"]) < 0.5
    for name in ("test-8.jsonl", "test-32.jsonl"):
        assert (reachable / name).read_bytes() == (default / name).read_bytes()
    assert (reachable / "train.jsonl").read_bytes() != (default / "train.jsonl").read_bytes()
    manifest = json.loads((reachable / "manifest.json").read_text())
    assert manifest["starts"] == "reachable" and "reachable trees" in manifest["start_sampling"]
    assert "starts" not in json.loads((default / "manifest.json").read_text())
    code, output = run(["--verify", str(reachable)])
    assert code == 0, output


def test_reachable_starts_on_tier1_range_over_all_its_trees(starts):
    default, reachable = starts[1, "start"], starts[1, "reachable"]
    assert (reachable / "test-8.jsonl").read_bytes() == (default / "test-8.jsonl").read_bytes()
    assert (reachable / "train.jsonl").read_bytes() != (default / "train.jsonl").read_bytes()
    drawn = {r["start"] for r in lines(reachable / "train.jsonl")}
    assert len(drawn) > 250 and {len(s.split()) for s in drawn} == {7}  # 300 draws among 960 trees
    assert json.loads((reachable / "manifest.json").read_text())["starts"] == "reachable"


def test_reachable_starts_give_the_same_bytes_for_the_same_seed(starts, store, tmp_path):
    for tier, base in ((2, TIER2_SMALL), (1, TIER1_SMALL)):
        code, output = run([*base, "--starts", "reachable", "--out", str(tmp_path / f"t{tier}"), "--store", str(store)])
        assert code == 0, output
        first = json.loads((starts[tier, "reachable"] / "manifest.json").read_text())
        again = json.loads((tmp_path / f"t{tier}" / "manifest.json").read_text())
        assert again["files"] == first["files"]
        for name in first["files"]:
            assert (tmp_path / f"t{tier}" / name).read_bytes() == (starts[tier, "reachable"] / name).read_bytes()


def test_reachable_starts_compose_with_a_start_walk_and_a_tier2_weight(starts, store, tmp_path):
    from chains.manifest import REACHABLE_WALK_SAMPLING, load_manifest
    out = tmp_path / "both"
    code, output = run([*TIER2_SMALL, "--starts", "reachable", "--start-walk", "4", "--tier2-weight", "3",
                        "--out", str(out), "--store", str(store)])
    assert code == 0, output
    raw = json.loads((out / "manifest.json").read_text())
    assert (raw["starts"], raw["start_walk"], raw["tier2_weight"]) == ("reachable", 4, 3)
    assert raw["start_sampling"] == REACHABLE_WALK_SAMPLING
    manifest = load_manifest(out)
    assert manifest.to_json() == raw and manifest.starts == "reachable"
    assert (out / "test-32.jsonl").read_bytes() == (starts[2, "start"] / "test-32.jsonl").read_bytes()
    assert (out / "train.jsonl").read_bytes() != (starts[2, "reachable"] / "train.jsonl").read_bytes()


def test_reachable_starts_past_the_enumeration_limit_are_refused_and_write_nothing(tmp_path, monkeypatch):
    import chains.rewrite.space
    monkeypatch.setattr(chains.rewrite.space, "EXPLORE_LIMIT", 50)  # the 3-atom domain has 72 reachable trees
    code, output = run([*TIER2_SMALL, "--starts", "reachable", "--out", str(tmp_path / "out"),
                        "--store", str(tmp_path / "s.sqlite")])
    assert code == 1 and "Traceback" not in output and len(output.strip().splitlines()) == 1
    assert "--starts reachable" in output and "tier-2 domain of 3 atoms" in output and "limit of 50" in output
    assert list(tmp_path.iterdir()) == []


def test_the_starts_option_is_for_chains_and_checked():
    code, output = run(["--starts", "anywhere"])
    assert code == 2 and "Invalid value for '--starts'" in output
    code, output = run(["--mathlib", "bench", "--starts", "reachable"])
    assert code == 2 and "--starts is for rewrite chains" in output


def test_the_typed_manifest_reads_back_what_certify_wrote(tier1, tier2, tmp_path):
    from chains.manifest import DatasetError, Manifest, load_manifest
    from chains.rewrite.space import domain_of
    for out in (tier1, tier2):
        raw = json.loads((out / "manifest.json").read_text())
        manifest = load_manifest(out)
        assert manifest.to_json() == raw and Manifest.from_json(manifest.to_json()) == manifest
        assert "start_walk" not in raw and "tier2_weight" not in raw and "probes" not in raw
        assert "starts" not in raw and "start_sampling" not in raw and manifest.starts == "start"
    assert domain_of(manifest.to_json(), "m").tier == 2 and manifest.checker == "elaborator"
    old = {k: v for k, v in raw.items() if k not in ("checker", "phase_seconds")}  # a manifest from before either
    assert Manifest.from_json(old).checker == "elaborator" and Manifest.from_json(old).phase_seconds is None
    with pytest.raises(DatasetError, match="no lean_processes"):
        Manifest.from_json({k: v for k, v in raw.items() if k != "lean_processes"}, "m.json")
    with pytest.raises(DatasetError, match="core_hash is '7', not a string"):
        Manifest.from_json({**raw, "core_hash": 7}, "m.json")

"""Held-out protocols (``certify --hold-out``): the sampling holds what it promises, from the seed
alone; the manifest records it; ``--verify`` recomputes it from the files and names the place of a
training chain or partner that holds a held-out item."""
import hashlib
import json
import shutil

import pytest
from hypothesis import given, settings, strategies as st

from chains.holdout import HoldOut, HoldOutRefused
from chains.manifest import Manifest, load_manifest, manifest_bytes, manifest_text
from chains.rewrite.holdout import HeldOut, choose, domain_events, sample_split
from chains.rewrite.rules import Event
from chains.rewrite.space import Domain, StateSpace
from chains.seeds import split_rng
from conftest import run_certify as run

DOMAIN = Domain(4, 1)


def sampled(protocol: HoldOut, seed: int, chains: int = 300, test_lengths=(2, 8, 16)):
    """(held, training samples, {length: test samples}) of a tiny dataset's splits under ``protocol``."""
    held = choose(protocol, DOMAIN, seed)
    space = StateSpace(DOMAIN)
    train = sample_split(space, split_rng(seed, "train"), chains, 8, 2, held, True)
    tests = {n: sample_split(space, split_rng(seed, f"test-{n}"), 16, n, 2, held, False) for n in test_lengths}
    return held, train, tests


def check_protocol(held: HeldOut, train, tests) -> None:
    for sample in train:
        assert held.first_held(sample.chain.events) is None
        assert all(held.first_held(mate.events) is None for mate in sample.partners)
        assert all(mate.end == sample.chain.end for mate in sample.partners)
    for length, samples in tests.items():
        for sample in samples:
            assert len(sample.chain.events) == length
            assert held.first_held(sample.chain.events) is not None
            assert all(mate.end == sample.chain.end for mate in sample.partners)


def as_text(samples) -> list:
    return [(sample.chain.states, sample.chain.events, [(m.states, m.events) for m in sample.partners])
            for sample in samples]


@pytest.mark.parametrize("protocol", [HoldOut("events", 4), HoldOut("pairs", 4)])
def test_training_never_holds_a_held_out_item_and_every_test_chain_does(protocol):
    held, train, tests = sampled(protocol, seed=0)
    assert len(held.events or held.pairs) == 4
    check_protocol(held, train, tests)
    trained = {event for sample in train for event in sample.chain.events}
    assert {e.rule for e in trained} == set(DOMAIN.rules)
    assert {e.path for e in trained} == set(DOMAIN.positions)
    if protocol.kind == "events":
        assert not set(held.events) & trained
    else:
        assert all(a != b and b != a.inverse for a, b in held.pairs)


@pytest.mark.parametrize("protocol", [HoldOut("events", 4), HoldOut("pairs", 4)])
def test_the_same_seed_gives_the_same_samples(protocol):
    first, second, other = sampled(protocol, 3, 40), sampled(protocol, 3, 40), sampled(protocol, 4, 40)
    assert first[0] == second[0]
    assert as_text(first[1]) == as_text(second[1])
    assert all(as_text(first[2][n]) == as_text(second[2][n]) for n in first[2])
    assert as_text(first[1]) != as_text(other[1])


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 10**6), kind=st.sampled_from(["events", "pairs"]), count=st.integers(1, 6))
def test_every_seed_keeps_the_protocol(seed, kind, count):
    held, train, tests = sampled(HoldOut(kind, count), seed, chains=60, test_lengths=(2, 8))
    check_protocol(held, train, tests)
    events = domain_events(DOMAIN)
    kept = [e for e in events if e not in set(held.events)]
    assert {e.rule for e in kept} == set(DOMAIN.rules) and {e.path for e in kept} == set(DOMAIN.positions)


def test_the_protocol_text_parses_and_bad_text_is_refused():
    assert HoldOut.parse("events:3") == HoldOut("events", 3) and str(HoldOut("events", 3)) == "events:3"
    assert HoldOut.parse("pairs:1") == HoldOut("pairs", 1) and HoldOut.parse("states") == HoldOut("states")
    for text in ("events", "events:0", "events:x", "states:2", "pair:2", "", "pairs:-1"):
        with pytest.raises(ValueError):
            HoldOut.parse(text)


def test_more_events_than_the_domain_can_spare_are_refused():
    events = domain_events(DOMAIN)
    assert len(events) == 26  # 6 rules at the root and its children, the two commutativities below
    with pytest.raises(HoldOutRefused, match="choose fewer"):
        choose(HoldOut("events", 26), DOMAIN, 0)
    with pytest.raises(HoldOutRefused, match="choose fewer"):
        choose(HoldOut("pairs", 10_000), DOMAIN, 0)


def test_the_manifest_field_is_written_only_when_given_and_reads_back():
    values = dict(atoms=4, tier=1, max_size=None, rules=("add_comm",), trees=960, classes=52, trees_counted="x",
                  seed=0, chains=1, length=1, partners=0, test_lengths=(8,), test_chains=1, steps=1,
                  steps_by_rule={"add_comm": 1}, distinct_steps=1, equivalences=0, distinct_equivalences=0,
                  files={"train.jsonl": {"chains": 1, "sha256": "0" * 64}}, kernel_checked=1, certified=1, failed=0,
                  lean_processes=1, lean={"githash": "0" * 40}, core_hash="0" * 64, checker="elaborator",
                  package_version="0", store="s.sqlite")
    assert "holdout" not in Manifest(**values).to_json()
    field = choose(HoldOut("pairs", 2), DOMAIN, 0).manifest_field(480, 960, {"test-8": 3})
    assert field["visited_share"] == 0.5 and field["unseen_end_chains"] == {"test-8": 3}
    assert all(isinstance(p, list) and len(p) == 2 and Event.parse(p[0]) for p in field["pairs"])
    typed = Manifest(**values, holdout=field)
    assert Manifest.from_json(json.loads(manifest_text(typed))) == typed


# ---- with the real Lean: certify, verify, and a tampered copy refused ----

TINY = ["--chains", "40", "--test-chains", "8", "--test-lengths", "8,16", "--jobs", "1"]


@pytest.fixture(scope="module")
def certified(tmp_path_factory, store):
    """protocol text -> its tiny dataset (made on first use)."""
    made = {}

    def make(protocol: str | None):
        if protocol not in made:
            out = tmp_path_factory.mktemp("data") / (protocol or "plain").replace(":", "-")
            code, output = run([*TINY, *(["--hold-out", protocol] if protocol else []), "--out", str(out),
                                "--store", str(store)])
            assert code == 0, output
            made[protocol] = out
        return made[protocol]

    return make


def lines(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


def rewritten(src, tmp_path, edit):
    """A copy of dataset ``src`` whose train.jsonl is ``edit(train records, test-8 records)``, the
    manifest's hash of it updated to match (so only the held-out check can refuse it)."""
    copy = tmp_path / "copy"
    shutil.copytree(src, copy)
    records = lines(copy / "train.jsonl")
    edit(records, lines(copy / "test-8.jsonl"))
    data = "".join(json.dumps(r, separators=(",", ":")) + "\n" for r in records).encode()
    (copy / "train.jsonl").write_bytes(data)
    manifest = json.loads((copy / "manifest.json").read_text())
    manifest["files"]["train.jsonl"]["sha256"] = hashlib.sha256(data).hexdigest()
    (copy / "manifest.json").write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    return copy


def refused(copy) -> str:
    code, output = run(["--verify", str(copy)])
    assert code == 1, output
    assert "Traceback" not in output and len(output.strip().splitlines()) == 1
    return output


def first_held(held: dict, events: list) -> tuple[int, str] | None:
    """(step, the message's words) of the first held-out item of ``events`` as the manifest's
    ``holdout`` names them, or None."""
    if held["kind"] == "events":
        k = next((k for k, e in enumerate(events) if e in held["events"]), None)
        return None if k is None else (k, f"held-out event {events[k]}")
    pairs = {tuple(p) for p in held["pairs"]}
    k = next((k for k in range(1, len(events)) if (events[k - 1], events[k]) in pairs), None)
    return None if k is None else (k, f"held-out pair {events[k - 1]} then {events[k]}")


@pytest.mark.parametrize("protocol", ["events:2", "pairs:2"])
def test_a_held_out_dataset_records_its_protocol_and_verifies(certified, protocol):
    out = certified(protocol)
    manifest = json.loads((out / "manifest.json").read_text())
    held = manifest["holdout"]
    kind = protocol.split(":")[0]
    assert held["kind"] == kind and len(held[kind]) == 2 and held["protocol"]
    assert set(held["unseen_end_chains"]) == {"test-8", "test-16"}
    visited = set()
    for record in lines(out / "train.jsonl"):
        for history in (record, *record["partners"]):
            assert first_held(held, history["events"]) is None
            visited.add(history["start"])  # (a subset of the trees visited)
    for name in ("test-8.jsonl", "test-16.jsonl"):
        assert all(first_held(held, record["events"]) for record in lines(out / name))
    assert 0 < len(visited) <= held["visited_trees"] < 960
    assert held["visited_share"] == round(held["visited_trees"] / 960, 6)
    assert manifest_text(load_manifest(out)).encode() == manifest_bytes(out)
    code, output = run(["--verify", str(out)])
    assert code == 0, output


@pytest.mark.parametrize("protocol", ["events:2", "pairs:2"])
def test_verify_names_a_training_chain_holding_a_held_out_item(certified, protocol, tmp_path):
    out = certified(protocol)
    held = json.loads((out / "manifest.json").read_text())["holdout"]

    def put_a_test_chain_at_line_17(train, test):
        train[16] = {**test[0], "id": "train-00016"}

    output = refused(rewritten(out, tmp_path, put_a_test_chain_at_line_17))
    step, what = first_held(held, lines(out / "test-8.jsonl")[0]["events"])
    assert f"train.jsonl line 17 (chain train-00016) step {step}: {what}" in output
    assert output.rstrip().endswith("in a training chain")


@pytest.mark.parametrize("protocol", ["events:2", "pairs:2"])
def test_verify_names_a_training_partner_holding_a_held_out_item(certified, protocol, tmp_path):
    out = certified(protocol)
    held = json.loads((out / "manifest.json").read_text())["holdout"]
    test = lines(out / "test-8.jsonl")[1]

    def put_a_test_chain_in_a_partner(train, _):
        mate = train[4]["partners"][1]
        mate.update({key: test[key] for key in ("start", "events", "end", "certs")})

    output = refused(rewritten(out, tmp_path, put_a_test_chain_in_a_partner))
    step, what = first_held(held, test["events"])
    assert f"train.jsonl line 5 (chain train-00004) partner 1 step {step}: {what}" in output
    assert output.rstrip().endswith("in a training partner")


def test_verify_names_a_test_chain_holding_no_held_out_item(certified, tmp_path):
    out = certified("events:2")
    copy = tmp_path / "copy"
    shutil.copytree(out, copy)
    manifest = json.loads((copy / "manifest.json").read_text())
    taken = set(lines(out / "test-16.jsonl")[0]["events"])
    # hold out, on paper, an event the first chain of test-16 (the first file replayed) does not take
    manifest["holdout"]["events"] = [next(str(e) for e in domain_events(DOMAIN) if str(e) not in taken)]
    (copy / "manifest.json").write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    output = refused(copy)
    assert "test-16.jsonl line 1 (chain test-16-00000): holds no held-out event" in output


def test_states_change_no_sampling_and_verify_checks_the_counts(certified, tmp_path):
    out, plain = certified("states"), certified(None)
    held = json.loads((out / "manifest.json").read_text())["holdout"]
    assert set(held) == {"kind", "visited_trees", "visited_share", "unseen_end_chains", "protocol"}
    assert held["kind"] == "states" and 0 < held["visited_trees"] < 960
    assert all(0 <= n <= 8 for n in held["unseen_end_chains"].values())
    for name in ("train.jsonl", "test-8.jsonl", "test-16.jsonl"):
        assert (out / name).read_bytes() == (plain / name).read_bytes()
    code, output = run(["--verify", str(out)])
    assert code == 0, output
    copy = tmp_path / "copy"
    shutil.copytree(out, copy)
    manifest = json.loads((copy / "manifest.json").read_text())
    manifest["holdout"]["visited_trees"] += 1
    (copy / "manifest.json").write_text(json.dumps(manifest, indent=2, sort_keys=True) + "\n")
    output = refused(copy)
    assert f"holdout visited_trees is {held['visited_trees'] + 1}, the files give {held['visited_trees']}" in output


def test_a_dataset_without_hold_out_has_no_holdout_field(certified):
    manifest = json.loads((certified(None) / "manifest.json").read_text())
    assert "holdout" not in manifest
    assert load_manifest(certified(None)).holdout is None


@pytest.mark.parametrize("args, message", [
    (["--hold-out", "events:0"], "Invalid value for '--hold-out'"),
    (["--hold-out", "sometimes"], "is not events:K, pairs:K or states"),
    (["--hold-out", "pairs:2", "--test-lengths", "1,8"], "test lengths of at least 2"),
    (["--hold-out", "events:2", "--probes"], "do not go together"),
    (["--hold-out", "events:26"], "--hold-out events:26: cannot hold out 26 of the 26 events"),
])
def test_bad_hold_outs_are_usage_errors_and_write_nothing(args, message, tmp_path):
    code, output = run([*TINY, *args, "--out", str(tmp_path / "out")])
    assert code == 2 and message in output, output
    assert not (tmp_path / "out").exists()

"""Probe events and Lean's verdicts on them, against the real Lean binary; the rules referee."""
import hashlib
import itertools
import json
import random
import shutil
from collections.abc import Sequence

import pytest
from click.testing import CliRunner
from hypothesis import given, settings, strategies as st

from chains.manifest import DatasetError
from chains.rewrite.dataset import parse_chain_line
from chains.rewrite.probes import PROBE_KINDS, ProbeSampler, referee
from chains.rewrite.rules import Event, apply, successors, tier_rules
from chains.rewrite.space import Domain, StateSpace
from chains.rewrite.trees import all_trees, parse_polish, polish
from leanbridge.asker import AskConfig
from leanbridge.cli import main
from leanbridge.probing import ProbeBook, RefereeDisagreement
from leanbridge.store import CertificateStore
from leanbridge.verdicts import Accepted, Rejected
from tests.strategies import tier1_trees

DOMAIN = Domain()
TINY = ["--chains", "30", "--test-lengths", "8,16", "--test-chains", "6", "--probe-chains", "3", "--jobs", "2",
        "--probes"]


def sample_probes(rng: random.Random, events: Sequence[Event], step: int, domain: Domain,
                  other_chain: Sequence[Event]) -> list[tuple[str, Event]]:
    """The plain reference ``ProbeSampler`` is held to: the five probes of ``step`` of a chain with
    ``events``; ``other_chain`` is the event list of another chain of the split (the random probe is
    drawn from it)."""
    gold = events[step]
    swap_rules = [r for r in domain.rules if r != gold.rule]
    moved = [p for p in domain.positions if p != gold.path]
    return [("gold", gold),
            ("misplaced", _misplaced(rng, events, step)),
            ("swap", Event(rng.choice(swap_rules), gold.path)),
            ("permuted", Event(gold.rule, rng.choice(moved))),
            ("random", rng.choice(other_chain))]


def _misplaced(rng: random.Random, events: Sequence[Event], step: int, tries: int = 8) -> Event:
    """The event of a uniformly random other step, preferring one that differs from the gold
    (a few draws, so that long chains cost no more than short ones)."""
    if len(events) == 1:
        return events[0]
    gold = events[step]
    for _ in range(tries):
        other = events[(step + 1 + rng.randrange(len(events) - 1)) % len(events)]
        if other != gold:
            return other
    different = [e for e in events if e != gold]
    return rng.choice(different) if different else gold


def walk(tree, rng, length):
    events = []
    for _ in range(length):
        event, tree = rng.choice(successors(tree, DOMAIN.rules))
        events.append(event)
    return events


@given(tier1_trees(), tier1_trees(), st.integers(0, 2**32 - 1), st.integers(2, 12))
def test_each_probe_kind_is_built_as_specified(start, other_start, seed, length):
    rng = random.Random(seed)
    events, other = walk(start, rng, length), walk(other_start, rng, 5)
    for t in range(length):
        probes = dict(sample_probes(rng, events, t, DOMAIN, other))
        assert list(probes) == list(PROBE_KINDS)
        gold = events[t]
        assert probes["gold"] == gold
        assert probes["misplaced"] in [e for s, e in enumerate(events) if s != t]
        if any(e != gold for s, e in enumerate(events) if s != t):
            assert probes["misplaced"] != gold
        assert probes["swap"].path == gold.path and probes["swap"].rule in DOMAIN.rules
        assert probes["swap"].rule != gold.rule
        assert probes["permuted"].rule == gold.rule and probes["permuted"].path != gold.path
        assert probes["permuted"].path in DOMAIN.positions
        assert probes["random"] in other


@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**32 - 1), st.sampled_from([Domain(4, 1), Domain(4, 2), Domain(5, 1)]),
       st.integers(1, 12), st.integers(1, 4))
def test_the_fast_probe_sampler_draws_what_sample_probes_draws(seed, domain, length, other_length):
    space = StateSpace(domain)
    walk_rng = random.Random(seed)
    chains = []
    for n in (length, other_length):
        here, ids = space.random_start(walk_rng), []
        for _ in range(n):
            events, nexts = space.moves(here)
            r = walk_rng.randrange(len(events))
            ids.append(events[r])
            here = nexts[r]
        chains.append(ids)
    ids, other = chains
    for make in (random.Random, _OtherRandom):  # CPython's draws inlined, and any generator's
        slow_rng, fast = make(seed + 1), ProbeSampler(space, make(seed + 1))
        for t in range(length):
            slow = sample_probes(slow_rng, [space.events[i] for i in ids], t, domain,
                                 [space.events[i] for i in other])
            assert [(kind, space.events[i]) for kind, i in zip(PROBE_KINDS, fast.sample(ids, t, other))] == slow
        assert slow_rng.random() == fast.rng.random()  # the same number of draws


class _OtherRandom(random.Random):
    def choice(self, seq):
        return super().choice(seq)


def every_event(max_depth=3):
    paths = ["".join(bits) for d in range(max_depth + 1) for bits in itertools.product("01", repeat=d)]
    return [Event(rule, path) for rule in tier_rules(2) for path in paths]


def test_lean_and_the_referee_agree_on_every_kind_of_answer(lean, core):
    """Every rule at every path to depth 3 (leaves and positions beyond the tree included) on
    trees of both tiers: Lean's verdicts agree with the rules, every class occurs."""
    trees = list(all_trees("abcd"))[::97] + [parse_polish(t, "abcd") for t in
                                             ("* a + b c", "+ * a b * a c", "* + a b c", "+ * a c * b c")]
    book = ProbeBook(lean, core, ("a", "b", "c", "d"))
    for tree in trees:
        for event in every_event():
            book.add(tree, tree, event, lambda: f"{tree} {event}")
    with CertificateStore(":memory:", core.hash, lean.githash) as store:
        checked, _ = book.ask(store, AskConfig(jobs=2), lambda *a: None)  # raises on any disagreement
        assert checked == len(book)
        again = ProbeBook(lean, core, ("a", "b", "c", "d"))
        for probe in book.probes:
            again.add(probe.tree, probe.tree, probe.event, lambda: "again")
        assert again.ask(store, AskConfig(jobs=2), lambda *a: None)[0] == 0  # answered from the store
        assert again.answers == book.answers
    classes = {a.error_class for a in book.answers if isinstance(a, Rejected)}
    assert classes == {"leaf", "operator", "pattern"}
    accepted = [(p, a) for p, a in zip(book.probes, book.answers) if a.accepted]
    assert {p.event.rule for p, _ in accepted} == set(tier_rules(2))
    assert all(a.tree == apply(p.tree, p.event) for p, a in accepted)
    outside = [a for p, a in zip(book.probes, book.answers) if len(p.event.path) == 3]
    assert outside and all(isinstance(a, Rejected) and a.error_class == "leaf" for a in outside)


def test_a_disagreement_with_the_referee_names_the_probe(lean, core):
    tree = parse_polish("+ a * b c", "abcd")
    book = ProbeBook(lean, core, ("a", "b", "c", "d"))
    book.add(tree, tree, Event("mul_comm", "1"), lambda: "train.jsonl chain train-00007 step 3 probe swap")
    book.answers[0] = Accepted(parse_polish("+ a * c b", "abcd"))
    book.check_against_referee()
    book.answers[0] = Accepted(parse_polish("+ * c b a", "abcd"))  # a wrong tree
    with pytest.raises(RefereeDisagreement, match="chain train-00007 step 3 probe swap"):
        book.check_against_referee()
    book.answers[0] = Rejected("pattern", "…")  # a rejection where the rule applies
    with pytest.raises(RefereeDisagreement, match="the rules say accepted"):
        book.check_against_referee()


@settings(max_examples=200)
@given(tier1_trees(), st.sampled_from(every_event(4)))
def test_the_referee_reads_the_rules(tree, event):
    after, why = referee(tree, event)
    assert (after is None) == (why is not None)
    assert after == apply(tree, event)


@pytest.fixture(scope="module")
def probed(tmp_path_factory):
    out = tmp_path_factory.mktemp("data") / "probed"
    store = tmp_path_factory.mktemp("store") / "s.sqlite"
    # the elaborator route, named: PROBED_SHA256 pins its bytes (its certificate ids are not the kernel route's)
    result = CliRunner().invoke(main, [*TINY, "--checker", "elaborator", "--out", str(out), "--store", str(store)],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    return out


def records(path):
    return [json.loads(line) for line in path.read_text().splitlines()]


# sha256 of each file of the probed fixture's dataset as main wrote it before the probes were
# sampled and written per distinct probe (commit 1d95d02): see tests/test_certify.py.
PROBED_SHA256 = {"train.jsonl": "0a46312178a59ebca0dc8c2636262e6dc58e88ea88f012df43b5d4f814835589",
                 "test-8.jsonl": "47f682b180d0e015e7bf408309d56dd5cb9a292a09e2a95723376d856e7a8f2c",
                 "test-16.jsonl": "f8be378e60985c4819d1c938c73179273d5aca6b5253915895f2771f570c51d3"}


def test_probed_datasets_keep_their_bytes(probed):
    assert {f.name: hashlib.sha256(f.read_bytes()).hexdigest() for f in probed.glob("*.jsonl")} == PROBED_SHA256


def test_the_default_kernel_route_writes_the_same_probed_bytes_twice(probed, tmp_path):
    from leanbridge.checker import Checker
    for n in (1, 2):  # two stores: the second run asks Lean everything again
        result = CliRunner().invoke(main, [*TINY, "--out", str(tmp_path / f"k{n}"), "--store",
                                           str(tmp_path / f"s{n}.sqlite")], catch_exceptions=False)
        assert result.exit_code == 0, result.output
    assert json.loads((tmp_path / "k1" / "manifest.json").read_text())["checker"] == Checker.KERNEL.identity
    for name in PROBED_SHA256:
        assert (tmp_path / "k1" / name).read_bytes() == (tmp_path / "k2" / name).read_bytes(), name
        # the probes go to the elaborator on either route: the same verdicts as the pinned dataset's
        assert [r.get("probes") for r in records(tmp_path / "k1" / name)] == \
            [r.get("probes") for r in records(probed / name)]


def test_probes_are_in_every_training_chain_and_the_first_test_chains(probed):
    manifest = json.loads((probed / "manifest.json").read_text())
    assert manifest["test_lengths"] == [8, 16]
    train = records(probed / "train.jsonl")
    assert all(len(r["probes"]) == len(r["events"]) for r in train)
    test = records(probed / "test-16.jsonl")
    assert [("probes" in r) for r in test] == [True] * 3 + [False] * 3
    counts = manifest["probes"]["by_kind"]
    assert set(counts) == set(PROBE_KINDS)
    assert manifest["probes"]["probes"] == sum(sum(c.values()) for c in counts.values()) == 5 * (30 * 8 + 3 * 8 + 3 * 16)
    assert manifest["probes"]["referee_disagreements"] == 0
    assert counts["gold"].get("complete", 0) >= 30 + 3 + 3  # the last gold event closes every chain
    assert set(counts["gold"]) == {"accepted", "complete"}
    for r in train:  # complete means: accepted onto the chain's end tree
        end = r["end"]
        tree = parse_polish(r["start"], "abcd")
        for event, probes in zip(r["events"], r["probes"]):
            for kind, text, verdict in probes:
                after = apply(tree, Event.parse(text))
                assert verdict.startswith("rejected") == (after is None)
                if after is not None:
                    assert (verdict == "complete") == (polish(after) == end)
            tree = apply(tree, Event.parse(event))


def test_verify_confirms_probes_and_fails_on_a_flipped_verdict(probed, tmp_path):
    result = CliRunner().invoke(main, ["--verify", str(probed)])
    assert result.exit_code == 0 and "probe verdicts confirmed by Lean" in result.output
    copy = tmp_path / "flipped"
    shutil.copytree(probed, copy)
    train = records(copy / "train.jsonl")
    kind, event, verdict = train[2]["probes"][4][1]
    train[2]["probes"][4][1][2] = "accepted" if verdict.startswith("rejected") else "rejected:leaf"
    (copy / "train.jsonl").write_text("".join(json.dumps(r, separators=(",", ":")) + "\n" for r in train))
    result = CliRunner().invoke(main, ["--verify", str(copy)])
    assert result.exit_code != 0
    assert "train-00002) step 4 probe 1" in result.output and f"Lean says {verdict}" in result.output
    assert "Traceback" not in result.output


@pytest.mark.parametrize("edit, message", [
    (lambda p: p[0].append(["gold", "add_comm@", "maybe"]), "verdict 'maybe'"),
    (lambda p: p[1].__setitem__(0, ["guess", "add_comm@", "accepted"]), "unknown probe kind"),
    (lambda p: p[2].__setitem__(0, ["gold", "add_comm@2", "accepted"]), "position other than 0s and 1s"),
    (lambda p: p.pop(), "one entry per step"),
])
def test_malformed_probes_are_refused_with_their_place(probed, edit, message):
    record = records(probed / "train.jsonl")[0]
    edit(record["probes"])
    with pytest.raises(DatasetError, match=message) as caught:
        parse_chain_line(json.dumps(record), DOMAIN, "train.jsonl line 1")
    assert "train.jsonl line 1 (chain train-00000)" in str(caught.value)

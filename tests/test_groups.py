"""Group word problems as a shipped domain on the generic route (``chains.groups``), and the one
registry of domains (``chains.domains``): the group laws and the domain contract as properties,
then ``certify --domain groups`` with the real Lean binary, its verification, the kernel refusing
false claims, the held-out protocols, and a tracker trained, streamed, analysed and searched with on
group words."""
from __future__ import annotations

import json
import random
import re

import pytest
from click.testing import CliRunner
from held_out import check_held_out
from hypothesis import given, settings, strategies as st

from chains import domains
from chains.domains import domain_of_manifest, own_domain, register, registered, resolve
from chains.groups import GROUPS, S5, GroupDomain, group_domain, import_path
from chains.groups.group import identity, inverse, parity, product
from chains.imported.load import DomainImportError
from chains.manifest import DOMAIN_FORMAT, FORMAT_VERSION, PROGRAMS_FORMAT, read_manifest
from chains.protocol import KernelEvaluated, ShortHistories, StateDomain, run_events
from leanbridge.cli import main as certify
from leanbridge.domain_lean import build_domain_module, check_statements, equivalence_statement, step_statement
from leanbridge.verdicts import Complete, Rejected
from prover.cli import main as prove
from tracker.analysis_cli import main as analyse_tracker
from tracker.cli import main as train_tracker
from tracker.stream_cli import main as evaluate_tracker

EVERY = [group_domain(name, distractor) for name in GROUPS for distractor in (False, True)]
ORDERS = {"S5": 120, "A5": 60, "S3xS3": 36}
SMALL = ["--chains", "40", "--length", "6", "--test-lengths", "8,32", "--test-chains", "6", "--jobs", "1"]


class LyingS5(GroupDomain):
    """Python's reading says s0 swaps positions 1 and 2; the Lean module says 0 and 1."""

    name = "lying-groups"

    def apply(self, state, event):
        return product(state, (0, 2, 1, 3, 4)) if event == "s0" else super().apply(state, event)

    def sample_partner(self, rng, start, events):
        return start, list(events)


class Impostor(GroupDomain):
    """A module of one's own taking the shipped name."""


def lying_s5() -> LyingS5:
    return LyingS5(GROUPS["S5"])


def impostor() -> Impostor:
    return Impostor(GROUPS["S5"])


def _word(domain, data, max_size=40) -> list[str]:
    return data.draw(st.lists(st.sampled_from(domain.events), max_size=max_size))


def _element(domain, data):
    return data.draw(st.sampled_from(domain.group.cayley.elements))


# the group and its action


@pytest.mark.parametrize("name", GROUPS)
def test_each_group_has_its_order_and_its_kind_of_element(name):
    cayley = GROUPS[name].cayley
    assert cayley.order == ORDERS[name]
    if name == "A5":
        assert all(parity(p) == 0 for p in cayley.elements)
    if name == "S3xS3":  # the two factors keep their points
        assert all(set(p[:3]) == {0, 1, 2} for p in cayley.elements)


@settings(max_examples=60)
@given(data=st.data())
def test_apply_is_a_right_action_and_a_word_s_state_is_the_product_of_its_generators(data):
    domain = data.draw(st.sampled_from(EVERY))
    start, u, v = _element(domain, data), _word(domain, data), _word(domain, data)

    def element(word):  # the product of a word's generators (id: the identity)
        out = identity(domain.group.points)
        for event in word:
            if event != "id":
                out = product(out, domain.group.generator(event))
        return out

    end = run_events(domain, start, [*u, *v])[-1] if u or v else start
    middle = run_events(domain, start, u)[-1] if u else start
    assert end == (run_events(domain, middle, v)[-1] if v else middle)  # act(act(p, u), v) = act(p, uv)
    assert end == product(start, element([*u, *v])) == product(product(start, element(u)), element(v))
    assert (run_events(domain, identity(domain.group.points), u)[-1] if u else identity(domain.group.points)) \
        == element(u)
    for event in domain.events:  # every event permutes the group: it has an inverse among the words
        after = domain.apply(start, event)
        assert after in domain.group.cayley.index
        back = domain.short_history(after, start)
        assert (run_events(domain, after, back)[-1] if back else after) == start


@settings(max_examples=60)
@given(data=st.data(), seed=st.integers(0, 2**32 - 1))
def test_partners_end_at_the_same_element_and_reduced_forms_are_shortest(data, seed):
    domain = data.draw(st.sampled_from(EVERY))
    rng = random.Random(seed)
    start = domain.start_state(rng)
    events = domain.sample_events(rng, start, data.draw(st.integers(0, 30)))
    end = run_events(domain, start, events)[-1] if events else start
    for _ in range(3):
        partner_start, partner = domain.sample_partner(rng, start, events)
        assert partner_start == start
        assert (run_events(domain, start, partner)[-1] if partner else start) == end
    reduced = domain.reduced(events)
    assert len(reduced) == domain.group.cayley.distance[end] and "id" not in reduced
    assert (run_events(domain, start, reduced)[-1] if reduced else start) == end
    assert domain.reduced(reduced) == reduced
    other = _element(domain, data)
    short = domain.short_history(other, end)
    assert (run_events(domain, other, short)[-1] if short else other) == end
    assert len(short) == domain.group.cayley.distance[product(inverse(other), end)]


def test_partners_come_in_every_length_the_reduced_forms_among_them():
    rng = random.Random(0)
    events = S5.sample_events(rng, S5.start_state(rng), 12)
    lengths = {len(S5.sample_partner(rng, S5.start_state(rng), events)[1]) for _ in range(400)}
    assert len(S5.reduced(events)) in lengths and max(lengths) > len(events) and len(lengths) > 8


@settings(max_examples=60)
@given(data=st.data())
def test_the_readout_and_the_text_read_back_and_nothing_else_is_read(data):
    domain = data.draw(st.sampled_from(EVERY))
    state = _element(domain, data)
    assert domain.state_of_classes(domain.state_classes(state)) == state
    assert domain.parse_state(domain.state_text(state)) == state
    assert len(domain.state_classes(state)) == len(domain.readout())
    assert set(domain.start_tokens(state)) <= set(domain.vocabulary())
    for event in domain.events:
        assert domain.parse_event(domain.event_text(event)) == event
    outside = data.draw(st.permutations(range(domain.group.points)))
    if tuple(outside) not in domain.group.cayley.index:  # a permutation outside the group
        with pytest.raises(ValueError, match="not an element"):
            domain.state_of_classes(outside)
    for wrong in ([0] * domain.group.points, [domain.group.points] * domain.group.points, []):
        with pytest.raises(ValueError) as refused:
            domain.state_of_classes(wrong)
        assert "\n" not in str(refused.value)
    with pytest.raises(ValueError):
        domain.parse_state(domain.state_text(state) + "0")
    with pytest.raises(ValueError):
        domain.parse_event("s9" if domain.group.name != "A5" else "c7")


@settings(max_examples=40)
@given(data=st.data())
def test_lean_statements_name_only_what_the_group_s_module_declares(data):
    domain = data.draw(st.sampled_from(EVERY))
    assert isinstance(domain, StateDomain) and isinstance(domain, KernelEvaluated)
    assert isinstance(domain, ShortHistories)
    ns = domain.lean_namespace()
    source = domain.lean_source()
    assert source.startswith("prelude\nimport Core\n") and "sorry" not in source and "axiom" not in source
    declared = {"Eq", "rfl", f"{ns}.step", f"{ns}.Elem.mk", *(f"{ns}.Pt.x{i}" for i in range(domain.group.points)),
                *(f"{ns}.Gen.{name}" for name, _ in domain.group.generators), f"{ns}.Gen.id"}
    ctors = re.search(r"inductive Gen where\n  \| (.*)\n", source).group(1).split(" | ")
    assert {f"{ns}.Gen.{c}" for c in ctors} <= declared
    start, u, v = _element(domain, data), _word(domain, data, 8), _word(domain, data, 8)
    statements = [equivalence_statement(domain, start, u, start, v)]
    if u:
        statements.append(step_statement(domain, start, u[0], domain.apply(start, u[0])))
    for statement in statements:
        names = set(re.findall(r"[A-Za-z_][A-Za-z0-9_.]*", statement.text))
        assert names <= declared, names - declared
    with pytest.raises(ValueError):
        domain.lean_event("s0 s1")  # a text that is no event never reaches a Lean file


# the registry


@settings(max_examples=30)
@given(name=st.sampled_from(registered()), data=st.data())
def test_every_registered_name_resolves_and_a_manifest_resolves_back_to_an_equal_domain(name, data):
    assert isinstance(resolve(name), StateDomain)
    if name == "rewrite":
        tier = data.draw(st.sampled_from([1, 2]))
        domain = resolve(name, atoms=data.draw(st.integers(2, 6)), tier=tier)
        manifest = {"format": FORMAT_VERSION, **{k: v for k, v in domain.describe().items() if k != "name"}}
        assert domain_of_manifest(manifest, "m").describe() == domain.describe()
    elif name == "programs":
        domain = resolve(name, values=data.draw(st.sampled_from([2, 16])))
        manifest = {"format": PROGRAMS_FORMAT, "domain": domain.describe()}
        assert domain_of_manifest(manifest, "m").describe() == domain.describe()
    else:
        group, distractor = data.draw(st.sampled_from(list(GROUPS))), data.draw(st.booleans())
        domain = resolve(name, group=group, distractor=distractor)
        manifest = {"format": DOMAIN_FORMAT, "domain": {**domain.describe(), "import": import_path(group, distractor)}}
        assert domain_of_manifest(manifest, "m").domain == domain == own_domain(import_path(group, distractor))


def test_the_registry_refuses_what_names_no_domain_in_one_line(monkeypatch):
    for spec, params, why in [("nothing", {}, "neither a shipped domain"), ("groups", {"group": "S7"}, "not a group"),
                              ("groups", {"colour": 1}, "colour"), ("chains.groups:S5", {"distractor": True},
                                                                    "takes no parameters")]:
        with pytest.raises(DomainImportError, match=why) as refused:
            resolve(spec, **params)
        assert "\n" not in str(refused.value)
    with pytest.raises(DomainImportError, match="other than the shipped domains"):
        own_domain("test_groups:impostor")  # a module of one's own cannot take the name groups
    monkeypatch.setattr(domains, "_REGISTRY", dict(domains._REGISTRY))
    register("dial", "dial_domain:Dial")
    assert resolve("dial").name == "dial" and registered()[-1] == "dial"
    register("gone", "no_such_module_here:make")
    with pytest.raises(DomainImportError, match="cannot be imported"):
        resolve("gone")
    with pytest.raises(ValueError, match="taken"):
        register("groups", "dial_domain:Dial")
    with pytest.raises(ValueError, match="cannot name"):
        register("a:b", "dial_domain:Dial")


# certified by the real Lean binary


def _certify(args: list[str]):
    return CliRunner().invoke(certify, args)


@pytest.fixture(scope="module")
def s5(tmp_path_factory):
    """A small certified S5 dataset from an empty store, and the store."""
    root = tmp_path_factory.mktemp("s5")
    result = _certify(["--domain", "groups", "--group", "S5", *SMALL, "--out", str(root / "data"),
                       "--store", str(root / "store.sqlite")])
    assert result.exit_code == 0, result.output
    return root


def test_certify_groups_writes_every_word_with_its_partners_certified(s5):
    manifest = read_manifest(s5 / "data")
    assert manifest["format"] == DOMAIN_FORMAT and manifest["failed"] == 0 and manifest["certificate"] == "step"
    assert manifest["domain"] == {**S5.describe(), "import": "chains.groups:S5"}
    assert manifest["certified"] == manifest["kernel_checked"] == (manifest["distinct_steps"]
                                                                   + manifest["distinct_equivalences"])
    assert manifest["distinct_steps"] <= 120 * 4 and manifest["equivalences"] == 2 * (40 + 2 * 6)
    assert manifest["files"]["train.jsonl"]["chains"] == 40 and manifest["files"]["test-32.jsonl"]["chains"] == 6
    domain = domain_of_manifest(manifest, "here")
    assert domain.domain == S5
    steps = 0
    for name in ("train.jsonl", "test-8.jsonl", "test-32.jsonl"):
        for line in (s5 / "data" / name).read_text().splitlines():
            (start, events), partners = domain.record_histories(domain.parse_record(line, name))
            end = run_events(S5, start, events)[-1]
            assert start == identity(5) and all(run_events(S5, s, e)[-1] == end for s, e in partners if e)
            steps += len(events) + sum(len(e) for _, e in partners)
    assert steps == manifest["steps"]
    verified = _certify(["--verify", str(s5 / "data"), "--jobs", "1"])
    assert verified.exit_code == 0, verified.output
    assert "distinct theorems certified by Lean" in verified.output


def test_the_kernel_rejects_a_wrong_element_and_a_false_equivalence(lean):
    module = build_domain_module(S5, lean)
    e = identity(5)
    swapped = S5.apply(e, "s0")
    answers = check_statements(module, [
        step_statement(S5, e, "s0", swapped),  # true
        equivalence_statement(S5, e, ["s0", "s1", "s0"], e, ["s1", "s0", "s1"]),  # the braid relation: true
        step_statement(S5, e, "s0", S5.apply(e, "s1")),  # a wrong claimed element
        equivalence_statement(S5, e, ["s0", "s1"], e, ["s1", "s0"]),  # s0 and s1 do not commute
    ], lean)
    assert [type(a) for a in answers] == [Complete, Complete, Rejected, Rejected]


def test_a_step_python_reads_otherwise_than_lean_is_rejected_and_nothing_written(tmp_path):
    result = _certify(["--domain", "test_groups:lying_s5", *SMALL, "--out", str(tmp_path / "lying"),
                       "--store", str(tmp_path / "s.sqlite")])
    assert result.exit_code == 1 and "Lean rejected" in result.output
    assert not (tmp_path / "lying").exists()


def test_the_distractor_is_an_option_and_the_manifest_rebuilds_the_domain(tmp_path):
    out = tmp_path / "a5"
    result = _certify(["--domain", "groups", "--group", "A5", "--distractor", *SMALL, "--out", str(out),
                       "--store", str(tmp_path / "s.sqlite")])
    assert result.exit_code == 0, result.output
    manifest = read_manifest(out)
    assert manifest["domain"]["import"] == "chains.groups:A5_distractor" and manifest["domain"]["distractor"]
    assert domain_of_manifest(manifest, "here").domain == group_domain("A5", distractor=True)
    assert any("id" in json.loads(line)["events"] for line in (out / "train.jsonl").read_text().splitlines())
    without = _certify(["--domain", "groups", "--group", "A5", *SMALL, "--out", str(out),
                        "--store", str(tmp_path / "s.sqlite")])
    assert without.exit_code == 1 and "made with other settings" in without.output


@pytest.mark.parametrize("args, why", [
    (["--group", "A5"], "--group goes with --domain groups"),
    (["--domain", "groups", "--tier", "2"], "--tier is for rewrite chains, not for --domain groups"),
    (["--domain", "groups", "--corrupt-partners", "near:0.1"],
     "--corrupt-partners is for rewrite chains, not for --domain groups"),
    (["--domain", "groups", "--checker", "kernel"], "--checker is for rewrite chains, not for --domain groups"),
    (["--domain", "groups", "--values", "16"], "--values goes with --domain programs"),
    (["--domain", "groups", "--cluster", "auto"], "--cluster is not for --domain groups"),
    (["--domain", "groups", "--group", "S7"], "'S7' is not one of"),
])
def test_options_that_do_not_fit_are_refused_in_one_line(args, why, tmp_path):
    result = _certify([*args, "--out", str(tmp_path / "x")])
    assert result.exit_code == 2 and why in result.output and not (tmp_path / "x").exists()


@pytest.mark.parametrize("protocol", ["events:1", "pairs:2", "states"])
def test_held_out_protocols_keep_training_clear_and_every_test_word_holding_it(protocol, tmp_path):
    out = tmp_path / "held"
    result = _certify(["--domain", "groups", "--group", "S5", *SMALL, "--hold-out", protocol, "--out", str(out),
                       "--store", str(tmp_path / "s.sqlite")])
    assert result.exit_code == 0, result.output
    holdout = read_manifest(out)["holdout"]
    assert holdout["kind"] == protocol.split(":")[0] and holdout["visited_states"] <= 120
    held_events = set(holdout.get("events", []))
    held_pairs = {tuple(p) for p in holdout.get("pairs", [])}
    assert len(held_events) == (1 if protocol == "events:1" else 0) and len(held_pairs) == (2 if protocol == "pairs:2"
                                                                                            else 0)
    check_held_out(out, holdout, protocol, ("train.jsonl", "test-8.jsonl", "test-32.jsonl"))
    verified = _certify(["--verify", str(out), "--jobs", "1"])
    assert verified.exit_code == 0, verified.output


def test_a_protocol_the_group_cannot_satisfy_is_refused_in_one_line(tmp_path):
    # a uniform word of 6 of S5's four generators avoids three of them once in 4,096 draws, far past the
    # sampler's 1,000 tries
    result = _certify(["--domain", "groups", "--group", "S5", *SMALL, "--hold-out", "events:3", "--out",
                       str(tmp_path / "x"), "--store", str(tmp_path / "s.sqlite")])
    assert result.exit_code == 2 and "--hold-out events:3" in result.output and not (tmp_path / "x").exists()


def test_self_distillation_takes_the_group_s_shortest_words(s5, tmp_path):
    from stepwise.cli import main as train_stepwise

    distilled = CliRunner().invoke(train_stepwise, [
        "--data", str(s5 / "data"), "--objective", "self-distill", "--steps", "6", "--rounds", "1", "--round-steps",
        "2", "--set", "long_chains=1", "--set", "cuts=2", "--eval-lengths", "8", "--eval-chains", "2",
        "--store", str(s5 / "store.sqlite"), "--out", str(tmp_path / "sd"), "--threads", "1", "--quiet"])
    assert distilled.exit_code == 0, distilled.output
    assert set(json.loads((tmp_path / "sd" / "report.json").read_text())["final_losses"]) == {"ce", "distill"}


@pytest.mark.parametrize("args, typed", [(["--schedule", "registers"], "--schedule registers"),
                                         (["--set", "layout=paths"], "--set layout=paths"),
                                         (["--ce-positions", "tree"], "--ce-positions tree")])
def test_train_tracker_refuses_what_only_rewrite_chains_take_naming_it(s5, tmp_path, args, typed):
    out = tmp_path / "run"
    result = CliRunner().invoke(train_tracker, ["--data", str(s5 / "data"), *args, "--out", str(out)])
    assert result.exit_code == 2, result.output
    assert result.output == f"Error: {typed} is for rewrite chains; {s5 / 'data'} is a groups dataset\n"
    assert not out.exists()


def test_a_tracker_trains_on_group_words_and_every_command_reads_the_dataset(s5, tmp_path):
    run = tmp_path / "run"
    trained = CliRunner().invoke(train_tracker, ["--data", str(s5 / "data"), "--steps", "30", "--objective", "combo",
                                                 "--out", str(run), "--threads", "1", "--quiet"])
    assert trained.exit_code == 0, trained.output
    report = json.loads((run / "report.json").read_text())
    assert report["dataset"]["domain"]["import"] == "chains.groups:S5" and set(report["exact"]) == {"8", "32"}
    streamed = CliRunner().invoke(evaluate_tracker, [str(run), "--lengths", "16", "--chains", "2",
                                                     "--store", str(s5 / "store.sqlite"), "--threads", "1", "--quiet"])
    assert streamed.exit_code == 0, streamed.output
    stream = json.loads((run / "stream-s0" / "report.json").read_text())
    assert stream["domain"]["name"] == "groups" and stream["domain"]["group"] == "S5"
    assert stream["certification"]["confirmed_steps"] == stream["certification"]["distinct_steps"] > 0
    analysed = CliRunner().invoke(analyse_tracker, [str(run), "--out", str(tmp_path / "analysis"), "--threads", "1",
                                                    "--quiet"])
    assert analysed.exit_code == 0, analysed.output
    out = tmp_path / "prove"
    proved = CliRunner().invoke(prove, ["--data", str(s5 / "data"), "--tracker", str(run), "--searcher", "imagination",
                                        "--problems", "3", "--distances", "1,2", "--budget-calls", "2", "--jobs", "1",
                                        "--out", str(out)])
    assert proved.exit_code == 0, proved.output
    searched = json.loads((out / "report.json").read_text())
    assert searched["solutions_failing_audit"] == 0 and searched["distance_measure"] == "shortest distance"
    # the group's shortest word, claimed in one call, beside the tracker on the same problems
    baseline = searched["baseline"]
    assert baseline["searcher"] == "short-history" and baseline["solved"] == baseline["problems"] == 6
    assert baseline["kernel_calls"] == 6 and baseline["by_distance"]["2"]["mean_program_length"] == 2
    for problem, result in zip((json.loads(x) for x in (out / "problems.jsonl").read_text().splitlines()),
                               (json.loads(x) for x in (out / "results.jsonl").read_text().splitlines())):
        if result["solved"]:  # a solution multiplies the start to the target, by Python's reading too
            start, target = S5.parse_state(problem["start"]), S5.parse_state(problem["target"])
            assert (run_events(S5, start, result["program"])[-1] if result["program"] else start) == target

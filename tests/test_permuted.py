"""Register geometry as a domain's capability (``chains.registers``) and the registers arch it gives:
each shipped domain's declared geometry true to its own dynamics, the builder choosing the registers
by the kind a domain declares (never by its name) and refusing a domain that declares none in one
line, the rewrite and programs registers built as before, the permuted registers
(``tracker.permuted``) carrying a group's words exactly by construction, and a groups dataset
certified by Lean, trained with ``--arch registers``, loaded, streamed and exact at 64 and 256."""
from __future__ import annotations

import json
import random

import pytest
import torch
from click.testing import CliRunner
from dial_domain import Dial
from hypothesis import given, settings, strategies as st

from chains.domains import resolve
from chains.groups import GROUPS, S5, GroupDomain, group_domain
from chains.imported.load import RecordedDomain
from chains.programs.domain import ProgramsDomain
from chains.programs.syntax import Machine
from chains.protocol import run_events
from chains.registers import register_kind
from leanbridge.cli import main as certify
from tracker.build import build_model
from tracker.cli import main as train_tracker
from tracker.domain_data import DomainVocab
from tracker.domain_run import DomainRun
from tracker.inference import load_run
from tracker.models import ModelConfig
from tracker.permuted import PermutedRegisters
from tracker.registers import RegisterTracker
from tracker.stream_cli import main as evaluate_tracker
from tracker.variables import VariableTracker

pytestmark = pytest.mark.usefixtures("one_thread_module")

GROUP_DOMAINS = [group_domain(name, distractor) for name in GROUPS for distractor in (False, True)]


class Wheel(GroupDomain):
    """A group's word problem under another name: the builder must not care what a domain is called."""

    name = "wheel"


def vocab_of(domain) -> DomainVocab:
    return DomainVocab(max(domain.readout()), domain.vocabulary(), domain.name)


def item_table(domain, starts, events) -> torch.Tensor:
    """(1 + starts + events, E) token ids, row 0 padding, as a dataset's item table."""
    index = vocab_of(domain).index()
    rows = [[index[t] for t in domain.start_tokens(s)] for s in starts]
    rows += [[index[t] for t in domain.event_tokens(e)] for e in events]
    items = torch.zeros(1 + len(rows), max(map(len, rows)), dtype=torch.long)
    for r, ids in enumerate(rows):
        items[1 + r, :len(ids)] = torch.tensor(ids)
    return items


def permuted(domain, width: int = 8, seed: int = 0) -> PermutedRegisters:
    vocab = vocab_of(domain)
    torch.manual_seed(seed)
    return build_model(ModelConfig(arch="registers", width=width),
                       item_table(domain, [domain.start_state(random.Random(0))], domain.events),
                       vocab.size, vocab.n_out, len(domain.readout()), domain=domain)


# each domain's geometry, true to its dynamics

@settings(max_examples=60)
@given(st.sampled_from(GROUP_DOMAINS), st.data())
def test_a_group_s_position_moves_are_what_its_events_do_to_a_state(domain, data):
    state = data.draw(st.sampled_from(domain.group.cayley.elements))
    event = data.draw(st.sampled_from(domain.events))
    moves = domain.position_moves(domain.event_tokens(event))
    before, after = domain.state_classes(state), domain.state_classes(domain.apply(state, event))
    assert [before[i] for i in moves] == after
    assert domain.position_moves(domain.start_tokens(state)) is None


@settings(max_examples=60)
@given(st.sampled_from([Machine(2), Machine(16)]), st.integers(0, 2**32), st.data())
def test_a_statement_writes_the_variable_it_names_from_the_variables_it_reads(machine, seed, data):
    domain = ProgramsDomain(machine)
    rng = random.Random(seed)
    statement = domain.sample_events(rng, domain.start_state(rng), 1)[0]
    reads, written = domain.named_writes(domain.event_tokens(statement))
    values = st.integers(0, machine.values - 1)
    state = tuple(data.draw(st.lists(values, min_size=8, max_size=8)))
    after = domain.apply(state, statement)
    assert all(a == b for i, (a, b) in enumerate(zip(state, after)) if i != written)
    # positions it does not read may hold anything: the value written stays the same
    other = tuple(v if i in reads else data.draw(values) for i, v in enumerate(state))
    assert domain.apply(other, statement)[written] == after[written]
    assert domain.named_writes(domain.start_tokens(state)) is None


def test_a_rewrite_event_names_the_node_whose_subtree_it_rewrites():
    domain = resolve("rewrite")
    tree = domain.start_state(random.Random(1))
    events = [event for event, _ in domain.successors(tree)]
    assert events and all(domain.subtree_moved(domain.event_tokens(e)) == e.path for e in events)
    assert domain.subtree_moved(domain.start_tokens(tree)) is None


def test_each_shipped_domain_declares_its_kind_and_a_domain_of_one_s_own_none():
    assert [register_kind(resolve(name)) for name in ("rewrite", "programs", "groups")] == ["subtree", "named",
                                                                                           "permuted"]
    assert register_kind(RecordedDomain(S5, "chains.groups:S5")) == "permuted"  # as a manifest reads it
    assert register_kind(Dial()) is None


# the builder asks the domain

def test_the_builder_takes_the_registers_of_the_kind_a_domain_declares_whatever_its_name():
    assert isinstance(permuted(S5), PermutedRegisters)
    assert isinstance(permuted(Wheel(GROUPS["A5"])), PermutedRegisters)
    items = torch.zeros(2, 7, dtype=torch.long)
    items[1, 0] = 3  # an atom: a tree of one node
    assert isinstance(build_model(ModelConfig(arch="registers", width=8), items, 12, 5, 7, domain="rewrite"),
                      RegisterTracker)
    bits = ProgramsDomain(Machine(2))
    vocab = vocab_of(bits)
    model = build_model(ModelConfig(arch="registers", width=8), item_table(bits, [(0,) * 8], []), vocab.size,
                        vocab.n_out, 8, domain=bits)
    assert isinstance(model, VariableTracker)


def test_a_domain_without_a_register_geometry_is_refused_in_one_line_naming_what_it_lacks():
    dial = Dial()
    vocab = vocab_of(dial)
    items = item_table(dial, [0], ["turn"])
    for domain in (dial, "dial"):  # the domain itself, or a name no registry knows
        with pytest.raises(ValueError) as refused:
            build_model(ModelConfig(arch="registers", width=8), items, vocab.size, vocab.n_out, 1, domain=domain)
        message = str(refused.value)
        assert "\n" not in message and "the dial domain" in message
        assert "position_moves, named_writes, subtree_moved" in message


@pytest.mark.parametrize("domain", ["rewrite", "programs"])
def test_the_rewrite_and_programs_registers_are_built_alike_by_name_and_by_value(domain):
    """The same parameters, in the same order, with the same bits at one seed: a run loaded with the
    domain itself builds what training built from the domain's name."""
    value = resolve(domain)
    if domain == "rewrite":
        items, vocab_size, n_out, positions = torch.zeros(2, 7, dtype=torch.long), 12, 5, 7
        items[1, 0] = 3
        names = ["table", "log_beta", "positions", "embed.item_tokens", "embed.table.weight", "head.weight",
                 "head.bias", "content.weight", "ln_out.weight", "ln_out.bias"]
    else:
        vocab = vocab_of(value)
        items, vocab_size, n_out, positions = item_table(value, [(0,) * 8], []), vocab.size, vocab.n_out, 8
        names = ["keys", "log_beta", "tie", "positions", "embed.item_tokens", "embed.table.weight", "head.weight",
                 "head.bias", "value.weight", "query.weight", "op.weight", "net.0.weight", "net.0.bias",
                 "net.2.weight", "net.2.bias", "net.4.weight", "net.4.bias", "ln_out.weight", "ln_out.bias"]
    built = []
    for told in (domain, value):
        torch.manual_seed(5)
        built.append(build_model(ModelConfig(arch="registers", width=8), items, vocab_size, n_out, positions,
                                 domain=told).state_dict())
    assert list(built[0]) == list(built[1]) == names
    assert all(torch.equal(built[0][k], built[1][k]) for k in names)


# the permuted registers

@settings(max_examples=30)
@given(st.sampled_from(GROUP_DOMAINS), st.integers(0, 3), st.data())
def test_after_any_word_each_register_holds_the_start_register_of_the_point_now_there(domain, seed, data):
    model = permuted(domain, seed=seed)
    word = data.draw(st.lists(st.sampled_from(domain.events), max_size=30))
    items = torch.tensor([[1] + [2 + domain.events.index(e) for e in word]])  # the item table's ids
    _, end = model(items)
    start = model.initial_state(1)
    start = model.read(start, model.embed.item_tokens[1:2])  # (1, P, W)
    here = domain.start_state(random.Random(0))  # the identity
    element = run_events(domain, here, word)[-1] if word else here
    assert torch.equal(end[0], start[0, list(element)])


def test_the_stepping_reads_as_training_does_and_padding_leaves_a_state_alone():
    model = permuted(S5)
    items = torch.tensor([[1, 2, 3, 4, 5, 2], [1, 4, 0, 0, 0, 0]])  # s0 s1 s2 s3 s0; s2, then padding
    z, w = model(items)
    assert z.shape == (2, 6, 5 * 8) and w.shape == (2, 5, 8)
    torch.testing.assert_close(model.final_view(items), z[:, -1])
    assert torch.equal(z[1, 2:], z[1, 1].expand(4, -1))
    state = model.initial_state(1)
    for t, item in enumerate(items[0].tolist()):
        state = model.read(state, model.embed.item_tokens[item].unsqueeze(0))
        assert torch.equal(model.view(state)[0], z[0, t])
    # one more item (s1) on the second history: as if it had been read with the others
    longer = model.final_view(torch.tensor([[1, 4, 3]]))
    assert torch.equal(model.advance(w, torch.tensor([1]), torch.tensor([3])), longer)
    assert model.readout(z).shape == (2, 6, 5, 6)


class Broken(GroupDomain):
    """A domain whose declared moves are not a permutation."""

    name = "broken"

    def position_moves(self, tokens):
        return (0, 0, 1, 2, 3) if tokens == ["s0"] else super().position_moves(tokens)


def test_what_the_permuted_registers_cannot_read_is_refused_in_one_line():
    model = permuted(S5)
    with pytest.raises(ValueError, match="neither an event of the groups domain nor a start state"):
        model.read(model.initial_state(1), model.embed.item_tokens[1:2, :3])
    with pytest.raises(ValueError, match="not a permutation of its 5 positions"):
        permuted(Broken(GROUPS["S5"]))
    vocab = vocab_of(S5)
    with pytest.raises(ValueError, match="no tables"):
        build_model(ModelConfig(arch="registers", width=8, tables="tied"), item_table(S5, [], ["s0"]), vocab.size,
                    vocab.n_out, 5, domain=S5)
    with pytest.raises(ValueError, match="are not its"):
        build_model(ModelConfig(arch="registers", width=8), item_table(S5, [], ["s0"]), vocab.size, vocab.n_out, 4,
                    domain=S5)
    # a name alone does not say which group: the moves are asked of the domain itself
    with pytest.raises(ValueError, match="build them with the domain itself"):
        build_model(ModelConfig(arch="registers", width=8), item_table(S5, [], ["s0"]), vocab.size, vocab.n_out, 5,
                    domain="groups")


# a groups dataset, certified by Lean, through every command

@pytest.fixture(scope="module")
def s5_long(tmp_path_factory):
    """Short S5 training words and test words of 64 and 256 events, certified from an empty store."""
    root = tmp_path_factory.mktemp("s5-long")
    made = CliRunner().invoke(certify, ["--domain", "groups", "--group", "S5", "--chains", "40", "--length", "6",
                                        "--test-lengths", "64,256", "--test-chains", "6", "--jobs", "1",
                                        "--out", str(root / "data"), "--store", str(root / "store.sqlite")])
    assert made.exit_code == 0, made.output
    return root


def test_the_permuted_registers_train_on_group_words_and_stay_exact_to_256(s5_long, tmp_path):
    run_dir = tmp_path / "run"
    trained = CliRunner().invoke(train_tracker, [
        "--data", str(s5_long / "data"), "--arch", "registers", "--objective", "plain", "--steps", "200",
        "--width", "16", "--batch-chains", "8", "--set", "warmup_steps=5", "--out", str(run_dir), "--threads", "1",
        "--quiet"])
    assert trained.exit_code == 0, trained.output
    report = json.loads((run_dir / "report.json").read_text())
    assert report["arch"] == "registers" and report["exact"] == {"64": 1.0, "256": 1.0}
    run = load_run(run_dir)
    assert isinstance(run, DomainRun) and isinstance(run.model, PermutedRegisters)
    rng = random.Random(3)
    word = [rng.choice(S5.events) for _ in range(1000)]
    assert run.decode(run.run("01234", word, check=True)) == S5.state_text(run_events(S5, (0, 1, 2, 3, 4), word)[-1])
    streamed = CliRunner().invoke(evaluate_tracker, [str(run_dir), "--lengths", "256", "--chains", "2", "--store",
                                                     str(s5_long / "store.sqlite"), "--threads", "1", "--quiet"])
    assert streamed.exit_code == 0, streamed.output
    stream = json.loads((run_dir / "stream-s0" / "report.json").read_text())
    assert stream["exact"] == {"256": 1.0}
    assert stream["certification"]["confirmed_steps"] == stream["certification"]["distinct_steps"] > 0

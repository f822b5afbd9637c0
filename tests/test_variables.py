"""A register per variable (tracker.variables), the registers arch on a programs dataset: its
shapes and state machine; a model whose name keys and operation network are set by hand runs
the interpreter exactly on random programs of both machines, the conditional included (the arch can
express the machine); on a tiny Bits dataset certified by Lean, a few training steps run and the run
comes back through load_run as a DomainRun that encodes, steps and decodes."""
from __future__ import annotations

import math
import random

import pytest
import torch
from hypothesis import given, settings, strategies as st

from chains.programs.dataset import ProgramsSpec
from chains.programs.domain import ProgramsDomain
from chains.programs.sampling import random_program
from chains.programs.syntax import VARIABLES, Machine, Statement, const, evaluate, run, state_text, zero_state
from leanbridge.asker import AskConfig
from leanbridge.certify_programs import certify_programs
from tracker.build import build_model
from tracker.domain_data import DomainVocab
from tracker.domain_run import DomainRun
from tracker.evaluate import EvalConfig
from tracker.inference import load_run
from tracker.models import ModelConfig
from tracker.registers import RegisterTracker
from tracker.train import TrainConfig, train
from tracker.variables import HIDDEN, VariableTracker, programs_vocab

pytestmark = pytest.mark.usefixtures("one_thread_module")

BITS, ARITH = Machine(2), Machine(16)


def vocab_of(machine: Machine) -> DomainVocab:
    domain = ProgramsDomain(machine)
    return DomainVocab(machine.values, domain.vocabulary(), domain.name)


def item_table(machine: Machine, rows: list[list[str]]) -> torch.Tensor:
    """(1 + len(rows), 8) token ids of the items ``rows`` (row 0 padding), as a dataset's."""
    index = vocab_of(machine).index()
    items = torch.zeros(1 + len(rows), VARIABLES, dtype=torch.long)
    for i, row in enumerate(rows):
        items[1 + i, :len(row)] = torch.tensor([index[t] for t in row])
    return items


def built(machine: Machine, width: int, moves: str = "hard", rows: list[list[str]] | None = None) -> VariableTracker:
    vocab = vocab_of(machine)
    items = item_table(machine, rows or [ProgramsDomain(machine).start_tokens(zero_state())])
    model = build_model(ModelConfig(arch="registers", width=width, moves=moves, layout="polish"), items,
                        vocab.size, vocab.n_out, VARIABLES, domain="programs")
    assert isinstance(model, VariableTracker)
    return model


def _units(machine: Machine) -> tuple[list, list, list]:
    """The hand-set operation network's units: layer 1 (op, {operand slot: value}), layer 2 (a
    layer-1 unit passed on, or a conditional's branch) and what each layer-2 unit votes for."""
    first, second, votes = [], [], []
    for op, arity in machine.ops.items():
        if op == "ite":  # if a < b then c else d: the comparison's pairs, then each branch's value
            pairs = [len(first) + n for n in range(sum(1 for x in range(machine.values) for y in range(x + 1, machine.values)))]
            first += [(op, {0: x, 1: y}) for x in range(machine.values) for y in range(x + 1, machine.values)]
            for k in range(machine.values):
                first.append((op, {2: k}))
                second.append(("then", len(first) - 1, pairs))
                votes.append(k)
                first.append((op, {3: k}))
                second.append(("else", len(first) - 1, pairs))
                votes.append(k)
            continue
        for args in [(x,) for x in range(machine.values)] if arity == 1 else \
                [(x, y) for x in range(machine.values) for y in range(machine.values)]:
            first.append((op, dict(enumerate(args))))
            second.append(("pass", len(first) - 1, []))
            votes.append(evaluate(Statement(0, op, tuple(map(const, args))), zero_state(), machine.values))
    return first, second, votes


def hand_set(model: VariableTracker, machine: Machine) -> VariableTracker:
    """Keys, queries and values one-hot, the operation network a lookup table of ReLU units:
    layer 1 fires (0.5) on exactly the operation and operand values a unit names, layer 2 passes
    it on or, for a conditional, gates each branch's value by the comparison, layer 3 votes."""
    width, values = model.config.width, machine.values
    index = vocab_of(machine).index()
    s = math.sqrt(width)
    eye = torch.eye(width)
    first, second, votes = _units(machine)
    assert max(len(first), len(second)) <= HIDDEN * width and VARIABLES + values + len(machine.ops) < width
    l1, l2, l3 = (m for m in model.net if isinstance(m, torch.nn.Linear))
    with torch.no_grad():
        for p in model.parameters():
            p.zero_()
        model.value.weight.copy_(eye[:values])
        model.keys.copy_(eye[:VARIABLES + values + 1])
        for i in range(VARIABLES):
            model.query.weight[index[f"v{i}"]] = eye[i]
        for k in range(values):
            model.query.weight[index[f"c{k}"]] = eye[VARIABLES + k]
        model.query.weight[index["pad"]] = eye[VARIABLES + values]
        model.log_beta.fill_(math.log(10.0))
        ops = list(machine.ops)
        for j, op in enumerate(ops):
            model.op.weight[index[op]] = eye[j]
        for u, (op, wants) in enumerate(first):  # x = [op (W), operand 1 (W) … operand 4 (W)]
            l1.weight[u, ops.index(op)] = 1.0
            for slot, value in wants.items():
                l1.weight[u, width * (1 + slot) + value] = 1 / s  # an operand's value reads sqrt(W) there
            l1.bias[u] = -(len(wants) + 0.5)
        for u, (kind, unit, pairs) in enumerate(second):
            l2.weight[u, unit] = 1.0
            if kind == "then":  # the branch's unit and a < b (one pair unit at 0.5)
                l2.weight[u, pairs] = 1.0
                l2.bias[u] = -0.75
            elif kind == "else":
                l2.weight[u, pairs] = -1.0
                l2.bias[u] = -0.25
        for u, value in enumerate(votes):
            l3.weight[value, u] = 10.0
        model.ln_out.weight.fill_(1.0)
        model.head.weight[1:1 + values] = eye[:values]
        model.head.bias[0] = -100.0  # the PAD class is no value
    return model


@pytest.fixture(scope="module")
def exact_bits():
    return hand_set(built(BITS, 16), BITS)


@pytest.fixture(scope="module")
def exact_arith():
    return hand_set(built(ARITH, 128), ARITH)


def decoded(model: VariableTracker, w: torch.Tensor) -> list[tuple[int, ...]]:
    return [tuple(c - 1 for c in row) for row in model.readout(model.view(w)).argmax(-1).tolist()]


def tracked(model: VariableTracker, machine: Machine, starts: list, programs: list) -> list[list[tuple[int, ...]]]:
    """Each program's states as the model's state machine reads them, from its start on."""
    domain, index = ProgramsDomain(machine), vocab_of(machine).index()

    def toks(rows):
        return torch.tensor([[index[t] for t in row] + [0] * (VARIABLES - len(row)) for row in rows])

    with torch.no_grad():
        w = model.read(model.initial_state(len(starts)), toks([domain.start_tokens(s) for s in starts]))
        out = [decoded(model, w)]
        for t in range(len(programs[0])):
            w = model.read(w, toks([domain.event_tokens(p[t]) for p in programs]))
            out.append(decoded(model, w))
    return [list(states) for states in zip(*out)]


def interpreted(machine: Machine, start, program) -> list[tuple[int, ...]]:
    return [run(program[:t], start, machine.values) for t in range(len(program) + 1)]


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 2 ** 32 - 1), length=st.integers(1, 48), arith=st.booleans())
def test_a_hand_set_model_runs_the_interpreter_exactly(exact_bits, exact_arith, seed, length, arith):
    """Every state after every statement of random programs from random starts, on both machines
    (conditionals included on Arithmetic)."""
    machine, model = (ARITH, exact_arith) if arith else (BITS, exact_bits)
    rng = random.Random(seed)
    starts = [tuple(rng.randrange(machine.values) for _ in range(VARIABLES)) for _ in range(8)]
    programs = [random_program(rng, machine, length) for _ in starts]
    assert tracked(model, machine, starts, programs) == [interpreted(machine, s, p) for s, p in zip(starts, programs)]


def test_every_operation_and_operand_kind_is_read_by_the_hand_set_model(exact_arith):
    """The conditional's two branches, constants and variables in every operand slot, a
    statement that reads its own target."""
    machine = ARITH
    domain = ProgramsDomain(machine)
    start = (3, 9, 0, 15, 7, 7, 1, 12)
    texts = ["v2 = if v0 < v1 then v3 else 5", "v5 = if v1 < v0 then 4 else v6", "v4 = if v4 < v5 then v4 else v5",
             "v7 = v7 * 7", "v0 = 2 - v3", "v1 = if 3 < 9 then 11 else v0"]
    program = [domain.parse_event(t) for t in texts]
    assert tracked(exact_arith, machine, [start], [program]) == [interpreted(machine, start, program)]


def test_shapes_and_the_state_machine_read_as_forward_does():
    machine = BITS
    domain = ProgramsDomain(machine)
    program = random_program(random.Random(3), machine, 12)
    rows = [domain.start_tokens(zero_state())] + [domain.event_tokens(s) for s in program]
    torch.manual_seed(0)
    model = built(machine, 16, moves="soft", rows=rows)
    items = torch.arange(1, len(rows) + 1).repeat(3, 1)  # (3, 13); the third history ends after 5 steps
    items[2, 6:] = 0
    with torch.no_grad():
        z, w = model(items)
        assert z.shape == (3, 13, VARIABLES * 16) and w.shape == (3, VARIABLES, 16)
        assert model.readout(z).shape == (3, 13, VARIABLES, machine.values + 1)
        torch.testing.assert_close(model.final_view(items), z[:, -1])
        torch.testing.assert_close(z[2, 6:], z[2, 5].expand(7, -1))  # padding leaves the state alone
        state = model.initial_state(1)
        for t, row in enumerate(model.embed.item_tokens[1:]):
            state = model.read(state, row.unsqueeze(0))
            torch.testing.assert_close(model.view(state)[0], z[0, t])
        torch.testing.assert_close(model.advance(w, torch.tensor([2]), torch.tensor([7]))[0], z[0, 6])


def test_the_registers_follow_the_domain_they_are_told():
    vocab = vocab_of(BITS)
    assert programs_vocab(vocab.size, vocab.n_out, VARIABLES) == vocab
    assert programs_vocab(vocab.size, vocab.n_out, 7) is None and programs_vocab(vocab.size + 1, vocab.n_out, 8) is None
    items = torch.zeros(2, 7, dtype=torch.long)
    items[1, 0] = 3  # an atom: a tree of one node
    tree = build_model(ModelConfig(arch="registers", width=8), items, 12, 5, 7, domain="rewrite")
    assert isinstance(tree, RegisterTracker)
    with pytest.raises(ValueError, match="layout paths"):
        build_model(ModelConfig(arch="registers", width=8, layout="polish"), items, 12, 5, 7, domain="rewrite")
    # a domain of one's own with a readout that happens to have a programs vocabulary's dimensions
    # is not taken for programs: the builder asks the domain for its register geometry, never the sizes
    with pytest.raises(ValueError, match="that the dial domain does not declare"):
        build_model(ModelConfig(arch="registers", width=8), item_table(BITS, []), vocab.size, vocab.n_out, VARIABLES,
                    domain="dial")
    with pytest.raises(ValueError, match="neither a start state nor a statement"):
        built(BITS, 16, rows=[["v1", "c0", "v2"]])


@pytest.fixture(scope="module")
def trained(tmp_path_factory):
    """A tiny Bits dataset certified by Lean, and the registers trained on it for a few steps."""
    root = tmp_path_factory.mktemp("variables")
    spec = ProgramsSpec(machine=BITS, chains=16, partners=1, test_lengths=(16,), test_chains=4)
    certify_programs(spec, root / "data", root / "store.sqlite", AskConfig())
    config = TrainConfig(data=str(root / "data"), arch="registers", moves="hard", objective="combo", width=16,
                         steps=6, batch_chains=4, checkpoint_every=6, warmup_steps=2)
    report = train(config, root / "run", show_progress=False, eval_config=EvalConfig(pair_lengths=(16,)))
    return root, report


def test_training_a_few_steps_runs(trained):
    _, report = trained
    assert report["steps"] == 6 and report["arch"] == "registers"
    assert all(math.isfinite(v) for v in report["final_losses"].values())
    assert 0 <= report["exact"]["16"] <= 1


def test_the_move_readout_reads_each_value_written_as_its_mixture(trained):
    root, _ = trained
    config = TrainConfig(data=str(root / "data"), arch="registers", moves="hard", objective="plain", width=16,
                         steps=3, batch_chains=4, checkpoint_every=3, warmup_steps=1, move_readout=1.0)
    report = train(config, root / "readout", show_progress=False, eval_config=EvalConfig(pair_lengths=(16,)))
    assert math.isfinite(report["final_losses"]["moves"]) and report["final_losses"]["moves"] > 0
    # closer to the registers schedule than to the default on rewrite chains, but that schedule reads trees:
    # the report names the default and what was set, never a tree's settings left at their defaults
    assert report["schedule"] == {"name": "default", "overrides": {
        "steps": 3, "batch_chains": 4, "warmup_steps": 1, "objective": "plain", "arch": "registers", "width": 16,
        "moves": "hard", "move_readout": 1.0}}
    # the views themselves are the hard ones; where the network is sure, the mixture is its value
    domain = ProgramsDomain(ARITH)
    program = random_program(random.Random(2), ARITH, 12)
    rows = [domain.start_tokens(zero_state())] + [domain.event_tokens(s) for s in program]
    model = hand_set(built(ARITH, 128, rows=rows), ARITH)
    items = torch.arange(1, len(rows) + 1).unsqueeze(0)  # (1, T): the start, then the statements
    views, _ = model(items)
    hard, _, mixed = model(items, soft_reads=True)
    assert torch.equal(views, hard)
    assert torch.equal(model.readout(mixed).argmax(-1), model.readout(hard).argmax(-1))
    assert not torch.equal(mixed, hard)  # a mixture, not the value itself


def test_load_run_gives_a_domain_run_that_encodes_steps_and_decodes(trained):
    root, _ = trained
    tracker = load_run(root / "run")
    assert isinstance(tracker, DomainRun) and isinstance(tracker.model, VariableTracker)
    program = random_program(random.Random(1), BITS, 20)
    state = tracker.encode("00000000")
    for statement in program:
        state = tracker.step(state, str(statement))
    assert state.shape == (VARIABLES, 16)
    decoded_text = tracker.decode(state)
    assert len(decoded_text) == VARIABLES and set(decoded_text) <= {"0", "1"}
    # the same state through the batch calls and through run
    torch.testing.assert_close(tracker.run("00000000", [str(s) for s in program]), state)
    assert tracker.decode_batch(state.unsqueeze(0)) == [tuple(int(c) for c in decoded_text)]
    # the hand-set weights loaded into the run's model make it the interpreter
    exact = hand_set(tracker.model, BITS)
    assert exact is tracker.model
    assert tracker.decode(tracker.run("01100000", program)) == state_text(run(program, (0, 1, 1, 0, 0, 0, 0, 0), 2))

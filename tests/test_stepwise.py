"""The step-by-step model (``stepwise``): a chain as one token sequence whose written states parse
back to its trees, a loss on written tokens only, a key-value cache that computes what the whole
forward pass does, training that resumes bit for bit, free-running evaluation that reads the
model's own writing, and the ``train-stepwise`` command."""
from __future__ import annotations

import json
import random

import pytest
import torch
from click.testing import CliRunner
from hypothesis import given, settings
from hypothesis import strategies as st
from stepwise_sizes import EVAL, TINY
from strategies import tier1_trees

from chains.rewrite.rules import Event, apply, successors, tier_rules
from chains.rewrite.trees import ATOM_NAMES, TreeSyntaxError
from stepwise.cli import main as train_stepwise
from stepwise.config import StepwiseConfig
from stepwise.data import StepwiseVocab, load_stepwise, replay, sequence
from stepwise.evaluate import StepwiseEvalConfig, evaluate, free_run
from stepwise.model import StepwiseModel
from stepwise.sequences import PAD_ID, written_loss, written_states
from stepwise.train import StepwiseTrainer, train
from tracker.data import Vocab
from training.checkpoint import CHECKPOINT
from training.loop import train_loop

pytestmark = pytest.mark.usefixtures("one_thread_module")



@pytest.fixture(scope="module")
def tiny(stepwise_tiny):
    return stepwise_tiny


@pytest.fixture(scope="module")
def data(tiny):
    return load_stepwise(tiny)


@settings(max_examples=40)
@given(tier1_trees(4), st.integers(0, 2**32 - 1), st.integers(0, 10))
def test_a_sequence_writes_every_tree_of_its_chain(start, seed, length):
    """Tier-2 walks too (distributivity repeats atoms): the written states parse back to the trees."""
    vocab = StepwiseVocab(Vocab(ATOM_NAMES[:4], tier_rules(2)))
    rng, tree, events = random.Random(seed), start, []
    for _ in range(length):
        event, tree = rng.choice(successors(tree, tier_rules(2), 15))
        events.append(event)
    chain = (start, tuple(events))
    ids, written = sequence(vocab, chain)
    states = written_states(vocab, ids)
    assert [vocab.parse_state(s) for s in states] == replay(chain)
    assert vocab.parse_state(ids[:ids.index(vocab.eos)]) == start
    # written: exactly the tokens after each SEP up to and including the EOS that closes the state
    inside = False
    for token, wrote in zip(ids, written):
        assert wrote == inside
        inside = (inside and token != vocab.eos) or token == vocab.sep


def test_the_dataset_sequences_hold_its_certified_trees(data):
    tracker = data.tracker
    chains = data.chains(tracker.train["chain_items"])
    trees = tracker.train["chain_trees"]
    for n, chain in enumerate(chains):
        ids = data.train_ids[n][data.train_ids[n] != PAD_ID].tolist()
        written = [data.vocab.parse_state(s) for s in written_states(data.vocab, ids)]
        certified = [data.vocab.parse_state([i for i in tracker.tree_tokens[r].tolist() if i != PAD_ID])
                     for r in trees[n, 1:].tolist() if r >= 0]
        assert written == certified and len(written) == len(chain[1])
    with pytest.raises(TreeSyntaxError):
        data.vocab.parse_state([data.vocab.sep])


def test_the_loss_counts_written_tokens_only(data):
    ids, written = data.train_ids[:3], data.train_written[:3]
    logits = torch.randn(*ids.shape, data.vocab.size, generator=torch.Generator().manual_seed(0))
    loss = written_loss(logits, ids, written)
    start = ids[0].tolist().index(data.vocab.eos) + 1
    event = int((~written[0, start:]).nonzero()[0]) + start  # the first event's rule token
    state = int(written[0].nonzero()[0])
    for at, changes in ((event, False), (state, True)):
        other = ids.clone()
        other[0, at] = (other[0, at] + 1) % data.vocab.size
        assert (written_loss(logits, other, written) != loss) == changes, at


@pytest.mark.parametrize("positions", ["sinusoidal", "alibi", "none"])
def test_the_cache_computes_what_the_forward_pass_does(data, positions):
    torch.manual_seed(0)
    model = StepwiseModel(StepwiseConfig(positions=positions, **TINY).model(data.vocab.size)).eval()
    ids = data.train_ids[:2, :40]
    whole = model(ids)
    cache = model.start(2, 40)
    stepped = torch.stack([model.step(ids[:, t], cache) for t in range(30)], 1)
    read = model.read(ids[:, 30:], cache)  # the rest in one read after the cache
    assert torch.allclose(whole, torch.cat([stepped, read], 1), atol=1e-5)
    with pytest.raises(ValueError, match="full"):
        model.step(ids[:, 0], cache)


def test_training_resumes_bit_for_bit(tiny, data, tmp_path):
    config = StepwiseConfig(data=str(tiny), steps=4, checkpoint_every=2, **TINY)
    straight = train(config, tmp_path / "straight", show_progress=False, eval_config=EVAL, data=data)
    trainer = StepwiseTrainer(config, data)  # a run stopped at its checkpoint after 2 of 4 steps
    (tmp_path / "resumed").mkdir()
    train_loop(trainer, config, tmp_path / "resumed" / CHECKPOINT, show_progress=False, until=2)
    resumed = train(config, tmp_path / "resumed", resume=True, show_progress=False, eval_config=EVAL, data=data)
    assert resumed["steps"] == straight["steps"] == 4 and resumed["resumed_from_step"] == 2
    weights = [torch.load(tmp_path / run / CHECKPOINT, weights_only=False)["model"] for run in ("straight", "resumed")]
    assert all(torch.equal(weights[0][k], weights[1][k]) for k in weights[0])
    assert resumed["final_losses"] == straight["final_losses"] and resumed["exact"] == straight["exact"]


class HandWriter:
    """A model by hand: after each SEP it writes the previous state in its context (its own
    writing) rewritten by the event, or left as it is where the event does not apply; with
    ``keep_first``, it leaves the state as it is at the first event (a wrong tree)."""

    def __init__(self, vocab: StepwiseVocab, keep_first: bool = False) -> None:
        self.vocab, self.keep_first = vocab, keep_first

    def start(self, batch: int, capacity: int) -> list[list[int]]:
        return [[] for _ in range(batch)]

    def step(self, ids: torch.Tensor, cache: list[list[int]]) -> torch.Tensor:
        logits = torch.zeros(len(cache), self.vocab.size)
        for b, token in enumerate(ids.tolist()):
            cache[b].append(token)
            logits[b, self.next_token(cache[b])] = 1.0
        return logits

    def next_token(self, history: list[int]) -> int:
        vocab = self.vocab
        sep, eos = (max((k for k, t in enumerate(history) if t == mark), default=-1) for mark in (vocab.sep, vocab.eos))
        if sep <= eos:
            return PAD_ID  # reading: whatever it says is not used
        # writing after the event between ``eos`` (closing the state before it) and ``sep``
        seps = [k for k in range(eos) if history[k] == vocab.sep]
        before = vocab.parse_state(history[seps[-1] + 1 if seps else 0:eos])
        names = vocab.tokens
        event = Event(names[history[eos + 1]], "".join(names[i] for i in history[eos + 2:sep]))
        after = before if self.keep_first and not seps else (apply(before, event) or before)
        target = [*vocab.tree_ids(after), vocab.eos]
        at = len(history) - sep - 1
        return target[at] if at < len(target) else PAD_ID  # past the end: a chain that has ended reads PAD


def kept_then_applied(chain) -> list:
    """The trees HandWriter(keep_first=True) writes: the start kept at event 1, then each event applied where it can."""
    tree, out = chain[0], [chain[0]]
    for event in chain[1][1:]:
        tree = apply(tree, event) or tree
        out.append(tree)
    return out


def test_free_running_reads_the_models_own_writing(data, monkeypatch):
    right = evaluate(HandWriter(data.vocab), data, StepwiseEvalConfig(chains=4, batch=3))
    assert set(right) == {"8", "16"}  # every test length up to the default's longest
    for length, figures in right.items():
        assert figures["exact"] == figures["right_throughout"] == 1.0 and figures["first_wrong"]["chains"] == 0
        assert figures["tokens_per_event"] == data.max_state_tokens + 1  # a tier-1 tree's tokens and its EOS
    chains = data.test_chains(16, 4)
    readers = free_run(HandWriter(data.vocab, keep_first=True), data.vocab, chains, data.max_state_tokens + 1)
    for reader, chain in zip(readers, chains):
        assert [data.vocab.parse_state(s) for s in reader.states] == kept_then_applied(chain)
    wrong = evaluate(HandWriter(data.vocab, keep_first=True), data, StepwiseEvalConfig(lengths=(16,), chains=4))["16"]
    ends = [kept_then_applied(c)[-1] == replay(c)[-1] for c in chains]
    assert wrong["first_wrong"] == {"chains": 4, "quartiles": [1.0, 1.0, 1.0]} and wrong["right_throughout"] == 0
    assert wrong["exact"] == sum(ends) / 4
    monkeypatch.setattr("stepwise.evaluate.DEFAULT_LONGEST", 8)
    assert set(evaluate(HandWriter(data.vocab), data, StepwiseEvalConfig(chains=1))) == {"8"}


def test_a_state_that_never_ends_is_cut(data):
    class Babbler(HandWriter):
        def next_token(self, history: list[int]) -> int:
            return self.vocab.sep - 1  # a bit, never EOS

    figures = evaluate(Babbler(data.vocab), data, StepwiseEvalConfig(lengths=(8,), chains=2))["8"]
    assert figures["exact"] == 0 and figures["tokens_per_event"] == data.max_state_tokens + 1


def test_the_command_writes_its_report_and_refuses_bad_input(tiny, tmp_path):
    out = tmp_path / "run"
    args = ["--data", str(tiny), "--out", str(out), "--steps", "2", "--width", "32", "--depth", "1", "--heads", "2",
            "--batch-chains", "2", "--eval-lengths", "8", "--eval-chains", "2", "--threads", "1", "--quiet"]
    result = CliRunner().invoke(train_stepwise, args)
    assert result.exit_code == 0, result.output
    report = json.loads((out / "report.json").read_text())
    assert set(report["evaluation"]) == {"8"} and report["steps"] == 2 and (out / CHECKPOINT).is_file()
    assert report["dataset"]["dataset_id"] and report["lean"]["githash"] and report["config"]["depth"] == 1
    assert set(report["evaluation"]["8"]) >= {"exact", "right_throughout", "first_wrong", "tokens_per_event",
                                              "seconds"}
    bad = {"--eval-lengths": ["--eval-lengths", "8,x", "--out", str(tmp_path / "b1")],
           "no test chains of 99": ["--eval-lengths", "99", "--out", str(tmp_path / "b2")],
           "multiple of heads": ["--width", "30", "--heads", "4", "--out", str(tmp_path / "b3")],
           "manifest": ["--data", str(tmp_path / "nowhere"), "--out", str(tmp_path / "b4")]}
    for said, extra in bad.items():
        result = CliRunner().invoke(train_stepwise, [*args, *extra])
        assert result.exit_code != 0 and isinstance(result.exception, SystemExit), said
        last = result.output.strip().splitlines()[-1]
        assert said in last and "Traceback" not in result.output, result.output


def test_every_setting_is_an_option_or_settable():
    """As the trackers': each StepwiseConfig field is one option with its help and default, hidden
    and listed by --settings when rare."""
    from dataclasses import fields

    options = {p.name: p for p in train_stepwise.params}
    listing = CliRunner().invoke(train_stepwise, ["--settings"]).output
    for field in fields(StepwiseConfig):
        said = field.metadata["setting"]
        option = options[field.name]
        assert option.help == said.help and str(option.default) == str(field.default), field.name
        assert option.hidden == said.rare == (f"\n  {field.name}=" in listing), field.name
    untied = CliRunner().invoke(train_stepwise, ["--set", "tied=maybe"])
    assert untied.exit_code == 2 and "tied takes true or false" in untied.output


def test_shifted_positions_start_each_sequence_where_it_is_told(data):
    """Each row of a batch from its own position: row 0 from 0 is the unshifted pass, row 1 from 20
    is the pass of that row alone from 20, and differs (the position is read)."""
    torch.manual_seed(0)
    model = StepwiseModel(StepwiseConfig(data="unused", positions="shifted", **TINY).model(data.vocab.size))
    ids = torch.tensor([sequence(data.vocab, data.test_chains(8, 1)[0])[0][:30]])  # (1, 30)
    both = model(ids.repeat(2, 1), torch.tensor([0, 20]))  # (2, 30, V)
    assert torch.allclose(both[0], model(ids)[0], atol=1e-5)
    assert torch.allclose(both[1], model(ids, torch.tensor([20]))[0], atol=1e-5)
    assert not torch.allclose(both[0], both[1], atol=1e-3)

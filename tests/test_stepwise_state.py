"""The step-by-step model's state form (``--context state``, ``stepwise.windows``): each window reads
the true state before one event and writes the state after it; free running carries the state from
window to window by the model's own writing alone (an error once written is carried on); the default
form trains as it did; a tiny run in the state form trains, reports its context, loads and resumes
bit for bit; the ceiling reads no state of a long history but its end; self-distillation is refused
in one line."""
from __future__ import annotations

import json
import random

import pytest
import torch
from click.testing import CliRunner
from conftest import run_certify
from hypothesis import given, settings
from hypothesis import strategies as st
from stepwise_sizes import EVAL, TINY
from strategies import tier1_trees

from chains.programs.domain import ProgramsDomain
from chains.protocol import run_events
from chains.rewrite.rules import Event, apply, successors, tier_rules
from chains.rewrite.trees import ATOM_NAMES
from stepwise.cli import main as train_stepwise
from stepwise.config import StepwiseConfig
from stepwise.data import StepwiseVocab, load_stepwise, replay
from stepwise.distill import DistillPair, labelled_windows_loss
from stepwise.domain_data import DomainStepVocab
from stepwise.evaluate import StepwiseEvalConfig, evaluate, free_run_windows
from stepwise.model import StepwiseModel
from stepwise.sequences import PAD_ID, sample_sequences, written_loss
from stepwise.train import StepwiseTrainer, config_from_checkpoint, train
from stepwise.windows import TrainingWindows, chain_windows, window_prompt
from tracker.data import Vocab
from training.checkpoint import CHECKPOINT, load_checkpoint
from training.loop import train_loop

pytestmark = pytest.mark.usefixtures("one_thread_module")

BITS = ProgramsDomain()


@pytest.fixture(scope="module")
def data(stepwise_tiny):
    return load_stepwise(stepwise_tiny)


def tier2_chain(start, seed: int, length: int) -> tuple:
    rng, tree, events = random.Random(seed), start, []
    for _ in range(length):
        event, tree = rng.choice(successors(tree, tier_rules(2), 15))
        events.append(event)
    return start, tuple(events)


def programs_chain(seed: int, length: int) -> tuple:
    rng = random.Random(seed)
    start = BITS.start_state(rng)
    return start, tuple(BITS.sample_events(rng, start, length))


@settings(max_examples=40)
@given(tier1_trees(4), st.integers(0, 2**32 - 1), st.integers(0, 10), st.booleans())
def test_each_window_reads_the_true_state_before_its_event_and_writes_the_state_after(start, seed, length, programs):
    if programs:
        vocab, chain = DomainStepVocab(BITS), programs_chain(seed, length)
        states = run_events(BITS, *chain)
    else:  # tier-2 walks (distributivity repeats atoms and changes a tree's size)
        vocab, chain = StepwiseVocab(Vocab(ATOM_NAMES[:4], tier_rules(2))), tier2_chain(start, seed, length)
        states = replay(chain)
    windows = chain_windows(vocab, chain, states)
    assert len(windows) == len(chain[1])
    befores = (chain[0], *states)
    for k, (ids, written) in enumerate(windows):
        given = [*vocab.state_ids(befores[k]), vocab.eos, *vocab.event_ids(chain[1][k]), vocab.sep]
        assert ids == [*given, *vocab.state_ids(states[k]), vocab.eos]
        assert written == [False] * len(given) + [True] * (len(ids) - len(given))
        assert vocab.parse_state(ids[len(given):-1]) == states[k]


def test_the_training_windows_are_the_dataset_chains_cut_at_every_event(data):
    windows = TrainingWindows(data)
    chains = data.train_chains()
    assert windows.ids.shape[0] == sum(len(events) for _, events in chains)
    assert windows.per_chain == round(windows.ids.shape[0] / len(chains))
    first = chain_windows(data.vocab, chains[0], replay(chains[0]))
    for row, (ids, written) in enumerate(first):
        assert windows.ids[row, :len(ids)].tolist() == ids and windows.written[row, :len(ids)].tolist() == written
    batch = windows.sample(4, torch.Generator().manual_seed(0))
    # a window is one state, one event and one state: never longer, whatever the chain's length
    longest = 2 * (data.max_state_tokens + 1) + max(len(data.vocab.event_ids(e)) for _, es in chains for e in es) + 1
    assert batch.ids.shape[0] == 4 * windows.per_chain and batch.ids.shape[1] <= longest
    assert (batch.ids[:, -1] != PAD_ID).any()  # trimmed to its longest window


class StepWriter:
    """A model by hand that reads one window: the state before (whatever it is), EOS, the event, SEP;
    it writes the state after it, or, at window ``wrong_at`` (counted by the caches it is given), the
    state before unchanged (a wrong tree). It keeps every window it read."""

    def __init__(self, vocab: StepwiseVocab, wrong_at: int | None = None) -> None:
        self.vocab, self.wrong_at, self.window, self.seen = vocab, wrong_at, -1, []

    def start(self, batch: int, capacity: int) -> list[list[int]]:
        self.window += 1
        cache = [[] for _ in range(batch)]
        self.seen += cache
        return cache

    def step(self, ids: torch.Tensor, cache: list[list[int]]) -> torch.Tensor:
        logits = torch.zeros(len(cache), self.vocab.size)
        for b, token in enumerate(ids.tolist()):
            cache[b].append(token)
            logits[b, self.next_token(cache[b])] = 1.0
        return logits

    def read(self, ids: torch.Tensor, cache: list[list[int]]) -> torch.Tensor:
        return torch.stack([self.step(ids[:, t], cache) for t in range(ids.shape[1])], 1)

    def next_token(self, window: list[int]) -> int:
        vocab, names = self.vocab, self.vocab.tokens
        if vocab.sep not in window:
            return PAD_ID  # reading
        eos, sep = window.index(vocab.eos), window.index(vocab.sep)
        before = vocab.parse_state(window[:eos])
        event = Event(names[window[eos + 1]], "".join(names[i] for i in window[eos + 2:sep]))
        after = before if self.window == self.wrong_at else apply(before, event) or before
        target = [*vocab.tree_ids(after), vocab.eos]
        at = len(window) - sep - 1
        return target[at] if at < len(target) else PAD_ID


def wrong_once(chain: tuple, at: int) -> list:
    """The trees StepWriter(wrong_at=at) writes: the state kept at event ``at`` + 1, every other event applied."""
    tree, out = chain[0], []
    for k, event in enumerate(chain[1]):
        tree = tree if k == at else apply(tree, event) or tree
        out.append(tree)
    return out


def test_free_running_in_the_state_form_carries_the_models_own_writing(data):
    cap = data.max_state_tokens + 1
    right = evaluate(StepWriter(data.vocab), data, StepwiseEvalConfig(chains=4, batch=3), context="state")
    assert all(f["exact"] == f["right_throughout"] == 1.0 for f in right.values()) and set(right) == {"8", "16"}
    chains = data.test_chains(16, 4)
    writer = StepWriter(data.vocab, wrong_at=2)
    readers = free_run_windows(writer, data.vocab, chains, cap)
    for reader, chain in zip(readers, chains):
        written = [data.vocab.parse_state(s) for s in reader.states]
        assert written == wrong_once(chain, 2) and written[-1] != replay(chain)[-1]  # never mended by a true state
    # each window read the state written in the one before it (the start's at the first), one window alone
    assert writer.window == 15 and len(writer.seen) == 16 * 4
    for k in range(16):
        for b, (reader, chain) in enumerate(zip(readers, chains)):
            before = data.vocab.tree_ids(chain[0]) if k == 0 else reader.states[k - 1]
            window = writer.seen[4 * k + b]
            assert window[:len(before) + 1] == [*before, data.vocab.eos] and window.count(data.vocab.sep) == 1
    wrong = evaluate(StepWriter(data.vocab, wrong_at=0), data, StepwiseEvalConfig(lengths=(16,), chains=4),
                     context="state")["16"]
    assert wrong["first_wrong"] == {"chains": 4, "quartiles": [1.0, 1.0, 1.0]} and wrong["right_throughout"] == 0


def greedy_windows(model: StepwiseModel, vocab, chain: tuple, cap: int) -> list[list[int]]:
    """What ``model`` writes along ``chain`` window by window, each window decoded by whole forward
    passes over it alone (no cache): the state form's free run, written plainly."""
    before, out = list(vocab.state_ids(chain[0])), []
    for event in chain[1]:
        ids = window_prompt(vocab, before, event)
        state: list[int] = []
        while len(state) < cap:
            token = int(model(torch.tensor([ids + state]))[0, -1].argmax())
            if token == vocab.eos:
                break
            state.append(token)
        before = state
        out.append(state)
    return out


def test_the_cached_window_run_writes_what_whole_passes_write(data):
    torch.manual_seed(3)
    model = StepwiseModel(StepwiseConfig(data="unused", **TINY).model(data.vocab.size)).eval()
    cap = data.max_state_tokens + 1
    chains = data.test_chains(8, 3)
    readers = free_run_windows(model, data.vocab, chains, cap)
    with torch.no_grad():
        assert [list(map(list, r.states)) for r in readers] == [greedy_windows(model, data.vocab, c, cap)
                                                                for c in chains]


def test_the_default_form_trains_as_before(stepwise_tiny, data):
    """The history form's step is the whole sequences' loss (the batch the step's generator draws),
    with the key or without it; the state form's is another."""
    plain = StepwiseConfig(data=str(stepwise_tiny), steps=3, **TINY)
    assert plain.context == "history" and plain == StepwiseConfig(data=str(stepwise_tiny), steps=3, context="history",
                                                                  **TINY)
    trainer = StepwiseTrainer(plain, data)
    assert trainer.windows is None
    torch.manual_seed(plain.seed)
    model = StepwiseModel(plain.model(data.vocab.size))
    batch = sample_sequences(data, plain.batch_chains, torch.Generator().manual_seed(plain.seed * 1_000_003))
    expected = written_loss(model(batch.ids), batch.ids, batch.written).item()
    assert trainer.train_step(0)["ce"] == expected
    state = StepwiseTrainer(StepwiseConfig(data=str(stepwise_tiny), steps=3, context="state", **TINY), data)
    assert state.train_step(0)["ce"] != expected
    blob = {"config": {k: v for k, v in trainer.checkpoint()["config"].items() if k != "context"}}
    assert config_from_checkpoint(blob).context == "history"  # a checkpoint from before the setting


def test_a_tiny_run_in_the_state_form_trains_reports_and_loads(stepwise_tiny, data, tmp_path):
    out = tmp_path / "run"
    args = ["--data", str(stepwise_tiny), "--out", str(out), "--context", "state", "--steps", "3", "--width", "32",
            "--depth", "1", "--heads", "2", "--batch-chains", "2", "--eval-lengths", "8,16", "--eval-chains", "2",
            "--threads", "1", "--quiet"]
    result = CliRunner().invoke(train_stepwise, args)
    assert result.exit_code == 0, result.output
    report = json.loads((out / "report.json").read_text())
    assert report["config"]["context"] == "state" and report["steps"] == 3 and set(report["exact"]) == {"8", "16"}
    blob = load_checkpoint(out / CHECKPOINT)
    config = config_from_checkpoint(blob)
    assert config.context == "state"
    model = StepwiseModel(config.model(data.vocab.size))
    model.load_state_dict(blob["model"])
    again = evaluate(model, data, StepwiseEvalConfig(lengths=(8, 16), chains=2), context="state")
    assert {n: r["exact"] for n, r in again.items()} == report["exact"]
    refused = CliRunner().invoke(train_stepwise, [*args, "--objective", "self-distill", "--rounds", "1",
                                                  "--round-steps", "1", "--out", str(tmp_path / "d")])
    assert refused.exit_code != 0 and "Traceback" not in refused.output
    assert "with --context state only plain or labelled train" in refused.output.strip().splitlines()[-1]


def test_a_state_form_run_resumes_bit_for_bit(stepwise_tiny, data, tmp_path):
    config = StepwiseConfig(data=str(stepwise_tiny), steps=4, checkpoint_every=2, context="state", **TINY)
    straight = train(config, tmp_path / "straight", show_progress=False, eval_config=EVAL, data=data)
    trainer = StepwiseTrainer(config, data)  # a run stopped at its checkpoint after 2 of 4 steps
    (tmp_path / "resumed").mkdir()
    train_loop(trainer, config, tmp_path / "resumed" / CHECKPOINT, show_progress=False, until=2)
    resumed = train(config, tmp_path / "resumed", resume=True, show_progress=False, eval_config=EVAL, data=data)
    assert resumed["resumed_from_step"] == 2 and resumed["final_losses"] == straight["final_losses"]
    weights = [load_checkpoint(tmp_path / run / CHECKPOINT)["model"] for run in ("straight", "resumed")]
    assert all(torch.equal(weights[0][k], weights[1][k]) for k in weights[0])


def test_the_ceiling_in_the_state_form_reads_no_state_of_u_but_its_end(monkeypatch):
    rng = random.Random(5)
    walk = programs_chain(5, 40)
    states = run_events(BITS, *walk)
    then = tuple(BITS.sample_events(rng, states[29], 6))
    pair = DistillPair(0, 30, states[29], (walk[0],), (), then)
    vocab = DomainStepVocab(BITS)
    torch.manual_seed(0)
    model = StepwiseModel(StepwiseConfig(data="unused", **TINY).model(vocab.size))
    seen = []
    state_ids = DomainStepVocab.state_ids
    monkeypatch.setattr(DomainStepVocab, "state_ids", lambda self, state: seen.append(state) or state_ids(self, state))
    loss = labelled_windows_loss(model, vocab, lambda chain: run_events(BITS, *chain), [pair])
    loss.backward()
    assert loss.item() > 0 and seen == [states[29], *run_events(BITS, states[29], then)]


@pytest.mark.lean
def test_a_programs_run_in_the_state_form_with_the_ceiling(store, tmp_path):
    data = tmp_path / "bits"
    code, output = run_certify(["--domain", "programs", "--chains", "40", "--test-chains", "4", "--test-lengths",
                                "16", "--out", str(data), "--store", str(store)])
    assert code == 0, output
    config = StepwiseConfig(data=str(data), steps=4, context="state", objective="labelled", rounds=1, round_steps=2,
                            long_chains=1, cuts=2, **TINY)
    report = train(config, tmp_path / "run", show_progress=False, store=store,
                   eval_config=StepwiseEvalConfig(lengths=(16,), chains=2))
    assert set(report["final_losses"]) == {"ce", "labelled"} and report["config"]["context"] == "state"
    with pytest.raises(ValueError, match="distils whole histories"):
        StepwiseConfig(data=str(data), context="state", objective="control")

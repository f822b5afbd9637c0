"""The streamed, certified evaluation (``tracker.stream``, ``evaluate-tracker``): its figures are the
stored-chain evaluation's on the same chains, it refuses a step Lean rejects (the real Lean), the
same seed gives the same chains and figures, and a resumed run ends where an uninterrupted one does.
On a tiny dataset certified here, a tracker trained a few dozen steps and a hand-set stand-in
that holds the true tree and misreads some trees."""
from __future__ import annotations

import json

import numpy as np
import pytest
import torch
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

import leanbridge.render
from chains.rewrite.dataset import DatasetSpec
from chains.rewrite.rules import Event, apply
from chains.rewrite.space import Domain, StateSpace
from chains.rewrite.trees import parse_tokens, tokens
from leanbridge.asker import AskConfig
from leanbridge.certify import certify_dataset
from leanbridge.checker import Checker
from leanbridge.confirm import StepCertifier, StepNotCertified
from tests.stored_chains import StoredChains
from tracker.data import load_dataset
from tracker.evaluate import EvalConfig, evaluate
from tracker.inference import TrackedRun, load_run
from tracker.models import ModelConfig, Recurrent, SlotRecurrence
from tracker.stream import DrawnChains, SlotStep, Stepper, StreamConfig, first_wrong_histogram, stream
from tracker.stream_cli import main as evaluate_tracker
from tracker.train import TrainConfig, train

pytestmark = pytest.mark.usefixtures("one_thread_module")


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    root = tmp_path_factory.mktemp("stream")
    certify_dataset(DatasetSpec(chains=40, test_lengths=(8, 256), test_chains=16), root / "data", root / "store.sqlite")
    config = TrainConfig(data=str(root / "data"), objective="plain", width=32, steps=30, batch_chains=4,
                         checkpoint_every=30, warmup_steps=5)
    train(config, root / "run", show_progress=False, eval_config=EvalConfig(pair_lengths=(8,)))
    return root


class TrueTree(Recurrent):
    """A hand-set stand-in: its state is the true tree, one-hot per readout position (P * V),
    moved by Python's rules; its view misreads every tree whose Polish text begins ``misread``
    (the last position's one-hot moves to the next token), so that it is right on some chains
    and wrong on others, as the readout decides."""

    def __init__(self, data, misread: str = "+ *") -> None:
        super().__init__(ModelConfig(width=8), data.item_tokens, data.vocab.size, data.vocab.n_out, data.tree_len)
        self.names, self.atoms, self.misread = data.vocab.tokens, data.vocab.atoms, misread
        self.index = data.vocab.index()

    def _tree(self, row: torch.Tensor):
        toks = [self.names[i] for i in row.view(self.tree_len, self.n_out).argmax(-1).tolist()]
        return parse_tokens(toks[:toks.index(self.names[0])] if self.names[0] in toks else toks, self.atoms)

    def _row(self, tree) -> torch.Tensor:
        ids = [self.index[t] for t in tokens(tree)] + [0] * (self.tree_len - len(tokens(tree)))
        return torch.nn.functional.one_hot(torch.tensor(ids), self.n_out).float().flatten()

    def initial_state(self, n: int) -> torch.Tensor:
        return torch.zeros(n, self.tree_len * self.n_out)

    def read(self, w: torch.Tensor, toks: torch.Tensor) -> torch.Tensor:
        out = []
        for state, item in zip(w, toks.tolist()):
            words = [self.names[i] for i in item if i != 0]
            if words[0] in self.atoms or words[0] in "+*":  # a start tree
                out.append(self._row(parse_tokens(words, self.atoms)))
            else:
                out.append(self._row(apply(self._tree(state), Event(words[0], "".join(words[1:])))))
        return torch.stack(out)

    def view(self, w: torch.Tensor) -> torch.Tensor:
        rows = w.reshape(-1, w.shape[-1])
        shown = [torch.roll(r, 1) if " ".join(tokens(self._tree(r))).startswith(self.misread) else r for r in rows]
        return torch.stack(shown).reshape(w.shape)

    def readout(self, z: torch.Tensor) -> torch.Tensor:
        return z.unflatten(-1, (self.tree_len, self.n_out))

    def final_view(self, items: torch.Tensor) -> torch.Tensor:
        w = self.initial_state(len(items))
        for t in range(items.shape[1]):
            rows = (items[:, t] != 0).nonzero()[:, 0]
            if len(rows):
                w[rows] = self.read(w[rows], self.embed.item_tokens[items[rows, t]])
        return self.view(w)


def stand_in(tiny) -> TrackedRun:
    data = load_dataset(tiny / "data")
    return TrackedRun(TrueTree(data), TrainConfig(data=str(tiny / "data")), data.vocab, Domain(), data.item_len, {})


def certifier(tiny, lean, core, space, store=None, checker: Checker = Checker.KERNEL) -> StepCertifier:
    return StepCertifier(space, lean, core, AskConfig(checker=checker), store or tiny / "store.sqlite",
                         lambda *a: None)


@pytest.mark.parametrize("which", ["trained", "stand-in"])
def test_figures_are_the_stored_chain_evaluations_on_the_same_chains(tiny, lean, core, which):
    run = load_run(tiny / "run") if which == "trained" else stand_in(tiny)
    stored = evaluate(run.model, load_dataset(tiny / "data"), EvalConfig(pair_lengths=(8,)))
    space = StateSpace(Domain())
    chains = StoredChains(space, tiny / "data" / "test-256.jsonl")
    # blocks and readout chunks that divide nothing evenly: the boundaries must not matter
    config = StreamConfig(run=tiny / "run", lengths=(100, 256), chains=chains.count, block=96, readout_chunk=37)
    figures = stream(run, chains, certifier(tiny, lean, core, space), config, save=False)
    assert figures.right["256"] == stored["correct"]["256"].tolist()
    assert figures.summary([256])["exact"]["256"] == stored["exact"]["256"]
    if which == "stand-in":  # right on some chains, wrong on others: the comparison can fail
        assert 0 < sum(figures.right["256"]) < chains.count
        assert all(f >= 0 for f, r in zip(figures.first_wrong, figures.right["256"]) if not r)


def test_a_step_lean_rejects_is_refused_and_never_counted(tiny, lean, core, tmp_path, monkeypatch):
    space = StateSpace(Domain())
    real = leanbridge.render.apply

    def misstated(tree, event, *bound):  # the rules' claim for add_comm at the root: the tree unchanged
        return tree if event == Event("add_comm", "") else real(tree, event, *bound)

    monkeypatch.setattr(leanbridge.render, "apply", misstated)
    config = StreamConfig(run=tiny / "run", lengths=(64,), chains=8, block=64, out=tmp_path / "out")
    # the elaborator reads the statement's text, the misstated equation, and Lean rejects it
    with pytest.raises(StepNotCertified, match=r"chain \d+ step \d+: Lean rejected"):
        stream(stand_in(tiny), DrawnChains(space, 0, 8), certifier(tiny, lean, core, space, tmp_path / "s.sqlite",
                                                                      Checker.ELABORATOR), config)
    assert not (tmp_path / "out").exists()  # nothing was judged, so nothing was saved


def test_the_same_seed_draws_the_same_chains_and_figures_and_the_store_answers_the_second_time(
        tiny, lean, core, tmp_path):
    run, store = load_run(tiny / "run"), tmp_path / "fresh.sqlite"
    config = StreamConfig(run=tiny / "run", lengths=(8, 40), chains=6, seed=3, block=16, out=tmp_path / "a")
    results = []
    for _ in range(2):
        space = StateSpace(Domain())
        check = certifier(tiny, lean, core, space, store)
        results.append((stream(run, DrawnChains(space, 3, 6), check, config, save=False), check.counts))
    (first, asked), (second, answered) = results
    assert first.right == second.right and first.first_wrong == second.first_wrong
    assert asked["asked"] == asked["distinct_steps"] > 0 and asked["from_store"] == 0
    assert answered["asked"] == 0 and answered["from_store"] == asked["distinct_steps"]


def test_a_resumed_run_ends_with_the_uninterrupted_figures(tiny, lean, core, tmp_path):
    run = load_run(tiny / "run")

    def config(out):
        return StreamConfig(run=tiny / "run", lengths=(24, 80), chains=5, seed=1, block=16, save_every_s=0, out=out)

    def evaluated(out, resume=False, progress=lambda *a: None):
        space = StateSpace(Domain())
        return stream(run, DrawnChains(space, 1, 5), certifier(tiny, lean, core, space), config(out), resume, progress)

    whole = evaluated(tmp_path / "whole")

    def interrupt(phase, done, total):  # Ctrl-C once the third block is saved
        if done == 48:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        evaluated(tmp_path / "part", progress=interrupt)
    assert torch.load(tmp_path / "part" / "stream-state.pt", weights_only=True)["figures"]["steps"] == 48
    resumed = evaluated(tmp_path / "part", resume=True)
    assert (resumed.steps, resumed.right, resumed.first_wrong) == (whole.steps, whole.right, whole.first_wrong)
    assert 0 < sum(resumed.right["24"]) or resumed.first_wrong  # figures were made, not an empty run


def test_the_command_writes_a_report_with_its_provenance(tiny, tmp_path):
    result = CliRunner().invoke(evaluate_tracker, [str(tiny / "run"), "--lengths", "8,32", "--chains", "4",
                                                   "--seed", "2", "--block", "16", "--out", str(tmp_path / "o"),
                                                   "--store", str(tiny / "store.sqlite"), "--quiet"])
    assert result.exit_code == 0, result.output
    report = json.loads((tmp_path / "o" / "report.json").read_text())
    assert report["chains"] == 4 and report["seed"] == 2 and report["steps"] == 32
    assert report["lean"]["version"] and report["lean"]["githash"] and report["core_hash"]
    assert report["package_version"] and report["events"] == 4 * 32
    assert report["certification"]["confirmed_steps"] > 0 and set(report["exact"]) == {"8", "32"}
    assert sum(report["first_wrong"]["histogram"].values()) == 4
    resumed = CliRunner().invoke(evaluate_tracker, [str(tiny / "run"), "--lengths", "8,32", "--chains", "4",
                                                    "--seed", "2", "--block", "16", "--out", str(tmp_path / "o"),
                                                    "--store", str(tiny / "store.sqlite"), "--quiet", "--resume"])
    assert resumed.exit_code == 0, resumed.output  # a finished run resumes to the same report
    again = json.loads((tmp_path / "o" / "report.json").read_text())
    assert again["right"] == report["right"] and again["resumed_from_step"] == 32


def test_bad_input_is_one_line(tiny, tmp_path):
    missing = CliRunner().invoke(evaluate_tracker, [str(tmp_path / "nothing"), "--quiet"])
    assert missing.exit_code != 0 and "Traceback" not in missing.output
    assert len(missing.output.strip().splitlines()) == 1 and "nothing" in missing.output
    fresh = CliRunner().invoke(evaluate_tracker, [str(tiny / "run"), "--resume", "--out", str(tmp_path / "o"),
                                                  "--quiet"])
    assert fresh.exit_code != 0 and "no saved state" in fresh.output and "Traceback" not in fresh.output
    other = CliRunner().invoke(evaluate_tracker, [str(tiny / "run"), "--lengths", "0", "--quiet"])
    assert other.exit_code != 0 and "Traceback" not in other.output


@given(st.lists(st.integers(1, 40), min_size=1, max_size=6), st.integers(0, 5))
def test_blocks_together_are_one_walk(sizes, seed):
    space = StateSpace(Domain())
    whole = DrawnChains(space, seed, 3).block(sum(sizes))
    parts = DrawnChains(space, seed, 3)
    pieces = [parts.block(n) for n in sizes]
    assert np.array_equal(np.concatenate([p[1] for p in pieces], 1), whole[1])
    assert np.array_equal(np.concatenate([pieces[0][0]] + [p[0][:, 1:] for p in pieces[1:]], 1), whole[0])
    # and a saved chain set continues the same walk
    again = DrawnChains(space, seed + 1, 3)
    again.restore(parts.saved())
    assert np.array_equal(again.block(7)[1], parts.block(7)[1])


@given(st.lists(st.one_of(st.just(-1), st.integers(0, 1000)), min_size=1, max_size=50), st.integers(1000, 5000))
def test_every_first_wrong_step_lands_in_its_power_of_two(first_wrong, longest):
    bins = first_wrong_histogram(first_wrong, longest)
    assert sum(bins.values()) == len(first_wrong)
    assert bins["never"] == first_wrong.count(-1) and bins["0"] == first_wrong.count(0)
    for name, n in bins.items():
        if name not in ("never", "0"):
            lo, _, hi = name.partition("-")
            assert n == sum(1 for f in first_wrong if int(lo) <= f <= int(hi or lo))


def test_the_chains_follow_the_rules_from_a_start_tree():
    space = StateSpace(Domain())
    chains = DrawnChains(space, 0, 4)
    states, events = chains.block(50)
    for n in range(4):
        for k in range(50):
            assert apply(space.trees[states[n, k]], space.events[events[n, k]]) == space.trees[states[n, k + 1]]


@given(st.integers(1, 4), st.booleans(), st.sampled_from([8, 32, 128]), st.integers(1, 7), st.integers(0, 2 ** 16))
def test_the_slot_step_is_the_models_update_bit_for_bit(ticks, fixed_norm, width, columns, seed):
    torch.manual_seed(seed)
    model = SlotRecurrence(ModelConfig(width=width, ticks=ticks, fixed_norm=fixed_norm, slot_init=1.0),
                           torch.zeros(2, 7, dtype=torch.long), 12, 5, 7).eval()
    for p in model.parameters():  # trained-looking weights, not the init's zero biases and unit norms
        p.data.normal_(0, 0.3)
    step = SlotStep(model)
    w = torch.randn(16, width)
    mask = torch.rand(16, columns) < 0.7
    mask[:, 0] = True  # every item has a first real token
    out = torch.empty(16, width)
    with torch.no_grad():
        for _ in range(5):  # consecutive steps: a difference in the last bit would carry on
            k, v = torch.randn(16, columns, width), torch.randn(16, columns, width)
            want = model._update(w, k, v, mask)
            got = step(w, k, v, SlotStep.additive_mask(mask, w.dtype), out)
            assert torch.equal(got, want) and got.data_ptr() == out.data_ptr()
            w = want


def test_the_stepper_moves_the_slots_as_the_model_reads_the_events(tiny):
    """Through the streamed path (the events' tables, their columns cut per step, the readout
    chunks) the slots are, bit for bit, those of the model's own update fed each event's token
    embeddings: the same floats as the model on every step, not merely the same figures."""
    run = load_run(tiny / "run")
    space = StateSpace(Domain())
    chains = DrawnChains(space, 5, 12)
    stepper = Stepper(run, space)
    assert stepper.fast
    w = stepper.start(np.array(chains.here))
    states, events = chains.block(60)
    buffer = torch.empty(25, *w.shape)
    model, slots = run.model, []
    for lo in range(0, 60, 25):  # chunks that do not divide the block
        w = stepper.steps(w, events[:, lo:lo + 25], buffer)
        slots.append(buffer[:min(25, 60 - lo)].clone())
    mine = torch.cat(slots)  # (60, N, C)
    want = stepper.start(np.array(states[:, 0]))
    with torch.no_grad():
        for s in range(60):
            toks = torch.tensor([run._event_ids(space.events[e]) for e in events[:, s].tolist()])
            emb, mask = model.embed.token_rows(toks)
            e = int((mask * torch.arange(1, mask.shape[1] + 1)).amax())  # up to the last real column of any
            want = model._update(want, model.key(emb)[:, :e], model.value(emb)[:, :e], mask[:, :e])
            assert torch.equal(mine[s], want), f"step {s + 1}"
    assert torch.equal(w, want) and w.data_ptr() != buffer.data_ptr()


def test_an_evaluation_of_other_settings_is_refused_unless_forced(tiny, tmp_path):
    args = [str(tiny / "run"), "--lengths", "8", "--chains", "2", "--block", "8", "--out", str(tmp_path / "o"),
            "--store", str(tiny / "store.sqlite"), "--quiet"]
    assert CliRunner().invoke(evaluate_tracker, args).exit_code == 0
    report = (tmp_path / "o" / "report.json").read_bytes()
    other = CliRunner().invoke(evaluate_tracker, [*args, "--seed", "5"])
    assert other.exit_code != 0 and "made with other settings (seed 0 -> 5)" in other.output
    assert (tmp_path / "o" / "report.json").read_bytes() == report
    forced = CliRunner().invoke(evaluate_tracker, [*args, "--seed", "5", "--force"])
    assert forced.exit_code == 0, forced.output
    assert json.loads((tmp_path / "o" / "report.json").read_text())["seed"] == 5

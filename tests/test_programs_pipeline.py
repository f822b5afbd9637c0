"""The pipeline on programs: evaluate-tracker streams programs drawn from a seed, every step
certified by the real Lean before it counts (the same figures twice, a resumed run ends where an
uninterrupted one does, the stored-evaluation's figures on the same programs, a step the kernel
rejects stops it); analyse-tracker measures a programs run's state (and an exact stand-in's known
answers); the torch Dataset's items decode to the states Python's interpreter gives. On a tiny
Bits dataset certified here, a tracker trained a few dozen steps and a hand-set stand-in that
holds the true state and misreads some."""
from __future__ import annotations

import json
import random
from collections import Counter

import numpy as np
import pytest
import torch
from click.testing import CliRunner
from hypothesis import given
from hypothesis import strategies as st

from chains.programs.dataset import ProgramsSpec
from chains.programs.domain import ProgramsDomain
from chains.programs.files import read_programs
from chains.programs.sampling import random_program
from chains.programs.syntax import Machine, Operand, Statement, execute, state_text, zero_state
from leanbridge.asker import AskConfig
from leanbridge.certify_programs import certify_programs
from leanbridge.confirm import ProgramsCertifier, StepNotCertified
from leanbridge.discovery import find_lean
from leanbridge.programs import build_programs
from tracker.analysis_cli import main as analyse_tracker
from tracker.code_fits import AnalysisConfig, AnalysisError
from tracker.data import load_dataset
from tracker.dataset import ChainDataset
from tracker.domain_analysis import analyse_states, fresh_programs, one_hot_values
from tracker.domain_data import DomainBuilder
from tracker.domain_run import DomainRun
from tracker.domain_stream import DomainChains, commonest_floor
from tracker.evaluate import EvalConfig, evaluate
from tracker.inference import load_run
from tracker.models import ModelConfig, Recurrent
from tracker.stream import StreamConfig, stream
from tracker.stream_cli import main as evaluate_tracker
from tests.stored_chains import StoredDomainChains
from tracker.train import TrainConfig, train

pytestmark = pytest.mark.usefixtures("one_thread_module")

BITS = Machine(2)


@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    """A tiny Bits dataset certified by Lean (tests of 16 and 40 statements), a store of its own, and
    a tracker trained on it for 30 steps."""
    root = tmp_path_factory.mktemp("programs-pipeline")
    spec = ProgramsSpec(machine=BITS, chains=24, partners=1, test_lengths=(16, 40), test_chains=6)
    certify_programs(spec, root / "data", root / "store.sqlite", AskConfig())
    config = TrainConfig(data=str(root / "data"), objective="plain", width=32, steps=30, batch_chains=4,
                         checkpoint_every=30, warmup_steps=5)
    train(config, root / "run", show_progress=False, eval_config=EvalConfig(pair_lengths=(16,)))
    return root


@pytest.fixture(scope="module")
def lean_library():
    lean = find_lean()
    return lean, build_programs(lean)


def certifier(space, lean_library, store):
    lean, library = lean_library
    return ProgramsCertifier(space, BITS, lean, library, AskConfig(), store, lambda *a: None)


class TrueState(Recurrent):
    """A hand-set stand-in: its state is the true program state, one-hot per variable (P * n_out),
    moved by Python's interpreter from the statement's tokens; its view misreads every state whose
    v0 and v1 are both 1 (the one-hot of v7 moves to the next id), so that it is right on some
    chains and wrong on others, as the readout decides."""

    def __init__(self, data) -> None:
        super().__init__(ModelConfig(width=8), data.item_tokens, data.vocab.size, data.vocab.n_out, data.tree_len)
        self.names = data.vocab.tokens

    def _row(self, state) -> torch.Tensor:
        return torch.nn.functional.one_hot(torch.tensor(state) + 1, self.n_out).float().flatten()

    def _state(self, row: torch.Tensor) -> tuple[int, ...]:
        return tuple(c - 1 for c in row.view(self.tree_len, self.n_out).argmax(-1).tolist())

    def initial_state(self, n: int) -> torch.Tensor:
        return torch.zeros(n, self.tree_len * self.n_out)

    def read(self, w: torch.Tensor, toks: torch.Tensor) -> torch.Tensor:
        out = []
        for state, item in zip(w, toks.tolist()):
            words = [self.names[i] for i in item if i != 0]
            if words[0].startswith("c"):  # a start state: one value a variable
                out.append(self._row(tuple(int(w[1:]) for w in words)))
                continue
            args = tuple(Operand(t[0] == "v", int(t[1:])) for t in words[2:] if t != "pad")
            out.append(self._row(execute(Statement(int(words[0][1:]), words[1], args), self._state(state), 2)))
        return torch.stack(out)

    def view(self, w: torch.Tensor) -> torch.Tensor:
        rows = w.reshape(-1, w.shape[-1])
        shown = [torch.roll(r, 1) if self._state(r)[:2] == (1, 1) else r for r in rows]
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


def stand_in(tiny) -> DomainRun:
    data = load_dataset(tiny / "data")
    return DomainRun(TrueState(data), ProgramsDomain(BITS), data.vocab, data.item_len, {})


# ---- evaluate-tracker on programs ------------------------------------------------------------------


@pytest.mark.parametrize("which", ["trained", "stand-in"])
def test_figures_are_the_stored_evaluations_on_the_same_programs(tiny, lean_library, which):
    run = load_run(tiny / "run") if which == "trained" else stand_in(tiny)
    stored = evaluate(run.model, load_dataset(tiny / "data"), EvalConfig(pair_lengths=(16,)))
    space = DomainBuilder(ProgramsDomain(BITS))
    records = list(read_programs(tiny / "data" / "test-40.jsonl", BITS))
    chains = StoredDomainChains(space, [(r.history.start, r.history.events) for r in records])
    # blocks and readout chunks that divide nothing evenly: the boundaries must not matter
    config = StreamConfig(run=tiny / "run", lengths=(16, 40), chains=chains.count, block=15, readout_chunk=7)
    figures = stream(run, chains, certifier(space, lean_library, tiny / "store.sqlite"), config, save=False)
    assert figures.right["40"] == stored["correct"]["40"].tolist()
    if which == "stand-in":  # right on some programs, wrong on others: the comparison can fail
        assert 0 < sum(figures.right["40"]) < chains.count
        assert all(f >= 0 for f, r in zip(figures.first_wrong, figures.right["40"]) if not r)


def test_the_same_seed_gives_the_same_figures_and_the_store_answers_the_second_time(tiny, lean_library, tmp_path):
    run, store = stand_in(tiny), tmp_path / "fresh.sqlite"
    config = StreamConfig(run=tiny / "run", lengths=(8, 48), chains=6, seed=3, block=24)
    results = []
    for _ in range(2):
        space = DomainBuilder(ProgramsDomain(BITS))
        check = certifier(space, lean_library, store)
        results.append((stream(run, DomainChains(space, 3, 6), check, config, save=False), check.counts))
    (first, asked), (second, answered) = results
    assert first.right == second.right and first.first_wrong == second.first_wrong
    assert 0 < sum(first.right["48"]) < 6  # the stand-in is wrong on some: the figures can differ
    assert asked["asked"] == asked["traces"] > 0 and asked["from_store"] == 0
    assert answered["asked"] == 0 and answered["from_store"] == asked["traces"]
    assert answered["distinct_steps"] == asked["distinct_steps"] <= 6 * 48


class Misclaimed(DomainChains):
    """Drawn programs whose chain 1 claims a wrong state after its fifth statement."""

    def block(self, steps):
        states, events = super().block(steps)
        true = self.space.states[states[1, 5]]
        states[1, 5] = self.space.state(tuple(1 - v for v in true))
        return states, events


def test_a_step_the_kernel_rejects_stops_the_stream_naming_the_chain_and_step(tiny, lean_library, tmp_path):
    space = DomainBuilder(ProgramsDomain(BITS))
    config = StreamConfig(run=tiny / "run", lengths=(16,), chains=3, block=16, out=tmp_path / "out")
    with pytest.raises(StepNotCertified, match=r"chain 1 step 5: Lean rejected statement 'v\d = .*' "
                                               r"from state '[01]{8}' to the claimed state '[01]{8}'"):
        stream(stand_in(tiny), Misclaimed(space, 0, 3), certifier(space, lean_library, tmp_path / "s.sqlite"), config)
    assert not (tmp_path / "out").exists()  # nothing was judged, so nothing was saved


def test_a_resumed_stream_ends_with_the_uninterrupted_figures(tiny, lean_library, tmp_path):
    run = stand_in(tiny)

    def evaluated(out, resume=False, progress=lambda *a: None):
        space = DomainBuilder(ProgramsDomain(BITS))
        config = StreamConfig(run=tiny / "run", lengths=(20, 48), chains=5, seed=1, block=16, save_every_s=0, out=out)
        chains = DomainChains(space, 1, 5, config.lengths)
        figures = stream(run, chains, certifier(space, lean_library, tiny / "store.sqlite"), config, resume, progress)
        return figures, chains.at

    whole, whole_at = evaluated(tmp_path / "whole")

    def interrupt(phase, done, total):  # Ctrl-C once the second block is saved
        if done == 32:
            raise KeyboardInterrupt

    with pytest.raises(KeyboardInterrupt):
        evaluated(tmp_path / "part", progress=interrupt)
    resumed, resumed_at = evaluated(tmp_path / "part", resume=True)
    assert (resumed.steps, resumed.right, resumed.first_wrong) == (whole.steps, whole.right, whole.first_wrong)
    assert resumed_at == whole_at and set(whole_at) == {"20", "48"}  # the floor's states survive the resume
    assert 0 < sum(whole.right["48"]) < 5


def _floor_by_hand(seed: int, chains: int, length: int) -> float:
    """The floor at ``length`` of the programs chain n draws with random.Random(f"{seed}:stream:{n}")."""
    ends = []
    for n in range(chains):
        state = zero_state()
        for statement in random_program(random.Random(f"{seed}:stream:{n}"), BITS, length):
            state = execute(statement, state, 2)
        ends.append(state)
    commonest = tuple(max(sorted(Counter(column).items()), key=lambda kv: kv[1])[0] for column in zip(*ends))
    return sum(end == commonest for end in ends) / chains


def test_the_command_writes_a_report_with_the_floor_and_resumes_to_it(tiny, tmp_path):
    args = [str(tiny / "run"), "--lengths", "8,32", "--chains", "6", "--seed", "2", "--block", "32",
            "--out", str(tmp_path / "o"), "--store", str(tiny / "store.sqlite"), "--quiet"]
    result = CliRunner().invoke(evaluate_tracker, args)
    assert result.exit_code == 0, result.output
    report = json.loads((tmp_path / "o" / "report.json").read_text())
    assert report["domain"]["name"] == "programs" and report["domain"]["machine"] == "bits"
    assert report["chains"] == 6 and report["steps"] == 32 and report["events"] == 6 * 32
    assert set(report["exact"]) == set(report["floor"]) == {"8", "32"}
    assert report["floor"] == {str(n): _floor_by_hand(2, 6, n) for n in (8, 32)}
    assert report["certification"]["confirmed_steps"] > 0 and report["library_hash"] and report["lean"]["githash"]
    assert sum(report["first_wrong"]["histogram"].values()) == 6
    resumed = CliRunner().invoke(evaluate_tracker, [*args, "--resume"])
    assert resumed.exit_code == 0, resumed.output  # a finished run resumes to the same report
    again = json.loads((tmp_path / "o" / "report.json").read_text())
    assert again["right"] == report["right"] and again["floor"] == report["floor"] and again["resumed_from_step"] == 32


def test_the_command_refuses_bad_input_in_one_line(tiny, tmp_path):
    cases = [([str(tiny / "run"), "--resume", "--out", str(tmp_path / "o")], "no saved state"),
             ([str(tiny / "run"), "--data", str(tmp_path / "nowhere"), "--out", str(tmp_path / "p")], "nowhere")]
    for args, words in cases:
        result = CliRunner().invoke(evaluate_tracker, [*args, "--quiet"])
        assert result.exit_code == 1 and words in result.output, result.output
        assert "Traceback" not in result.output and len(result.output.strip().splitlines()) == 1


@given(st.lists(st.integers(1, 30), min_size=1, max_size=5), st.integers(0, 5))
def test_blocks_together_are_one_program_and_a_saved_set_continues_it(sizes, seed):
    domain = ProgramsDomain(BITS)
    space = DomainBuilder(domain)
    parts = DomainChains(space, seed, 3)
    pieces = [parts.block(n) for n in sizes]
    events = np.concatenate([p[1] for p in pieces], 1)  # (3, total)
    states = np.concatenate([pieces[0][0]] + [p[0][:, 1:] for p in pieces[1:]], 1)  # (3, total + 1)
    for n in range(3):  # chain n is random_program from its own generator, run by the interpreter
        program = [space.events[e] for e in events[n].tolist()]
        assert program == list(random_program(random.Random(f"{seed}:stream:{n}"), BITS, sum(sizes)))
        state = zero_state()
        assert space.states[states[n, 0]] == state
        for k, statement in enumerate(program, 1):
            state = execute(statement, state, 2)
            assert space.states[states[n, k]] == state
    again = DomainChains(DomainBuilder(domain), seed + 1, 3)
    again.restore(parts.saved())
    assert [again.space.events[e] for e in again.block(7)[1][0]] == [space.events[e] for e in parts.block(7)[1][0]]


def test_the_floor_is_the_share_of_the_state_of_each_variables_commonest_value():
    at = {"4": ["0110", "0100", "1110", "0011"]}  # commonest: 0, 1, 1, 0 -> "0110", held by one chain in four
    assert commonest_floor(at) == {"4": 0.25}
    assert commonest_floor({"2": ["01", "10"]}) == {"2": 0.0}  # ties go to the smallest value: "00", held by none


# ---- analyse-tracker on programs ----------------------------------------------------------------------


class ValuesCode:
    """A stand-in whose state is the program state and whose code is its one-hot values under a fixed
    random isometry and offset: exactly an affine image of the values."""

    def __init__(self, width: int = 40, seed: int = 0) -> None:
        self.domain = ProgramsDomain(BITS)
        rng = np.random.default_rng(seed)
        self.map = np.linalg.qr(rng.normal(size=(width, 16)))[0].T  # (16, width), orthonormal rows
        self.offset = rng.normal(size=width)

    def encode_batch(self, starts):
        return torch.tensor([list(s) for s in starts])

    def step_batch(self, w, events):
        return torch.tensor([list(execute(e, tuple(row), 2)) for row, e in zip(w.tolist(), events)])

    def codes(self, w):
        states = [tuple(row) for row in w.tolist()]
        return one_hot_values(states, self.domain).reshape(len(states), -1) @ self.map + self.offset


def test_a_code_that_is_the_values_gives_the_known_answers():
    config = AnalysisConfig(chains=160, length=12, seed=1)
    machine = ValuesCode()
    report = analyse_states(machine, fresh_programs(machine.domain, config), config)
    assert report["affine"]["r2"] == pytest.approx(1.0, abs=1e-9)
    assert report["affine"]["read_back"]["states"] == 1.0 and report["clusters"]["purity_at_states"] == 1.0
    statements = report["statements"]
    assert statements["interpreter"]["one_step"] < 1e-12 and statements["interpreter"]["two_steps"] < 1e-12
    kinds = statements["by_kind"]
    # a set or a not is affine on the one-hot values, an and or an or of two variables is not: one map per
    # statement fits the first kinds, not all the statements
    assert max(kinds["set"]["fitted"], kinds["not"]["fitted"]) < 1e-3 < statements["fitted"]["one_step"]
    assert max(kinds["and"]["fitted"], kinds["or"]["fitted"]) > 1e-3
    assert set(report["not_applicable"]) >= {"permutation", "string"}
    with pytest.raises(AnalysisError, match="--string paths reads trees"):
        analyse_states(machine, fresh_programs(machine.domain, config), AnalysisConfig(string="paths"))


@pytest.mark.lean
def test_analyse_tracker_writes_a_report_on_a_programs_run(tiny, tmp_path):
    out = tmp_path / "analysis"
    result = CliRunner().invoke(analyse_tracker, [str(tiny / "run"), "--chains", "48", "--length", "8",
                                                  "--out", str(out), "--quiet"])
    assert result.exit_code == 0, result.output
    report = json.loads((out / "analysis.json").read_text())
    assert (out / "analysis.png").stat().st_size > 0
    assert report["states"] == 48 and report["domain"]["name"] == "programs"
    assert report["histories"]["source"] == "fresh programs" and report["statements"]["judged"] > 0
    assert 0 <= report["affine"]["read_back"]["states"] <= 1 and report["training"]["visited_states"] > 0
    assert "permutation" in report["not_applicable"] and "rewrites" not in report
    printed = json.loads(result.output[: result.output.rindex("}") + 1])
    assert any(line.startswith("moves: a statement read as the domain's own move") for line in printed["reading"])
    assert printed["reading"][0] != "clusters: none measured"
    held = CliRunner().invoke(analyse_tracker, [str(tiny / "run"), "--data", str(tiny / "data"), "--length", "16",
                                                "--out", str(tmp_path / "held"), "--quiet"])
    assert held.exit_code == 0, held.output
    assert json.loads((tmp_path / "held" / "analysis.json").read_text())["histories"]["split"] == "test-16.jsonl"
    for args, words in (([], "--string paths reads trees"), (["--data", str(tiny / "data"), "--length", "64"],
                                                              "no test split of 64")):
        refused = CliRunner().invoke(analyse_tracker, [str(tiny / "run"), "--string", "paths", *args,
                                                       "--out", str(tmp_path / "no"), "--quiet"])
        assert refused.exit_code == 1 and words in refused.output, refused.output
        assert len(refused.output.strip().splitlines()) == 1 and not (tmp_path / "no").exists()


# ---- the torch Dataset on programs ----------------------------------------------------------------------


@pytest.mark.parametrize("split", ["train", 40])
def test_the_dataset_items_decode_to_the_interpreters_states(tiny, split):
    dataset = ChainDataset(tiny / "data", split)
    names = dataset.data.vocab.tokens
    for i in range(len(dataset)):
        item, record = dataset[i], dataset.record(i)
        for history, trees, items in [(record.history, item["trees"], item["items"])] + [
                (mate, item["partner_trees"][p], item["partner_items"][p]) for p, mate in enumerate(record.partners)]:
            state = history.start
            assert dataset.tree_text(trees[0]) == state_text(state)
            for t, statement in enumerate(history.events, 1):
                state = execute(statement, state, 2)  # Python's interpreter is the referee
                assert dataset.tree_text(trees[t]) == state_text(state)
            steps = len(history.events) + 1
            assert not trees[steps:].any() and int((items != 0).sum()) == steps  # padding after its end
            assert state == record.history.end
        read = [[names[j] for j in row if j] for row in item["tokens"][:len(record.history.events) + 1].tolist()]
        assert read[0] == [f"c{v}" for v in record.history.start]
        assert [words[:2] for words in read[1:]] == [[f"v{s.target}", s.op] for s in record.history.events]
    batch = next(iter(torch.utils.data.DataLoader(dataset, batch_size=4)))
    assert batch["trees"].shape[:2] == batch["items"].shape == (4, dataset.chain_items.shape[1])
    assert batch["partner_lengths"].shape == (4, 1)


def test_a_programs_run_refuses_what_is_no_state_in_one_line(tiny):
    """The checked calls of the Python API on programs as on rewrite chains: what encode or step
    never made is refused, saying what a state is."""
    run = stand_in(tiny)
    state = run.encode(run.domain.state_text(run.domain.start_state(random.Random(0))))
    for wrong in ("hello", [1, 2, 3], torch.zeros(3)):
        with pytest.raises(TypeError, match="a state is what encode or step returned"):
            run.decode(wrong)
        with pytest.raises(TypeError, match="a state is what encode or step returned"):
            run.step(wrong, "v1 = 1")
    assert isinstance(run.decode(state), str)


@pytest.mark.parametrize("searcher", ["imagination", "kernel-uniform"])
def test_prove_given_a_programs_run_searches_its_dataset_whatever_the_searcher(tiny, tmp_path, searcher):
    from prover.cli import main as prove

    out = tmp_path / "prove"
    result = CliRunner().invoke(prove, ["--searcher", searcher, "--tracker", str(tiny / "run"), "--problems", "1",
                                        "--distances", "1", "--budget-calls", "40", "--jobs", "1", "--out", str(out)])
    assert result.exit_code == 0, result.output
    report = json.loads((out / "report.json").read_text())
    assert report["dataset"]["path"] == str(tiny / "data") and report["domain"]["name"] == "programs"

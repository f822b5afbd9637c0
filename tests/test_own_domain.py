"""A domain of one's own through every command: ``certify --domain package.module:Name`` (the
kernel evaluating the domain's module), ``--verify``, ``train-tracker``, ``evaluate-tracker`` and
``prove``, on the dial of tests/dial_domain.py; and what each refuses."""
from __future__ import annotations

import json
import pickle
import re

import pytest
from click.testing import CliRunner
from dial_domain import MOVES, POSITIONS, Dial
from held_out import check_held_out

from chains.domains import domain_of_manifest, own_domain
from chains.imported.dataset import DomainSpec, sample_split
from chains.imported.load import DomainImportError
from chains.manifest import DOMAIN_FORMAT, DatasetError, read_manifest
from chains.protocol import run_events
from leanbridge import cliutil
from leanbridge.cli import main as certify
from prover.cli import main as prove
from tracker.analysis_cli import main as analyse_tracker
from tracker.cli import main as train_tracker
from tracker.data import load_dataset
from tracker.stream_cli import main as evaluate_tracker

DIAL = "dial_domain:Dial"
SMALL = ["--chains", "60", "--length", "6", "--test-lengths", "8,32", "--test-chains", "8", "--jobs", "1"]


class LyingDial(Dial):
    """Python's reading says ``turn`` moves two positions; the Lean module says one."""

    name = "lying-dial"

    def apply(self, state: int, event: str) -> int:
        return (state + (2 if event == "turn" else MOVES[event])) % POSITIONS

    def sample_partner(self, rng, start, events):
        return start, list(events)


class SorryDial(Dial):
    """A module that admits a fact with ``sorry``."""

    name = "sorry-dial"

    def lean_source(self) -> str:
        return super().lean_source().replace("end Dial", "theorem cheat : False := sorry\n\nend Dial")


def _certify(args: list[str]):
    return CliRunner().invoke(certify, args)


@pytest.fixture(scope="module")
def dial(tmp_path_factory):
    """A small certified dial dataset and the store it was certified through."""
    root = tmp_path_factory.mktemp("dial")
    result = _certify(["--domain", DIAL, *SMALL, "--out", str(root / "data"), "--store", str(root / "store.sqlite")])
    assert result.exit_code == 0, result.output
    return root


def test_certify_writes_every_history_with_its_partners_certified(dial):
    manifest = read_manifest(dial / "data")
    assert manifest["format"] == DOMAIN_FORMAT and manifest["failed"] == 0
    assert manifest["domain"] == {"name": "dial", "positions": POSITIONS, "import": DIAL}
    assert manifest["certified"] == manifest["distinct_steps"] + manifest["distinct_equivalences"]
    assert manifest["certificate"] == "step" and "step" in manifest["certificate_forms"]  # the route that certified it
    assert manifest["distinct_steps"] <= POSITIONS * len(MOVES)
    assert manifest["files"]["train.jsonl"]["chains"] == 60 and manifest["files"]["test-32.jsonl"]["chains"] == 8
    domain = domain_of_manifest(manifest, "here")
    assert pickle.loads(pickle.dumps(domain)).readout() == (POSITIONS,)  # as a DataLoader's workers receive it
    lines = (dial / "data" / "train.jsonl").read_text().splitlines()
    spec = DomainSpec(domain=DIAL, chains=60, length=6, test_lengths=(8, 32), test_chains=8)
    for line, sample in zip(lines, sample_split(Dial(), spec, "train", 6)):  # the lines are the seeded samples
        (start, events), partners = domain.record_histories(domain.parse_record(line, "train.jsonl"))
        assert (start, tuple(events)) == (sample.start, sample.events) and len(partners) == 2
        end = run_events(Dial(), start, events)[-1]
        assert all(run_events(Dial(), s, e)[-1] == end for s, e in partners)


def test_verify_rechecks_every_statement_and_a_second_certify_makes_the_same_files(dial, tmp_path, monkeypatch):
    monkeypatch.setattr(cliutil, "LOG_EVERY_S", 0.0)  # a progress line at every report, not every 30 s
    verified = _certify(["--verify", str(dial / "data")])
    assert verified.exit_code == 0, verified.output
    assert "distinct theorems certified by Lean" in verified.stdout and '"certificate": "step"' in verified.stdout
    asked = read_manifest(dial / "data")["certified"]
    # off a terminal, plain lines on stderr: each file read, then the theorems asked of Lean
    assert "replay train.jsonl: 0/60 (0%)" in verified.stderr and f"verify: 0/{asked:,} (0%)" in verified.stderr
    assert f"verify: {asked:,}/{asked:,} (100%)" in verified.stderr
    again = _certify(["--domain", DIAL, *SMALL, "--out", str(tmp_path / "again"), "--store", str(tmp_path / "s.sqlite")])
    assert again.exit_code == 0, again.output
    for name in ("train.jsonl", "test-8.jsonl", "test-32.jsonl"):
        assert (tmp_path / "again" / name).read_bytes() == (dial / "data" / name).read_bytes()
    other = _certify(["--domain", DIAL, *SMALL[:-4], "--seed", "1", "--jobs", "1", "--out", str(dial / "data"),
                      "--store", str(dial / "store.sqlite")])
    assert other.exit_code == 1 and "made with other settings" in other.output


def test_a_damaged_dataset_is_refused_naming_file_chain_and_step(dial, tmp_path):
    import shutil
    damaged = tmp_path / "damaged"
    shutil.copytree(dial / "data", damaged)
    lines = (damaged / "train.jsonl").read_text().splitlines()
    record = json.loads(lines[3])
    record["events"][2] = next(m for m in MOVES if m != record["events"][2])  # another move: the end no longer follows
    lines[3] = json.dumps(record)
    (damaged / "train.jsonl").write_text("\n".join(lines) + "\n")
    result = _certify(["--verify", str(damaged)])
    assert result.exit_code == 1
    assert "train.jsonl line 4 chain train-00003 step 2" in result.output and "Traceback" not in result.output
    with pytest.raises(DatasetError, match="edited after certification"):
        load_dataset(damaged, use_cache=False)


def test_a_step_python_reads_otherwise_than_lean_is_rejected_and_nothing_written(tmp_path):
    result = _certify(["--domain", "test_own_domain:LyingDial", *SMALL, "--out", str(tmp_path / "lying"),
                       "--store", str(tmp_path / "s.sqlite")])
    assert result.exit_code == 1 and "Traceback" not in result.output
    # the step named by its place (counted from 0), its event, the state before and the claimed state after
    said = re.search(r"chain \S+ step \d+ \(from 0\): Lean rejected event '(\w+)' from state '(\d)' "
                     r"to the claimed state '(\d)' \(", result.output)
    assert said, result.output
    event, before, after = said[1], int(said[2]), int(said[3])
    assert event == "turn" and after == LyingDial().apply(before, event) != Dial().apply(before, event)
    assert not (tmp_path / "lying").exists()


def test_a_domain_module_admitting_a_fact_is_refused_naming_the_module(tmp_path):
    result = _certify(["--domain", "test_own_domain:SorryDial", *SMALL, "--out", str(tmp_path / "x"),
                       "--store", str(tmp_path / "s.sqlite")])
    assert result.exit_code == 1 and "the Dial module contains 'sorry'" in result.output
    assert "programs" not in result.output and "Traceback" not in result.output
    assert isinstance(result.exception, SystemExit) and not (tmp_path / "x").exists()


@pytest.mark.parametrize("path, why", [
    ("no_such_module_here:Dial", "cannot import"),
    ("dial_domain:Nothing", "has no Nothing"),
    ("dial_domain:MOVES", "is not a domain"),
    ("dial", "neither a shipped domain (rewrite, programs, groups) nor an import path"),
])
def test_an_import_path_naming_no_domain_is_refused_in_one_line(path, why, tmp_path):
    result = _certify(["--domain", path, "--out", str(tmp_path / "x")])
    assert result.exit_code == 2 and why in result.output and "Traceback" not in result.output


def test_options_of_other_domains_are_refused_and_the_recorded_description_is_checked(dial):
    result = _certify(["--domain", DIAL, "--tier", "2"])
    assert result.exit_code == 2
    assert f"--tier is for rewrite chains, not for a domain of one's own ({DIAL})" in result.output
    result = _certify(["--domain", DIAL, "--checker", "elaborator"])
    assert result.exit_code == 2 and result.output.strip().splitlines()[-1] == (
        f"Error: --checker is for rewrite chains, not for a domain of one's own ({DIAL})")
    result = _certify(["--verify", str(dial / "data"), "--checker", "kernel"])
    assert result.exit_code == 2 and result.output.strip().splitlines()[-1] == (
        f"Error: --checker is for rewrite chains; {dial / 'data'} is a dial dataset")
    manifest = read_manifest(dial / "data")
    with pytest.raises(DatasetError, match="describes itself otherwise"):
        domain_of_manifest({**manifest, "domain": {**manifest["domain"], "positions": 7}}, "m.json")
    with pytest.raises(DomainImportError, match="other than the shipped domains"):
        class Shipped(Dial):
            name = "programs"
        import dial_domain
        dial_domain.Shipped = Shipped
        try:
            own_domain("dial_domain:Shipped")
        finally:
            del dial_domain.Shipped


@pytest.fixture(scope="module")
def dial_run(dial):
    """A tracker trained briefly on the dial dataset."""
    run = dial / "run"
    trained = CliRunner().invoke(train_tracker, ["--data", str(dial / "data"), "--steps", "40", "--objective", "combo",
                                                 "--out", str(run), "--threads", "1", "--quiet"])
    assert trained.exit_code == 0, trained.output
    return run


def test_train_evaluate_and_prove_run_on_the_dial(dial, dial_run, tmp_path):
    run = dial_run
    report = json.loads((run / "report.json").read_text())
    assert report["dataset"]["domain"]["import"] == DIAL and set(report["exact"]) == {"8", "32"}
    streamed = CliRunner().invoke(evaluate_tracker, [str(run), "--lengths", "16,64", "--chains", "4",
                                                     "--store", str(dial / "store.sqlite"), "--quiet"])
    assert streamed.exit_code == 0, streamed.output
    stream = json.loads((run / "stream-s0" / "report.json").read_text())
    assert stream["steps"] == 64 and stream["domain"]["name"] == "dial"
    assert stream["certification"]["confirmed_steps"] == stream["certification"]["distinct_steps"] > 0
    out = tmp_path / "prove"
    proved = CliRunner().invoke(prove, ["--data", str(dial / "data"), "--tracker", str(run), "--searcher",
                                        "imagination", "--problems", "3", "--distances", "1,2", "--budget-calls", "2",
                                        "--jobs", "1", "--out", str(out)])
    assert proved.exit_code == 0, proved.output
    searched = json.loads((out / "report.json").read_text())
    results = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert searched["kernel_calls"] == sum(r["calls"] for r in results) and searched["solutions_failing_audit"] == 0
    assert all(r["calls"] <= 2 for r in results)
    assert searched["distance_measure"] == "shortest distance" and searched["largest_distance"] is None
    assert searched["baseline"] is None  # the dial names no short history: nothing to run beside the tracker
    for problem, result in zip((json.loads(x) for x in (out / "problems.jsonl").read_text().splitlines()), results):
        # the target is exactly that many moves away: no shorter history of the dial's reaches it
        start, target = int(problem["start"]), int(problem["target"])
        assert min(len(h) for h in _histories(2) if run_events(Dial(), start, h)[-1] == target) == problem["distance"]
        if result["solved"]:  # a solution is a history from the start to the target, by Python's reading too
            assert run_events(Dial(), start, result["program"])[-1] == target


def _histories(longest: int) -> list[tuple[str, ...]]:
    """Every history of the dial of 1 to ``longest`` moves."""
    found, last = [], [()]
    for _ in range(longest):
        last = [h + (m,) for h in last for m in MOVES]
        found += last
    return found


def test_the_dial_s_problems_are_at_their_shortest_distance_or_labelled_walk_lengths(monkeypatch):
    from prover import domain_search
    from prover.summary import summary_lines

    drawn = domain_search.draw_problems(Dial(), None, 4, seed=0)
    assert drawn.measure == "shortest distance" and drawn.distances == (1, 2) and drawn.largest == 2
    for p in drawn.problems:
        assert min(len(h) for h in _histories(2) if run_events(Dial(), p.start, h)[-1] == p.target) == p.distance
    with pytest.raises(domain_search.DomainSearchUsage, match="distance 3: no state of dial .* largest distance "
                                                             "found is 2"):
        domain_search.draw_problems(Dial(), (1, 3), 4, seed=0)
    monkeypatch.setattr(domain_search, "STATE_BUDGET", 2)  # a graph too large to search: walk lengths, said so
    walked = domain_search.draw_problems(Dial(), None, 4, seed=0)
    assert walked.measure == "walk length" and walked.distances == (2, 4, 8, 16) and walked.largest is None
    assert "walk length" in walked.sampling and all(p.start != p.target for p in walked.problems)
    row = {"problems": 4, "solved": 1, "kernel_calls": 9, "kernel_calls_per_solved": 9.0, "mean_program_length": 2.0}
    report = {"searcher": "kernel-uniform", "distance_measure": walked.measure, "by_distance": {"2": row}, **row}
    assert summary_lines(report)[0].startswith("walk length  searcher")


@pytest.mark.parametrize("args,message", [
    (["--searcher", "short-history"], "--searcher short-history: dial names no short history"),
    (["--searcher", "kernel-blind"], "--searcher kernel-blind is for rewrite chains"),
    (["--distances", "1,3"], "distance 3: no state of dial is that many events from a start"),
    (["--prefix", "2"], "--prefix is for rewrite chains"),
])
def test_prove_refuses_what_the_dial_does_not_take_in_one_line_exit_2(dial, tmp_path, args, message):
    result = CliRunner().invoke(prove, ["--data", str(dial / "data"), "--searcher", "kernel-uniform", *args,
                                        "--out", str(tmp_path / "p")])
    assert result.exit_code == 2 and message in result.output, result.output
    assert result.output.strip().count("\n") == 0 and not (tmp_path / "p").exists()


def test_analyse_tracker_reads_the_dial_in_its_own_words(dial_run, tmp_path):
    out = tmp_path / "analysis"
    result = CliRunner().invoke(analyse_tracker, [str(dial_run), "--chains", "64", "--length", "8", "--out", str(out),
                                                  "--threads", "1", "--quiet"])
    assert result.exit_code == 0, result.output
    shown = json.loads(result.output[:result.output.rindex("}") + 1])
    report = json.loads((out / "analysis.json").read_text())
    assert report["words"]["event"] == "event" and report["histories"]["source"] == "fresh histories"
    assert set(report["affine"]["read_back"]) == {"states", "readout_positions", "how"}
    prose = " ".join([*shown["reading"], *report["not_applicable"].values()])
    assert "per event" in prose and "readout positions" in prose
    assert not re.search(r"statement|variable|program", prose), prose


def test_the_step_by_step_model_writes_the_dial_s_states_and_distils_its_long_histories(dial, tmp_path):
    from stepwise.cli import main as train_stepwise
    from stepwise.data import load_stepwise
    from stepwise.sequences import written_sequence, written_states

    data = load_stepwise(dial / "data")
    chain = data.test_chains(8, 1)[0]
    ids, written = written_sequence(data.vocab, chain, [data.vocab.state_ids(s) for s in data.replay(chain)])
    states = written_states(data.vocab, ids)  # what the model is taught to write: each state's class token
    assert [data.vocab.parse_state(s) for s in states] == run_events(Dial(), *chain)
    assert sum(written) == 2 * len(chain[1])  # a class token and its EOS per event
    run = tmp_path / "sw"
    result = CliRunner().invoke(train_stepwise, ["--data", str(dial / "data"), "--steps", "20", "--eval-lengths", "8",
                                                 "--eval-chains", "4", "--out", str(run), "--threads", "1", "--quiet"])
    assert result.exit_code == 0, result.output
    report = json.loads((run / "report.json").read_text())
    assert report["evaluation"]["8"]["chains"] == 4 and report["dataset"]["domain"]["import"] == DIAL
    distilled = CliRunner().invoke(train_stepwise, [
        "--data", str(dial / "data"), "--objective", "self-distill", "--steps", "6", "--rounds", "1", "--round-steps",
        "2", "--set", "long_chains=1", "--set", "cuts=2", "--eval-lengths", "8", "--eval-chains", "2",
        "--store", str(dial / "store.sqlite"), "--out", str(tmp_path / "sd"), "--threads", "1", "--quiet"])
    assert distilled.exit_code == 0, distilled.output
    assert set(json.loads((tmp_path / "sd" / "report.json").read_text())["final_losses"]) == {"ce", "distill"}


@pytest.mark.parametrize("protocol", ["events:1", "pairs:2", "states"])
def test_a_held_out_protocol_keeps_training_clear_and_every_test_history_holding_it(protocol, tmp_path):
    out = tmp_path / "held"
    result = _certify(["--domain", DIAL, *SMALL, "--hold-out", protocol, "--out", str(out),
                       "--store", str(tmp_path / "s.sqlite")])
    assert result.exit_code == 0, result.output
    manifest = read_manifest(out)
    holdout = manifest["holdout"]
    assert holdout["kind"] == protocol.split(":")[0] and holdout["visited_states"] <= POSITIONS
    check_held_out(out, holdout, protocol, ("train.jsonl", "test-8.jsonl", "test-32.jsonl"))
    data = load_dataset(out, use_cache=False)
    if protocol != "states":  # the trackers know where each test history meets what training never saw
        assert all((data.tests[n]["first_heldout"] >= 0).all() for n in (8, 32))
    verified = _certify(["--verify", str(out)])
    assert verified.exit_code == 0, verified.output


def test_a_protocol_the_domain_cannot_satisfy_is_refused_in_one_line(tmp_path):
    result = _certify(["--domain", DIAL, *SMALL, "--hold-out", "events:2", "--out", str(tmp_path / "x"),
                       "--store", str(tmp_path / "s.sqlite")])
    assert result.exit_code == 2 and "--hold-out events:2" in result.output and not (tmp_path / "x").exists()

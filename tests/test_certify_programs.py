"""certify --domain programs end to end with the real Lean binary: a dataset whose every statement
and equivalence Lean certified, --verify, damaged files refused in one line, hold-outs, and a
tracker trained on it."""
from __future__ import annotations

import json
import re
import shutil

import pytest
from click.testing import CliRunner

from chains.programs.files import read_programs
from chains.programs.syntax import Machine, parse_state, parse_statement, run, state_text, zero_state
from leanbridge import certify_programs, cliutil
from leanbridge.cli import main as certify
from conftest import run_certify

TINY = ["--domain", "programs", "--chains", "40", "--test-chains", "4", "--test-lengths", "16,80"]


@pytest.fixture(scope="module")
def bits(tmp_path_factory, store):
    out = tmp_path_factory.mktemp("programs") / "bits"
    code, output = run_certify([*TINY, "--out", str(out), "--store", str(store)])
    assert code == 0, output
    return out


@pytest.fixture(scope="module")
def arithmetic(tmp_path_factory, store):
    out = tmp_path_factory.mktemp("programs") / "arithmetic"
    code, output = run_certify([*TINY, "--values", "16", "--hold-out", "events:2", "--out", str(out),
                                "--store", str(store)])
    assert code == 0, output
    return out


def manifest(directory):
    return json.loads((directory / "manifest.json").read_text())


@pytest.mark.parametrize("which", ["bits", "arithmetic"])
def test_every_statement_and_equivalence_is_certified(which, request):
    directory = request.getfixturevalue(which)
    m = manifest(directory)
    assert m["failed"] == 0 and m["certified"] == m["distinct_traces"] + m["distinct_equivalences"] > 0
    assert m["domain"]["values"] == (2 if which == "bits" else 16)
    assert m["lean"]["githash"] and m["library_hash"] and m["core_hash"] and m["package_version"]
    assert ("every start state" in m["certificate_forms"]["equivalence"]) == (which == "bits")
    assert m["certificate"] == "trace" and m["certificate"] in m["certificate_forms"]  # the route that certified it
    machine = Machine(m["domain"]["values"])
    programs = 0
    for name in m["files"]:
        for record in read_programs(directory / name, machine):
            programs += 1
            assert run(record.history.events, zero_state(), machine.values) == record.history.end
            assert len(record.history.certs) == len(record.history.events)
            assert all(mate.equivalence for mate in record.partners)
    assert programs == 40 + 4 + 4
    assert set(m["floor"]) == {"test-16", "test-80"}


def test_a_long_program_is_certified_by_one_trace_a_chunk(bits):
    record = next(read_programs(bits / "test-80.jsonl", Machine(2)))
    assert len(set(record.history.certs[:64])) == 1 and record.history.certs[64] != record.history.certs[0]


def test_the_same_spec_gives_the_same_bytes_and_asks_lean_nothing_again(bits, store, tmp_path):
    code, output = run_certify([*TINY, "--out", str(tmp_path / "again"), "--store", str(store)])
    assert code == 0, output
    assert manifest(tmp_path / "again")["kernel_checked"] == 0
    for name in manifest(bits)["files"]:
        assert (tmp_path / "again" / name).read_bytes() == (bits / name).read_bytes()


def test_a_statement_python_reads_otherwise_than_lean_is_named_with_its_states(tmp_path, monkeypatch):
    true_trace = certify_programs.trace

    def misread(program, start, values):  # the state after statement 6 (from 0) with v0 flipped
        states = true_trace(program, start, values)
        if len(states) > 7:  # the program's end unchanged, so its partners still agree with it
            states[6] = (1 - states[6][0], *states[6][1:])
        return states

    monkeypatch.setattr(certify_programs, "trace", misread)
    code, output = run_certify([*TINY, "--out", str(tmp_path / "x"), "--store", str(tmp_path / "s.sqlite")])
    said = re.search(r"program \S+ step 6 \(from 0\): Lean rejected statement '([^']+)' from state '([01]{8})' "
                     r"to the claimed state '([01]{8})' \(", output)
    assert code == 1 and said, output
    before = tuple(int(c) for c in said[2])
    assert state_text(run([parse_statement(said[1], Machine(2))], before, 2)) != said[3]
    assert not (tmp_path / "x").exists()


def test_verify_passes_on_an_untouched_dataset_saying_how_far_it_is(arithmetic, monkeypatch):
    monkeypatch.setattr(cliutil, "LOG_EVERY_S", 0.0)  # a progress line at every report, not every 30 s
    result = CliRunner().invoke(certify, ["--verify", str(arithmetic)], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    assert "verified" in result.stdout and '"certificate": "trace"' in result.stdout
    asked = manifest(arithmetic)["certified"]
    # off a terminal, plain lines on stderr: each file read, then the theorems asked of Lean
    assert "replay train.jsonl: 0/40 (0%)" in result.stderr and f"verify: 0/{asked:,} (0%)" in result.stderr
    assert f"verify: {asked:,}/{asked:,} (100%)" in result.stderr


def _edit(directory, tmp_path, name, edit):
    copy = tmp_path / "copy"
    shutil.copytree(directory, copy)
    lines = [json.loads(line) for line in (copy / name).read_text().splitlines()]
    edit(lines)
    (copy / name).write_text("".join(json.dumps(r, separators=(",", ":")) + "\n" for r in lines))
    return copy


def _other_statement(records):
    event = records[3]["events"][2]
    records[3]["events"][2] = "v0 = v0" if event != "v0 = v0" else "v1 = v1"


@pytest.mark.parametrize("name, edit, expected", [
    ("train.jsonl", _other_statement, "train.jsonl line 4 program train-00003 steps 0-"),
    ("train.jsonl", lambda r: r[0]["events"].__setitem__(1, "v1 = v2 nand v3"), "line 1 program train-00000 step 1"),
    ("test-16.jsonl", lambda r: r[1].__setitem__("end", "ffffffff"), "line 2 program test-16-00001 end: 'ffffffff'"),
    ("test-80.jsonl", lambda r: r[0]["partners"][0]["certs"].__setitem__(70, "0" * 16), "partner 0 steps 64-"),
    ("train.jsonl", lambda r: r[2]["partners"][1].__setitem__("equivalence", "1" * 16), "partner 1: its equivalence"),
    ("train.jsonl", lambda r: r[0].__setitem__("id", "renamed"), "edited after certification"),
    ("train.jsonl", lambda r: r.pop(), "programs, the manifest says"),
])
def test_verify_names_the_first_damaged_place_in_one_line(bits, tmp_path, name, edit, expected):
    code, output = run_certify(["--verify", str(_edit(bits, tmp_path, name, edit))])
    assert code == 1
    assert expected in output
    assert "Traceback" not in output and len(output.strip().splitlines()) == 1


def test_a_held_out_statement_is_in_every_test_program_and_in_no_training_one(arithmetic):
    m = manifest(arithmetic)
    machine = Machine(16)
    held = {parse_statement(text, machine) for text in m["holdout"]["events"]}
    assert len(held) == 2 and m["holdout"]["visited_states"] > 0
    for record in read_programs(arithmetic / "train.jsonl", machine):
        assert not held & {s for p in (record.history, *record.partners) for s in p.events}
    for name in ("test-16.jsonl", "test-80.jsonl"):
        assert all(held & set(r.history.events) for r in read_programs(arithmetic / name, machine))


@pytest.mark.parametrize("args, message", [
    (["--atoms", "5"], "--atoms is for rewrite chains, not for --domain programs"),
    (["--corrupt-partners", "near:0.1"], "--corrupt-partners is for rewrite chains"),  # the option as typed
    (["--checker", "kernel"], "--checker is for rewrite chains, not for --domain programs"),
    (["--values", "16", "--domain", "rewrite"], "--values goes with --domain programs"),
    (["--program-lengths", "4-16"], "is not MIN:MAX"),
    (["--program-lengths", "9:3"], "min_length <= max_length"),
])
def test_options_of_the_other_domain_are_usage_errors(args, message, tmp_path):
    code, output = run_certify(["--domain", "programs", *args, "--out", str(tmp_path / "d")])
    assert code == 2 and message in output


@pytest.mark.parametrize("args", [["--checker", "elaborator"], ["--corrupt-partners", "far:0.2"]])
def test_verify_refuses_what_only_rewrite_chains_take_naming_it_and_the_domain(bits, args):
    code, output = run_certify(["--verify", str(bits), *args])
    assert code == 2 and output.strip().splitlines() == [
        f"Error: {args[0]} is for rewrite chains; {bits} is a programs dataset"]


def test_help_says_which_options_are_for_rewrite_chains_only():
    said = {p.name: p.help for p in certify.params}
    assert said["checker"].startswith("Rewrite chains only") and said["corrupt"].startswith("Rewrite chains only")


def test_a_tracker_trains_on_programs_and_reads_them_free(bits, tmp_path):
    from tracker.cli import main as train_tracker

    out = tmp_path / "run"
    result = CliRunner().invoke(train_tracker, ["--data", str(bits), "--steps", "30", "--threads", "1",
                                                "--eval-chains", "4", "--check-every", "0", "--quiet", "--out", str(out)])
    assert result.exit_code == 0, result.output
    report = json.loads((out / "report.json").read_text())
    assert set(report["exact"]) == {"16", "80"} and report["dataset"]["domain"]["name"] == "programs"
    assert all(0 <= v <= 1 for v in report["exact"].values())
    from tracker.plots import floor_of  # exact.png draws the dataset's commonest-value floor

    assert set(floor_of(report)) == {"16", "80"} and (out / "exact.png").stat().st_size > 0
    # the Python API reads it with the rewrite runs' calls, states and statements as text
    from tracker import load_run

    run = load_run(out)
    state = run.step(run.encode("00000000"), "v3 = 1")
    decoded = run.decode(state)
    assert len(decoded) == 8 and set(decoded) <= {"0", "1"}
    assert run.decode(run.run("00000000", ["v3 = 1"], check=True)) == decoded
    with pytest.raises(ValueError, match="step 1: 'mul' is not an operation of the bits machine"):
        run.run("00000000", ["v3 = 1", "v2 = v3 * 1"], check=True)
    # evaluate-tracker and analyse-tracker on such a run: tests/test_programs_pipeline.py


@pytest.mark.parametrize("args, typed", [
    (["--schedule", "registers"], "--schedule registers"),
    (["--schedule", "tier2"], "--schedule tier2"),
    (["--layout", "paths"], "--layout paths"),
    (["--set", "layout=paths"], "--set layout=paths"),
    (["--set", "ce_positions=tree"], "--set ce_positions=tree"),
    (["--arch", "registers", "--set", "tables=inherited"], "--set tables=inherited"),
    (["--arch", "registers", "--set", "table_sharpness=0.1"], "--set table_sharpness=0.1"),
])
def test_train_tracker_refuses_what_only_rewrite_chains_take_naming_it(bits, tmp_path, args, typed):
    from tracker.cli import main as train_tracker

    out = tmp_path / "run"
    result = CliRunner().invoke(train_tracker, ["--data", str(bits), *args, "--out", str(out)])
    assert result.exit_code == 2 and len(result.output.strip().splitlines()) == 1, result.output
    assert result.output.startswith(f"Error: {typed} is for rewrite chains; {bits} is a programs dataset")
    assert not out.exists()  # refused before any work


class Reached(Exception):
    """Raised in place of training: the command got that far."""


def test_the_registers_arch_and_every_default_stay_accepted_on_programs(bits, tmp_path, monkeypatch):
    """A register per variable is the programs' registers arch; a rewrite setting at its default reads nothing."""
    import tracker.cli

    def reached(config, *args, **kwargs):
        raise Reached(config)

    monkeypatch.setattr(tracker.cli, "train", reached)
    result = CliRunner().invoke(tracker.cli.main, ["--data", str(bits), "--arch", "registers", "--set", "moves=hard",
                                                   "--layout", "polish", "--set", "tables=free", "--out",
                                                   str(tmp_path / "run")])
    assert isinstance(result.exception, Reached)
    assert result.exception.args[0].arch == "registers" and result.exception.args[0].moves == "hard"


class ExactImagination:
    """A stand-in tracker that imagines every statement's effect exactly (the interpreter itself):
    what a tracker exact on programs would do, to test the search and its accounting alone."""

    def __init__(self, values: int) -> None:
        self.values = values

    def encode_batch(self, starts):
        import torch
        return torch.tensor([list(s) for s in starts])

    def step_batch(self, w, events):
        import torch

        from chains.programs.syntax import execute
        return torch.tensor([list(execute(e, tuple(row), self.values)) for row, e in zip(w.tolist(), events)])

    def log_probs(self, w):
        import torch
        return torch.log(torch.nn.functional.one_hot(w, self.values).float().clamp(min=1e-6))


def test_an_exact_imagination_solves_every_problem_with_one_kernel_call(bits, lean):
    from chains.programs.domain import ProgramsDomain
    from leanbridge.process import LeanLimits
    from prover.domain_search import Kernel, imagination_search, make_problems, training_events

    domain = ProgramsDomain(Machine(2))
    kernel = Kernel(domain, LeanLimits(), jobs=1)
    candidates = training_events(bits, domain)
    problems = make_problems(domain, (2, 5), 3, seed=1)
    results = [imagination_search(p, ExactImagination(2), candidates, kernel, budget=1, beam=2, max_length=8)
               for p in problems]
    assert all(r.solved and r.calls == 1 and r.claims_rejected == 0 for r in results)
    for problem, result in zip(problems, results):
        assert run(result.program, problem.start, 2) == problem.target
    assert kernel.questions == len(problems)


def test_prove_on_programs_counts_every_kernel_call_and_audits_each_solution(bits, tmp_path):
    from prover.cli import main as prove

    out = tmp_path / "prove"
    result = CliRunner().invoke(prove, ["--data", str(bits), "--searcher", "kernel-uniform", "--problems", "2",
                                        "--distances", "2,3", "--budget-calls", "200", "--out", str(out)])
    assert result.exit_code == 0, result.output
    report = json.loads((out / "report.json").read_text())
    results = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert report["kernel_calls"] == sum(r["calls"] for r in results) == report["kernel_questions_searched"]
    assert all(r["calls"] <= 200 for r in results) and report["solutions_failing_audit"] == 0
    assert report["solved"] == sum(r["solved"] for r in results) > 0
    assert (out / "prove.png").stat().st_size > 0  # as --help promises, on every domain
    # the targets are at the stated shortest distance: that many variables differ from the start
    assert report["distance_measure"] == "shortest distance" and report["largest_distance"] == 8
    for line in (out / "problems.jsonl").read_text().splitlines():
        problem = json.loads(line)
        start, target = (parse_state(problem[k], Machine(2)) for k in ("start", "target"))
        assert sum(a != b for a, b in zip(start, target)) == problem["distance"]
    # the constant-assignment baseline ran beside it on the same problems: one call each, a statement a distance
    baseline = report["baseline"]
    assert baseline["searcher"] == "short-history" and baseline["solved"] == baseline["problems"] == 4
    assert baseline["kernel_calls"] == 4 and baseline["by_distance"]["3"]["mean_program_length"] == 3
    # stdout: the table by distance and searcher; stderr: a line a finished distance and searcher
    table = result.stdout.splitlines()
    assert any(re.match(r"3 +kernel-uniform +\d/2 ", line) for line in table), result.stdout
    assert any(re.match(r"3 +short-history \(baseline\) +2/2 +2 +1\.00 +3\.00$", line) for line in table)
    assert any(line.startswith("all ") for line in table)
    lines = result.stderr.splitlines()
    assert "4 problems: 2 at each shortest distance of 2, 3" in lines
    assert sum(line.startswith("kernel-uniform, shortest distance ") for line in lines) == 2
    assert any(line.startswith("short-history, shortest distance 3: 2/2 solved, 2 kernel calls") for line in lines)


@pytest.mark.parametrize("args,message", [
    (["--prefix", "3"], "--prefix is for rewrite chains"),
    (["--oracle", "elsewhere"], "--oracle is for rewrite chains"),
    (["--store", "elsewhere.sqlite"], "--store is for rewrite chains"),
    (["--unvisited"], "--unvisited is for rewrite chains"),
    (["--searcher", "kernel-lookahead"], "--searcher kernel-lookahead is for rewrite chains"),
    (["--searcher", "oracle"], "--searcher oracle is for rewrite chains"),
    (["--distances", "2,9"], "distance 9: no two states of programs are that far apart"),
    (["--device", "tpu"], "unknown device 'tpu'"),
    (["--threads", "0"], "--threads"),
])
def test_prove_refuses_what_programs_do_not_take_in_one_line_exit_2(bits, tmp_path, args, message):
    from prover.cli import main as prove

    result = CliRunner().invoke(prove, ["--data", str(bits), *args, "--out", str(tmp_path / "p")])
    assert result.exit_code == 2 and message in result.output, result.output
    assert result.output.strip().count("\n") == 0 and not (tmp_path / "p").exists()


def test_programs_problems_are_at_their_shortest_distance_breadth_first():
    """On Bits, a breadth-first search over every statement finds the zero state's distance to each
    state to be the number of variables that differ: what the problems' distance says."""
    from chains.programs.domain import ProgramsDomain
    from prover.domain_search import SHORTEST, draw_problems, shortest_distances

    domain = ProgramsDomain(Machine(2))
    reach = shortest_distances(domain, zero_state(), budget=10**7)
    assert len(reach) == 256 and all(d == sum(map(bool, state)) for state, d in reach.items())
    drawn = draw_problems(domain, None, 3, seed=0)
    assert drawn.measure == SHORTEST and drawn.distances == tuple(range(1, 9))
    assert all(reach[p.target] == p.distance and len(domain.short_history(p.start, p.target)) == p.distance
               for p in drawn.problems)
    assert draw_problems(domain, None, 3, seed=0) == drawn


def test_walk_lengths_draw_the_problems_earlier_reports_drew():
    """--walk-lengths: a target where a random program of that many statements leads, drawn as the
    recorded results' problems were (the same generator, the same draws), said so in the report."""
    import random

    from chains.programs.domain import ProgramsDomain
    from prover.domain_search import WALK, draw_problems

    domain = ProgramsDomain(Machine(2))
    walked = draw_problems(domain, (4, 16), 3, seed=0, walks=True)
    assert walked.measure == WALK and walked.distances == (4, 16) and "walk length" in walked.sampling
    recorded = []
    for d in (4, 16):
        rng, n = random.Random(f"0:programs-problems-{d}"), 0
        while n < 3:
            start = domain.start_state(rng)
            target = run(domain.sample_events(rng, start, d), start, 2)
            if target != start:
                recorded.append((d, start, target))
                n += 1
    assert [(p.distance, p.start, p.target) for p in walked.problems] == recorded

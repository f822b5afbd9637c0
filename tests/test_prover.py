"""The prover against the real Lean binary: counted calls, budgets, faithful imagination, and
every reported solution certified by Lean."""
import json
import re

import pytest
import torch
from click.testing import CliRunner

from chains.rewrite.dataset import DatasetSpec
from chains.rewrite.domain import RewriteDomain
from chains.rewrite.rules import Event, apply
from chains.rewrite.space import Domain
from chains.rewrite.trees import parse_polish
from leanbridge.certify import certify_dataset
from leanbridge.checker import Checker
from leanbridge.paths import portable_path
from prover.cli import main
from prover.kernel import BudgetExceeded, Kernel, KernelConfig, PathClaim, Probe
from prover.problems import make_problems
from prover.run import audit_solutions
from prover.search import SEARCHERS, SearchConfig, proposals, run_searches
from tests.doubles import CorruptImagination, OracleImagination, RulesOracle, shortest_distance

ATOMS = ("a", "b", "c", "d")
DOMAIN = Domain()
REWRITE = RewriteDomain(DOMAIN)  # the domain as a value, for the stand-ins that replay it


@pytest.fixture(scope="module")
def problems():
    return make_problems(DOMAIN, [1, 2, 4], 4, seed=3)


def kernel_for(lean, core, budget=None, reuse=True):
    return Kernel(lean, core, ATOMS, KernelConfig(jobs=2, reuse_answers=reuse), budget=budget)


def tree(text):
    return parse_polish(text, ATOMS)


def test_problems_are_reproducible_and_at_their_shortest_distance(problems):
    again = make_problems(DOMAIN, [1, 2, 4], 4, seed=3)
    assert again == problems
    assert make_problems(DOMAIN, [1, 2, 4], 4, seed=4) != problems
    for p in problems:
        assert shortest_distance(DOMAIN, p.start, p.target) == p.distance


def test_prefix_is_a_history_ending_at_the_start():
    for p in make_problems(DOMAIN, [3], 3, seed=0, prefix=50):
        assert len(p.prefix) == 50
        here = p.prefix_start
        for event in p.prefix:
            here = apply(here, event)
        assert here == p.start


def test_successor_answers_come_from_lean_and_are_counted(lean, core):
    kernel = kernel_for(lean, core)
    start = tree("* + a b + c d")
    events = proposals(start, DOMAIN.rules)
    answers = kernel.ask([("p", Probe(start, e)) for e in events])
    assert all(a.accepted for a in answers)
    assert [a.tree for a in answers] == [apply(start, e) for e in events]
    assert kernel.calls["p"] == len(events) and kernel.processes == 1
    # asked again: counted again, answered from Lean's earlier answer
    kernel.ask([("q", Probe(start, events[0]))])
    assert kernel.calls["q"] == 1 and kernel.questions == len(events) + 1 and kernel.processes == 1


def test_path_claims_are_certified_only_when_the_steps_chain_to_the_target(lean, core):
    kernel = kernel_for(lean, core)
    t0 = tree("* + a b + c d")
    e0, e1 = Event("mul_comm", ""), Event("add_comm", "0")
    t1 = apply(t0, e0)
    t2 = apply(t1, e1)
    good = PathClaim(t0, t2, ((t0, e0), (t1, e1)))
    wrong_tree = PathClaim(t0, t2, ((t0, e0), (t0, e1)))  # the claimer misread the middle state
    wrong_target = PathClaim(t0, t1, ((t0, e0), (t1, e1)))
    empty = PathClaim(t0, t1, ())
    answers = kernel.ask([("p", good), ("p", wrong_tree), ("p", wrong_target), ("p", empty)])
    assert [a.complete for a in answers] == [True, False, False, False]
    assert kernel.calls["p"] == 4


def test_the_kernel_refuses_to_pass_a_budget(lean, core):
    kernel = kernel_for(lean, core, budget=1)
    start = tree("+ a + b + c d")
    events = proposals(start, DOMAIN.rules)
    with pytest.raises(BudgetExceeded):
        kernel.ask([("p", Probe(start, e)) for e in events[:2]])
    assert kernel.calls["p"] == 0 and kernel.processes == 0
    kernel.ask([("p", Probe(start, events[0]))])
    with pytest.raises(BudgetExceeded):
        kernel.ask([("p", Probe(start, events[1]))])


@pytest.mark.parametrize("searcher", ["kernel-uniform", "kernel-lookahead"])
def test_kernel_searchers_count_every_successor_question(lean, core, problems, searcher):
    kernel = kernel_for(lean, core, budget=500)
    results = run_searches(problems, SearchConfig(searcher=searcher, budget_calls=500, rules=DOMAIN.rules), kernel)
    assert all(r.solved for r in results)
    for r in results:
        assert r.calls == r.questions == r.proposed == kernel.calls[r.id]
        assert r.held_equal == r.held and r.proposed_equal == r.proposed
    assert kernel.questions == sum(r.calls for r in results)
    audit = audit_solutions(problems, results, kernel_for(lean, core, reuse=False))
    assert audit["solutions_failing_audit"] == 0 and audit["distinct_certified_solutions"] == audit["distinct_solutions"]


def test_blind_and_oracle_searchers_ask_lean_about_domain_events(lean, core, problems):
    """kernel-blind asks about every (rule, position); a perfect oracle spares every rejected
    question, solves the same problems and recalls every accepted event (on the problems up to
    distance 2: blind search at distance 4 asks thousands of questions and shows nothing more)."""
    problems = [p for p in problems if p.distance <= 2]
    runs = {}
    for searcher in ("kernel-blind", "oracle"):
        kernel = kernel_for(lean, core, budget=5000)
        runs[searcher] = run_searches(problems, SearchConfig(searcher=searcher, budget_calls=5000, rules=DOMAIN.rules), kernel,
                                      oracle=RulesOracle(REWRITE))
        for r in runs[searcher]:
            assert r.solved and r.calls == r.questions == r.proposed + r.rejected_asked == kernel.calls[r.id]
            assert r.held_equal == r.held and r.proposed_equal == r.proposed
    blind, oracle = runs["kernel-blind"], runs["oracle"]
    assert sum(r.rejected_asked for r in blind) > 0
    assert all(r.rejected_asked == 0 and r.accepted_predicted == r.accepted_available for r in oracle)
    assert sum(r.calls for r in oracle) < sum(r.calls for r in blind)
    audit = audit_solutions(problems, oracle, kernel_for(lean, core, reuse=False))
    assert audit["solutions_failing_audit"] == 0


@pytest.mark.parametrize("searcher", SEARCHERS)
def test_a_budget_of_one_call_is_never_exceeded(lean, core, problems, searcher):
    from tests.test_oracle_imagination import table_planner

    kernel = kernel_for(lean, core, budget=1)
    config = SearchConfig(searcher=searcher, budget_calls=1, rules=DOMAIN.rules)
    results = run_searches(problems, config, kernel, OracleImagination(REWRITE), oracle=RulesOracle(REWRITE),
                           planner=table_planner(problems, config))
    assert max(r.calls for r in results) <= 1
    assert all(kernel.calls[r.id] <= 1 for r in results)
    if searcher in ("imagination", "oracle-imagination"):  # an exact imagination needs exactly its one call
        assert all(r.solved and r.calls == 1 for r in results)


def test_a_perfect_imagination_pays_one_call_per_solved_problem(lean, core, problems):
    kernel = kernel_for(lean, core, budget=5)
    results = run_searches(problems, SearchConfig(searcher="imagination", budget_calls=5, rules=DOMAIN.rules), kernel, OracleImagination(REWRITE))
    assert all(r.solved and r.calls == 1 and r.claims == 1 for r in results)
    assert all(r.held == r.held_equal and r.proposed == r.proposed_equal for r in results)
    # it holds exactly the states the kernel's breadth-first search holds (but the target)
    uniform = run_searches(problems, SearchConfig(searcher="kernel-uniform", budget_calls=10_000, rules=DOMAIN.rules),
                           kernel_for(lean, core, budget=10_000))
    assert [r.proposed for r in results] == [u.proposed for u in uniform]
    audit = audit_solutions(problems, results, kernel_for(lean, core, reuse=False))
    assert audit["distinct_certified_solutions"] == audit["distinct_solutions"] == len(problems)


def _swap_root(t):
    return t if isinstance(t, str) else (t[0], t[2], t[1])


@pytest.mark.parametrize("wrong,after", [(_swap_root, 1), (_swap_root, 0)])
def test_an_imagination_that_decodes_wrong_states_gets_no_wrong_solution_accepted(lean, core, problems, wrong, after):
    kernel = kernel_for(lean, core, budget=20)
    imagination = CorruptImagination(REWRITE, wrong, after=after)
    results = run_searches(problems, SearchConfig(searcher="imagination", budget_calls=20, rules=DOMAIN.rules), kernel, imagination)
    assert sum(r.claims_rejected for r in results) > 0
    for p, r in zip(problems, results):
        assert r.calls == r.claims <= 20
        if r.solved:  # an accepted claim is a true path, whatever the imagination believed
            here = p.start
            for event in r.events:
                here = apply(here, event)
            assert here == p.target
    audit = audit_solutions(problems, results, kernel_for(lean, core, reuse=False))
    assert audit["solutions_failing_audit"] == 0


def test_an_imagination_that_sees_the_goal_everywhere_solves_nothing_far_away(lean, core):
    far = make_problems(DOMAIN, [3], 4, seed=1)
    results = []
    for p in far:
        kernel = kernel_for(lean, core, budget=3)
        imagination = CorruptImagination(REWRITE, lambda t, goal=p.target: goal, after=1)
        results += run_searches([p], SearchConfig(searcher="imagination", budget_calls=3, rules=DOMAIN.rules), kernel, imagination)
    assert not any(r.solved for r in results)
    assert all(r.calls == r.claims == r.claims_rejected == 3 for r in results)


# -- prefixes: certified by the one certification path, into its store ----------------------

def _prefix_counts(lean, core, problems, store, checker=Checker.KERNEL):
    from prover.run import certify_prefixes

    return certify_prefixes(problems, Kernel(lean, core, ATOMS, KernelConfig(jobs=2)), store, checker, jobs=2)


def test_prefix_steps_certified_once_are_served_from_the_store(lean, core, tmp_path):
    """The first run asks Lean for every distinct prefix step and records each answer; the second
    asks nothing and starts no Lean process: every step is served from the store."""
    from leanbridge.store import CertificateStore

    problems = make_problems(DOMAIN, [1, 2], 3, seed=4, prefix=6)
    store = tmp_path / "store.sqlite"
    first = _prefix_counts(lean, core, problems, store)
    assert first["prefix_steps"] == 6 * len(problems)
    assert 0 < first["prefix_distinct_steps"] <= first["prefix_steps"]
    assert first["prefix_asked"] == first["prefix_distinct_steps"] and first["prefix_from_store"] == 0
    assert first["prefix_lean_processes"] >= 1 and first["prefix_checker"].startswith("kernel:")
    with CertificateStore(store, core.hash, lean.githash) as opened:
        assert opened.count() == {"certified": first["prefix_distinct_steps"]}
    second = _prefix_counts(lean, core, problems, store)
    assert second["prefix_from_store"] == second["prefix_distinct_steps"] == first["prefix_distinct_steps"]
    assert second["prefix_asked"] == 0 and second["prefix_lean_processes"] == 0
    # more problems: only the steps the store lacks go to Lean
    more = problems + make_problems(DOMAIN, [3], 3, seed=5, prefix=6)
    third = _prefix_counts(lean, core, more, store)
    assert third["prefix_from_store"] == first["prefix_distinct_steps"]
    assert third["prefix_asked"] == third["prefix_distinct_steps"] - third["prefix_from_store"] > 0


def test_a_store_of_another_core_library_or_checker_is_not_trusted(lean, core, tmp_path):
    """A certificate counts only when made by this Lean build, this core library and the same
    checker: a store filled under another core hash, a row whose key is right but whose core hash is
    another's, and the elaborator's certificates for the kernel route are each asked again."""
    import dataclasses
    import sqlite3

    problems = make_problems(DOMAIN, [2], 3, seed=6, prefix=4)
    store = tmp_path / "store.sqlite"
    other = dataclasses.replace(core, hash="f" * 64)  # the same olean, claimed as another library
    made = _prefix_counts(lean, other, problems, store)
    assert made["prefix_asked"] == made["prefix_distinct_steps"] > 0
    again = _prefix_counts(lean, core, problems, store)
    assert again["prefix_from_store"] == 0 and again["prefix_asked"] == again["prefix_distinct_steps"]
    # forge: this core library's keys, another core library's rows
    with sqlite3.connect(store) as db:
        db.execute("UPDATE certificates SET core_hash = ? WHERE core_hash = ?", ("e" * 64, core.hash))
    forged = _prefix_counts(lean, core, problems, store)
    assert forged["prefix_from_store"] == 0 and forged["prefix_asked"] == forged["prefix_distinct_steps"]
    assert _prefix_counts(lean, core, problems, store)["prefix_asked"] == 0  # Lean's new answers count
    elaborated = _prefix_counts(lean, core, problems, store, checker=Checker.ELABORATOR)
    assert elaborated["prefix_from_store"] == 0 and elaborated["prefix_checker"] == "elaborator"
    assert _prefix_counts(lean, core, problems, store, checker=Checker.ELABORATOR)["prefix_asked"] == 0


def test_a_datasets_certificates_serve_the_prefix_steps_it_holds(dataset, lean, core):
    """The prefixes' statements and keys are certify's: the dataset's own steps, replayed as
    prefixes, are served by the store the dataset was certified into, Lean asked nothing."""
    from prover.problems import Problem

    records = [json.loads(line) for line in (dataset / "train.jsonl").read_text().splitlines()]
    problems = []
    for n, r in enumerate(records):
        start, events = tree(r["start"]), tuple(Event.parse(e) for e in r["events"])
        end = start
        for event in events:
            end = apply(end, event)
        problems.append(Problem(f"d{n}", 0, end, end, start, events))
    counts = _prefix_counts(lean, core, problems, dataset.parent / "store.sqlite")
    assert counts["prefix_distinct_steps"] > 0 and counts["prefix_asked"] == 0
    assert counts["prefix_from_store"] == counts["prefix_distinct_steps"]


# -- the command ----------------------------------------------------------------------------

@pytest.fixture(scope="module")
def dataset(tmp_path_factory):
    root = tmp_path_factory.mktemp("prover-data")
    spec = DatasetSpec(chains=4, length=2, partners=1, test_lengths=(2,), test_chains=2)
    certify_dataset(spec, root / "tier1", root / "store.sqlite")
    return root / "tier1"


def invoke(args):
    result = CliRunner().invoke(main, [str(a) for a in args])
    return result.exit_code, result.output


def test_prove_command_writes_a_report(dataset, tmp_path):
    out = tmp_path / "out"
    code, output = invoke(["--data", dataset, "--searcher", "kernel-lookahead", "--problems", 2,
                           "--distances", "1,3", "--budget-calls", 200, "--out", out, "--jobs", 2])
    assert code == 0, output
    report = json.loads((out / "report.json").read_text())
    assert report["problems"] == 4 and report["solved"] == 4
    assert report["kernel_calls"] == sum(json.loads(l)["calls"] for l in (out / "results.jsonl").read_text().splitlines())
    assert report["distinct_certified_solutions"] == report["distinct_solutions"]
    assert report["lean"]["githash"] == report["dataset"]["lean"]["githash"]
    assert (out / "prove.png").stat().st_size > 0


@pytest.mark.parametrize("args,message", [
    (["--budget-calls", 0], "budget-calls"),
    (["--data", "/nonexistent/data"], "no manifest"),
    (["--tracker", "/nonexistent/run"], "no such run directory"),
    (["--distances", 9, "--searcher", "kernel-uniform"], "largest distance is 6"),
])
def test_prove_command_errors_are_one_line(dataset, tmp_path, args, message):
    base = {"--data": dataset, "--out": tmp_path / "o"}
    for k, v in zip(args[::2], args[1::2]):
        base[k] = v
    code, output = invoke([x for kv in base.items() for x in kv])
    assert code != 0 and message in output and "Traceback" not in output


@pytest.mark.parametrize("args,message", [
    (["--distances", 9, "--searcher", "kernel-uniform"], "largest distance is 6"),
    (["--searcher", "short-history"], "--searcher short-history is for programs and a domain of one's own"),
    (["--device", "tpu"], "unknown device 'tpu'"),
    (["--threads", 0], "--threads"),
    (["--problems", 0], "--problems"),
    (["--walk-lengths"], "--walk-lengths is for programs and a domain of one's own"),
])
def test_prove_usage_refusals_exit_2_in_one_line(dataset, tmp_path, args, message):
    code, output = invoke(["--data", dataset, *args, "--out", tmp_path / "o"])
    assert code == 2 and message in output and output.strip().count("\n") == 0, output
    assert not (tmp_path / "o").exists()


def test_prove_prints_a_table_by_distance_and_searcher(dataset, tmp_path):
    out, threads = tmp_path / "out", torch.get_num_threads()
    try:
        result = CliRunner().invoke(main, [str(a) for a in ["--data", dataset, "--searcher", "kernel-lookahead",
                                                            "--problems", 2, "--distances", "1,3", "--out", out,
                                                            "--jobs", 1, "--threads", 1]])
    finally:
        torch.set_num_threads(threads)
    assert result.exit_code == 0, result.output
    table = result.stdout.splitlines()
    assert re.match(r"distance +searcher +solved +kernel calls +calls/solved +mean length$", table[-5])
    assert [line.split()[:3] for line in table[-4:-1]] == [["1", "kernel-lookahead", "2/2"],
                                                           ["3", "kernel-lookahead", "2/2"],
                                                           ["all", "kernel-lookahead", "4/4"]]
    report = json.loads((out / "report.json").read_text())
    assert report["torch_threads"] == 1 and report["problems_per_distance"] == 2


@pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has CUDA")
@pytest.mark.parametrize("searcher", ["imagination", "oracle", "kernel-uniform"])
def test_prove_refuses_a_device_it_lacks_in_one_line_and_writes_nothing(dataset, tmp_path, searcher):
    out = tmp_path / "nested" / "out"
    result = CliRunner().invoke(main, ["--data", str(dataset), "--searcher", searcher, "--device", "cuda",
                                       "--out", str(out)])
    assert result.exit_code != 0
    assert result.stderr.strip().count("\n") == 0 and "no CUDA device" in result.stderr, result.output
    assert "Traceback" not in result.output and not out.exists() and not out.parent.exists()
    # the library refuses as early: before the dataset is read
    from prover.run import ProveConfig, ProveError, prove
    with pytest.raises(ProveError, match="no CUDA device"):
        prove(ProveConfig(data=tmp_path / "nowhere", device="cuda:1", out=out))
    assert not out.parent.exists()


def test_prove_refuses_an_unknown_device(dataset, tmp_path):
    code, output = invoke(["--data", dataset, "--device", "tpu", "--out", tmp_path / "o"])
    assert code != 0 and "unknown device 'tpu'" in output and "Traceback" not in output
    assert not (tmp_path / "o").exists()


def test_the_device_goes_into_the_report(dataset, tracker_run, tmp_path):
    out = tmp_path / "out"
    code, output = invoke(["--data", dataset, "--tracker", tracker_run, "--device", "cpu", "--problems", 1,
                           "--distances", 1, "--budget-calls", 1, "--out", out, "--jobs", 1])
    assert code == 0, output
    report = json.loads((out / "report.json").read_text())
    assert report["device"] == "cpu" and report["config"]["device"] == "cpu"
    assert report["imagination"]["device"] == "cpu"


def test_prove_reads_its_dataset_from_the_tracker_run(dataset, tracker_run, tmp_path):
    """Without --data, the imagination searches the dataset its tracker was trained on, as
    evaluate-tracker does."""
    out = tmp_path / "out"
    code, output = invoke(["--tracker", tracker_run, "--problems", 1, "--distances", 1, "--budget-calls", 1,
                           "--out", out, "--jobs", 1])
    assert code == 0, output
    assert json.loads((out / "report.json").read_text())["dataset"]["path"] == str(dataset)


def test_the_oracle_scorer_is_loaded_on_the_device(dataset, tmp_path, monkeypatch):
    """load_oracle and load_planner hand the resolved device to the oracle's scorer."""
    import oracle.scorer
    from chains.manifest import dataset_id, read_manifest
    from prover.verdict_oracle import load_oracle

    seen = []

    class Scorer:
        def __init__(self, run, device="cpu"):
            seen.append(device)
            self.identity = {"dataset": {"dataset_id": dataset_id(read_manifest(dataset))}}

    monkeypatch.setattr(oracle.scorer, "TrainedOracle", Scorer)
    (tmp_path / "run").mkdir()
    load_oracle(tmp_path / "run", dataset, torch.device("cpu"))
    assert seen == [torch.device("cpu")]


def test_a_tracker_trained_on_another_dataset_is_refused(dataset, tmp_path):
    run = tmp_path / "run"
    run.mkdir()
    torch.save({"config": {"arch": "recurrence", "objective": "combo"}, "model": {},
                "identity": {"dataset": {"path": "elsewhere", "dataset_id": "0" * 64}}}, run / "checkpoint.pt")
    code, output = invoke(["--data", dataset, "--tracker", run, "--out", tmp_path / "o"])
    assert code != 0 and "trained on another dataset" in output


@pytest.fixture(scope="module")
def tracker_run(dataset, tmp_path_factory):
    """A slot-recurrence tracker trained a few steps on the command's dataset."""
    from tracker.evaluate import EvalConfig
    from tracker.train import TrainConfig, train

    run = tmp_path_factory.mktemp("prover-tracker") / "run"
    train(TrainConfig(data=str(dataset), objective="combo", steps=3, batch_chains=2, width=16), run,
          show_progress=False, eval_config=EvalConfig(pair_lengths=(2,), max_chains=2))
    return run


def test_prove_reports_prefix_steps_asked_and_served_from_the_store(dataset, tracker_run, tmp_path):
    """Through the command: the prefixes' certificates go into --store; a second run is served
    from it (no Lean process for them), and the search's own kernel calls and results are the same."""
    store = tmp_path / "store.sqlite"
    reports, rows = [], []
    for n in range(2):
        out = tmp_path / f"out{n}"
        code, output = invoke(["--data", dataset, "--tracker", tracker_run, "--prefix", 5, "--problems", 2,
                               "--distances", "1,2", "--budget-calls", 2, "--store", store, "--out", out,
                               "--jobs", 2, "--device", "cpu"])
        assert code == 0, output
        reports.append(json.loads((out / "report.json").read_text()))
        rows.append((out / "results.jsonl").read_text())
    first, second = reports
    assert first["prefix_steps"] == 5 * 4 and first["prefix_store"] == portable_path(store)
    assert first["prefix_asked"] == first["prefix_distinct_steps"] > 0 and first["prefix_from_store"] == 0
    assert second["prefix_asked"] == 0 and second["prefix_lean_processes"] == 0
    assert second["prefix_from_store"] == first["prefix_distinct_steps"]
    assert first["prefix_checker"] == json.loads((dataset / "manifest.json").read_text())["checker"]
    assert rows[0] == rows[1] and first["kernel_calls"] == second["kernel_calls"]


def test_tracker_imagination_reads_histories_as_the_model_does(dataset, tracker_run):
    """The adapter's encode/step/decode, driven through the tracker's public state API, agree
    with the model's own forward pass and readout on the dataset's training chains."""
    from prover.imagination import load_tracker
    from tracker.data import load_dataset

    imagination = load_tracker(tracker_run, dataset)
    data = load_dataset(dataset)
    records = [json.loads(line) for line in (dataset / "train.jsonl").read_text().splitlines()]
    histories = [(parse_polish(r["start"], ATOMS), [Event.parse(e) for e in r["events"]]) for r in records]
    items = data.train["chain_items"].long()
    with torch.no_grad():
        z, _ = imagination.model(items)
        want = imagination.model.readout(z[:, -1]).argmax(-1)  # (H, P)
    encoded = imagination.encode(histories)
    stepped = imagination.step(imagination.encode([(s, e[:-1]) for s, e in histories]), [e[-1] for s, e in histories])
    for a, b in zip(encoded, stepped):
        assert torch.allclose(a, b, atol=1e-5)
    with torch.no_grad():
        got = imagination.model.readout(imagination.model.view(torch.stack(encoded))).argmax(-1)
    assert torch.equal(got, want)
    decoded = imagination.decode(encoded)
    assert len(decoded) == len(histories)


def test_tracker_imagination_is_the_tracked_runs_state_machine(dataset, tracker_run):
    """The prover's adapter adds nothing to ``tracker.inference``: for the same histories its
    states are the run's batched states bit for bit, and every candidate successor it scores
    (moves and decodes) is the one the run's one-state methods give."""
    from prover.imagination import load_tracker
    from tracker.inference import load_run

    imagination, run = load_tracker(tracker_run, dataset), load_run(tracker_run, dataset)
    problems = make_problems(DOMAIN, [1, 2], 3, seed=1, prefix=5)
    histories = [(p.prefix_start, p.prefix) for p in problems] + [(p.start, ()) for p in problems]
    latents = imagination.encode(histories)
    assert torch.equal(torch.stack(latents), torch.stack(run.encode_batch(histories)))
    for latent, (start, events) in zip(latents, histories):
        assert torch.allclose(latent, run.run(start, events), atol=1e-5)
    assert imagination.decode(latents) == [run.decode_tree(run.run(s, e)) for s, e in histories]
    # every candidate successor of every problem's start, all in one batch as the search asks
    starts = latents[len(problems):]
    pairs = [(latent, event) for latent, p in zip(starts, problems) for event in proposals(p.start, DOMAIN.rules)]
    moved = imagination.step([s for s, _ in pairs], [e for _, e in pairs])
    assert torch.equal(torch.stack(moved), torch.stack(run.step_batch([s for s, _ in pairs], [e for _, e in pairs])))
    one_by_one = [run.step(s, e) for s, e in pairs]
    for a, b in zip(moved, one_by_one):
        assert torch.allclose(a, b, atol=1e-5)
    assert imagination.decode(moved) == [run.decode_tree(s) for s in one_by_one]
    assert imagination.describe() == {**run.describe(), "device": "cpu"}


def test_a_registers_tracker_is_an_imagination_of_the_command(dataset, tmp_path):
    """The registers arch, trained a few steps, drives the imagination searcher through the command:
    at most one kernel call per problem, every solution it claims certified by Lean."""
    from tracker.evaluate import EvalConfig
    from tracker.train import TrainConfig, train

    run = tmp_path / "registers"
    train(TrainConfig(data=str(dataset), arch="registers", layout="paths", objective="combo", steps=3, batch_chains=2,
                      width=16), run, show_progress=False, eval_config=EvalConfig(pair_lengths=(2,), max_chains=2))
    out = tmp_path / "out"
    code, output = invoke(["--data", dataset, "--tracker", run, "--problems", 2, "--distances", "1,2",
                           "--budget-calls", 1, "--out", out, "--jobs", 1, "--device", "cpu"])
    assert code == 0, output
    report = json.loads((out / "report.json").read_text())
    assert report["problems"] == 4 and report["kernel_calls"] <= 4
    assert report["distinct_certified_solutions"] == report["distinct_solutions"]


def test_unvisited_problems_start_and_end_where_training_never_went(dataset, tmp_path):
    from chains.rewrite.dataset import training_trees

    seen = training_trees(dataset, DOMAIN)
    assert seen and all(isinstance(t, (str, tuple)) for t in seen)
    problems = make_problems(DOMAIN, [1, 3], 20, seed=0, avoid=frozenset(seen))
    assert all(p.start not in seen and p.target not in seen for p in problems)
    assert make_problems(DOMAIN, [1, 3], 20, seed=0, avoid=frozenset(seen)) == problems
    out = tmp_path / "out"
    code, output = invoke(["--data", dataset, "--searcher", "kernel-lookahead", "--problems", 2, "--distances", "1",
                           "--budget-calls", 50, "--unvisited", "--out", out, "--jobs", 1])
    assert code == 0, output
    report = json.loads((out / "report.json").read_text())
    assert report["unvisited"]["training_trees"] == len(seen) and report["solved"] == 2
    for line in (out / "problems.jsonl").read_text().splitlines():
        row = json.loads(line)
        assert parse_polish(row["start"], ATOMS) not in seen and parse_polish(row["target"], ATOMS) not in seen


def test_unvisited_says_when_training_went_everywhere():
    """Where training visits every tree (an events or pairs hold-out does), --unvisited names that
    cause, not a distance; where some trees are left, the refusal names the distance."""
    from chains.rewrite.trees import all_trees
    from prover.problems import ProblemError

    everywhere = frozenset(all_trees(DOMAIN.atom_names))
    with pytest.raises(ProblemError, match="training visits every start tree of the domain \\(960\\)"):
        make_problems(DOMAIN, [1], 1, seed=0, avoid=everywhere)
    left = frozenset(sorted(everywhere, key=str)[:-2])  # two trees left unvisited
    with pytest.raises(ProblemError, match="distance 9: no two of the 2 trees training never visited"):
        make_problems(DOMAIN, [9], 1, seed=0, avoid=left)

"""``prove --searcher oracle-imagination``: a search that plans on latent states, never reads a
tree and never applies a rule; its paths are certified by the real Lean, events only."""
import dataclasses
import json
import sys

import pytest
import torch
from click.testing import CliRunner

import chains.rewrite.rules
import chains.rewrite.space
from chains.rewrite.rules import Event, apply
from chains.rewrite.space import Domain
from oracle.data import load_probe_dataset
from oracle.train import OracleConfig, train
from prover.cli import main as prove
from prover.kernel import Kernel, KernelConfig
from prover.problems import make_problems
from prover.run import audit_solutions
from prover.search import SearchConfig, run_searches
from tests.test_oracle import EVAL

ATOMS = ("a", "b", "c", "d")
DOMAIN = Domain()


class TablePlanner:
    """A perfect planner built before the search: its latent states are one-hot rows over the
    trees of the problems' classes, its transition a table made with the rules beforehand (as a
    trained recurrence carries its transition in its weights). During the search it reads
    tables only. ``wrong``: it predicts *complete* after every accepted event."""

    def __init__(self, trees, events, wrong: bool = False) -> None:
        space = {t: i for i, t in enumerate(trees)}
        self.events = list(events)
        self.next = torch.full((len(trees), len(self.events)), -1, dtype=torch.long)
        for t, i in space.items():
            for k, e in enumerate(self.events):
                after = apply(t, e)
                if after is not None:
                    self.next[i, k] = space[after]
        self.index, self.n = space, len(trees)
        self.threshold, self.wrong = 0.5, wrong

    def _one_hot(self, rows: torch.Tensor) -> torch.Tensor:
        return torch.nn.functional.one_hot(rows.clamp(min=0), self.n).float()

    def start(self, trees):
        return self._one_hot(torch.tensor([self.index[t] for t in trees]))

    def goal(self, trees):
        return self.start(trees)

    def view(self, slots):
        return slots

    def expand(self, slots, goals, events):
        assert list(events) == self.events
        rows = slots.argmax(-1)  # (N,)
        nxt = self.next[rows]  # (N, E)
        p = (nxt >= 0).float()
        w = self._one_hot(nxt)  # (N, E, n)
        d = (w != goals.unsqueeze(1)).any(-1).float()  # 0 on the goal, 1 elsewhere (a centred cosine stand-in)
        if self.wrong:
            d = torch.zeros_like(d)
        return p, w, w, d

    def describe(self):
        return {"kind": "table"}


def table_planner(problems, config: SearchConfig, wrong: bool = False) -> TablePlanner:
    """The planner for ``problems``: their classes explored with the rules before any search."""
    events = [Event(rule, path) for path in config.positions for rule in config.rules]
    trees, todo = set(), [p.start for p in problems]
    while todo:
        t = todo.pop()
        if t not in trees:
            trees.add(t)
            todo += [x for x in (apply(t, e) for e in events) if x is not None]
    return TablePlanner(sorted(trees, key=str), events, wrong)


@pytest.fixture
def no_rules_engine(monkeypatch):
    """Every entry into the rules engine raises: its application and successor functions under
    every name a module holds them by, the rules' own match and build, the state space's successors."""
    def boom(*args, **kwargs):
        raise AssertionError("the rules engine was called during the search")

    def arm():
        for name in ("apply", "redex", "successors"):
            original = getattr(chains.rewrite.rules, name)
            for module in list(sys.modules.values()):
                if module is not None and getattr(module, name, None) is original:
                    monkeypatch.setattr(module, name, boom)
        for key, rule in list(chains.rewrite.rules.RULES.items()):
            monkeypatch.setitem(chains.rewrite.rules.RULES, key, dataclasses.replace(rule, match=boom, build=boom))
        monkeypatch.setattr(chains.rewrite.space.StateSpace, "successors", boom)
    return arm


def test_it_plans_without_the_rules_engine_and_lean_certifies_its_paths(lean, core, no_rules_engine, monkeypatch):
    problems = make_problems(DOMAIN, [1, 2, 3], 3, seed=5)
    config = SearchConfig(searcher="oracle-imagination", budget_calls=5, rules=DOMAIN.rules, positions=DOMAIN.positions)
    events = [Event(rule, path) for path in config.positions for rule in config.rules]
    # the classes of the problems, explored with the rules before the search (the planner's "training")
    planner, wrong = table_planner(problems, config), table_planner(problems, config, wrong=True)
    kernel = Kernel(lean, core, ATOMS, KernelConfig(jobs=2), budget=5)
    wrong_kernel = Kernel(lean, core, ATOMS, KernelConfig(jobs=2), budget=5)
    no_rules_engine()
    import prover.search
    for call in (lambda: chains.rewrite.rules.apply(problems[0].start, events[0]), lambda: prover.search.proposals(
            problems[0].start, DOMAIN.rules), lambda: chains.rewrite.rules.RULES["add_comm"].match(problems[0].start)):
        with pytest.raises(AssertionError, match="rules engine"):
            call()  # the trap is armed: another searcher would fail here
    results = run_searches(problems, config, kernel, planner=planner)
    wrong_results = run_searches(problems, config, wrong_kernel, planner=wrong)
    monkeypatch.undo()  # the audit replays the solutions' events, after the search
    assert all(r.solved for r in results)
    assert all(r.calls == r.questions == r.claims == 1 for r in results)  # one question to Lean per problem
    audit = audit_solutions(problems, results, Kernel(lean, core, ATOMS, KernelConfig(jobs=2, reuse_answers=False)))
    assert audit["distinct_certified_solutions"] == audit["distinct_solutions"] and audit["solutions_failing_audit"] == 0
    for p, r in zip(problems, results):
        assert len(r.events) == p.distance  # nearest-the-goal first finds a shortest path here
    # a planner that claims complete too early: Lean refuses its paths, each refusal costs a call,
    # and the search goes on until the budget is spent (or a claim happens to be right)
    assert all(r.calls <= 5 for r in wrong_results)
    assert sum(r.claims_rejected for r in wrong_results) > 0
    assert all(r.claims == r.calls == r.claims_rejected + r.solved for r in wrong_results)


def test_prove_with_a_trained_oracle_run(tiny_probes, tmp_path):
    """End to end through the command: a finished run (with its stored threshold) plans; every
    reported solution passes Lean's audit; a run without a recurrence is refused in one line."""
    data = load_probe_dataset(tiny_probes)
    config = OracleConfig(data=str(tiny_probes), arch="recurrence", objective="nerode", steps=3, batch_chains=4, width=32,
                          probe_width=16)
    train(config, tmp_path / "run", show_progress=False, eval_config=EVAL, data=data)
    result = CliRunner().invoke(prove, ["--searcher", "oracle-imagination", "--oracle", str(tmp_path / "run"),
                                        "--data", str(tiny_probes), "--problems", "2", "--distances", "1,2",
                                        "--budget-calls", "3", "--out", str(tmp_path / "prove")],
                                catch_exceptions=False)
    assert result.exit_code == 0, result.output
    report = json.loads((tmp_path / "prove" / "report.json").read_text())
    assert report["solutions_failing_audit"] == 0 and report["oracle"]["threshold"] is not None
    assert report["kernel_calls"] == report["claims"] <= 3 * report["problems"]
    blind = OracleConfig(data=str(tiny_probes), arch="blind", objective="plain", steps=2, batch_chains=4, width=32,
                         probe_width=16)
    train(blind, tmp_path / "blind", show_progress=False, eval_config=EVAL, data=data)
    result = CliRunner().invoke(prove, ["--searcher", "oracle-imagination", "--oracle", str(tmp_path / "blind"),
                                        "--data", str(tiny_probes), "--problems", "1", "--distances", "1",
                                        "--out", str(tmp_path / "p2")])
    assert result.exit_code == 1 and "recurrence" in result.output and "Traceback" not in result.output

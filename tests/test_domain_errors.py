"""Where a programs tracker goes wrong (tracker.domain_errors): a hand-set register tracker that
runs the interpreter exactly is right on every statement and every variable at every length; the
same tracker with one operation's table broken is found wrong on that operation alone, and its
test programs go wrong at their first such statement."""
from __future__ import annotations

import pytest
import torch

from chains.manifest import read_manifest
from chains.programs.dataset import ProgramsSpec
from chains.programs.domain import ProgramsDomain
from chains.programs.files import split_histories
from chains.programs.syntax import VARIABLES
from leanbridge.asker import AskConfig
from leanbridge.certify_programs import certify_programs
from tracker.domain_errors import ErrorsConfig, length_errors, statement_errors
from tracker.domain_run import DomainRun
from test_variables import BITS, _units, built, hand_set, vocab_of  # noqa: E402

pytestmark = pytest.mark.usefixtures("one_thread_module")
SMALL = ErrorsConfig(programs=64, length=24, chains=8)


def run_of(model) -> DomainRun:
    return DomainRun(model, ProgramsDomain(BITS), vocab_of(BITS), VARIABLES, {})  # items as wide as a start state


def broken(op: str):
    """The exact hand-set Bits tracker with ``op``'s votes flipped (every value it writes wrong)."""
    model = hand_set(built(BITS, 16), BITS)
    first, second, votes = _units(BITS)
    l3 = [m for m in model.net if isinstance(m, torch.nn.Linear)][-1]
    with torch.no_grad():
        for u, (_, unit, _) in enumerate(second):
            if first[unit][0] == op:
                l3.weight[:, u] = 0.0
                l3.weight[1 - votes[u], u] = 10.0
    return model


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    root = tmp_path_factory.mktemp("errors")
    spec = ProgramsSpec(machine=BITS, chains=8, partners=1, test_lengths=(16, 40), test_chains=8)
    certify_programs(spec, root / "data", root / "store.sqlite", AskConfig())
    return root / "data"


def test_an_exact_tracker_is_right_on_every_statement_and_variable(data):
    run = run_of(hand_set(built(BITS, 16), BITS))
    got = statement_errors(run, SMALL)
    assert got["steps"] == SMALL.programs * SMALL.length  # never wrong: every step counts
    assert {op: v["right"] for op, v in got["right_by_operation"].items()} == {op: 1.0 for op in BITS.ops}
    lengths = length_errors(run, data, SMALL)
    assert set(lengths) == {"16", "40"}
    for row in lengths.values():
        assert row["never_wrong"] == row["programs"] == 8 and row["first_wrong_quartiles"] is None
        assert set(row["wrong_by_variable"].values()) == {0.0}


def test_a_broken_operation_is_named_and_programs_go_wrong_at_its_first_use(data):
    run = run_of(broken("xor"))
    rights = {op: v["right"] for op, v in statement_errors(run, SMALL)["right_by_operation"].items()}
    assert rights.pop("xor") == 0.0 and set(rights.values()) == {1.0}
    splits = split_histories(data, read_manifest(data))
    for length, row in length_errors(run, data, SMALL).items():
        programs = [p for _, p, _ in splits[f"test-{length}.jsonl"]]
        uses = [next((k + 1 for k, s in enumerate(p) if s.op == "xor"), None) for p in programs]
        assert row["never_wrong"] == sum(u is None for u in uses)
        firsts = sorted(u for u in uses if u is not None)
        if firsts:
            assert row["first_wrong_quartiles"][1] == firsts[int(0.5 * (len(firsts) - 1))]

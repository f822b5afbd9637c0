"""What a probe's verdict can see (benchmarks/oracle_complete.py): on tier 1 every verdict but
*complete* is a function of the tree's skeleton, and the script's groups agree with Lean's."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import torch
from click.testing import CliRunner
from hypothesis import given, settings, strategies as st

from chains.rewrite.probes import probe_groups, referee
from chains.rewrite.rules import Event, tier_rules
from chains.rewrite.space import Domain
from chains.rewrite.trees import atom_names, internal_positions, random_tree, skeleton
from leanbridge.cli import main as certify
from oracle.evaluate import OracleEvalConfig
from oracle.train import OracleConfig, train

ROOT = Path(__file__).resolve().parents[1]


def oracle_complete(*args: str) -> subprocess.CompletedProcess:
    """``python -m benchmarks.oracle_complete ARGS`` with this checkout's code, at one thread."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    return subprocess.run([sys.executable, "-m", "benchmarks.oracle_complete", *args], env=env, capture_output=True,
                          text=True)


def relabel(tree, names: dict[str, str]):
    return names[tree] if isinstance(tree, str) else (tree[0], relabel(tree[1], names), relabel(tree[2], names))


@settings(max_examples=200, deadline=None)
@given(st.integers(2, 6), st.randoms(use_true_random=False))
def test_tier1_verdicts_other_than_complete_see_only_the_skeleton(k, rnd):
    atoms = atom_names(k)
    tree = random_tree(rnd, atoms)
    shuffled = list(atoms)
    rnd.shuffle(shuffled)
    other = relabel(tree, dict(zip(atoms, shuffled)))
    assert skeleton(other) == skeleton(tree)
    for path in ["", *internal_positions(tree), "0" * k]:
        for rule in tier_rules(1):
            event = Event(rule, path)
            (after, why), (after_other, why_other) = referee(tree, event), referee(other, event)
            assert why == why_other and (after is None) == (after_other is None)
            if after is not None:
                assert skeleton(after) == skeleton(after_other)


def test_skeletons_differ_by_shape_or_operator():
    assert skeleton(("+", "a", ("*", "b", "c"))) != skeleton(("+", ("*", "a", "b"), "c"))
    assert skeleton(("+", "a", "b")) != skeleton(("*", "a", "b"))
    assert skeleton(("+", "a", "b")) == skeleton(("+", "b", "a"))


@pytest.fixture(scope="module")
def probes_and_run(tmp_path_factory):
    root = tmp_path_factory.mktemp("complete")
    for name, seed in (("data", "0"), ("validation", "1")):
        result = CliRunner().invoke(certify, ["--atoms", "4", "--tier", "1", "--chains", "20", "--test-chains", "8",
                                              "--test-lengths", "8,16", "--probes", "--seed", seed,
                                              "--out", str(root / name), "--store", str(root / "store.sqlite")])
        assert result.exit_code == 0, result.output
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    config = OracleConfig(data=str(root / "data"), arch="recurrence", objective="plain", steps=4, batch_chains=4,
                          width=32, probe_width=16, validation=str(root / "validation"))
    train(config, root / "run", show_progress=False, eval_config=OracleEvalConfig(pair_lengths=(8,), bootstrap=50))
    torch.set_num_threads(before)
    return root


def test_the_groups_follow_lean_verdicts(probes_and_run):
    path = probes_and_run / "validation" / "test-8.jsonl"
    groups = probe_groups(path, Domain(atoms=4, tier=1))
    records = [json.loads(line) for line in path.read_text().splitlines() if '"probes"' in line]
    assert len(groups) == len(records)
    for chain, record in zip(groups, records):
        for row, entry in zip(chain, record["probes"]):
            for group, (_, _, verdict) in zip(row, entry):
                assert (group == -1) == verdict.startswith("rejected")
                assert (group == 0) == (verdict == "complete")


def test_every_accepted_probe_is_counted_once(probes_and_run, tmp_path):
    out = tmp_path / "complete.json"
    result = oracle_complete(str(probes_and_run / "run"), "--lengths", "8,16", "--out", str(out))
    assert result.returncode == 0, result.stderr
    (found,) = json.loads(out.read_text())["runs"]
    accepted = 0
    for length in (8, 16):
        for line in (probes_and_run / "validation" / f"test-{length}.jsonl").read_text().splitlines():
            record = json.loads(line)
            accepted += sum(not v.startswith("rejected") for step in record.get("probes", []) for _, _, v in step)
    assert sum(g["probes"] for g in found["groups"].values()) == accepted
    assert found["data"] == str(probes_and_run / "validation") and found["threshold"] is not None


def test_an_arm_that_does_not_compare_is_refused_in_one_line(probes_and_run, tmp_path):
    config = OracleConfig(data=str(probes_and_run / "data"), arch="blind", objective="plain", steps=2,
                          batch_chains=4, width=32, probe_width=16)
    train(config, tmp_path / "blind", show_progress=False, eval_config=OracleEvalConfig(pair_lengths=(8,), bootstrap=50))
    result = oracle_complete(str(tmp_path / "blind"), "--out", str(tmp_path / "x.json"))
    assert result.returncode != 0 and "does not decide complete" in result.stderr
    assert "Traceback" not in result.stderr and not (tmp_path / "x.json").exists()

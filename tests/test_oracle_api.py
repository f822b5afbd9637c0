"""oracle.load_run: a finished run of every arm scores probe events after any history as the
evaluation scores the dataset's chains (the head's five classes, P(accepted or complete), the
comparison's distance and verdict); refusals in one line; importing ``oracle`` does no work (on a
tiny probe dataset certified here and runs trained a few dozen steps; the docs' oracle example runs
in tests/test_examples.py)."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from oracle import OracleRun, ProbeScore, RunUnavailable, load_run
from oracle.evaluate import OracleEvalConfig, compared, predict_split
from oracle.train import OracleConfig, OracleTrainer, train

ROOT = Path(__file__).resolve().parent.parent
EVAL = OracleEvalConfig(pair_lengths=(8,), bootstrap=20)
ARMS = [("recurrence", "combo"), ("truth", "plain"), ("probe-slot", "plain"), ("transformer", "plain"),
        ("blind", "plain")]


@pytest.fixture(scope="module")
def runs(tiny_probes, tiny_probe_data, tmp_path_factory):
    """A run of every arm: the recurrence through train() (its threshold chosen on a sample of
    its training chains and stored), the others by their trainer's steps, the comparing ones
    given a threshold by hand."""
    root = tmp_path_factory.mktemp("oracle-api-runs")
    out = {}
    for arch, objective in ARMS:
        config = OracleConfig(data=str(tiny_probes), arch=arch, objective=objective, width=32, probe_width=16, steps=30,
                              batch_chains=4, warmup_steps=5, checkpoint_every=30)
        if arch == "recurrence":
            train(config, root / arch, show_progress=False, eval_config=EVAL, data=tiny_probe_data)
        else:
            trainer = OracleTrainer(config, tiny_probe_data)
            for step in range(config.steps):
                trainer.train_step(step)
                trainer.step += 1
            if trainer.model.compares:
                trainer.comparison = {"threshold": 0.3, "source": {"chains": "given"}}
            (root / arch).mkdir()
            torch.save(trainer.checkpoint(), root / arch / "checkpoint.pt")
        out[arch] = root / arch
    return out


def probe_chains(data_dir: Path, length: int) -> list[dict]:
    """The records of a split that carry probes, in the order the probe tensors hold them."""
    lines = (data_dir / f"test-{length}.jsonl").read_text().splitlines()
    return [r for r in map(json.loads, lines) if "probes" in r]


@pytest.mark.parametrize("arch", [a for a, _ in ARMS])
def test_scores_are_the_evaluations(runs, tiny_probes, tiny_probe_data, arch):
    run = load_run(runs[arch])
    assert isinstance(run, OracleRun) and run.arch == arch and run.describe()["arch"] == arch
    assert run.compares == (arch in ("recurrence", "truth", "probe-slot"))
    model = run.model
    split = tiny_probe_data.tests[16]
    n = 3
    rows = {k: v[:n] for k, v in split.items()}
    s = predict_split(model, tiny_probe_data, rows, EVAL)  # what evaluation reads off the arm, (n, S, P)
    with torch.no_grad():
        r, _ = model.reader(rows["items"].long(), rows["truth_items"].long())
        probabilities = model.score(r, rows["probes"].long()).softmax(-1)  # (n, S, P, V)
    verdicts = compared(s, tiny_probe_data, run.threshold) if run.compares else s.predicted
    names = tiny_probe_data.verdicts
    assert run.verdicts == names
    for i, record in enumerate(probe_chains(tiny_probes, 16)[:n]):
        for t in (0, 5, 15):
            probes = [p[1] for p in record["probes"][t]]
            got = run.score(record["start"], record["events"][:t], probes, goal=record["end"])
            assert [g.event for g in got] == probes and all(isinstance(g, ProbeScore) for g in got)
            for j, g in enumerate(got):
                assert list(g.probabilities) == list(names)
                torch.testing.assert_close(torch.tensor(list(g.probabilities.values())), probabilities[i, t, j],
                                           atol=1e-5, rtol=1e-4)
                assert g.accepted == pytest.approx(float(s.accept_score[i, t, j]), abs=1e-5)
                assert g.head == names[int(s.predicted[i, t, j])]
                if run.compares:
                    assert g.goal_distance == pytest.approx(float(s.goal_distance[i, t, j]), abs=1e-5)
                    if abs(g.goal_distance - run.threshold) > 1e-4:  # not on the cut, where rounding decides
                        assert g.verdict == names[int(verdicts[i, t, j])]
                else:
                    assert g.goal_distance is None and g.verdict == g.head


def test_events_and_trees_as_values_or_text_and_no_goal(runs, tiny_probes):
    from chains.rewrite.rules import Event
    from chains.rewrite.trees import parse_polish

    run = load_run(runs["recurrence"], device="cpu")
    record = probe_chains(tiny_probes, 8)[0]
    probes = [p[1] for p in record["probes"][3]]
    as_text = run.score(record["start"], record["events"][:3], probes, goal=record["end"])
    atoms = run.domain.atom_names
    as_values = run.score(parse_polish(record["start"], atoms), [Event.parse(e) for e in record["events"][:3]],
                          [Event.parse(p) for p in probes], goal=parse_polish(record["end"], atoms))
    assert as_text == as_values
    headless = run.score(record["start"], record["events"][:3], probes)  # no goal: the head's answers
    assert all(h.goal_distance is None and h.verdict == h.head for h in headless)
    assert [h.probabilities for h in headless] == [a.probabilities for a in as_text]
    assert run.score(record["start"], [], []) == []


def test_a_checked_history_names_the_step_that_breaks_the_rules(runs, tiny_probes):
    """With check=True the history is the rules' before it is scored; the probes may fail to apply
    (that is what a verdict is about), the history may not."""
    from tracker import HistoryError

    run = load_run(runs["recurrence"], device="cpu")
    record = probe_chains(tiny_probes, 8)[0]
    probes = [p[1] for p in record["probes"][3]]
    assert run.score(record["start"], record["events"][:3], probes, check=True) == run.score(
        record["start"], record["events"][:3], probes)
    with pytest.raises(HistoryError, match="step 0: mul_comm@0101 does not apply"):
        run.score(record["start"], ["mul_comm@0101"], probes, check=True)
    with pytest.raises(TypeError, match="events are a list of events, not one event"):
        run.score(record["start"], record["events"][0], probes)


def test_a_missing_run_or_a_bad_input_is_refused_in_one_line(runs, tmp_path):
    with pytest.raises(RunUnavailable, match="no such run directory"):
        load_run(tmp_path / "nowhere")
    (tmp_path / "empty").mkdir()
    with pytest.raises(RunUnavailable, match="checkpoint"):
        load_run(tmp_path / "empty")
    run = load_run(runs["recurrence"])
    with pytest.raises(ValueError, match="token 'e'"):
        run.score("* + a b * c e", [], ["add_comm@"])
    with pytest.raises(ValueError, match="event"):
        run.score("* + a b * c d", ["no_such_rule"], ["add_comm@"])
    truth = load_run(runs["truth"])
    with pytest.raises(ValueError, match="does not apply"):
        truth.score("* + a b * c d", ["add_comm@"], ["mul_comm@"])  # the root is a product


def test_both_loaders_restore_the_checkpoints_weights_and_refuse_a_misfit_in_one_line(runs, tiny_probes, tmp_path):
    """load_run and the prover's scorer build the arm through the one restore path
    (training.checkpoint.RunCheckpoint): every tensor the checkpoint holds, bit for bit; weights of
    another shape are one line naming the run, for the user of either."""
    from oracle.scorer import TrainedOracle
    from prover.verdict_oracle import OracleUnavailable, load_oracle
    from training.checkpoint import CHECKPOINT, Checkpoint

    for arch, _ in ARMS:
        stored = Checkpoint.of_run(runs[arch], OracleConfig).blob["model"]
        models = [load_run(runs[arch]).model] + ([TrainedOracle(runs[arch]).model] if arch != "transformer" else [])
        for model in models:
            loaded = model.state_dict()
            assert not model.training and loaded.keys() == stored.keys(), arch
            assert all(torch.equal(loaded[k], v) for k, v in stored.items()), arch
    blob = Checkpoint.of_run(runs["recurrence"], OracleConfig).blob
    broken = tmp_path / "broken"
    broken.mkdir()
    name = next(k for k, v in blob["model"].items() if k.endswith("weight") and v.dim() == 2)
    torch.save({**blob, "model": {**blob["model"], name: blob["model"][name][:, :1]}}, broken / CHECKPOINT)
    misfit = r"^oracle .*broken: its checkpoint does not fit its settings \("
    with pytest.raises(RunUnavailable, match=misfit):
        load_run(broken)
    with pytest.raises(OracleUnavailable, match=misfit) as refused:
        load_oracle(broken, tiny_probes)
    assert "\n" not in str(refused.value)


def test_importing_oracle_does_no_work():
    code = "import sys, oracle; assert 'torch' not in sys.modules; assert callable(oracle.load_run)"
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)

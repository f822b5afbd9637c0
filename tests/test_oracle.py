"""The oracle: the verdict head's linearity in the state, the metrics, a state-blind arm that
cannot see the state, and tiny end-to-end runs of every arm on a tiny probe dataset whose
verdicts come from the real Lean (``certify --probes``)."""
import json
import shutil
from dataclasses import fields

import pytest
import torch
from click.testing import CliRunner
from hypothesis import example, given, settings, strategies as st

from chains.rewrite.rules import Event, apply
from chains.rewrite.trees import parse_polish, tokens as polish_tokens
from leanbridge.cli import main as certify
from oracle.cli import main as train_oracle
from oracle.data import load_probe_dataset, sample_probe_batch
from oracle.evaluate import OracleEvalConfig, guard, hard_class
from oracle.inference import load_run
from oracle.model import ARCHS, STATEFUL, TERMED, Oracle, OracleModelConfig, VerdictHead
from oracle.scorer import TrainedOracle
from oracle.train import OracleConfig, OracleTrainer, train
from prover.cli import main as prove
from training.checkpoint import CheckpointError

# every arm with the objectives it trains under (combo and nerode need a recurrence to act on)
ARMS = ([(arch, "plain") for arch in ARCHS] + [(arch, "combo") for arch in TERMED]
        + [(arch, "nerode") for arch in TERMED])
EVAL = OracleEvalConfig(pair_lengths=(8,), bootstrap=50)
pytestmark = pytest.mark.usefixtures("one_thread_module")


# ---- the head and the metrics ------------------------------------------------------------------

@settings(max_examples=30, deadline=None)
@given(st.integers(0, 2**31 - 1), st.floats(-3, 3), st.floats(-3, 3))
def test_the_verdict_head_is_linear_in_the_state_for_each_probe(seed, a, b):
    torch.manual_seed(seed)
    head = VerdictHead(16, 8, 5).double()
    for p in head.parameters():
        torch.nn.init.normal_(p)
    e = torch.randn(3, 8, dtype=torch.float64)  # three probes
    z1, z2 = torch.randn(16, dtype=torch.float64), torch.randn(16, dtype=torch.float64)
    prior = head(torch.zeros(16, dtype=torch.float64), e)  # what the probe alone says
    mixed = head(a * z1 + b * z2, e) - prior
    assert torch.allclose(mixed, a * (head(z1, e) - prior) + b * (head(z2, e) - prior), atol=1e-9)


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.booleans(), st.integers(0, 5)), min_size=2, max_size=60))
def test_balanced_accuracy_is_the_mean_of_the_two_recalls(probes):
    true = torch.tensor([p[0] for p in probes])
    pred = torch.tensor([p[1] for p in probes])
    chain = torch.tensor([p[2] for p in probes])
    out = hard_class(true, pred, chain, 6, EVAL)
    if true.all() or (~true).all():
        assert out["balanced"] is None
        return
    recall_a = (true & pred).sum().item() / true.sum().item()
    recall_r = (~true & ~pred).sum().item() / (~true).sum().item()
    assert out["balanced"] == pytest.approx((recall_a + recall_r) / 2)
    assert out["low"] <= out["high"] and 0 <= out["low"] and out["high"] <= 1


def test_a_perfect_oracle_has_a_degenerate_interval_and_a_perfect_guard():
    true = torch.tensor([True, False] * 20)
    out = hard_class(true, true.clone(), torch.arange(40) % 7, 7, EVAL)
    assert out["balanced"] == out["low"] == out["high"] == 1.0
    score = true.float() * 0.9 + 0.05
    g = guard(true, score, 0.9)
    assert g["kept_accepted"] >= 0.9 and g["rejected_rejected"] == 1.0


@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.booleans(), st.floats(0, 1)), min_size=2, max_size=80), st.floats(0.5, 0.99))
def test_the_guard_keeps_at_least_the_asked_share_of_accepted_probes(probes, keep):
    true = torch.tensor([p[0] for p in probes])
    score = torch.tensor([p[1] for p in probes])
    g = guard(true, score, keep)
    if true.all() or (~true).all():
        assert g["threshold"] is None
        return
    assert g["kept_accepted"] >= keep - 1e-9
    assert 0 <= g["rejected_rejected"] <= 1


# ---- a tiny probe dataset, verdicts from the real Lean ------------------------------------------

def test_probe_tensors_agree_with_the_chains(tiny_probes):
    data = load_probe_dataset(tiny_probes)
    train_split = data.train
    n, t = train_split["items"].shape
    assert train_split["probes"].shape[:2] == (n, t - 1) and set(data.tests) == {8, 16}
    # the true tree at step 0 is the tree the chain starts from; the slot reads the tree only
    tokens = data.item_tokens
    assert torch.equal(tokens[train_split["truth_items"][:, 0].long()], tokens[train_split["items"][:, 0].long()])
    # every gold probe was accepted by Lean (accepted or complete), and the last one completes the proof
    gold = data.kinds.index("gold")
    is_gold = train_split["kinds"] == gold
    accepted = data.accepting[train_split["verdicts"][is_gold].long()]
    assert bool(accepted.all())
    last = train_split["verdicts"][:, -1][train_split["kinds"][:, -1] == gold].long()
    assert {data.verdicts[v] for v in last.tolist()} == {"complete"}
    # the goal is the tree the chain ends at, an item of its own; the partners end there too
    records = [json.loads(line) for line in (tiny_probes / "train.jsonl").read_text().splitlines()]
    vocab = data.tracker.vocab
    names = vocab.tokens
    for n, record in enumerate(records[:5]):
        goal = [names[i] for i in tokens[train_split["goal_items"][n].long()].tolist() if i != 0]
        assert " ".join(goal) == record["end"]
    again = load_probe_dataset(tiny_probes)  # from the cache
    assert torch.equal(again.train["probes"], train_split["probes"])


def test_a_dataset_without_probes_is_refused(tiny_probes, tmp_path):
    data = tmp_path / "data"
    shutil.copytree(tiny_probes, data, ignore=shutil.ignore_patterns(".cache"))
    manifest = json.loads((data / "manifest.json").read_text())
    del manifest["probes"]
    (data / "manifest.json").write_text(json.dumps(manifest))
    result = CliRunner().invoke(train_oracle, ["--data", str(data), "--steps", "2", "--out", str(tmp_path / "run")])
    assert result.exit_code != 0 and "certify --probes" in result.output and "Traceback" not in result.output


@pytest.mark.parametrize("arch,objective", ARMS)
def test_the_verdict_head_trains_end_to_end_for_every_arm(tiny_probes, arch, objective):
    """On one batch, sixty optimiser steps lower the verdict loss by a tenth at least, and the
    gradient reaches the tracker wherever the arm has one."""
    data = load_probe_dataset(tiny_probes)
    config = OracleConfig(data=str(tiny_probes), arch=arch, objective=objective, width=32, probe_width=16, steps=100)
    trainer = OracleTrainer(config, data)
    batch = sample_probe_batch(data, 6, objective != "plain", torch.Generator().manual_seed(3))
    first = None
    for step in range(60):
        losses = trainer.losses(batch, step=config.steps, generator=torch.Generator().manual_seed(step))  # full weight
        trainer.optimizer.zero_grad()
        sum(losses.values()).backward()
        if step == 0:
            first = losses["verdict"].item()
            if trainer.model.tracker is not None:
                grads = [p.grad for p in trainer.model.tracker.parameters() if p.grad is not None]
                assert grads and sum(g.abs().sum().item() for g in grads) > 0
            completion = {"completion"} if arch in ("recurrence", "truth") else set()  # the comparing arms
            assert set(losses) == {"plain": {"verdict"}, "combo": {"verdict", "nextlat", "invariance"},
                                   "nerode": {"verdict", "nextlat", "invariance", "metric"} | completion}[objective]
        trainer.optimizer.step()
    assert losses["verdict"].item() < 0.9 * first


def _skeleton(tokens: list[int], atom_ids: range) -> list[int]:
    return [atom_ids.start if t in atom_ids else t for t in tokens]


@settings(max_examples=10, deadline=None)
@given(st.integers(0, 2**31 - 1))
def test_completion_negatives_are_other_trees_of_the_goals_skeleton(tiny_probe_data, seed):
    data = tiny_probe_data
    trainer = OracleTrainer(OracleConfig(data="unused", objective="nerode", completion_negatives=3, width=16,
                                         probe_width=8, steps=4), data)
    pool, vocab = trainer.skeletons, data.tracker.vocab
    atom_ids = range(vocab.n_out - len(vocab.atoms), vocab.n_out)
    goals = data.train["goal_items"].long()
    drawn, has = pool.draw(goals, 3, torch.Generator().manual_seed(seed))
    again, _ = pool.draw(goals, 3, torch.Generator().manual_seed(seed))
    assert torch.equal(drawn, again)  # same generator, same draw
    tokens = data.item_tokens.tolist()
    assert has.any()
    for goal, row, ok in zip(goals.tolist(), drawn.tolist(), has.tolist()):
        mates = [i for i in pool.items.tolist() if i != goal
                 and _skeleton(tokens[i], atom_ids) == _skeleton(tokens[goal], atom_ids)]
        assert ok == bool(mates)  # a goal has negatives exactly when its skeleton has another tree
        for item in row:
            assert (item in mates) if ok else item == goal
    # a goal outside the pool (a tree no training chain holds) has none
    outside = torch.tensor([i for i in range(data.tracker.n_items, len(tokens)) if i not in set(pool.items.tolist())][:1])
    if len(outside):
        assert not pool.draw(outside, 2, torch.Generator().manual_seed(seed))[1].any()


def test_completion_negatives_add_to_the_comparisons_term_and_train(tiny_probes):
    data = load_probe_dataset(tiny_probes)
    base = dict(data=str(tiny_probes), objective="nerode", width=32, probe_width=16, steps=100)
    batch = sample_probe_batch(data, 6, True, torch.Generator().manual_seed(1))
    plain = OracleTrainer(OracleConfig(**base), data).losses(batch, 100, torch.Generator().manual_seed(2))
    trainer = OracleTrainer(OracleConfig(**base, completion_negatives=4, completion_weight=2.0), data)
    losses = trainer.losses(batch, 100, torch.Generator().manual_seed(2))
    for name in ("verdict", "metric"):  # the same weights (one seed): only the comparison's term moves
        assert torch.equal(losses[name], plain[name])
    assert losses["completion"] > 2 * plain["completion"] - 1e-6  # twice the weight, plus the negatives' hinge
    losses["completion"].backward()
    grads = [p.grad for p in trainer.model.tracker.parameters() if p.grad is not None]
    assert grads and sum(g.abs().sum().item() for g in grads) > 0


@settings(max_examples=10, deadline=None)
@given(st.integers(0, 2**31 - 1))
def test_the_blind_arm_cannot_see_the_state(tiny_probe_data, seed):
    """Its verdicts on a chain's probes do not change when the chain (its start, goal and
    events) is replaced by another history; the recurrence's do, so the test can tell."""
    data = tiny_probe_data
    generator = torch.Generator().manual_seed(seed)
    batch = sample_probe_batch(data, 4, False, generator)
    items = batch.histories.items
    rows = torch.randint(0, len(data.train["items"]), (4,), generator=generator)  # other chains
    other = data.train["items"][rows].long()
    other[:, 1:] = other[:, 1 + torch.randperm(other.shape[1] - 1, generator=generator)]  # events reordered
    other_truth = data.train["truth_items"][rows].long()
    answers = {}
    for arch in ("blind", "recurrence"):
        torch.manual_seed(seed)
        model = Oracle(OracleModelConfig(arch=arch, width=32, probe_width=16), data.item_tokens, data.probe_tokens,
                       data.tracker.vocab.size, len(data.verdicts))
        for p in model.parameters():  # not an untrained head that scores every state alike
            torch.nn.init.normal_(p, std=0.3)
        with torch.no_grad():
            answers[arch] = [model(h, batch.probes, truth)[0] for h, truth in
                             ((items, batch.truth_items), (other, other_truth))]
    assert torch.equal(answers["blind"][0], answers["blind"][1])
    changed = (answers["recurrence"][0] - answers["recurrence"][1]).abs().max()
    assert changed > 1e-4 or torch.equal(items, other)


REPORT_KEYS = {"arch", "objective", "seed", "steps", "accuracy", "all_right", "by_kind_by_length", "pooled",
               "pair_distance", "unrelated_distance", "seconds", "steps_per_second", "dataset", "lean",
               "verdict_classes", "parameters", "config"}


@pytest.mark.parametrize("arch,objective", ARMS)
def test_every_arm_writes_a_report(tiny_probes, tmp_path, arch, objective):
    config = OracleConfig(data=str(tiny_probes), arch=arch, objective=objective, steps=3, batch_chains=4, width=32,
                          probe_width=16, checkpoint_every=2)
    report = train(config, tmp_path, show_progress=False, eval_config=EVAL)
    assert REPORT_KEYS <= set(report)
    assert set(report["accuracy"]) == set(report["all_right"]) == {"8", "16"}
    assert all(0 <= v <= 1 for v in report["accuracy"].values())
    pooled = report["pooled"]
    assert set(pooled["hard"]) == {"1", "2-3", "4-6", "7-12", "13-64", "65+"}
    assert sum(map(sum, pooled["confusion"])) > 0 and pooled["guard"]["depths"] == [4, 6]
    assert bool(report["pair_distance"]) == (arch in STATEFUL)
    assert all(torch.isfinite(torch.tensor(v)) for v in report["final_losses"].values())
    assert all((tmp_path / name).stat().st_size > 0 for name in ("accuracy.png", "kinds.png", "depth.png"))


def test_combo_is_refused_for_an_arm_without_a_state():
    for arch in set(ARCHS) - set(TERMED):
        for objective in ("combo", "nerode"):
            with pytest.raises(ValueError, match="plain"):
                OracleConfig(arch=arch, objective=objective)


def test_resume_continues_to_the_same_weights(tiny_probes, tmp_path, tiny_probe_data):
    config = OracleConfig(data=str(tiny_probes), objective="combo", steps=6, batch_chains=4, width=32,
                          checkpoint_every=3)
    train(config, tmp_path / "straight", show_progress=False, eval_config=EVAL, data=tiny_probe_data)
    straight = torch.load(tmp_path / "straight" / "checkpoint.pt", weights_only=False)
    trainer = OracleTrainer(config, tiny_probe_data)  # a run stopped after 3 steps, right after its checkpoint
    for step in range(3):
        trainer.train_step(step)
        trainer.step += 1
    (tmp_path / "resumed").mkdir()
    torch.save(trainer.checkpoint(), tmp_path / "resumed" / "checkpoint.pt")
    report = train(config, tmp_path / "resumed", resume=True, show_progress=False, eval_config=EVAL,
                   data=tiny_probe_data)
    resumed = torch.load(tmp_path / "resumed" / "checkpoint.pt", weights_only=False)
    assert resumed["step"] == 6 and report["steps"] == 6
    for name, value in straight["model"].items():
        assert torch.allclose(value, resumed["model"][name], atol=1e-6), name
    other = OracleConfig(**{**config.__dict__, "seed": 1})
    with pytest.raises(CheckpointError, match="seed"):
        train(other, tmp_path / "resumed", resume=True, show_progress=False, data=tiny_probe_data)
    with pytest.raises(CheckpointError, match="no checkpoint"):
        train(config, tmp_path / "nowhere", resume=True, show_progress=False, data=tiny_probe_data)


def test_command_writes_report_and_plots(tiny_probes, tmp_path):
    out = tmp_path / "run"
    args = ["--data", str(tiny_probes), "--steps", "2", "--batch-chains", "4", "--width", "32", "--out", str(out),
            "--quiet"]
    result = CliRunner().invoke(train_oracle, args)
    assert result.exit_code == 0, result.output
    report = json.loads((out / "report.json").read_text())
    assert report["steps"] == 2 and report["arch"] == "recurrence" and report["objective"] == "combo"
    assert (out / "checkpoint.pt").is_file()
    resumed = CliRunner().invoke(train_oracle, args + ["--resume"])
    assert resumed.exit_code == 0, resumed.output
    bad = CliRunner().invoke(train_oracle, ["--data", str(tmp_path / "nowhere"), "--out", str(out)])
    assert bad.exit_code != 0 and "manifest" in bad.output and "Traceback" not in bad.output
    combo_blind = CliRunner().invoke(train_oracle, ["--data", str(tiny_probes), "--arch", "blind"])
    assert combo_blind.exit_code != 0 and "plain" in combo_blind.output


def test_every_training_setting_is_an_option_of_the_command():
    options = {p.name for p in train_oracle.params} - {"out", "resume", "force", "threads", "quiet", "help", "skip_test",
                                                        "device", "log_every", "tensorboard",
                                                        "corrupted_checker", "sets", "settings"}
    assert options == {f.name for f in fields(OracleConfig)}


def saved_run(config: OracleConfig, data, out) -> OracleTrainer:
    """``config.steps`` optimiser steps, then the checkpoint saved as a run in ``out``."""
    trainer = OracleTrainer(config, data)
    for step in range(config.steps):
        trainer.train_step(step)
    trainer.step = config.steps
    out.mkdir()
    torch.save(trainer.checkpoint(), out / "checkpoint.pt")
    return trainer


@pytest.mark.parametrize("arch,objective", [("recurrence", "combo"), ("probe-slot", "combo"), ("truth", "plain"),
                                            ("blind", "plain")])
def test_a_trained_run_scores_any_history_as_evaluation_does(tiny_probes, tiny_probe_data, tmp_path, arch, objective):
    """The scorer the prover reads (start, goal and events as trees and events, no dataset)
    gives the probabilities the evaluation gives on the dataset's chains."""
    config = OracleConfig(data=str(tiny_probes), arch=arch, objective=objective, steps=3, batch_chains=4, width=32,
                          probe_width=16)
    trainer = saved_run(config, tiny_probe_data, tmp_path / "run")
    scorer = TrainedOracle(tmp_path / "run")
    split = tiny_probe_data.tests[8]
    records = [json.loads(line) for line in (tiny_probes / "test-8.jsonl").read_text().splitlines()][:3]
    model = trainer.model.eval()
    with torch.no_grad():
        r, _ = model.reader(split["items"][:3].long(), split["truth_items"][:3].long())
        expected = model.score(r, split["probes"][:3].long()).softmax(-1)[..., tiny_probe_data.accepting].sum(-1)
    atoms = tiny_probe_data.tracker.vocab.atoms
    for t in (0, 5):
        histories = [(parse_polish(rec["start"], atoms), parse_polish(rec["end"], atoms),
                      [Event.parse(e) for e in rec["events"][:t]]) for rec in records]
        candidates = [[Event.parse(p[1]) for p in rec["probes"][t]] for rec in records]
        got = torch.tensor(scorer.score(histories, candidates))
        assert torch.allclose(got, expected[:, t], atol=1e-5)


def test_prove_with_a_trained_oracle_counts_calls_and_audits_every_solution(tiny_probes, tiny_probe_data, tmp_path):
    """``prove --searcher oracle --oracle RUN``: the run loads as the searcher's oracle, every
    question is counted, every reported solution is certified by Lean, and the report carries
    the oracle's recall of accepted events; a run of another dataset is refused in one line."""
    config = OracleConfig(data=str(tiny_probes), arch="recurrence", objective="plain", steps=3, batch_chains=4,
                          width=32,
                          probe_width=16)
    trainer = OracleTrainer(config, tiny_probe_data)
    for step in range(3):
        trainer.train_step(step)
    trainer.step = 3
    run = tmp_path / "oracle-run"
    run.mkdir()
    torch.save(trainer.checkpoint(), run / "checkpoint.pt")
    result = CliRunner().invoke(prove, ["--searcher", "oracle", "--oracle", str(run), "--data", str(tiny_probes),
                                       "--problems", "2", "--distances", "1,2", "--budget-calls", "200",
                                       "--out", str(tmp_path / "prove")], catch_exceptions=False)
    assert result.exit_code == 0, result.output
    report = json.loads((tmp_path / "prove" / "report.json").read_text())
    assert report["oracle"]["run"] == str(run) and 0.0 <= report["oracle_recall_accepted"] <= 1.0
    assert report["solutions_failing_audit"] == 0
    assert report["kernel_calls"] == sum(json.loads(line)["calls"] for line in
                                         (tmp_path / "prove" / "results.jsonl").read_text().splitlines())
    elsewhere = tmp_path / "elsewhere"
    shutil.copytree(tiny_probes, elsewhere)
    manifest = json.loads((elsewhere / "manifest.json").read_text())
    manifest["seed"] = 99  # another dataset's identity
    (elsewhere / "manifest.json").write_text(json.dumps(manifest))
    result = CliRunner().invoke(prove, ["--searcher", "oracle", "--oracle", str(run), "--data", str(elsewhere),
                                        "--problems", "1", "--distances", "1", "--out", str(tmp_path / "p2")])
    assert result.exit_code == 1 and "trained on another dataset" in result.output


# ---- complete by comparison --------------------------------------------------------------------

@settings(max_examples=40, deadline=None)
@given(st.lists(st.tuples(st.floats(0, 2), st.booleans()), min_size=1, max_size=60))
@example(probes=[(0.0, True), (5e-324, False)])  # two distances whose midpoint rounds to the smaller
def test_the_chosen_threshold_is_the_best_cut(probes):
    from oracle.compare import choose_threshold

    d = torch.tensor([p[0] for p in probes], dtype=torch.float64)
    y = torch.tensor([p[1] for p in probes])
    out = choose_threshold(d, y)
    right = lambda t: int(((d < t) == y).sum())  # noqa: E731
    best = max(right(t) for t in [-1.0, 3.0] + d.tolist() + (d + 1e-9).tolist())
    assert right(out["threshold"]) == best and out["accuracy"] == pytest.approx(best / len(d))


@pytest.fixture(scope="module")
def tiny_validation(tmp_path_factory):
    root = tmp_path_factory.mktemp("oracle-validation")
    result = CliRunner().invoke(certify, ["--atoms", "4", "--tier", "1", "--chains", "20", "--test-chains", "8",
                                          "--test-lengths", "8,16", "--probes", "--seed", "1",
                                          "--out", str(root / "data"), "--store", str(root / "store.sqlite")])
    assert result.exit_code == 0, result.output
    return root / "data"


def test_complete_by_comparison_chooses_its_threshold_on_validation_chains(tiny_probes, tiny_validation, tmp_path):
    """The threshold is chosen on the validation chains of another seed, stored with the run,
    and used on the test chains; the report gives five classes and accepted-or-complete vs
    rejected for both readouts, and the schedule of the terms."""
    config = OracleConfig(data=str(tiny_probes), arch="recurrence", objective="nerode", steps=4, batch_chains=4,
                          width=32,
                          probe_width=16, validation=str(tiny_validation), invariance_delay=0.5, nextlat_delay=0.5)
    report = train(config, tmp_path / "run", show_progress=False, eval_config=EVAL)
    chosen = report["threshold"]
    assert chosen["source"]["chains"] == "validation" and chosen["threshold"] is not None
    assert chosen["source"]["dataset"]["seed"] == 1
    comparison = report["comparison"]
    assert comparison["threshold"] == chosen["threshold"]
    for figures in (report["head"], comparison):
        assert set(figures["accuracy"]) == set(figures["binary_accuracy"]) == {"8", "16"}
        assert all(0 <= v <= 1 for v in figures["binary_all_right"].values())
    # a probe predicted rejected keeps the head's answer: the binary figures of the readouts agree
    assert report["head"]["binary_accuracy"] == comparison["binary_accuracy"]
    assert report["validation"]["comparison"]["choice"]["threshold"] == chosen["threshold"]
    assert report["schedule"]["invariance"]["on_from_step"] == 2 and "metric" in report["schedule"]
    blob = torch.load(tmp_path / "run" / "checkpoint.pt", weights_only=False)
    assert blob["comparison"]["threshold"] == chosen["threshold"]
    assert TrainedOracle(tmp_path / "run").threshold == chosen["threshold"]
    # a validation run reads no test chain
    only = train(config, tmp_path / "validation-only", show_progress=False, eval_config=EVAL, test=False)
    assert only["tested"] is False and "accuracy" not in only and only["validation"]["accuracy"]
    # the training dataset is no validation dataset
    same = OracleConfig(**{**config.__dict__, "validation": str(tiny_probes)})
    with pytest.raises(ValueError, match="another seed"):
        train(same, tmp_path / "same", show_progress=False, eval_config=EVAL)
    result = CliRunner().invoke(train_oracle, ["--data", str(tiny_probes), "--validation", str(tiny_probes),
                                               "--steps", "2",
                                               "--out", str(tmp_path / "cli")])
    assert result.exit_code != 0 and "another seed" in result.output and "Traceback" not in result.output
    assert not (tmp_path / "cli").exists()


def test_without_validation_the_threshold_is_chosen_on_training_chains(tiny_probes, tiny_probe_data, tmp_path):
    config = OracleConfig(data=str(tiny_probes), arch="truth", objective="plain", steps=2, batch_chains=4, width=32,
                          probe_width=16)
    report = train(config, tmp_path, show_progress=False, eval_config=EVAL, data=tiny_probe_data)
    assert report["threshold"]["source"]["chains"] == "training sample" and report["validation"] is None
    assert report["comparison"]["accuracy"]
    blind = OracleConfig(data=str(tiny_probes), arch="blind", objective="plain", steps=2, batch_chains=4, width=32,
                         probe_width=16)
    blind_report = train(blind, tmp_path / "blind", show_progress=False, eval_config=EVAL, data=tiny_probe_data)
    assert blind_report["comparison"] is None


# ---- the auxiliary tree term -------------------------------------------------------------------

def test_the_tree_terms_targets_are_the_certified_trees_of_the_chain(tiny_probes, tiny_probe_data):
    """The targets of the tree term at step t are the tokens of T_t, the start tree with the
    chain's first t events applied (the rules engine as referee), padded after its end."""
    trainer = OracleTrainer(OracleConfig(data=str(tiny_probes), objective="plain", width=32, probe_width=16,
                                         tree_weight=1.0), tiny_probe_data)
    tracker = trainer.model.tracker
    assert tracker.n_out == tiny_probe_data.tracker.vocab.n_out and tracker.tree_len == tiny_probe_data.tracker.tree_len
    records = [json.loads(line) for line in (tiny_probes / "train.jsonl").read_text().splitlines()]
    vocab = tiny_probe_data.tracker.vocab
    names, atoms = vocab.tokens, vocab.atoms
    truth = tiny_probe_data.train["truth_items"].long()
    for n, record in enumerate(records[:5]):
        targets = tiny_probe_data.item_tokens[truth[n]][:, : tracker.tree_len]  # (S, P)
        tree = parse_polish(record["start"], atoms)
        for t, event in enumerate(record["events"]):
            row = targets[t].tolist()
            assert " ".join(names[i] for i in row if i != 0) == " ".join(polish_tokens(tree))
            assert all(i == 0 for i in row[len(polish_tokens(tree)):]) and max(row) < vocab.n_out
            tree = apply(tree, Event.parse(event))


@pytest.mark.parametrize("arch,objective", [("recurrence", "nerode"), ("truth", "plain"), ("transformer", "plain")])
def test_the_tree_term_trains_the_readout_and_the_state(tiny_probes, tiny_probe_data, arch, objective):
    """On one batch the tree term falls by a fifth within eighty steps, its gradient reaches the
    state's parameters, and a run without it computes no such term."""
    base = dict(data=str(tiny_probes), arch=arch, objective=objective, width=32, probe_width=16, steps=100)
    batch = sample_probe_batch(tiny_probe_data, 6, objective != "plain", torch.Generator().manual_seed(4))
    without = OracleTrainer(OracleConfig(**base), tiny_probe_data).losses(batch, 100, torch.Generator().manual_seed(1))
    assert "tree" not in without
    trainer = OracleTrainer(OracleConfig(**base, tree_weight=1.0), tiny_probe_data)
    first = None
    for step in range(80):
        losses = trainer.losses(batch, step=100, generator=torch.Generator().manual_seed(step))
        trainer.optimizer.zero_grad()
        sum(losses.values()).backward()
        if first is None:
            first = losses["tree"].item()
            embed = trainer.model.tracker.embed.table.weight.grad
            assert embed is not None and embed.abs().sum() > 0
        trainer.optimizer.step()
    assert losses["tree"].item() < 0.8 * first


def test_a_run_with_the_tree_term_loads_for_the_prover_and_the_scorer(tiny_probes, tiny_probe_data, tmp_path):
    config = OracleConfig(data=str(tiny_probes), objective="plain", steps=2, batch_chains=4, width=32, probe_width=16,
                          tree_weight=0.5)
    trainer = saved_run(config, tiny_probe_data, tmp_path / "run")
    run = load_run(tmp_path / "run")
    assert torch.equal(run.model.tracker.head.weight, trainer.model.tracker.head.weight)
    assert TrainedOracle(tmp_path / "run").model.tracker.head.weight.shape == trainer.model.tracker.head.weight.shape


def test_the_tree_term_is_refused_where_there_is_no_state():
    with pytest.raises(ValueError, match="blind arm"):
        OracleConfig(arch="blind", objective="plain", tree_weight=1.0)
    with pytest.raises(ValueError, match="tree_weight"):
        OracleConfig(tree_weight=-1.0)

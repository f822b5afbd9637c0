"""The tracker: properties of the Nerode terms, refusal of uncertified data, and tiny end-to-end
runs of every objective and every architecture on a tiny dataset certified by the real Lean."""
import json
import shutil
from dataclasses import fields, replace

import pytest
import torch
from click.testing import CliRunner
from hypothesis import given, settings, strategies as st

from chains.manifest import DatasetError
from chains.rewrite.dataset import DatasetSpec
from chains.rewrite.space import Domain
from leanbridge.certify import certify_dataset
from tracker.build import build_model
from tracker.cli import main as train_tracker
from tracker.config import OBJECTIVES, TrainConfig, schedule
from tracker.data import load_dataset, sample_batch
from tracker.evaluate import EvalConfig, end_views, evaluate, training_fit
from tracker.losses import centred_cosine_distance, invariance, metric, output_tv
from tracker.models import ARCHS, ModelConfig
from tracker.schedules import SCHEDULES, for_rewrite, schedule_of, scheduled
from tracker.stopping import StopConfig, StopRule
from tracker.train import Trainer, train
from training.checkpoint import CheckpointError
from training.loop import lr_at

floats = st.floats(-10, 10, allow_nan=False, allow_infinity=False)
vectors = st.lists(floats, min_size=8, max_size=8)


# ---- the centred cosine and the terms ----------------------------------------------------------

@settings(max_examples=60, deadline=None)
@given(vectors, vectors, floats, floats, st.floats(0.01, 100))
def test_centred_cosine_ignores_a_common_shift_and_scale(a, b, shift_a, shift_b, scale):
    a, b = torch.tensor(a, dtype=torch.float64), torch.tensor(b, dtype=torch.float64)
    if (a - a.mean()).norm() < 1e-3 or (b - b.mean()).norm() < 1e-3:
        return  # a constant vector has no direction once centred
    d = centred_cosine_distance(a, b)
    assert torch.allclose(centred_cosine_distance(a + shift_a, b + shift_b), d, atol=1e-9)
    assert torch.allclose(centred_cosine_distance(scale * a, b), d, atol=1e-9)
    assert -1e-12 <= d.item() <= 2 + 1e-12


def test_invariance_has_zero_gradient_at_equal_states():
    z = torch.randn(16, 32, dtype=torch.float64, requires_grad=True)
    w = z.detach().clone().requires_grad_(True)
    loss = invariance(z, w)
    loss.backward()
    assert loss.item() == pytest.approx(0, abs=1e-12)
    assert z.grad.abs().max().item() < 1e-7 and w.grad.abs().max().item() < 1e-7


def test_metric_loss_has_no_constant_minimum_when_outputs_differ():
    trees_u = torch.tensor([[1, 2, 3], [1, 2, 3]])
    trees_v = torch.tensor([[1, 2, 3], [2, 2, 4]])  # the second pair has different outputs
    tv = output_tv(trees_u, trees_v)
    assert tv.tolist() == [0.0, pytest.approx(2 / 3)]
    c = torch.randn(8, dtype=torch.float64)
    constant = c.expand(2, 8).clone().requires_grad_(True)  # every history mapped to one state
    other = c.expand(2, 8).clone().requires_grad_(True)
    loss = metric(constant, other, tv, constant.detach(), other.detach(), torch.tensor([True, True]), 0.9)
    assert loss.item() > 1e-3  # the pair with different outputs wants distance (1 - gamma) * tv
    # a non-constant map that pulls the inequivalent pair apart does better: the constant map is
    # a stationary point (d_N is minimal at equal states) but not a minimum
    apart = torch.stack([c, -c])  # d_N = 1 for the second pair
    better = metric(torch.stack([c, c]), apart, tv, torch.stack([c, c]), apart, torch.tensor([True, True]), 0.9)
    assert better.item() < loss.item()


def test_schedule_holds_then_ramps():
    assert schedule(0, 100, 0.2, 0.1) == 0 and schedule(19, 100, 0.2, 0.1) == 0
    assert 0 < schedule(20, 100, 0.2, 0.1) < 1 and schedule(29, 100, 0.2, 0.1) == 1
    assert schedule(5, 100, 0.0, 0.0) == 1


# ---- a tiny certified dataset ------------------------------------------------------------------

@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    root = tmp_path_factory.mktemp("tracker")
    spec = DatasetSpec(chains=40, test_lengths=(8, 16), test_chains=8)
    certify_dataset(spec, root / "data", root / "store.sqlite")
    return root / "data"


def _copy(tiny, tmp_path):
    out = tmp_path / "data"
    shutil.copytree(tiny, out, ignore=shutil.ignore_patterns(".cache"))
    return out


def test_dataset_loads_into_consistent_tensors(tiny):
    data = load_dataset(tiny)
    batch = sample_batch(data, 4, torch.Generator().manual_seed(0))
    assert batch.items.shape[0] == 4 * 3
    # every partner ends at its chain's tree
    assert (batch.ends[4:].view(4, 2) == batch.ends[:4, None]).all()
    assert set(data.tests) == {8, 16}
    again = load_dataset(tiny)  # from the cache
    assert torch.equal(again.train["chain_items"], data.train["chain_items"])


def test_dataset_with_a_failed_step_is_refused(tiny, tmp_path):
    data = _copy(tiny, tmp_path)
    manifest = json.loads((data / "manifest.json").read_text())
    manifest["failed"] = 1
    (data / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(DatasetError, match="failed certification"):
        load_dataset(data)


def test_dataset_with_edited_chains_is_refused(tiny, tmp_path):
    data = _copy(tiny, tmp_path)
    lines = (data / "train.jsonl").read_text().splitlines()
    record = json.loads(lines[0])
    record["events"][0] = "add_comm@"  # the certificate no longer belongs to this step
    lines[0] = json.dumps(record)
    (data / "train.jsonl").write_text("\n".join(lines) + "\n")
    result = CliRunner().invoke(train_tracker, ["--data", str(data), "--steps", "2", "--out", str(tmp_path / "run")])
    assert result.exit_code != 0
    assert "train.jsonl" in result.output and "certified hash" in result.output
    assert "Traceback" not in result.output


def test_dataset_whose_counts_disagree_is_refused(tiny, tmp_path):
    data = _copy(tiny, tmp_path)
    manifest = json.loads((data / "manifest.json").read_text())
    manifest["certified"] -= 1
    (data / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(DatasetError, match="not every step is certified"):
        load_dataset(data)


# ---- end to end --------------------------------------------------------------------------------

REPORT_KEYS = {"objective", "arch", "seed", "steps", "exact", "in_distribution", "pair_distance", "pair_growth",
               "unrelated_distance", "seconds", "steps_per_second", "dataset", "lean", "package_version",
               "torch_version"}


def _check_report(report, objective, arch, train_length=8):
    assert REPORT_KEYS <= set(report)
    assert report["objective"] == objective and report["arch"] == arch
    assert set(report["exact"]) == {"8", "16"}
    assert all(v is None or 0 <= v <= 1 for v in report["exact"].values())
    assert set(report["pair_distance"]) == {"8"}  # 16 is not a pair length
    fit = report["in_distribution"]  # fresh: exact on the test split of the training length, if there is one
    assert fit["length"] == train_length and 0 <= fit["train"] <= 1
    assert fit["fresh"] == report["exact"].get(str(train_length))
    assert len(report["dataset"]["dataset_id"]) == 64 and report["lean"]["githash"]


@pytest.mark.parametrize("objective", OBJECTIVES)
def test_every_objective_trains_end_to_end(tiny, tmp_path, objective):
    config = TrainConfig(data=str(tiny), objective=objective, steps=6, batch_chains=4, checkpoint_every=3)
    report = train(config, tmp_path, show_progress=False, eval_config=EvalConfig(pair_lengths=(8,)))
    _check_report(report, objective, "recurrence")
    saved = json.loads((tmp_path / "report.json").read_text())
    assert saved["steps"] == 6 and (tmp_path / "exact.png").is_file() and (tmp_path / "pair_distance.png").is_file()
    assert all(torch.isfinite(torch.tensor(v)) for v in report["final_losses"].values())


@pytest.mark.parametrize("arch", [a for a in ARCHS if a != "recurrence"] + ["free-norm", "registers-hard"])
def test_every_arch_trains_end_to_end(tiny, tmp_path, arch):
    fixed = arch != "free-norm"  # the recurrence's default (fixed) is trained by the tests above
    moves = "hard" if arch == "registers-hard" else "soft"
    arch = "recurrence" if not fixed else arch.removesuffix("-hard")
    for objective in ("combo", "metric"):
        config = TrainConfig(data=str(tiny), objective=objective, arch=arch, fixed_norm=fixed, steps=4,
                             batch_chains=4, width=32, layout="paths" if arch == "registers" else "polish", moves=moves)
        report = train(config, tmp_path / objective, show_progress=False, eval_config=EvalConfig(pair_lengths=(8,)))
        _check_report(report, objective, arch)


@pytest.mark.parametrize("objective", OBJECTIVES)
def test_the_registers_train_end_to_end_under_every_objective(tiny, tmp_path, objective):
    config = replace(scheduled("registers", data=str(tiny)), objective=objective, steps=3, batch_chains=4,
                     checkpoint_every=3)
    report = train(config, tmp_path, show_progress=False, eval_config=EvalConfig(pair_lengths=(8,)))
    _check_report(report, objective, "registers")
    assert report["config"]["moves"] == "hard" and all(torch.isfinite(torch.tensor(v))
                                                       for v in report["final_losses"].values())


def test_models_share_the_interface(tiny):
    data = load_dataset(tiny)
    batch = sample_batch(data, 3, torch.Generator().manual_seed(1))
    for arch in ARCHS:
        torch.manual_seed(0)
        # the registers read their tree by path: one register per heap position
        tree_len = 2 ** ((data.tree_len + 1) // 2) - 1 if arch == "registers" else data.tree_len
        model = build_model(ModelConfig(arch=arch, width=32), data.item_tokens, data.vocab.size, data.vocab.n_out,
                            tree_len, domain="rewrite")
        z, state = model(batch.items)
        assert z.shape == (*batch.items.shape, model.view_width)
        last = batch.lengths - 1
        # the end view of forward and of final_view agree, padding leaves the state alone
        assert torch.allclose(model.final_view(batch.items), z[torch.arange(len(z)), last], atol=1e-5)
        # advancing by an item equals running the longer history
        rows = torch.tensor([0, 4])
        item = data.succ_items[batch.ends[rows], 0]
        longer = torch.cat([batch.items[rows], torch.zeros(2, 1, dtype=torch.long)], 1)
        longer[torch.arange(2), batch.lengths[rows]] = item
        assert torch.allclose(model.advance(state, rows, item), model.final_view(longer), atol=1e-5)
        assert model.readout(z).shape == (*batch.items.shape, tree_len, data.vocab.n_out)


def _straight_and_resumed(config, tmp_path, stopped_after: int):
    """The checkpoints of ``config`` trained straight through and of the same run stopped after
    ``stopped_after`` steps (as if killed right after its checkpoint) and resumed, with the
    resumed run's report."""
    eval_config = EvalConfig(pair_lengths=(8,))
    train(config, tmp_path / "straight", show_progress=False, eval_config=eval_config)
    trainer = Trainer(config, load_dataset(config.data))
    for step in range(stopped_after):
        trainer.train_step(step)
        trainer.step += 1
    (tmp_path / "resumed").mkdir()
    torch.save(trainer.checkpoint(), tmp_path / "resumed" / "checkpoint.pt")
    report = train(config, tmp_path / "resumed", resume=True, show_progress=False, eval_config=eval_config)
    return (torch.load(tmp_path / "straight" / "checkpoint.pt", weights_only=False),
            torch.load(tmp_path / "resumed" / "checkpoint.pt", weights_only=False), report)


def _losses_at(config, data, step: int) -> dict[str, float]:
    """The losses of step ``step`` of a fresh run of ``config``, on that step's batch."""
    trainer = Trainer(config, data)
    generator = torch.Generator().manual_seed(step)
    return {k: v.item() for k, v in trainer.losses(sample_batch(data, 4, generator), step, generator).items()}


def test_resume_continues_to_the_same_weights(tiny, tmp_path):
    config = TrainConfig(data=str(tiny), objective="combo", steps=8, batch_chains=4, checkpoint_every=4)
    straight, resumed, report = _straight_and_resumed(config, tmp_path, stopped_after=4)
    assert resumed["step"] == 8 and report["steps"] == 8
    for name, value in straight["model"].items():
        assert torch.allclose(value, resumed["model"][name], atol=1e-6), name


def test_resume_refuses_other_settings_and_missing_checkpoints(tiny, tmp_path):
    config = TrainConfig(data=str(tiny), objective="plain", steps=2, batch_chains=4)
    with pytest.raises(CheckpointError, match="no checkpoint"):
        train(config, tmp_path, resume=True, show_progress=False)
    train(config, tmp_path, show_progress=False, eval_config=EvalConfig(pair_lengths=(8,)))
    other = TrainConfig(**{**config.__dict__, "seed": 1})
    with pytest.raises(CheckpointError, match="seed"):
        train(other, tmp_path, resume=True, show_progress=False)


def test_command_writes_report_and_plots(tiny, tmp_path):
    out = tmp_path / "run"
    result = CliRunner().invoke(train_tracker, ["--data", str(tiny), "--steps", "3", "--batch-chains", "4",
                                                "--objective", "combo", "--out", str(out), "--quiet"])
    assert result.exit_code == 0, result.output
    report = json.loads((out / "report.json").read_text())
    assert report["steps"] == 3 and (out / "checkpoint.pt").is_file()
    assert all((out / name).stat().st_size > 0 for name in ("exact.png", "pair_distance.png"))
    resumed = CliRunner().invoke(train_tracker, ["--data", str(tiny), "--steps", "3", "--batch-chains", "4",
                                                 "--objective", "combo", "--out", str(out), "--quiet", "--resume"])
    assert resumed.exit_code == 0, resumed.output
    bad = CliRunner().invoke(train_tracker, ["--data", str(tmp_path / "nowhere"), "--out", str(out)])
    assert bad.exit_code != 0 and "manifest" in bad.output and "Traceback" not in bad.output


def test_every_training_setting_is_an_option_of_the_command():
    """The command builds its TrainConfig from its options by name (a rare setting's option hidden,
    reached by --set): a setting without an option could never be changed from the command line, an
    option without a setting would be refused."""
    options = {p.name for p in train_tracker.params} - {"schedule", "eval_chains", "eval_threads", "check_every",
                                                         "check_chains", "check_patience", "check_cooldown",
                                                         "check_until", "device", "out",
                                                         "resume", "force", "threads", "quiet", "help", "log_every",
                                                         "tensorboard", "corrupted_checker", "sets", "settings"}
    assert options == {f.name for f in fields(TrainConfig)}


def test_a_tier2_tracker_trains_and_reads_trees_of_every_size(tmp_path):
    """Tier 2 changes the tree's size along a chain: the readout covers the largest tree the
    domain allows, padded."""
    spec = DatasetSpec(domain=Domain(atoms=3, tier=2, max_size=9), chains=12, length=4, test_lengths=(8, 16), test_chains=4)
    certify_dataset(spec, tmp_path / "data", tmp_path / "store.sqlite")
    data = load_dataset(tmp_path / "data")
    sizes = {int((data.tree_tokens[t] != 0).sum()) for t in range(len(data.tree_tokens))}
    assert len(sizes) > 1 and data.tree_len == 9 >= max(sizes)
    config = TrainConfig(data=str(tmp_path / "data"), objective="combo", steps=3, batch_chains=3, width=16)
    report = train(config, tmp_path / "run", show_progress=False, eval_config=EvalConfig(pair_lengths=(8,)))
    _check_report(report, "combo", "recurrence", train_length=4)  # no test split at 4: fresh is None
    assert report["dataset"]["tier"] == 2


# ---- schedules, stopping when exact, evaluation speed --------------------------------------------

def test_the_default_schedule_is_the_registered_recipe():
    assert scheduled("default") == TrainConfig()
    assert schedule_of(TrainConfig(seed=2, data="elsewhere")) == {"name": "default", "overrides": {}}
    fast = scheduled("fast", seed=3)
    assert fast.seed == 3 and schedule_of(fast) == {"name": "fast", "overrides": {}}
    assert schedule_of(replace(fast, steps=7)) == {"name": "fast", "overrides": {"steps": 7}}
    with pytest.raises(ValueError, match="unknown schedule"):
        scheduled("slow")


def test_a_run_off_rewrite_chains_is_never_recorded_against_a_schedule_of_trees():
    """The Bits recipe is closest to the registers schedule, whose layout and tables read trees: on
    rewrite chains it is recorded against it as ever; on programs against the default, with exactly
    the settings the command line gave."""
    bits = TrainConfig(data="elsewhere", arch="registers", moves="hard", width=32, steps=4000)
    assert schedule_of(bits) == {"name": "registers", "overrides": {"layout": "polish", "tables": "free",
                                                                    "move_readout": 0.0}}
    assert schedule_of(bits, "programs") == {"name": "default", "overrides": {"steps": 4000, "arch": "registers",
                                                                              "width": 32, "moves": "hard"}}
    assert [name for name in SCHEDULES if for_rewrite(name)] == ["registers", "tier2"]
    assert schedule_of(scheduled("fast", seed=1), "groups") == {"name": "fast", "overrides": {}}


def test_the_command_records_its_schedule_and_explicit_options_override_it(tiny, tmp_path):
    out = tmp_path / "run"
    result = CliRunner().invoke(train_tracker, ["--data", str(tiny), "--schedule", "fast", "--steps", "3",
                                                "--batch-chains", "4", "--out", str(out), "--quiet"])
    assert result.exit_code == 0, result.output
    report = json.loads((out / "report.json").read_text())
    assert report["schedule"] == {"name": "fast", "overrides": {"steps": 3, "batch_chains": 4}}
    fast = SCHEDULES["fast"]
    assert all(report["config"][k] == v for k, v in fast.items() if k not in ("steps", "batch_chains"))


def test_fit_first_checks_only_the_training_length_and_says_whether_the_run_fitted(tiny, tmp_path):
    """With until fit the checks read the training length's split alone; at threshold 0 the run
    fits at once and stops, and the report says it fitted, on chains no check read. At threshold 1
    a run too short to fit is reported as not fitted, never as judged at length."""
    config = TrainConfig(data=str(tiny), objective="plain", steps=40, batch_chains=4)
    stop = StopConfig(every=3, chains=4, patience=2, threshold=0.0, until="fit")
    report = train(config, tmp_path / "fits", show_progress=False, eval_config=EvalConfig(pair_lengths=(8,)),
                   stop=stop)
    assert report["stop"]["stopped_at_step"] == 6
    assert all(set(c["exact"]) == {"8"} for c in report["stop"]["checks"])  # the training length only
    assert report["fit"] == {"length": 8, "exact": report["exact"]["8"], "fitted": True, "checks_fitted_at_step": 3,
                             "verdict": "fitted"}
    short = replace(config, steps=3)
    never = train(short, tmp_path / "short", show_progress=False, eval_config=EvalConfig(pair_lengths=(8,)),
                  stop=replace(stop, threshold=1.0))
    assert never["fit"]["fitted"] is (never["exact"]["8"] >= 1.0)
    if not never["fit"]["fitted"]:
        assert never["fit"]["verdict"] == "did not fit: not judged at length"
    assert "fit" not in train(short, tmp_path / "plain", show_progress=False, eval_config=EvalConfig(pair_lengths=(8,)))


def test_fit_first_checks_wait_until_every_term_acts_at_full_weight(tiny, tmp_path):
    config = TrainConfig(data=str(tiny), objective="invariance", steps=12, batch_chains=4, invariance_delay=0.25,
                         invariance_ramp=0.25)
    assert config.full_weight_step() == 6 and replace(config, objective="plain").full_weight_step() == 0
    stop = StopConfig(every=2, chains=4, patience=1, threshold=0.0, until="fit")
    report = train(config, tmp_path, show_progress=False, eval_config=EvalConfig(pair_lengths=(8,)), stop=stop)
    assert [c["step"] for c in report["stop"]["checks"]] == [6] and report["steps"] == 6


def test_stop_rule_needs_every_length_for_patience_checks_in_a_row():
    rule = StopRule(StopConfig(every=5, patience=2), (8, 16))
    assert not rule.record(5, 1.0, {"8": 1.0, "16": 1.0})
    assert not rule.record(10, 2.0, {"8": 1.0, "16": 0.5})  # the streak breaks
    assert not rule.record(15, 3.0, {"8": 0.5})  # a check that stopped at the first failing length
    assert not rule.record(20, 4.0, {"8": 1.0, "16": 1.0})
    assert rule.record(25, 5.0, {"8": 1.0, "16": 0.995})
    assert rule.became_exact == {"step": 20, "seconds": 4.0, "exact": {"8": 1.0, "16": 1.0}}


def test_training_stops_once_exact_and_records_when(tiny, tmp_path):
    """At threshold 0 every check passes: the run stops at the second check, records the first as
    the moment it became exact, checkpoints there, and evaluates every split on the chains the
    checks did not read."""
    config = TrainConfig(data=str(tiny), objective="plain", steps=40, batch_chains=4)
    stop = StopConfig(every=3, chains=4, patience=2, threshold=0.0)
    report = train(config, tmp_path, show_progress=False, eval_config=EvalConfig(pair_lengths=(8,)), stop=stop)
    s = report["stop"]
    assert s["stopped_early"] and report["steps"] == s["stopped_at_step"] == 6
    assert [c["step"] for c in s["checks"]] == [3, 6] and set(s["checks"][0]["exact"]) == {"8", "16"}
    assert s["exact_at_step"] == 3 and s["exact_at_seconds"] == s["checks"][0]["seconds"] > 0
    assert s["wall_seconds"] == pytest.approx(s["train_seconds"] + s["check_seconds"], abs=0.02)
    assert set(report["exact"]) == {"8", "16"}  # the evaluation ran at every length
    # of the 8 chains per split, the checks read the last 4; the evaluation reads only the 4 others
    assert report["checks_held_apart"] == {"8": 4, "16": 4}
    assert s["unseen_chains"] == 4 and report["evaluation"]["chains"] == {"8": 4, "16": 4}
    assert s["exact_16_unseen_by_checks"] == report["exact"]["16"]
    assert report["checks_read"] == "the last 4 chains of every test split, held apart: no reported figure reads them"
    assert torch.load(tmp_path / "checkpoint.pt", weights_only=False)["step"] == 6


def test_the_checks_read_chains_held_apart_from_every_reported_figure(tiny):
    from tracker.stopping import split_for_checks

    data = load_dataset(tiny)
    for chains, held in ((3, 3), (64, 4)):  # 8 chains a split: the checks read at most half of it
        reported, checked, apart = split_for_checks(data, StopConfig(every=5, chains=chains))
        assert apart == {str(n): held for n in data.tests}
        for n, split in data.tests.items():
            assert len(checked.tests[n]["end"]) == held and len(reported.tests[n]["end"]) == 8 - held
            for key, whole in split.items():  # the reported chains first, the checks' after them: no overlap
                assert torch.equal(torch.cat([reported.tests[n][key], checked.tests[n][key]]), whole)
    reported, checked, apart = split_for_checks(data, StopConfig(every=0))
    assert set(apart.values()) == {0} and all(torch.equal(reported.tests[n]["end"], s["end"])
                                              for n, s in data.tests.items())
    one = replace(data, tests={n: {k: v[:1] for k, v in s.items()} for n, s in data.tests.items()})
    with pytest.raises(ValueError, match="the one of length 8 holds fewer"):
        split_for_checks(one, StopConfig(every=5))


def test_a_trained_runs_checks_never_read_an_evaluated_chain(tiny, tmp_path, monkeypatch):
    import tracker.train as trained

    seen = {"checked": [], "evaluated": []}
    check, evaluated = trained.check_exact, trained.evaluate

    def spy_check(model, data, chains, threshold):
        seen["checked"].append({n: s["chain_items"].clone() for n, s in data.tests.items()})
        return check(model, data, chains, threshold)

    def spy_evaluate(model, data, *args, **kwargs):
        seen["evaluated"].append({n: s["chain_items"].clone() for n, s in data.tests.items()})
        return evaluated(model, data, *args, **kwargs)

    monkeypatch.setattr(trained, "check_exact", spy_check)
    monkeypatch.setattr(trained, "evaluate", spy_evaluate)
    config = TrainConfig(data=str(tiny), objective="plain", steps=4, batch_chains=4)
    report = train(config, tmp_path, show_progress=False, eval_config=EvalConfig(pair_lengths=(8,)),
                   stop=StopConfig(every=2, chains=3))
    whole = load_dataset(tiny).tests
    assert len(seen["checked"]) == 2 and len(seen["evaluated"]) == 1
    for n, split in whole.items():
        rows = {tuple(r.tolist()) for r in split["chain_items"]}
        read = {tuple(r.tolist()) for c in seen["checked"] for r in c[n]}
        counted = {tuple(r.tolist()) for r in seen["evaluated"][0][n]}
        assert read and counted and not read & counted and read | counted == rows
    assert report["checks_held_apart"] == {"8": 3, "16": 3}


@pytest.mark.parametrize("later", [StopConfig(), StopConfig(every=2, chains=1)])
def test_a_resumed_run_holds_apart_what_its_earlier_checks_read(tiny, tmp_path, later):
    config = TrainConfig(data=str(tiny), objective="plain", steps=4, batch_chains=4)
    eval_config = EvalConfig(pair_lengths=(8,))
    train(config, tmp_path, show_progress=False, eval_config=eval_config, stop=StopConfig(every=2, chains=3))
    report = train(replace(config, steps=6), tmp_path, resume=True, show_progress=False, eval_config=eval_config,
                   stop=later)
    assert report["resumed_from_step"] == 4 and report["checks_held_apart"] == {"8": 3, "16": 3}
    assert report["evaluation"]["chains"] == {"8": 5, "16": 5}
    assert report["checks_read"].startswith("the last 3 chains of every test split")


def test_a_checked_runs_checkpoint_evaluated_again_on_the_chains_its_report_counts_repeats_it(tiny, tmp_path):
    """What reproduce_check does with a run whose checks held chains apart (``reported_chains``)."""
    from tracker.stopping import reported_chains
    from training.checkpoint import Checkpoint

    config = TrainConfig(data=str(tiny), objective="plain", steps=4, batch_chains=4)
    eval_config = EvalConfig(pair_lengths=(8,), threads=1)
    report = train(config, tmp_path, show_progress=False, eval_config=eval_config, stop=StopConfig(every=2, chains=3))
    trainer = Checkpoint.of_run(tmp_path, TrainConfig).restore(Trainer, load_dataset(tiny))
    again = evaluate(trainer.model, reported_chains(trainer.data, report), eval_config)
    assert again["chains"] == report["evaluation"]["chains"] == {"8": 5, "16": 5}
    assert (again["exact"], again["pair_distance"]) == (report["exact"], report["pair_distance"])
    whole = evaluate(trainer.model, reported_chains(trainer.data, {}), eval_config)  # a report without checks
    assert whole["chains"] == {"8": 8, "16": 8}


def test_cooldown_trains_on_at_a_falling_rate_then_stops(tiny, tmp_path, monkeypatch):
    """After the checks say stop, a cooldown of 5 steps runs at a learning rate falling linearly
    from the schedule's towards zero, with no more checks, then stops and checkpoints."""
    rates = []
    original = Trainer.train_step

    def spy(self, step, lr=None):
        rates.append(lr_at(self.config, step) if lr is None else lr)
        return original(self, step, lr)

    config = TrainConfig(data=str(tiny), objective="plain", steps=40, batch_chains=4, warmup_steps=1)
    stop = StopConfig(every=3, chains=4, patience=2, threshold=0.0, cooldown=5)
    monkeypatch.setattr(Trainer, "train_step", spy)
    report = train(config, tmp_path, show_progress=False, eval_config=EvalConfig(pair_lengths=(8,)), stop=stop)
    s = report["stop"]
    assert [c["step"] for c in s["checks"]] == [3, 6] and s["cooldown_from_step"] == 6
    assert report["steps"] == s["stopped_at_step"] == 11 and len(rates) == 11
    assert rates[:6] == [lr_at(config, t) for t in range(6)]
    assert rates[6:] == pytest.approx([lr_at(config, 6) * k / 5 for k in (5, 4, 3, 2, 1)])
    assert torch.load(tmp_path / "checkpoint.pt", weights_only=False)["step"] == 11


def test_checks_do_not_change_what_is_trained(tiny, tmp_path):
    """A check reads no batch and draws no random number: the weights after N steps are the same
    with or without checks, and with checks run at two threads beside training at one."""
    config = TrainConfig(data=str(tiny), objective="combo", steps=6, batch_chains=4)
    threads = torch.get_num_threads()
    try:
        torch.set_num_threads(1)
        train(config, tmp_path / "plain", show_progress=False, eval_config=EvalConfig(pair_lengths=(8,)))
        train(config, tmp_path / "checked", show_progress=False, eval_config=EvalConfig(pair_lengths=(8,), threads=2),
              stop=StopConfig(every=2, chains=4, patience=100))
        assert torch.get_num_threads() == 1  # the checks gave training its thread count back
    finally:
        torch.set_num_threads(threads)
    a = torch.load(tmp_path / "plain" / "checkpoint.pt", weights_only=False)["model"]
    b = torch.load(tmp_path / "checked" / "checkpoint.pt", weights_only=False)["model"]
    assert all(torch.equal(a[k], b[k]) for k in a)


def _views_padded_every_step(model, items):
    """The evaluation before it dropped the padding token slots: every step reads all E slots."""
    k_all, v_all, m_all, inverse = model._keys_values(items)
    w = model.w0.expand(items.shape[0], -1)
    for t in range(items.shape[1]):
        w = model._update(w, k_all[inverse[:, t]], v_all[inverse[:, t]], m_all[inverse[:, t]])
    return model.ln_out(w)


def test_faster_evaluation_gives_the_same_bits(tiny):
    """Dropping the padding token slots, inference mode and the thread count leave every view of
    the evaluation bit for bit as it was."""
    data = load_dataset(tiny)
    torch.manual_seed(0)
    model = build_model(ModelConfig(width=32), data.item_tokens, data.vocab.size, data.vocab.n_out, data.tree_len,
                        domain="rewrite")
    items = data.tests[16]["chain_items"].long()  # equal lengths, so no row finishes early
    with torch.no_grad():
        old = _views_padded_every_step(model, items)
    threads = torch.get_num_threads()
    try:
        for n in (1, 2):
            torch.set_num_threads(n)
            assert torch.equal(end_views(model, items, chunk=len(items)), old)
    finally:
        torch.set_num_threads(threads)
    first = evaluate(model, data, EvalConfig(pair_lengths=(8,), threads=1))
    again = evaluate(model, data, EvalConfig(pair_lengths=(8,), threads=2))
    first.pop("correct"), again.pop("correct")
    assert {k: v for k, v in first.items() if "seconds" not in k and k != "eval_threads"} == \
        {k: v for k, v in again.items() if "seconds" not in k and k != "eval_threads"}


def test_training_fit_reads_each_training_chain_to_its_end(tiny):
    """The fit is exact after the last event of each training chain, run free: with the tree table
    rewritten so that the model is right about some end trees, the fit is the fraction of
    training chains that end at one of them."""
    data = load_dataset(tiny)
    torch.manual_seed(1)
    model = build_model(ModelConfig(width=32), data.item_tokens, data.vocab.size, data.vocab.n_out, data.tree_len,
                        domain="rewrite")
    trees = data.train["chain_trees"].long()
    assert (trees >= 0).all()  # every training chain has all 8 events
    ends = trees[:, -1]
    with torch.inference_mode():
        predicted = model.readout(model.final_view(data.train["chain_items"].long())).argmax(-1)  # (N, P)
    chosen = set(ends.unique()[::2].tolist())  # the model is made right about these end trees
    for n, end in enumerate(ends.tolist()):
        if end in chosen:
            data.tree_tokens[end] = predicted[n]
    expected = sum(bool((predicted[n] == data.tree_tokens[end]).all()) for n, end in enumerate(ends.tolist()))
    fit = training_fit(model, data, EvalConfig(chunk=7))
    assert fit["length"] == 8 and 0 < expected < len(ends)
    assert fit["train"] == pytest.approx(expected / len(ends))


def test_slot_noise_perturbs_each_event_after_its_delay_and_repeats_with_the_seed(tiny):
    """The noise is off before its delay (the step's losses are those of a run without it), on
    after it (the slot after every event moves, so the losses differ), and drawn from the step's
    generator (the same seed gives the same bits)."""
    data = load_dataset(tiny)
    base = TrainConfig(data=str(tiny), objective="invariance", steps=10, batch_chains=4, invariance_delay=0.0)
    noisy = TrainConfig(**{**base.__dict__, "slot_noise": 0.5, "slot_noise_delay": 0.5})

    assert _losses_at(noisy, data, 4) == _losses_at(base, data, 4)  # step 4 < 0.5 * 10: no noise yet
    assert _losses_at(noisy, data, 5) != _losses_at(base, data, 5)
    assert _losses_at(noisy, data, 5) == _losses_at(noisy, data, 5)
    model = Trainer(noisy, data).model
    items = data.tests[16]["chain_items"].long()
    with torch.no_grad():
        clean, _ = model(items)
        moved, _ = model(items, noise=0.5, generator=torch.Generator().manual_seed(0))
    assert not torch.allclose(clean, moved)
    assert torch.equal(clean, model(items)[0])  # without noise the forward is deterministic


def test_slot_noise_is_refused_where_there_is_no_slot():
    with pytest.raises(ValueError, match="slot_noise"):
        TrainConfig(arch="transformer", slot_noise=0.1)
    with pytest.raises(ValueError, match="slot_noise"):
        TrainConfig(slot_noise=-0.1)


def test_transformer_dropout_draws_from_the_step_so_a_resumed_run_is_the_straight_one(tiny, tmp_path):
    """Dropout masks come from the step's generator: they change the step's losses, repeat with
    the seed, and a run resumed from a checkpoint ends with the straight run's weights."""
    data = load_dataset(tiny)
    config = TrainConfig(data=str(tiny), arch="transformer", objective="plain", width=32, dropout=0.3, steps=6,
                         batch_chains=4, checkpoint_every=3)

    assert _losses_at(config, data, 1) == _losses_at(config, data, 1)
    assert _losses_at(config, data, 1)["ce"] != _losses_at(replace(config, dropout=0.0), data, 1)["ce"]
    straight, resumed, _ = _straight_and_resumed(config, tmp_path, stopped_after=3)
    straight, resumed = straight["model"], resumed["model"]
    assert all(torch.equal(straight[k], resumed[k]) for k in straight)


def test_dropout_is_refused_where_there_is_no_transformer():
    with pytest.raises(ValueError, match="dropout"):
        TrainConfig(dropout=0.1)
    with pytest.raises(ValueError, match="dropout"):
        TrainConfig(arch="transformer", dropout=1.0)


def test_the_table_sharpness_term_is_the_registers_own_and_off_by_default(tiny, tmp_path):
    with pytest.raises(ValueError, match="table_sharpness"):
        TrainConfig(data=str(tiny), table_sharpness=0.1)  # the recurrence has no tables
    config = replace(scheduled("registers", data=str(tiny)), steps=3, batch_chains=4, checkpoint_every=3)
    assert config.table_sharpness == 0.0
    plain = train(config, tmp_path / "off", show_progress=False, eval_config=EvalConfig(pair_lengths=(8,)))
    sharp = train(replace(config, table_sharpness=0.5), tmp_path / "on", show_progress=False,
                  eval_config=EvalConfig(pair_lengths=(8,)))
    assert "sharpness" not in plain["final_losses"] and 0 < sharp["final_losses"]["sharpness"] <= 0.5 * 2.78


def test_the_move_readout_is_the_hard_registers_own_and_reported(tiny, tmp_path):
    config = replace(scheduled("registers", data=str(tiny)), steps=3, batch_chains=4, checkpoint_every=3)
    with pytest.raises(ValueError, match="move_readout"):
        replace(config, moves="soft", move_readout=1.0)  # soft moves read their mixtures already
    report = train(replace(config, move_readout=1.0), tmp_path, show_progress=False,
                   eval_config=EvalConfig(pair_lengths=(8,)))
    assert report["config"]["move_readout"] == 1.0 and report["final_losses"]["moves"] > 0


def test_the_default_evaluation_reads_every_test_chain_without_a_warning(tiny, tmp_path):
    args = ["--data", str(tiny), "--steps", "2", "--batch-chains", "4", "--threads", "1", "--quiet"]
    result = CliRunner().invoke(train_tracker, [*args, "--out", str(tmp_path / "all")])
    assert result.exit_code == 0, result.output
    assert "warning" not in result.stderr
    report = json.loads((tmp_path / "all" / "report.json").read_text())
    assert report["eval_config"]["max_chains"] == 8  # what the dataset holds a split
    assert report["eval_config"]["fit_chains"] == 512  # the training fit reads what it read before
    assert report["evaluation"]["chains"] == {"8": 8, "16": 8} and "fewer_chains_than_asked" not in report["evaluation"]
    more = CliRunner().invoke(train_tracker, [*args, "--eval-chains", "20", "--out", str(tmp_path / "more")])
    assert more.exit_code == 0, more.output
    assert ("warning: 20 held-out chains per length asked for, the dataset holds fewer (8 at length 8, 8 at length "
            "16)") in more.stderr

"""The judge of the registered tracker comparison: a prediction is decided only when the runs it
ranges over are in, and each verdict follows from the measured numbers."""
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks import harness

ROOT = Path(__file__).resolve().parents[1]
comparison = harness.comparison("tracker")


def benchmark(module: str, *args: str, cwd: Path = ROOT) -> subprocess.CompletedProcess:
    """``python -m benchmarks.<module> args`` run from ``cwd`` with this checkout's code."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    return subprocess.run([sys.executable, "-m", f"benchmarks.{module}", *args], cwd=cwd, env=env,
                          capture_output=True, text=True)


def arm_of(report: dict) -> str:
    """The registered arm whose settings made ``report`` (the arms below are told apart by arch and objective)."""
    return next(arm for arm in comparison.registered
                if (comparison.config(arm, 0).arch, comparison.config(arm, 0).objective)
                == (report["arch"], report["objective"]))


def report(arm: str, seed: int, exact: dict[int, float], growth: float = 1.0) -> dict:
    config = comparison.config(arm, seed)
    return {"arch": config.arch, "objective": config.objective, "seed": seed,
            "config": {"fixed_norm": config.fixed_norm},
            "exact": {str(k): v for k, v in exact.items()}, "pair_growth": growth}


EXACT_EVERYWHERE = {8: 1.0, 256: 1.0, 1024: 1.0, 4096: 1.0}


def full_batch(plain_256: float = 1.0) -> list[dict]:
    runs = []
    for arm in comparison.registered:
        for seed in comparison.arms[arm]:
            exact = dict(EXACT_EVERYWHERE)
            if arm == "plain":
                exact[256] = plain_256
            if arm in ("transformer", "control"):
                exact = {8: 1.0, 256: 0.0, 1024: 0.0, 4096: 0.0}
            # growth that ranks the drift exactly: the drifting runs grow, the exact ones do not
            growth = 2.0 - exact[256]
            runs.append(report(arm, seed, exact, growth))
    return runs


def verdicts(runs: list[dict]) -> dict[str, str]:
    return {p["id"]: p["verdict"] for p in comparison.judge(runs)}


def test_the_full_batch_is_judged_on_every_prediction():
    v = verdicts(full_batch())
    assert v == {"combo_exact_long": "pass", "plain_drifts": "fail", "transformer_fails": "pass",
                 "control_not_better": "pass", "growth_predicts_drift": "pass"}


def test_a_plain_seed_that_drifts_passes_its_prediction_even_before_the_other_seeds():
    runs = [r for r in full_batch(plain_256=0.5) if not (r["objective"] == "plain" and r["seed"] > 0)]
    assert verdicts(runs)["plain_drifts"] == "pass"


@pytest.mark.parametrize("missing", ["combo", "plain", "control", "metric"])
def test_a_missing_run_leaves_the_predictions_over_it_untested(missing):
    runs = [r for r in full_batch() if not (arm_of(r) == missing and r["seed"] == 0)]
    v = verdicts(runs)
    assert v["growth_predicts_drift"] == "untested"  # it ranges over every recurrence run
    if missing == "combo":
        assert v["combo_exact_long"] == "untested"
    if missing in ("plain", "control"):
        assert v["control_not_better"] == "untested"


def test_runs_outside_the_registered_batch_are_not_judged():
    runs = full_batch() + [report("plain-free", 0, {8: 1.0, 256: 0.0, 1024: 0.0, 4096: 0.0}, growth=0.5)]
    assert verdicts(runs) == verdicts(full_batch())


# ---- the registered comparison on the hard domains -----------------------------------------------

hard = harness.comparison("tracker-hard")
DOMAINS, MANY_CHAINS, RECIPE = hard.settings["domains"], hard.settings["many_chains"], hard.settings["recipe"]


def hard_batch(plain_256: dict[str, float]) -> list[dict]:
    """Every registered run of both domains: combo exact, DeltaProduct lost, plain at the given
    exact@256 per domain; the partner distance grows with the drift."""
    runs = []
    for job, seeds in hard.arms.items():
        domain, arm = job.split("/")
        for seed in seeds:
            at_256 = {"combo": 1.0, "plain": plain_256[domain], "deltaproduct": 0.1, "transformer": 0.0}[arm]
            runs.append({"domain": domain, "arm": arm, "seed": seed, "arch": hard.config(job, seed).arch,
                         "exact": {"8": 1.0, "256": at_256}, "pair_growth": 2.0 - at_256 + seed * 1e-3})
    return runs


def hard_verdicts(runs: list[dict]) -> dict[str, str]:
    return {p["id"]: p["verdict"] for p in hard.judge(runs)}


def test_the_hard_batch_is_judged_per_domain():
    v = hard_verdicts(hard_batch({"tier2": 0.5, "atoms5": 1.0}))
    assert v == {"combo_exact_256[tier2]": "pass", "plain_drifts[tier2]": "pass", "transformer_fails[tier2]": "pass",
                 "combo_exact_256[atoms5]": "pass", "plain_drifts[atoms5]": "fail", "transformer_fails[atoms5]": "pass",
                 "growth_predicts_drift": "pass"}


def test_a_combo_seed_below_the_bar_fails_its_domain_only():
    runs = hard_batch({"tier2": 0.5, "atoms5": 0.5})
    next(r for r in runs if r["domain"] == "atoms5" and r["arm"] == "combo")["exact"]["256"] = 0.98
    v = hard_verdicts(runs)
    assert v["combo_exact_256[atoms5]"] == "fail" and v["combo_exact_256[tier2]"] == "pass"


def test_one_combo_seed_below_the_bar_fails_before_the_other_seeds_are_in():
    runs = [r for r in hard_batch({"tier2": 0.5, "atoms5": 0.5}) if r["seed"] == 0]
    next(r for r in runs if r["domain"] == "atoms5" and r["arm"] == "combo")["exact"]["256"] = 0.77
    v = hard_verdicts(runs)
    assert v["combo_exact_256[atoms5]"] == "fail" and v["combo_exact_256[tier2]"] == "untested"


def test_missing_hard_runs_leave_their_predictions_untested():
    runs = [r for r in hard_batch({"tier2": 1.0, "atoms5": 1.0}) if not (r["domain"] == "tier2" and r["seed"] == 2)]
    v = hard_verdicts(runs)
    assert v["combo_exact_256[tier2]"] == "untested" and v["plain_drifts[tier2]"] == "untested"
    assert v["combo_exact_256[atoms5]"] == "pass" and v["growth_predicts_drift"] == "untested"


def test_a_transformer_at_or_above_half_fails_its_prediction():
    runs = hard_batch({"tier2": 0.5, "atoms5": 0.5})
    next(r for r in runs if r["domain"] == "tier2" and r["arm"] == "transformer")["exact"]["256"] = 0.5
    assert hard_verdicts(runs)["transformer_fails[tier2]"] == "fail"


def test_the_hard_arms_train_the_registered_recipe():
    for job, seed in (("tier2/combo", 1), ("atoms5/plain", 0), ("tier2/deltaproduct", 0), ("tier2/transformer", 0)):
        config = hard.config(job, seed)
        domain, arm = job.split("/")
        assert config.data == (MANY_CHAINS if arm == "transformer" else DOMAINS)[domain]
        assert config.seed == seed
        assert config.steps == RECIPE["steps"]
        if config.arch == "recurrence":
            assert all(getattr(config, k) == v for k, v in RECIPE.items())


def collected_jobs(tmp_path: Path, *args: str) -> list[tuple[str, int]]:
    """The jobs a collection of the hard batch goes through, in its order (each one it finds not run)."""
    done = benchmark("tracker_hard", "--collect", *args, "--runs", str(tmp_path / "runs"),
                     "--out", str(tmp_path / "hard.json"))
    assert done.returncode == 0, done.stderr
    return [(job, int(seed)) for job, seed in re.findall(r"^== (\S+) seed (\d+): not run", done.stderr, re.M)]


def test_the_hard_jobs_run_seed_major(tmp_path):
    jobs = collected_jobs(tmp_path, "--domains", "tier2,atoms5", "--arms", "combo,transformer")
    assert jobs == [("tier2/combo", 0), ("tier2/transformer", 0), ("atoms5/combo", 0), ("atoms5/transformer", 0),
                    ("tier2/combo", 1), ("atoms5/combo", 1), ("tier2/combo", 2), ("atoms5/combo", 2)]
    assert collected_jobs(tmp_path, "--domains", "atoms5", "--arms", "plain", "--seeds", "2") == [("atoms5/plain", 2)]


def test_collecting_a_part_of_the_hard_batch_keeps_the_whole_batch_recorded(tmp_path):
    # a fresh checkout: no run directories, the runs only in the results file
    template = json.loads((ROOT / hard.results).read_text())["runs"][0]

    def recorded(job: str, seed: int) -> dict:  # a real report of the batch, relabelled
        domain, arm = job.split("/")
        config = json.loads(json.dumps(hard.config(job, seed).__dict__))
        return {**template, "domain": domain, "arm": arm, "seed": seed, "arch": config["arch"], "config": config}

    out = tmp_path / "hard.json"
    runs = [recorded("atoms5/plain", 0), recorded("tier2/combo", 1)]
    out.write_text(json.dumps({"runs": runs}))
    result = benchmark("tracker_hard", "--collect", "--domains", "atoms5", "--arms", "plain", "--seeds", "0",
                       "--runs", str(tmp_path / "runs"), "--out", str(out))
    assert result.returncode == 0, result.stderr
    written = json.loads(out.read_text())
    assert [(r["domain"], r["arm"], r["seed"]) for r in written["runs"]] == [("atoms5", "plain", 0),
                                                                              ("tier2", "combo", 1)]
    assert {"arm": "tier2/plain", "seed": 2} in written["missing"] and len(written["missing"]) == 14


# ---- the time-to-exact record ------------------------------------------------------------------


def test_a_run_under_another_stop_rule_or_dataset_is_kept_beside_the_old_row(tmp_path):
    def row(patience, cooldown, dataset="d1", exact=1.0):
        return {"candidate": "fast", "seed": 3, "machine": "m", "dataset_id": dataset, "exact_at_longest": exact,
                "stop": {"every": 250, "chains": 64, "patience": patience, "threshold": 0.99, "cooldown": cooldown}}

    path = tmp_path / "tte.json"
    harness.merge_timed_runs([row(1, 250), row(2, 0)], path, 0.99)
    harness.merge_timed_runs([row(2, 250), row(1, 250, dataset="d2")], path, 0.99)
    assert len(json.loads(path.read_text())["runs"]) == 4
    harness.merge_timed_runs([row(2, 250, exact=0.5)], path, 0.99)  # the same run again replaces its row
    runs = json.loads(path.read_text())["runs"]
    assert len(runs) == 4 and [r["exact_at_longest"] for r in runs if r["stop"]["patience"] == 2
                                 and r["stop"]["cooldown"] == 250] == [0.5]


# the finished-or-trained helper every batch shares
from training import grid  # noqa: E402
from tracker.train import TrainConfig  # noqa: E402


def test_a_finished_run_is_reused_only_with_exactly_its_settings(tmp_path):
    config = TrainConfig(steps=7, seed=3)
    stored = {k: v for k, v in json.loads(json.dumps(config.__dict__)).items() if k != "ticks"}  # an older report
    (tmp_path / "report.json").write_text(json.dumps({"config": stored, "exact": {"8": 1.0}}))
    assert grid.finished_report(config, tmp_path)["exact"] == {"8": 1.0}  # ticks missing = at its default
    assert grid.finished_report(TrainConfig(steps=8, seed=3), tmp_path) is None
    assert grid.finished_report(TrainConfig(steps=7, seed=3, ticks=2), tmp_path) is None
    assert grid.finished_report(config, tmp_path / "elsewhere") is None


def test_an_unfinished_run_is_trained_and_resumed_only_from_its_own_checkpoint(tmp_path, monkeypatch):
    config, calls = TrainConfig(steps=7), []

    def fake_train(cfg, out, resume, show_progress, **options):
        calls.append((cfg, resume, show_progress, options))
        return {"trained": True}

    assert grid.finished_or_trained(config, tmp_path, fake_train, lambda blob: blob, quiet=True, threads=None,
                                     eval_config="E") == {"trained": True}
    assert calls[-1] == (config, False, False, {"eval_config": "E"})  # no checkpoint: a fresh run
    (tmp_path / "checkpoint.pt").write_bytes(b"x")
    monkeypatch.setattr(grid, "load_checkpoint", lambda path: config)
    grid.finished_or_trained(config, tmp_path, fake_train, lambda blob: blob, quiet=False, threads=None)
    assert calls[-1][1] is True  # the checkpoint holds these settings: resumed
    monkeypatch.setattr(grid, "load_checkpoint", lambda path: TrainConfig(steps=9))
    grid.finished_or_trained(config, tmp_path, fake_train, lambda blob: blob, quiet=False, threads=None)
    assert calls[-1][1] is False  # another run's checkpoint: trained afresh


def test_a_fresh_run_is_trained_from_step_0_whatever_its_directory_holds(tmp_path, monkeypatch):
    """A timing benchmark's runs (RunSpec(fresh=True) through a harness Plan) are trained again, never
    found finished nor resumed; any other run is found finished."""
    from functools import partial

    import tracker.grid

    config, calls = TrainConfig(steps=7, seed=3), []

    def fake_train(cfg, out, show_progress, **options):
        calls.append(options)
        return {"trained": True}

    (tmp_path / "run").mkdir()
    (tmp_path / "run" / "report.json").write_text(json.dumps({"config": json.loads(json.dumps(config.__dict__))}))
    (tmp_path / "run" / "checkpoint.pt").write_bytes(b"x")
    assert grid.finished_or_trained(config, tmp_path / "run", fake_train, lambda blob: blob, quiet=True,
                                     threads=None, fresh=True) == {"trained": True}
    assert "resume" not in calls[-1]  # from step 0 (train refuses to replace a run of other settings)
    monkeypatch.setattr(tracker.grid, "train", fake_train)
    for fresh, trained in ((True, True), (False, False)):
        plan = harness.Plan(lambda arm, seed: config, lambda arm, seed: tmp_path / arm,
                            partial(tracker.grid.RunSpec, fresh=fresh))
        assert plan.run("run", 3, quiet=True, threads=None).get("trained", False) is trained
    assert len(calls) == 2


def test_a_command_resumes_only_where_its_own_work_was_cut_short(tmp_path):
    """``harness.launch``: the command into its --out, with --resume where the state it names is there."""
    from training.checkpoint import CHECKPOINT

    seen, out = tmp_path / "argv.json", tmp_path / "run"
    command = [sys.executable, "-c", "import json, sys; json.dump(sys.argv[2:], open(sys.argv[1], 'w'))", str(seen)]
    harness.launch(command, out)
    assert json.loads(seen.read_text()) == ["--out", str(out)]
    out.mkdir()
    (out / CHECKPOINT).write_bytes(b"x")
    harness.launch(command, out)
    assert json.loads(seen.read_text()) == ["--out", str(out), "--resume"]
    harness.launch(command, out, state="stream-state.pt")  # another kind of work: its own saved state decides
    assert json.loads(seen.read_text()) == ["--out", str(out)]
    with pytest.raises(subprocess.CalledProcessError):
        harness.launch([sys.executable, "-c", "raise SystemExit(3)"], out)


def test_a_run_recorded_in_the_results_counts_as_finished_without_its_directory(tmp_path):
    # a fresh checkout has results/*.json but not the runs directory that produced them
    config = TrainConfig(steps=7, seed=3)
    results = tmp_path / "results.json"
    assert harness.recorded_runs(results) == []
    harness.write_results(results, {"runs": [{"config": json.loads(json.dumps(TrainConfig(steps=7, seed=4).__dict__)),
                                            "exact": {"8": 0.5}},
                                           {"config": json.loads(json.dumps(config.__dict__)), "exact": {"8": 1.0}}]})
    recorded = harness.recorded_runs(results)
    assert grid.finished_report(config, tmp_path / "gone", recorded)["exact"] == {"8": 1.0}
    assert grid.finished_report(TrainConfig(steps=7, seed=5), tmp_path / "gone", recorded) is None
    (tmp_path / "run").mkdir()  # the run's own report, where there is one, comes first
    (tmp_path / "run" / "report.json").write_text(json.dumps({"config": recorded[1]["config"], "exact": {"8": 0.25}}))
    assert grid.finished_report(config, tmp_path / "run", recorded)["exact"] == {"8": 0.25}


def test_a_batch_trains_only_the_jobs_not_finished(tmp_path):
    trained = []

    def train_one(name, seed, quiet, threads):
        trained.append((name, seed))
        return {"name": name, "seed": seed, "trained": True}

    def finished(name, seed):
        return {"name": name, "seed": seed, "trained": False} if seed == 0 else None

    jobs = [("a", 0), ("a", 1), ("b", 0)]
    reports, missing = harness.run_batch(jobs, train_one, finished, str, workers=1, collect=False, quiet=True)
    assert trained == [("a", 1)] and missing == []
    assert [(r["name"], r["seed"], r["trained"]) for r in reports] == [("a", 0, False), ("a", 1, True), ("b", 0, False)]
    reports, missing = harness.run_batch(jobs, train_one, finished, str, workers=1, collect=True, quiet=True)
    assert trained == [("a", 1)] and missing == [{"arm": "a", "seed": 1}] and len(reports) == 2


def test_unfinished_runs_are_carried_to_a_fresh_checkout_and_finished_ones_dropped(tmp_path):
    def carry_command(command: str, *args: Path) -> tuple[list[str], list[str]]:
        """``python -m benchmarks.in_flight COMMAND``: the paths it names first, and those it names second."""
        flags = {"save": ("--runs", "--carry"), "restore": ("--carry", "--runs")}[command]
        done = benchmark("in_flight", command, flags[0], str(args[0]), flags[1], str(args[1]))
        assert done.returncode == 0, done.stderr
        first, second = {"save": ("saved ", "dropped "), "restore": ("restored ", "kept the local ")}[command]
        lines = done.stdout.splitlines()
        return ([line.removeprefix(first) for line in lines if line.startswith(first)],
                [line.removeprefix(second).removesuffix(" (finished)") for line in lines if line.startswith(second)])

    runs, carry, fresh = tmp_path / "runs", tmp_path / "in-flight", tmp_path / "fresh-runs"
    for name, finished in (("a/combo-s2", False), ("a/plain-s0", True), ("b/dp-s0", False)):
        (runs / name).mkdir(parents=True)
        (runs / name / "checkpoint.pt").write_bytes(name.encode())
        if finished:
            (runs / name / "report.json").write_text("{}")
    saved, dropped = carry_command("save", runs, carry)
    assert saved == ["a/combo-s2/checkpoint.pt", "b/dp-s0/checkpoint.pt"] and dropped == []
    (fresh / "b/dp-s0").mkdir(parents=True)
    (fresh / "b/dp-s0/checkpoint.pt").write_bytes(b"newer")  # a local checkpoint is never overwritten
    restored, kept = carry_command("restore", carry, fresh)
    assert restored == ["a/combo-s2/checkpoint.pt"] and kept == ["b/dp-s0/checkpoint.pt"]
    assert (fresh / "a/combo-s2/checkpoint.pt").read_bytes() == b"a/combo-s2"
    assert (fresh / "b/dp-s0/checkpoint.pt").read_bytes() == b"newer"
    (runs / "a/combo-s2/report.json").write_text("{}")  # finished since: its carried copy goes
    saved, dropped = carry_command("save", runs, carry)
    assert saved == ["b/dp-s0/checkpoint.pt"] and dropped == ["a/combo-s2/checkpoint.pt"]
    assert sorted(str(p.relative_to(carry)) for p in carry.rglob("*.pt")) == ["b/dp-s0/checkpoint.pt"]


def test_collecting_a_part_keeps_every_recorded_run(tmp_path):
    """--collect of some arms rewrites the results with the runs of the others kept: a recorded run
    is never dropped from a results file because this call did not ask for its arm."""
    import subprocess
    import sys

    out = tmp_path / "tracker.json"
    recorded = json.loads((ROOT / "results" / "tracker.json").read_text())
    out.write_text(json.dumps(recorded))
    done = subprocess.run([sys.executable, "-m", "benchmarks.tracker_comparison", "--collect", "--arms", "combo",
                           "--out", str(out), "--runs", str(tmp_path / "runs"), "--quiet"],
                          cwd=ROOT, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr[-2000:]
    kept = json.loads(out.read_text())["runs"]
    assert sorted(map(json.dumps, kept)) == sorted(map(json.dumps, recorded["runs"]))

"""The studies whose runs train outside a Plan (a million events, what the exact state is, soft
checkers) declare themselves in the harness: their arms train what their recipes say, each seed
lives apart, and their judges give the verdicts their results record."""
import json
import os
from dataclasses import fields, replace
import subprocess
import sys
from pathlib import Path

import pytest

from benchmarks.harness import comparison
from tracker.config import TrainConfig
from tracker.schedules import parse_settings, scheduled

ROOT = Path(__file__).resolve().parents[1]
TRACKER = comparison("tracker")
MILLION, MECHANISM, SOFT = comparison("tracker-million"), comparison("tracker-mechanism"), comparison("tracker-soft")
SOFT_SEED = comparison("tracker-soft-seed")
SOFT_WORDS = {"pass": "held", "fail": "failed", "untested": "open"}  # the soft grid's results word its verdicts so


@pytest.mark.parametrize("name", ["tracker-million", "tracker-mechanism", "tracker-soft", "tracker-soft-seed"])
def test_the_declared_judge_gives_the_verdicts_the_results_record(name):
    declared = comparison(name)
    recorded = json.loads((ROOT / declared.results).read_text())
    runs = recorded["runs"]
    judged = declared.judge(list(runs.values()) if isinstance(runs, dict) else runs)
    if declared in (SOFT, SOFT_SEED):
        judged = [{**p, "verdict": SOFT_WORDS[p["verdict"]]} for p in judged]
    assert judged == recorded["predictions"]


def test_the_million_arms_are_the_fast_schedule_and_the_comparisons_recipes():
    assert MILLION.config("fast", 3) == scheduled("fast", seed=3, data=MILLION.settings["data"])
    assert MILLION.config("demo", 0) == MILLION.config("fast", 0)
    for arm in ("combo", "plain"):  # retrained from the registered comparison's recipe
        assert MILLION.config(arm, 2) == TRACKER.config(arm, 2)
    assert MILLION.settings["lengths"]["plain"] == (256, 65_536)


def test_the_demo_run_is_the_make_run_tracker_and_every_other_run_lives_under_the_runs():
    runs = Path("elsewhere")
    assert MILLION.run_dir("demo", 0, runs) == Path("runs/demo-fast")
    assert MILLION.run_dir("demo", 1, runs) == runs / "demo-s1"
    assert MILLION.run_dir("fast", 2, runs) == runs / "fast-s2"
    # trained once for the tracker comparison, the mechanism study and the million
    assert MILLION.run_dir("combo", 2, runs) == TRACKER.run_dir("combo", 2, Path(TRACKER.runs))
    assert MILLION.config("plain", 1) == TRACKER.config("plain", 1)


def evaluation(arm: str, seed: int, exact: float, cpu_minutes: float = 20.0, steps: int = 1_048_576) -> dict:
    return {"arm": arm, "seed": seed, "exact": {"65536": exact, str(steps): exact}, "steps": steps, "chains": 64,
            "torch_threads": 1, "minutes": cpu_minutes, "cpu_seconds": cpu_minutes * 60}


def million_verdicts(rows: list[dict]) -> dict[str, str]:
    return {p["id"]: p["verdict"] for p in MILLION.judge(rows)}


def test_the_million_judge_waits_for_every_named_seed_and_reads_the_cpu_minutes():
    six = [evaluation("fast", s, 1.0) for s in range(6)]
    assert million_verdicts(six) == {"fast_exact_million": "untested", "combo_exact_million": "untested",
                                     "plain_not_exact": "untested", "throughput": "fail"}
    assert million_verdicts(six + [evaluation("fast", 6, 0.98)])["fast_exact_million"] == "fail"
    assert million_verdicts(six + [evaluation("fast", 6, 0.99, cpu_minutes=15.0)]) == {
        "fast_exact_million": "pass", "combo_exact_million": "untested", "plain_not_exact": "untested",
        "throughput": "pass"}
    plain = [evaluation("plain", s, 0.5, steps=65_536) for s in range(3)]
    assert million_verdicts(plain) == {"fast_exact_million": "untested", "combo_exact_million": "untested",
                                       "plain_not_exact": "pass", "throughput": "untested"}


def test_the_mechanism_analyses_the_comparisons_arms_where_it_trains_them():
    assert MECHANISM.arms == TRACKER.arms and MECHANISM.runs == TRACKER.runs
    assert MECHANISM.run_dir("combo", 1, Path("r")) == TRACKER.run_dir("combo", 1, Path("r"))
    assert MECHANISM.config("plain", 0) == TRACKER.config("plain", 0)


def summary(arm: str | None, run: str, pc95: int, purity: float = 1.0, pure: int = 960) -> dict:
    return {"arm": arm, "run": run, "trees": 960, "pure_clusters": pure, "purity_at_trees": purity, "pc95": pc95,
            "affine_r2": 0.96, "permutation": 0.02, "permutation_two": 0.03, "fitted": 0.15, "rotation": 0.2}


def test_the_mechanism_judge_names_each_analysis_by_its_run_and_judges_only_the_arms():
    judged = {p["id"]: p for p in MECHANISM.judge([
        summary("combo", "runs/comparison/recurrence-combo-s0", 20),
        summary("combo", "runs/comparison/recurrence-combo-s1", 23),
        summary(None, "runs/demo-fast", 90, purity=0.5, pure=3)])}
    assert judged["combo_dimension"]["measured"] == {"recurrence-combo-s0": 20, "recurrence-combo-s1": 23}
    assert judged["combo_dimension"]["verdict"] == "fail"
    assert {judged[k]["verdict"] for k in ("combo_pure_clusters", "combo_affine", "combo_permutation",
                                           "combo_not_one_map")} == {"pass"}
    assert {judged[k]["verdict"] for k in ("plain_dimension", "plain_no_pure_clusters")} == {"untested"}


def test_the_soft_cells_train_the_fast_schedule_on_their_own_datasets():
    assert SOFT.config("far-0.2", 1) == scheduled("fast", seed=1, data=str(Path(SOFT.settings["data"]) / "far-0.2"))
    assert SOFT.run_dir("near-0.05", 1, Path("r")) == Path("r/near-0.05-s1")
    assert SOFT.settings["cells"]["clean"] is None and SOFT.settings["cells"]["far-0.01"] == {"kind": "far",
                                                                                             "share": 0.01}


def test_the_seed_recipe_is_the_comparisons_combination_on_the_cells_that_decide():
    for cell in ("near-0.05", "far-0.01", "clean"):
        data = str(Path(SOFT.settings["data"]) / cell)
        assert SOFT_SEED.config(cell, 1) == replace(TRACKER.config("combo", 1), data=data)
    assert tuple(SOFT_SEED.arms) == ("near-0.05", "far-0.01", "clean") and SOFT_SEED.registered == tuple(SOFT_SEED.arms)
    # its runs and results apart from the fast grid's
    assert SOFT_SEED.run_dir("clean", 0, Path(SOFT_SEED.runs)) == Path(SOFT.runs) / "seed-recipe" / "clean-s0"
    assert SOFT_SEED.results != SOFT.results


def test_the_seed_recipes_judge_decides_each_cell_once_both_seeds_are_in():
    rows = [soft_row("near-0.05", s, 1.0, 0.5) for s in (0, 1)] + [soft_row("far-0.01", 0, 0.995, 0.5)]
    judged = {p["id"]: p for p in SOFT_SEED.judge(rows)}
    assert {k: p["verdict"] for k, p in judged.items()} == {
        "seed_near_absorbed": "pass", "seed_far_1pct_hurts": "untested", "seed_clean_exact": "untested"}
    rows += [soft_row("far-0.01", 1, 0.98, 0.5), soft_row("clean", 0, 1.0, 0.5), soft_row("clean", 1, 0.97, 0.5)]
    judged = {p["id"]: p for p in SOFT_SEED.judge(rows)}
    assert {k: p["verdict"] for k, p in judged.items()} == {
        "seed_near_absorbed": "pass", "seed_far_1pct_hurts": "pass", "seed_clean_exact": "fail"}
    assert judged["seed_far_1pct_hurts"]["measured"] == {"far-0.01": [0.995, 0.98]}


def soft_row(cell: str, seed: int, exact: float, unrelated: float) -> dict:
    return {"cell": cell, "seed": seed, "exact": {"256": exact, "4096": exact}, "unrelated_distance": unrelated}


def test_the_soft_judge_decides_a_prediction_once_its_cells_are_in():
    rows = [soft_row("clean", s, 1.0, 0.5) for s in (0, 1)] + [soft_row("near-0.2", s, 1.0, 0.1) for s in (0, 1)]
    judged = {p["id"]: p["verdict"] for p in SOFT.judge(rows)}
    assert judged == {"near_absorbed": "untested", "far_1pct_hurts": "untested", "far_20pct_fails": "untested",
                      "far_shrinks_more": "untested"}
    rows += [soft_row("near-0.05", s, 0.995, 0.2) for s in (0, 1)] + [soft_row("far-0.2", 0, 0.4, 0.02),
                                                                      soft_row("far-0.2", 1, 0.97, 0.2)]
    judged = {p["id"]: p for p in SOFT.judge(rows)}
    assert {k: p["verdict"] for k, p in judged.items()} == {
        "near_absorbed": "pass", "far_1pct_hurts": "untested", "far_20pct_fails": "pass", "far_shrinks_more": "fail"}
    assert judged["far_shrinks_more"]["measured"] == {"far-0.2": [25.0, 2.5], "near-0.2": [5.0, 5.0]}


def test_the_soft_collection_words_its_verdicts_as_before(tmp_path):
    # one finished run with its spread measured: collected, judged, nothing trained or certified
    run = tmp_path / "runs" / "clean-s0"
    run.mkdir(parents=True)
    report = {"steps": 4000, "exact": {"256": 1.0, "4096": 1.0}, "pair_distance": {}, "pair_growth": 1.0,
              "unrelated_distance": 0.5, "seconds": 1.0, "dataset": {}, "lean": "v", "package_version": "p",
              "torch_threads": 1}
    (run / "report.json").write_text(json.dumps(report))
    (run / "spread.json").write_text(json.dumps({"participation_ratio": 9.0, "spread": 0.9, "chains": 512}))
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    done = subprocess.run([sys.executable, "-m", "benchmarks.tracker_soft", "--collect", "--runs", "runs", "--data",
                           "data", "--out", "soft.json"], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    results = json.loads((tmp_path / "soft.json").read_text())
    assert [p["verdict"] for p in results["predictions"]] == ["open"] * 4
    assert results["schedule"] == "fast" and results["cells"] == SOFT.settings["cells"]
    assert [r["cell"] for r in results["runs"]] == ["clean"] and "clean-s0" not in results["missing"]
    assert len(results["missing"]) == 9


def test_a_recipe_is_timed_with_its_settings_over_the_schedule():
    # the beyond batch's readout arm is the registers schedule itself; its hard-moves arm is the schedule
    # with the speed benchmark's --set options giving the free tables it ran with
    changed = parse_settings(["tables=free", "move_readout=0"])
    assert changed == {"tables": "free", "move_readout": 0.0}
    for arm_name, timed in (("tier2-registers-readout", scheduled("registers")),
                            ("tier2-registers", scheduled("registers", **changed))):
        arm = comparison("tracker-beyond").config(arm_name, 0)
        assert arm[-2:] == ["--seed", "0"] and "--schedule" not in arm
        named = [option.removeprefix("--").replace("-", "_") for option in arm[:-2:2]]
        for setting, value in zip(named, arm[1:-2:2]):  # every option of the arm, its settings spelled out
            assert str(getattr(timed, setting)) == value
        # and every setting where the recipe departs from the defaults is one of them
        departs = {f.name for f in fields(timed) if getattr(timed, f.name) != getattr(TrainConfig(), f.name)}
        assert departs <= set(named), arm_name
    with pytest.raises(ValueError, match="not SETTING=VALUE"):
        parse_settings(["no_such_setting=1"])
    done = subprocess.run([sys.executable, "-m", "benchmarks.tracker_speed", "--set", "moves=hard", "--set", "bogus"],
                          cwd=ROOT, capture_output=True, text=True)
    assert done.returncode != 0 and done.stderr.strip().splitlines() == [
        "tracker_speed: 'bogus': not SETTING=VALUE with a training setting's name"]

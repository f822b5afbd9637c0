"""The tier-2 batch: its arms run the tier2 schedule, and its judge reads the registered bars."""
from benchmarks.harness import comparison
from tracker.schedules import SCHEDULES, schedule_of

TIER2 = comparison("tracker-tier2")
BATCH_DATA, DOMAINS, judge, batch_config = (TIER2.settings["data"], TIER2.settings["domains"], TIER2.judge,
                                            TIER2.config)


def report(arm, seed, exact, growth=1.0):
    return {"arm": arm, "seed": seed, "domain": DOMAINS[arm], "exact": exact, "pair_growth": growth}


def test_every_arm_trains_the_tier2_schedule_on_its_domain():
    for arm, seeds in TIER2.arms.items():
        config = batch_config(arm, seeds[0], None)
        assert config.data == BATCH_DATA[DOMAINS[arm]] and config.layout == "paths" and config.ce_positions == "tree"
        assert config.steps == SCHEDULES["tier2"]["steps"] == 24_000
        assert schedule_of(config)["name"] == "tier2"
    assert batch_config("combo", 1, 30).steps == 30


def test_the_judge_fails_on_the_first_seed_below_the_bar_and_waits_for_the_rest():
    exact = {"256": 1.0, "1024": 1.0, "4096": 0.995}
    verdicts = {p["id"]: p["verdict"] for p in judge([report("combo", 0, exact)])}
    assert verdicts["combo_exact_256"] == "untested" and verdicts["plain_drifts"] == "untested"
    reports = [report("combo", s, exact, s) for s in (0, 1)] + [report("combo", 2, {**exact, "4096": 0.9}, 2)]
    reports += [report("plain", s, {"256": 0.97 - 0.1 * s}, 5 + s) for s in (0, 1, 2)]
    verdicts = {p["id"]: p["verdict"] for p in judge(reports)}
    assert verdicts["combo_exact_256"] == "pass" and verdicts["combo_exact_long"] == "fail"
    assert verdicts["plain_drifts"] == "pass" and verdicts["growth_predicts_drift"] == "pass"
    assert verdicts["atoms5_exact_256"] == "untested"


def test_every_diagnosis_run_names_a_validation_dataset():
    datasets, diagnosis = TIER2.settings["datasets"], TIER2.settings["diagnosis"]
    assert all(dataset in datasets for dataset, _ in diagnosis.values())


def test_the_50k_chain_arm_is_judged_against_the_first_parts_combination_seed_by_seed():
    first = [report("combo", s, {"256": 0.95, "1024": 0.9, "4096": 0.83}) for s in (0, 1, 2)]
    more = [report("c50k-combo", s, {"256": 0.995, "1024": 0.99, "4096": 0.85 - 0.01 * s}) for s in (0, 1)]
    verdicts = {p["id"]: p for p in judge(first + more)}
    assert verdicts["c50k_exact_256"]["verdict"] == "untested"  # two of three seeds in, both above the bar
    assert verdicts["c50k_beats_5k"]["verdict"] == "untested" and verdicts["c50k_beats_5k"]["measured"][1] == [0.84, 0.83]
    last = report("c50k-combo", 2, {"256": 0.99, "1024": 0.99, "4096": 0.83})  # no better than seed 2 of the first part
    verdicts = {p["id"]: p["verdict"] for p in judge(first + more + [last])}
    assert verdicts["c50k_exact_256"] == "pass" and verdicts["c50k_exact_long"] == "fail"
    assert verdicts["c50k_beats_5k"] == "fail"
    assert BATCH_DATA[DOMAINS["c50k-combo"]] == "data/tier2-a4-w64-c50k"

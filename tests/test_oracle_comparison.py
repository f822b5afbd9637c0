"""The judge of the registered oracle comparison: a prediction is decided only when the runs it
ranges over are in, and each verdict follows from the measured numbers."""
from benchmarks import harness

comparison, gate = harness.comparison("oracle-initial"), harness.comparison("oracle-gate")

LENGTHS = (8, 16, 64, 256, 1024, 4096)
BANDS = ("1", "2-3", "4-6", "7-12", "13-64", "65+")


def report(arm: str, seed: int, accuracy: float = 1.0, hard: dict | None = None, guard: float = 0.9) -> dict:
    config = comparison.config(arm, seed)
    arch, objective = config.arch, config.objective
    hard = hard or {}
    return {"arch": arch, "objective": objective, "seed": seed, "steps": 1,
            "accuracy": {str(n): accuracy for n in LENGTHS}, "all_right": {str(n): float(accuracy == 1.0)
                                                                           for n in LENGTHS},
            "pooled": {"hard": {b: {"balanced": hard.get(b, 0.9)} for b in BANDS},
                       "guard": {"rejected_rejected": guard}},
            "pair_distance": {}, "unrelated_distance": {}, "steps_per_second": 1.0}


def full_batch(**overrides) -> list[dict]:
    """Every registered run, numbers that pass every prediction unless overridden per arm."""
    defaults = {"combo": {"hard": {"1": 1.0, "4-6": 1.0, "7-12": 1.0}},
                "plain": {"hard": {"1": 1.0, "4-6": 0.8}},
                "transformer": {"accuracy": 0.7, "hard": {"1": 0.8, "4-6": 0.6, "7-12": 0.6}},
                "blind": {"accuracy": 0.6, "hard": {"1": 0.6}},
                "truth": {},
                "control": {"accuracy": 0.58}}
    defaults.update(overrides)
    return [report(arm, seed, **defaults[arm]) for arm, seeds in comparison.arms.items() for seed in seeds]


def verdicts(runs: list[dict]) -> dict[str, str]:
    return {p["id"]: p["verdict"] for p in comparison.judge(runs)}


def test_every_prediction_passes_on_numbers_that_meet_it():
    assert set(verdicts(full_batch()).values()) == {"pass"}


def test_nothing_is_decided_without_the_runs_it_ranges_over():
    assert set(verdicts([]).values()) == {"untested"}
    one_seed = [r for r in full_batch() if r["seed"] == 0]
    assert set(verdicts(one_seed).values()) == {"untested"}


def test_each_prediction_fails_on_numbers_that_break_it():
    assert verdicts(full_batch(combo={"accuracy": 0.9999, "hard": {"1": 1.0}}))["combo_exact_short"] == "fail"
    assert verdicts(full_batch(control={"accuracy": 0.95}))["control_fails"] == "fail"
    assert verdicts(full_batch(blind={"hard": {"1": 0.95}}))["tracking_exists"] == "fail"
    # the combination loses more than half of what the plain recurrence loses from depth 1 to 4-6
    broken = full_batch(combo={"hard": {"1": 1.0, "4-6": 0.85, "7-12": 1.0}})
    assert verdicts(broken)["exactness_carries"] == "fail"
    # or is within 5 points of the transformer at 7-12
    close = full_batch(transformer={"hard": {"1": 0.8, "4-6": 0.6, "7-12": 0.97}})
    assert verdicts(close)["exactness_carries"] == "fail"
    runs = full_batch()
    runs[0]["pooled"]["guard"]["rejected_rejected"] = 0.4  # combo seed 0
    assert verdicts(runs)["prover_guard"] == "fail"


def gate_report(arm: str, seed: int, exact: bool = True, recall_head: float = 0.5, unrelated: float = 0.2,
                accuracy: float = 1.0) -> dict:
    config = gate.config(arm, seed)
    arch, objective = config.arch, config.objective
    ok = float(exact)
    v = 5
    diagonal = [[100 if i == j else (0 if exact else 1) for j in range(v)] for i in range(v)]
    figures = {"all_right": {str(n): ok for n in LENGTHS}, "accuracy": {str(n): accuracy for n in LENGTHS},
               "confusion": diagonal, "by_verdict": {"complete": 1.0 if exact else 0.4}}
    return {"arch": arch, "objective": objective, "seed": seed, "steps": 1,
            "accuracy": {str(n): accuracy for n in LENGTHS}, "all_right": {str(n): 0.0 for n in LENGTHS},
            "binary": {"binary_all_right": {str(n): ok for n in LENGTHS},
                       "binary_accuracy": {str(n): 1.0 for n in LENGTHS}},
            "head": {"by_verdict": {"complete": recall_head}, "confusion": diagonal},
            "comparison": figures if arch != "transformer" and arch != "blind" else None,
            "pooled": {"hard": {b: {"balanced": 1.0 if arch != "blind" else 0.6} for b in BANDS},
                       "guard": {"rejected_rejected": 0.9}},
            "pair_distance": {}, "unrelated_distance": {str(n): unrelated for n in LENGTHS}, "steps_per_second": 1.0}


def test_the_gate_batch_is_judged_only_on_its_runs_and_by_its_numbers():
    runs = [gate_report(arm, seed, accuracy=0.5 if arm == "control" else 1.0)
            for arm, seeds in gate.arms.items() for seed in seeds]
    got = {p["id"]: p["verdict"] for p in gate.judge(runs)}
    assert set(got) == set(gate.predictions)
    assert set(got.values()) == {"pass"}
    assert {p["verdict"] for p in gate.judge(runs[:1])} == {"untested"}
    collapsed = [gate_report(a, s, unrelated=0.05 if a == "chosen" else 0.2, exact=a != "chosen",
                             accuracy=0.5 if a == "control" else 1.0)
                 for a, seeds in gate.arms.items() for s in seeds]
    got = {p["id"]: p["verdict"] for p in gate.judge(collapsed)}
    assert got["chosen_no_collapse"] == got["chosen_exact_short"] == got["compare_beats_head"] == "fail"
    assert got["truth_compare_pooled"] == "pass"
    assert "| chosen | 0 |" in gate.table(runs, gate.judge(runs))


def test_a_batch_run_in_parts_is_judged_on_every_part_found():
    """Training one arm (say the truth arm) must not drop the arms finished before it from the
    judged reports: the batch is judged on every arm and seed found finished."""
    finished = {("chosen", 0): {"arm": "chosen", "seed": 0}, ("chosen", 1): {"arm": "chosen", "seed": 1},
                ("truth", 1): {"arm": "truth", "seed": 1}}
    jobs = [(arm, seed) for arm, seeds in gate.arms.items() for seed in seeds]
    reports, missing = harness.whole_batch(jobs, lambda a, s: finished.get((a, s)))
    assert reports == [finished["chosen", 0], finished["chosen", 1], finished["truth", 1]]
    assert {"arm": "truth", "seed": 0} in missing and {"arm": "chosen", "seed": 0} not in missing
    assert len(reports) + len(missing) == len(gate.arms) * len(gate.arms["chosen"])

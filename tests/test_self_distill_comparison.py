"""The registered comparison of self-distillation: every arm trains its registered recipe (the arms of
one family differ by their objective only; the Bits arms reuse the programs comparison's runs), and
the judge decides each prediction as soon as its runs do."""
from dataclasses import asdict
from pathlib import Path

from benchmarks.harness import comparison
from stepwise.config import StepwiseConfig
from tracker.config import TrainConfig

STUDY = comparison("self-distill")
PROGRAMS = comparison("programs")
SEEDS, LENGTHS = STUDY.arms["stepwise"], STUDY.settings["lengths"]


def report(arm: str, seed: int, exact: float = 1.0) -> dict:
    return {"arm": arm, "seed": seed, "steps": 10, "exact": {n: exact for n in LENGTHS}}


def verdicts(reports: list[dict]) -> dict[str, str]:
    return {p["id"]: p["verdict"] for p in STUDY.judge(reports)}


def differing(a, b) -> set[str]:
    x, y = asdict(a), asdict(b)
    return {k for k in x if x[k] != y[k]}


def test_the_arms_of_a_family_differ_by_their_objective_only():
    for family, arms in {"stepwise": ("stepwise-distill", "stepwise-control", "stepwise-labelled"),
                         "rewrite-plain-free": ("rewrite-invariance-free", "rewrite-distill-free"),
                         "bits-plain": ("bits-invariance", "bits-distill")}.items():
        for arm in arms:
            assert differing(STUDY.config(family, 1), STUDY.config(arm, 1)) == {"objective"}, arm
    assert not STUDY.config("rewrite-plain-free", 0).fixed_norm


def test_the_bits_arms_reuse_the_programs_comparisons_runs(tmp_path):
    for arm, theirs in (("bits-plain", "plain"), ("bits-invariance", "invariance")):
        assert STUDY.config(arm, 2) == PROGRAMS.config(theirs, 2)
        assert STUDY.run_dir(arm, 2, tmp_path) == PROGRAMS.run_dir(theirs, 2, Path(PROGRAMS.runs))
    assert STUDY.run_dir("bits-distill", 2, tmp_path) == tmp_path / "bits-distill-s2"
    assert isinstance(STUDY.config("stepwise-distill", 0), StepwiseConfig)
    assert isinstance(STUDY.config("rewrite-distill-free", 0), TrainConfig)
    assert STUDY.config("bits-distill", 0).data == PROGRAMS.config("plain", 0).data


def test_the_judge_decides_each_prediction_as_soon_as_the_runs_decide_it():
    assert set(verdicts([]).values()) == {"untested"}
    got = verdicts([report("stepwise", 0, 0.3), report("stepwise-distill", 0, 0.5)])
    assert got["distill_exact_256"] == "fail" and got["seed_arm_drifts"] == "untested"
    arms = {"stepwise": 0.2, "stepwise-distill": 1.0, "stepwise-control": 0.22, "stepwise-labelled": 1.0}
    got = verdicts([report(arm, s, v) for arm, v in arms.items() for s in SEEDS])
    assert {k: got[k] for k in ("seed_arm_drifts", "distill_exact_256", "distill_helps", "control_does_not_help",
                                "ceiling_above", "distill_beyond_rounds")} == dict.fromkeys(
        ("seed_arm_drifts", "distill_exact_256", "distill_helps", "control_does_not_help", "ceiling_above",
         "distill_beyond_rounds"), "pass")
    arms["stepwise-control"] = 0.26  # more than 0.05 above the seed's arm: the control helped
    got = verdicts([report(arm, s, v) for arm, v in arms.items() for s in SEEDS])
    assert got["control_does_not_help"] == "fail"
    slot = [report(a, s, v) for a, v in (("bits-invariance", 0.2), ("bits-distill", 0.2)) for s in SEEDS]
    assert verdicts(slot)["state_term_over_output_term_bits"] == "fail"  # equal is not above

"""The completion batch: its arm is the gate's recipe with the completion term, and its judge
reads the registered bars (failed by the first seed below one, untested while a seed is missing)."""
from pathlib import Path

from benchmarks.oracle_comparison import gate_base
from benchmarks.oracle_completion import RECIPE, completion_config, judge, run_dir


def report(seed, all_right=1.0, recall=1.0, unrelated=0.5, binary=1.0):
    lengths = ("8", "16", "64", "256", "1024", "4096")
    return {"seed": seed, "unrelated_distance": {n: unrelated for n in lengths},
            "comparison": {"all_right": {n: all_right for n in lengths}, "by_verdict": {"complete": recall}},
            "binary": {"binary_all_right": {n: binary for n in lengths}}}


def test_the_arm_is_the_gate_recipe_with_the_completion_term():
    base = gate_base(Path("data/tier1-a4"))
    config = completion_config(1, base)
    assert config.seed == 1 and config.arch == "recurrence" and config.objective == "nerode"
    assert config.metric_pairs == 1 and config.completion_margin == RECIPE["completion_margin"] > 0
    assert config.metric_delay == config.invariance_delay == 0.5
    assert (config.steps, config.validation, config.invariance_delay) == (base.steps, base.validation,
                                                                         base.invariance_delay)
    assert run_dir(0, Path("runs")) == Path("runs/oracle-recurrence-nerode-s0")


def test_the_judge_waits_for_both_seeds_and_fails_on_the_first_below_its_bar():
    verdicts = {p["id"]: p["verdict"] for p in judge([report(0)])}
    assert set(verdicts.values()) == {"untested"}
    verdicts = {p["id"]: p["verdict"] for p in judge([report(0), report(1)])}
    assert set(verdicts.values()) == {"pass"}
    verdicts = {p["id"]: p["verdict"] for p in judge([report(0, recall=0.98, unrelated=0.1)])}
    assert verdicts["completion_recall"] == verdicts["completion_no_collapse"] == "fail"
    assert verdicts["completion_exact_short"] == "untested"
    verdicts = {p["id"]: p["verdict"] for p in judge([report(0), report(1, all_right=0.99, binary=0.5)])}
    assert verdicts["completion_exact_short"] == verdicts["completion_binary_kept"] == "fail"

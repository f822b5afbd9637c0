"""The judge of the registered tracker comparison: a prediction is decided only when the runs it
ranges over are in, and each verdict follows from the measured numbers."""
import importlib.util
from pathlib import Path

import pytest

_path = Path(__file__).resolve().parents[1] / "benchmarks" / "tracker_comparison.py"
_spec = importlib.util.spec_from_file_location("tracker_comparison", _path)
comparison = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(comparison)


def report(arm: str, seed: int, exact: dict[int, float], growth: float = 1.0) -> dict:
    arch, objective, _, fixed_norm = comparison.ARMS[arm]
    return {"arch": arch, "objective": objective, "seed": seed, "config": {"fixed_norm": fixed_norm},
            "exact": {str(k): v for k, v in exact.items()}, "pair_growth": growth}


EXACT_EVERYWHERE = {8: 1.0, 256: 1.0, 1024: 1.0, 4096: 1.0}


def full_batch(plain_256: float = 1.0) -> list[dict]:
    runs = []
    for arm in comparison.REGISTERED:
        for seed in comparison.ARMS[arm][2]:
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
    runs = [r for r in full_batch() if not (comparison._arm_of(r) == missing and r["seed"] == 0)]
    v = verdicts(runs)
    assert v["growth_predicts_drift"] == "untested"  # it ranges over every recurrence run
    if missing == "combo":
        assert v["combo_exact_long"] == "untested"
    if missing in ("plain", "control"):
        assert v["control_not_better"] == "untested"


def test_runs_outside_the_registered_batch_are_not_judged():
    runs = full_batch() + [report("plain-free", 0, {8: 1.0, 256: 0.0, 1024: 0.0, 4096: 0.0}, growth=0.5)]
    assert verdicts(runs) == verdicts(full_batch())

"""The registered second programs round: every arm trains on fresh certified programs with fit-first
checks, and the judge reads a run that did not fit as not judged at length."""
from tracker.config import TrainConfig

from benchmarks.harness import comparison

LEARNED = comparison("programs-learned")
SEEDS = LEARNED.arms["invariance"]
LENGTHS = LEARNED.settings["lengths"]


def report(arm: str, seed: int, exact: float = 1.0, fit: float | None = None) -> dict:
    """A finished run's report as the judge reads it: ``exact`` at every length, fitted at ``fit``
    (``exact`` when not given) on held-out programs of the training length."""
    fit = exact if fit is None else fit
    return {"arm": arm, "seed": seed, "steps": 10, "exact": {n: exact for n in LENGTHS},
            "fit": {"length": 16, "exact": fit, "fitted": fit >= 0.99}}


def verdicts(reports: list[dict]) -> dict[str, str]:
    return {p["id"]: p["verdict"] for p in LEARNED.judge(reports)}


def test_every_arm_trains_on_fresh_certified_programs_from_seeds_no_earlier_run_used():
    assert set(SEEDS).isdisjoint({0, 1, 2})
    assert LEARNED.settings["stop"].until == "fit"
    for arm in LEARNED.arms:
        config = LEARNED.config(arm, SEEDS[0])
        assert isinstance(config, TrainConfig) and config.stream == "fresh" and config.uniform_share == 0.25
        assert config.seed == SEEDS[0]


def test_a_run_that_did_not_fit_is_not_judged_at_length():
    assert set(verdicts([]).values()) == {"untested"}
    # exact at every length on paper, but it never fitted: it counts as not exact at 256
    unfit = [report("invariance", s, 1.0, fit=0.5) for s in SEEDS]
    got = verdicts(unfit)
    assert got["term_256"] == "fail" and got["slot_1024"] == "fail" and got["every_arm_fits"] == "fail"
    got = verdicts([report("invariance", s) for s in SEEDS] + [report("combo", s) for s in SEEDS])
    assert got["term_256"] == "pass" and got["slot_1024"] == "pass" and got["factorial_signal"] == "pass"


def test_the_transformer_fits_at_the_fair_figure_and_its_length_is_read_as_it_fares():
    fitted_but_drifting = [report("transformer", s, 0.2, fit=0.985) for s in SEEDS]
    got = verdicts(fitted_but_drifting)
    assert got["transformer_fails_256"] == "pass"
    per_part = {p["id"]: p for p in LEARNED.judge(fitted_but_drifting)}["every_arm_fits"]["measured"]
    assert all(v == 0.985 for v in per_part["transformer fit"].values())
    assert verdicts([report("plain", s, 1.0) for s in SEEDS])["factorial_ordinary"] == "fail"

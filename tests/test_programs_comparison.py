"""The registered comparison on programs: every kind of arm trains on a certified dataset of its
machine with its registered settings, and the judge reads reports as its predictions are written."""
from dataclasses import replace
from pathlib import Path

import pytest

from benchmarks.harness import comparison
from chains.programs.dataset import ProgramsSpec
from chains.programs.syntax import Machine
from leanbridge.asker import AskConfig
from leanbridge.certify_programs import certify_programs
from tracker.grid import RunSpec

PROGRAMS = comparison("programs")
SETTINGS = PROGRAMS.settings
SEEDS, LENGTHS, FACTORIAL = PROGRAMS.arms["registers"], SETTINGS["lengths"], SETTINGS["factorial"]


def report(arm: str, seed: int, exact: float = 1.0, **more) -> dict:
    """A finished run's report as the judge reads it: ``exact`` at every length."""
    return {"arm": arm, "seed": seed, "steps": 10, "exact": {n: exact for n in LENGTHS},
            "in_distribution": {"train": exact}, "pair_growth": None, **more}


def verdicts(reports: list[dict]) -> dict[str, str]:
    return {p["id"]: p["verdict"] for p in PROGRAMS.judge(reports)}


def test_the_judge_decides_each_prediction_as_soon_as_the_runs_decide_it():
    assert set(verdicts([]).values()) == {"untested"}
    # two exact invariance seeds of three pass "at least 2 of 3"; one failing plain seed fails "3 of 3"
    got = verdicts([report("invariance", 0), report("invariance", 1), report("plain", 0, 0.1),
                    report("plain", 1, 1.0)])
    assert got["term_exact_256"] == "pass" and got["plain_fails_256"] == "fail"
    # two failing invariance seeds rule out "2 of 3"; the registers need every seed at both lengths
    got = verdicts([report("invariance", 0, 0.5), report("invariance", 2, 0.9), report("registers", 0),
                    report("registers", 1)])
    assert got["term_exact_256"] == "fail" and got["registers_bits"] == "untested"
    assert verdicts([report("registers", s) for s in SEEDS])["registers_bits"] == "pass"
    lost = report("registers", 2)
    lost["exact"]["4096"] = 0.98
    assert verdicts([report("registers", 0), report("registers", 1), lost])["registers_bits"] == "fail"


def test_the_factorial_and_the_unseen_ends_read_their_own_figures():
    fixed = [report(a, s, 0.9) for a in FACTORIAL for s in SEEDS]
    free = [report(f"{a}-free", s, 0.5) for a in FACTORIAL for s in SEEDS]
    assert verdicts(fixed + free)["factorial_norm"] == "pass"
    for seed in (0, 1):  # plain free, mean (1.0 + 1.0 + 0.5) / 3: below plain fixed's 0.9
        free[seed]["exact"]["1024"] = 1.0
    assert verdicts(fixed + free)["factorial_norm"] == "pass"
    free[2]["exact"]["1024"] = 1.0  # now 1.0 above 0.9
    assert verdicts(fixed + free)["factorial_norm"] == "fail"
    unseen = {"by_end_seen": {"1024": {"seen": {"exact": 1.0, "chains": 0}, "unseen": {"exact": 0.5, "chains": 9}}}}
    runs = [report("arithmetic-registers", s, beyond=unseen) for s in SEEDS]
    got = verdicts(runs)
    assert got["registers_arithmetic"] == "pass" and got["unseen_ends"] == "fail"


def test_the_growth_prediction_waits_for_every_slot_run():
    runs = [report(arm, s, 1.0 - 0.01 * k, pair_growth=1.0 + k)
            for k, (arm, s) in enumerate((a, s) for a in SETTINGS["slot_arms"] for s in SEEDS)]
    assert verdicts(runs[:-1])["growth_predicts_drift"] == "untested"
    assert verdicts(runs)["growth_predicts_drift"] == "pass"


def test_every_arm_runs_its_registered_settings_on_its_own_machine():
    datasets = SETTINGS["datasets"]
    for arm, settings in SETTINGS["arms"].items():
        assert PROGRAMS.arms[arm] == SEEDS, arm
        config = PROGRAMS.config(arm, 1)
        assert config.data == str(Path(SETTINGS["data"]) / settings["dataset"]) and config.seed == 1
        assert all(getattr(config, k) == v for k, v in settings.items() if k != "dataset"), arm
        assert arm.startswith("arithmetic") == ("--values" in datasets[settings["dataset"]]), arm
    free = {arm for arm, settings in SETTINGS["arms"].items() if not settings.get("fixed_norm", True)}
    assert free == {f"{a}-free" for a in ("plain", "invariance", "nextlat", "combo", "control", "metric")}


@pytest.fixture(scope="module")
def machines(tmp_path_factory):
    """A tiny certified dataset of each machine, named as the batch names its datasets."""
    root = tmp_path_factory.mktemp("programs-batch")
    for name, options in SETTINGS["datasets"].items():
        values = int(options[options.index("--values") + 1]) if "--values" in options else 2
        spec = ProgramsSpec(machine=Machine(values), chains=16, partners=1, test_lengths=(16, 40), test_chains=4)
        certify_programs(spec, root / name, root / "store.sqlite", AskConfig())
    return root


@pytest.mark.parametrize("arm", ("registers", "arithmetic-registers", "metric-free", "control", "transformer2x",
                                 "deltaproduct"))
def test_each_kind_of_arm_trains_and_reads_its_programs_free(machines, arm, one_thread):
    """Its registered settings, a few steps at a small width, on a tiny dataset of its machine;
    evaluated as the batch evaluates (the slot's RMS where it has one)."""
    config = PROGRAMS.config(arm, 0)
    small = replace(config, data=str(machines / Path(config.data).name), steps=4, batch_chains=4, checkpoint_every=4,
                    warmup_steps=1, width=8 if config.arch == "registers" else 16)
    got = RunSpec(small, str(machines / "runs" / arm), replace(SETTINGS["eval"], max_chains=4)).run("cpu", True, 1)
    assert set(got["exact"]) == {"16", "40"} and got["in_distribution"]["length"] <= 16
    rms = got["evaluation"]["state_rms"]
    assert bool(rms) == (config.arch == "recurrence")
    if config.arch == "recurrence" and config.fixed_norm:
        assert all(abs(v - 1) < 1e-4 for v in rms.values())

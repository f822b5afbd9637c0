"""``certify --domain programs --preset small``: the documented sizes, options given beside it
overriding them, the defaults' dataset unchanged without it, and the preset refused where it
means nothing."""
from __future__ import annotations

import json
import shlex
from pathlib import Path

import click
import pytest

from chains.programs.dataset import PRESETS, ProgramsSpec
from leanbridge.cli import main as certify
from leanbridge.cli import programs_spec
from conftest import run_certify

ROOT = Path(__file__).resolve().parent.parent


def resolved(*args: str) -> ProgramsSpec:
    """The programs spec the certify command makes of ``args``, certifying nothing."""
    with certify.make_context("certify", ["--domain", "programs", *args]) as ctx:
        given = {name for name in ctx.params
                 if ctx.get_parameter_source(name) is not click.core.ParameterSource.DEFAULT}
        return programs_spec(ctx.params, given)


def test_the_small_preset_has_the_documented_sizes():
    assert PRESETS["small"] == {"chains": 500, "test_lengths": (16, 64, 256), "test_chains": 32}
    assert resolved("--preset", "small") == ProgramsSpec(chains=500, test_lengths=(16, 64, 256), test_chains=32)


def test_without_a_preset_the_defaults_are_unchanged():
    """The spec decides every byte of a dataset (its programs are a pure function of it)."""
    assert resolved() == ProgramsSpec()
    assert resolved("--seed", "3") == ProgramsSpec(seed=3)


@pytest.mark.parametrize("args, expected", [
    (["--chains", "40"], {"chains": 40, "test_lengths": (16, 64, 256), "test_chains": 32}),
    (["--test-lengths", "16,1024"], {"chains": 500, "test_lengths": (16, 1024), "test_chains": 32}),
    (["--test-chains", "128", "--values", "16"], {"chains": 500, "test_lengths": (16, 64, 256), "test_chains": 128}),
    (["--chains", "5000"], {"chains": 5000, "test_lengths": (16, 64, 256), "test_chains": 32}),  # the default typed
])
def test_an_option_given_beside_the_preset_overrides_it(args, expected):
    spec = resolved("--preset", "small", *args)
    assert {name: getattr(spec, name) for name in expected} == expected


def test_a_preset_dataset_is_written_where_its_name_says(tmp_path, store, monkeypatch):
    monkeypatch.chdir(tmp_path)
    code, output = run_certify(["--domain", "programs", "--preset", "small", "--chains", "6", "--test-chains", "2",
                                "--partners", "1", "--store", str(store)])
    assert code == 0, output
    manifest = json.loads((tmp_path / "data" / "programs-bits-small" / "manifest.json").read_text())
    assert (manifest["chains"], manifest["test_chains"], manifest["test_lengths"]) == (6, 2, [16, 64, 256])
    assert manifest["failed"] == 0 and set(manifest["floor"]) == {"test-16", "test-64", "test-256"}


@pytest.mark.parametrize("args, message", [
    (["--preset", "small"], "--preset goes with --domain programs"),
    (["--domain", "groups", "--preset", "small"], "--preset goes with --domain programs"),
    (["--domain", "programs", "--preset", "large"], "Invalid value for '--preset'"),
    (["--domain", "programs", "--preset", "small", "--verify", "x"], "--verify re-checks one as it is"),
])
def test_the_preset_is_refused_where_it_means_nothing(args, message, tmp_path):
    code, output = run_certify([*args, "--out", str(tmp_path / "d")])
    assert code == 2 and message in output, output


def test_make_demo_programs_runs_on_a_tiny_budget(tmp_path, store, monkeypatch, one_thread):
    """The Makefile's demo-programs recipe, command by command, with tiny sizes appended (a command
    takes the last of a repeated option): the dataset it certifies and the run it trains on it."""
    from click.testing import CliRunner

    from tracker.cli import main as train_tracker

    lines = (ROOT / "Makefile").read_text(encoding="utf-8").splitlines()
    start = lines.index("demo-programs: $(STAMP)")
    recipe = []
    for line in lines[start + 1:]:
        if not line.startswith("\t"):
            break
        if not line.strip().startswith("@"):  # the timing lines; a guard keeping a finished run: the command after it
            recipe.append(shlex.split(line.strip().rpartition("||")[2]))
    assert [Path(argv[0]).name for argv in recipe] == ["certify", "train-tracker"]
    tiny = {"certify": ["--chains", "6", "--test-chains", "2", "--partners", "1", "--store", str(store)],
            "train-tracker": ["--steps", "20", "--checkpoint-every", "20", "--check-every", "0", "--eval-chains", "2",
                              "--batch-chains", "4", "--warmup-steps", "5", "--quiet"]}
    commands = {"certify": certify, "train-tracker": train_tracker}
    monkeypatch.chdir(tmp_path)
    for argv in recipe:
        name = Path(argv[0]).name
        result = CliRunner().invoke(commands[name], [*argv[1:], *tiny[name]])
        assert result.exit_code == 0, f"{shlex.join(argv)}: {result.output[-2000:]}"
    report = json.loads((tmp_path / "runs" / "demo-programs" / "report.json").read_text())
    assert report["arch"] == "registers" and set(report["exact"]) == {"16", "64", "256"}

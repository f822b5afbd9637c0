"""A bad option is one line, as every other fault of the commands: ``Error: <reason>`` on stderr
and exit status 2, without click's usage text and "Try --help" hint; for every console command
the distribution installs, an unknown option and a bad value of a known one."""
from __future__ import annotations

import importlib
import subprocess
import sys
import tomllib
from pathlib import Path

import click
import pytest
from click.testing import CliRunner

ROOT = Path(__file__).resolve().parent.parent
SCRIPTS = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]["scripts"]
# per command: arguments with one bad value, and the words its one line must hold
BAD_VALUE = {
    "certify": (["--atoms", "9"], "'--atoms': 9 is not in the range 2<=x<=6"),
    "train-tracker": (["--steps", "0"], "'--steps': 0 is not in the range x>=1"),
    "prove": (["--budget-calls", "0"], "'--budget-calls': 0 is not in the range x>=1"),
    "train-oracle": (["--steps", "0"], "'--steps': 0 is not in the range x>=1"),
    "evaluate-tracker": (["run", "--chains", "0"], "'--chains': 0 is not in the range x>=1"),
    "analyse-tracker": (["run", "--grid", "1"], "'--grid': 1 is not in the range x>=2"),
    "train-stepwise": (["--eval-chains", "zero"], "'--eval-chains': 'zero' is not a valid integer"),
}


def command(name: str) -> click.Command:
    module, _, attribute = SCRIPTS[name].partition(":")
    return getattr(importlib.import_module(module), attribute)


def test_every_console_command_has_a_bad_value_here():
    assert set(BAD_VALUE) == set(SCRIPTS)


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_an_unknown_option_is_one_line(name):
    result = CliRunner().invoke(command(name), ["--steos", "3"])
    assert result.exit_code == 2
    assert result.stdout == ""
    assert result.stderr.splitlines() == [result.stderr.strip()]
    assert result.stderr.startswith("Error: No such option '--steos'")


@pytest.mark.parametrize("name", sorted(SCRIPTS))
def test_a_bad_value_is_one_line(name):
    args, reason = BAD_VALUE[name]
    result = CliRunner().invoke(command(name), args)
    assert result.exit_code == 2, result.output
    assert result.stdout == ""
    assert len(result.stderr.splitlines()) == 1 and result.stderr.startswith("Error: Invalid value for ")
    assert reason in result.stderr


def test_a_combination_the_command_refuses_is_one_line_too(tmp_path):
    # each value is in range; the settings together are refused inside the command (a usage error)
    out = tmp_path / "run"
    result = CliRunner().invoke(command("train-stepwise"), ["--width", "30", "--heads", "4", "--out", str(out)])
    assert result.exit_code == 2 and result.stdout == "", result.output
    assert result.stderr.splitlines() == ["Error: width (30) must be >= 8 and a multiple of heads (4); depth >= 1"]
    assert not out.exists()
    twice = CliRunner().invoke(command("train-tracker"), ["--set", "steps=3"])  # a refused --set: one line as well
    assert twice.exit_code == 2 and len(twice.stderr.splitlines()) == 1 and twice.stderr.startswith("Error: ")


def test_the_installed_command_prints_the_one_line_on_stderr():
    run = subprocess.run([sys.executable, "-c", "from tracker.cli import main; main()", "--steos", "3"],
                         capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert run.returncode == 2
    assert run.stdout == "" and len(run.stderr.splitlines()) == 1 and run.stderr.startswith("Error: No such option '--steos'")
    assert "--steps" in run.stderr

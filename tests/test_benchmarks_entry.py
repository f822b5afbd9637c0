"""The one entry point over every benchmark script: each script is catalogued, listed, runnable by
its name, and only a registered comparison is collected."""
from __future__ import annotations

from pathlib import Path

import pytest
from click.testing import CliRunner

from benchmarks.__main__ import main
from benchmarks.catalog import CATALOG, KINDS, entry

BENCHMARKS = Path(__file__).resolve().parent.parent / "benchmarks"
NOT_SCRIPTS = {"__main__", "catalog", "harness"}  # the entry point and what the scripts share


def test_every_script_is_catalogued_once() -> None:
    scripts = {p.stem for p in BENCHMARKS.glob("*.py")} - NOT_SCRIPTS
    modules = [e.module for e in CATALOG.values()]
    assert sorted(modules) == sorted(scripts)
    assert {e.kind for e in CATALOG.values()} <= set(KINDS)


def test_list_names_every_script_with_its_kind() -> None:
    result = CliRunner().invoke(main, ["list"])
    assert result.exit_code == 0, result.output
    rows = {line.split()[0]: line.split()[1] for line in result.output.splitlines()}
    assert rows == {name: e.kind for name, e in CATALOG.items()}
    timing = CliRunner().invoke(main, ["list", "--kind", "timing"]).output.splitlines()
    assert {line.split()[0] for line in timing} == {n for n, e in CATALOG.items() if e.kind == "timing"}


def test_a_script_is_named_by_its_catalogue_name_or_its_module() -> None:
    assert entry("programs") == entry("programs_comparison")
    with pytest.raises(KeyError, match="python -m benchmarks list"):
        entry("no-such-benchmark")


@pytest.mark.parametrize("name", ["programs", "tracker-beyond", "reproduce-check"])
def test_run_hands_the_options_to_the_script(name: str) -> None:
    result = CliRunner().invoke(main, ["run", name, "--help"])
    assert result.exit_code == 0, result.output
    assert f"benchmarks.{CATALOG[name].module}" in result.output


def test_collect_takes_only_a_registered_comparison() -> None:
    result = CliRunner().invoke(main, ["collect", "grid"])
    assert result.exit_code == 2
    assert "not a registered comparison" in result.output
    unknown = CliRunner().invoke(main, ["run", "nosuch"])
    assert unknown.exit_code == 2 and "no benchmark 'nosuch'" in unknown.output

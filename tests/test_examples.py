"""Every Python example of the README and the docs runs as written, from what the README's
commands leave behind. The recipes of ``make run`` and ``make demo-oracle`` are read from the
Makefile and run here, command by command, through the commands themselves, with tiny sizes
appended (a command takes the last of a repeated option), in a scratch directory that then holds
what they would hold (``data/tier1-a4``, ``runs/demo-fast``, ``data/tier1-a4-probes``,
``runs/demo-oracle``, ...); every fenced ``python`` block is executed there."""
from __future__ import annotations

import importlib.util
import re
import shlex
from pathlib import Path

import pytest
from click.testing import CliRunner

from leanbridge.cli import main as certify
from oracle.cli import main as train_oracle
from prover.cli import main as prove
from tracker.cli import main as train_tracker

ROOT = Path(__file__).resolve().parent.parent
COMMANDS = {"certify": certify, "train-tracker": train_tracker, "train-oracle": train_oracle, "prove": prove}
TARGETS = ("run", "demo-oracle")  # the README's commands whose outputs the examples read
# Appended to each command of those recipes: the same command on a tiny budget.
TINY = {
    "certify": ["--chains", "40", "--test-chains", "8", "--test-lengths", "8,16", "--probe-chains", "4"],
    "train-tracker": ["--steps", "30", "--width", "32", "--batch-chains", "4", "--warmup-steps", "5",
                      "--checkpoint-every", "30", "--check-every", "0", "--eval-chains", "8", "--quiet"],
    "train-oracle": ["--steps", "30", "--width", "32", "--probe-width", "16", "--batch-chains", "4",
                     "--warmup-steps", "5", "--checkpoint-every", "30", "--quiet"],
    "prove": ["--problems", "2", "--distances", "1,2"],
}
IMPORTED = re.compile(r"^(?:from|import) (\w+)", re.MULTILINE)
FENCE = re.compile(r"^```python[^\n]*\n(.*?)^```", re.DOTALL | re.MULTILINE)


def recipe(target: str) -> list[list[str]]:
    """The command lines of a Makefile target's recipe, as argument lists (each guarded command's
    command itself)."""
    lines = (ROOT / "Makefile").read_text(encoding="utf-8").splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"{target}:"))
    commands = []
    for line in lines[start + 1:]:
        if not line.startswith("\t"):
            break
        # a guard that keeps a finished run (`test -f <run>/report.json || train-...`): the command after it
        commands.append(shlex.split(line.strip().rpartition("||")[2]))
    return commands


def examples() -> list[tuple[str, int, str]]:
    """(page, index, code) of every fenced python block of the README and the docs."""
    pages = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
    return [(page.relative_to(ROOT).as_posix(), i, code)
            for page in pages for i, code in enumerate(FENCE.findall(page.read_text(encoding="utf-8")))]


def test_the_recipes_are_read():
    run, demo = recipe("run"), recipe("demo-oracle")
    assert [c[0] for c in run] == [".venv/bin/certify", ".venv/bin/certify", ".venv/bin/train-tracker", ".venv/bin/prove"]
    assert [c[0] for c in demo] == [".venv/bin/certify", ".venv/bin/train-oracle"]
    assert "--probes" in demo[0] and demo[1][demo[1].index("--out") + 1] == "runs/demo-oracle"
    pages = {page for page, _, _ in examples()}
    assert {"README.md", "docs/reference/api.md"} <= pages


@pytest.fixture(scope="module")
def made(tmp_path_factory, one_thread_module) -> Path:
    """A directory holding what ``make run`` and ``make demo-oracle`` leave, made by their
    commands on a tiny budget (the certificate store kept inside it)."""
    root = tmp_path_factory.mktemp("made")
    store = ["--store", str(root / "store.sqlite")]
    runner = CliRunner()
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(root)
        for target in TARGETS:
            for argv in recipe(target):
                name = Path(argv[0]).name
                extra = TINY[name] if "--verify" not in argv else []
                result = runner.invoke(COMMANDS[name], [*argv[1:], *extra, *(store if name == "certify" else [])])
                assert result.exit_code == 0, f"make {target}: {shlex.join(argv)}: {result.output[-2000:]}"
    return root


@pytest.mark.parametrize("page, index, code", [pytest.param(*e, id=f"{e[0]}:{e[1]}") for e in examples()])
def test_the_example_runs(made, page, index, code, monkeypatch, capsys):
    for name in IMPORTED.findall(code):  # an optional package the example shows (datasets): where installed
        if importlib.util.find_spec(name) is None:
            pytest.skip(f"{page} example {index} needs {name}, which is not installed")
    monkeypatch.chdir(made)
    exec(compile(code, f"{page} example {index}", "exec"), {"__name__": "__docs__"})
    assert capsys.readouterr().out or "print(" not in code

"""One entry point for every benchmark script (``benchmarks.catalog``):

    python -m benchmarks list [--kind comparison|timing|study|tool]
    python -m benchmarks run NAME [ARGS...]     # the script NAME with its own options (ARGS, or --help)
    python -m benchmarks collect NAME           # a comparison's finished runs judged, nothing trained

``run`` hands ARGS to the script unchanged, so ``python -m benchmarks run programs --arms registers``
is ``python -m benchmarks.programs_comparison --arms registers``.
"""
from __future__ import annotations

import importlib
import runpy
import sys

import click

from benchmarks.catalog import CATALOG, KINDS, Entry, entry


def _entry(name: str) -> Entry:
    try:
        return entry(name)
    except KeyError as e:
        raise click.UsageError(e.args[0]) from None


def _summary(module: str) -> str:
    """The first line of a script's docstring, read without running it."""
    doc = importlib.import_module(f"benchmarks.{module}").__doc__ or ""
    first = doc.strip().splitlines()[0].removeprefix("Benchmark: ") if doc.strip() else ""
    return first[:1].upper() + first[1:]


def _run_script(module: str, args: list[str]) -> None:
    sys.argv = [f"python -m benchmarks.{module}", *args]
    sys.modules.pop(f"benchmarks.{module}", None)  # run as __main__, not as the module list read
    runpy.run_module(f"benchmarks.{module}", run_name="__main__", alter_sys=True)


@click.group(context_settings={"help_option_names": ["-h", "--help"]})
def main() -> None:
    """Every benchmark script by name: list them, run one, collect a comparison."""


@main.command("list")
@click.option("--kind", type=click.Choice(KINDS), help="Only the scripts of this kind.")
def list_scripts(kind: str | None) -> None:
    """Every script: its name, kind and what it measures."""
    width = max(len(name) for name in CATALOG)
    for name, e in CATALOG.items():
        if kind is None or e.kind == kind:
            click.echo(f"{name:<{width}}  {e.kind:<10}  {_summary(e.module)}")


@main.command("run", context_settings={"ignore_unknown_options": True, "allow_interspersed_args": False,
                                       "help_option_names": []})
@click.argument("name")
@click.argument("args", nargs=-1, type=click.UNPROCESSED)
def run(name: str, args: tuple[str, ...]) -> None:
    """Run the script NAME with ARGS (its own options; --help shows them)."""
    _run_script(_entry(name).module, list(args))


@main.command("collect")
@click.argument("name")
def collect(name: str) -> None:
    """Judge a registered comparison's finished runs and write its results, training nothing."""
    e = _entry(name)
    if e.kind != "comparison":
        raise click.UsageError(f"{name} is a {e.kind}, not a registered comparison: nothing to collect")
    command = importlib.import_module(f"benchmarks.{e.module}").main
    if isinstance(command, click.Group):
        if "collect" not in command.commands:
            raise click.UsageError(f"{name} has no collect step")
        _run_script(e.module, ["collect"])
    elif any("--collect" in p.opts for p in command.params):
        _run_script(e.module, ["--collect"])
    else:
        raise click.UsageError(f"{name} has no collect step")


if __name__ == "__main__":
    main()

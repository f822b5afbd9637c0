"""The driver the registered comparisons share: parse the arms and seeds asked for, train the
missing runs (one at a time, or several in processes of their own), collect the finished ones,
and write the judged results atomically.

A comparison script supplies what differs: its arms, how one run is trained or found finished,
how a finished run is summarised on the console, its judge, table and figures.
"""
from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import asdict
from multiprocessing import get_context
from pathlib import Path

import click
import torch

from tracker.options import stacked
from tracker.train import load_checkpoint

Job = tuple[str, int]  # (arm, seed)


def batch_options(runs: str, out: str) -> Callable[[Callable], Callable]:
    """The options every comparison takes beside its own: --steps, --runs, --out, --workers,
    --collect and --quiet (defaults: the comparison's runs directory and results file)."""
    options = [
        click.option("--steps", type=click.IntRange(1), default=None,
                     help="Override the training steps (partial runs)."),
        click.option("--runs", type=click.Path(path_type=Path), default=Path(runs), show_default=True,
                     help="Directory of the individual runs."),
        click.option("--out", type=click.Path(path_type=Path), default=Path(out), show_default=True,
                     help="Where the collected reports and predictions go."),
        click.option("--workers", type=click.IntRange(1), default=1, show_default=True,
                     help="Runs trained at once, each in its own process with cores/workers threads (no progress "
                          "bars)."),
        click.option("--collect", is_flag=True,
                     help="Train nothing: collect the runs already finished, judge on them, and list the missing "
                          "ones."),
        click.option("--quiet", is_flag=True, help="No progress bars."),
    ]
    return stacked(options)


def chosen_arms(arms: str, known: Sequence[str]) -> list[str]:
    """The comma-separated ``arms``, each one of ``known``; a click usage error otherwise."""
    chosen = [a.strip() for a in arms.split(",") if a.strip()]
    unknown = [a for a in chosen if a not in known]
    if unknown:
        raise click.UsageError(f"unknown arm(s) {', '.join(unknown)}; choose among {', '.join(known)}")
    return chosen


def seed_list(seeds: str) -> tuple[int, ...]:
    try:
        return tuple(int(s) for s in seeds.split(",") if s.strip())
    except ValueError:
        raise click.UsageError(f"--seeds {seeds!r} is not a comma-separated list of integers") from None


def run_batch(jobs: Sequence[Job], train_one: Callable[..., dict], finished: Callable[[str, int], dict | None],
              summary: Callable[[dict], str], workers: int, collect: bool,
              quiet: bool) -> tuple[list[dict], list[dict]]:
    """The reports of the jobs, in their order, and the jobs left without one ({"arm", "seed"}).
    Each report is found finished, or trained by ``train_one(arm, seed, quiet,
    threads)`` (a picklable function: with ``workers`` > 1 each run trains in a process of its
    own at cores/workers threads, without a progress bar). With ``collect`` nothing is trained
    and the jobs not finished are left out; a finished job is never trained again. Dataset and
    checkpoint faults (ValueError) become one line for the user."""
    done: dict[Job, dict] = {}
    try:
        for name, seed in jobs:
            report = finished(name, seed)
            if report is not None:
                done[name, seed] = report
        to_train = [job for job in jobs if job not in done]
        if collect:
            for name, seed in to_train:
                click.echo(f"== {name} seed {seed}: not run (or not finished)", err=True)
        elif workers == 1:
            for name, seed in to_train:
                click.echo(f"== {name} seed {seed}", err=True)
                done[name, seed] = train_one(name, seed, quiet, None)
        else:
            threads = max(1, (os.cpu_count() or 1) // workers)
            with ProcessPoolExecutor(workers, mp_context=get_context("spawn")) as pool:
                futures = {pool.submit(train_one, name, seed, True, threads): (name, seed) for name, seed in to_train}
                for future in as_completed(futures):
                    name, seed = futures[future]
                    done[name, seed] = report = future.result()
                    click.echo(f"== {name} seed {seed}: {summary(report)}, {report['seconds']:.0f} s", err=True)
    except ValueError as e:  # DatasetError, CheckpointError
        raise click.ClickException(str(e)) from None
    return ([done[job] for job in jobs if job in done],
            [{"arm": name, "seed": seed} for name, seed in jobs if (name, seed) not in done])


def same_settings(stored: dict, config) -> bool:
    """A report's stored config is ``config`` (a config dataclass); a setting added to the
    dataclass after the run counts at its default (which is what the run trained with)."""
    current, defaults = asdict(config), asdict(type(config)())
    return set(stored) <= set(current) and all(stored.get(k, defaults[k]) == v for k, v in current.items())


def finished_report(config, out: Path, recorded: Sequence[dict] = ()) -> dict | None:
    """The report of a run finished earlier with exactly the settings ``config``: the one in its
    directory ``out``, else one of ``recorded`` (the runs a collection wrote to the results file,
    which a fresh checkout has without the runs directory); None when there is neither."""
    path = out / "report.json"
    if path.is_file():
        report = json.loads(path.read_text())
        if same_settings(report.get("config", {}), config):
            return report
    return next((report for report in recorded if same_settings(report.get("config", {}), config)), None)


def recorded_runs(results: Path) -> list[dict]:
    """The run reports in the results file ``results`` ([] before its first collection)."""
    return json.loads(results.read_text()).get("runs", []) if results.is_file() else []


def finished_or_trained(config, out: Path, train: Callable[..., dict], config_from_checkpoint: Callable[[dict], object],
                        quiet: bool, threads: int | None, **train_options) -> dict:
    """One run of a batch: its finished report, else ``train(config, out, ...)``, resumed from
    ``out/checkpoint.pt`` when that checkpoint's settings are ``config``. ``threads``: torch
    threads for this process (None leaves them)."""
    if threads is not None:
        torch.set_num_threads(threads)
    report = finished_report(config, out)
    if report is not None:
        return report
    checkpoint = out / "checkpoint.pt"
    resume = checkpoint.is_file() and config_from_checkpoint(load_checkpoint(checkpoint)) == config
    return train(config, out, resume=resume, show_progress=not quiet, **train_options)


def write_results(out: Path, results: dict) -> None:
    """``results`` into the JSON file ``out``, atomically; keys of an existing file that
    ``results`` does not set are kept (another benchmark's section of the same file)."""
    out.parent.mkdir(parents=True, exist_ok=True)
    kept = json.loads(out.read_text()) if out.is_file() else {}
    fd, tmp = tempfile.mkstemp(dir=out.parent, prefix=f".{out.name}.tmp-")
    with os.fdopen(fd, "w") as handle:
        json.dump({**kept, **results}, handle, indent=2)
        handle.write("\n")
    os.replace(tmp, out)

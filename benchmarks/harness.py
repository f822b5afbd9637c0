"""The driver the registered comparisons share: parse the arms and seeds asked for, train the
missing runs (one at a time, several in processes of their own, or each as a task on a Ray
cluster), collect the finished ones, and write the judged results atomically.

A comparison script supplies what differs: its arms, how one run is trained or found finished,
how a finished run is summarised on the console, its judge, table and figures.
"""
from __future__ import annotations

import json
import os
import tempfile
from collections.abc import Callable, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from multiprocessing import get_context
from pathlib import Path

import click

from chains.files import user_mode
from tracker.device import DEVICE_HELP, DeviceUnavailable, resolve_device
from tracker.grid import (Run, RunSpec, finished_or_trained, finished_report,  # noqa: F401 - the drivers
                         same_settings)  # import them from here
from tracker.options import stacked

Job = tuple[str, int]  # (arm, seed)


def batch_options(runs: str, out: str, devices: bool = False) -> Callable[[Callable], Callable]:
    """The options every comparison takes beside its own: --steps, --runs, --out, --workers,
    --collect and --quiet (defaults: the comparison's runs directory and results file); with
    ``devices``, also --device and --cluster."""
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
    ]
    where = [
        click.option("--device", default="auto", show_default=True, help=DEVICE_HELP),
        click.option("--cluster", metavar="ADDRESS", default=None,
                     help="Train each missing run as a task on the Ray cluster at ADDRESS (auto: the one running on "
                          "this machine): one GPU per run where the nodes have GPUs, else one CPU thread. Run from "
                          "storage every node reaches: the runs' directories and the datasets are read and written "
                          "there by the nodes, and a run whose worker or node dies resumes from its checkpoint. "
                          "Needs the cluster extra (ray)."),
    ]
    options = options + (where if devices else []) + [
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


def checked_device(device: str, cluster: str | None) -> str:
    """The device spec for the runs: resolved here when they train here (a device this machine
    lacks is one line before anything runs), left to each node to resolve on a cluster."""
    if cluster is not None:
        return device
    try:
        return str(resolve_device(device))
    except DeviceUnavailable as e:
        raise click.ClickException(str(e)) from None


def run_batch(jobs: Sequence[Job], train_one: Callable[..., dict], finished: Callable[[str, int], dict | None],
              summary: Callable[[dict], str], workers: int, collect: bool, quiet: bool, *, cluster: str | None = None,
              plan: Callable[[str, int], Run] | None = None,
              label: Callable[[str, int, dict], dict] | None = None,
              device: str = "auto") -> tuple[list[dict], list[dict]]:
    """The reports of the jobs, in their order, and the jobs left without one ({"arm", "seed"}).
    Each report is found finished, or trained by ``train_one(arm, seed, quiet,
    threads)`` (a picklable function: with ``workers`` > 1 each run trains in a process of its
    own at cores/workers threads, without a progress bar). With ``cluster`` (a Ray address) each
    run to train is ``plan(arm, seed)`` sent as a task to the cluster on ``device``, and its report
    comes back through ``label(arm, seed, report)`` (what ``train_one`` returns for it); Ray is
    imported only then. With ``collect`` nothing is trained and the jobs not finished are left
    out; a finished job is never trained again. Dataset, checkpoint and cluster faults become
    one line for the user."""
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
        elif cluster is not None:
            if plan is None:
                raise TypeError("run_batch: a cluster needs the jobs' plan")
            if to_train:  # nothing to train: the cluster is not even joined
                done.update(on_cluster(to_train, plan, label, summary, cluster, device))
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


def on_cluster(jobs: Sequence[Job], plan: Callable[[str, int], Run],
               label: Callable[[str, int, dict], dict] | None, summary: Callable[[dict], str], cluster: str,
               device: str) -> dict[Job, dict]:
    """The jobs trained as tasks on the Ray cluster at ``cluster``, their reports by job."""
    try:
        from tracker.cluster import ClusterError, RayRuns  # Ray only when a cluster is asked for
    except ImportError as e:
        raise click.ClickException(f"--cluster needs Ray (pip install 'exact-state[cluster]'): {e}") from None
    done: dict[Job, dict] = {}
    try:
        runs = RayRuns(cluster, device)
        click.echo(f"== {len(jobs)} run(s) to the cluster at {cluster}, "
                   f"{'one GPU' if runs.gpus else 'one CPU thread'} each", err=True)
        for (name, seed), report in runs.reports({job: plan(*job) for job in jobs}):
            done[name, seed] = report = label(name, seed, report) if label is not None else report
            click.echo(f"== {name} seed {seed}: {summary(report)}, {report['seconds']:.0f} s", err=True)
    except ClusterError as e:
        raise click.ClickException(str(e)) from None
    return done


def recorded_runs(results: Path) -> list[dict]:
    """The run reports in the results file ``results`` ([] before its first collection)."""
    return json.loads(results.read_text()).get("runs", []) if results.is_file() else []


def write_results(out: Path, results: dict) -> None:
    """``results`` into the JSON file ``out``, atomically; keys of an existing file that
    ``results`` does not set are kept (another benchmark's section of the same file)."""
    out.parent.mkdir(parents=True, exist_ok=True)
    kept = json.loads(out.read_text()) if out.is_file() else {}
    fd, tmp = tempfile.mkstemp(dir=out.parent, prefix=f".{out.name}.tmp-")
    os.fchmod(fd, user_mode())  # mkstemp's 0600 would outlive the rename
    with os.fdopen(fd, "w") as handle:
        json.dump({**kept, **results}, handle, indent=2)
        handle.write("\n")
    os.replace(tmp, out)


def figure(value: float | None, digits: int = 3) -> str:
    """A measured figure for a table cell: ``digits`` decimals, a dash where nothing was measured."""
    return "–" if value is None else f"{value:.{digits}f}"


def prediction_lines(predictions: list[dict], ids: bool = False) -> list[str]:
    """The markdown table of registered predictions (each with what was measured and its verdict),
    after a blank line; ``ids`` puts each prediction's id before its text."""
    lines = ["", "| registered prediction | measured | verdict |", "|---|---|---|"]
    for p in predictions:
        text = f"{p['id']}: {p['prediction']}" if ids else p["prediction"]
        lines.append(f"| {text} | `{json.dumps(p['measured'])}` | {p['verdict']} |")
    return lines


def length_list(text: str, option: str = "--lengths") -> tuple[int, ...]:
    """``"8,64,256"`` -> (8, 64, 256); a click usage error naming ``option`` otherwise."""
    try:
        return tuple(int(n) for n in text.split(",") if n.strip())
    except ValueError:
        raise click.UsageError(f"{option} {text!r} is not a comma-separated list of integers") from None


def replace_runs(out: Path, found: list[dict]) -> None:
    """``found`` (entries keyed by their ``run``) into ``out``'s ``runs``, replacing earlier entries
    of the same runs and keeping the others."""
    kept = json.loads(out.read_text()).get("runs", []) if out.is_file() else []
    mine = {r["run"] for r in found}
    write_results(out, {"runs": [r for r in kept if r["run"] not in mine] + found})

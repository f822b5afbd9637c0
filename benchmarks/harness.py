"""The comparison harness: what every registered comparison is made of, declared once.

A comparison declares itself here as a ``Comparison``: its arms with their registered seeds, its
predictions (written before any of its runs) and the judge that tests them, and how one arm at one
seed is configured and where its run lives. A ``Plan`` binds that to one call (the runs directory,
the steps, the device): it finds a run finished, trains or resumes it, or sends it to a cluster as
data. ``run_batch`` drives the jobs (one at a time, several in processes of their own, or each as a
task on a Ray cluster) and the results are written atomically.

This is the one way a benchmark launches a training: through a ``Plan`` (a timing benchmark's
runs are ``fresh``: trained from step 0, as their time is what it measures), or, where a benchmark
runs the command as a user does, in a process of its own, through ``launch``, which alone decides
to resume it. A run is read back through ``training.checkpoint.Checkpoint`` or the loaders
built on it (``tracker.load_run``, ``oracle.load_run``).

A comparison's script supplies only what differs: its arms, its judge, its table and figures, and
a thin click command over them, run as ``python -m benchmarks.NAME``.
"""
from __future__ import annotations

import importlib
import json
import os
import subprocess
import sys
import tempfile
from collections.abc import Callable, Mapping, Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from dataclasses import asdict, dataclass, field
from functools import partial
from multiprocessing import get_context
from pathlib import Path

import click

from chains.files import user_mode
from chains.manifest import has_manifest
from tracker.grid import RunSpec
from tracker.stopping import StopConfig
from training.checkpoint import CHECKPOINT
from training.device import DEVICE_HELP, DeviceUnavailable, resolve_device
from training.grid import Run, finished_report
from training.options import stacked

Job = tuple[str, int]  # (arm, seed)

# Every registered comparison: its name -> (the module under benchmarks/ that declares it, its key in
# that module's DECLARED). The module is its command: python -m benchmarks.<module>.
REGISTRY: dict[str, tuple[str, str]] = {
    "tracker": ("tracker_comparison", "tracker"),
    "tracker-hard": ("tracker_hard", "hard"),
    "tracker-tier2": ("tracker_tier2", "batch"),
    "tracker-beyond": ("tracker_beyond", "batch"),
    "tracker-registers": ("tracker_registers", "registers"),
    "tracker-mechanism": ("tracker_mechanism", "mechanism"),
    "tracker-soft": ("tracker_soft", "soft"),
    "tracker-soft-seed": ("tracker_soft", "soft-seed"),
    "tracker-million": ("tracker_million", "million"),
    "programs": ("programs_comparison", "programs"),
    "groups": ("groups_comparison", "groups"),
    "programs-learned": ("programs_learned", "programs-learned"),
    "self-distill": ("self_distill_comparison", "self-distill"),
    "oracle-initial": ("oracle_comparison", "initial"),
    "oracle-gate": ("oracle_comparison", "gate"),
    "oracle-completion": ("oracle_completion", "completion"),
    "oracle-tree": ("oracle_completion", "tree"),
}


@dataclass(frozen=True)
class Comparison:
    """A registered comparison as it declares itself: what it compares, what it predicted before any
    of its runs, how it judges, and how one arm at one seed is configured and where it lives."""

    arms: Mapping[str, tuple[int, ...]]  # arm -> its registered seeds (none: an opt-in arm outside the batch)
    predictions: Mapping[str, str]  # prediction id -> its text, as registered
    judge: Callable[[list[dict]], list[dict]]  # run reports -> every prediction with what was measured and its verdict
    config: Callable[[str, int], object]  # (arm, seed) -> the run's settings at the comparison's defaults
    run_dir: Callable[[str, int, Path], Path]  # (arm, seed, runs directory) -> the run's directory
    runs: str  # the default runs directory
    results: str  # the default results file
    settings: Mapping[str, object] = field(default_factory=dict)  # what it registered beside its arms (recipe, datasets)
    table: Callable[[list[dict], list[dict]], str] | None = None  # (reports, judged predictions) -> its markdown table

    @property
    def registered(self) -> tuple[str, ...]:
        """The arms of the registered batch (those with registered seeds), in declaration order."""
        return tuple(arm for arm, seeds in self.arms.items() if seeds)


def comparison(name: str) -> Comparison:
    """The registered comparison ``name`` (a key of REGISTRY), read from the module that declares it."""
    if name not in REGISTRY:
        raise KeyError(f"no registered comparison {name!r}; choose among {', '.join(REGISTRY)}")
    module, key = REGISTRY[name]
    return importlib.import_module(f"benchmarks.{module}").DECLARED[key]


@dataclass(frozen=True)
class Plan:
    """One call's way to a comparison's runs: each job (arm, seed) has one config and one directory,
    and from them one run as data, found finished, trained (or resumed) here, or sent to a cluster.
    Picklable (module-level functions and partials of them), so a worker process receives it whole."""

    config: Callable[[str, int], object]  # (arm, seed) -> what is trained: a TrainConfig or an OracleConfig
    directory: Callable[[str, int], Path]  # (arm, seed) -> the run's directory
    spec: Callable[[object, str], Run] = RunSpec  # (config, directory) -> the run as data, with its evaluation
    label: Callable[[str, int, dict], dict] | None = None  # (arm, seed, report) -> the report with its arm's labels
    device: str = "cpu"  # where the runs train (as checked_device resolved it)
    threads: int | None = None  # torch threads of each run, fixed (None: the cores shared among the workers)

    def plan(self, arm: str, seed: int) -> Run:
        """One run as data (what a cluster task trains)."""
        return self.spec(self.config(arm, seed), str(self.directory(arm, seed)))

    def labelled(self, arm: str, seed: int, report: dict) -> dict:
        return report if self.label is None else self.label(arm, seed, report)

    def finished(self, arm: str, seed: int, recorded: Sequence[dict] = ()) -> dict | None:
        """The report of a run finished earlier with exactly these settings (from its directory or
        the ``recorded`` results), else None."""
        report = finished_report(self.config(arm, seed), self.directory(arm, seed), recorded)
        return None if report is None else self.labelled(arm, seed, report)

    def run(self, arm: str, seed: int, quiet: bool, threads: int | None) -> dict:
        """Train (or resume, or find finished) one run on the plan's device."""
        return self.labelled(arm, seed, self.plan(arm, seed).run(self.device, quiet, self.threads or threads))

    def batch(self, jobs: Sequence[Job], recorded: Sequence[dict], summary: Callable[[dict], str], workers: int,
              collect: bool, quiet: bool, cluster: str | None) -> tuple[list[dict], list[dict]]:
        """``run_batch`` over the plan: the jobs' reports and the jobs left without one."""
        return run_batch(jobs, self.run, partial(self.finished, recorded=recorded), summary,
                         workers, collect, quiet, cluster=cluster, plan=self.plan,
                         label=self.label, device=self.device)

    def batch_into(self, jobs: Sequence[Job], out: Path, workers: int, collect: bool, quiet: bool,
                   cluster: str | None = None, arm_of: Callable[[dict], str] = lambda report: report["arm"],
                   ) -> tuple[list[dict], list[dict]]:
        """``batch`` against the results recorded at ``out``: the jobs' reports, then every run
        recorded there for an arm or seed this call did not ask for (never dropped); and the jobs
        left without a report."""
        recorded = recorded_runs(out)
        reports, missing = self.batch(jobs, recorded, exact_line, workers, collect, quiet, cluster)
        asked = set(jobs)
        return reports + [r for r in recorded if (arm_of(r), r["seed"]) not in asked], missing


def exact_line(report: dict) -> str:
    """A run's line in a batch's progress: its exact figures."""
    return f"exact {json.dumps(report.get('exact'))}"


def certified_dataset(out: Path, options: Sequence[str], jobs: int | None = None) -> Path:
    """The dataset at ``out``, certified now by ``certify`` with ``options`` (and ``--jobs``) unless
    it is there; a one-line ClickException when certify fails."""
    if not has_manifest(out):
        click.echo(f"certify {out}", err=True)
        more = [] if jobs is None else ["--jobs", str(jobs)]
        try:
            subprocess.run([str(Path(sys.executable).parent / "certify"), *options, *more, "--out", str(out)],
                           check=True)
        except subprocess.CalledProcessError as e:
            raise click.ClickException(f"certify {out}: failed (exit {e.returncode})") from None
    return out


def launch(command: Sequence[str], out: Path, *, state: str = CHECKPOINT, env: Mapping[str, str] | None = None) -> None:
    """Run ``command`` (a train-tracker or evaluate-tracker command line, all but its --out) into
    ``out`` in a process of its own, as a user runs it: continued with --resume when ``out`` holds
    ``state`` (a training's checkpoint, a streamed evaluation's saved state: work cut short), from
    the start otherwise. The caller has found the work unfinished; a command that fails raises
    CalledProcessError."""
    resume = ["--resume"] if (Path(out) / state).is_file() else []
    subprocess.run([*command, "--out", str(out), *resume], check=True, env=None if env is None else dict(env))


def whole_batch(jobs: Sequence[Job], found: Callable[[str, int], dict | None]) -> tuple[list[dict], list[dict]]:
    """The reports of the ``jobs`` that ``found(arm, seed)`` finds finished, and the jobs still missing
    ({"arm", "seed"}): what a batch is judged on, whatever part of it a call trained."""
    by_job = {(name, seed): found(name, seed) for name, seed in jobs}
    return ([r for r in by_job.values() if r is not None],
            [{"arm": name, "seed": seed} for (name, seed), r in by_job.items() if r is None])


def labelled(arm: str, seed: int, report: dict) -> dict:
    """A run's report with its arm and seed, as a comparison collects it."""
    return {**report, "arm": arm, "seed": seed}


def exact_at(length: str) -> Callable[[dict], float | None]:
    """A report's exact figure at ``length`` events (None where it has none)."""
    return lambda r: (r.get("exact") or {}).get(length)


def verdict(key: str, text: str, ok: bool | None, measured: object) -> dict:
    """One judged prediction: untested while ``ok`` is None, else passed or failed."""
    return {"id": key, "prediction": text, "measured": measured,
            "verdict": "untested" if ok is None else ("pass" if ok else "fail")}


def runs_within(at: Mapping[Job, dict], runs: Sequence[Job], read: Callable[[dict], float | None],
                ok: Callable[[float], bool], low: int, high: int) -> tuple[dict, bool | None]:
    """Whether the ``runs`` (arm, seed) on which ``ok`` holds of what ``read`` measures number between
    ``low`` and ``high``: decided as soon as the finished ones (``at``) settle it, None while those
    not yet measured (missing, or read as None) could still go either way; and what was measured,
    by run."""
    measured = {f"{arm}-s{seed}": read(at[arm, seed]) for arm, seed in runs if (arm, seed) in at}
    good = sum(v is not None and ok(v) for v in measured.values())
    left = len(runs) - sum(v is not None for v in measured.values())
    if good > high or good + left < low:
        return measured, False
    if good >= low and good + left <= high:
        return measured, True
    return measured, None


def judged_parts(key: str, text: str, parts: Mapping[str, tuple[object, bool | None]]) -> dict:
    """One prediction judged from its parts (label -> (measured, verdict)): failed when a part fails,
    untested while a part is undecided, passed when every part passes."""
    oks = [ok for _, ok in parts.values()]
    ok = False if False in oks else (None if None in oks else True)
    return verdict(key, text, ok, {label: m for label, (m, _) in parts.items()})


def spearman(x: list[float], y: list[float]) -> float | None:
    """Spearman's rank correlation with average ranks for ties; None when undefined."""
    def ranks(v):
        order = sorted(range(len(v)), key=lambda i: v[i])
        r = [0.0] * len(v)
        i = 0
        while i < len(v):
            j = i
            while j + 1 < len(v) and v[order[j + 1]] == v[order[i]]:
                j += 1
            for k in range(i, j + 1):
                r[order[k]] = (i + j) / 2
            i = j + 1
        return r

    if len(x) < 3:
        return None
    rx, ry = ranks(x), ranks(y)
    mx, my = sum(rx) / len(rx), sum(ry) / len(ry)
    sxy = sum((a - mx) * (b - my) for a, b in zip(rx, ry))
    sx = sum((a - mx) ** 2 for a in rx) ** 0.5
    sy = sum((b - my) ** 2 for b in ry) ** 0.5
    return None if sx == 0 or sy == 0 else sxy / (sx * sy)


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
        from training.cluster import ClusterError, RayRuns  # Ray only when a cluster is asked for
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


def merge_timed_runs(rows: list[dict], path: Path, exact: float) -> list[dict]:
    """Add the stop-when-exact rows ``rows`` to the file's rows (the file records the ``exact`` bar
    beside them); a row with the same candidate, seed, machine, dataset and stop rule (every setting
    of it) is replaced."""
    old = json.loads(path.read_text())["runs"] if path.is_file() else []

    def key(r: dict) -> tuple:
        stop = {"cooldown": 0, **r["stop"]}  # rows from before the cooldown existed
        return r["candidate"], r["seed"], r["machine"], r["dataset_id"], tuple(sorted(stop.items()))

    fresh = {key(r) for r in rows}
    merged = [r for r in old if key(r) not in fresh] + rows
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.tmp-")
    os.fchmod(fd, user_mode())  # mkstemp's 0600 would outlive the rename
    with os.fdopen(fd, "w") as handle:
        json.dump({"exact_threshold": exact, "runs": merged}, handle, indent=2)
        handle.write("\n")
    os.replace(tmp, path)
    return merged


def replace_runs(out: Path, found: list[dict]) -> None:
    """``found`` (entries keyed by their ``run``) into ``out``'s ``runs``, replacing earlier entries
    of the same runs and keeping the others."""
    kept = json.loads(out.read_text()).get("runs", []) if out.is_file() else []
    mine = {r["run"] for r in found}
    write_results(out, {"runs": [r for r in kept if r["run"] not in mine] + found})


# ---- the device check: a GPU's rows beside the CPU's ----

DEVICE_LONGEST = "4096"  # the longest held-out length, whose exactness the device check reports


def device_cpu_rows(path: Path, seeds: tuple[int, ...], stop: StopConfig) -> dict[int, dict]:
    """The fast schedule's CPU rows of the time-to-exact results at ``path`` under the same stop rule
    ``stop``, by seed (the last of each seed's rows); none where the file is not there."""
    rows = json.loads(path.read_text())["runs"] if path.is_file() else []
    wanted = asdict(stop)
    found = {}
    for r in rows:
        if r["candidate"] == "fast" and r["seed"] in seeds and {"cooldown": 0, "until": "exact", **r["stop"]} == wanted:
            found[r["seed"]] = {k: r.get(k) for k in ("machine", "torch_threads", "runs_in_flight", "steps",
                                                       "steps_per_second", "exact_at_step", "wall_seconds",
                                                       "exact", "torch_version")}
    return found


def device_row(seed: int, report: dict, run_seconds: float) -> dict:
    """The device check's row of one seed: a stop-when-exact training report's speed, when it became
    exact and its figures, with ``run_seconds`` (training and evaluation, as measured around them)."""
    s = report["stop"]
    return {"seed": seed, "steps": report["steps"], "steps_per_second": report["steps_per_second"],
            "exact_at_step": s["exact_at_step"], "exact_at_seconds": s["exact_at_seconds"],
            "train_seconds": s["train_seconds"], "check_seconds": s["check_seconds"],
            "wall_seconds": s["wall_seconds"], "eval_seconds": report["evaluation"]["eval_seconds"],
            "run_seconds": round(run_seconds, 2), "exact": report["exact"],
            "pair_distance": report["pair_distance"], "unrelated_distance": report["unrelated_distance"],
            "device": report["device"], "dataset_id": report["dataset"]["dataset_id"]}


def _cell(v: object, digits: int = 3) -> str:
    return "–" if v is None else (f"{v:.{digits}f}" if isinstance(v, float) else str(v))


def device_table(gpu: list[dict], cpu: dict[int, dict]) -> str:
    """The markdown table of the GPU's rows, each followed by the CPU's row of its seed (or a line
    saying there is none)."""
    head = ["seed", "where", "steps", "steps/s", "exact at step", "wall s", "exact@8", "exact@256", "exact@4096"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in gpu:
        for where, row in (("gpu", r), ("cpu", cpu.get(r["seed"]))):
            if row is None:
                lines.append(f"| {r['seed']} | cpu | no CPU row for this seed | | | | | | |")
                continue
            exact = row["exact"]
            lines.append("| " + " | ".join([str(r["seed"]), where, _cell(row["steps"]), _cell(row["steps_per_second"]),
                                            _cell(row["exact_at_step"]), _cell(row["wall_seconds"], 0),
                                            _cell(exact.get("8")), _cell(exact.get("256")),
                                            _cell(exact.get(DEVICE_LONGEST))]) + " |")
    return "\n".join(lines)

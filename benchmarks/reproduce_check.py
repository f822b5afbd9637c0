"""Do the refactors keep the bits? A registered run, checked weight for weight against the code
of a reference commit.

For every run directory given (a ``train-tracker`` or a ``train-oracle`` run; told apart by its
checkpoint: an oracle's holds its verdict classes and probe width):

- **evaluation**: the checkpoint re-evaluated by the current code with the evaluation its report
  was made with (the tracker's: the ``eval_config`` its report records, ``EvalConfig()`` for a
  report made before reports recorded it; the oracle's ``OracleEvalConfig()`` at the stored
  threshold, and the oracle's validation chains with the threshold chosen again), and the report's
  headline figures compared with the reproduced ones exactly (``==`` on the JSON numbers). With
  ``--max-length L`` only the splits up to L events are evaluated and compared (the oracle's figures
  pooled to 1,024 events are then left out);
- **resume**: the checkpoint copied to a scratch directory with its ``steps`` set to its step + N,
  and resumed by ``train(..., resume=True)`` for those N steps by the current code and by the
  reference commit's (a ``git worktree`` of it, imported through ``PYTHONPATH``); the two
  checkpoints compared tensor by tensor with ``torch.equal`` (weights, NextLat head, optimiser
  state; the step; the oracle's comparison threshold). Both codes see the same changed ``steps``,
  so the learning-rate schedule moves the same way in both;
- **fresh** (once, not per run): short trainings from scratch by both codes on a tiny probe dataset
  certified into a scratch directory (the tracker's default recipe and the oracle's, each at 40
  steps with a warm-up of 8, and a few other objectives and arms), compared the same way, and
  their reports' headline figures compared as well.

Everything runs at one torch thread (the registered runs were trained so), one code at a time,
each in its own process (``_worker``). Nothing is written beside the runs or the datasets: the
scratch directory holds the copies, the worktrees and the dataset, and is removed at the end.
The verdicts go to ``--out`` (relative paths only) and a short table is printed; ``table``
prints the Markdown table of a results file (the docs page's).

    .venv/bin/python -m benchmarks.reproduce_check run runs/oracle-gate/oracle-recurrence-combo-s0 \\
        runs/tier2-diagnosis/paths-combo-s0 --reference 7d0b9a2 --steps 20 --max-length 256
    .venv/bin/python -m benchmarks.reproduce_check table
"""
from __future__ import annotations

import hashlib
import importlib
import json
import os
import platform
import shutil
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from dataclasses import replace
from pathlib import Path

import click

# The comparisons (tracker.bits) are imported where they are used: a worker runs this file with
# another commit's packages first on its path, and those may have no tracker.bits.
ROOT = Path(__file__).resolve().parent.parent
REFERENCE = "7d0b9a2"  # the state before the shared manifest module, the one loop, --device and the prover's adapter
REGISTERED = ("runs/oracle-gate/oracle-recurrence-combo-s0", "runs/tier2-diagnosis/paths-combo-s0",
              "runs/tier2-diagnosis/w64-half-combo-s0")
CODE = ("chains", "leanbridge", "tracker", "oracle", "prover")  # the packages a worker imports
# the fresh trainings: (kind, arch, objective); the first of each kind is its default recipe
FRESH = (("tracker", "recurrence", "combo"), ("tracker", "recurrence", "nerode"), ("tracker", "transformer", "plain"),
         ("oracle", "recurrence", "combo"), ("oracle", "recurrence", "nerode"), ("oracle", "transformer", "plain"))
FRESH_DATA = ["--atoms", "4", "--tier", "1", "--chains", "40", "--test-chains", "8", "--test-lengths", "8,16",
              "--probes", "--probe-chains", "8", "--jobs", "1"]
SMALL_EVAL_CHAINS = 16  # the tracker's closing evaluation in resumed and fresh runs (it changes no weight)

# The headline figures compared with a report. A figure keyed by length keeps only the lengths
# evaluated; "+" marks those compared only when every length was evaluated (pooled figures).
TRACKER_FIGURES = ("exact", "in_distribution", "pair_distance", "pair_growth", "unrelated_distance",
                   "evaluation.unrelated_distance_by_length")
ORACLE_FIGURES = ("accuracy", "all_right", "by_kind_by_length", "binary", "pair_distance", "unrelated_distance",
                  "head.accuracy", "head.all_right", "comparison.threshold", "comparison.accuracy",
                  "comparison.all_right", "comparison.binary_accuracy", "comparison.binary_all_right",
                  "+pooled", "+head.confusion", "+comparison.confusion", "+comparison.goal_distance",
                  "validation.accuracy", "validation.all_right", "validation.pair_distance",
                  "validation.unrelated_distance", "validation.pooled", "validation.comparison.choice",
                  "validation.comparison.threshold", "validation.comparison.accuracy",
                  "validation.comparison.all_right", "threshold.threshold", "threshold.choice")


def load_blob(path: Path) -> dict:
    import torch

    return torch.load(path, map_location="cpu", weights_only=False)


def checkpoint_of(run: Path) -> Path:
    """The checkpoint file of the run directory ``run``, as the parent's code names it (a worker,
    which may import another commit's code, is handed its path)."""
    from training.checkpoint import CHECKPOINT

    return run / CHECKPOINT


# ---- the code being run ----------------------------------------------------------------------

def git(*args: str, cwd: Path = ROOT) -> str:
    return subprocess.run(["git", *args], cwd=cwd, capture_output=True, text=True, check=True).stdout.strip()


@contextmanager
def worktree(rev: str, where: Path):
    """A detached worktree of ``rev`` at ``where``, removed afterwards."""
    git("worktree", "add", "--detach", "--quiet", str(where), rev)
    try:
        yield where
    finally:
        subprocess.run(["git", "worktree", "remove", "--force", str(where)], cwd=ROOT, capture_output=True)
        subprocess.run(["git", "worktree", "prune"], cwd=ROOT, capture_output=True)


def checkout_state() -> dict:
    """HEAD and the uncommitted edits to the code a worker imports (their hash names them)."""
    head = git("rev-parse", "HEAD")
    edited = git("diff", "--name-only", "HEAD", "--", *CODE).splitlines()
    untracked = git("ls-files", "--others", "--exclude-standard", "--", *CODE).splitlines()
    h = hashlib.sha256(git("diff", "HEAD", "--", *CODE).encode())
    for name in sorted(untracked):
        h.update(name.encode() + (ROOT / name).read_bytes())
    changed = sorted(edited + untracked)
    return {"head": head, "uncommitted": changed, "uncommitted_sha256": h.hexdigest() if changed else None}


def run_worker(code_root: Path, tasks: list[dict], scratch: Path, label: str, quiet: bool) -> list[dict]:
    """Run ``tasks`` in one process that imports the project from ``code_root``, at one thread."""
    spec = scratch / f"tasks-{label}.json"
    spec.write_text(json.dumps({"code_root": str(code_root), "tasks": tasks}))
    env = {**os.environ, "PYTHONPATH": str(code_root), "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1",
           "PYTHONHASHSEED": "0"}
    if not quiet:
        click.echo(f"[{label}] {len(tasks)} task(s) with the code of {label}", err=True)
    done = subprocess.run([sys.executable, str(Path(__file__).resolve()), "_worker", str(spec)], cwd=ROOT, env=env,
                          capture_output=True, text=True)
    answer = scratch / f"tasks-{label}.answer.json"
    if not answer.is_file():
        raise click.ClickException(f"the {label} worker ended with {done.returncode} and no answer: "
                                   f"{done.stderr.strip().splitlines()[-1:] or ''}")
    return json.loads(answer.read_text())


# ---- the worker: runs with whichever code PYTHONPATH names -----------------------------------

def _load_tracker_data(directory: str):
    # read the cache where this code's cache is already there; otherwise replay without writing one
    from tracker.data import cache_path, load_dataset

    return load_dataset(directory, use_cache=cache_path(Path(directory)).is_file())


def _load_probe_data(directory: str):
    from oracle.data import cache_path, load_probe_dataset
    from tracker.data import cache_path as tracker_cache

    cached = cache_path(Path(directory)).is_file() and tracker_cache(Path(directory)).is_file()
    return load_probe_dataset(directory, use_cache=cached)


def _load_checkpoint(path: Path) -> dict:
    """The checkpoint at ``path`` read by the code being run, wherever that code keeps its reader:
    a reference commit may predate the training machinery's own package, the one way to restore a
    run, or the one loop."""
    for module in ("training.checkpoint", "tracker.checkpoint", "tracker.loop", "tracker.train"):
        try:
            return importlib.import_module(module).load_checkpoint(path)
        except (ImportError, AttributeError):
            continue
    raise ImportError("no load_checkpoint in the code being run")


def _up_to(data, max_length: int | None):
    from dataclasses import replace

    if max_length is None:
        return data
    return replace(data, tests={n: s for n, s in data.tests.items() if n <= max_length})


def _evaluate_tracker(task: dict) -> dict:
    from tracker.config import TrainConfig
    from tracker.evaluate import EvalConfig, evaluate
    from tracker.train import Trainer
    from training.checkpoint import Checkpoint

    checkpoint = Checkpoint.of_run(task["run"], TrainConfig)
    trainer = checkpoint.restore(Trainer, _load_tracker_data(checkpoint.config.data))
    # the evaluation the report records (its eval_config), on the laid-out targets; a report that
    # predates the key was made with train()'s default, EvalConfig() (512 chains a split)
    report = json.loads((Path(task["run"]) / "report.json").read_text())
    recorded = report.get("eval_config")
    setting = (EvalConfig() if recorded is None
               else EvalConfig(**{**recorded, "pair_lengths": tuple(recorded["pair_lengths"])}))
    data = trainer.data
    if report.get("checks_held_apart"):  # the chains its stop checks read are in no figure
        from tracker.stopping import reported_chains

        data = reported_chains(data, report)
    results = evaluate(trainer.model, _up_to(data, task["max_length"]), replace(setting, threads=1))
    results.pop("correct")
    head = ("exact", "pair_distance", "pair_growth", "unrelated_distance", "in_distribution")
    return {**{k: results[k] for k in head}, "evaluation": {k: v for k, v in results.items() if k not in head},
            "lengths": sorted(int(n) for n in results["exact"])}


def _evaluate_oracle(task: dict) -> dict:
    from oracle.config import OracleConfig
    from oracle.evaluate import OracleEvalConfig, evaluate
    from oracle.train import OracleTrainer, choose_comparison
    from training.checkpoint import Checkpoint

    checkpoint = Checkpoint.of_run(task["run"], OracleConfig)
    config, blob = checkpoint.config, checkpoint.blob
    data = _load_probe_data(config.data)
    trainer = checkpoint.restore(OracleTrainer, data)
    # the threshold chosen again as train() chose it (on the validation chains up to 256 events,
    # or on a sample of the training chains), beside the test chains read at the stored one
    validation = _load_probe_data(config.validation) if config.validation else None
    chosen, validation_report = choose_comparison(trainer.model, config, data, validation, OracleEvalConfig())
    stored = blob.get("comparison")
    out = evaluate(trainer.model, data, OracleEvalConfig(), threshold=None if stored is None else stored["threshold"],
                   threshold_source=stored["source"]["chains"] if stored else "given", max_length=task["max_length"])
    return {**out, "threshold": chosen, "validation": validation_report, "lengths": out["lengths_evaluated"]}


def _train_tracker(task: dict) -> None:
    from tracker.evaluate import EvalConfig
    from tracker.train import TrainConfig, config_from_checkpoint, train

    out = Path(task["out"])
    small = EvalConfig(max_chains=SMALL_EVAL_CHAINS, threads=1)
    if task["resume"]:
        config = config_from_checkpoint(_load_checkpoint(Path(task["checkpoint"])))
        train(config, out, resume=True, show_progress=False, eval_config=small,
              data=_up_to(_load_tracker_data(config.data), task["max_length"]))
    else:
        config = TrainConfig(**task["config"])
        train(config, out, show_progress=False, eval_config=small, data=_load_tracker_data(config.data))


def _train_oracle(task: dict) -> None:
    from oracle.evaluate import OracleEvalConfig
    from oracle.train import OracleConfig, config_from_checkpoint, train

    out = Path(task["out"])
    if task["resume"]:
        config = config_from_checkpoint(_load_checkpoint(Path(task["checkpoint"])))
        validation = _load_probe_data(config.validation) if config.validation else None
        # the threshold is chosen again at the end (on the validation chains when the run names
        # them: then the test chains are not read, as with --skip-test)
        train(config, out, resume=True, show_progress=False, eval_config=OracleEvalConfig(),
              data=_up_to(_load_probe_data(config.data), task["max_length"]), validation=validation,
              test=validation is None)
    else:
        config = OracleConfig(**task["config"])
        train(config, out, show_progress=False, eval_config=OracleEvalConfig(bootstrap=20),
              data=_load_probe_data(config.data))


def worker(spec_path: Path) -> None:
    import torch

    torch.set_num_threads(1)
    spec = json.loads(spec_path.read_text())
    import tracker

    code = Path(tracker.__file__).resolve().parent.parent
    answers = []
    for task in spec["tasks"]:
        t0 = time.perf_counter()
        answer: dict = {"id": task["id"], "code_root_ok": code == Path(spec["code_root"]).resolve()}
        try:
            if not answer["code_root_ok"]:
                raise RuntimeError("the project was imported from another checkout than the one named")
            if task["do"] == "evaluate":
                answer["figures"] = (_evaluate_tracker if task["kind"] == "tracker" else _evaluate_oracle)(task)
            else:
                (_train_tracker if task["kind"] == "tracker" else _train_oracle)(task)
        except Exception as e:  # recorded as the task's error; the next task still runs
            answer["error"] = f"{type(e).__name__}: {' '.join(str(e).split())[:300]}"
        answer["seconds"] = round(time.perf_counter() - t0, 2)
        answer["torch_threads"] = torch.get_num_threads()
        answers.append(answer)
    spec_path.with_suffix(".answer.json").write_text(json.dumps(answers))


# ---- the check -------------------------------------------------------------------------------

def kind_of(blob: dict, report: dict | None) -> str:
    config = blob.get("config", {})
    if "verdicts" in blob or "probe_width" in config or (report or {}).get("verdict_classes"):
        return "oracle"
    return "tracker"


def prepare_resume(checkpoint: dict, steps: int, where: Path) -> None:
    """``checkpoint`` written into ``where`` with its ``steps`` set to its step + ``steps``."""
    import torch

    blob = dict(checkpoint)
    blob["config"] = {**blob["config"], "steps": blob["step"] + steps}
    where.mkdir(parents=True)
    torch.save(blob, checkpoint_of(where))


def fresh_config(kind: str, arch: str, objective: str, data: Path, steps: int) -> dict:
    # the kind's defaults but for the length of the run (a warm-up of 8 so that the cosine decay runs too)
    return {"data": str(data), "arch": arch, "objective": objective, "steps": steps, "warmup_steps": 8,
            "checkpoint_every": 15}


def relative(path: Path) -> str:
    """``path`` relative to the checkout (as given, links kept), else its name alone."""
    path = Path(os.path.abspath(path))
    try:
        return path.relative_to(ROOT).as_posix()
    except ValueError:
        return path.name


def plan_runs(runs: list[Path], steps: int, max_length: int | None,
              scratch: Path) -> tuple[list[tuple[dict, dict | None]], list[dict], list[dict]]:
    """Per run: its entry in the results beside its report, the current code's tasks (re-evaluate,
    resume) and the reference code's (resume), each resume from its own copy in ``scratch``."""
    plan, tasks_cur, tasks_ref = [], [], []
    for i, run in enumerate(runs):
        blob = load_blob(checkpoint_of(run))
        report = json.loads((run / "report.json").read_text()) if (run / "report.json").is_file() else None
        kind = kind_of(blob, report)
        entry = {"run": relative(run), "kind": kind, "step": blob["step"],
                 "config": {k: blob["config"].get(k) for k in ("data", "arch", "objective", "seed", "steps")}}
        plan.append((entry, report))
        tasks_cur.append({"id": f"eval-{i}", "do": "evaluate", "kind": kind, "run": str(run.resolve()),
                          "max_length": max_length})
        for label, tasks in (("current", tasks_cur), ("reference", tasks_ref)):
            copy = scratch / f"resume-{label}-{i}"
            prepare_resume(blob, steps, copy)
            tasks.append({"id": f"resume-{i}", "do": "train", "kind": kind, "resume": True, "out": str(copy),
                          "checkpoint": str(checkpoint_of(copy)), "max_length": max_length})
        del blob
    return plan, tasks_cur, tasks_ref


def plan_fresh(scratch: Path, cur_root: Path, fresh_steps: int) -> tuple[list[dict], list[dict]]:
    """The fresh trainings' tasks, the current code's and the reference code's, on a tiny dataset
    the current code certifies into ``scratch``."""
    fresh_data = scratch / "fresh-data"
    made = subprocess.run([str(Path(sys.executable).parent / "certify"), *FRESH_DATA, "--out",
                           str(fresh_data), "--store", str(scratch / "fresh-store.sqlite")], cwd=ROOT,
                          env={**os.environ, "PYTHONPATH": str(cur_root), "OMP_NUM_THREADS": "1"},
                          capture_output=True, text=True)
    if made.returncode != 0:
        raise click.ClickException(f"certify of the fresh runs' dataset failed: {made.stderr[-300:]}")
    tasks_cur, tasks_ref = [], []
    for j, (kind, arch, objective) in enumerate(FRESH):
        for label, tasks in (("current", tasks_cur), ("reference", tasks_ref)):
            tasks.append({"id": f"fresh-{j}", "do": "train", "kind": kind, "resume": False,
                          "out": str(scratch / f"fresh-{label}-{j}"), "max_length": None,
                          "config": fresh_config(kind, arch, objective, fresh_data, fresh_steps)})
    return tasks_cur, tasks_ref


def judge_runs(plan: list[tuple[dict, dict | None]], by_id: dict, scratch: Path, steps: int,
               max_length: int | None) -> list[dict]:
    """Each run's entry with its re-evaluation set against its report and its two resumes compared."""
    from tracker.bits import compare_figures

    results = []
    for i, (entry, report) in enumerate(plan):
        ev = by_id["current"][f"eval-{i}"]
        figures = ORACLE_FIGURES if entry["kind"] == "oracle" else TRACKER_FIGURES
        if "error" in ev:
            evaluation = {"verdict": "error", "error": ev["error"]}
        elif report is None:
            evaluation = {"verdict": "no report"}
        else:
            reported = report.get("exact") or report.get("accuracy") or {}
            left_out = sorted(int(n) for n in reported if int(n) not in ev["figures"]["lengths"])
            evaluation = compare_figures(report, ev["figures"], figures, max_length if left_out else None)
            evaluation.update(lengths=ev["figures"]["lengths"], lengths_left_out=left_out)
        evaluation["restricted_to"] = max_length if evaluation.get("lengths_left_out") else None
        evaluation["seconds"] = ev["seconds"]
        entry["evaluation"] = evaluation
        entry["resume"] = resumed(scratch, f"resume-{{}}-{i}", by_id, f"resume-{i}")
        entry["resume"]["steps"] = [entry["step"], entry["step"] + steps]
        results.append(entry)
    return results


def judge_fresh(by_id: dict, scratch: Path, fresh_steps: int) -> tuple[list[dict], str | None]:
    """The fresh trainings' two checkpoints and two reports compared, and their dataset's identity."""
    from tracker.bits import compare_figures

    fresh_results = []
    for j, (kind, arch, objective) in enumerate(FRESH):
        row = {"kind": kind, "arch": arch, "objective": objective, "steps": fresh_steps,
               **resumed(scratch, f"fresh-{{}}-{j}", by_id, f"fresh-{j}")}
        if row["verdict"] != "error":
            a, b = (json.loads((scratch / f"fresh-{label}-{j}" / "report.json").read_text())
                    for label in ("current", "reference"))
            row["report_figures"] = compare_figures(
                b, a, ORACLE_FIGURES if kind == "oracle" else TRACKER_FIGURES, None)["verdict"]
        fresh_results.append(row)
    dataset_id = None
    if fresh_results and fresh_results[0]["verdict"] != "error":
        identity = load_blob(checkpoint_of(scratch / "fresh-current-0"))["identity"]
        dataset_id = identity["dataset"]["dataset_id"]
    return fresh_results, dataset_id


def check(runs: list[Path], reference: str, current: str, steps: int, max_length: int | None, fresh: bool,
          fresh_steps: int, quiet: bool) -> dict:
    """The whole check: ``runs`` re-evaluated and resumed by both codes, the fresh trainings when
    ``fresh``, in worktrees of a scratch directory removed at the end; the results as written."""
    import torch

    ref_commit = git("rev-parse", "--verify", f"{reference}^{{commit}}")
    state = checkout_state()
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="reproduce-") as tmp:
        scratch = Path(tmp)
        with worktree(ref_commit, scratch / "reference") as ref_root, \
                (worktree(git("rev-parse", "--verify", f"{current}^{{commit}}"), scratch / "current")
                 if current != "checkout" else _here()) as cur_root:
            plan, tasks_cur, tasks_ref = plan_runs(runs, steps, max_length, scratch)
            if fresh:
                fresh_cur, fresh_ref = plan_fresh(scratch, cur_root, fresh_steps)
                tasks_cur, tasks_ref = tasks_cur + fresh_cur, tasks_ref + fresh_ref
            answers = {"current": run_worker(cur_root, tasks_cur, scratch, "current", quiet),
                       "reference": run_worker(ref_root, tasks_ref, scratch, "reference", quiet)}
            by_id = {label: {a["id"]: a for a in got} for label, got in answers.items()}
            results = judge_runs(plan, by_id, scratch, steps, max_length)
            fresh_results, dataset_id = judge_fresh(by_id, scratch, fresh_steps) if fresh else ([], None)
    return {
        "what": "registered runs re-evaluated by the current code against their reports, and resumed and trained "
                "afresh by the current code and by the reference commit's, compared weight for weight",
        "reference": {"rev": reference, "commit": ref_commit},
        "current": {"code": "the checkout as it stands (uncommitted edits included)" if current == "checkout"
                    else f"commit {current}", **state,
                    "commit": state["head"] if current == "checkout" else git("rev-parse", current)},
        "torch_version": torch.__version__, "torch_threads": 1, "python": platform.python_version(),
        "machine": platform.machine(),
        "resume_steps": steps, "max_length": max_length,
        "evaluation_note": (None if max_length is None else
                            f"evaluated and compared on the splits up to {max_length} events only; the oracle's "
                            "figures pooled to 1,024 events are left out"),
        "runs": results,
        "fresh": {"dataset": {"certify": " ".join(FRESH_DATA), "dataset_id": dataset_id},
                  "steps": fresh_steps, "runs": fresh_results} if fresh else None,
        "seconds": round(time.perf_counter() - started, 1),
    }


@contextmanager
def _here():
    yield ROOT


def resumed(scratch: Path, pattern: str, by_id: dict, task_id: str) -> dict:
    """The two codes' checkpoints of one training task, compared."""
    errors = {label: by_id[label][task_id]["error"] for label in ("current", "reference")
              if "error" in by_id[label][task_id]}
    seconds = {label: by_id[label][task_id]["seconds"] for label in ("current", "reference")}
    if errors:
        return {"verdict": "error", "errors": errors, "seconds": seconds}
    from tracker.bits import compare_checkpoints

    a, b = (load_blob(checkpoint_of(scratch / pattern.format(label))) for label in ("current", "reference"))
    return {**compare_checkpoints(a, b), "seconds": seconds}


# ---- output ------------------------------------------------------------------------------------

def rows(results: dict) -> list[list[str]]:
    out = []
    for r in results["runs"]:
        ev, res = r["evaluation"], r["resume"]
        limit = f" (to {ev['restricted_to']})" if ev.get("restricted_to") else ""
        total = ev.get("figures", 0)
        figures = f"{ev['verdict']}, {total - ev.get('mismatched', 0)}/{total} figures{limit}"
        tensors = sum(p["tensors"] for p in res.get("parts", {}).values())
        out.append([f"`{r['run']}`", r["kind"], f"{r['step']:,}", figures,
                    f"{res['verdict']} ({tensors} tensors, steps {res['steps'][0]:,}→{res['steps'][1]:,})"])
    for f in (results.get("fresh") or {}).get("runs", []):
        tensors = sum(p["tensors"] for p in f.get("parts", {}).values())
        out.append([f"fresh {f['arch']} {f['objective']}", f["kind"], f"0→{f['steps']}",
                    f"reports {f.get('report_figures', '-')}", f"{f['verdict']} ({tensors} tensors)"])
    return out


def markdown_table(results: dict) -> str:
    header = ["run", "kind", "step", "re-evaluated against its report", "weights: current vs reference code"]
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(row) + " |" for row in rows(results)]
    return "\n".join(lines)


@click.group(invoke_without_command=True, context_settings={"help_option_names": ["-h", "--help"]})
@click.pass_context
def cli(ctx) -> None:
    """Check that registered runs still load, re-evaluate to their reports' figures and resume to
    the bits of a reference commit's code (see the module's docstring)."""
    if ctx.invoked_subcommand is None:
        click.echo(ctx.get_help())


@cli.command("run")
@click.argument("runs", nargs=-1, type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option("--reference", default=REFERENCE, show_default=True, help="The commit whose code is the reference.")
@click.option("--current", default="checkout", show_default=True,
              help="The code under test: checkout (this checkout as it stands) or a commit.")
@click.option("--steps", type=click.IntRange(1), default=20, show_default=True,
              help="Steps each run is resumed for.")
@click.option("--max-length", type=click.IntRange(0), default=256, show_default=True,
              help="Evaluate and compare the splits up to this many events (0: every split).")
@click.option("--fresh/--no-fresh", default=True, show_default=True,
              help="Also train short runs from scratch with both codes on a tiny dataset certified for them.")
@click.option("--fresh-steps", type=click.IntRange(1), default=40, show_default=True)
@click.option("--out", type=click.Path(path_type=Path), default=Path("results/reproduce.json"), show_default=True)
@click.option("--quiet", is_flag=True)
def run_command(runs: tuple[Path, ...], reference: str, current: str, steps: int, max_length: int, fresh: bool,
                fresh_steps: int, out: Path, quiet: bool) -> None:
    """Check RUNS (default: the registered runs named in the module) against --reference."""
    if shutil.which("git") is None:
        raise click.ClickException("git is needed (the reference code is a worktree of the repository)")
    runs = [Path(r) for r in runs] or [ROOT / r for r in REGISTERED if checkpoint_of(ROOT / r).is_file()]
    for run in runs:
        if not checkpoint_of(run).is_file():
            raise click.UsageError(f"{run}: no {checkpoint_of(run).name}")
    results = check(runs, reference, current, steps, max_length or None, fresh, fresh_steps, quiet)
    results["command"] = ("python -m benchmarks.reproduce_check run " + " ".join(relative(r) for r in runs)
                          + f" --reference {reference} --current {current} --steps {steps} --max-length {max_length}"
                          + ("" if fresh else " --no-fresh") + f" --fresh-steps {fresh_steps}")
    from chains.files import write_bytes_atomic  # the parent's code (a worker imports another commit's)

    out.parent.mkdir(parents=True, exist_ok=True)
    write_bytes_atomic(out, (json.dumps(results, indent=2) + "\n").encode())
    click.echo(markdown_table(results))
    click.echo(f"wrote {relative(out)}")


@cli.command("table")
@click.argument("results", type=click.Path(dir_okay=False, path_type=Path), default=Path("results/reproduce.json"))
def table_command(results: Path) -> None:
    """Print the Markdown table of a results file (default: the checkout's results/reproduce.json)."""
    path = results if results.is_file() or results.is_absolute() else ROOT / results
    if not path.is_file():
        raise click.UsageError(f"{results}: no such results file")
    click.echo(markdown_table(json.loads(path.read_text())))


@cli.command("_worker", hidden=True)
@click.argument("spec", type=click.Path(exists=True, dir_okay=False, path_type=Path))
def worker_command(spec: Path) -> None:
    worker(spec)


if __name__ == "__main__":
    cli()

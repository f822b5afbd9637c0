"""One run of a batch or grid as data: what to train and where it lives, and the body that finds
it finished, resumes it or trains it. The same body runs in the driver's process, in a worker
process, or as a task on a cluster node (``tracker.cluster``), so a run's directory is its only
state: a finished run (its report.json with the same settings) is never trained again, and an
unfinished one continues from its checkpoint, bit for bit as if it had never stopped (batches
are drawn from the run's seed and the step).

A cluster task runs any ``Run``: an object naming its directory (``out``) with a ``run`` method.
``RunSpec`` is the tracker's; a package built on the tracker (the oracle) brings its own, with
its own config and training function, and the task needs to know nothing of it.
"""
from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Protocol

import torch

from tracker.evaluate import EvalConfig
from tracker.stopping import StopConfig
from tracker.checkpoint import CHECKPOINT, load_checkpoint
from tracker.config import TrainConfig
from tracker.train import config_from_checkpoint, train


class Run(Protocol):
    """One run of a batch, as a cluster task receives it (pickled to the node)."""

    out: str  # the run's directory; on a cluster, a path every node reaches (shared storage)

    def run(self, device: torch.device | str = "cpu", quiet: bool = True, threads: int | None = None) -> dict:
        """The run's report: found finished in ``out``, else trained (or resumed) there on ``device``."""
        ...


@dataclass(frozen=True)
class RunSpec:
    config: TrainConfig  # what is trained
    out: str  # the run's directory; on a cluster, a path every node reaches (shared storage)
    eval_config: EvalConfig = EvalConfig()  # the evaluation after training
    stop: StopConfig = StopConfig()  # stop-when-exact checks (none by default)

    def run(self, device: torch.device | str = "cpu", quiet: bool = True, threads: int | None = None) -> dict:
        return run_spec(self, device, quiet, threads)


def same_settings(stored: dict, config) -> bool:
    """A report's stored config is ``config`` (a config dataclass); a setting added to the
    dataclass after the run counts at its default (which is what the run trained with)."""
    current, defaults = asdict(config), asdict(type(config)())
    return set(stored) <= set(current) and all(stored.get(k, defaults[k]) == v for k, v in current.items())


def finished_report(config, out: Path, recorded: Sequence[dict] = ()) -> dict | None:
    """The report of a run finished earlier with exactly the settings ``config``: the one in its
    directory ``out``, else one of ``recorded`` (the runs a collection wrote to the results file,
    which a fresh checkout has without the runs directory); None when there is neither."""
    path = Path(out) / "report.json"
    if path.is_file():
        report = json.loads(path.read_text())
        if same_settings(report.get("config", {}), config):
            return report
    return next((report for report in recorded if same_settings(report.get("config", {}), config)), None)


def finished_or_trained(config, out: Path, train: Callable[..., dict], config_from_checkpoint: Callable[[dict], object],
                        quiet: bool, threads: int | None, **train_options) -> dict:
    """One run: its finished report, else ``train(config, out, ...)``, resumed from the checkpoint
    in ``out`` when that checkpoint's settings are ``config`` (``config_from_checkpoint`` reads
    them). ``train`` is any training function of the tracker's signature (the tracker's, the
    oracle's); ``threads``: torch threads for this process (None leaves them)."""
    if threads is not None:
        torch.set_num_threads(threads)
    out = Path(out)
    report = finished_report(config, out)
    if report is not None:
        return report
    checkpoint = out / CHECKPOINT
    resume = checkpoint.is_file() and config_from_checkpoint(load_checkpoint(checkpoint)) == config
    return train(config, out, resume=resume, show_progress=not quiet, **train_options)


def run_spec(spec: RunSpec, device: torch.device | str = "cpu", quiet: bool = True,
             threads: int | None = None) -> dict:
    """The report of ``spec``: its finished report, else trained on ``device``, resumed from the
    checkpoint in its directory when that checkpoint holds these settings. ``threads``: torch
    threads for this process (None leaves them)."""
    return finished_or_trained(spec.config, Path(spec.out), train, config_from_checkpoint, quiet, threads,
                               eval_config=spec.eval_config, stop=spec.stop, device=device)

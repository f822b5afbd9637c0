"""One run of a batch or grid, whatever trains it: its finished report, else trained or resumed in
its directory. A run's directory is its only state, so the same body runs in the driver, in a
worker process or on a cluster node (``training.cluster``); the tracker's runs are
``tracker.grid.RunSpec``, the oracle's ``oracle.grid.OracleRunSpec``.
"""
from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from dataclasses import asdict
from pathlib import Path
from typing import Protocol

import torch

from training.checkpoint import CHECKPOINT, load_checkpoint


class Run(Protocol):
    """One run of a batch, as a cluster task receives it (pickled to the node)."""

    out: str  # the run's directory; on a cluster, a path every node reaches (shared storage)

    def run(self, device: torch.device | str = "cpu", quiet: bool = True, threads: int | None = None) -> dict:
        """The run's report: found finished in ``out``, else trained (or resumed) there on ``device``."""
        ...

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
                        quiet: bool, threads: int | None, fresh: bool = False, **train_options) -> dict:
    """One run: its finished report, else ``train(config, out, ...)``, resumed from the checkpoint
    in ``out`` when that checkpoint's settings are ``config`` (``config_from_checkpoint`` reads
    them). ``train`` is any training function of the tracker's signature (the tracker's, the
    oracle's); ``threads``: torch threads for this process (None leaves them). A ``fresh`` run is
    trained from step 0 whatever ``out`` holds (a timing benchmark's: the time is what it measures);
    ``train`` refuses to replace an unfinished run or one of other settings."""
    if threads is not None:
        torch.set_num_threads(threads)
    out = Path(out)
    if fresh:
        return train(config, out, show_progress=not quiet, force=True, **train_options)
    report = finished_report(config, out)
    if report is not None:
        return report
    checkpoint = out / CHECKPOINT
    resume = checkpoint.is_file() and config_from_checkpoint(load_checkpoint(checkpoint)) == config
    return train(config, out, resume=resume, show_progress=not quiet, **train_options)

"""One run of a batch or grid as data: what to train and where it lives, and the body that finds
it finished, resumes it or trains it. The same body runs in the driver's process, in a worker
process, or as a task on a cluster node (``training.cluster``), so a run's directory is its only
state: a finished run (its report.json with the same settings) is never trained again, and an
unfinished one continues from its checkpoint, bit for bit as if it had never stopped (batches
are drawn from the run's seed and the step).

A cluster task runs any ``Run``: an object naming its directory (``out``) with a ``run`` method.
``RunSpec`` is the tracker's; a package built on the tracker (the oracle) brings its own, with
its own config and training function, and the task needs to know nothing of it.
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import torch

from tracker.config import TrainConfig
from tracker.evaluate import EvalConfig
from tracker.stopping import StopConfig
from tracker.train import config_from_checkpoint, train
from training.grid import finished_or_trained


@dataclass(frozen=True)
class RunSpec:
    config: TrainConfig  # what is trained
    out: str  # the run's directory; on a cluster, a path every node reaches (shared storage)
    eval_config: EvalConfig = EvalConfig()  # the evaluation after training
    stop: StopConfig = StopConfig()  # stop-when-exact checks (none by default)
    fresh: bool = False  # trained from step 0 whatever its directory holds: a timing benchmark's run

    def run(self, device: torch.device | str = "cpu", quiet: bool = True, threads: int | None = None) -> dict:
        return run_spec(self, device, quiet, threads)


def run_spec(spec: RunSpec, device: torch.device | str = "cpu", quiet: bool = True,
             threads: int | None = None) -> dict:
    """The report of ``spec``: its finished report, else trained on ``device``, resumed from the
    checkpoint in its directory when that checkpoint holds these settings (a ``fresh`` spec:
    trained from step 0). ``threads``: torch threads for this process (None leaves them)."""
    return finished_or_trained(spec.config, Path(spec.out), train, config_from_checkpoint, quiet, threads,
                               fresh=spec.fresh, eval_config=spec.eval_config, stop=spec.stop, device=device)

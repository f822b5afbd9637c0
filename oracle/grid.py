"""One oracle run of a batch as data, the oracle's ``training.grid.Run``: what to train (an
``OracleConfig``), where it lives, and how it is evaluated. Its ``run`` is the tracker's body (a
finished run is reused, an unfinished one resumes from its checkpoint) with the oracle's training,
so the same run trains in the driver's process, in a worker process, or as a task on a cluster
node (``training.cluster``, which knows nothing of the oracle).
"""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import torch

from oracle.evaluate import OracleEvalConfig
from oracle.train import OracleConfig, config_from_checkpoint, train
from training.grid import finished_or_trained


@dataclass(frozen=True)
class OracleRunSpec:
    config: OracleConfig  # what is trained
    out: str  # the run's directory; on a cluster, a path every node reaches (shared storage)
    eval_config: OracleEvalConfig = OracleEvalConfig()  # the evaluation after training

    def run(self, device: torch.device | str = "cpu", quiet: bool = True, threads: int | None = None) -> dict:
        """The run's report: found finished in ``out``, else trained on ``device`` (resumed from the
        checkpoint there when it holds these settings). ``threads``: torch threads for this
        process (None leaves them)."""
        return finished_or_trained(self.config, Path(self.out), train, config_from_checkpoint, quiet, threads,
                                   eval_config=self.eval_config, device=device)

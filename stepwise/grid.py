"""One step-by-step run of a batch as data, a ``training.grid.Run``: what to train (a
``StepwiseConfig``), where it lives, how it is evaluated. Its ``run`` finds the run finished, or
trains it (resumed from the checkpoint in its directory when that holds these settings), in the
driver's process or a worker's, as the tracker's and the oracle's runs do."""
from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import torch

from stepwise.config import StepwiseConfig
from stepwise.evaluate import StepwiseEvalConfig
from stepwise.train import config_from_checkpoint, train
from training.grid import finished_or_trained


@dataclass(frozen=True)
class StepwiseRunSpec:
    config: StepwiseConfig  # what is trained
    out: str  # the run's directory
    eval_config: StepwiseEvalConfig = StepwiseEvalConfig()  # the free-running evaluation after training

    def run(self, device: torch.device | str = "cpu", quiet: bool = True, threads: int | None = None) -> dict:
        """The run's report (see the module); ``threads``: torch threads for this process (None leaves them)."""
        return finished_or_trained(self.config, Path(self.out), train, config_from_checkpoint, quiet, threads,
                                   eval_config=self.eval_config, device=device)

"""Runs of a batch or grid as Ray tasks on the nodes of a cluster (``--cluster``).

Each run is one task: one GPU where the cluster has GPUs (and the device asked for is not the
CPU), else one CPU, and always one torch thread. A task works in the driver's working directory,
so the datasets and run directories the driver names (relative or absolute) must be on storage
every node reaches at the same path. The task's body is the run's own ``run`` (a
``training.grid.Run``: the tracker's ``RunSpec``, or a run of a package built on the tracker, such
as the oracle's ``OracleRunSpec``): a finished run is returned as it is, an unfinished one resumes
from the checkpoint in its directory. A task whose worker or node dies is retried by Ray
(TASK_RETRIES times) and so continues from the last checkpoint the dead one wrote, to the same
bits. Reports come back to the driver, which alone
writes the results. Ray is imported only here, and this module only when a cluster is asked for.
"""
from __future__ import annotations

import os
import socket
from collections.abc import Hashable, Iterator, Mapping

import ray
import torch

# Joining the cluster, its error (the drivers catch it from here) and the retries are the
# certification's: one way to reach a cluster for the whole package.
from leanbridge.cluster import TASK_RETRIES, ClusterError, connect  # noqa: F401
from training.device import resolve_device
from training.grid import Run


def train_on_node(spec: Run, device: str, cwd: str) -> dict:
    """The body of a task: ``spec`` at one torch thread on this node's ``device`` (a spec such as
    ``auto``; Ray shows a task its own GPU as cuda:0), working in the driver's directory ``cwd``."""
    node = socket.gethostname()
    if not os.path.isdir(cwd):
        raise ClusterError(f"node {node}: the driver's working directory {cwd} is not here; run the driver "
                           "from storage every node reaches")
    os.chdir(cwd)
    torch.set_num_threads(1)
    return spec.run(resolve_device(device), quiet=True)


class RayRuns:
    """Runs sent to the cluster at ``address``, on ``device`` (resolved on each node)."""

    def __init__(self, address: str, device: str = "auto") -> None:
        connect(address)
        self.device = device
        has_gpus = ray.cluster_resources().get("GPU", 0) >= 1
        self.gpus = 1 if has_gpus and device.strip().lower() != "cpu" else 0
        self._task = ray.remote(num_cpus=1, num_gpus=self.gpus, max_retries=TASK_RETRIES,
                                retry_exceptions=False)(train_on_node)

    def reports(self, specs: Mapping[Hashable, Run]) -> Iterator[tuple[Hashable, dict]]:
        """(key, report) for each of ``specs`` as its task finishes; ClusterError, naming the run,
        when one fails (the others are then cancelled)."""
        cwd = os.getcwd()
        pending = {self._task.remote(spec, self.device, cwd): (key, spec) for key, spec in specs.items()}
        try:
            while pending:
                done, _ = ray.wait(list(pending), num_returns=1)
                key, spec = pending.pop(done[0])
                try:
                    report = ray.get(done[0])
                except ray.exceptions.RayTaskError as e:  # the run itself failed: its own error, on one line
                    cause = e.cause if getattr(e, "cause", None) is not None else e
                    raise ClusterError(f"run {spec.out} failed on the cluster: {' '.join(str(cause).split())}") from e
                except ray.exceptions.RayError as e:
                    raise ClusterError(f"run {spec.out} failed on the cluster after {TASK_RETRIES} retries: "
                                       f"{' '.join(str(e).split())[:300]}") from e
                yield key, report
        finally:  # a failure, or the consumer stopped early: stop the rest
            for ref in pending:
                ray.cancel(ref, force=True)

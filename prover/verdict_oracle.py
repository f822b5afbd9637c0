"""What the ``oracle`` searcher needs of a verdict oracle: for each history (a start state, the
goal, and the events taken since the start), the probability that Lean accepts each candidate
event next."""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from prover.imagination import Event, State

if TYPE_CHECKING:  # torch is imported only when an oracle is loaded
    import torch


class VerdictOracle(Protocol):
    def score(self, histories: Sequence[tuple[State, State, Sequence[Event]]],
              candidates: Sequence[Sequence[Event]]) -> list[list[float]]:
        """``result[i][j]``: P(Lean accepts ``candidates[i][j]`` after ``histories[i]`` =
        (start, goal, events))."""
        ...

    def describe(self) -> dict:
        """The oracle's identity for reports (run directory, arm, seed, dataset)."""
        ...


class OracleUnavailable(Exception):
    """The oracle run cannot be loaded; the message is one line for the user."""


def load_oracle(run: Path, data: Path, device: torch.device | str = "cpu") -> VerdictOracle:
    """A finished ``train-oracle`` run as the searcher's verdict oracle, reading and scoring on
    ``device``; OracleUnavailable (one line) when the run is missing, is not a checkpoint, is a
    transformer (the scorer reads arms with a slot or none) or was trained on another dataset
    than ``data``."""
    from chains.manifest import DatasetError, read_manifest, trained_elsewhere
    from oracle.scorer import TrainedOracle
    from training.checkpoint import RunUnavailable

    run, data = Path(run), Path(data)
    if not run.is_dir():
        raise OracleUnavailable(f"oracle {run}: no such run directory; train one with "
                                f"`train-oracle --objective combo --out {run}`")
    try:
        oracle = TrainedOracle(run, device)
        manifest = read_manifest(data)
    except RunUnavailable as e:  # its line names the run already
        raise OracleUnavailable(str(e)) from None
    except (DatasetError, KeyError, ValueError) as e:
        raise OracleUnavailable(f"oracle {run}: {e}") from None
    elsewhere = trained_elsewhere(oracle.identity, manifest)
    if elsewhere is not None:
        raise OracleUnavailable(f"oracle {run} was trained on another dataset ({elsewhere}), not {data}")
    return oracle


def load_planner(run: Path, data: Path, device: torch.device | str = "cpu"):
    """A finished recurrence ``train-oracle`` run as the ``oracle-imagination`` searcher's
    planner (``oracle.scorer.LatentPlanner``) on ``device``; OracleUnavailable (one line) as
    ``load_oracle``, and for a run that is no recurrence or holds no comparison threshold."""
    from oracle.scorer import LatentPlanner

    oracle = load_oracle(run, data, device)
    try:
        return LatentPlanner(oracle)
    except ValueError as e:
        raise OracleUnavailable(str(e)) from None

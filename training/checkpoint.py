"""A run directory's checkpoint, and the one way a run is brought back from it: for training on
(a trainer's ``--resume``), for evaluation (the benchmarks) and for use (``tracker.load_run``,
``oracle.load_run``, the prover's scorer), the tracker's runs and the oracle's alike.

``Checkpoint.of_run`` reads a run's checkpoint and the settings it trained with;
``Checkpoint.to_continue`` reads it for a run about to continue with given settings (refused, in
one line, when they or the dataset differ other than by more steps); ``Checkpoint.restore``
builds a trainer from it (the tracker's ``tracker.train.Trainer`` or the oracle's
``oracle.train.OracleTrainer``) on a dataset and loads its weights, optimiser state and step.
``RunCheckpoint`` is a run as the loaders (``load_run``, the prover's scorer) read it: its
settings, the identity of the dataset it was trained on, and (``restored_model``) the model they
build, with the checkpoint's weights loaded; ``refuse_replacing`` keeps a fresh run from
replacing a run already there.
"""
from __future__ import annotations

import json
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass, fields, replace
from pathlib import Path
from typing import Any, TypeVar

import torch

from chains.files import OutputError
from chains.manifest import settings_differ
from training.files import UnreadableFile, load_torch_file

CHECKPOINT = "checkpoint.pt"  # a run directory's checkpoint, for every trainer and loader


class CheckpointError(ValueError):
    """A checkpoint that is missing or does not belong to this run."""


def load_checkpoint(path: Path) -> dict:
    """The checkpoint at ``path``: weights, settings and dataset identity, its tensors on the CPU
    whatever device it was made on. Loaded without running any code it may hold (torch's
    weights-only unpickler); CheckpointError when it is missing or is not a checkpoint."""
    if not path.is_file():
        raise CheckpointError(f"{path}: no checkpoint to resume from")
    try:
        # checkpoints record torch.__version__, a str subclass the weights-only unpickler must be told of
        blob = load_torch_file(path, allowed=(torch.torch_version.TorchVersion,), map_location="cpu")
    except UnreadableFile as e:
        raise CheckpointError(f"{path}: not a readable checkpoint ({e})") from None
    identity = blob.get("identity") if isinstance(blob, dict) else None
    dataset = identity.get("dataset") if isinstance(identity, dict) else None
    if not (isinstance(dataset, dict) and isinstance(dataset.get("dataset_id"), str)
            and isinstance(blob.get("config"), dict) and isinstance(blob.get("model"), dict)):
        raise CheckpointError(f"{path}: not a train-tracker checkpoint (no settings, weights or dataset identity)")
    return blob


Config = TypeVar("Config")  # a frozen config dataclass: tracker.config.TrainConfig or oracle.config.OracleConfig
Trainer = TypeVar("Trainer")


def settings_from_checkpoint(blob: dict, kind: type[Config]) -> Config:
    """The ``kind`` config a checkpoint was trained with. Keys the dataclass does not have are
    dropped; a setting the checkpoint does not hold takes its default (what the run trained with)."""
    known = {f.name for f in fields(kind)}
    try:
        return kind(**{k: v for k, v in blob["config"].items() if k in known})
    except (TypeError, ValueError) as e:
        raise CheckpointError(f"the checkpoint's settings are not valid ({e})") from None


def trainer_of(settings: Iterable[str]) -> str:
    """The command whose settings have these names: an oracle's name the probe encoding's width, a
    step-by-step model's its depth, a tracker's neither."""
    names = set(settings)
    return "train-oracle" if "probe_width" in names else "train-stepwise" if "depth" in names else "train-tracker"


def written_by(blob: dict) -> str:
    """The command that wrote a checkpoint, ``train-oracle``, ``train-stepwise`` or
    ``train-tracker`` (an oracle's checkpoint also holds its verdict classes)."""
    config = blob.get("config") if isinstance(blob.get("config"), dict) else {}
    return "train-oracle" if "verdicts" in blob else trainer_of(config)


def refuse_other_trainer(blob: dict, kind: type[Config], where: str = "") -> None:
    """CheckpointError, in one line, when the checkpoint was written by another trainer than the one
    whose settings ``kind`` are: a tracker run where an oracle run is expected, or the like."""
    wanted = trainer_of(f.name for f in fields(kind))
    wrote = written_by(blob)
    if wrote != wanted:
        raise CheckpointError(f"{where}this is a {wrote} run, where a {wanted} run is expected")


def check_resumable(blob: dict, config: Config, dataset: dict, path: Path) -> Config:
    """The settings to continue the checkpoint ``blob`` (at ``path``) with: ``config`` itself, or,
    when ``config`` differs from the checkpoint's settings only by more ``steps``, the
    checkpoint's settings (the run is extended: see ``training.loop.extension``). CheckpointError,
    in one line, for any other difference, fewer steps, or another dataset."""
    stored = settings_from_checkpoint(blob, type(config))
    if stored != config and replace(stored, steps=config.steps) == config:
        if config.steps < stored.steps:
            raise CheckpointError(f"{path}: trained for {stored.steps} steps; --resume continues a run or extends "
                                  f"it with more steps, never fewer ({config.steps})")
        config = stored
    if stored != config:
        # more steps are allowed (an extension): only the settings that stop the resume are named
        extended = config.steps > stored.steps
        diff = [f"{f.name} {getattr(stored, f.name)!r} -> {getattr(config, f.name)!r}"
                for f in fields(config) if getattr(stored, f.name) != getattr(config, f.name)
                and not (extended and f.name == "steps")]
        raise CheckpointError(f"{path}: trained with other settings ({'; '.join(diff)})")
    if blob["identity"]["dataset"]["dataset_id"] != dataset["dataset_id"]:
        raise CheckpointError(f"{path}: trained on another dataset ({blob['identity']['dataset']['path']})")
    return config


@dataclass(frozen=True)
class Checkpoint:
    """A run's checkpoint and the settings to bring it back with."""

    path: Path  # the checkpoint file, <run>/checkpoint.pt
    blob: dict  # the checkpoint as ``load_checkpoint`` read it
    config: Any  # the settings: the run's own (``of_run``), or those it continues with (``to_continue``)

    @classmethod
    def of_run(cls, directory: Path | str, kind: type[Config]) -> Checkpoint:
        """The checkpoint of the run in ``directory`` with the ``kind`` config it trained with;
        CheckpointError when it is missing, is no checkpoint, another trainer wrote it or its
        settings are not valid."""
        path = Path(directory) / CHECKPOINT
        blob = load_checkpoint(path)
        refuse_other_trainer(blob, kind)
        return cls(path, blob, settings_from_checkpoint(blob, kind))

    @classmethod
    def to_continue(cls, directory: Path | str, config: Config, dataset: dict) -> Checkpoint:
        """The checkpoint of the run in ``directory``, to continue training with ``config`` on the
        dataset of identity ``dataset`` (``check_resumable``: an extension keeps its settings)."""
        path = Path(directory) / CHECKPOINT
        blob = load_checkpoint(path)
        refuse_other_trainer(blob, type(config), f"{directory}: ")
        return cls(path, blob, check_resumable(blob, config, dataset, path))

    @property
    def step(self) -> int:
        """The optimiser steps the run had done when the checkpoint was written."""
        return self.blob["step"]

    def restore(self, trainer: Callable[[Any, Any, torch.device | str], Trainer], data: Any,
                device: torch.device | str = "cpu") -> Trainer:
        """``trainer(config, data, device)`` (a ``training.loop.Optimised``) at the checkpoint's
        state: its weights, optimiser state, step and time; CheckpointError when they do not fit."""
        built = trainer(self.config, data, device)
        built.load(self.blob)
        return built


REPORT = "report.json"  # a finished run's report; a run directory holds one only beside the checkpoint it describes


def start_or_resume(trainer_class: type, config: Config, data: Any, out: Path, device: torch.device,
                    resume: bool, force: bool = False) -> tuple[Config, Any, int | None]:
    """A trainer of ``trainer_class`` for ``out``: fresh, or with ``resume`` restored from the run's
    checkpoint (an extension keeps its settings). Returns the settings it trains by, the trainer
    and the step it resumed from (None for a fresh run). A fresh run replaces no run at ``out``,
    finished or not, whatever its settings, unless ``force`` (``refuse_replacing``). Once the
    trainer stands, a report already in ``out`` is removed: the checkpoint is about to change, and
    the run writes its own report last, so an interrupted run leaves a checkpoint and no report
    that disagrees with it."""
    if not resume:
        refuse_replacing(out, asdict(config), resume, force, defaults=asdict(type(config)()), same_again=False)
        trainer = trainer_class(config, data, device)
        step = None
    else:
        checkpoint = Checkpoint.to_continue(out, config, data.identity["dataset"])
        trainer = checkpoint.restore(trainer_class, data, device)
        config, step = checkpoint.config, trainer.step
    (Path(out) / REPORT).unlink(missing_ok=True)
    return config, trainer, step


def refuse_replacing(out: Path, config: dict, resume: bool, force: bool, state: str = CHECKPOINT,
                     defaults: dict | None = None, same_again: bool = True) -> None:
    """A fresh run into ``out`` replaces no run made with other settings: OutputError naming what
    differs when ``out`` holds a finished run (its report.json) of another config, or an unfinished
    one (its ``state`` file and no report), unless ``resume`` (which continues it) or ``force``. A
    finished run of the same config is run again when ``same_again`` (an evaluation: the same bits
    at the same thread count), else refused too (a training run: its checkpoint is the user's
    work, and options outside ``config`` may differ). A setting that run's config does not hold
    counts at its value in ``defaults`` (what the run trained with)."""
    if resume or force:
        return
    report, checkpoint = Path(out) / REPORT, Path(out) / state
    if report.is_file():
        try:
            old = json.loads(report.read_text(encoding="utf-8")).get("config")
        except (OSError, ValueError, AttributeError):
            old = None
        new = json.loads(json.dumps(config, default=str))
        if isinstance(old, dict) and defaults is not None:
            old = {**json.loads(json.dumps({k: v for k, v in defaults.items() if k not in old}, default=str)), **old}
        if old == new:
            if same_again:
                return
            raise OutputError(f"{out} holds a finished run; --resume with more --steps extends it, --force replaces "
                              "it, or choose another --out")
        old = old if isinstance(old, dict) else {}
        differ = settings_differ(old, new)
        longer = ([k for k in new if old.get(k) != new[k]] == ["steps"] and isinstance(old.get("steps"), int)
                  and new["steps"] > old["steps"])
        raise OutputError(f"{out} holds a finished run made with other settings ({'; '.join(differ[:4])}"
                          f"{'; …' if len(differ) > 4 else ''}); choose another --out, or give --force to replace it"
                          f"{', or --resume to extend it' if longer else ''}")
    if checkpoint.is_file():
        raise OutputError(f"{out} holds an unfinished run ({state}, no report); --resume continues it, "
                          "--force starts it over")


class RunUnavailable(Exception):
    """No usable tracker at the given place; the message says why and what to do."""


@dataclass(frozen=True)
class RunCheckpoint:
    """A run's checkpoint as a loader reads it (``tracker.load_run``, ``oracle.load_run``, the
    prover's scorer): its settings (``config``), the identity of its dataset (``trained_on``) and
    its model with its weights loaded (``restored_model``). Every refusal is one RunUnavailable
    line naming the kind of run and its directory."""

    kind: str  # "tracker" or "oracle": the messages' subject, and the command that trains one (train-<kind>)
    run_dir: Path  # the run directory
    blob: dict  # the checkpoint as torch's weights-only unpickler read it
    config: Any  # the run's settings, as the checkpoint records them

    @classmethod
    def read(cls, directory: Path | str, kind: str, settings: type) -> RunCheckpoint:
        """The checkpoint of the ``train-<kind>`` run in ``directory`` and its ``settings`` (the
        kind's config class; ``training.checkpoint.Checkpoint.of_run``); RunUnavailable when there
        is no such directory or the checkpoint or its settings cannot be read."""
        run_dir = Path(directory)
        if not run_dir.is_dir():
            raise RunUnavailable(f"{kind} {run_dir}: no such run directory; train one with "
                                 f"`train-{kind} --out {run_dir}`")
        try:
            checkpoint = Checkpoint.of_run(run_dir, settings)
        except (CheckpointError, KeyError, TypeError, ValueError) as e:
            raise RunUnavailable(f"{kind} {run_dir}: {e}") from None
        return cls(kind, run_dir, checkpoint.blob, checkpoint.config)

    @property
    def trained_on(self) -> dict:
        """The identity of the dataset the run was trained on (``load_checkpoint`` checked that it is there)."""
        return self.blob["identity"]["dataset"]

    def restored_model(self, build: Callable[[], torch.nn.Module], misfit: str,
                       errors: tuple[type[Exception], ...]) -> torch.nn.Module:
        """The run's model: ``build()`` (the kind's model for the run's settings, on the CPU) with
        the checkpoint's weights loaded, in evaluation mode. Any of ``errors`` raised while it is
        built or its weights are loaded becomes RunUnavailable, ``misfit`` and the error (``fitting``)."""
        with self.fitting(misfit, errors):
            model = build()
            model.load_state_dict(self.blob["model"])
        return model.eval()

    @contextmanager
    def fitting(self, misfit: str, errors: tuple[type[Exception], ...]) -> Iterator[None]:
        """Around building the model from the checkpoint and loading its weights: any of ``errors``
        becomes RunUnavailable, ``misfit`` followed by the error squeezed to one short line.
        Each kind names the errors its own checkpoints raise when they do not fit."""
        try:
            yield
        except errors as e:
            raise RunUnavailable(f"{self.kind} {self.run_dir}: {misfit} ({' '.join(str(e).split())[:160]})") from None

    def identity(self, trained_on: dict, **extra: Any) -> dict:
        """What ``describe`` reports: the kind, the run, its architecture, objective, seed and
        steps, then ``extra`` (the oracle's threshold), then the dataset it was trained on."""
        config = self.config
        return {"kind": self.kind, "run": str(self.run_dir), "arch": config.arch, "objective": config.objective,
                "seed": config.seed, "steps": self.blob.get("step"), **extra, "trained_on": trained_on}

"""Training an oracle arm on probe verdicts, with checkpoints that survive Ctrl-C and kills.

One step: sample B training chains (with their K certified partners for ``combo`` and
``nerode``), run the histories through the arm, and take the cross-entropy of every probe's
verdict class against Lean's. ``combo`` adds the tracker's NextLat and invariance terms on the
carried state, with the tracker's schedules. ``nerode`` adds to those the distinction half, the
Nerode metric loss on inequivalent pairs of probed states whose targets come from the
verdicts themselves, and the comparison's own pairs (each accepted probe's imagined successor
against the goal read as a start: one state when Lean said complete, two otherwise;
``oracle.losses``). The switch (the fraction of steps NextLat and
invariance are held at zero, so that they act only once a representation exists) is their
delays. Batches come from a generator seeded by (seed, step), so a resumed run sees exactly the
batches the uninterrupted one would have. The optimiser's settings, the loop, its checkpoints
and its stop requests are the tracker's (``training.loop``). After training, the threshold of
complete-by-comparison is chosen on validation chains (``oracle.compare``) and stored with the run.
"""
from __future__ import annotations

import json
import time
from dataclasses import asdict, replace
from pathlib import Path

import torch

from chains.files import staged_files
from chains.version import package_version
from oracle.compare import reading, same_domain
from oracle.config import OracleConfig
from oracle.data import OracleData, ProbeBatch, load_probe_dataset, sample_probe_batch
from oracle.evaluate import OracleEvalConfig, evaluate
from oracle.losses import SkeletonPool, verdict_losses
from oracle.model import Oracle
from tracker.losses import NextLatHead
from training.checkpoint import CHECKPOINT, settings_from_checkpoint, start_or_resume
from training.device import cpu_kernels, resolve_device
from training.files import save_atomic
from training.loop import Optimised, descend, extension, lr_at, train_loop
from training.runlog import LogConfig, RunLog

class OracleTrainer(Optimised):
    """The arm, the NextLat head and the optimiser, and one step of the chosen objective, on
    ``device`` (the data, the model, every batch and loss, and the step's random generator live there)."""

    def __init__(self, config: OracleConfig, data: OracleData, device: torch.device | str = "cpu") -> None:
        self.device = torch.device(device)
        refuse_unservable(config, data)
        self.config, self.data = config, data.to(self.device)
        torch.manual_seed(config.seed)
        # built from the CPU's generator and then moved: the same initial weights on every device
        tree_shape = None if data.tracker is None else config.tree_shape(data.tracker.vocab.n_out, data.tracker.tree_len)
        self.model = Oracle(replace(config.model, embedding=data.embedding), data.item_tokens, data.probe_tokens,
                            data.vocab_size, len(data.verdicts), tree_shape).to(self.device)
        self.nextlat_head = NextLatHead(config.width).to(self.device) if "nextlat" in config.terms else None
        self.optimise(config)
        self.comparison: dict | None = None  # the comparison's threshold and where it was chosen, once chosen
        self.skeletons = None  # nerode with completion negatives: the training trees by skeleton
        if config.completion_negatives and self.data.tracker is not None:
            train, vocab = self.data.train, self.data.tracker.vocab
            first_atom = vocab.n_out - len(vocab.atoms)  # output ids: PAD, the operators, then the atoms
            self.skeletons = SkeletonPool(torch.cat([train["truth_items"].reshape(-1), train["goal_items"]]).long(),
                                          self.data.item_tokens, range(first_atom, vocab.n_out))

    def losses(self, batch: ProbeBatch, step: int, generator: torch.Generator | None = None
               ) -> dict[str, torch.Tensor]:
        """The step's loss terms (``oracle.losses.verdict_losses``)."""
        return verdict_losses(self.config, self.model, self.nextlat_head, self.data, self.skeletons, batch, step,
                              generator)

    def train_step(self, step: int, lr: float | None = None) -> dict[str, float]:
        """One optimiser step at the schedule's learning rate, or at ``lr`` when given."""
        # the step's generator, on the device: the batch and the metric loss's pairs are drawn
        # from it, so a resumed run repeats the straight one
        generator = torch.Generator(device=self.device).manual_seed(self.config.seed * 1_000_003 + step)
        batch = sample_probe_batch(self.data, self.config.batch_chains, bool(self.config.terms), generator)
        return descend(self.optimizer, self.params, self.losses(batch, step, generator),
                       lr_at(self.config, step) if lr is None else lr, self.config.grad_clip)

    def checkpoint(self) -> dict:
        """Weights, optimiser state (on the CPU; ``device`` says where it trained), settings,
        dataset identity, what a reader needs to encode inputs, and the comparison's threshold."""
        return {**self.training_state(), "config": asdict(self.config), "identity": self.data.identity,
                "verdicts": list(self.data.verdicts), "kinds": list(self.data.kinds), "comparison": self.comparison,
                **self.data.encoding}


def refuse_unservable(config: OracleConfig, data: OracleData) -> None:
    """ValueError, in one line saying why, for an arm or objective the dataset cannot serve."""
    mathlib = data.tracker is None
    if config.terms and data.train["partner_items"].shape[1] == 0:
        why = ("a Mathlib probe dataset has no certified partners (equivalent proofs)" if mathlib
               else "the dataset has none")
        raise ValueError(f"the {config.objective} objective needs certified partners for its invariance term: "
                         f"{why}; train with --objective plain")
    if config.tree_weight and mathlib:
        raise ValueError("the tree term reads the certified tree at every step, and a Mathlib probe record holds only "
                         "the initial proof state; train with --tree-weight 0")
    if config.arch == "truth" and mathlib:
        raise ValueError("the truth arm is handed the true proof state at every step, and a Mathlib probe record "
                         "holds only the initial one; choose --arch recurrence, transformer, blind or probe-slot")


def config_from_checkpoint(blob: dict) -> OracleConfig:
    return settings_from_checkpoint(blob, OracleConfig)


VALIDATION_MAX_LENGTH = 256  # validation chains up to this length choose the threshold (and are reported)
THRESHOLD_SAMPLE = 256  # training chains that choose it when no validation dataset is given


def load_validation(config: OracleConfig, data: OracleData, validation: OracleData | None = None
                    ) -> OracleData | None:
    """The validation dataset of ``config`` (None when it names none); ValueError in one line
    when its chains cannot be read by an arm trained on ``data``."""
    if not config.validation:
        return None
    validation = validation if validation is not None else load_probe_dataset(config.validation)
    why = same_domain(data, validation)
    if why is not None:
        raise ValueError(f"validation dataset {config.validation}: {why}")
    return validation


def training_sample(data: OracleData, seed: int) -> OracleData:
    """``data`` whose only test split is a fixed sample of its training chains."""
    n = len(data.train["items"])
    # drawn on the CPU whatever the data's device: the same sample on every device
    rows = torch.randperm(n, generator=torch.Generator().manual_seed(seed))[:THRESHOLD_SAMPLE].to(data.device)
    length = data.train["items"].shape[1] - 1
    return replace(data, tests={length: {k: v[rows] for k, v in data.train.items()}})


def choose_comparison(model: Oracle, config: OracleConfig, data: OracleData, validation: OracleData | None,
                      eval_config: OracleEvalConfig) -> tuple[dict | None, dict | None]:
    """(the comparison's threshold and its source, the validation report) for an arm that
    compares; (None, None) for the others and on Mathlib probes."""
    if not model.compares or data.tracker is None:
        return None, None
    if validation is not None:
        with reading(model, validation):
            report = evaluate(model, validation, eval_config, choose=True, max_length=VALIDATION_MAX_LENGTH)
        source = {"chains": "validation", "dataset": validation.identity["dataset"],
                  "lengths": report["lengths_evaluated"]}
    else:
        report = evaluate(model, training_sample(data, config.seed), eval_config, choose=True)
        source = {"chains": "training sample", "dataset": data.identity["dataset"], "chains_used": THRESHOLD_SAMPLE}
        report = None if report is None else {**report, "note": "chosen on training chains: no validation dataset"}
    chosen = report["comparison"]
    return {"threshold": chosen["threshold"], "source": source, "choice": chosen["choice"]}, \
        (report if validation is not None else None)


def train(config: OracleConfig, out: Path, resume: bool = False, show_progress: bool = True,
          eval_config: OracleEvalConfig = OracleEvalConfig(), data: OracleData | None = None,
          validation: OracleData | None = None, test: bool = True, device: torch.device | str = "cpu",
          log: LogConfig = LogConfig(), corrupted_checker: bool = False, force: bool = False) -> dict:
    """Train (or continue) into ``out`` on ``device`` (a torch.device or a spec such as ``auto``;
    DeviceUnavailable before anything is read or written when it is not here), logging to
    ``out``/metrics.jsonl as ``log`` says; choose the comparison's threshold; evaluate on the
    held-out test chains (unless ``test`` is False: a validation run reads only its validation
    chains), all on that device; return the report (also written there). ``resume`` with more
    ``config.steps`` than the checkpoint's settings extends the run (``training.loop.extension``).
    A dataset with wrong partners on purpose is refused unless ``corrupted_checker``; the
    report's ``dataset`` then carries its ``corrupt_partners``. A fresh run does not replace a run of
    other settings at ``out`` unless ``force`` (``training.checkpoint.refuse_replacing``)."""
    out = Path(out)
    device = resolve_device(device)
    started = time.perf_counter()
    data = data if data is not None else load_probe_dataset(config.data, corrupted_checker=corrupted_checker)
    validation = load_validation(config, data, validation)
    if not test and validation is None:
        raise ValueError("a run that skips the test chains needs --validation (chains to be judged on)")
    load_seconds = time.perf_counter() - started
    path = out / CHECKPOINT
    until = config.steps
    config, trainer, resumed_from = start_or_resume(OracleTrainer, config, data, out, device, resume, force)
    out.mkdir(parents=True, exist_ok=True)

    with RunLog(out, log, resumed_from) as run_log:
        last_losses = train_loop(trainer, config, path, show_progress, "train-oracle", until=until, log=run_log)
        trainer.comparison, validation_report = choose_comparison(trainer.model, config, data, validation,
                                                                  eval_config)
        save_atomic(trainer.checkpoint(), path)  # the threshold is stored with the run

        threshold = None if trainer.comparison is None else trainer.comparison["threshold"]
        results = (evaluate(trainer.model, data, eval_config, show_progress=show_progress, threshold=threshold,
                            threshold_source=trainer.comparison["source"]["chains"] if trainer.comparison else "given")
                   if test else {"tested": False})
        if test:
            run_log.figures("evaluation", trainer.step, {k: results.get(k) for k in ("accuracy", "all_right",
                                                                                     "probe_chains")})
    extended = extension(config, trainer.step)
    report = {
        "arch": config.arch, "objective": config.objective, "seed": config.seed,
        "steps": config.steps if extended is None else trainer.step,
        **results,
        "schedule": config.schedule,
        "threshold": trainer.comparison,
        "validation": validation_report,
        "seconds": round(trainer.train_seconds, 2),
        "steps_per_second": (round((config.steps if extended is None else trainer.step) / trainer.train_seconds, 3)
                             if trainer.train_seconds else None),
        "load_seconds": round(load_seconds, 2),
        "dataset": data.identity["dataset"], "lean": data.identity["lean"],
        "package_version": package_version(), "torch_version": torch.__version__,
        "torch_threads": torch.get_num_threads(),  # bits repeat at the same thread count
        "device": str(device),  # and on the same device
        "cpu_kernels": cpu_kernels() if device.type == "cpu" else None,  # and, on the CPU, the same kernels
        "parameters": sum(p.numel() for p in trainer.model.parameters()),
        "compute_note": COMPUTE_NOTES[config.arch],
        "final_losses": last_losses,
        "config": asdict(config),
    }
    if extended is not None:  # only then: a run not extended keeps its report's keys
        report["extension"] = extended
    write_report(report, out)
    return report


def write_report(report: dict, out: Path) -> None:
    """report.json and the plots beside it, all together or none."""
    from oracle.plots import run_title, write_plots  # matplotlib only when a report is written

    with staged_files(out) as staging:
        (staging / "report.json").write_text(json.dumps(report, indent=2) + "\n")
        if report.get("tested", True):
            write_plots([report], staging, run_title(report, Path(out).resolve().name))


# Per-event compute, in multiply-adds at C = 128, D = 64, V verdict classes, P probes per step.
COMPUTE_NOTES = {
    "recurrence": "slot recurrence, width 128, four ticks per event (~46C^2 per event); bilinear head C*V*D per "
                  "state + V*D per probe",
    "transformer": "causal transformer over events, depth 4, width 128: equal per-event compute (4 x 12C^2 vs the "
                   "recurrence's ~46C^2) plus attention over the history; the same bilinear head",
    "blind": "no state: the bilinear head on one learned vector; only the probe's encoding varies",
    "truth": "the recurrence's read of the true proof state (T_t, goal) from its initial slot at every step "
             "(~46C^2 per step, no carried state); the same bilinear head",
    "probe-slot": "slot recurrence as above; per probe one more full slot update (four ticks, ~40C^2) and a "
                  "linear head on LN of it: the seed's failed configuration (control)",
}

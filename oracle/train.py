"""Training an oracle arm on probe verdicts, with checkpoints that survive Ctrl-C and kills.

One step: sample B training chains (with their K certified partners for ``combo`` and
``nerode``), run the histories through the arm, and take the cross-entropy of every probe's
verdict class against Lean's. ``combo`` adds the tracker's NextLat and invariance terms on the
carried state, with the tracker's schedules. ``nerode`` adds to those the distinction half, the
metric loss of section 47 on inequivalent pairs of probed states whose targets come from the
verdicts themselves, and the comparison's own pairs (each accepted probe's imagined successor
against the goal read as a start: one state when Lean said complete, two otherwise;
``oracle.nerode``). The switch (the fraction of steps NextLat and
invariance are held at zero, so that they act only once a representation exists) is their
delays. Batches come from a generator seeded by (seed, step), so a resumed run sees exactly the
batches the uninterrupted one would have. The optimiser's settings, the loop, its checkpoints
and its stop requests are the tracker's (``tracker.loop``). After training, the threshold of
complete-by-comparison is chosen on validation chains (``oracle.compare``) and stored with the run.
"""
from __future__ import annotations

import json
import time
from dataclasses import asdict, dataclass, replace
from pathlib import Path

import torch
import torch.nn.functional as F

from chains.files import staged_files
from oracle.compare import reading, same_domain
from oracle.data import OracleData, ProbeBatch, load_probe_dataset, sample_probe_batch
from oracle.evaluate import OracleEvalConfig, evaluate
from oracle.model import ARCHS, TERMED, Oracle, OracleModelConfig
from oracle.nerode import SkeletonPool, completion_term, verdict_metric
from tracker.data import save_atomic
from tracker.device import cpu_kernels, resolve_device
from tracker.loop import (CHECKPOINT, Optimised, check_resumable, descend, extension, load_checkpoint, lr_at,
                          package_version, settings_from_checkpoint, train_loop)
from tracker.objectives import NextLatHead, TermsConfig, invariance, nextlat
from tracker.runlog import LogConfig, RunLog

OBJECTIVES = ("plain", "combo", "nerode")


@dataclass(frozen=True)
class OracleConfig(TermsConfig):
    # the settings the tracker shares are TermsConfig's (tracker.objectives): the optimiser's
    # (tracker.loop.OptimConfig: seed, steps, batch_chains (B chains per step, each with its
    # probes, and K partners for combo), lr, final_lr_fraction, warmup_steps, weight_decay,
    # grad_clip, checkpoint_every) and the terms' weights and schedules (mu, invariance_*,
    # nextlat_*, metric_*: nerode's metric loss on inequivalent pairs, gamma); the oracle's own
    # defaults of steps and of the metric loss's schedule follow
    steps: int = 8_000  # optimiser steps: one default run fits 15 minutes on 2 CPU cores (README, "Oracle")
    metric_delay: float = 0.0  # nerode: fraction of steps with the metric loss held at 0
    metric_ramp: float = 0.0  # nerode: fraction of steps of its linear ramp
    data: str = "data/tier1-a4"  # certified dataset directory made with certify --probes
    objective: str = "combo"  # plain: verdict CE; combo: + NextLat + invariance on certified partners; nerode: + metric
    arch: str = "recurrence"  # one of oracle.model.ARCHS
    width: int = 128  # slot width C (the seed's 128)
    probe_width: int = 64  # D: width of the probe encoding of the bilinear head
    fixed_norm: bool = True  # recurrence: rescale the slot to a fixed norm after every event (section 52's closure)
    metric_pairs: int = 256  # nerode: inequivalent pairs of probed states sampled per step
    completion_margin: float = 0.2  # nerode: accepted-not-complete successors kept this far from the goal (0: no term)
    completion_weight: float = 1.0  # nerode: the comparison's term's weight, on top of the metric loss's schedule
    completion_negatives: int = 0  # nerode: other trees of the goal's skeleton each complete successor is kept from
    tree_weight: float = 0.0  # the tracker's tree readout as an auxiliary loss: cross-entropy of the certified tree
    #                           T_t from the probed chains' views at every step (0: none; nothing is decoded
    #                           when the oracle is asked, only trained)
    validation: str = ""  # probe dataset (another seed) whose held-out chains choose the comparison's threshold;
    #                       empty: a sample of the training chains chooses it (recorded as such)

    def __post_init__(self) -> None:
        if self.objective not in OBJECTIVES:
            raise ValueError(f"unknown objective {self.objective!r}; choose one of {', '.join(OBJECTIVES)}")
        if self.arch not in ARCHS:
            raise ValueError(f"unknown arch {self.arch!r}; choose one of {', '.join(ARCHS)}")
        if self.objective != "plain" and self.arch not in TERMED:
            raise ValueError(f"the {self.arch} arm carries no state for NextLat and invariance to act on; "
                             "train it with --objective plain")
        if (self.width < 8 or self.probe_width < 1 or self.metric_pairs < 1 or self.completion_margin < 0
                or self.completion_weight < 0 or self.completion_negatives < 0 or self.tree_weight < 0):
            # steps, batch and checkpoints: OptimConfig's checks
            raise ValueError("probe_width and metric_pairs must be >= 1, width >= 8, completion_margin, "
                             "completion_weight, completion_negatives and tree_weight >= 0")
        if self.tree_weight and self.arch == "blind":
            raise ValueError("the blind arm carries no state for the tree term to read; train it with --tree-weight 0")
        super().__post_init__()

    @property
    def model(self) -> OracleModelConfig:
        return OracleModelConfig(arch=self.arch, width=self.width, probe_width=self.probe_width,
                                 fixed_norm=self.fixed_norm)

    def tree_shape(self, n_out: int, tree_len: int) -> tuple[int, int] | None:
        """The tracker readout's (output tokens, tree positions) the arm is built with: the
        dataset's when the tree term is on, None (no readout) otherwise."""
        return (n_out, tree_len) if self.tree_weight else None

    @property
    def terms(self) -> set[str]:
        return {"combo": {"nextlat", "invariance"}, "nerode": {"nextlat", "invariance", "metric"}}.get(
            self.objective, set())

    @property
    def schedule(self) -> dict:
        """When each term is on, in steps: the switch of NextLat and invariance, recorded in every report."""
        def at(delay: float, ramp: float) -> dict:
            return {"delay": delay, "ramp": ramp, "on_from_step": round(delay * self.steps),
                    "full_from_step": round((delay + ramp) * self.steps)}
        out = {}
        if "nextlat" in self.terms:
            out["nextlat"] = at(self.nextlat_delay, self.nextlat_ramp)
        if "invariance" in self.terms:
            out["invariance"] = at(self.invariance_delay, self.invariance_ramp)
        if "metric" in self.terms:
            out["metric"] = at(self.metric_delay, self.metric_ramp)
        return out


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
        cfg = self.config
        histories = batch.histories
        r, z, w = self.model.states(histories.items, batch.truth_items, terms=bool(cfg.terms))  # (B, S, C), (H, T, C)
        logits = self.model.score(r, batch.probes)  # (B, S, P, V)
        real = batch.verdicts >= 0
        out = {"verdict": F.cross_entropy(logits[real], batch.verdicts[real])}
        if "metric" in cfg.terms:
            weight = cfg.weight("metric", step)
            views = z[: histories.chains, : r.shape[1]]  # (B, S, C) the probed states in the readout's view
            out["metric"] = weight * verdict_metric(self.model, views, w, batch.probes, batch.verdicts,
                                                    self.data.accepting, cfg.gamma, cfg.metric_pairs, generator)
            compares = (cfg.completion_margin > 0 and w is not None and batch.goal_items is not None
                        and self.model.compares and self.config.arch != "probe-slot")
            if compares and weight == 0:  # held at zero with the metric loss: a zero, with nothing computed or drawn
                out["completion"] = torch.zeros((), device=self.device)
            elif compares:
                goal = self.model.goal_view(batch.goal_items)  # (B, C)
                negatives = None
                if cfg.completion_negatives:
                    items, has = self.skeletons.draw(batch.goal_items, cfg.completion_negatives, generator)
                    negatives = self.model.goal_view(items), has  # (B, N, C), (B,)
                term = completion_term(self.model, w, goal, batch.probes, batch.verdicts, self.data.accepting,
                                       self.data.verdicts.index("complete"), cfg.completion_margin, negatives)
                # a weight of 1 multiplies by 1.0 exactly: runs without the knob keep their bits
                out["completion"] = weight * (term * cfg.completion_weight if cfg.completion_weight != 1 else term)
        if cfg.tree_weight:
            out["tree"] = cfg.tree_weight * self.tree_term(r if z is None else z[: histories.chains, : r.shape[1]],
                                                           batch.truth_items)
        if "invariance" in cfg.terms:
            b, k = histories.chains, histories.partners
            z_end = z[torch.arange(len(z), device=z.device), histories.lengths - 1]  # (H, C)
            chain_end, partner_end = z_end[:b], z_end[b:].view(b, k, -1)
            w = cfg.weight("invariance", step)
            out["invariance"] = w * invariance(chain_end[:, None].expand_as(partner_end).reshape(-1, z.shape[-1]),
                                               partner_end.reshape(-1, z.shape[-1]))
        if "nextlat" in cfg.terms:
            w = cfg.weight("nextlat", step)
            events = self.model.tracker.embed.pooled(histories.items)  # (H, T, C)
            out["nextlat"] = w * nextlat(self.nextlat_head, z, events, histories.mask)
        return out

    def tree_term(self, views: torch.Tensor, truth_items: torch.Tensor) -> torch.Tensor:
        """views (B, S, C) of the probed states, truth_items (B, S) the certified trees T_t read as
        starts -> the tracker's cross-entropy of every position of T_t (padding included) from its view."""
        tracker = self.model.tracker
        logits = tracker.readout(views)  # (B, S, P, V_out)
        targets = self.data.item_tokens[truth_items][..., : tracker.tree_len]  # (B, S, P) output ids, PAD after the end
        return F.cross_entropy(logits.flatten(0, -2), targets.flatten())

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
          log: LogConfig = LogConfig(), corrupted_checker: bool = False) -> dict:
    """Train (or continue) into ``out`` on ``device`` (a torch.device or a spec such as ``auto``;
    DeviceUnavailable before anything is read or written when it is not here), logging to
    ``out``/metrics.jsonl as ``log`` says; choose the comparison's threshold; evaluate on the
    held-out test chains (unless ``test`` is False: a validation run reads only its validation
    chains), all on that device; return the report (also written there). ``resume`` with more
    ``config.steps`` than the checkpoint's settings extends the run (``tracker.loop.extension``).
    A dataset with wrong partners on purpose is refused unless ``corrupted_checker``; the
    report's ``dataset`` then carries its ``corrupt_partners``."""
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
    blob = None
    if resume:
        blob = load_checkpoint(path)
        config = check_resumable(blob, config, data.identity["dataset"], path)  # an extension keeps its settings
    trainer = OracleTrainer(config, data, device)
    if blob is not None:
        trainer.load(blob)
    out.mkdir(parents=True, exist_ok=True)

    with RunLog(out, log, None if blob is None else trainer.step) as run_log:
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

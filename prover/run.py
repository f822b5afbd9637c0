"""One ``prove`` run: draw the problems, certify their prefixes, search, audit every solution
in Lean, and write ``report.json``, the problems, per-problem results and a plot."""
from __future__ import annotations

import json
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from chains.files import staged_files
from chains.manifest import DatasetError, dataset_id, manifest_path, read_manifest
from chains.rewrite.dataset import training_trees
from chains.rewrite.rules import Event, apply
from chains.rewrite.space import Domain, domain_of
from chains.rewrite.trees import Tree, count_trees
from chains.version import package_version
from leanbridge.asker import AskConfig
from leanbridge.certificates import CertificationFailed, certify_steps, default_store
from leanbridge.checker import Checker
from leanbridge.errors import LeanBridgeError
from leanbridge.paths import portable_path
from leanbridge.runner import LeanLimits
from prover.imagination import Imagination, TrackerUnavailable, load_tracker
from prover.kernel import Kernel, KernelConfig, KernelError, PathClaim, open_kernel
from prover.plots import plot_prove
from prover.problems import Problem, ProblemError, make_problems, max_distance, write_problems
from prover.search import SEARCHERS, ProblemResult, SearchConfig, run_searches
from prover.verdict_oracle import OracleUnavailable, VerdictOracle, load_oracle, load_planner

if TYPE_CHECKING:  # torch is imported only when a device is resolved, the planner only when it is used
    import torch

    from oracle.scorer import LatentPlanner

Progress = Callable[[str, int, int], None]  # (phase, done, total)


class ProveError(Exception):
    """Bad input or a run that cannot go on; the message is one line for the user."""


class ProveUsage(ProveError):
    """Options the search does not take on this dataset (a distance its class graph does not have,
    --unvisited where training visits everything): a usage error, in one line."""


DIAMETER_TREES = 100_000  # start trees up to which a report always records the classes' diameter


@dataclass(frozen=True)
class ProveConfig:
    data: Path = Path("data/tier1-a4")  # certified dataset: its domain and identity
    tracker: Path = Path("runs/recurrence-combo-s0")  # train-tracker run directory (imagination only)
    oracle: Path = Path("runs/oracle-recurrence-combo-s0")  # train-oracle run directory (oracle searcher only)
    searcher: str = "imagination"  # one of prover.search.SEARCHERS
    budget_calls: int = 1000  # kernel questions per problem, at most
    problems: int = 1000  # problems per distance
    distances: tuple[int, ...] | None = None  # None: 1 up to the largest the class graph allows
    seed: int = 0  # problems and proposal order
    prefix: int = 0  # length of the certified history read before the start (imagination)
    out: Path = Path("runs/prove")  # report.json, problems.jsonl, results.jsonl, plot
    jobs: int = 2  # Lean processes at once
    max_expansions: int = 100_000  # per problem, a guard
    timeout_s: float = 300.0  # seconds one Lean process may run
    memory_mb: int = 8192  # address-space limit of one Lean process
    device: str = "auto"  # where the tracker or the oracle runs (training.device's specs); unused by kernel searchers
    store: Path | None = None  # certificate store the prefixes' steps are read from and recorded in; None: certify's
    unvisited: bool = False  # problems whose start and target the dataset's training split never visits

    @property
    def kernel(self) -> KernelConfig:
        return KernelConfig(jobs=self.jobs, limits=LeanLimits(timeout_s=self.timeout_s, memory_mb=self.memory_mb))

    def __post_init__(self) -> None:
        if self.searcher not in SEARCHERS:
            raise ProveError(f"--searcher must be one of {', '.join(SEARCHERS)}")
        if self.budget_calls < 1:
            raise ProveError(f"--budget-calls must be at least 1, got {self.budget_calls}")
        if self.problems < 1:
            raise ProveError(f"--problems must be at least 1, got {self.problems}")
        if self.prefix < 0:
            raise ProveError(f"--prefix must be at least 0, got {self.prefix}")
        if self.timeout_s <= 0 or self.memory_mb < 1:
            raise ProveError("--timeout and --memory-mb must be positive")


def _quiet(phase: str, done: int, total: int) -> None:
    pass


def certify_prefixes(problems: list[Problem], kernel: Kernel, store: Path, checker: Checker, jobs: int,
                     progress: Progress = _quiet) -> dict:
    """Certify every distinct step of every prefix (outside the search's count) by the one
    certification path (``leanbridge.certificates.certify_steps``): steps the certificate store holds
    as certified for this Lean build, core library and ``checker`` are served from it, the others
    asked of Lean and recorded there. Raises ProveError if Lean rejects one. Returns counts for the
    report: step instances, distinct steps, those served from the store and those asked of Lean."""
    steps: list[tuple[Tree, Event, str]] = []
    instances = 0
    for p in problems:
        tree = p.prefix_start
        for k, event in enumerate(p.prefix):
            steps.append((tree, event, f"problem {p.id} prefix step {k}"))
            tree = apply(tree, event)
            instances += 1
        if tree != p.start:
            raise ProveError(f"problem {p.id}: its prefix does not end at its start")
    counts = {"prefix_steps": instances, "prefix_distinct_steps": 0, "prefix_from_store": 0, "prefix_asked": 0,
              "prefix_lean_processes": 0, "prefix_checker": None, "prefix_store": None}
    if not steps:
        return counts
    bridge = AskConfig(jobs=jobs, limits=kernel.config.limits, checker=checker)
    try:
        done = certify_steps(steps, kernel.lean, kernel.core, kernel.atoms, store, bridge,
                             lambda phase, n, total: progress("certify prefixes", n, total))
    except (CertificationFailed, LeanBridgeError) as e:  # a rejected step; a Lean or store that failed
        raise ProveError(f"certifying the prefixes: {e}") from None
    return {**counts, "prefix_distinct_steps": done.distinct, "prefix_from_store": done.from_store,
            "prefix_asked": done.asked, "prefix_lean_processes": done.lean_processes,
            "prefix_checker": done.checker, "prefix_store": portable_path(store)}


def prefix_checker(manifest: dict) -> Checker:
    """The checker that certifies the prefixes' steps: the one that certified the dataset (its
    manifest's ``checker``; the elaborator when absent), so that the dataset's own certificates
    in the store serve the prefixes' steps they share."""
    return Checker.recorded(manifest.get("checker", Checker.ELABORATOR.value))


def audit_solutions(problems: list[Problem], results: list[ProblemResult], kernel: Kernel) -> dict:
    """Certify every distinct reported solution as a path in Lean (outside the search's count),
    its steps rendered by replaying its events from the true start."""
    by_id = {p.id: p for p in problems}
    claims = {}
    for r in results:
        if not r.solved:
            continue
        p = by_id[r.id]
        steps, tree = [], p.start
        for event in r.events:
            steps.append((tree, event))
            tree = apply(tree, event) if tree is not None else None
        # a solution whose events stop applying on the way cannot even be stated as a path
        claims[(p.start, p.target, r.events)] = (PathClaim(p.start, p.target, tuple(steps))
                                                 if all(t is not None for t, _ in steps) else None)
    before = kernel.processes
    stated = [c for c in claims.values() if c is not None]
    answers = kernel.ask([("audit", c) for c in stated]) if stated else []
    certified = sum(a.complete for a in answers)
    return {"distinct_solutions": len(claims), "distinct_certified_solutions": certified,
            "solutions_failing_audit": len(claims) - certified, "audit_lean_processes": kernel.processes - before}


def _summary(results: list[ProblemResult], audited: bool = True) -> dict:
    """Counts over ``results``; ``audited`` False (a searcher that holds no trees) leaves the
    faithfulness fractions unmeasured (None)."""
    solved = sum(r.solved for r in results)
    calls = sum(r.calls for r in results)
    held, proposed = sum(r.held for r in results), sum(r.proposed for r in results)
    held_equal, proposed_equal = sum(r.held_equal for r in results), sum(r.proposed_equal for r in results)
    starts = [r.start_read_equal for r in results if r.start_read_equal is not None]
    return {
        "problems": len(results),
        "solved": solved,
        "success": solved / len(results) if results else 0.0,
        "kernel_calls": calls,
        "kernel_calls_per_solved": calls / solved if solved else None,
        "kernel_calls_max_per_problem": max((r.calls for r in results), default=0),
        "claims": sum(r.claims for r in results),
        "claims_rejected": sum(r.claims_rejected for r in results),
        "expansions": sum(r.expansions for r in results),
        "states_held": held,
        "states_held_equal_truth": held_equal,
        "states_held_fraction_equal": held_equal / held if held and audited else None,
        "successors_proposed": proposed,
        "successors_proposed_equal_truth": proposed_equal,
        "successors_fraction_equal": proposed_equal / proposed if proposed and audited else None,
        "start_read_correct": sum(starts) / len(starts) if starts else None,
        "rejected_asked": sum(r.rejected_asked for r in results),
        "accepted_available": sum(r.accepted_available for r in results),
        "oracle_recall_accepted": (sum(r.accepted_predicted for r in results) /
                                   max(1, sum(r.accepted_available for r in results))),
    }


def prove_device(spec: str) -> torch.device:
    """The torch device that ``spec`` names on this machine; ProveError (one line) when it is not
    here or is no device spec."""
    from training.device import DeviceUnavailable, resolve_device

    try:
        return resolve_device(spec)
    except DeviceUnavailable as e:
        raise ProveError(str(e)) from None


@dataclass(frozen=True)
class _Models:
    """The searcher's model, loaded: the imagination, the verdict oracle or the latent planner
    (at most one is set; the kernel searchers use none)."""

    imagination: Imagination | None = None
    oracle: VerdictOracle | None = None
    planner: LatentPlanner | None = None

    def describe(self) -> dict:
        """The report's ``imagination`` and ``oracle`` fields."""
        oracle = self.oracle if self.oracle is not None else self.planner
        return {"imagination": self.imagination.describe() if self.imagination is not None else None,
                "oracle": oracle.describe() if oracle is not None else None}


def _load_models(config: ProveConfig, device: torch.device, imagination: Imagination | None) -> _Models:
    """The model ``config``'s searcher reads (``imagination`` when the caller gives one)."""
    if config.searcher == "imagination" and imagination is None:
        try:
            imagination = load_tracker(config.tracker, config.data, device)
        except TrackerUnavailable as e:
            raise ProveError(str(e)) from None
    if config.searcher not in ("oracle", "oracle-imagination"):
        return _Models(imagination=imagination)
    try:
        if config.searcher == "oracle":
            return _Models(imagination, oracle=load_oracle(config.oracle, config.data, device))
        return _Models(imagination, planner=load_planner(config.oracle, config.data, device))
    except OracleUnavailable as e:
        raise ProveError(str(e)) from None


@dataclass(frozen=True)
class _Drawn:
    """The problems of a run and what they were drawn from."""

    problems: list[Problem]
    distances: tuple[int, ...]
    largest: int | None  # the classes' diameter, when measured
    avoid: frozenset[Tree]  # --unvisited: the trees training visits (empty otherwise)


def _draw_problems(config: ProveConfig, domain: Domain) -> _Drawn:
    try:
        # the diameter takes a search from every start tree: on the larger domains (six atoms) only
        # when no distances are given
        largest = (max_distance(domain) if not config.distances or count_trees(domain.atoms) <= DIAMETER_TREES
                   else None)
        distances = config.distances or tuple(range(1, largest + 1))
        avoid = frozenset(training_trees(config.data, domain)) if config.unvisited else frozenset()
        problems = make_problems(domain, distances, config.problems, config.seed, config.prefix, avoid)
    except ProblemError as e:
        raise ProveUsage(str(e)) from None
    except DatasetError as e:
        raise ProveError(f"dataset {config.data}: {e}") from None
    return _Drawn(problems, distances, largest, avoid)


@dataclass(frozen=True)
class _Searched:
    """What the search and the audit found, and the kernel that counted them."""

    kernel: Kernel
    prefix_counts: dict
    results: list[ProblemResult]
    seconds: float  # the search's own
    audit: dict


def _search_and_audit(config: ProveConfig, domain: Domain, manifest: dict, problems: list[Problem], models: _Models,
                      progress: Progress) -> _Searched:
    """Certify the prefixes, run the searches and audit their solutions in Lean."""
    try:
        kernel = open_kernel(domain.atom_names, config.kernel, budget=config.budget_calls)
        prefix_counts = certify_prefixes(problems, kernel, config.store or default_store(),
                                         prefix_checker(manifest), config.jobs, progress)
        search = SearchConfig(searcher=config.searcher, budget_calls=config.budget_calls, seed=config.seed,
                              rules=domain.rules, max_size=domain.size_bound, max_expansions=config.max_expansions,
                              positions=domain.positions)
        searched = time.perf_counter()
        results = run_searches(problems, search, kernel, models.imagination,
                               lambda done, total: progress("search", done, total), models.oracle, models.planner)
        search_seconds = time.perf_counter() - searched
        auditor = Kernel(kernel.lean, kernel.core, kernel.atoms,
                         KernelConfig(jobs=config.jobs, limits=config.kernel.limits, reuse_answers=False))
        audit = audit_solutions(problems, results, auditor)
    except (KernelError, LeanBridgeError) as e:
        raise ProveError(str(e)) from None
    return _Searched(kernel, prefix_counts, results, search_seconds, audit)


def _report(config: ProveConfig, manifest: dict, domain: Domain, drawn: _Drawn, searched: _Searched,
            models: _Models, device: torch.device, started: float) -> dict:
    results, kernel = searched.results, searched.kernel
    audited = config.searcher != "oracle-imagination"  # it holds latent states only: nothing to compare
    by_distance = {str(d): _summary([r for r in results if r.distance == d], audited) for d in drawn.distances}
    return {
        "searcher": config.searcher,
        "prefix": config.prefix,
        "budget_calls": config.budget_calls,
        "distances": list(drawn.distances),
        "largest_distance": drawn.largest,
        "problems_per_distance": config.problems,
        "distinct_problems": len({(p.start, p.target) for p in drawn.problems}),
        "unvisited": ({"training_trees": len(drawn.avoid), "share": round(len(drawn.avoid) / manifest["trees"], 6)}
                      if config.unvisited else None),
        **_summary(results, audited),
        "lean_processes": kernel.processes,
        "lean_questions_elaborated": kernel.elaborated,
        "lean_seconds": round(kernel.lean_seconds, 3),
        **searched.audit,
        **searched.prefix_counts,
        "by_distance": by_distance,
        "seconds": round(time.perf_counter() - started, 3),
        "search_seconds": round(searched.seconds, 3),
        "config": {k: (str(v) if isinstance(v, Path) else v) for k, v in asdict(config).items()},
        "kernel": {"jobs": config.jobs, "batch_size": kernel.config.batch_size,
                   "reuse_answers": kernel.config.reuse_answers},
        "device": str(device),
        "torch_threads": _torch_threads(),
        **models.describe(),
        "dataset": {"path": str(config.data), "atoms": domain.atoms, "tier": domain.tier,
                    "max_size": domain.size_bound, "seed": manifest.get("seed"),
                    "dataset_id": dataset_id(manifest),
                    "lean": manifest.get("lean"), "core_hash": manifest.get("core_hash")},
        "lean": kernel.lean.describe(),
        "core_hash": kernel.core.hash,
        "package_version": package_version(),
    }


def _torch_threads() -> int:
    import torch

    return torch.get_num_threads()


def _write_outputs(staging: Path, report: dict, problems: list[Problem], results: list[ProblemResult]) -> None:
    write_problems(staging / "problems.jsonl", problems)
    with open(staging / "results.jsonl", "w", encoding="utf-8") as handle:
        for r in results:
            handle.write(json.dumps(r.to_json(), separators=(",", ":")) + "\n")
    (staging / "report.json").write_text(json.dumps(report, indent=2) + "\n")
    plot_prove(report, staging / "prove.png")


def prove(config: ProveConfig, imagination: Imagination | None = None, progress: Progress = _quiet) -> dict:
    """Run the searcher of ``config`` on its problems; write and return the report. A device
    that is not on this machine is refused before anything is read or written."""
    started = time.perf_counter()
    device = prove_device(config.device)
    try:
        manifest = read_manifest(config.data)
        domain = domain_of(manifest, str(manifest_path(config.data)))
    except DatasetError as e:
        raise ProveError(f"dataset {config.data}: {e}") from None
    models = _load_models(config, device, imagination)
    drawn = _draw_problems(config, domain)
    out = Path(config.out)
    if out.exists() and not out.is_dir():
        raise ProveError(f"cannot write to {out}: it is a file, not a directory")
    # Every output goes to a staging directory (made now, so an unwritable --out fails before
    # the search) and moves into ``out`` only once all are written: a failed run leaves ``out``
    # as it was, not even created.
    with staged_files(out) as staging:
        searched = _search_and_audit(config, domain, manifest, drawn.problems, models, progress)
        report = _report(config, manifest, domain, drawn, searched, models, device, started)
        _write_outputs(staging, report, drawn.problems, searched.results)
    return report

"""Search between two states of a domain (programs, or a domain of one's own), counting every
question to Lean.

A problem is a start state drawn as the domain's histories draw theirs (on programs the zero
state, where a programs dataset's programs start) and a target: where a random history of
``distance`` events leads (so ``distance`` bounds the shortest history from above), redrawn when it
is the start. Candidate events are the distinct events of the dataset's training split (the events
the tracker has read), in their order of first use, at most ``MAX_CANDIDATES``.

- ``imagination``: a beam search on the tracker's states: every candidate event is tried from every
  state of the beam, each scored by the log-probability the readout gives the target; when a
  decoded state is the target, the history that reached it is claimed and Lean is asked once that
  it leads from the start to the target (programs: ``run p s = t``, ``leanbridge.programs.RunQuestion``;
  a domain of one's own: its step function evaluated along the history). A rejected claim costs its
  call and the search goes on.
- ``kernel-uniform``: hill climbing on certified states: uniformly random candidate events from the
  current state, their effects asked of Lean (one step theorem a call, every one counted), the
  first that brings the state closer to the target (fewer readout positions differ) kept.

Every solution is audited afterwards by one more theorem per solution (the same claim), outside the
budget, as the rewrite prover audits its own.
"""
from __future__ import annotations

import json
import random
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import torch

from chains.domains import domain_of_manifest, recorded_histories
from chains.files import staged_files
from chains.manifest import dataset_id, manifest_path, read_manifest
from chains.protocol import StateDomain, run_events
from chains.seeds import split_rng
from chains.version import package_version
from leanbridge.discovery import find_lean
from leanbridge.domain_lean import DomainQuestion, build_domain_module, run_statement, step_statement
from leanbridge.process import LeanLimits
from leanbridge.programs import RunQuestion, StepQuestion, build_programs, check_programs
from leanbridge.verdicts import Complete
from prover.plots import plot_prove

SEARCHERS = ("imagination", "kernel-uniform")
MAX_CANDIDATES = 4096
DEFAULT_DISTANCES = (2, 4, 8, 16)


class DomainSearchError(ValueError):
    """A search that cannot run as asked; the message is one line for the user."""


@dataclass(frozen=True)
class Problem:
    id: str  # "d<distance>-<index>"
    distance: int  # events of the random history that made the target
    start: object
    target: object


@dataclass
class Result:
    id: str
    distance: int
    solved: bool = False
    program: tuple | None = None  # the events found
    calls: int = 0  # questions to Lean for this problem
    claims: int = 0  # imagination: histories claimed
    claims_rejected: int = 0
    depth: int = 0  # imagination: beam steps taken


def problem_json(domain: StateDomain, problem: Problem) -> dict:
    return {"id": problem.id, "distance": problem.distance, "start": domain.state_text(problem.start),
            "target": domain.state_text(problem.target)}


def result_json(domain: StateDomain, result: Result) -> dict:
    out = {k: v for k, v in asdict(result).items() if k != "program"}
    out["program"] = None if result.program is None else [domain.event_text(e) for e in result.program]
    return out


def make_problems(domain: StateDomain, distances: Sequence[int], per_distance: int, seed: int) -> list[Problem]:
    """``per_distance`` problems per distance, one generator per distance; a target equal to the
    start is redrawn."""
    problems = []
    for d in distances:
        rng = split_rng(seed, f"programs-problems-{d}")  # its name fixes the draws recorded results rest on
        n = 0
        while n < per_distance:
            start = domain.start_state(rng)
            target = run_events(domain, start, domain.sample_events(rng, start, d))[-1]
            if target != start:
                problems.append(Problem(f"d{d}-{n}", d, start, target))
                n += 1
    return problems


def training_events(data: Path, domain) -> list:
    """The distinct events of the training split, in order of first use, at most MAX_CANDIDATES
    (``domain`` reads the dataset's lines: ``chains.domains.domain_of_manifest``)."""
    seen: dict = {}
    for (_, events), _ in recorded_histories(domain, Path(data) / "train.jsonl"):
        for event in events:
            seen.setdefault(event, None)
            if len(seen) == MAX_CANDIDATES:
                return list(seen)
    return list(seen)


class Kernel:
    """Lean, with every question counted: on programs the programs library's run and step
    questions, on a domain of one's own its module's step function evaluated."""

    def __init__(self, domain, limits: LeanLimits, jobs: int) -> None:
        self.domain, self.limits, self.jobs = domain, limits, jobs
        self.lean = find_lean()
        self.machine = domain.machine if domain.name == "programs" else None  # the programs library's route
        if self.machine is not None:
            self.library = build_programs(self.lean, limits)
        else:
            self.library = build_domain_module(domain, self.lean, limits)
        self.questions = self.processes = 0

    def run_question(self, start, events: Sequence, target):
        """``events`` lead from ``start`` to ``target``."""
        if self.machine is not None:
            return RunQuestion(self.machine, start, tuple(events), target)
        return DomainQuestion(run_statement(self.domain, start, events, target))

    def step_question(self, before, event, after):
        """``event`` leads from ``before`` to ``after``."""
        if self.machine is not None:
            return StepQuestion(self.machine, event, before, after)
        return DomainQuestion(step_statement(self.domain, before, event, after))

    def ask(self, questions: list) -> list:
        answers, processes = check_programs(questions, self.lean, self.library, self.limits, jobs=self.jobs)
        self.questions += len(questions)
        self.processes += processes
        return answers


def imagination_search(problem: Problem, tracker, candidates: list, kernel: Kernel, budget: int, beam: int,
                       max_length: int) -> Result:
    result = Result(problem.id, problem.distance)
    target = torch.tensor(kernel.domain.state_classes(problem.target))  # (P,): the target's class per readout position
    states = tracker.encode_batch([problem.start])  # (1, …)
    programs: list[tuple] = [()]
    rejected: set[tuple] = set()
    c = len(candidates)
    for depth in range(1, max_length + 1):
        result.depth = depth
        moved = tracker.step_batch(states.repeat_interleave(c, 0), candidates * len(programs))  # (B*C, …)
        lp = tracker.log_probs(moved)  # (B*C, P, classes)
        score = lp.gather(-1, target.view(1, -1, 1).expand(len(lp), -1, 1))[..., 0].sum(-1)  # (B*C,)
        hit = (lp.argmax(-1) == target).all(-1)  # (B*C,): the decoded state is the target
        order = torch.argsort(score, descending=True).tolist()
        for row in (r for r in order if hit[r]):
            program = programs[row // c] + (candidates[row % c],)
            if program in rejected:
                continue
            if result.calls == budget:
                return result
            result.calls += 1
            result.claims += 1
            answer = kernel.ask([kernel.run_question(problem.start, program, problem.target)])[0]
            if isinstance(answer, Complete):
                result.solved, result.program = True, program
                return result
            result.claims_rejected += 1
            rejected.add(program)
        keep = order[:beam]
        states = moved[keep]
        programs = [programs[r // c] + (candidates[r % c],) for r in keep]
    return result


def kernel_uniform_search(problem: Problem, candidates: list, kernel: Kernel, budget: int, rng: random.Random,
                          batch: int = 32) -> Result:
    result = Result(problem.id, problem.distance)
    domain, current, path = kernel.domain, problem.start, []
    goal = domain.state_classes(problem.target)

    def differ(state) -> int:
        return sum(a != b for a, b in zip(domain.state_classes(state), goal))

    while result.calls < budget and current != problem.target:
        proposals = [rng.choice(candidates) for _ in range(min(batch, budget - result.calls))]
        # Python's reading of each step, certified (or not) by Lean, one question a proposal
        afters = [domain.apply(current, event) for event in proposals]
        answers = kernel.ask([kernel.step_question(current, e, a) for e, a in zip(proposals, afters)])
        result.calls += len(proposals)  # every proposal of the batch was asked, the first kept one's followers too
        for event, after, answer in zip(proposals, afters, answers):
            if isinstance(answer, Complete) and differ(after) < differ(current):
                current = after
                path.append(event)
                break
    if current == problem.target:
        result.solved, result.program = True, tuple(path)
    return result


@dataclass(frozen=True)
class DomainProveConfig:
    data: Path
    tracker: Path
    searcher: str = "imagination"
    budget_calls: int = 1000
    problems: int = 100
    distances: tuple[int, ...] | None = None
    seed: int = 0
    out: Path = Path("runs/prove-domain")
    jobs: int = 2
    timeout_s: float = 300.0
    memory_mb: int = 8192
    device: str = "cpu"
    beam: int = 4  # imagination: states kept per step
    max_length: int = 24  # imagination: longest program tried


def prove_domain(config: DomainProveConfig) -> dict:
    """Run the searcher on the problems of a programs dataset or one of a domain of one's own; write
    report.json, problems.jsonl, results.jsonl and prove.png."""
    started = time.perf_counter()
    manifest = read_manifest(config.data)
    domain = domain_of_manifest(manifest, str(manifest_path(config.data)))
    if config.searcher not in SEARCHERS:
        raise DomainSearchError(f"--searcher {config.searcher} is for rewrite chains; on {domain.name}: "
                                f"{', '.join(SEARCHERS)}")
    distances = config.distances or DEFAULT_DISTANCES
    problems = make_problems(domain, distances, config.problems, config.seed)
    candidates = training_events(config.data, domain)
    tracker = None
    if config.searcher == "imagination":
        from tracker.domain_run import load_domain_run
        from training.checkpoint import RunUnavailable

        try:
            tracker = load_domain_run(config.tracker, config.device)
        except RunUnavailable as e:
            raise DomainSearchError(str(e)) from None
        if tracker.identity["trained_on"].get("dataset_id") != dataset_id(manifest):
            raise DomainSearchError(f"tracker {config.tracker} was trained on another dataset, not {config.data}")
    kernel = Kernel(domain, LeanLimits(timeout_s=config.timeout_s, memory_mb=config.memory_mb), config.jobs)
    results = []
    for n, problem in enumerate(problems):
        if tracker is not None:
            results.append(imagination_search(problem, tracker, candidates, kernel, config.budget_calls, config.beam,
                                              config.max_length))
        else:
            # the generator's name fixes the draws that recorded results rest on
            rng = split_rng(config.seed, f"programs-search-{problem.id}")
            results.append(kernel_uniform_search(problem, candidates, kernel, config.budget_calls, rng))
    searched_questions = kernel.questions
    solved = [(p, r) for p, r in zip(problems, results) if r.solved]
    audit = kernel.ask([kernel.run_question(p.start, r.program, p.target) for p, r in solved]) if solved else []
    failing = sum(not isinstance(a, Complete) for a in audit)
    report = _report(config, manifest, problems, results, searched_questions, kernel, failing,
                     time.perf_counter() - started, tracker)
    with staged_files(Path(config.out)) as staging:
        (staging / "problems.jsonl").write_text("".join(json.dumps(problem_json(domain, p)) + "\n" for p in problems))
        (staging / "results.jsonl").write_text("".join(json.dumps(result_json(domain, r)) + "\n" for r in results))
        (staging / "report.json").write_text(json.dumps(report, indent=2) + "\n")
        plot_prove(report, staging / "prove.png")  # as the rewrite route draws it
    return report


def _summary(results: list[Result]) -> dict:
    solved = [r for r in results if r.solved]
    calls = sum(r.calls for r in results)
    return {"problems": len(results), "solved": len(solved), "success": round(len(solved) / max(1, len(results)), 4),
            "kernel_calls": calls,
            "kernel_calls_per_solved": round(sum(r.calls for r in solved) / len(solved), 3) if solved else None,
            "mean_program_length": round(sum(len(r.program) for r in solved) / len(solved), 2) if solved else None,
            "claims_rejected": sum(r.claims_rejected for r in results)}


PROGRAMS_SAMPLING = ("start: the zero state; target: where a random program of <distance> statements "
                     "(the dataset's generator) leads, redrawn when it is the start")
OWN_SAMPLING = ("start: the domain's start_state; target: where its sample_events of <distance> events lead, "
                "redrawn when it is the start")


def _report(config: DomainProveConfig, manifest: dict, problems: list[Problem], results: list[Result],
            searched_questions: int, kernel: Kernel, failing: int, seconds: float, tracker) -> dict:
    distances = sorted({p.distance for p in problems})
    return {
        "domain": manifest.get("domain"), "searcher": config.searcher, "budget_calls": config.budget_calls,
        "distances": distances, "problems_per_distance": config.problems,
        **_summary(results),
        "by_distance": {str(d): _summary([r for r in results if r.distance == d]) for d in distances},
        "kernel_questions_searched": searched_questions, "lean_processes": kernel.processes,
        "distinct_certified_solutions": len({r.program for r in results if r.solved}),
        "solutions_failing_audit": failing, "seconds": round(seconds, 3),
        "problem_sampling": PROGRAMS_SAMPLING if kernel.machine is not None else OWN_SAMPLING,
        "config": {k: (str(v) if isinstance(v, Path) else v) for k, v in asdict(config).items()},
        "tracker": None if tracker is None else tracker.describe(),
        "dataset": {"path": str(config.data), "dataset_id": dataset_id(manifest), "seed": manifest.get("seed")},
        "lean": {"version": kernel.lean.version, "githash": kernel.lean.githash},
        "library_hash": kernel.library.library_hash, "package_version": package_version(),
    }

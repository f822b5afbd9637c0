"""Search on programs: from a start state to a target state, counting every question to Lean.

A problem is the zero state (where a programs dataset's programs start) and a target: where a
random program of ``distance`` statements leads (so ``distance`` bounds the shortest program from
above). Candidate statements are the distinct statements of the dataset's training split (the
events the tracker has read), in their order of first use, at most ``MAX_CANDIDATES``.

- ``imagination``: a beam search on the tracker's states: every candidate statement is tried from
  every state of the beam, each scored by the log-probability the readout gives the target; when a
  decoded state is the target, the program that reached it is claimed and Lean is asked once,
  ``run p s = t`` (``leanbridge.programs.RunQuestion``). A rejected claim costs its call and the
  search goes on.
- ``kernel-uniform``: hill climbing on certified states: uniformly random candidate statements
  from the current state, their effects asked of Lean (one step theorem a call, 32 to a Lean
  file, every one counted), the first that brings the state closer to the target (fewer variables
  differ) kept.

Every solution is audited afterwards by one more theorem per solution (``run p s = t``), outside
the budget, as the rewrite prover audits its own.
"""
from __future__ import annotations

import json
import random
import time
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import torch

from chains.files import staged_files
from chains.manifest import dataset_id, manifest_path, read_manifest
from chains.programs.files import machine_of, read_programs
from chains.programs.sampling import random_program
from chains.programs.syntax import Machine, State, Statement, execute, run, state_text, zero_state
from chains.seeds import split_rng
from chains.version import package_version
from leanbridge.discovery import find_lean
from leanbridge.process import LeanLimits
from leanbridge.programs import RunQuestion, StepQuestion, build_programs, check_programs
from leanbridge.verdicts import Complete

PROGRAM_SEARCHERS = ("imagination", "kernel-uniform")
MAX_CANDIDATES = 4096
DEFAULT_DISTANCES = (2, 4, 8, 16)


class ProgramSearchError(ValueError):
    """A programs search that cannot run as asked; the message is one line for the user."""


@dataclass(frozen=True)
class ProgramProblem:
    id: str  # "d<distance>-<index>"
    distance: int  # statements of the random program that made the target
    start: State
    target: State

    def to_json(self) -> dict:
        return {"id": self.id, "distance": self.distance, "start": state_text(self.start),
                "target": state_text(self.target)}


@dataclass
class ProgramResult:
    id: str
    distance: int
    solved: bool = False
    program: tuple[Statement, ...] | None = None
    calls: int = 0  # questions to Lean for this problem
    claims: int = 0  # imagination: programs claimed
    claims_rejected: int = 0
    depth: int = 0  # imagination: beam steps taken

    def to_json(self) -> dict:
        out = {k: v for k, v in asdict(self).items() if k != "program"}
        out["program"] = None if self.program is None else [str(s) for s in self.program]
        return out


def make_problems(machine: Machine, distances: Sequence[int], per_distance: int, seed: int) -> list[ProgramProblem]:
    """``per_distance`` problems per distance, one generator per distance; a target equal to the
    start is redrawn."""
    problems = []
    for d in distances:
        rng = split_rng(seed, f"programs-problems-{d}")
        n = 0
        while n < per_distance:
            target = run(random_program(rng, machine, d), zero_state(), machine.values)
            if target != zero_state():
                problems.append(ProgramProblem(f"d{d}-{n}", d, zero_state(), target))
                n += 1
    return problems


def training_statements(data: Path, machine: Machine) -> list[Statement]:
    """The distinct statements of the training split, in order of first use, at most MAX_CANDIDATES."""
    seen: dict[Statement, None] = {}
    for record in read_programs(Path(data) / "train.jsonl", machine):
        for statement in record.history.program:
            seen.setdefault(statement, None)
            if len(seen) == MAX_CANDIDATES:
                return list(seen)
    return list(seen)


class Kernel:
    """Lean, with every question counted."""

    def __init__(self, machine: Machine, limits: LeanLimits, jobs: int) -> None:
        self.machine, self.limits, self.jobs = machine, limits, jobs
        self.lean = find_lean()
        self.library = build_programs(self.lean, limits)
        self.questions = self.processes = 0

    def ask(self, questions: list) -> list:
        answers, processes = check_programs(questions, self.lean, self.library, self.limits, jobs=self.jobs)
        self.questions += len(questions)
        self.processes += processes
        return answers


def imagination_search(problem: ProgramProblem, tracker, candidates: list[Statement], kernel: Kernel,
                       budget: int, beam: int, max_length: int) -> ProgramResult:
    result = ProgramResult(problem.id, problem.distance)
    target = torch.tensor(problem.target)
    states = tracker.encode_batch([problem.start])  # (1, …)
    programs: list[tuple[Statement, ...]] = [()]
    rejected: set[tuple[Statement, ...]] = set()
    c = len(candidates)
    for depth in range(1, max_length + 1):
        result.depth = depth
        moved = tracker.step_batch(states.repeat_interleave(c, 0), candidates * len(programs))  # (B*C, …)
        lp = tracker.log_probs(moved)  # (B*C, 8, values)
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
            answer = kernel.ask([RunQuestion(kernel.machine, problem.start, program, problem.target)])[0]
            if isinstance(answer, Complete):
                result.solved, result.program = True, program
                return result
            result.claims_rejected += 1
            rejected.add(program)
        keep = order[:beam]
        states = moved[keep]
        programs = [programs[r // c] + (candidates[r % c],) for r in keep]
    return result


def kernel_uniform_search(problem: ProgramProblem, candidates: list[Statement], kernel: Kernel, budget: int,
                          rng: random.Random, batch: int = 32) -> ProgramResult:
    result = ProgramResult(problem.id, problem.distance)
    machine, current, path = kernel.machine, problem.start, []

    def differ(state: State) -> int:
        return sum(a != b for a, b in zip(state, problem.target))

    while result.calls < budget and current != problem.target:
        proposals = [rng.choice(candidates) for _ in range(min(batch, budget - result.calls))]
        # Python's reading of each step, certified (or not) by Lean, one question a proposal
        questions = []
        for statement in proposals:
            questions.append(StepQuestion(machine, statement, current, execute(statement, current, machine.values)))
        answers = kernel.ask(questions)
        result.calls += len(questions)  # every proposal of the batch was asked, the first kept one's followers too
        for statement, question, answer in zip(proposals, questions, answers):
            if isinstance(answer, Complete) and differ(question.after) < differ(current):
                current = question.after
                path.append(statement)
                break
    if current == problem.target:
        result.solved, result.program = True, tuple(path)
    return result


@dataclass(frozen=True)
class ProgramsProveConfig:
    data: Path
    tracker: Path
    searcher: str = "imagination"
    budget_calls: int = 1000
    problems: int = 100
    distances: tuple[int, ...] | None = None
    seed: int = 0
    out: Path = Path("runs/prove-programs")
    jobs: int = 2
    timeout_s: float = 300.0
    memory_mb: int = 8192
    device: str = "cpu"
    beam: int = 4  # imagination: states kept per step
    max_length: int = 24  # imagination: longest program tried


def prove_programs(config: ProgramsProveConfig) -> dict:
    """Run the searcher on the problems; write report.json, problems.jsonl and results.jsonl."""
    if config.searcher not in PROGRAM_SEARCHERS:
        raise ProgramSearchError(f"--searcher {config.searcher} is for rewrite chains; on programs: "
                                 f"{', '.join(PROGRAM_SEARCHERS)}")
    started = time.perf_counter()
    manifest = read_manifest(config.data)
    machine = machine_of(manifest, str(manifest_path(config.data)))
    distances = config.distances or DEFAULT_DISTANCES
    problems = make_problems(machine, distances, config.problems, config.seed)
    candidates = training_statements(config.data, machine)
    tracker = None
    if config.searcher == "imagination":
        from tracker.domain_run import load_domain_run
        from training.checkpoint import RunUnavailable

        try:
            tracker = load_domain_run(config.tracker, config.device)
        except RunUnavailable as e:
            raise ProgramSearchError(str(e)) from None
        if tracker.identity["trained_on"].get("dataset_id") != dataset_id(manifest):
            raise ProgramSearchError(f"tracker {config.tracker} was trained on another dataset, not {config.data}")
    kernel = Kernel(machine, LeanLimits(timeout_s=config.timeout_s, memory_mb=config.memory_mb), config.jobs)
    results = []
    for n, problem in enumerate(problems):
        if tracker is not None:
            results.append(imagination_search(problem, tracker, candidates, kernel, config.budget_calls, config.beam,
                                              config.max_length))
        else:
            rng = split_rng(config.seed, f"programs-search-{problem.id}")
            results.append(kernel_uniform_search(problem, candidates, kernel, config.budget_calls, rng))
    searched_questions = kernel.questions
    solved = [(p, r) for p, r in zip(problems, results) if r.solved]
    audit = kernel.ask([RunQuestion(machine, p.start, r.program, p.target) for p, r in solved]) if solved else []
    failing = sum(not isinstance(a, Complete) for a in audit)
    report = _report(config, manifest, machine, problems, results, searched_questions, kernel, failing,
                     time.perf_counter() - started, tracker)
    with staged_files(Path(config.out)) as staging:
        (staging / "problems.jsonl").write_text("".join(json.dumps(p.to_json()) + "\n" for p in problems))
        (staging / "results.jsonl").write_text("".join(json.dumps(r.to_json()) + "\n" for r in results))
        (staging / "report.json").write_text(json.dumps(report, indent=2) + "\n")
    return report


def _summary(results: list[ProgramResult]) -> dict:
    solved = [r for r in results if r.solved]
    calls = sum(r.calls for r in results)
    return {"problems": len(results), "solved": len(solved), "success": round(len(solved) / max(1, len(results)), 4),
            "kernel_calls": calls,
            "kernel_calls_per_solved": round(sum(r.calls for r in solved) / len(solved), 3) if solved else None,
            "mean_program_length": round(sum(len(r.program) for r in solved) / len(solved), 2) if solved else None,
            "claims_rejected": sum(r.claims_rejected for r in results)}


def _report(config: ProgramsProveConfig, manifest: dict, machine: Machine, problems: list[ProgramProblem],
            results: list[ProgramResult], searched_questions: int, kernel: Kernel, failing: int, seconds: float,
            tracker) -> dict:
    distances = sorted({p.distance for p in problems})
    return {
        "domain": manifest.get("domain"), "searcher": config.searcher, "budget_calls": config.budget_calls,
        "distances": distances, "problems_per_distance": config.problems,
        **_summary(results),
        "by_distance": {str(d): _summary([r for r in results if r.distance == d]) for d in distances},
        "kernel_questions_searched": searched_questions, "lean_processes": kernel.processes,
        "distinct_certified_solutions": len({r.program for r in results if r.solved}),
        "solutions_failing_audit": failing, "seconds": round(seconds, 3),
        "problem_sampling": "start: the zero state; target: where a random program of <distance> statements "
                            "(the dataset's generator) leads, redrawn when it is the start",
        "config": {k: (str(v) if isinstance(v, Path) else v) for k, v in asdict(config).items()},
        "tracker": None if tracker is None else tracker.describe(),
        "dataset": {"path": str(config.data), "dataset_id": dataset_id(manifest), "seed": manifest.get("seed")},
        "lean": {"version": kernel.lean.version, "githash": kernel.lean.githash},
        "library_hash": kernel.library.library_hash, "package_version": package_version(),
    }

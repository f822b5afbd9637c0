"""Search between two states of a domain (programs, or a domain of one's own), counting every
question to Lean.

A problem is a start state drawn as the domain's histories draw theirs (on programs the zero
state, where a programs dataset's programs start) and a target at a stated distance from it:

- where the state graph is small enough to search, the *shortest* distance: a breadth-first search
  over the domain's ``successors`` from the start, bounded by ``STATE_BUDGET`` successors looked
  at, and a target drawn uniformly among the states exactly ``distance`` events away. On programs
  a statement assigns one variable, so the shortest program between two states is one statement a
  differing variable (the domain's ``short_history``): a target is the start with ``distance``
  variables changed, each to another value, whatever the machine's size.
- else a *walk length*: where a random history of that many events leads (an upper bound on the
  shortest distance), redrawn when it is the start. Reports and summaries say which.

Candidate events are the distinct events of the dataset's training split (the events the tracker
has read), in their order of first use, at most ``MAX_CANDIDATES``.

- ``imagination``: a beam search on the tracker's states: every candidate event is tried from every
  state of the beam, each scored by the log-probability the readout gives the target; when a
  decoded state is the target, the history that reached it is claimed and Lean is asked once that
  it leads from the start to the target (programs: ``run p s = t``, ``leanbridge.programs.RunQuestion``;
  a domain of one's own: its step function evaluated along the history). A rejected claim costs its
  call and the search goes on.
- ``kernel-uniform``: hill climbing on certified states: uniformly random candidate events from the
  current state, their effects asked of Lean (one step theorem a call, every one counted), the
  first that brings the state closer to the target (fewer readout positions differ) kept.
- ``short-history``: no search: the history the domain itself names between the two states
  (``chains.protocol.ShortHistories``; on programs one constant assignment a differing variable),
  claimed in one call. Where the domain offers it, it runs beside the searcher asked for, on the
  same problems, as the report's ``baseline``: what the searcher adds over it.

Every solution is audited afterwards by one more theorem per solution (the same claim), outside the
budget, as the rewrite prover audits its own.
"""
from __future__ import annotations

import json
import random
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import torch

from chains.domains import domain_of_manifest, recorded_histories
from chains.files import staged_files
from chains.manifest import dataset_id, manifest_path, read_manifest
from chains.protocol import ShortHistories, StateDomain, run_events
from chains.seeds import split_rng
from chains.version import package_version
from leanbridge.discovery import find_lean
from leanbridge.domain_lean import DomainQuestion, build_domain_module, run_statement, step_statement
from leanbridge.process import LeanLimits
from leanbridge.programs import RunQuestion, StepQuestion, build_programs, check_programs
from leanbridge.verdicts import Complete
from prover.plots import plot_prove

SEARCHERS = ("imagination", "kernel-uniform", "short-history")
BASELINE = "short-history"  # the searcher run beside the one asked for, where the domain names short histories
MAX_CANDIDATES = 4096
STATE_BUDGET = 100_000  # successors looked at in one breadth-first search before distances become walk lengths
MAX_DEFAULT_DISTANCE = 8  # default distances: 1 up to the largest there is, at most this
DEFAULT_WALKS = (2, 4, 8, 16)  # default walk lengths, where the state graph is too large to search
DEFAULT_PROBLEMS = 20  # problems per distance: a first run a user can wait for
DEFAULT_BUDGET = 200  # kernel calls per problem: kernel-uniform's worst case stays minutes
SHORTEST, WALK = "shortest distance", "walk length"  # what a problem's distance measures


class DomainSearchError(ValueError):
    """A search that cannot run as asked; the message is one line for the user."""


class DomainSearchUsage(DomainSearchError):
    """Options the search does not take on this dataset (a searcher the domain lacks, a distance it
    does not have): a usage error, in one line."""


@dataclass(frozen=True)
class Problem:
    id: str  # "d<distance>-<index>"
    distance: int  # the shortest distance from start to target, or the walk's length (Drawn.measure says)
    start: object
    target: object


@dataclass
class Result:
    id: str
    distance: int
    solved: bool = False
    program: tuple | None = None  # the events found
    calls: int = 0  # questions to Lean for this problem
    claims: int = 0  # imagination, short-history: histories claimed
    claims_rejected: int = 0
    depth: int = 0  # imagination: beam steps taken


@dataclass(frozen=True)
class Drawn:
    """The problems of a run and what their distances measure."""

    problems: list[Problem]
    distances: tuple[int, ...]
    measure: str  # SHORTEST or WALK
    largest: int | None  # the largest shortest distance from a start, when searched
    sampling: str  # how the problems were drawn, in words, for the report


def problem_json(domain: StateDomain, problem: Problem) -> dict:
    return {"id": problem.id, "distance": problem.distance, "start": domain.state_text(problem.start),
            "target": domain.state_text(problem.target)}


def result_json(domain: StateDomain, result: Result) -> dict:
    out = {k: v for k, v in asdict(result).items() if k != "program"}
    out["program"] = None if result.program is None else [domain.event_text(e) for e in result.program]
    return out


def shortest_distances(domain: StateDomain, start, depth: int | None = None,
                       budget: int | None = None) -> dict | None:
    """The shortest distance (events) from ``start`` to every state within ``depth`` events (all
    reachable ones when None), breadth-first over ``successors``; None when more than ``budget``
    successors must be looked at (None: ``STATE_BUDGET``)."""
    budget = STATE_BUDGET if budget is None else budget
    dist, frontier, looked = {start: 0}, [start], 0
    d = 0
    while frontier and (depth is None or d < depth):
        d += 1
        following = []
        for state in frontier:
            for _, there in domain.successors(state):
                looked += 1
                if looked > budget:
                    return None
                if there not in dist:
                    dist[there] = d
                    following.append(there)
        frontier = following
    return dist


def _one_variable_events(domain: StateDomain) -> bool:
    """Programs: every statement assigns one variable, and a constant can be assigned to any."""
    return domain.name == "programs"


PROGRAMS_SAMPLING = ("start: the zero state; target: <distance> variables changed, each to another value, "
                     "uniformly (a statement assigns one variable: the shortest program is <distance> statements)")
SHORTEST_SAMPLING = ("start: the domain's start_state; target: uniformly among the states exactly <distance> events "
                     "away, breadth-first over its successors")
WALK_SAMPLING = ("start: the domain's start_state; target: where its sample_events of <distance> events lead "
                 "(a walk length, not a shortest distance: the state graph is too large to search), redrawn when it "
                 "is the start")


WALK_ASKED = ("start: the domain's start_state; target: where its sample_events of <distance> events lead (a walk "
              "length, as asked: an upper bound on the shortest distance), redrawn when it is the start")


def draw_problems(domain: StateDomain, distances: Sequence[int] | None, per_distance: int, seed: int,
                  walks: bool = False) -> Drawn:
    """``per_distance`` problems per distance, the same for the same arguments: at exactly that
    shortest distance where the state graph can be searched, else (or with ``walks``, as earlier
    reports drew them) at that walk length; default distances (None) 1 up to the largest there is
    (at most ``MAX_DEFAULT_DISTANCE``), or ``DEFAULT_WALKS``. DomainSearchUsage for a distance the
    domain does not have."""
    if walks:
        distances = tuple(distances or DEFAULT_WALKS)
        return Drawn(_walk_problems(domain, distances, per_distance, seed), distances, WALK, None, WALK_ASKED)
    if _one_variable_events(domain):
        return _programs_problems(domain, distances, per_distance, seed)
    first = domain.start_state(split_rng(seed, "shortest-first-start"))
    reach = shortest_distances(domain, first, max(distances) if distances else None)
    if reach is None:
        distances = tuple(distances or DEFAULT_WALKS)
        return Drawn(_walk_problems(domain, distances, per_distance, seed), distances, WALK, None, WALK_SAMPLING)
    largest = max(reach.values()) if distances is None else None
    distances = tuple(distances or range(1, min(largest, MAX_DEFAULT_DISTANCE) + 1))
    if not distances:
        raise DomainSearchUsage(f"every history of {domain.name} from its start leads back to it: no problem to draw")
    table: dict = {first: reach}  # start -> its shortest distances
    at: dict = {}  # (start, distance) -> the states that far from it, in a fixed order

    def targets_at(start, d: int) -> list:
        if (start, d) not in at:
            at[start, d] = sorted((s for s, k in table[start].items() if k == d), key=domain.state_key)
        return at[start, d]

    problems = []
    for d in distances:
        rng = split_rng(seed, f"shortest-problems-{d}")
        for n in range(per_distance):
            for _ in range(100):  # a start with no state that far away is redrawn
                start = domain.start_state(rng)
                if start not in table:
                    table[start] = shortest_distances(domain, start, max(distances))
                if table[start] is None:  # another start's graph too large after all: walk lengths throughout
                    return Drawn(_walk_problems(domain, distances, per_distance, seed), distances, WALK, None,
                                 WALK_SAMPLING)
                targets = targets_at(start, d)
                if targets:
                    break
            else:
                far = max(max(t.values()) for t in table.values())
                raise DomainSearchUsage(f"distance {d}: no state of {domain.name} is that many events from a start "
                                        f"(the largest distance found is {far})")
            problems.append(Problem(f"d{d}-{n}", d, start, rng.choice(targets)))
    return Drawn(problems, distances, SHORTEST, largest, SHORTEST_SAMPLING)


def _programs_problems(domain: StateDomain, distances: Sequence[int] | None, per_distance: int, seed: int) -> Drawn:
    sizes = domain.readout()  # values per variable
    distances = tuple(distances or range(1, min(len(sizes), MAX_DEFAULT_DISTANCE) + 1))
    for d in distances:
        if d > len(sizes):
            raise DomainSearchUsage(f"distance {d}: no two states of programs are that far apart (a statement assigns "
                                    f"one variable: the largest distance is {len(sizes)})")
    problems = []
    for d in distances:
        rng = split_rng(seed, f"programs-shortest-{d}")
        for n in range(per_distance):
            start = domain.start_state(rng)
            classes = list(domain.state_classes(start))
            for i in sorted(rng.sample(range(len(classes)), d)):
                classes[i] = rng.choice([v for v in range(sizes[i]) if v != classes[i]])
            problems.append(Problem(f"d{d}-{n}", d, start, domain.state_of_classes(classes)))
    return Drawn(problems, distances, SHORTEST, len(sizes), PROGRAMS_SAMPLING)


def _walk_problems(domain: StateDomain, distances: Sequence[int], per_distance: int, seed: int) -> list[Problem]:
    """Targets where random histories of each length lead; a target equal to the start is redrawn."""
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


def make_problems(domain: StateDomain, distances: Sequence[int], per_distance: int, seed: int) -> list[Problem]:
    """``draw_problems``' problems alone."""
    return draw_problems(domain, distances, per_distance, seed).problems


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


def short_history_search(problems: Sequence[Problem], kernel: Kernel) -> list[Result]:
    """The domain's own short history between each problem's states, each claimed in one call
    (all asked together); a problem the domain names none for stays unsolved at no call."""
    results = [Result(p.id, p.distance) for p in problems]
    named = [(r, p, tuple(h)) for r, p in zip(results, problems)
             if (h := kernel.domain.short_history(p.start, p.target)) is not None]
    answers = kernel.ask([kernel.run_question(p.start, h, p.target) for _, p, h in named]) if named else []
    for (result, _, history), answer in zip(named, answers):
        result.calls = result.claims = 1
        if isinstance(answer, Complete):
            result.solved, result.program = True, history
        else:
            result.claims_rejected = 1
    return results


Progress = Callable[[str, int, int], None]  # (phase, done, total), as prover.run's
Note = Callable[[str], None]  # one line a finished phase


def _quiet(*args) -> None:
    pass


@dataclass(frozen=True)
class DomainProveConfig:
    data: Path  # certified dataset: programs, or a domain of one's own
    tracker: Path  # train-tracker run directory (imagination only)
    searcher: str = "imagination"  # one of SEARCHERS
    budget_calls: int = DEFAULT_BUDGET  # kernel questions per problem, at most
    problems: int = DEFAULT_PROBLEMS  # problems per distance
    distances: tuple[int, ...] | None = None  # None: 1 up to the largest (at most 8), or DEFAULT_WALKS
    seed: int = 0  # problems and proposal order
    out: Path = Path("runs/prove-domain")  # report.json, problems.jsonl, results.jsonl, prove.png
    jobs: int = 2  # Lean processes at once
    timeout_s: float = 300.0  # seconds one Lean process may run
    memory_mb: int = 8192  # address-space limit of one Lean process
    device: str = "cpu"  # where the tracker runs
    beam: int = 4  # imagination: states kept per step
    max_length: int = 24  # imagination: longest program tried
    baseline: bool = True  # run BASELINE beside the searcher, where the domain names short histories
    walk_lengths: bool = False  # distances as walk lengths, as earlier reports drew them, not shortest distances


def _searches(searcher: str, drawn: Drawn, config: DomainProveConfig, kernel: Kernel, tracker, candidates: list,
              progress: Progress, note: Note) -> list[Result]:
    """``searcher`` on every problem, one phase a distance; a line a finished phase."""
    results = []
    for d in drawn.distances:
        group = [p for p in drawn.problems if p.distance == d]
        phase, started = f"{searcher}, {drawn.measure} {d}", time.perf_counter()
        progress(phase, 0, len(group))
        if searcher == BASELINE:
            found = short_history_search(group, kernel)
        else:
            found = []
            for problem in group:
                if searcher == "imagination":
                    found.append(imagination_search(problem, tracker, candidates, kernel, config.budget_calls,
                                                    config.beam, config.max_length))
                else:
                    # the generator's name fixes the draws that recorded results rest on
                    rng = split_rng(config.seed, f"programs-search-{problem.id}")
                    found.append(kernel_uniform_search(problem, candidates, kernel, config.budget_calls, rng))
                progress(phase, len(found), len(group))
        progress(phase, len(group), len(group))
        note(f"{phase}: {_line(_summary(found))} ({time.perf_counter() - started:.0f} s)")
        results += found
    return results


def _line(summary: dict) -> str:
    per = summary["kernel_calls_per_solved"]
    return (f"{summary['solved']}/{summary['problems']} solved, {summary['kernel_calls']:,} kernel calls"
            + (f", {per:.1f} per solved" if per is not None else ""))


def prove_domain(config: DomainProveConfig, progress: Progress = _quiet, note: Note = _quiet) -> dict:
    """Run the searcher on the problems of a programs dataset or one of a domain of one's own (and
    the short-history baseline beside it, where the domain has one); write report.json,
    problems.jsonl, results.jsonl and prove.png. ``progress`` hears each phase's count, ``note``
    a line each phase."""
    started = time.perf_counter()
    manifest = read_manifest(config.data)
    domain = domain_of_manifest(manifest, str(manifest_path(config.data)))
    if config.searcher not in SEARCHERS:
        raise DomainSearchUsage(f"--searcher {config.searcher} is for rewrite chains; on {domain.name}: "
                                f"{', '.join(SEARCHERS)}")
    shorts = isinstance(domain, ShortHistories)
    if config.searcher == BASELINE and not shorts:
        raise DomainSearchUsage(f"--searcher {BASELINE}: {domain.name} names no short history between two states "
                                "(no short_history method); use imagination or kernel-uniform")
    drawn = draw_problems(domain, config.distances, config.problems, config.seed, config.walk_lengths)
    note(f"{len(drawn.problems)} problems: {config.problems} at each {drawn.measure} of "
         f"{', '.join(map(str, drawn.distances))}")
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
    results = _searches(config.searcher, drawn, config, kernel, tracker, candidates, progress, note)
    searched_questions = kernel.questions
    baseline = None
    if config.baseline and shorts and config.searcher != BASELINE:
        baseline = _searches(BASELINE, drawn, config, kernel, tracker, candidates, progress, note)
    solved = [(p, r) for p, r in zip(drawn.problems, results) if r.solved]
    progress("audit", 0, len(solved))
    audit = kernel.ask([kernel.run_question(p.start, r.program, p.target) for p, r in solved]) if solved else []
    failing = sum(not isinstance(a, Complete) for a in audit)
    report = _report(config, manifest, drawn, results, baseline, searched_questions, kernel, failing,
                     time.perf_counter() - started, tracker)
    with staged_files(Path(config.out)) as staging:
        (staging / "problems.jsonl").write_text("".join(json.dumps(problem_json(domain, p)) + "\n"
                                                        for p in drawn.problems))
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


def _by_distance(results: list[Result], distances: Sequence[int]) -> dict:
    return {str(d): _summary([r for r in results if r.distance == d]) for d in distances}


def _report(config: DomainProveConfig, manifest: dict, drawn: Drawn, results: list[Result],
            baseline: list[Result] | None, searched_questions: int, kernel: Kernel, failing: int, seconds: float,
            tracker) -> dict:
    return {
        "domain": manifest.get("domain"), "searcher": config.searcher, "budget_calls": config.budget_calls,
        "distances": list(drawn.distances), "distance_measure": drawn.measure, "largest_distance": drawn.largest,
        "problems_per_distance": config.problems,
        **_summary(results),
        "by_distance": _by_distance(results, drawn.distances),
        "baseline": None if baseline is None else {"searcher": BASELINE, **_summary(baseline),
                                                   "by_distance": _by_distance(baseline, drawn.distances)},
        "kernel_questions_searched": searched_questions, "lean_processes": kernel.processes,
        "distinct_certified_solutions": len({r.program for r in results if r.solved}),
        "solutions_failing_audit": failing, "seconds": round(seconds, 3),
        "problem_sampling": drawn.sampling,
        "config": {k: (str(v) if isinstance(v, Path) else v) for k, v in asdict(config).items()},
        "torch_threads": torch.get_num_threads(),
        "tracker": None if tracker is None else tracker.describe(),
        "dataset": {"path": str(config.data), "dataset_id": dataset_id(manifest), "seed": manifest.get("seed")},
        "lean": {"version": kernel.lean.version, "githash": kernel.lean.githash},
        "library_hash": kernel.library.library_hash, "package_version": package_version(),
    }

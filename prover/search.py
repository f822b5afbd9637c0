"""Searchers for a rewrite path from a problem's start tree to its target, and the driver
that runs many problems in lockstep so that their questions share Lean processes and their
latent states share tracker batches.

- ``kernel-uniform``: breadth-first. Expanding a tree proposes every event whose rule
  matches it syntactically (uniformly shuffled) and asks the kernel for each successor; the
  states it holds are Lean's answers.
- ``kernel-lookahead``: the same, expanding best-first by the edit distance of the Polish
  token strings of the kernel's answers to the target's (ties: first found).
- ``kernel-blind``: breadth-first, but the searcher does not read rules off the tree: at
  each node it tries every (rule, position) of the domain, in a uniformly shuffled order,
  each try a question to the kernel; Lean's answers are the only states it holds.
- ``oracle``: the same, but a verdict oracle (``prover.verdict_oracle``) reads the start and
  the events taken so far and scores every (rule, position); only the events it predicts
  accepted are tried, best first. The recall of the truly accepted events is audited.
- ``imagination``: the same breadth-first search as ``kernel-uniform`` (the same proposals in
  the same order for the same seed), but the states it holds are the imagination's latent
  states, moved by ``step``; it proposes events from the decoded tree and tests the goal by
  decoding. When a candidate decodes to the target it asks the kernel once to certify the
  claimed path (the decoded trees and the events); a rejected claim costs that call and the
  search goes on while the budget lasts.
- ``oracle-imagination``: plans entirely in a trained oracle's imagination
  (``oracle.scorer.LatentPlanner``): from each imagined state (a slot) it expands the events of
  the domain the oracle predicts accepted, best first, moves to their imagined successors with
  the recurrence's own transition, and stops at a predicted *complete* (an imagined successor
  within the comparison's threshold of the goal read as a start); then it asks Lean once to
  certify the whole path, events only, Lean inferring every intermediate tree. A refused path
  costs its call and the search goes on. States are expanded nearest the goal first; an
  imagined state within the threshold of one already held is the same state. It never decodes a
  tree and never applies a rule: the audit of its solutions comes after the search, in Lean.

Each searcher is a generator: it yields requests (questions for the kernel, or latent
states to encode, step and decode) and receives their answers, so the driver can batch the
requests of all live problems. The faithfulness audit (is each held state and each candidate
successor the true tree?) replays events with ``chains.rules.apply``, outside the count.
"""
from __future__ import annotations

import heapq
import random
from collections import deque
from collections.abc import Callable, Generator, Hashable, Sequence
from dataclasses import dataclass

from chains.rules import RULES, Event, apply, redex
from chains.trees import Tree, internal_positions, tokens
from prover.imagination import Imagination
from prover.verdict_oracle import VerdictOracle
from prover.kernel import Kernel, PathClaim, Probe, Question
from prover.problems import Problem

SEARCHERS = ("imagination", "kernel-uniform", "kernel-lookahead", "kernel-blind", "oracle", "oracle-imagination")


@dataclass(frozen=True)
class SearchConfig:
    searcher: str = "imagination"  # one of SEARCHERS
    budget_calls: int = 1000  # kernel questions per problem, at most
    seed: int = 0  # seeds the proposal order of every problem
    rules: tuple[str, ...] = tuple(name for name, r in RULES.items() if r.tier == 1)  # events proposed
    max_size: int | None = None  # tier 2: no proposal may produce a larger tree (truth replay)
    max_expansions: int = 100_000  # expansions per problem, a guard for unbounded domains
    positions: tuple[str, ...] = ("", "0", "1", "00", "01", "10", "11")  # blind and oracle: where events are tried
    max_depth: int = 32  # oracle-imagination: longest path planned

    def __post_init__(self) -> None:
        if self.searcher not in SEARCHERS:
            raise ValueError(f"searcher must be one of {', '.join(SEARCHERS)}, got {self.searcher!r}")
        if self.budget_calls < 1:
            raise ValueError(f"the kernel-call budget must be at least 1, got {self.budget_calls}")


@dataclass
class ProblemResult:
    """What one search did. ``calls`` is the kernel's own count for this problem."""

    id: str
    distance: int
    solved: bool = False
    events: tuple[Event, ...] | None = None  # the solution, when solved
    calls: int = 0  # kernel questions (filled in from the kernel's count)
    questions: int = 0  # questions as the searcher tallied them (must equal calls)
    claims: int = 0  # imagination: paths claimed
    claims_rejected: int = 0
    expansions: int = 0
    held: int = 0  # states held (start and every new state kept)
    held_equal: int = 0  # ... equal to the true tree
    proposed: int = 0  # candidate successors produced
    proposed_equal: int = 0  # ... equal to the true tree
    start_read_equal: bool | None = None  # imagination: the start was decoded right
    accepted_available: int = 0  # blind and oracle: events truly accepted at the expanded trees
    accepted_predicted: int = 0  # oracle: ... of those, predicted accepted
    rejected_asked: int = 0  # blind and oracle: questions Lean answered with a rejection

    def to_json(self) -> dict:
        out = {k: v for k, v in self.__dict__.items() if k != "events"}
        out["events"] = None if self.events is None else [str(e) for e in self.events]
        return out


# -- requests a searcher yields ---------------------------------------------------------------

@dataclass
class Ask:
    questions: list[Question]


@dataclass
class Encode:
    histories: list[tuple[Tree, Sequence[Event]]]


@dataclass
class Step:
    """Move states by events; the answer is (new states, their decoded trees)."""

    states: list
    events: list[Event]


@dataclass
class Decode:
    states: list


@dataclass
class Score:
    """The oracle's probability that Lean accepts each candidate after each history."""

    histories: list[tuple[Tree, Tree, Sequence[Event]]]  # (start, goal, events since the start)
    candidates: list[list[Event]]


@dataclass
class PlanStart:
    """Read (start, target) into the planner: the answer is (start slot, start view, goal view)."""

    start: Tree
    target: Tree


@dataclass
class PlanExpand:
    """Move a slot by every event of the domain: the answer is (P(accepted) (E,), successor
    slots (E, C), successor views (E, C), distance to the goal (E,))."""

    slot: object
    goal: object
    events: list[Event]


Search = Generator[object, object, None]


def proposals(tree: Tree, rules: Sequence[str]) -> list[Event]:
    """Every event whose rule's left side matches ``tree`` at its position (a syntactic
    match; what the step yields is the kernel's or the imagination's business)."""
    return [Event(name, path) for path in internal_positions(tree) for name in rules
            if redex(tree, Event(name, path)) is not None]


def edit_distance(a: Sequence[str], b: Sequence[str]) -> int:
    """Levenshtein distance between token sequences."""
    row = list(range(len(b) + 1))
    for i, x in enumerate(a, 1):
        prev, row[0] = row[0], i
        for j, y in enumerate(b, 1):
            prev, row[j] = row[j], min(row[j] + 1, row[j - 1] + 1, prev + (x != y))
    return row[-1]


def _path(parents: dict, node: Tree) -> list[tuple[Tree, Event]]:
    steps = []
    while parents[node] is not None:
        parent, event = parents[node]
        steps.append((parent, event))
        node = parent
    return steps[::-1]


def _adopt(problem: Problem, result: ProblemResult, parents: dict, node: Tree, events: Sequence[Event],
           answers: Sequence, truths: Sequence[Tree | None]) -> list[Tree]:
    """Keep each new tree Lean accepted as a state reached from ``node``; the new states in
    order, or none once the target is among them (the problem is then solved)."""
    children = []
    for event, answer, truth in zip(events, answers, truths):
        if not answer.accepted or answer.tree in parents:
            continue
        child = answer.tree
        parents[child] = (node, event)
        result.held += 1
        result.held_equal += child == truth
        if child == problem.target:
            result.solved = True
            result.events = tuple(e for _, e in _path(parents, child))
            return []
        children.append(child)
    return children


def kernel_search(problem: Problem, config: SearchConfig, result: ProblemResult,
                  remaining: Callable[[], int]) -> Search:
    rng = random.Random(f"{config.seed}:{problem.id}")
    lookahead = config.searcher == "kernel-lookahead"
    target_tokens = tokens(problem.target)
    parents: dict[Tree, tuple[Tree, Event] | None] = {problem.start: None}
    result.held, result.held_equal = 1, 1  # the start is given, not read
    queue: deque[Tree] = deque([problem.start])
    heap: list[tuple[int, int, Tree]] = [(0, 0, problem.start)]
    order = 0
    while (heap if lookahead else queue) and result.expansions < config.max_expansions:
        node = heapq.heappop(heap)[2] if lookahead else queue.popleft()
        result.expansions += 1
        events = proposals(node, config.rules)
        rng.shuffle(events)
        events = events[:remaining()]
        if not events:
            return  # the budget is spent
        answers = yield Ask([Probe(node, e) for e in events])
        result.questions += len(events)
        result.proposed += len(events)
        truths = [apply(node, event, config.max_size) for event in events]  # audit only
        result.proposed_equal += sum(a.accepted and a.tree == t for a, t in zip(answers, truths))
        children = _adopt(problem, result, parents, node, events, answers, truths)
        if result.solved:
            return
        for child in children:
            order += 1
            if lookahead:
                heapq.heappush(heap, (edit_distance(tokens(child), target_tokens), order, child))
            else:
                queue.append(child)


def verdict_search(problem: Problem, config: SearchConfig, result: ProblemResult,
                   remaining: Callable[[], int]) -> Search:
    """``kernel-blind`` and ``oracle``: breadth-first over Lean's answers, trying events of the
    whole domain (all of them, or those the oracle predicts accepted, best first)."""
    rng = random.Random(f"{config.seed}:{problem.id}")
    domain_events = [Event(rule, path) for path in config.positions for rule in config.rules]
    parents: dict[Tree, tuple[Tree, Event] | None] = {problem.start: None}
    result.held, result.held_equal = 1, 1
    queue: deque[Tree] = deque([problem.start])
    while queue and result.expansions < config.max_expansions:
        node = queue.popleft()
        result.expansions += 1
        events = list(domain_events)
        rng.shuffle(events)  # the order of ties
        accepted = {e for e in events if apply(node, e) is not None}  # audit only
        result.accepted_available += len(accepted)
        if config.searcher == "oracle":
            history = tuple(e for _, e in _path(parents, node))
            [scores] = yield Score([(problem.start, problem.target, history)], [events])
            ranked = sorted(zip(scores, range(len(events)), events), key=lambda x: (-x[0], x[1]))
            events = [e for p, _, e in ranked if p >= 0.5]
            result.accepted_predicted += len(accepted & set(events))
        if not events:
            continue
        events = events[:remaining()]
        if not events:
            return  # the budget is spent
        answers = yield Ask([Probe(node, e) for e in events])
        result.questions += len(events)
        result.rejected_asked += sum(not a.accepted for a in answers)
        result.proposed += sum(a.accepted for a in answers)
        truths = [apply(node, event) for event in events]  # audit only
        result.proposed_equal += sum(a.accepted and a.tree == t for a, t in zip(answers, truths))
        queue.extend(_adopt(problem, result, parents, node, events, answers, truths))
        if result.solved:
            return


def imagination_search(problem: Problem, config: SearchConfig, result: ProblemResult,
                       remaining: Callable[[], int]) -> Search:
    rng = random.Random(f"{config.seed}:{problem.id}")
    [latent] = yield Encode([(problem.prefix_start, problem.prefix)])
    [start] = yield Decode([latent])
    result.held = 1
    result.held_equal = result.start_read_equal = start == problem.start
    if start is None:
        return
    parents: dict[Tree, tuple[Tree, Event] | None] = {start: None}
    latents = {start: latent}
    truths: dict[Tree, Tree | None] = {start: problem.start}  # audit only
    queue: deque[Tree] = deque([start])
    while queue and result.expansions < config.max_expansions:
        node = queue.popleft()
        result.expansions += 1
        events = proposals(node, config.rules)
        rng.shuffle(events)
        if not events:
            continue
        moved, decoded = yield Step([latents[node]] * len(events), events)
        parent_truth = truths[node]
        child_truths = [None if parent_truth is None else apply(parent_truth, event, config.max_size)
                        for event in events]  # audit only
        result.proposed += len(events)
        result.proposed_equal += sum(c is not None and c == t for c, t in zip(decoded, child_truths))
        for event, child_latent, child, truth in zip(events, moved, decoded, child_truths):
            if child is None:
                continue
            if child == problem.target:
                if remaining() < 1:
                    return  # the budget is spent
                claim = PathClaim(problem.start, problem.target, tuple(_path(parents, node)) + ((node, event),))
                [answer] = yield Ask([claim])
                result.questions += 1
                result.claims += 1
                if answer.complete:
                    result.solved = True
                    result.events = claim.events
                    return
                result.claims_rejected += 1
                continue
            if child in parents:
                continue
            parents[child] = (node, event)
            latents[child] = child_latent
            truths[child] = truth
            result.held += 1
            result.held_equal += child == truth
            queue.append(child)


def oracle_imagination_search(problem: Problem, config: SearchConfig, result: ProblemResult,
                              remaining: Callable[[], int], threshold: float) -> Search:
    import torch  # the planner's states are tensors

    from tracker.objectives import centred_cosine_distance

    domain_events = [Event(rule, path) for path in config.positions for rule in config.rules]
    slot, view, goal = yield PlanStart(problem.start, problem.target)
    held = [view]  # views of the imagined states held, for telling a new state from an old one
    heap: list[tuple[float, int, int]] = [(float(centred_cosine_distance(view, goal)), 0, 0)]
    nodes: list[tuple[object, tuple[Event, ...]]] = [(slot, ())]  # per node: its slot and the events to it
    result.held = 1
    while heap and result.expansions < config.max_expansions:
        _, _, index = heapq.heappop(heap)
        slot, path = nodes[index]
        if len(path) >= config.max_depth:
            continue
        result.expansions += 1
        p, slots, views, distance = yield PlanExpand(slot, goal, domain_events)
        ranked = sorted(range(len(domain_events)), key=lambda k: (-float(p[k]), k))
        for k in ranked:
            if float(p[k]) < 0.5:
                break  # predicted rejected, and so is every event ranked after it
            result.proposed += 1
            events = path + (domain_events[k],)
            if float(distance[k]) < threshold:  # predicted complete
                if remaining() < 1:
                    return  # the budget is spent
                claim = PathClaim(problem.start, problem.target,
                                  ((problem.start, events[0]),) + tuple((None, e) for e in events[1:]))
                [answer] = yield Ask([claim])
                result.questions += 1
                result.claims += 1
                if answer.complete:
                    result.solved = True
                    result.events = events
                    return
                result.claims_rejected += 1
                continue
            stacked = torch.stack(held)  # (held, C)
            if float(centred_cosine_distance(stacked, views[k].expand_as(stacked)).min()) < threshold:
                continue  # an imagined state already held
            held.append(views[k])
            nodes.append((slots[k], events))
            result.held += 1
            heapq.heappush(heap, (float(distance[k]), len(nodes), len(nodes) - 1))


def run_searches(problems: Sequence[Problem], config: SearchConfig, kernel: Kernel,
                 imagination: Imagination | None = None,
                 progress: Callable[[int, int], None] | None = None,
                 oracle: VerdictOracle | None = None, planner=None) -> list[ProblemResult]:
    """Run one search per problem, all in lockstep; ``kernel`` counts and caps the calls.
    ``planner``: the ``oracle-imagination`` searcher's ``oracle.scorer.LatentPlanner``."""
    if config.searcher == "imagination" and imagination is None:
        raise ValueError("the imagination searcher needs an imagination")
    if config.searcher == "oracle" and oracle is None:
        raise ValueError("the oracle searcher needs a verdict oracle")
    if config.searcher == "oracle-imagination" and planner is None:
        raise ValueError("the oracle-imagination searcher needs a latent planner")
    if kernel.budget is not None and kernel.budget != config.budget_calls:
        raise ValueError("the kernel's budget is not the search's budget")
    results = {p.id: ProblemResult(p.id, p.distance) for p in problems}
    if len(results) != len(problems):
        raise ValueError("problem ids must be distinct")
    searches: dict[str, Search] = {}
    pending: dict[str, object] = {}

    def remaining_of(owner: Hashable) -> Callable[[], int]:
        return lambda: config.budget_calls - kernel.calls[owner]

    def advance(pid: str, answer: object) -> None:
        try:
            pending[pid] = searches[pid].send(answer)
        except StopIteration:
            pending.pop(pid, None)
            if progress is not None:
                progress(len(problems) - len(pending), len(problems))

    search = {"imagination": imagination_search, "kernel-blind": verdict_search,
              "oracle": verdict_search}.get(config.searcher, kernel_search)
    for p in problems:
        if config.searcher == "oracle-imagination":
            searches[p.id] = oracle_imagination_search(p, config, results[p.id], remaining_of(p.id), planner.threshold)
        else:
            searches[p.id] = search(p, config, results[p.id], remaining_of(p.id))
        advance(p.id, None)
    while pending:
        by_kind: dict[type, list[str]] = {}
        for pid, request in pending.items():
            by_kind.setdefault(type(request), []).append(pid)
        answers: dict[str, object] = {}
        if Ask in by_kind:
            pids = by_kind[Ask]
            flat = [(pid, q) for pid in pids for q in pending[pid].questions]
            replies = iter(kernel.ask(flat))
            for pid in pids:
                answers[pid] = [next(replies) for _ in pending[pid].questions]
        if Encode in by_kind:
            pids = by_kind[Encode]
            replies = iter(imagination.encode([h for pid in pids for h in pending[pid].histories]))
            for pid in pids:
                answers[pid] = [next(replies) for _ in pending[pid].histories]
        if Decode in by_kind:
            pids = by_kind[Decode]
            replies = iter(imagination.decode([s for pid in pids for s in pending[pid].states]))
            for pid in pids:
                answers[pid] = [next(replies) for _ in pending[pid].states]
        if Step in by_kind:
            pids = by_kind[Step]
            moved = imagination.step([s for pid in pids for s in pending[pid].states],
                                     [e for pid in pids for e in pending[pid].events])
            decoded = imagination.decode(moved)
            k = 0
            for pid in pids:
                n = len(pending[pid].events)
                answers[pid] = (moved[k:k + n], decoded[k:k + n])
                k += n
        if Score in by_kind:
            pids = by_kind[Score]
            replies = iter(oracle.score([h for pid in pids for h in pending[pid].histories],
                                        [c for pid in pids for c in pending[pid].candidates]))
            for pid in pids:
                answers[pid] = [next(replies) for _ in pending[pid].histories]
        if PlanStart in by_kind:
            pids = by_kind[PlanStart]
            slots = planner.start([pending[pid].start for pid in pids])
            views = planner.view(slots)
            goals = planner.goal([pending[pid].target for pid in pids])
            for n, pid in enumerate(pids):
                answers[pid] = (slots[n], views[n], goals[n])
        if PlanExpand in by_kind:
            pids = by_kind[PlanExpand]
            import torch

            p, slots, views, distance = planner.expand(torch.stack([pending[pid].slot for pid in pids]),
                                                       torch.stack([pending[pid].goal for pid in pids]),
                                                       pending[pids[0]].events)
            for n, pid in enumerate(pids):
                answers[pid] = (p[n], slots[n], views[n], distance[n])
        for pid, answer in answers.items():
            advance(pid, answer)
    for p in problems:
        results[p.id].calls = kernel.calls[p.id]
    return [results[p.id] for p in problems]

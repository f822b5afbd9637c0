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
successor the true tree?) replays events with ``chains.rewrite.rules.apply``, outside the count.
"""
from __future__ import annotations

import heapq
import random
from collections import deque
from collections.abc import Callable, Generator, Sequence
from dataclasses import dataclass

from chains.rewrite.rules import RULES, Event, apply, redex
from chains.rewrite.trees import Tree, internal_positions, tokens
from prover.imagination import Imagination
from prover.kernel import Kernel, PathClaim, Probe, Question
from prover.problems import Problem
from prover.verdict_oracle import VerdictOracle

SEARCHERS = ("imagination", "kernel-uniform", "kernel-lookahead", "kernel-blind", "oracle", "oracle-imagination")


@dataclass(frozen=True, kw_only=True)
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

    from tracker.losses import centred_cosine_distance

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


Answerer = Callable[["_Models", list[str], list], list]


@dataclass(frozen=True)
class _Models:
    """What answers the searches' requests: the kernel, which counts and caps the calls, and the
    searcher's model (the imagination, the verdict oracle or the latent planner), if it has one."""

    kernel: Kernel
    imagination: Imagination | None = None
    oracle: VerdictOracle | None = None
    planner: object | None = None  # oracle.scorer.LatentPlanner


def _ask(models: _Models, pids: list[str], requests: list[Ask]) -> list:
    """Every problem's questions in one call to the kernel, each counted against its problem."""
    replies = iter(models.kernel.ask([(pid, q) for pid, r in zip(pids, requests) for q in r.questions]))
    return [[next(replies) for _ in r.questions] for r in requests]


def _encode(models: _Models, pids: list[str], requests: list[Encode]) -> list:
    replies = iter(models.imagination.encode([h for r in requests for h in r.histories]))
    return [[next(replies) for _ in r.histories] for r in requests]


def _decode(models: _Models, pids: list[str], requests: list[Decode]) -> list:
    replies = iter(models.imagination.decode([s for r in requests for s in r.states]))
    return [[next(replies) for _ in r.states] for r in requests]


def _step(models: _Models, pids: list[str], requests: list[Step]) -> list:
    """(moved states, their decoded trees) per request, all moved and decoded in one batch."""
    moved = models.imagination.step([s for r in requests for s in r.states], [e for r in requests for e in r.events])
    decoded = models.imagination.decode(moved)
    answers, k = [], 0
    for r in requests:
        n = len(r.events)
        answers.append((moved[k:k + n], decoded[k:k + n]))
        k += n
    return answers


def _score(models: _Models, pids: list[str], requests: list[Score]) -> list:
    replies = iter(models.oracle.score([h for r in requests for h in r.histories],
                                       [c for r in requests for c in r.candidates]))
    return [[next(replies) for _ in r.histories] for r in requests]


def _plan_start(models: _Models, pids: list[str], requests: list[PlanStart]) -> list:
    planner = models.planner
    slots = planner.start([r.start for r in requests])
    views = planner.view(slots)
    goals = planner.goal([r.target for r in requests])
    return [(slots[n], views[n], goals[n]) for n in range(len(requests))]


def _plan_expand(models: _Models, pids: list[str], requests: list[PlanExpand]) -> list:
    import torch

    p, slots, views, distance = models.planner.expand(torch.stack([r.slot for r in requests]),
                                                      torch.stack([r.goal for r in requests]), requests[0].events)
    return [(p[n], slots[n], views[n], distance[n]) for n in range(len(requests))]


# every kind of request and what answers it, in the order the kinds are answered within a round
ANSWERERS: dict[type, Answerer] = {Ask: _ask, Encode: _encode, Decode: _decode, Step: _step, Score: _score,
                                   PlanStart: _plan_start, PlanExpand: _plan_expand}


def _check_models(config: SearchConfig, models: _Models) -> None:
    """ValueError when the searcher lacks its model or the kernel's budget is not the search's."""
    if config.searcher == "imagination" and models.imagination is None:
        raise ValueError("the imagination searcher needs an imagination")
    if config.searcher == "oracle" and models.oracle is None:
        raise ValueError("the oracle searcher needs a verdict oracle")
    if config.searcher == "oracle-imagination" and models.planner is None:
        raise ValueError("the oracle-imagination searcher needs a latent planner")
    if models.kernel.budget is not None and models.kernel.budget != config.budget_calls:
        raise ValueError("the kernel's budget is not the search's budget")


def _search(problem: Problem, config: SearchConfig, result: ProblemResult, models: _Models) -> Search:
    """The searcher of ``config`` on one problem, its calls left read off the kernel's count."""
    def remaining() -> int:
        return config.budget_calls - models.kernel.calls[problem.id]

    if config.searcher == "oracle-imagination":
        return oracle_imagination_search(problem, config, result, remaining, models.planner.threshold)
    search = {"imagination": imagination_search, "kernel-blind": verdict_search,
              "oracle": verdict_search}.get(config.searcher, kernel_search)
    return search(problem, config, result, remaining)


class _Lockstep:
    """The live searches, each waiting on the request it last yielded."""

    def __init__(self, total: int, progress: Callable[[int, int], None] | None) -> None:
        self.total, self.progress = total, progress
        self.searches: dict[str, Search] = {}
        self.pending: dict[str, object] = {}  # problem id -> the request its search waits on

    def start(self, pid: str, search: Search) -> None:
        self.searches[pid] = search
        self.advance(pid, None)

    def advance(self, pid: str, answer: object) -> None:
        """Hand a search its answer; it waits on its next request or is done."""
        try:
            self.pending[pid] = self.searches[pid].send(answer)
        except StopIteration:
            self.pending.pop(pid, None)
            if self.progress is not None:
                self.progress(self.total - len(self.pending), self.total)

    def round(self, models: _Models) -> None:
        """Answer every pending request, each kind in one batch, then hand the answers back."""
        by_kind: dict[type, list[str]] = {}
        for pid, request in self.pending.items():
            by_kind.setdefault(type(request), []).append(pid)
        answers: dict[str, object] = {}
        for kind, answerer in ANSWERERS.items():
            if kind in by_kind:
                pids = by_kind[kind]
                answers.update(zip(pids, answerer(models, pids, [self.pending[pid] for pid in pids])))
        for pid, answer in answers.items():
            self.advance(pid, answer)


def run_searches(problems: Sequence[Problem], config: SearchConfig, kernel: Kernel,
                 imagination: Imagination | None = None,
                 progress: Callable[[int, int], None] | None = None,
                 oracle: VerdictOracle | None = None, planner=None) -> list[ProblemResult]:
    """Run one search per problem, all in lockstep; ``kernel`` counts and caps the calls.
    ``planner``: the ``oracle-imagination`` searcher's ``oracle.scorer.LatentPlanner``."""
    models = _Models(kernel, imagination, oracle, planner)
    _check_models(config, models)
    results = {p.id: ProblemResult(p.id, p.distance) for p in problems}
    if len(results) != len(problems):
        raise ValueError("problem ids must be distinct")
    lockstep = _Lockstep(len(problems), progress)
    for p in problems:
        lockstep.start(p.id, _search(p, config, results[p.id], models))
    while lockstep.pending:
        lockstep.round(models)
    for p in problems:
        results[p.id].calls = kernel.calls[p.id]
    return [results[p.id] for p in problems]

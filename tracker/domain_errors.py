"""Where a programs tracker goes wrong: which statements, which variables, which lengths.

A tracker that is not exact at some length is read free on programs whose every state Python's
interpreter knows (``chains.programs.syntax``), one statement at a time, and its decoded state is
compared with the true one after every statement:

- ``statements``: over fresh random programs, every step whose state the tracker still had right
  before it, by the statement's operation: the share it leaves right (a statement the tracker does
  not compute), and by target variable.
- ``lengths``: over the dataset's test programs of each length, the share wrong at the end of each
  variable, and the first wrong statement of each program (quartiles, and how many programs never
  go wrong): a tracker that computes every statement but drifts goes wrong late and anywhere, one
  that misses a kind of statement goes wrong early, at the first such statement.
"""
from __future__ import annotations

import random
from collections import Counter
from dataclasses import asdict, dataclass
from itertools import islice
from pathlib import Path

import torch

from chains.manifest import read_manifest
from chains.programs.files import machine_of, read_programs
from chains.programs.syntax import VARIABLES
from tracker.domain_run import DomainRun


@dataclass(frozen=True)
class ErrorsConfig:
    seed: int = 0  # draws the fresh programs
    programs: int = 512  # fresh random programs read for the statements' table
    length: int = 64  # statements in each of them
    chains: int = 128  # test programs read per length
    chunk: int = 256  # programs stepped in lockstep at once


def _free_run(run: DomainRun, starts: list, programs: list[tuple]) -> tuple[list[list[bool]], list[tuple]]:
    """Each program read free from its start: whether the decoded state is right after each
    statement (per program), and the decoded end states."""
    domain = run.domain
    w = run.encode_batch(starts)
    truth = list(starts)
    right: list[list[bool]] = [[] for _ in programs]
    for t in range(max(len(p) for p in programs)):
        live = [i for i, p in enumerate(programs) if t < len(p)]
        events = [programs[i][t] for i in live]
        index = torch.tensor(live, device=w.device)
        w[index] = run.step_batch(w[index], events)
        decoded = run.decode_batch(w[index])
        for i, event, got in zip(live, events, decoded):
            truth[i] = domain.apply(truth[i], event)
            right[i].append(tuple(got) == tuple(truth[i]))
    return right, run.decode_batch(w)


def statement_errors(run: DomainRun, config: ErrorsConfig = ErrorsConfig()) -> dict:
    """Fresh programs read free: the share of steps left right, by operation and by target
    variable, over the steps whose state was right before them."""
    rng = random.Random(config.seed)
    domain = run.domain
    kept, steps = Counter(), Counter()
    by_target_kept, by_target = Counter(), Counter()
    for first in range(0, config.programs, config.chunk):
        n = min(config.chunk, config.programs - first)
        starts = [domain.start_state(rng) for _ in range(n)]
        programs = [tuple(domain.sample_events(rng, s, config.length)) for s in starts]
        right, _ = _free_run(run, starts, programs)
        for program, marks in zip(programs, right):
            before = True
            for statement, now in zip(program, marks):
                if before:
                    steps[statement.op] += 1
                    kept[statement.op] += now
                    by_target[statement.target] += 1
                    by_target_kept[statement.target] += now
                before = now
    return {"right_by_operation": {op: {"right": kept[op] / steps[op], "steps": steps[op]} for op in sorted(steps)},
            "right_by_target": {f"v{v}": by_target_kept[v] / by_target[v] for v in sorted(by_target)},
            "steps": sum(steps.values())}


def _quartiles(values: list[int]) -> list[int] | None:
    if not values:
        return None
    ordered = sorted(values)
    return [ordered[int(q * (len(ordered) - 1))] for q in (0.25, 0.5, 0.75)]


def length_errors(run: DomainRun, data: Path, config: ErrorsConfig = ErrorsConfig()) -> dict:
    """The dataset's test programs read free, by length: each variable's share wrong at the end,
    and the first wrong statement (1-based quartiles; ``never``: programs right at every step)."""
    manifest = read_manifest(data)
    machine = machine_of(manifest, str(data))
    out = {}
    for name in sorted((n for n in manifest["files"] if n.startswith("test-")),
                       key=lambda n: int(n.split("-")[1].split(".")[0])):
        rows = [r.history for r in islice(read_programs(Path(data) / name, machine), config.chains)]
        starts, programs = [h.start for h in rows], [h.events for h in rows]
        right, ends = _free_run(run, starts, programs)
        truths = [run.domain.state_classes(_replayed(run, s, p)) for s, p in zip(starts, programs)]
        wrong = [sum(e[v] != t[v] for e, t in zip(ends, truths)) / len(rows) for v in range(VARIABLES)]
        first = [marks.index(False) + 1 for marks in right if False in marks]
        out[name.split("-")[1].split(".")[0]] = {
            "programs": len(rows), "wrong_by_variable": {f"v{v}": wrong[v] for v in range(VARIABLES)},
            "first_wrong_quartiles": _quartiles(first), "never_wrong": len(rows) - len(first)}
    return out


def _replayed(run: DomainRun, start, program: tuple):  # the true end state
    state = start
    for statement in program:
        state = run.domain.apply(state, statement)
    return state


def where_wrong(run: DomainRun, data: Path, config: ErrorsConfig = ErrorsConfig()) -> dict:
    """Both tables, with the settings that drew them."""
    with torch.inference_mode():
        return {"config": asdict(config), "statements": statement_errors(run, config),
                "lengths": length_errors(run, data, config)}

"""The ``prove`` command: kernel-call-counting search for rewrite paths."""
from __future__ import annotations

import json
import os
import re
from pathlib import Path

import click
from click.core import ParameterSource

from leanbridge.certify_domain import is_domain_dataset
from leanbridge.certify_programs import is_programs_dataset
from leanbridge.cliutil import OneLineCommand, PhaseBars, positive_ints, user_errors
from prover import domain_search
from prover.datasets import OtherDomain, dataset_to_search
from prover.domain_search import DomainProveConfig, DomainSearchError, DomainSearchUsage, prove_domain
from prover.run import ProveConfig, ProveError, ProveUsage, prove
from prover.search import SEARCHERS
from prover.summary import summary_lines


DOMAIN_SEARCHERS = tuple(s for s in domain_search.SEARCHERS if s not in SEARCHERS)  # programs, one's own only
DEVICE_SPEC = re.compile(r"auto|cpu|cuda(:\d+)?|mps")


def _device_spec(ctx, param, value: str) -> str:
    """click callback: a device spec of ``training.device`` (whether this machine has it is the library's check)."""
    if not DEVICE_SPEC.fullmatch(value.strip().lower()):
        raise click.BadParameter(f"unknown device {value!r}; choose one of auto, cpu, cuda, cuda:N, mps")
    return value


@click.command(cls=OneLineCommand, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--budget-calls", type=click.IntRange(1), default=None,
              help=f"Kernel calls (questions to Lean) allowed per problem [default: {ProveConfig.budget_calls:,} on "
                   f"rewrite chains (registered results rest on it); {domain_search.DEFAULT_BUDGET} on programs and a "
                   "domain of one's own].")
@click.option("--data", type=click.Path(path_type=Path), default=None,
              help="Certified dataset directory (its domain and identity) [default: the dataset the searcher's run "
                   "(--tracker, or --oracle for the oracle searchers; for the kernel searchers the run given, if "
                   "any) was trained on, as its checkpoint records it; else data/tier1-a4]. A dataset of another "
                   "domain than that run's is refused.")
@click.option("--tracker", type=click.Path(path_type=Path), default=Path("runs/recurrence-combo-s0"),
              show_default=True, help="train-tracker run directory used as imagination.")
@click.option("--oracle", type=click.Path(path_type=Path), default=Path("runs/oracle-recurrence-combo-s0"),
              show_default=True, help="train-oracle run directory used by the oracle and oracle-imagination searchers.")
@click.option("--searcher", type=click.Choice(SEARCHERS + DOMAIN_SEARCHERS), default="imagination", show_default=True,
              help="imagination: move on the tracker's states, ask Lean to certify the claimed path; "
                   "kernel-uniform/-lookahead: ask Lean for every successor the rules propose (on programs and a "
                   "domain of one's own, kernel-uniform: hill climbing, every step asked); kernel-blind: "
                   "ask Lean about every (rule, position) of the domain; oracle: only those the oracle "
                   "predicts accepted; oracle-imagination: plan on the oracle's imagined states (events it "
                   "predicts accepted, stop at a predicted complete) and ask Lean once to certify the path; "
                   "short-history (programs, and a domain with a short_history): no search, the history the domain "
                   "names (on programs a constant assignment a differing variable) claimed in one call. Where the "
                   "domain has short_history, short-history also runs beside the searcher asked for, as the "
                   "report's baseline.")
@click.option("--problems", type=click.IntRange(1), default=None,
              help=f"Problems per distance [default: {ProveConfig.problems:,} on rewrite chains (registered results "
                   f"rest on it); {domain_search.DEFAULT_PROBLEMS} on programs and a domain of one's own: at most 8 "
                   "distances, so at most 160 problems, each also given to the short-history baseline (one Lean call "
                   "a problem) where the domain has one. On two busy cores at --jobs 1: the dial of the own-domain "
                   "guide under 20 s a searcher; programs (Bits) about 5 minutes for kernel-uniform, 4 for an "
                   "imagination that solves nothing from 326 candidate events (it tries programs of up to 24 "
                   "statements; more candidate events, longer), less for one that solves].")
@click.option("--distances", callback=positive_ints, default=None,
              help="Comma-separated distances: shortest distances (rewrite chains: within the class; programs: "
                   "variables that differ; another domain: breadth-first over its successors while its graph is "
                   "small enough to search, else walk lengths, which the report and the table say) [default: 1 up "
                   "to the largest there is (on programs and a domain of one's own at most 8; where they are walk "
                   "lengths, 2,4,8,16)].")
@click.option("--walk-lengths", is_flag=True,
              help="Programs and a domain of one's own: distances as walk lengths (where a random history of that "
                   "many events leads), as earlier reports drew them, not shortest distances.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of the problems and proposal order.")
@click.option("--prefix", type=click.IntRange(0), default=0, show_default=True,
              help="Length of the certified history the imagination reads before the start.")
@click.option("--out", type=click.Path(path_type=Path), default=Path("runs/prove"), show_default=True,
              help="Directory for report.json, problems.jsonl, results.jsonl and prove.png.")
@click.option("--jobs", type=click.IntRange(1), default=os.cpu_count() or 1, show_default=True,
              help="Lean processes at once.")
@click.option("--threads", type=click.IntRange(1), default=None,
              help="Torch threads of the tracker or the oracle [default: torch's, one per core].")
@click.option("--timeout", type=click.FloatRange(1), default=ProveConfig.timeout_s, show_default=True,
              help="Seconds one Lean process may run.")
@click.option("--memory-mb", type=click.IntRange(256), default=ProveConfig.memory_mb, show_default=True,
              help="Address-space limit of one Lean process, in MiB.")
@click.option("--store", type=click.Path(path_type=Path), default=None,
              help="Certificate store (SQLite) that the --prefix histories' steps are served from when it holds them "
                   "as certified by this Lean build, core library and the dataset's checker, and recorded in when "
                   "Lean certifies them [default: the cache's certificates.sqlite, the one certify uses].")
@click.option("--unvisited", is_flag=True,
              help="Draw problems whose start and target no training chain or partner of --data visits: what the "
                   "imagination never saw in training.")
@click.option("--device", default=ProveConfig.device, show_default=True, callback=_device_spec,
              help="Where the tracker (imagination) or the oracle (oracle, oracle-imagination) reads and moves its "
                   "states: auto (CUDA when present, else the CPU), cpu, cuda, cuda:N or mps. A device this machine "
                   "lacks is refused before anything is written; the kernel searchers use no model.")
def main(budget_calls, data, tracker, oracle, searcher, problems, distances, walk_lengths, seed, prefix, out, jobs,
         threads, timeout, memory_mb, store, unvisited, device) -> None:
    """Search rewrite paths between trees of one class (or programs, or histories of a domain of one's own, between
    two states), counting every question to Lean. Progress goes to stderr (plain lines off a terminal); a table of
    problems solved and kernel calls per solved problem, by distance and searcher, to stdout."""
    option, run = _run_of(searcher, tracker, oracle)
    try:
        data = dataset_to_search(data, run, option)
    except OtherDomain as e:
        raise click.UsageError(str(e)) from None
    if threads is not None:
        import torch

        torch.set_num_threads(threads)
    if is_programs_dataset(data) or is_domain_dataset(data):
        _domain(budget_calls, data, tracker, searcher, problems, distances, walk_lengths, seed, out, jobs, timeout,
                memory_mb, device)
        return
    if walk_lengths:
        raise click.UsageError("--walk-lengths is for programs and a domain of one's own; on rewrite chains "
                               "distances are always shortest")
    if searcher in DOMAIN_SEARCHERS:
        raise click.UsageError(f"--searcher {searcher} is for programs and a domain of one's own; on rewrite chains: "
                               f"{', '.join(SEARCHERS)}")
    bar = PhaseBars()
    with user_errors(ProveError, cleanup=bar.close, interrupted="interrupted; no report written"):
        config = ProveConfig(data=data, tracker=tracker, oracle=oracle, searcher=searcher,
                             budget_calls=budget_calls or ProveConfig.budget_calls,
                             problems=problems or ProveConfig.problems, distances=distances, seed=seed, prefix=prefix,
                             out=out, jobs=jobs, timeout_s=timeout, memory_mb=memory_mb, store=store, device=device,
                             unvisited=unvisited)
        try:
            report = prove(config, progress=bar)
        except ProveUsage as e:
            bar.close()
            raise click.UsageError(str(e)) from None
    bar.close()
    shown = {k: report[k] for k in ("searcher", "device", "prefix", "budget_calls", "problems", "solved", "success",
                                    "kernel_calls", "kernel_calls_per_solved", "lean_processes",
                                    "states_held_fraction_equal", "successors_fraction_equal",
                                    "distinct_certified_solutions", "solutions_failing_audit", "seconds")}
    _print(shown, report, out)


def _print(shown: dict, report: dict, out: Path) -> None:
    """The report's totals, the table by distance and searcher, and where it went."""
    click.echo(json.dumps(shown, indent=2))
    for line in summary_lines(report):
        click.echo(line)
    click.echo(f"wrote {out / 'report.json'}")
    if report["solutions_failing_audit"]:
        raise click.ClickException(f"{report['solutions_failing_audit']} reported solution(s) failed Lean's audit")


def _run_of(searcher: str, tracker: Path, oracle: Path) -> tuple[str, Path | None]:
    """The option and run whose dataset ``prove`` searches: the run the searcher reads (--oracle for
    the oracle searchers, --tracker for the imagination); for the kernel searchers, which read
    none, the run given on the command line, if any."""
    if searcher.startswith("oracle"):
        return "--oracle", oracle
    if searcher == "imagination":
        return "--tracker", tracker
    context = click.get_current_context()
    for option, name, run in (("--tracker", "tracker", tracker), ("--oracle", "oracle", oracle)):
        if context.get_parameter_source(name) is not ParameterSource.DEFAULT:
            return option, run
    return "--tracker", None


def _domain(budget_calls, data, tracker, searcher, problems, distances, walk_lengths, seed, out, jobs, timeout,
            memory_mb, device) -> None:
    """``prove`` on a programs dataset or one of a domain of one's own (``prover.domain_search``)."""
    context = click.get_current_context()
    for name in ("oracle", "prefix", "store", "unvisited"):
        if context.get_parameter_source(name) is not ParameterSource.DEFAULT:
            raise click.UsageError(f"--{name} is for rewrite chains, not for a programs dataset or one of a domain "
                                   "of one's own")
    if searcher not in domain_search.SEARCHERS:
        raise click.UsageError(f"--searcher {searcher} is for rewrite chains; on programs and a domain of one's own: "
                               f"{', '.join(domain_search.SEARCHERS)}")
    device = "cpu" if device == "auto" else device
    bar = PhaseBars()
    with user_errors(DomainSearchError, cleanup=bar.close, interrupted="interrupted; no report written"):
        config = DomainProveConfig(
            data=data, tracker=tracker, searcher=searcher, budget_calls=budget_calls or domain_search.DEFAULT_BUDGET,
            problems=problems or domain_search.DEFAULT_PROBLEMS, distances=distances, seed=seed, out=out, jobs=jobs,
            timeout_s=timeout, memory_mb=memory_mb, device=device, walk_lengths=walk_lengths)
        try:
            report = prove_domain(config, progress=bar, note=lambda line: _note(bar, line))
        except DomainSearchUsage as e:
            bar.close()
            raise click.UsageError(str(e)) from None
    bar.close()
    shown = {k: report[k] for k in ("domain", "searcher", "budget_calls", "distance_measure", "problems", "solved",
                                    "success", "kernel_calls", "kernel_calls_per_solved", "mean_program_length",
                                    "solutions_failing_audit", "seconds")}
    _print(shown, report, out)


def _note(bar: PhaseBars, line: str) -> None:
    """A line on stderr, under any bar (the phase's bar closed first: a finished phase's line)."""
    bar.close()
    click.echo(line, err=True)


if __name__ == "__main__":
    main()

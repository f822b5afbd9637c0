"""Every script under ``benchmarks/`` by the name ``python -m benchmarks run NAME`` gives it, and its
kind, so that one entry point lists and runs them all.

- ``comparison``: a registered comparison (arms, seeds, predictions written before its runs and
  judged after them); ``--collect`` judges the finished runs without training.
- ``timing``: a speed or cost measurement; its figures go to ``results/`` and the README.
- ``study``: a measurement that explains a figure (where a tracker goes wrong, what a verdict can
  see) or one exploration recorded with its results.
- ``tool``: what the batches need but measures nothing (a grid of runs, carrying unfinished runs
  between checkouts, checking that a change keeps registered runs' bits, the device check).
"""
from __future__ import annotations

from dataclasses import dataclass

KINDS = ("comparison", "timing", "study", "tool")


@dataclass(frozen=True)
class Entry:
    """One script: the module under ``benchmarks/`` that is its command, and its kind."""

    module: str
    kind: str


CATALOG: dict[str, Entry] = {
    # registered comparisons (the names the harness's registry and docs/experiments use)
    "tracker": Entry("tracker_comparison", "comparison"),
    "tracker-hard": Entry("tracker_hard", "comparison"),
    "tracker-tier2": Entry("tracker_tier2", "comparison"),
    "tracker-beyond": Entry("tracker_beyond", "comparison"),
    "tracker-registers": Entry("tracker_registers", "comparison"),
    "tracker-soft": Entry("tracker_soft", "comparison"),
    "tracker-million": Entry("tracker_million", "comparison"),
    "programs": Entry("programs_comparison", "comparison"),
    "groups": Entry("groups_comparison", "comparison"),
    "programs-learned": Entry("programs_learned", "comparison"),
    "self-distill": Entry("self_distill_comparison", "comparison"),
    "stepwise-programs": Entry("stepwise_programs", "comparison"),
    "oracle": Entry("oracle_comparison", "comparison"),
    "oracle-completion": Entry("oracle_completion", "comparison"),
    "tracker-mechanism": Entry("tracker_mechanism", "comparison"),
    # timing
    "certify": Entry("certify_bench", "timing"),
    "certify-programs": Entry("certify_programs", "timing"),
    "certify-groups": Entry("certify_groups", "timing"),
    "certify-programs-lean": Entry("certify_programs_lean", "timing"),
    "lean-profile": Entry("lean_profile", "timing"),
    "python-phases": Entry("python_phases", "timing"),
    "tracker-speed": Entry("tracker_speed", "timing"),
    "prover": Entry("prover_bench", "timing"),
    "prover-programs": Entry("prover_programs", "timing"),
    "own-domain": Entry("own_domain", "timing"),
    "time-to-exact": Entry("time_to_exact", "timing"),
    # studies
    "tracker-where": Entry("tracker_where", "study"),
    "oracle-complete": Entry("oracle_complete", "study"),
    "explore-init": Entry("explore_init", "study"),
    # tools
    "grid": Entry("grid", "tool"),
    "in-flight": Entry("in_flight", "tool"),
    "reproduce-check": Entry("reproduce_check", "tool"),
    "device-check": Entry("device_check", "tool"),
}


def entry(name: str) -> Entry:
    """The script ``name`` names (a catalogue name, or its module's name); KeyError naming the choices."""
    if name in CATALOG:
        return CATALOG[name]
    by_module = {e.module: e for e in CATALOG.values()}
    if name in by_module:
        return by_module[name]
    raise KeyError(f"no benchmark {name!r}; python -m benchmarks list names them all")

"""Where a tracker goes wrong: exact after the last event, split by how many tier-2 events
(distributivity and factoring, the rules that change a tree's size) a held-out chain holds, and
by the size of its end tree.

    python -m benchmarks.tracker_where runs/hard/tier2/combo-s2 runs/hard/tier2/plain-s2

Each run is read from its checkpoint and run free on the first chains of its own dataset's test
splits (the same chains and the same verdicts as its report's ``exact``). Results go to
``--out`` (one entry per run, replacing an earlier entry of the same run directory).
"""
from __future__ import annotations

from collections import Counter, defaultdict
from itertools import islice
from pathlib import Path
from typing import NamedTuple

import click
import torch

from benchmarks.harness import length_list, replace_runs
from chains.manifest import DatasetError, manifest_path, read_manifest, trained_elsewhere
from chains.rewrite.dataset import read_split
from chains.rewrite.rules import tier2_events, tier2_group
from chains.rewrite.space import domain_of, reachable_trees
from chains.rewrite.trees import size
from tracker.config import TrainConfig
from tracker.data import TrackerData, load_dataset
from tracker.evaluate import end_views, right_trees
from tracker.models import Tracker
from tracker.train import Trainer
from training.checkpoint import Checkpoint, CheckpointError


def _group_order(name: str) -> tuple[str, int]:
    """Groups of one kind together, by their number ("end size 7" before "end size 11")."""
    kind, _, value = name.rpartition(" ")
    return kind, int(value.rstrip("+").split("-")[0])


class TrainedRun(NamedTuple):
    """A tracker run read back from its checkpoint, on the dataset it was trained on."""

    run: Path
    step: int
    config: TrainConfig
    directory: Path  # its dataset
    manifest: dict
    model: Tracker  # in eval mode
    data: TrackerData  # the dataset with the run's readout layout
    stored: TrackerData  # the dataset as certified (Polish tokens, whatever the run's layout)


def trained_run(run: Path) -> TrainedRun:
    """CheckpointError when the run was trained on another dataset than the one now at its path,
    or when its weights do not fit its settings."""
    checkpoint = Checkpoint.of_run(run, TrainConfig)
    config = checkpoint.config
    directory = Path(config.data)
    manifest = read_manifest(directory)
    elsewhere = trained_elsewhere(checkpoint.blob["identity"], manifest)
    if elsewhere is not None:
        raise CheckpointError(f"{run}: trained on {elsewhere}, not on the dataset now at {directory}")
    stored = load_dataset(directory)
    trainer = checkpoint.restore(Trainer, stored)  # lays the targets out on a copy
    return TrainedRun(run, checkpoint.step, config, directory, manifest, trainer.model.eval(), trainer.data, stored)


@torch.inference_mode()
def where_wrong(run: Path, lengths: tuple[int, ...], max_chains: int) -> dict:
    """Exact per length, overall and per group of chains, for the tracker saved in ``run``."""
    trained = trained_run(run)
    config, directory, manifest, model, data = (trained.config, trained.directory, trained.manifest, trained.model,
                                                trained.data)
    domain = domain_of(manifest, str(manifest_path(directory)))
    out: dict = {"run": str(run), "data": str(directory), "arch": config.arch, "objective": config.objective,
                 "seed": config.seed, "step": trained.step, "lengths": {}}
    for length in lengths:
        if length not in data.tests:
            raise click.ClickException(f"{directory}: no test split of length {length}")
        split = data.tests[length]
        chains = [record for _, record in islice(read_split(directory / f"test-{length}.jsonl", domain), max_chains)]
        items, ends = split["chain_items"][: len(chains)], split["end"][: len(chains)]
        correct = right_trees(model, end_views(model, items, 512), ends, data).tolist()
        groups: dict[str, list[bool]] = defaultdict(list)
        for chain, ok in zip(chains, correct):
            groups[f"tier-2 events {tier2_group(tier2_events(chain.events))}"].append(ok)
            groups[f"end size {size(chain.end)}"].append(ok)
        out["lengths"][str(length)] = {
            "exact": sum(correct) / len(correct), "chains": len(correct),
            "groups": {name: {"chains": len(oks), "exact": sum(oks) / len(oks)}
                       for name, oks in sorted(groups.items(), key=lambda kv: _group_order(kv[0]))}}
    return out


@torch.inference_mode()
def coverage(run: Path, max_chains: int) -> dict[str, dict]:
    """How much of the domain the run's training chains show it, by tree size: the reachable trees
    of each size, the training states of that size (every step of every training chain) and how many
    distinct trees they are, and the
    run's fit on the training chains that end at that size (the first ``max_chains`` of them)."""
    trained = trained_run(run)
    model, data = trained.model, trained.data
    domain = Counter(size(tree) for tree in reachable_trees(domain_of(trained.manifest,
                                                                      str(manifest_path(trained.directory)))))
    tree_size = (trained.stored.tree_tokens != 0).sum(-1)  # (R,) from the Polish tokens (the layout may differ)
    trees = data.train["chain_trees"]  # (N, T), -1 after a chain's end
    states = Counter(tree_size[trees[trees >= 0].long()].tolist())
    seen = Counter(tree_size[trees[trees >= 0].long().unique()].tolist())  # distinct trees among them
    items, trees = data.train["chain_items"][:max_chains], trees[:max_chains]
    ends = trees[torch.arange(len(trees)), (trees >= 0).sum(-1) - 1].long()  # (n,) each chain's last tree
    right = right_trees(model, end_views(model, items, 512), ends, data).tolist()
    fit: dict[int, list[bool]] = defaultdict(list)
    for end, ok in zip(tree_size[ends].tolist(), right):
        fit[end].append(ok)
    return {f"end size {n}": {"domain_trees": domain[n], "training_states": states[n],
                              "training_trees": seen[n], "training_ends": len(fit[n]),
                              "fit": sum(fit[n]) / len(fit[n]) if fit[n] else None}
            for n in sorted(domain)}


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("runs", nargs=-1, required=True, type=click.Path(path_type=Path, file_okay=False))
@click.option("--lengths", default="8,64,256", show_default=True, help="Comma-separated test lengths.")
@click.option("--max-chains", type=click.IntRange(1), default=512, show_default=True, help="Test chains per length.")
@click.option("--threads", type=click.IntRange(1), default=1, show_default=True, help="Torch threads.")
@click.option("--out", type=click.Path(path_type=Path), default=Path("results/tracker-hard-where.json"),
              show_default=True)
def main(runs, lengths, max_chains, threads, out) -> None:
    """Exact per group of held-out chains for each finished or in-flight run directory in RUNS."""
    torch.set_num_threads(threads)
    wanted = length_list(lengths)
    try:
        found = [where_wrong(run, wanted, max_chains) for run in runs]
    except (CheckpointError, DatasetError) as e:
        raise click.ClickException(str(e)) from None
    replace_runs(out, found)
    for r in found:
        for length, at in r["lengths"].items():
            parts = ", ".join(f"{name} {g['exact']:.2f} (n={g['chains']})" for name, g in at["groups"].items())
            click.echo(f"{r['run']} @{length}: {at['exact']:.3f}; {parts}")
    click.echo(f"wrote {out}", err=True)


if __name__ == "__main__":
    main()

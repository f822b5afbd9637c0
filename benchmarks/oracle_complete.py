"""Why *complete* is the oracle's hard verdict: what its probes' verdicts can and cannot see.

A probe is a rule at a position. Whether Lean accepts it, and which error class it rejects it
with, depends only on the tree's *skeleton* (its shape and its operators), never on which atom
sits at which leaf; *complete* alone (the result is the goal) reads the atoms. So the verdicts
other than *complete* cannot tell apart two trees of one skeleton, and an arm trained on them has
no reason to. This script measures it on a trained arm that decides complete by comparison: for
every Lean-accepted probe of the validation chains it puts the imagined successor's distance to
the goal in one of three groups, by the true successor tree (Python's rules engine, the referee):

- ``complete``: the successor is the goal;
- ``same skeleton``: accepted, the successor has the goal's skeleton but other atoms at its leaves;
- ``other skeleton``: accepted, the successor's skeleton differs from the goal's.

    python -m benchmarks.oracle_complete runs/oracle-gate/oracle-recurrence-combo-s0

The threshold of the run, its quantiles per group, and how many probes of each group fall on the
wrong side of the threshold go to ``--out`` (one entry per run). Read on validation chains only
(the dataset the run chose its threshold on, unless ``--data`` names another of the same domain).
"""
from __future__ import annotations

from pathlib import Path

import click
import torch

from benchmarks.harness import length_list, replace_runs
from chains.manifest import DatasetError, manifest_path, read_manifest
from chains.rewrite.probes import PROBE_GROUPS as GROUPS, probe_groups
from chains.rewrite.space import domain_of
from oracle.compare import reading
from oracle.config import OracleConfig
from oracle.data import load_probe_dataset
from oracle.evaluate import OracleEvalConfig, predict_split
from oracle.train import OracleTrainer
from training.checkpoint import Checkpoint, CheckpointError

QUANTILES = (0.001, 0.01, 0.1, 0.5, 0.9, 0.99)


def group_tensor(groups: list[list[list[int]]], shape: torch.Size) -> torch.Tensor:
    """(N, S, P) group indices, -1 where there is no accepted probe."""
    out = torch.full(shape, -1, dtype=torch.int8)
    for n, chain in enumerate(groups):
        for s, row in enumerate(chain):
            out[n, s, : len(row)] = torch.tensor(row, dtype=torch.int8)
    return out


@torch.inference_mode()
def complete_diagnosis(run: Path, data: Path | None, lengths: tuple[int, ...]) -> dict:
    checkpoint = Checkpoint.of_run(run, OracleConfig)
    config = checkpoint.config
    comparison = checkpoint.blob.get("comparison")
    if comparison is None or comparison.get("threshold") is None:
        raise CheckpointError(f"{run}: this arm does not decide complete by comparison")
    threshold = comparison["threshold"]
    source = Path(data or comparison["source"]["dataset"]["path"])
    model = checkpoint.restore(OracleTrainer, load_probe_dataset(config.data)).model.eval()
    validation = load_probe_dataset(source)
    domain = domain_of(read_manifest(source), str(manifest_path(source)))
    distances: dict[str, list[torch.Tensor]] = {g: [] for g in GROUPS}
    with reading(model, validation):
        for length in lengths:
            if length not in validation.tests:
                raise click.ClickException(f"{source}: no probe-carrying test split of length {length}")
            split = validation.tests[length]
            s = predict_split(model, validation, split, OracleEvalConfig())
            groups = group_tensor(probe_groups(source / f"test-{length}.jsonl", domain), s.goal_distance.shape)
            for g, name in enumerate(GROUPS):
                distances[name].append(s.goal_distance[groups == g])
    by_group = {}
    for g, name in enumerate(GROUPS):
        d = torch.cat(distances[name]).double()
        wrong = (d >= threshold) if g == 0 else (d < threshold)
        by_group[name] = {"probes": len(d), "read_wrong": int(wrong.sum()),
                          "read_wrong_fraction": float(wrong.double().mean()) if len(d) else None,
                          "quantiles": {str(q): float(d.quantile(q)) for q in QUANTILES} if len(d) else None}
    return {"run": str(run), "arch": config.arch, "objective": config.objective, "seed": config.seed,
            "step": checkpoint.step, "data": str(source), "lengths": list(lengths), "threshold": threshold,
            "groups": by_group}


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("runs", nargs=-1, required=True, type=click.Path(path_type=Path, file_okay=False))
@click.option("--data", type=click.Path(path_type=Path, file_okay=False), default=None,
              help="Chains to read [default: the validation dataset each run chose its threshold on].")
@click.option("--lengths", default="8,16,64", show_default=True, help="Comma-separated test lengths.")
@click.option("--threads", type=click.IntRange(1), default=1, show_default=True, help="Torch threads.")
@click.option("--out", type=click.Path(path_type=Path), default=Path("results/oracle-complete.json"),
              show_default=True)
def main(runs, data, lengths, threads, out) -> None:
    """The imagined successors' distance to the goal, by what the successor shares with the goal."""
    torch.set_num_threads(threads)
    wanted = length_list(lengths)
    try:
        found = [complete_diagnosis(run, data, wanted) for run in runs]
    except (CheckpointError, DatasetError) as e:
        raise click.ClickException(str(e)) from None
    replace_runs(out, found)
    for r in found:
        click.echo(f"{r['run']} (threshold {r['threshold']:.5f}):")
        for name, g in r["groups"].items():
            q = g["quantiles"] or {}
            click.echo(f"  {name:15s} {g['probes']:7d} probes, median {q.get('0.5', float('nan')):.5f}, "
                       f"on the wrong side {g['read_wrong_fraction'] or 0:.3f}")
    click.echo(f"wrote {out}", err=True)


if __name__ == "__main__":
    main()

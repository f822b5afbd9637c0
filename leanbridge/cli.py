"""The ``certify`` command: build a certified dataset, or verify one from scratch."""
from __future__ import annotations

import json
import os
from pathlib import Path

import click

from chains.dataset import DEFAULT_TEST_LENGTHS, PROBE_TEST_LENGTHS, DatasetError, DatasetSpec
from chains.space import Domain
from leanbridge.asker import AskConfig
from leanbridge.certify import CertificationFailed, certify_dataset, default_store, verify_dataset
from leanbridge.cliutil import PhaseBars, positive_ints
from leanbridge.errors import LeanBridgeError
from leanbridge.runner import LeanLimits


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--atoms", type=click.IntRange(2, 6), default=4, show_default=True, help="Distinct atoms per start tree.")
@click.option("--tier", type=click.IntRange(1, 2), default=1, show_default=True,
              help="1: commutativity and associativity; 2: adds distributivity and factoring.")
@click.option("--max-size", type=click.IntRange(1), default=None,
              help="Tier 2: largest tree in tokens a step may produce [default: 4*atoms-1].")
@click.option("--chains", type=click.IntRange(1), default=5000, show_default=True, help="Training chains.")
@click.option("--length", type=click.IntRange(1), default=8, show_default=True, help="Events per training chain.")
@click.option("--partners", type=click.IntRange(0), default=2, show_default=True,
              help="Certified partners (equivalent histories) per chain.")
@click.option("--test-lengths", default=None, callback=positive_ints,
              help=f"Comma-separated lengths of the held-out test splits [default: "
                   f"{','.join(map(str, DEFAULT_TEST_LENGTHS))}; with --probes {','.join(map(str, PROBE_TEST_LENGTHS))}].")
@click.option("--test-chains", type=click.IntRange(1), default=512, show_default=True, help="Chains per test split.")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of every random choice.")
@click.option("--jobs", type=click.IntRange(1), default=os.cpu_count() or 1, show_default=True,
              help="Lean processes at once.")
@click.option("--out", type=click.Path(path_type=Path), default=None,
              help="Dataset directory [default: data/tier<T>-a<K>].")
@click.option("--store", type=click.Path(path_type=Path), default=None,
              help="Certificate store (SQLite) [default: the cache's certificates.sqlite].")
@click.option("--timeout", type=click.FloatRange(1), default=600, show_default=True,
              help="Seconds one Lean process may run.")
@click.option("--memory-mb", type=click.IntRange(256), default=8192, show_default=True,
              help="Address-space limit of one Lean process, in MiB.")
@click.option("--probes", is_flag=True,
              help="At every step of every training chain (and of --probe-chains test chains) try five probe "
                   "events and record Lean's verdict on each.")
@click.option("--probe-chains", type=click.IntRange(1), default=128, show_default=True,
              help="Test chains per split that carry probes.")
@click.option("--verify", "verify_dir", type=click.Path(path_type=Path), default=None,
              help="Re-check every step and equivalence of this dataset in Lean, trusting nothing stored.")
def main(atoms, tier, max_size, chains, length, partners, test_lengths, test_chains, seed, jobs, out, store,
         timeout, memory_mb, probes, probe_chains, verify_dir) -> None:
    """Certify rewrite chains with the Lean kernel and write them as a dataset."""
    bridge = AskConfig(jobs=jobs, limits=LeanLimits(timeout_s=timeout, memory_mb=memory_mb))
    bars = PhaseBars()
    try:
        if verify_dir is not None:
            report = verify_dataset(verify_dir, bridge, bars)
            bars.close()
            click.echo(json.dumps(report, indent=2))
            probes = f", {report['probes']} probe verdicts confirmed by Lean" if report["probes"] else ""
            click.echo(f"verified {verify_dir}: {report['steps']} steps and {report['equivalences']} "
                       f"equivalences, {report['distinct_statements']} distinct statements certified by Lean{probes}")
            return
        try:
            test_lengths = test_lengths or (PROBE_TEST_LENGTHS if probes else DEFAULT_TEST_LENGTHS)
            spec = DatasetSpec(Domain(atoms, tier, max_size), chains, length, partners, test_lengths, test_chains, seed,
                               probes, probe_chains)
        except ValueError as e:
            raise click.UsageError(str(e)) from None
        out = out or Path("data") / f"tier{tier}-a{atoms}"
        manifest = certify_dataset(spec, out, store or default_store(), bridge, bars)
        bars.close()
        shown = {k: manifest[k] for k in ("atoms", "tier", "max_size", "trees", "classes", "steps", "distinct_steps",
                                          "equivalences", "kernel_checked", "certified", "failed", "seconds")}
        if "probes" in manifest:
            shown["probes"] = {k: manifest["probes"][k] for k in ("probes", "distinct_probes", "kernel_checked",
                                                                  "accepted_fraction", "referee_disagreements")}
        click.echo(json.dumps(shown, indent=2))
        click.echo(f"wrote {out} (Lean {manifest['lean']['version']}, {manifest['lean']['path']})")
    except (DatasetError, CertificationFailed, LeanBridgeError) as e:
        bars.close()
        raise click.ClickException(str(e)) from None
    except KeyboardInterrupt:
        bars.close()
        raise click.ClickException("interrupted; certificates committed so far are kept in the store") from None


if __name__ == "__main__":
    main()

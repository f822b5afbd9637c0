"""The ``evaluate-tracker`` command: a trained tracker run free on chains drawn from a seed, to a
million events and beyond, every step certified by Lean before it counts (``tracker.stream``); on
rewrite chains, for a run trained on programs on programs drawn over its machine, for a run trained on a
domain of one's own on histories drawn by its own sampling."""
from __future__ import annotations

import json
from pathlib import Path

import click
import torch

from leanbridge.cliutil import OneLineCommand, PhaseBars, positive_ints, user_errors
from leanbridge.confirm import StepNotCertified
from tracker.stream import PROGRAMS_LENGTHS, REWRITE_LENGTHS, StreamConfig, StreamError, evaluate_stream
from training.device import DEVICE_HELP, DeviceUnavailable

D = StreamConfig(run=Path("."))  # the defaults shown by --help


def _silent(phase: str, done: int, total: int) -> None:
    """No progress shown (--quiet)."""


@click.command(cls=OneLineCommand, context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("run", type=click.Path(path_type=Path))
@click.option("--lengths", callback=positive_ints, default=None,
              help="Comma-separated steps at which exact is reported; the chains run to the longest "
                   f"[default: {','.join(map(str, REWRITE_LENGTHS))} on rewrite chains, "
                   f"{','.join(map(str, PROGRAMS_LENGTHS))} on programs and a domain of one's own].")
@click.option("--chains", type=click.IntRange(1), default=D.chains, show_default=True,
              help="Chains run in lock-step.")
@click.option("--seed", type=int, default=D.seed, show_default=True,
              help="Seed of the chains: the same seed draws the same chains and gives the same figures.")
@click.option("--data", type=click.Path(path_type=Path), default=None,
              help="The run's certified dataset (its domain and checker) [default: the one its checkpoint names].")
@click.option("--out", type=click.Path(path_type=Path), default=None,
              help="Directory for report.json and the saved state [default: RUN/stream-s<seed>].")
@click.option("--store", type=click.Path(path_type=Path), default=None,
              help="Certificate store the steps are certified through [default: certify's].")
@click.option("--block", type=click.IntRange(1), default=D.block, show_default=True,
              help="Steps drawn, certified and run at once; the state is saved between blocks.")
@click.option("--save-every", type=click.FloatRange(0), default=D.save_every_s, show_default=True,
              help="Seconds between saved states.")
@click.option("--device", default=D.device, show_default=True, help=DEVICE_HELP)
@click.option("--resume", is_flag=True, help="Continue from the state saved in --out (same settings).")
@click.option("--force", is_flag=True,
              help="Replace an evaluation at --out made with other settings (without it such an evaluation is "
                   "refused, naming what differs; an unfinished one is continued by --resume).")
@click.option("--threads", type=click.IntRange(1), default=None,
              help="Torch threads [default: torch's, one per core].")
@click.option("--quiet", is_flag=True, help="No progress bar.")
def main(run: Path, lengths: tuple[int, ...] | None, chains: int, seed: int, data: Path | None, out: Path | None,
         store: Path | None, block: int, save_every: float, device: str, resume: bool, force: bool, threads: int | None,
         quiet: bool) -> None:
    """Run a trained tracker free on long chains drawn from a seed, every step certified by Lean (rewrite chains;
    programs for a run trained on programs, with the floor of each variable's commonest value beside exact; a domain
    of one's own for a run trained on one, drawn by its own sampling)."""
    out = out or run / f"stream-s{seed}"
    try:
        config = StreamConfig(run=run, lengths=lengths, chains=chains, seed=seed, data=data, out=out, device=device,
                              store=store, block=block, save_every_s=save_every)
    except StreamError as e:
        raise click.UsageError(str(e)) from None
    if threads is not None:
        torch.set_num_threads(threads)
    bars = PhaseBars()
    with user_errors(StreamError, StepNotCertified, DeviceUnavailable, cleanup=bars.close,
                     interrupted=f"interrupted; the state saved in {out} continues with --resume"):
        report = evaluate_stream(config, resume=resume, progress=_silent if quiet else bars, force=force)
    bars.close()
    shown = {k: report[k] for k in ("chains", "seed", "steps", "exact", "floor", "right_throughout",
                                    "events_per_second", "minutes", "peak_rss_mb") if k in report}  # floor: programs
    shown["first_wrong"] = report["first_wrong"]["histogram"]
    click.echo(json.dumps(shown, indent=2))
    click.echo(f"wrote {out / 'report.json'}")


if __name__ == "__main__":
    main()

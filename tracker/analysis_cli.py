"""The ``analyse-tracker`` command: what a trained tracker's state is (``tracker.analysis``), written
as analysis.json and analysis.png; or, with ``--plane``, the loss surface on the plane through three
runs' weights (``tracker.plane``), written as plane.json and plane.png."""
from __future__ import annotations

import json
from dataclasses import fields
from pathlib import Path

import click
import torch
from click.core import ParameterSource

from leanbridge.cliutil import OneLineCommand, user_errors
from tracker.analysis import AnalysisConfig, AnalysisError, analyse_run, write_analysis
from tracker.inference import HistoryError, RunUnavailable
from tracker.plane import PlaneConfig, PlaneError, plane_report, write_plane
from training.options import BadSetting, config_options

D = AnalysisConfig()  # the defaults shown by --help
P = PlaneConfig()
LENGTH = next(f for f in fields(AnalysisConfig) if f.name == "length").metadata["setting"]
# the options each reading leaves unread: the analysis's with --plane, the plane's without it
ANALYSIS_ONLY = ("chains", "seed", "string")
PLANE_ONLY = ("grid", "train_chains", "eval_chains")


@click.command(cls=OneLineCommand, context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("run", type=click.Path(path_type=Path))
@click.option("--data", type=click.Path(path_type=Path), default=None,
              help="Analyse the end states of this dataset's test chains (the dataset the run was trained on) "
                   "[default: fresh histories of the run's domain, drawn from --seed]. With --plane: the dataset "
                   "the three runs were trained on [default: where RUN recorded it].")
@config_options(D, ("chains",))
@click.option("--length", type=click.IntRange(1), default=None, show_default=f"{D.length}; with --plane {P.length}",
              help=f"{LENGTH.help} With --plane: the held-out split (test-LENGTH.jsonl) whose exact match colours "
                   "the plane.")
@config_options(D, ("seed", "string"))
@click.option("--plane", nargs=2, type=click.Path(path_type=Path), default=None, metavar="RUN_B RUN_C",
              help="Instead of the analysis: the loss surface on the plane through the weights of RUN, RUN_B and "
                   "RUN_C (three runs of one model on one dataset; origin RUN, first axis toward RUN_B), written as "
                   "plane.json and plane.png: at every point of a grid the next-token loss, the Nerode terms "
                   "(equivalence; NextLat with RUN_C's head, else RUN_B's) and exact match at --length.")
@click.option("--grid", type=click.IntRange(2), default=P.grid, show_default=True,
              help="With --plane only: points per axis of the plane's grid.")
@click.option("--train-chains", type=click.IntRange(1), default=P.train_chains, show_default=True,
              help="With --plane only: the heights are read on the first this many training chains and their "
                   "certified partners.")
@click.option("--eval-chains", type=click.IntRange(1), default=P.eval_chains, show_default=True,
              help="With --plane only: exact match is read on the first this many held-out chains of --length.")
@click.option("--out", type=click.Path(path_type=Path), default=None,
              help="Directory for analysis.json and analysis.png [default: RUN/analysis]; with --plane, for "
                   "plane.json and plane.png [default: RUN/plane].")
@click.option("--threads", type=click.IntRange(1), default=None, help="Torch threads [default: torch's].")
@click.option("--quiet", is_flag=True, help="No progress lines.")
def main(run: Path, data: Path | None, chains: int, length: int | None, seed: int, string: str,
         plane: tuple[Path, Path] | None, grid: int, train_chains: int, eval_chains: int, out: Path | None,
         threads: int | None, quiet: bool) -> None:
    """What a trained tracker's state is: held-out states clustered by their tree, the code's dimension, how
    much of it is an affine image of the tree's one-hot string (Polish, or by path with --string paths), and
    whether each rewrite acts on it as the permutation it makes of that string (against one fitted map, and one rotation, per lemma and position).
    On a run trained on programs: the state read as its variables' one-hot values (affine image, read-back), and
    whether each statement acts on it as a fixed map (one fitted map, one rotation, the interpreter), by operation;
    on a domain of one's own the same of its events and its states' readout positions.
    With --plane RUN_B RUN_C: the loss surface on the plane through three runs' weights instead."""
    refuse_unread(plane is not None)
    if threads is not None:
        torch.set_num_threads(threads)
    say = None if quiet else (lambda line: click.echo(line, err=True))
    if plane is not None:
        config = PlaneConfig(grid=grid, train_chains=train_chains, eval_chains=eval_chains,
                             length=P.length if length is None else length, threads=threads)
        write_plane_of((run, *plane), data, config, out or run / "plane", say)
        return
    out = out or run / "analysis"
    config = AnalysisConfig(chains=chains, length=D.length if length is None else length, seed=seed, string=string)
    with user_errors(RunUnavailable, AnalysisError, HistoryError,
                     interrupted="interrupted; nothing was written"):
        report = analyse_run(run, data, config, say)
        write_analysis(report, out)
    click.echo(json.dumps(summary(report), indent=2))
    click.echo(f"wrote {out / 'analysis.json'}, {out / 'analysis.png'}")


def refuse_unread(plane: bool) -> None:
    """BadSetting, in one line, for an option given that this reading does not read."""
    context = click.get_current_context()
    unread = [name for name in (ANALYSIS_ONLY if plane else PLANE_ONLY)
              if context.get_parameter_source(name) != ParameterSource.DEFAULT]
    if unread:
        options = ", ".join(f"--{name.replace('_', '-')}" for name in unread)
        raise BadSetting(f"{options}: not read with --plane" if plane else f"{options}: read only with --plane")


def write_plane_of(runs: tuple[Path, Path, Path], data: Path | None, config: PlaneConfig, out: Path, say) -> None:
    """The plane through ``runs`` into ``out`` (plane.json, plane.png), its figures at the runs on the terminal."""
    with user_errors(RunUnavailable, PlaneError, interrupted="interrupted; nothing was written"):
        report = plane_report(runs, data, config, say)
        write_plane(report, out)
    shown = {name: {"objective": r["objective"], "coordinates": r["coordinates"], **report["at_runs"][name]}
             for name, r in report["runs"].items()}
    click.echo(json.dumps({"runs": shown, "nextlat_head": report["nextlat_head"], "axes": report["axes"]}, indent=2))
    click.echo(f"wrote {out / 'plane.json'}, {out / 'plane.png'}")


def summary(report: dict) -> dict:
    """The figures shown on the terminal: the clusters, the dimension, the affine R² and the moves'
    residuals (rewrites on trees; statements on programs, with the read-back)."""
    shown = {"run": report["run"]["run"], "states": report["states"],
             "clusters": {k: v for k, v in report["clusters"].items() if k != "curve"},
             "dimension": {k: v for k, v in report["dimension"].items() if not k.endswith("curve")},
             "affine_r2": report["affine"]["r2"]}
    if "statements" in report:  # a run on programs or a domain of one's own (which names its events in "words")
        st = report["statements"]
        event = report.get("words", {}).get("event", "statement")
        return {**shown, "read_back": report["affine"]["read_back"],
                "residual": {"interpreter": st["interpreter"], "fitted": st["fitted"], "rotation": st["rotation"]},
                "singular_values": st["singular_values"], "reading": reading(report, "interpreter", event)}
    rw = report["rewrites"]
    return {**shown, "residual": {"permutation": rw["permutation"], "fitted": rw["fitted"], "rotation": rw["rotation"]},
            "singular_values": rw["singular_values"], "reading": reading(report, "permutation", "rewrite")}


def reading(report: dict, exact_move: str, event: str) -> list[str]:
    """The figures in words: whether the code separates the states, is an affine image of their
    one-hot form, and moves as the domain's own move; and how the pooled residual is read beside the
    per-event ones of the figure (an ``event`` named as the domain names one)."""
    clusters, r2 = report["clusters"], report["affine"]["r2"]
    moves = report["statements" if "statements" in report else "rewrites"]
    one_step = moves[exact_move]["one_step"]
    purity = clusters.get("purity_at_trees", clusters.get("purity_at_states"))  # rewrite runs, programs runs
    lines = [f"clusters: {'every state its own' if purity == 1.0 else f'purity {purity:.3f}'} at one cluster a state"
             if purity is not None else "clusters: none measured",
             f"affine: the code is {'' if r2 is not None and r2 >= 0.95 else 'not '}an affine image of the states' "
             f"one-hot form (R² {r2 if r2 is None else round(r2, 3)})"]
    if one_step is not None:
        lines.append(f"moves: a {event} read as the domain's own move ({exact_move}) misses {one_step:.1%} of the "
                     "variance of the next codes")
    lines.append(f"residuals are shares of variance missed: pooled, about the mean of every next code; per {event} "
                 f"(the figure's bars), about that {event}'s own next codes, a smaller variance, so the bars read "
                 "higher than the pooled figure")
    return lines


if __name__ == "__main__":
    main()

"""The ``analyse-tracker`` command: what a trained tracker's state is (``tracker.analysis``), written
as analysis.json and analysis.png."""
from __future__ import annotations

import json
from pathlib import Path

import click
import torch

from leanbridge.cliutil import user_errors
from tracker.analysis import AnalysisConfig, AnalysisError, analyse_run, write_analysis
from tracker.inference import HistoryError, RunUnavailable
from training.options import config_options

D = AnalysisConfig()  # the defaults shown by --help


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.argument("run", type=click.Path(path_type=Path))
@click.option("--data", type=click.Path(path_type=Path), default=None,
              help="Analyse the end states of this dataset's test chains (the dataset the run was trained on) "
                   "[default: fresh histories of the run's domain, drawn from --seed].")
@config_options(D, ("chains", "length", "seed", "string"))
@click.option("--out", type=click.Path(path_type=Path), default=None,
              help="Directory for analysis.json and analysis.png [default: RUN/analysis].")
@click.option("--threads", type=click.IntRange(1), default=None, help="Torch threads [default: torch's].")
@click.option("--quiet", is_flag=True, help="No progress lines.")
def main(run: Path, data: Path | None, chains: int, length: int, seed: int, string: str, out: Path | None,
         threads: int | None, quiet: bool) -> None:
    """What a trained tracker's state is: held-out states clustered by their tree, the code's dimension, how
    much of it is an affine image of the tree's one-hot string (Polish, or by path with --string paths), and
    whether each rewrite acts on it as the permutation it makes of that string (against one fitted map, and one rotation, per lemma and position).
    On a run trained on programs: the state read as its variables' one-hot values (affine image, read-back), and
    whether each statement acts on it as a fixed map (one fitted map, one rotation, the interpreter), by operation."""
    if threads is not None:
        torch.set_num_threads(threads)
    out = out or run / "analysis"
    config = AnalysisConfig(chains=chains, length=length, seed=seed, string=string)
    say = None if quiet else (lambda line: click.echo(line, err=True))
    with user_errors(RunUnavailable, AnalysisError, HistoryError,
                     interrupted="interrupted; nothing was written"):
        report = analyse_run(run, data, config, say)
        write_analysis(report, out)
    click.echo(json.dumps(summary(report), indent=2))
    click.echo(f"wrote {out / 'analysis.json'}, {out / 'analysis.png'}")


def summary(report: dict) -> dict:
    """The figures shown on the terminal: the clusters, the dimension, the affine R² and the moves'
    residuals (rewrites on trees; statements on programs, with the read-back)."""
    shown = {"run": report["run"]["run"], "states": report["states"],
             "clusters": {k: v for k, v in report["clusters"].items() if k != "curve"},
             "dimension": {k: v for k, v in report["dimension"].items() if not k.endswith("curve")},
             "affine_r2": report["affine"]["r2"]}
    if "statements" in report:  # a run on programs
        st = report["statements"]
        return {**shown, "read_back": report["affine"]["read_back"],
                "residual": {"interpreter": st["interpreter"], "fitted": st["fitted"], "rotation": st["rotation"]},
                "singular_values": st["singular_values"], "reading": reading(report, "interpreter", "statement")}
    rw = report["rewrites"]
    return {**shown, "residual": {"permutation": rw["permutation"], "fitted": rw["fitted"], "rotation": rw["rotation"]},
            "singular_values": rw["singular_values"], "reading": reading(report, "permutation", "rewrite")}


def reading(report: dict, exact_move: str, event: str) -> list[str]:
    """The figures in words: whether the code separates the states, is an affine image of their
    one-hot form, and moves as the domain's own move; and how the pooled residual is read beside the
    per-event ones of the figure."""
    clusters, r2 = report["clusters"], report["affine"]["r2"]
    moves = report["statements" if event == "statement" else "rewrites"]
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

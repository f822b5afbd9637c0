"""A million events: trained trackers run free on 64 chains of 1,048,576 events drawn from a seed,
every step certified by Lean through the store before it counts (``evaluate-tracker``), with the
throughput at one thread. Writes results/tracker-million.json.

Arms (each trained with ``train-tracker --threads 1`` where its run is missing, resumed where it was
cut short, then evaluated with ``evaluate-tracker --threads 1``, itself resumed where it was cut):

- ``demo``: the tracker ``make run`` trains (``--schedule fast``, seed 0) in runs/demo-fast (at another
  seed, the same recipe in ``<runs>/demo-s<seed>``);
- ``fast``: the fast schedule on its seven registered seeds 0-6 (the time-to-exact experiment);
- ``combo``: the registered tracker comparison's combination (12,000 steps), seeds 0-2, retrained
  from its recipe;
- ``plain``: the comparison's plain recurrence, seeds 0-2, run to 65,536 (its prediction's length).

The combination and the plain recurrence train in the tracker comparison's own run directories
(``runs/comparison/recurrence-<arm>-s<seed>``, whatever ``--runs`` says): one training of each serves
the comparison, the mechanism study (``benchmarks.tracker_mechanism``) and this.

    python -m benchmarks.tracker_million                      # the demo arm only
    python -m benchmarks.tracker_million --arms fast,combo,plain   # the registered batch (hours)
    python -m benchmarks.tracker_million --collect            # judge what has finished
"""
from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import click

from benchmarks.harness import Comparison, comparison, launch, verdict
from chains.files import write_bytes_atomic
from tracker.config import TrainConfig
from tracker.schedules import scheduled

BIN = Path(sys.executable).parent
DATA = Path("data/tier1-a4")  # the certified dataset the arms train on
RUNS = Path("runs/million")
RESULTS = Path("results/tracker-million.json")
DEMO_RUN = Path("runs") / "demo-fast"  # the tracker ``make run`` trains: the demo arm at seed 0
CHAINS = 64  # chains per evaluation
CHAIN_SEED = 0  # the seed of the drawn chains
LENGTHS = (256, 65_536, 1_048_576)
EXACT = 0.99
TARGET_MINUTES = 15.0  # 64 chains x 1,048,576 events on one CPU thread, the slot recurrence

# arm -> (its schedule, settings on top of it, train-tracker's stop-when-exact check interval (None: no
# checks), registered seeds, lengths evaluated)
ARMS: dict[str, tuple[str, dict, int | None, tuple[int, ...], tuple[int, ...]]] = {
    "demo": ("fast", {}, 250, (0,), LENGTHS),
    "fast": ("fast", {}, 250, tuple(range(7)), LENGTHS),
    "combo": ("default", {"objective": "combo"}, None, (0, 1, 2), LENGTHS),
    "plain": ("default", {"objective": "plain"}, None, (0, 1, 2), LENGTHS[:2]),
}

# Registered before the runs, with the figures they rest on: the fast schedule is exact at 4,096
# on 7 of 7 seeds, the combination on 3 of 3; the plain recurrence drifts below 0.95 at 256 on at
# least one seed (docs/experiments/time-to-exact.md, tracker-comparison.md).
PREDICTIONS = [
    ("fast_exact_million", "The fast schedule exact (>= 0.99) at 1,048,576 events on 7 of 7 registered seeds"),
    ("combo_exact_million", "The registered comparison's combination (seeds 0-2, retrained from its recipe) exact "
                            "(>= 0.99) at 1,048,576 events on 3 of 3 seeds"),
    ("plain_not_exact", "The plain recurrence (seeds 0-2) not exact (< 0.99) at 65,536 events on 3 of 3 seeds"),
    ("throughput", "64 chains x 1,048,576 events, every step certified, in at most 15 minutes on one CPU thread "
                   "(the slot recurrence)"),
]


SHARED = ("combo", "plain")  # the tracker comparison's arms, trained where it trains them


def run_dir(arm: str, seed: int, runs: Path) -> Path:
    """``<runs>/<arm>-s<seed>``; the demo arm at seed 0 is the tracker ``make run`` trains (runs/demo-fast),
    the combination and the plain recurrence the tracker comparison's runs of the same recipe."""
    if arm == "demo" and seed == 0:
        return DEMO_RUN
    if arm in SHARED:
        compared = comparison("tracker")
        return compared.run_dir(arm, seed, Path(compared.runs))
    return runs / f"{arm}-s{seed}"


def train_options(arm: str) -> list[str]:
    """The train-tracker options of the arm's recipe (the seed, the dataset and the output go beside them)."""
    schedule, settings, check_every, _, _ = ARMS[arm]
    return ([] if schedule == "default" else ["--schedule", schedule]) \
        + [text for name, value in settings.items() for text in (f"--{name.replace('_', '-')}", str(value))] \
        + ([] if check_every is None else ["--check-every", str(check_every)])


def arm_config(arm: str, seed: int, data: Path = DATA) -> TrainConfig:
    """What ``train_options(arm)`` trains at ``seed`` on ``data``."""
    schedule, settings, _, _, _ = ARMS[arm]
    return scheduled(schedule, **settings, seed=seed, data=str(data))


def finished(path: Path) -> dict | None:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def trained(runs: Path, arm: str, seed: int, data: Path) -> Path:
    """The arm's run on ``seed``, trained at one thread if missing, resumed if it was cut short."""
    out = run_dir(arm, seed, runs)
    if finished(out / "report.json") is None:
        launch([str(BIN / "train-tracker"), *train_options(arm), "--seed", str(seed), "--data", str(data),
                "--threads", "1", "--quiet"], out)
    return out


def evaluated(run: Path, out: Path, lengths: tuple[int, ...], chains: int, seed: int, data: Path) -> dict:
    """The run's streamed evaluation, made (or resumed) at one thread where it is not finished;
    the machine's load average before and after it goes beside it (load.json): its seconds depend on it."""
    from tracker.stream import STATE  # the streamed evaluation's saved state, where it was cut

    report = finished(out / "report.json")
    if report is None or report.get("steps") != max(lengths) or report.get("chains") != chains:
        before = os.getloadavg()[1]
        launch([str(BIN / "evaluate-tracker"), str(run), "--lengths", ",".join(map(str, lengths)),
                "--chains", str(chains), "--seed", str(seed), "--data", str(data), "--threads", "1",
                "--device", "cpu"], out, state=STATE)
        write_bytes_atomic(out / "load.json", json.dumps([round(before, 2), round(os.getloadavg()[1], 2)]).encode())
        report = finished(out / "report.json")
    return report


def in_progress(arm: str, seed: int, out: Path) -> dict | None:
    """An evaluation cut short, from its saved state: how far it went and exact at the lengths
    it reached (its figures so far are the finished run's, which goes on from there)."""
    import torch  # only to read the saved state

    from tracker.stream import STATE

    path = out / STATE
    if not path.is_file():
        return None
    figures = torch.load(path, weights_only=True)["figures"]
    count = len(figures["first_wrong"])
    return {"arm": arm, "seed": seed, "steps_done": figures["steps"], "chains": count,
            "exact": {n: sum(right) / count for n, right in figures["right"].items()},
            "wrong_so_far": sum(1 for f in figures["first_wrong"] if f >= 0),
            "seconds": round(sum(figures["seconds"].values()), 1), "cpu_seconds": round(figures["cpu_seconds"], 1),
            "ms_per_lockstep_cpu": round(1000 * figures["cpu_seconds"] / figures["steps"], 3)}


def row(arm: str, seed: int, report: dict, out: Path) -> dict:
    """What the results keep of one evaluation (the per-chain lists stay in the run's report)."""
    keep = ("chains", "steps", "exact", "right_throughout", "events", "seconds", "minutes", "events_per_second",
            "cpu_seconds", "events_per_cpu_second", "ms_per_lockstep", "cpu_ms_per_lockstep", "seconds_by_phase",
            "cpu_seconds_by_phase", "peak_rss_mb",
            "peak_rss_mb_at", "certification", "lean", "core_hash", "package_version", "torch_threads", "device",
            "cpu_kernels", "resumed_from_step")
    return {"arm": arm, "seed": seed, "chain_seed": report["seed"], "tracker": report["tracker"],
            "first_wrong": report["first_wrong"]["histogram"], **{k: report.get(k) for k in keep},
            "load_average_before_after": finished(out / "load.json")}


def judge(rows: list[dict]) -> list[dict]:
    """Every registered prediction with what was measured and its verdict (untested until every
    seed it names has finished)."""
    def exact(arm: str, length: int) -> dict:
        return {str(r["seed"]): r["exact"].get(str(length)) for r in rows if r["arm"] == arm}  # keyed as JSON keeps them

    out = []

    def judged(key: str, cells: dict, seeds: int, ok) -> None:
        done = len(cells) >= seeds and all(v is not None for v in cells.values())
        out.append(verdict(key, dict(PREDICTIONS)[key], ok(cells) if done else None, cells))

    judged("fast_exact_million", exact("fast", 1_048_576), 7, lambda c: all(v >= EXACT for v in c.values()))
    judged("combo_exact_million", exact("combo", 1_048_576), 3, lambda c: all(v >= EXACT for v in c.values()))
    judged("plain_not_exact", exact("plain", 65_536), 3, lambda c: all(v < EXACT for v in c.values()))
    minutes = {f"{r['arm']}-s{r['seed']}": {"minutes": r["minutes"], "cpu_minutes": round(r["cpu_seconds"] / 60, 2)}
               for r in rows if r["steps"] == 1_048_576 and r["chains"] == CHAINS and r["torch_threads"] == 1}
    judged("throughput", minutes, 1, lambda c: min(v["cpu_minutes"] for v in c.values()) <= TARGET_MINUTES)
    return out


DECLARED = {"million": Comparison(
    arms={arm: seeds for arm, (_, _, _, seeds, _) in ARMS.items()}, predictions=dict(PREDICTIONS), judge=judge,
    config=arm_config, run_dir=run_dir, runs=str(RUNS), results=str(RESULTS),
    settings={"data": str(DATA), "chains": CHAINS, "chain_seed": CHAIN_SEED,
              "lengths": {arm: lengths for arm, (_, _, _, _, lengths) in ARMS.items()},
              "target_minutes": TARGET_MINUTES})}


@click.command()
@click.option("--arms", default="demo", show_default=True, help=f"Comma-separated arms: {', '.join(ARMS)}.")
@click.option("--seeds", default=None, help="Comma-separated training seeds [default: each arm's registered ones].")
@click.option("--chains", type=click.IntRange(1), default=CHAINS, show_default=True, help="Chains per evaluation.")
@click.option("--chain-seed", type=int, default=CHAIN_SEED, show_default=True, help="Seed of the drawn chains.")
@click.option("--data", type=click.Path(path_type=Path), default=DATA, show_default=True,
              help="The certified dataset the arms train on.")
@click.option("--runs", type=click.Path(path_type=Path), default=RUNS, show_default=True,
              help="Directory of the trained runs and their evaluations.")
@click.option("--out", type=click.Path(path_type=Path), default=RESULTS,
              show_default=True, help="The collected results.")
@click.option("--collect", is_flag=True, help="Train and evaluate nothing: judge the evaluations already finished.")
def main(arms: str, seeds: str | None, chains: int, chain_seed: int, data: Path, runs: Path, out: Path,
         collect: bool) -> None:
    chosen = [a for a in arms.split(",") if a]
    unknown = set(chosen) - set(ARMS)
    if unknown:
        raise click.UsageError(f"unknown arms {', '.join(sorted(unknown))}; choose from {', '.join(ARMS)}")
    old = finished(out) or {}
    rows = {(r["arm"], r["seed"]): r for r in old.get("runs", [])}
    partial = {(r["arm"], r["seed"]): r for r in old.get("in_progress", [])}
    for arm in chosen:
        for seed in [int(s) for s in seeds.split(",")] if seeds else ARMS[arm][3]:
            evaluation = run_dir(arm, seed, runs) / f"stream-s{chain_seed}"
            if collect:
                report = finished(evaluation / "report.json")
                if report is None or report.get("steps") != max(ARMS[arm][4]):
                    cut = in_progress(arm, seed, evaluation)
                    if cut is not None:
                        partial[(arm, seed)] = cut
                    click.echo(f"unfinished: {arm} seed {seed}" + (f" ({cut['steps_done']:,} steps)" if cut else ""))
                    continue
            else:
                report = evaluated(trained(runs, arm, seed, data), evaluation, ARMS[arm][4], chains, chain_seed,
                                   data)
            rows[(arm, seed)] = row(arm, seed, report, evaluation)
            partial.pop((arm, seed), None)
            click.echo(f"{arm} seed {seed}: exact {report['exact']}, {report['minutes']} min, "
                       f"{report['events_per_second']:,} events/s")
    ordered = sorted(rows.values(), key=lambda r: (list(ARMS).index(r["arm"]), r["seed"]))
    results = {"exact_threshold": EXACT, "target_minutes": TARGET_MINUTES, "chain_seed": chain_seed,
               "predictions": judge(ordered), "runs": ordered,
               "in_progress": sorted(partial.values(), key=lambda r: (list(ARMS).index(r["arm"]), r["seed"]))}
    out.parent.mkdir(parents=True, exist_ok=True)
    write_bytes_atomic(out, (json.dumps(results, indent=2) + "\n").encode())
    click.echo(f"wrote {out}")


if __name__ == "__main__":
    main()

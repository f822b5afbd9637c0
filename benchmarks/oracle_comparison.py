"""The registered oracle comparison (issue 10, part 4): train every arm on two seeds, evaluate
free-running on the held-out probe chains, and judge the predictions written below before the
batch was run.

    python benchmarks/oracle_comparison.py --workers 2          # the whole registered batch (hours)
    python benchmarks/oracle_comparison.py --arms combo --seeds 0 --steps 500   # a part
    python benchmarks/oracle_comparison.py --collect            # judge the runs already finished

Each run lives in ``<runs>/oracle-<arch>-<objective>-s<seed>`` (a finished run with the same
settings is reused, an interrupted one resumed); the collected reports and the verdicts go to
``--out`` (``{"runs": [...], "missing": [...], "predictions": [...]}``; other keys of an existing
file, such as the searchers' section written by ``prover_bench.py``, are kept) and the figures to
``<out stem>-figures/``, with a markdown table on stdout.
"""
from __future__ import annotations

import json
import sys
from dataclasses import replace
from functools import partial
from pathlib import Path

import click

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run from a checkout without installing

from benchmarks.batch import (batch_options, chosen_arms, finished_or_trained, finished_report,  # noqa: E402
                              recorded_runs, run_batch, seed_list, write_results)
from oracle.evaluate import OracleEvalConfig  # noqa: E402
from oracle.train import OracleConfig, config_from_checkpoint, train  # noqa: E402

SEEDS = (0, 1)  # two seeds per arm
# arm -> (arch, objective)
ARMS = {
    "combo": ("recurrence", "combo"),  # the combination: verdict CE + NextLat + invariance
    "plain": ("recurrence", "plain"),  # the plain recurrence: verdict CE only
    "transformer": ("transformer", "plain"),  # equal per-event compute (depth 4)
    "blind": ("blind", "plain"),  # sees only the probe
    "truth": ("truth", "plain"),  # the upper bound, handed the true tree
    "control": ("probe-slot", "combo"),  # the seed's failed configuration: a linear head on the slot after the probe
}
SHORT, LONG = (8, 16, 64, 256), (1024, 4096)

# Registered before any run of the batch (issue 10, part 4; section 50's clauses for this
# machine). Each is tested by ``judge`` below and reported as it fared, failures included.
# "Hard class": balanced accuracy on misplaced-gold probes (mean of the recalls of accepted-or-
# complete and of rejected), pooled over the test chains up to 1,024 events, by depth band.
PREDICTIONS = [
    ("combo_exact_short", "The combination is right on every verdict of every held-out chain (fraction of chains "
                          "all right = 1.0) at 8, 16, 64 and 256 steps, on 2 of 2 seeds (the seed's 1.00000)"),
    ("combo_exact_long", "The combination is right on every verdict of every held-out chain at 1,024 and 4,096 "
                         "steps, on 2 of 2 seeds (beyond the seed)"),
    ("control_fails", "The control (a linear head on the slot after it reads the probe; the seed's 0.576 / 0.580) "
                      "is below 0.9 verdict accuracy at 256 steps on 2 of 2 seeds"),
    ("tracking_exists", "At depth 1 the combination beats the state-blind arm on the hard class by at least 10 "
                        "points, on each seed (seed s against seed s)"),
    ("exactness_carries", "From depth 1 to depths 4-6 the combination loses at most half the hard-class points the "
                          "plain recurrence loses, and is at least 5 points above the transformer at depths 4-6 and "
                          "7-12 (means over the 2 seeds)"),
    ("prover_guard", "The prover guard: at depths 4-6, with the threshold on P(accepted or complete) that keeps 90% "
                     "of the accepted probes, the combination rejects at least half of the rejected ones, on 2 of 2 "
                     "seeds"),
]


def arm_of(report: dict) -> str:
    for name, (arch, objective) in ARMS.items():
        if report["arch"] == arch and report["objective"] == objective:
            return name
    return f"{report['arch']}-{report['objective']}"


def hard(report: dict, band: str) -> float | None:
    pooled = report.get("pooled") or {}
    return (pooled.get("hard", {}).get(band) or {}).get("balanced")


def _mean(values: list[float | None]) -> float | None:
    return None if not values or any(v is None for v in values) else sum(values) / len(values)


def judge(reports: list[dict]) -> list[dict]:
    """Every registered prediction with what was measured and a verdict (pass, fail, or untested
    when a run it needs is missing)."""
    by_arm: dict[str, dict[int, dict]] = {}
    for r in reports:
        by_arm.setdefault(arm_of(r), {})[r["seed"]] = r
    out = []

    def verdict(key: str, ok: bool | None, measured) -> None:
        out.append({"id": key, "prediction": dict(PREDICTIONS)[key], "measured": measured,
                    "verdict": "untested" if ok is None else ("pass" if ok else "fail")})

    def complete(*arms: str) -> bool:
        return all(set(SEEDS) <= set(by_arm.get(a, {})) for a in arms)

    combo = by_arm.get("combo", {})
    for key, lengths in (("combo_exact_short", SHORT), ("combo_exact_long", LONG)):
        cells = {s: {str(n): combo[s]["all_right"].get(str(n)) for n in lengths} for s in sorted(combo)}
        known = complete("combo") and all(v is not None for c in cells.values() for v in c.values())
        verdict(key, all(v == 1.0 for c in cells.values() for v in c.values()) if known else None,
                {"all_right": cells, "accuracy": {s: {str(n): combo[s]["accuracy"].get(str(n)) for n in lengths}
                                                  for s in sorted(combo)}})

    control = {s: r["accuracy"].get("256") for s, r in sorted(by_arm.get("control", {}).items())}
    verdict("control_fails", all(v < 0.9 for v in control.values()) if complete("control") else None, control)

    blind = by_arm.get("blind", {})
    gaps = {s: (None if hard(combo[s], "1") is None or hard(blind[s], "1") is None
                else hard(combo[s], "1") - hard(blind[s], "1")) for s in SEEDS if s in combo and s in blind}
    known = complete("combo", "blind") and all(v is not None for v in gaps.values())
    verdict("tracking_exists", all(v >= 0.10 for v in gaps.values()) if known else None,
            {"combo_minus_blind_at_depth_1": gaps})

    def mean_hard(arm: str, band: str) -> float | None:
        return _mean([hard(r, band) for r in by_arm.get(arm, {}).values()])

    measured = {f"{arm}@{band}": mean_hard(arm, band) for arm in ("combo", "plain", "transformer")
                for band in ("1", "4-6", "7-12")}
    known = complete("combo", "plain", "transformer") and all(v is not None for v in measured.values())
    ok = None
    if known:
        drop_combo = measured["combo@1"] - measured["combo@4-6"]
        drop_plain = measured["plain@1"] - measured["plain@4-6"]
        ok = (drop_combo <= 0.5 * max(drop_plain, 0.0)
              and measured["combo@4-6"] - measured["transformer@4-6"] >= 0.05
              and measured["combo@7-12"] - measured["transformer@7-12"] >= 0.05)
    verdict("exactness_carries", ok, measured)

    rejected = {s: ((r.get("pooled") or {}).get("guard") or {}).get("rejected_rejected") for s, r in sorted(combo.items())}
    known = complete("combo") and all(v is not None for v in rejected.values())
    verdict("prover_guard", all(v >= 0.5 for v in rejected.values()) if known else None,
            {"rejected_share_at_90_percent_kept": rejected})
    return out


def _fmt(v, digits: int = 3) -> str:
    return "–" if v is None else f"{v:.{digits}f}"


def table(reports: list[dict], predictions: list[dict]) -> str:
    lengths = sorted({int(k) for r in reports for k in r["accuracy"]})
    head = (["arm", "seed", "steps"] + [f"acc@{n}" for n in lengths] + [f"all@{n}" for n in lengths]
            + ["hard@1", "hard@4-6", "hard@7-12", "guard", "pair@8", "unrelated@8", "steps/s"])
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in reports:
        guard = ((r.get("pooled") or {}).get("guard") or {}).get("rejected_rejected")
        row = ([arm_of(r), str(r["seed"]), str(r["steps"])]
               + [_fmt(r["accuracy"].get(str(n)), 5) for n in lengths]
               + [_fmt(r["all_right"].get(str(n))) for n in lengths]
               + [_fmt(hard(r, b)) for b in ("1", "4-6", "7-12")] + [_fmt(guard)]
               + [f"{r['pair_distance']['8']:.2e}" if "8" in r["pair_distance"] else "–",
                  _fmt(r["unrelated_distance"].get("8")), _fmt(r["steps_per_second"])])
        lines.append("| " + " | ".join(row) + " |")
    lines += ["", "| registered prediction | measured | verdict |", "|---|---|---|"]
    for p in predictions:
        lines.append(f"| {p['prediction']} | `{json.dumps(p['measured'])}` | {p['verdict']} |")
    return "\n".join(lines)


def run_dir(name: str, seed: int, runs: Path) -> Path:
    arch, objective = ARMS[name]
    return runs / f"oracle-{arch}-{objective}-s{seed}"


def arm_config(name: str, seed: int, base: OracleConfig) -> OracleConfig:
    arch, objective = ARMS[name]
    return replace(base, arch=arch, objective=objective, seed=seed)


def finished(name: str, seed: int, base: OracleConfig, runs: Path, recorded: list[dict]) -> dict | None:
    """The report of a run finished earlier with exactly these settings (from its directory or the
    ``recorded`` results), else None."""
    return finished_report(arm_config(name, seed, base), run_dir(name, seed, runs), recorded)


def run_arm(name: str, seed: int, quiet: bool, threads: int | None, *, base: OracleConfig, runs: Path) -> dict:
    """Train (or resume, or find finished) one run of the batch."""
    return finished_or_trained(arm_config(name, seed, base), run_dir(name, seed, runs), train, config_from_checkpoint,
                               quiet, threads, eval_config=OracleEvalConfig())


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--data", type=click.Path(path_type=Path), default=Path("data/tier1-a4"), show_default=True,
              help="Certified dataset directory made with certify --probes.")
@click.option("--arms", default=",".join(ARMS), show_default=True,
              help=f"Comma-separated arms among {', '.join(ARMS)}.")
@click.option("--seeds", default=",".join(map(str, SEEDS)), show_default=True, help="Comma-separated seeds.")
@batch_options("runs/oracle-comparison", "results/oracle.json")
def main(data, arms, seeds, steps, runs, out, workers, collect, quiet) -> None:
    """Run the registered oracle comparison (or a part of it) and judge its predictions."""
    chosen = chosen_arms(arms, tuple(ARMS))
    base = OracleConfig(data=str(data))
    if steps is not None:
        base = replace(base, steps=steps)
    jobs = [(name, seed) for name in chosen for seed in seed_list(seeds)]
    recorded = recorded_runs(out)
    reports, missing = run_batch(jobs, partial(run_arm, base=base, runs=Path(runs)),
                                 lambda name, seed: finished(name, seed, base, Path(runs), recorded),
                                 lambda report: f"accuracy {json.dumps(report['accuracy'])}", workers, collect, quiet)
    from oracle.plots import write_plots

    predictions = judge(reports)
    # other keys of the file (the searchers' section written by prover_bench.py) are kept
    write_results(out, {"runs": reports, "missing": missing, "predictions": predictions,
                        "registered": dict(PREDICTIONS)})
    figure_dir = out.parent / f"{out.stem}-figures"
    figure_dir.mkdir(exist_ok=True)
    if reports:
        write_plots(reports, figure_dir)
    click.echo(table(reports, predictions))
    click.echo(f"\nwrote {out} and {figure_dir}/accuracy.png, kinds.png, depth.png", err=True)


if __name__ == "__main__":
    main()

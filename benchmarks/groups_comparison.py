"""The registered comparison on the S5 word problem: the seed's group rows (sections 42 and 43) run
again on words the Lean kernel certified, and our goal beyond them (a recurrence trained on 8
events exact at 1,048,576), every arm on datasets certified from registered seeds no earlier
dataset used.

    python -m benchmarks.groups_comparison --workers 2       # certify, train what is missing, collect
    python -m benchmarks.groups_comparison --arms plain-16 --seeds 0
    python -m benchmarks.groups_comparison --arms recipe-8 --million   # and its 1,048,576-event evaluation
    python -m benchmarks.groups_comparison --collect         # train nothing: collect and judge

Missing datasets are certified by ``certify`` into ``data/groups-registered/<dataset>``; each run
lives in ``runs/groups/<arm>-s<seed>`` (a finished run with the same settings is reused, an
interrupted one resumed from its checkpoint), trained at one thread to its last step (no
stop-when-exact: the drift diagnostic reads every run at its end); with ``--million`` each finished
run of the recipe arm is run free on 64 words of 1,048,576 events, every step certified
(``evaluate-tracker``, in ``<run>/stream-s0``). The collected reports and the predictions'
verdicts go to ``results/groups.json``. The predictions and every arm's recipe below were
registered with docs/experiments/groups.md (which gives the date) before any run of the batch.
"""
from __future__ import annotations

import json
import sys
from dataclasses import replace
from functools import partial
from pathlib import Path

import click

from benchmarks.harness import (Comparison, Plan, batch_options, certified_dataset, chosen_arms, exact_at, figure,
                                judged_parts, labelled, launch, prediction_lines, runs_within, seed_list, spearman,
                                verdict, write_results)
from tracker.evaluate import EvalConfig
from tracker.grid import RunSpec
from tracker.train import TrainConfig

DATA = Path("data/groups-registered")
RUNS = Path("runs/groups")
RESULTS = Path("results/groups.json")
THREE, SIX = (0, 1, 2), (0, 1, 2, 3, 4, 5)  # the seed ran six seeds where a row says "of 6"
EXACT = 0.99
LENGTHS = ("16", "64", "256", "1024", "4096")
MILLION = 1_048_576
STREAM_LENGTHS = (4096, 65_536, MILLION)  # the recipe's streamed evaluation
STREAM_CHAINS, STREAM_SEED = 64, 0  # as tracker_million's

# dataset -> certify options. Every dataset: S5 (the adjacent transpositions), 5,000 training
# words with 2 certified partners each, 64 held-out words at each of 16 to 4,096 events (their
# partners drawn as the training ones). Earlier datasets were certified from seeds 0 to 11
# (rewrite, programs; the groups' timing figure from 0); these from 12 to 16.
TESTS = ["--test-lengths", ",".join(LENGTHS), "--test-chains", "64"]
DATASETS: dict[str, list[str]] = {
    "s5-16-random-s12": ["--domain", "groups", "--group", "S5", "--length", "16", *TESTS, "--seed", "12"],
    "s5-16-reduced-s13": ["--domain", "groups", "--group", "S5", "--length", "16", "--partner-words", "reduced",
                          *TESTS, "--seed", "13"],
    "s5-8-random-s14": ["--domain", "groups", "--group", "S5", "--length", "8", *TESTS, "--seed", "14"],
    "s5-8-reduced-s15": ["--domain", "groups", "--group", "S5", "--length", "8", "--partner-words", "reduced",
                         *TESTS, "--seed", "15"],
    # the control: the distractor id among the generators, each partner the word's own generators
    # in their order with its distractors moved (the same path through the group)
    "s5-16-distractor-path-s16": ["--domain", "groups", "--group", "S5", "--distractor", "--partner-words", "path",
                                  "--length", "16", *TESTS, "--seed", "16"],
}

# The seed's recipe on every arm that mirrors its rows: TrainConfig's defaults (the slot recurrence,
# width 128, four ticks, the fixed norm, 12,000 steps of 28 words, mu = 1). Every arm with the term
# holds it at zero for the seed's 1,500 steps (of 12,000) and then ramps it in over 1,200, so that
# the term's arms differ only in what each studies: its distance, its partners, its schedule.
DELAYED = {"objective": "invariance", "invariance_delay": 0.125, "invariance_ramp": 0.1}
# Our recipe for the goal, trained on 8 events: the fast schedule's model (two ticks, a small start
# slot, unit embeddings: it leaves the identity saddle sooner) with the combination (NextLat and the
# term), the term at mu = 4 after 40% of the steps, ramped over 10%, random equivalent words of every
# length as partners, the seed's 12,000 steps.
RECIPE = {"objective": "combo", "ticks": 2, "slot_init": 0.05, "embed_init_std": 1.0, "mu": 4.0,
          "invariance_delay": 0.4, "invariance_ramp": 0.1}

# arm -> (dataset, settings over TrainConfig's defaults, registered seeds; () an opt-in arm)
ARMS: dict[str, tuple[str, dict, tuple[int, ...]]] = {
    "plain-16": ("s5-16-random-s12", {"objective": "plain"}, SIX),
    "plain-8": ("s5-8-random-s14", {"objective": "plain"}, THREE),
    "rms-reduced-16": ("s5-16-reduced-s13", {**DELAYED, "invariance_distance": "rms"}, THREE),
    "cosine-reduced-16": ("s5-16-reduced-s13", DELAYED, SIX),
    "cosine-random-16": ("s5-16-random-s12", DELAYED, THREE),  # also the held-then-ramped schedule
    # the term from the start, three schedules: mu = 1 throughout, ramped from 0 to 1 over the same
    # 1,500 steps, and mu = 0.1 throughout (the saddle's escape rate falls as 1/mu)
    "start-16": ("s5-16-random-s12", {"objective": "invariance", "invariance_delay": 0.0, "invariance_ramp": 0.0},
                 THREE),
    "start-ramp-16": ("s5-16-random-s12", {"objective": "invariance", "invariance_delay": 0.0,
                                           "invariance_ramp": 0.125}, THREE),
    "start-small-16": ("s5-16-random-s12", {"objective": "invariance", "invariance_delay": 0.0,
                                            "invariance_ramp": 0.0, "mu": 0.1}, THREE),
    "distractor-plain-16": ("s5-16-distractor-path-s16", {"objective": "plain"}, THREE),
    "distractor-path-16": ("s5-16-distractor-path-s16", DELAYED, THREE),
    "recipe-8": ("s5-8-random-s14", RECIPE, THREE),
    "recipe-reduced-8": ("s5-8-reduced-s15", RECIPE, ()),  # opt-in: the recipe on reduced forms
    # baselines, opt-in: a transformer fitted to the training length, DeltaProduct
    "transformer-16": ("s5-16-random-s12", {"arch": "transformer", "objective": "plain"}, ()),
    "transformer-8": ("s5-8-random-s14", {"arch": "transformer", "objective": "plain"}, ()),
    "deltaproduct-8": ("s5-8-random-s14", {"arch": "deltaproduct", "objective": "plain"}, ()),
}
# Baselines declared but not runnable here yet: no LSTM or GRU tracker is among tracker.models.ARCHS;
# each becomes an opt-in arm on s5-8-random-s14 ({"arch": ..., "objective": "plain"}) once its
# plug-in lands.
PENDING = {"lstm-8": "an LSTM over events (no plug-in yet)", "gru-8": "a GRU over events (no plug-in yet)"}
START_ARMS = ("start-16", "start-ramp-16", "start-small-16")
SLOT_ARMS = tuple(arm for arm, (_, s, seeds) in ARMS.items() if seeds and s.get("arch", "recurrence") == "recurrence")
STREAMED = ("recipe-8",)  # the arms --million runs free to 1,048,576 events

# The seed's figures (sections 42 and 43), row by row, beside the arm of ours that runs the same
# setting: (setting, the seed's figure, our arm(s), the length read). Written into the results for
# the page's side-by-side table; "ours" is how many of the arm's seeds are exact there.
SEED_FIGURES: tuple[tuple[str, str, str, str], ...] = (
    ("plain recurrence, 16 events: exact at 256", "3 of 6 (training losses do not separate them)", "plain-16",
     "256"),
    ("plain recurrence, 8 events: exact at 256", "– (Proposition 4: a length-8 loss certifies about 32 events)",
     "plain-8", "256"),
    ("the term as RMS on the raw state: exact at 256", "0 of 3 (2 of 3 without it)", "rms-reduced-16", "256"),
    ("the term as the centred cosine, a word's reduced form as partner: exact at 256", "5 of 6",
     "cosine-reduced-16", "256"),
    ("the centred cosine, random equivalent words of every length: exact at 1,024", "3 of 3 (3 of 6 without it)",
     "cosine-random-16", "1024"),
    ("the term from the start, three schedules: exact at 1,024", "0 of 9 runs trained",
     ",".join(START_ARMS), "1024"),
    ("the term held at zero for 1,500 steps, then ramped: exact at 1,024", "3 of 3", "cosine-random-16", "1024"),
    ("pairs that share the path, differing only in distractors: exact at 256", "2 of 3 (as without the term)",
     "distractor-path-16", "256"),
    ("the plain recurrence on the distractor's words: exact at 256", "–", "distractor-plain-16", "256"),
    ("our recipe, 8 events: exact at 1,048,576 (the goal)",
     "– (the seed, on rewrite chains: 8 steps to 1,024 on every seed)",
     "recipe-8", str(MILLION)),
    ("the distance's growth 16 to 256 against the drift: Spearman to 256 / 1,024", "+0.86 / +0.91 (42 runs)",
     "every slot run", "growth"),
    ("the distance's level against the drift: Spearman", "-0.16 (42 runs)", "every slot run", "level"),
)
EVAL = EvalConfig(max_chains=64, pair_lengths=(16, 64, 256), transformer_max_length=1024, threads=1,
                  state_norms=True)

# Registered before any run of the batch, with docs/experiments/groups.md.
PREDICTIONS = [
    ("plain16_flat", "S5, the plain recurrence trained on 16 events (the seed's recipe): exact (>= 0.99) at 16 on 6 "
                     "of 6 seeds, and at 256 on at least 1 and at most 5 of the 6 (training finds the exact "
                     "transition on some seeds and a drifting one on others; the seed: 3 of 6)"),
    ("plain8_drifts", "The plain recurrence trained on 8 events: exact (>= 0.99) at 256 on at most 1 of 3 seeds "
                      "(Proposition 4: a length-8 loss certifies about 32 events)"),
    ("rms_fails", "The term as an RMS distance on the raw slot (reduced-form partners, 16 events, delayed): exact "
                  "(>= 0.99) at 256 on at most 1 of 3 seeds (the seed: 0 of 3)"),
    ("rms_no_better", "The RMS term's mean exact at 256 over its 3 seeds at most the plain recurrence's mean over "
                      "seeds 0-2 at 16 events plus 0.05 (the seed: the term made the drift worse, 0 of 3 against 2 "
                      "of 3)"),
    ("rms_view_apart", "The RMS term is paid off the readout's view: the centred-cosine partner distance at 256 "
                       "events, averaged over seeds 0-2, at least 10 times larger under the RMS term than under "
                       "the centred cosine on the same reduced-form partners (the seed: equivalent and unrelated "
                       "raw states alike within 0.002, the readout's view untouched)"),
    ("cosine_reduced_256", "The term as the centred cosine with a word's reduced form as its partner (16 events, "
                           "delayed): exact (>= 0.99) at 256 on at least 4 of 6 seeds, and on more seeds than the "
                           "plain recurrence at 16 (the seed: 5 of 6 against 3 of 6)"),
    ("cosine_random_1024", "The centred cosine with random equivalent words of every length (16 events, held at zero "
                           "for 1,500 steps then ramped): exact (>= 0.99) at 1,024 on 3 of 3 seeds (the seed: 3 of "
                           "3)"),
    ("from_start_fails", "The term from the start (mu = 1 throughout, ramped from the first step, mu = 0.1 "
                         "throughout; 3 seeds each): exact (>= 0.99) at 1,024 on at most 1 of the 9 runs (the seed: "
                         "0 of 9 trained)"),
    ("distractor_path_like_base", "Partners on the word's own path, differing only in distractors (16 events, "
                                  "delayed): exact (>= 0.99) at 1,024 on at most 2 of 3 seeds, and at 256 on a "
                                  "number of seeds within 1 of the plain recurrence's on the same words (the seed: "
                                  "2 of 3, as without the term)"),
    ("recipe_4096", "Our recipe trained on 8 events (the combination, two ticks, mu = 4 after 40% of the steps, "
                    "random partners): exact (>= 0.99) at 4,096 on 3 of 3 seeds"),
    ("recipe_million", "Our recipe trained on 8 events: exact (>= 0.99) at 1,048,576 events on 3 of 3 seeds (64 "
                       "words drawn from seed 0, every step certified by Lean)"),
    ("growth_256", "Over every slot run of the registered batch, the growth of the partner distance from 16 to 256 "
                   "events predicts the drift at 256 (1 - exact at 256): Spearman >= 0.7 (the seed: +0.86 over 42 "
                   "runs)"),
    ("growth_1024", "Over every slot run, the growth from 16 to 256 predicts the drift at 1,024 (1 - exact at "
                    "1,024): Spearman >= 0.7 (the seed: +0.91)"),
    ("level_blind", "Over every slot run, the partner distance's level at 16 events predicts the drift at 1,024 "
                    "no better than |Spearman| < 0.5 (the seed: -0.16)"),
]


def arm_config(arm: str, seed: int, data: Path = DATA) -> TrainConfig:
    """What the arm's run at ``seed`` trains: its registered settings on its dataset under ``data``."""
    dataset, settings, _ = ARMS[arm]
    return replace(TrainConfig(), **settings, seed=seed, data=str(data / dataset))


def run_dir(arm: str, seed: int, runs: Path = RUNS) -> Path:
    """``<runs>/<arm>-s<seed>``."""
    return runs / f"{arm}-s{seed}"


# ---- the judge ----

def million_at(r: dict) -> float | None:
    """Exact at 1,048,576 from the run's streamed evaluation (None before it finished)."""
    stream = r.get("million") or {}
    return (stream.get("exact") or {}).get(str(MILLION)) if stream.get("steps") == MILLION else None


def judge(reports: list[dict]) -> list[dict]:
    """Every registered prediction with what was measured (per run) and its verdict: a prediction
    over several runs is decided as soon as its finished runs settle it (failed by those that rule
    it out), untested while they do not."""
    at = {(r["arm"], r["seed"]): r for r in reports}
    text = dict(PREDICTIONS)

    def count(arms: tuple[str, ...], read, ok, low: int, high: int) -> tuple[dict, bool | None]:
        """Whether the registered runs of ``arms`` on which ``ok`` holds number between ``low`` and
        ``high`` (``benchmarks.harness.runs_within``)."""
        return runs_within(at, [(arm, seed) for arm in arms for seed in ARMS[arm][2]], read, ok, low, high)

    def judged(key: str, parts: dict[str, tuple[dict, bool | None]]) -> dict:
        return judged_parts(key, text[key], parts)

    high = lambda v: v >= EXACT  # noqa: E731
    out = [
        judged("plain16_flat", {"plain-16@16": count(("plain-16",), exact_at("16"), high, 6, 6),
                                "plain-16@256": count(("plain-16",), exact_at("256"), high, 1, 5)}),
        judged("plain8_drifts", {"plain-8@256": count(("plain-8",), exact_at("256"), high, 0, 1)}),
        judged("rms_fails", {"rms-reduced-16@256": count(("rms-reduced-16",), exact_at("256"), high, 0, 1)}),
        judged("rms_no_better", {"means@256": mean_cell("rms-reduced-16", "plain-16", at,
                                                        lambda rms, plain: rms <= plain + 0.05)}),
        judged("rms_view_apart", {"pair@256": view_cell("rms-reduced-16", "cosine-reduced-16", at)}),
        judged("cosine_reduced_256", {"cosine-reduced-16@256": count(("cosine-reduced-16",), exact_at("256"), high,
                                                                     4, 6),
                                      "more than plain-16": more_cell("cosine-reduced-16", "plain-16", "256", at)}),
        judged("cosine_random_1024", {"cosine-random-16@1024": count(("cosine-random-16",), exact_at("1024"), high,
                                                                     3, 3)}),
        judged("from_start_fails", {"start@1024": count(START_ARMS, exact_at("1024"), high, 0, 1)}),
        judged("distractor_path_like_base", {
            "distractor-path-16@1024": count(("distractor-path-16",), exact_at("1024"), high, 0, 2),
            "within 1 of distractor-plain-16@256": within_cell("distractor-path-16", "distractor-plain-16", "256",
                                                               at)}),
        judged("recipe_4096", {"recipe-8@4096": count(("recipe-8",), exact_at("4096"), high, 3, 3)}),
        judged("recipe_million", {"recipe-8@1048576": count(("recipe-8",), million_at, high, 3, 3)}),
        *growth_verdicts(reports),
    ]
    return out


def _exact_counts(arm: str, length: str, at: dict, seeds: tuple[int, ...]) -> int | None:
    """How many of ``seeds`` of ``arm`` are exact at ``length``; None until every one has finished."""
    values = [(at[arm, s].get("exact") or {}).get(length) for s in seeds if (arm, s) in at]
    if len(values) < len(seeds) or None in values:
        return None
    return sum(v >= EXACT for v in values)


def more_cell(arm: str, base: str, length: str, at: dict) -> tuple[dict, bool | None]:
    """Whether ``arm`` is exact at ``length`` on more of its seeds than ``base`` on its own."""
    mine, theirs = _exact_counts(arm, length, at, ARMS[arm][2]), _exact_counts(base, length, at, ARMS[base][2])
    return {arm: mine, base: theirs}, None if mine is None or theirs is None else mine > theirs


def within_cell(arm: str, base: str, length: str, at: dict) -> tuple[dict, bool | None]:
    """Whether ``arm`` and ``base`` are exact at ``length`` on numbers of seeds within 1 of each other."""
    mine, theirs = _exact_counts(arm, length, at, ARMS[arm][2]), _exact_counts(base, length, at, ARMS[base][2])
    return {arm: mine, base: theirs}, None if mine is None or theirs is None else abs(mine - theirs) <= 1


def mean_cell(arm: str, base: str, at: dict, ok) -> tuple[dict, bool | None]:
    """``ok(arm's mean, base's mean)`` of exact at 256 over seeds 0-2; decided once all six are in."""
    means = {}
    for name in (arm, base):
        values = [(at[name, s].get("exact") or {}).get("256") for s in THREE if (name, s) in at]
        means[name] = sum(values) / 3 if len(values) == 3 and None not in values else None
    a, b = means[arm], means[base]
    return means, None if a is None or b is None else ok(a, b)


def view_cell(arm: str, base: str, at: dict) -> tuple[dict, bool | None]:
    """Whether ``arm``'s mean partner distance at 256 (the readout's view, centred cosine) over seeds
    0-2 is at least 10 times ``base``'s; decided once all six are in."""
    means = {}
    for name in (arm, base):
        values = [(at[name, s].get("pair_distance") or {}).get("256") for s in THREE if (name, s) in at]
        means[name] = sum(values) / 3 if len(values) == 3 and None not in values else None
    a, b = means[arm], means[base]
    return means, None if a is None or b is None else a >= 10 * b


def growth_verdicts(reports: list[dict]) -> list[dict]:
    """Spearman of the partner distance's growth (16 to 256) and of its level (at 16) against the
    drift at 256 and 1,024, over every slot run of the registered batch; decided once all are in."""
    runs = [r for r in reports if r["arm"] in SLOT_ARMS and r["seed"] in ARMS[r["arm"]][2]]
    complete = len(runs) == sum(len(ARMS[arm][2]) for arm in SLOT_ARMS)

    def rho(read, length: str) -> tuple[float | None, int]:
        pairs = [(read(r), 1 - r["exact"][length]) for r in runs
                 if read(r) is not None and (r.get("exact") or {}).get(length) is not None]
        return spearman([p[0] for p in pairs], [p[1] for p in pairs]), len(pairs)

    def growth(r):
        return r.get("pair_growth")

    def level(r):
        return (r.get("pair_distance") or {}).get("16")

    text = dict(PREDICTIONS)
    out = []
    for key, read, length, ok in (("growth_256", growth, "256", lambda v: v >= 0.7),
                                  ("growth_1024", growth, "1024", lambda v: v >= 0.7),
                                  ("level_blind", level, "1024", lambda v: abs(v) < 0.5)):
        value, n = rho(read, length)
        out.append(verdict(key, text[key], ok(value) if complete and value is not None else None,
                           {"spearman": value, "runs": n}))
    return out


def seed_rows(reports: list[dict], predictions: list[dict]) -> list[dict]:
    """The seed's figures row by row with ours beside them: how many of the arm's finished seeds are
    exact at the row's length, or the Spearman the row names (None where nothing finished)."""
    by_id = {p["id"]: p for p in predictions}
    rows = []
    for setting, figure_, arms, length in SEED_FIGURES:
        if length in ("growth", "level"):
            ids = ("growth_256", "growth_1024") if length == "growth" else ("level_blind",)
            values = [by_id[i]["measured"]["spearman"] for i in ids]
            ours = None if all(v is None for v in values) else " / ".join(
                "–" if v is None else f"{v:+.2f}" for v in values)
        else:
            names = arms.split(",")
            read = million_at if length == str(MILLION) else exact_at(length)
            found = [read(r) for r in reports if r["arm"] in names and r["seed"] in ARMS[r["arm"]][2]]
            found = [v for v in found if v is not None]
            total = sum(len(ARMS[a][2]) for a in names)
            ours = None if not found else f"{sum(v >= EXACT for v in found)} of {len(found)}" + (
                "" if len(found) == total else f" (of {total} registered)")
        rows.append({"setting": setting, "seed": figure_, "arm": arms, "at": length, "ours": ours})
    return rows


def table(reports: list[dict], predictions: list[dict]) -> str:
    """A markdown row per run (exact by length, pair distance and its growth, seconds)."""
    head = ["arm", "seed", "steps", *[f"exact@{n}" for n in LENGTHS], "exact@1M", "pair@16", "growth", "train s"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in reports:
        exact, pairs = r.get("exact") or {}, r.get("pair_distance") or {}
        row = [r["arm"], str(r["seed"]), str(r["steps"]), *[figure(exact.get(n)) for n in LENGTHS],
               figure(million_at(r)), f"{pairs['16']:.2e}" if "16" in pairs else "–", figure(r.get("pair_growth")),
               figure(r.get("seconds"), 0)]
        lines.append("| " + " | ".join(row) + " |")
    return "\n".join(lines + prediction_lines(predictions, ids=True))


DECLARED = {"groups": Comparison(
    arms={arm: seeds for arm, (_, _, seeds) in ARMS.items()}, predictions=dict(PREDICTIONS), judge=judge,
    config=arm_config, run_dir=run_dir, runs=str(RUNS), results=str(RESULTS), table=table,
    settings={"datasets": DATASETS,
              "arms": {arm: {"dataset": d, **s} for arm, (d, s, _) in ARMS.items()}, "pending": PENDING,
              "slot_arms": SLOT_ARMS, "start_arms": START_ARMS, "lengths": LENGTHS, "data": str(DATA),
              "streamed": {"arms": STREAMED, "lengths": STREAM_LENGTHS, "chains": STREAM_CHAINS,
                           "seed": STREAM_SEED},
              "eval": EVAL})}


# ---- certifying, training, the streamed evaluation, collecting ----

def certified(name: str, data: Path) -> Path:
    """The dataset ``name`` under ``data``, certified now by ``certify`` unless it is there."""
    return certified_dataset(data / name, DATASETS[name], jobs=1)


def stream_dir(arm: str, seed: int, runs: Path) -> Path:
    return run_dir(arm, seed, runs) / f"stream-s{STREAM_SEED}"


def streamed(arm: str, seed: int, data: Path, runs: Path, run_now: bool, recorded: dict | None) -> dict | None:
    """The run's evaluation on words of 1,048,576 events: read where it finished, else (``run_now``)
    made, or resumed where it was cut, by ``evaluate-tracker`` at one thread; else the one the
    results ``recorded`` (a checkout without the runs directory), else None."""
    out = stream_dir(arm, seed, runs)
    path = out / "report.json"
    report = json.loads(path.read_text()) if path.is_file() else None
    if report is None and not run_now:
        return recorded
    if (report is None or report.get("steps") != MILLION) and run_now:
        from tracker.stream import STATE  # the streamed evaluation's saved state, where it was cut

        launch([str(Path(sys.executable).parent / "evaluate-tracker"), str(run_dir(arm, seed, runs)),
                "--lengths", ",".join(map(str, STREAM_LENGTHS)), "--chains", str(STREAM_CHAINS),
                "--seed", str(STREAM_SEED), "--data", str(data / ARMS[arm][0]), "--threads", "1", "--device", "cpu",
                "--quiet"], out, state=STATE)
        report = json.loads(path.read_text())
    if report is None:
        return None
    return {k: report.get(k) for k in ("steps", "chains", "seed", "exact", "right_throughout", "events_per_second",
                                       "minutes", "cpu_seconds", "torch_threads")}


def plan(data: Path, runs: Path) -> Plan:
    return Plan(partial(arm_config, data=data), partial(run_dir, runs=runs), partial(RunSpec, eval_config=EVAL),
                label=labelled, threads=1)


@click.command(context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--arms", default=",".join(DECLARED["groups"].registered), show_default=True,
              help=f"Comma-separated arms, in this order (opt-in: "
                   f"{', '.join(a for a, (_, _, s) in ARMS.items() if not s)}; give them --seeds).")
@click.option("--seeds", default=None, help="Comma-separated seeds [default: each arm's registered ones].")
@click.option("--data", type=click.Path(path_type=Path), default=DATA, show_default=True,
              help="Directory of the batch's datasets (certified there when missing).")
@click.option("--million", is_flag=True,
              help="Also run each finished run of the recipe arm free on 64 words of 1,048,576 events, every step "
                   "certified (evaluate-tracker at one thread; resumed where it was cut).")
@batch_options(str(RUNS), str(RESULTS))
def main(arms: str, seeds: str | None, data: Path, million: bool, steps: int | None, runs: Path, out: Path,
         workers: int, collect: bool, quiet: bool) -> None:
    """Certify the missing datasets, train the missing runs (one thread each), collect and judge."""
    if steps is not None:
        raise click.UsageError("the registered batch trains each arm's registered steps; --steps is not taken")
    chosen = chosen_arms(arms, tuple(ARMS))
    given = seed_list(seeds) if seeds is not None else None
    jobs = [(arm, seed) for arm in chosen for seed in (given if given is not None else ARMS[arm][2])]
    if not collect:
        for name in dict.fromkeys(ARMS[arm][0] for arm, _ in jobs):
            certified(name, data)
    reports, missing = plan(data, runs).batch_into(jobs, out, workers, collect, quiet)
    reports.sort(key=lambda r: (list(ARMS).index(r["arm"]), r["seed"]))
    reports = [{**r, "million": streamed(r["arm"], r["seed"], data, runs, million and not collect, r.get("million"))
                if r["arm"] in STREAMED else None} for r in reports]
    predictions = judge(reports)
    write_results(out, {"datasets": DATASETS, "seed": seed_rows(reports, predictions),
                        "runs": reports, "missing": missing, "predictions": predictions,
                        "registered": dict(PREDICTIONS)})
    click.echo(table(reports, predictions))
    click.echo(f"\nwrote {out}", err=True)


if __name__ == "__main__":
    main()

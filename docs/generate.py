"""Writes the generated parts of the docs: every table of an experiment page from results/*.json,
and the command reference from each command's --help. A page marks each generated block:

    <!-- generated: NAME -->
    ...
    <!-- end: NAME -->

and everything between the markers is replaced. Run from the repository root:

    python docs/generate.py          # rewrite the pages
    python docs/generate.py --check  # exit 1, naming the stale pages, when a page differs

tests/test_docs.py holds the committed pages to what this writes, so they cannot drift from the
results."""
from __future__ import annotations

import json
import re
import sys
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOCS = ROOT / "docs"
RESULTS = ROOT / "results"
BLOCK = re.compile(r"(<!-- generated: (?P<name>[\w-]+) -->\n)(?P<body>.*?)(<!-- end: (?P=name) -->)", re.DOTALL)
DASH = "–"
LENGTHS = ("8", "64", "256", "1024", "4096")


def load(name: str) -> dict:
    return json.loads((RESULTS / name).read_text(encoding="utf-8"))


def f3(x) -> str:
    return DASH if x is None else f"{x:.3f}"


def f5(x) -> str:
    return DASH if x is None else f"{x:.5f}"


def sci(x) -> str:
    return DASH if x is None else f"{x:.1e}"


def num(x, digits: int = 1) -> str:
    if x is None:
        return DASH
    return f"{x:,}" if isinstance(x, int) else f"{x:,.{digits}f}"


def table(header: list[str], rows: list[list[str]]) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(str(c) for c in row) + " |" for row in rows]
    return "\n".join(lines) + "\n"


def at(d: dict | None, key: str):
    return None if d is None else d.get(key)


# ---- tracker comparison -------------------------------------------------------------------------

def tracker_arm(run: dict) -> str:
    if run["arch"] != "recurrence":
        return run["arch"]
    return run["objective"] + ("" if run["config"].get("fixed_norm", True) else "-free")


def tracker_rows(runs: list[dict]) -> list[list[str]]:
    return [[tracker_arm(r), r["seed"], num(r["steps"]), *(f3(at(r["exact"], n)) for n in LENGTHS),
             *(sci(at(r["pair_distance"], n)) for n in ("8", "64", "256")), f3(r["pair_growth"]),
             f3(r["unrelated_distance"]), f3(r["steps_per_second"])] for r in runs]


TRACKER_HEADER = ["arm", "seed", "steps", *(f"exact@{n}" for n in LENGTHS), "pair@8", "pair@64", "pair@256",
                  "growth", "unrelated", "steps/s"]


def tracker_runs() -> str:
    return table(TRACKER_HEADER, tracker_rows(load("tracker.json")["runs"]))


def predictions(name: str, section: str | None = None) -> str:
    found = load(name) if section is None else load(name).get(section, {})
    rows = [[p["id"], p["prediction"], f"`{json.dumps(p['measured'])}`", f"**{p['verdict']}**"]
            for p in found.get("predictions", [])]
    return table(["id", "registered prediction", "measured", "verdict"], rows)


def tracker_probes() -> str:
    runs = load("tracker-transformer-probes.json")["runs"] + load("tracker-deltaproduct-probes.json")["runs"]
    rows = [[r["arch"], r["objective"], r["config"].get("lr"), r["parameters"] if "parameters" in r else DASH,
             *row[1:]] for r, row in zip(runs, tracker_rows(runs))]
    return table(["arch", "objective", "lr", "parameters", *TRACKER_HEADER[1:]], rows)


def tracker_speed() -> str:
    s = load("tracker_speed.json")
    rows = [["threads", s["threads"]], ["steps timed", s["timed_steps"]], ["steps/s", f3(s["steps_per_second"])],
            ["projected minutes for 12,000 steps", num(s["projected_training_minutes"], 2)],
            [f"evaluation of {s['eval_chains']} chains at {s['eval_length']:,} events, s", num(s["eval_seconds"], 2)]]
    rows += [[f"share of a step: {k}", f3(v)] for k, v in s["time_by_operator_family"].items()]
    return table(["measure", "value"], rows)


# ---- hard domains -------------------------------------------------------------------------------

DOMAIN = {"tier2": "tier 2", "atoms5": "five atoms"}


def hard_runs() -> str:
    rows = []
    for r in load("tracker-hard.json")["runs"]:
        ind = r.get("in_distribution") or {}
        rows.append([DOMAIN.get(r["domain"], r["domain"]), r["arm"], r["seed"], num(r["steps"]), f3(ind.get("train")),
                     f3(ind.get("fresh")), *(f3(at(r["exact"], n)) for n in LENGTHS[1:]),
                     sci(at(r["pair_distance"], "8")), sci(at(r["pair_distance"], "256")), num(r["pair_growth"], 2),
                     f3(r["unrelated_distance"]), num(r["steps_per_second"], 2)])
    return table(["domain", "arm", "seed", "steps", "train fit", "fresh@8", "exact@64", "exact@256", "exact@1024",
                  "exact@4096", "pair@8", "pair@256", "growth", "unrelated", "steps/s"], rows)


def hard_validation() -> str:
    rows = []
    for v in load("tracker-hard.json")["validation"]:
        ind = v.get("in_distribution") or {}
        checks = ", ".join(f"{c['exact'].get('8', 0):.2f}" for c in v.get("checks", []))
        rows.append([v["run"], num(v["steps"]), f3(ind.get("train")), f3(ind.get("fresh")),
                     f3(at(v["exact"], "64")), f3(at(v["exact"], "256")), sci(at(v["pair_distance"], "8")),
                     sci(at(v["pair_distance"], "256")), f3(v["unrelated_distance"]), checks])
    return table(["validation run", "steps", "train fit", "fresh@8", "exact@64", "exact@256", "pair@8", "pair@256",
                  "unrelated", "checks at 8, every 1,000 steps"], rows)


def group_order(group: str) -> tuple[str, int]:
    """("end size 11") -> ("end size", 11); ("tier-2 events 1-2") -> ("tier-2 events", 1)."""
    prefix = group.rstrip("0123456789-+ ")
    numbers = re.findall(r"\d+", group[len(prefix):])
    return prefix, int(numbers[0]) if numbers else -1


def hard_where() -> str:
    out = []
    for r in load("tracker-hard-where.json")["runs"]:
        groups = sorted(sorted({g for length in r["lengths"].values() for g in length["groups"]}), key=group_order)
        rows = [[n, f3(length["exact"]), *(f"{f3(at(length['groups'].get(g), 'exact'))} "
                                           f"({at(length['groups'].get(g), 'chains') or 0})" for g in groups)]
                for n, length in r["lengths"].items()]
        out.append(f"{r['objective']}, seed {r['seed']} (`{Path(r['run']).name}` on {Path(r['data']).name}), exact "
                   "(chains in the group):\n\n" + table(["length", "all", *groups], rows))
    return "\n".join(out)


# the diagnosis's common recipe, shown by its name (benchmarks/tracker_tier2.py HALF)
TIER2_HALF = ("--ticks 4 --slot-init 0.05 --embed-init-std 1.0 --steps 12000 --nextlat-delay 0.5 --nextlat-ramp 0.1 "
              "--invariance-delay 0.5 --invariance-ramp 0.1")


def tier2_diagnosis() -> str:
    rows = []
    for r in load("tracker-tier2.json")["diagnosis"]:
        ind = r.get("in_distribution") or {}
        at8 = r["by_group"].get("8", {})
        sizes = ", ".join(f"{f3(at(at8.get(f'end size {n}'), 'exact'))}" for n in (7, 9, 11))
        options = " ".join(r["train_tracker"]).replace(TIER2_HALF, "HALF")
        rows.append([f"`{r['run']}`", r["dataset"], f"`{options}`", num(r["steps"]), f3(ind.get("train")),
                     f3(ind.get("fresh")), sizes, f3(at(r["exact"], "64")), f3(at(r["exact"], "256")),
                     f3(at(at(r["by_group"].get("256"), "tier-2 events 0"), "exact")),
                     f3(at(at(r["by_group"].get("256"), "tier-2 events 3+"), "exact")),
                     sci(at(r["pair_distance"], "256")), f3(r["unrelated_distance"])])
    return table(["run", "training chains", "train-tracker options", "steps", "train fit", "fresh@8",
                  "@8 by end size 7 / 9 / 11", "exact@64", "exact@256", "@256, no tier-2 event", "@256, 3+ tier-2 events",
                  "pair@256", "unrelated"], rows)


def tier2_batch() -> str:
    rows = []
    for r in sorted(load("tracker-tier2.json").get("runs", []), key=lambda r: (r["arm"], r["seed"])):
        ind = r.get("in_distribution") or {}
        rows.append([r["arm"], r["seed"], num(r["steps"]), f3(ind.get("train")), f3(ind.get("fresh")),
                     *(f3(at(r["exact"], n)) for n in LENGTHS), f3(r.get("pair_growth")),
                     f3(r["unrelated_distance"]), f3(r["steps_per_second"])])
    return table(["arm", "seed", "steps", "train fit", "fresh@8", *(f"exact@{n}" for n in LENGTHS), "pair growth 8→256",
                  "unrelated", "steps/s"], rows)


RETRAINED = ("† a model trained again from the run's recipe, seed and dataset on other CPU kernels than the "
             "recorded run's, whose checkpoint is gone; its figures are its own, beside the recorded run's in the "
             "batch table.")


def where_run_name(name: str, row: dict) -> str:
    """A batch run's name in the where tables, marked when the row's model is not the recorded run's."""
    return f"`{name}`" + ("†" if row.get("matches_recorded") is False else "")


def retrained_note(rows: dict) -> str:
    return f"\n\n{RETRAINED}" if any(r.get("matches_recorded") is False for r in rows.values()) else ""


def tier2_batch_where() -> str:
    rows, where = [], load("tracker-tier2.json").get("batch_where", {})
    for name, r in sorted(where.items()):
        for length, found in r["lengths"].items():
            groups = found["groups"]
            rows.append([where_run_name(name, r), length, f3(found["exact"]),
                         *(f"{f3(at(groups.get(f'tier-2 events {g}'), 'exact'))} "
                           f"({at(groups.get(f'tier-2 events {g}'), 'chains') or 0})" for g in ("0", "1-2", "3+"))])
    return (table(["run", "length", "all", "no tier-2 event", "1-2 tier-2 events", "3+ tier-2 events"], rows)
            + retrained_note(where))


def tier2_coverage() -> str:
    """Per batch run and end size: the domain's trees, how many of them the training chains show,
    the fit on training chains ending there, and exact on held-out chains ending there."""
    rows, where = [], load("tracker-tier2.json").get("batch_where", {})
    for name, r in sorted(where.items()):
        for group, c in (r.get("coverage") or {}).items():
            held = [f"{f3(at(r['lengths'][n]['groups'].get(group), 'exact'))} "
                    f"({at(r['lengths'][n]['groups'].get(group), 'chains') or 0})" for n in ("8", "256", "4096")]
            rows.append([where_run_name(name, r), group.removeprefix("end size "), num(c["domain_trees"]),
                         f"{num(c['training_trees'])} ({c['training_trees'] / c['domain_trees']:.0%})",
                         num(c["training_states"]), f"{f3(c['fit'])} ({c['training_ends']})", *held])
    return (table(["run", "tree size", "trees in the domain", "of them in training chains", "training states",
                   "training fit", "held-out exact@8", "exact@256", "exact@4096"], rows) + retrained_note(where))


# ---- time to exact ------------------------------------------------------------------------------

def stop_rule(stop: dict) -> str:
    rule = f"every {stop['every']}, patience {stop['patience']}"
    return rule + (f", cooldown {stop['cooldown']}" if stop.get("cooldown") else "")


def tte_runs() -> str:
    rows = []
    for r in load("time-to-exact.json")["runs"]:
        rows.append([r["candidate"], r["seed"], r["machine"], stop_rule(r["stop"]), num(r["steps"]),
                     num(r["exact_at_step"]) if r["exact_at_step"] is not None else "never",
                     num(r["train_seconds"]), num(r["check_seconds"]), *(f3(at(r["exact"], n)) for n in LENGTHS),
                     sci(at(r["pair_distance"], "256")), num(at(r.get("eval_seconds_by_length"), "4096"))])
    return table(["candidate", "seed", "machine", "stop rule", "steps", "exact from step", "training s", "checks s",
                  *(f"exact@{n}" for n in LENGTHS), "pair@256", "eval@4096 s"], rows)


def tte_exploration() -> str:
    e = load("time-to-exact-exploration.json")
    rows = []
    for r in e["runs"]:
        curve = r["curve"]
        at2000 = next((c for c in curve if c["step"] == 2000), None)
        last = curve[-1] if curve else None

        def shown(point):
            if point is None:
                return DASH
            longest = max(point["exact"], key=int)
            return f"{point['exact'][longest]:.2f} at {longest} (step {point['step']:,})"
        rows.append([r["name"], f"`{json.dumps(r['variant'])}`", shown(at2000), shown(last)])
    return table(["variant", "changes", "exact at step 2,000 (longest length reached)", "at the end"], rows)


# ---- prover and oracle --------------------------------------------------------------------------

def prover_runs() -> str:
    rows = []
    for r in load("prover.json")["runs"]:
        who = r["searcher"] if r["searcher"] != "imagination" else f"imagination ({Path(r['config']['tracker']).name})"
        rows.append([who, num(r["prefix"]), num(r["budget_calls"]), num(r["problems"]), f3(r["success"]),
                     num(r["kernel_calls_per_solved"]), num(r["lean_processes"]), f"{r['states_held_fraction_equal']:.4f}",
                     f"{r['successors_fraction_equal']:.4f}",
                     f"{r['distinct_certified_solutions']}/{r['distinct_solutions']}", num(r["seconds"], 0)])
    return table(["searcher", "prefix", "budget", "problems", "success", "calls / solved", "Lean processes",
                  "held = truth", "successors = truth", "certified solutions", "s"], rows)


ORACLE_LENGTHS = ("8", "16", "64", "256", "1024", "4096")
ORACLE_ARM = {("recurrence", "combo"): "combo", ("recurrence", "plain"): "plain", ("probe-slot", "combo"): "control"}


def oracle_runs() -> str:
    rows = []
    for r in load("oracle.json")["runs"]:
        pooled = r["pooled"]
        hard = pooled.get("hard", {})
        rows.append([ORACLE_ARM.get((r["arch"], r["objective"]), r["arch"]), r["seed"], num(r["steps"]),
                     *(f5(at(r["accuracy"], n)) for n in ORACLE_LENGTHS),
                     *(f3(at(r["all_right"], n)) for n in ORACLE_LENGTHS),
                     *(f3(at(hard.get(b), "balanced")) for b in ("1", "4-6", "7-12")),
                     f3(at(pooled.get("guard"), "rejected_rejected")), sci(at(r.get("pair_distance"), "8")),
                     f3(at(r.get("unrelated_distance"), "8")), f3(r["steps_per_second"])])
    return table(["arm", "seed", "steps", *(f"acc@{n}" for n in ORACLE_LENGTHS), *(f"all@{n}" for n in ORACLE_LENGTHS),
                  "hard@1", "hard@4-6", "hard@7-12", "guard", "pair@8", "unrelated@8", "steps/s"], rows)


def oracle_gate_runs(section: str = "gate") -> str:
    rows = []
    for r in sorted(load("oracle.json").get(section, {}).get("runs", []), key=lambda r: (r["arch"], r["seed"])):
        comparison, head = r.get("comparison") or {}, r.get("head") or r
        binary = (r.get("binary") or {}).get("binary_all_right", {})
        recall = lambda figures: at(at(figures, "by_verdict"), "complete")  # noqa: E731
        unrelated = r.get("unrelated_distance") or {}
        rows.append([f"{r['arch']} ({r['objective']})", r["seed"], num(r["steps"]),
                     *(f3(at(binary, n)) for n in ORACLE_LENGTHS),
                     *(f3(at(comparison.get("accuracy"), n)) for n in ("8", "256", "4096")),
                     f3(at(head.get("accuracy"), "256")), f3(recall(comparison)), f3(recall(head)),
                     f3(min(unrelated.values())) if unrelated else DASH, f3(r["steps_per_second"])])
    return table(["arm", "seed", "steps", *(f"chains all right@{n}" for n in ORACLE_LENGTHS),
                  "five-class@8 (comparison)", "@256", "@4096", "five-class@256 (head)", "complete recall (comparison)",
                  "complete recall (head)", "unrelated (min)", "steps/s"], rows)


def oracle_complete() -> str:
    rows = []
    for r in load("oracle-complete.json")["runs"]:
        for name, g in r["groups"].items():
            q = g["quantiles"] or {}
            rows.append([f"`{Path(r['run']).name}`", name, num(g["probes"]), sci(q.get("0.01")), sci(q.get("0.5")),
                         sci(q.get("0.99")), sci(r["threshold"]), f3(g["read_wrong_fraction"])])
    return table(["run", "accepted probe's successor", "probes", "distance q0.01", "median", "q0.99", "threshold",
                  "on the wrong side"], rows)


def oracle_searchers() -> str:
    rows = []
    for s in load("oracle.json")["searchers"]:
        who = s["searcher"] if s["searcher"] != "oracle" else f"oracle ({Path(s['config']['oracle']).name})"
        recall = f3(s["oracle_recall_accepted"]) if s["searcher"] == "oracle" else DASH
        rows.append([who, f"{s['solved']}/{s['problems']}", num(s["kernel_calls_per_solved"]),
                     num(s["rejected_asked"] / max(1, s["solved"])), recall, num(s["kernel_calls_max_per_problem"])])
    return table(["searcher", "solved", "kernel calls / solved", "rejected questions / solved",
                  "recall of accepted events", "most calls on one problem"], rows)


def oracle_planners(section: str = "planners") -> str:
    """The search that never reads a tree, beside the searchers that do (same 600 problems)."""
    rows = []
    for s in load("oracle.json").get(section, []):
        by = s["by_distance"]
        rows.append([f"oracle-imagination ({Path(s['config']['oracle']).name})", f"{s['solved']}/{s['problems']}",
                     f3(s["success"]), num(s["kernel_calls_per_solved"]), num(s["claims_rejected"]),
                     num(s["kernel_calls_max_per_problem"]),
                     ", ".join(f3(by[d]["success"]) for d in sorted(by, key=int)),
                     f"{s['distinct_certified_solutions']}/{s['distinct_solutions']}"])
    return table(["searcher", "solved", "success", "kernel calls / solved", "claims refused",
                  "most calls on one problem", "success by distance 1–6", "certified solutions"], rows)


# ---- certification speed ------------------------------------------------------------------------

def certify_runs() -> str:
    rows = []
    for name, r in load("certify.json")["runs"].items():
        checker = (r.get("checker") or "elaborator").split(":")[0]
        load_avg = r.get("load_average_before_after")
        rows.append([name, f"`{r['command']}`", checker, num(r["step_instances"]), num(r["distinct_statements"]),
                     num(r["failed"]), num(r["wall_seconds"], 2), num(r["distinct_checked_per_second"]),
                     DASH if not load_avg else f"{load_avg[0]:.1f} / {load_avg[1]:.1f}"])
    return table(["entry", "command", "checker", "step instances", "distinct statements", "failed", "wall s",
                  "distinct / s", "load before / after"], rows)


def certify_checkers() -> str:
    rows = [[name, num(c["elaborator"]["wall_seconds"], 2), num(c["kernel"]["wall_seconds"], 2), num(c["wall_ratio"], 2)]
            for name, c in load("certify.json")["checker_comparison"].items()]
    return table(["dataset", "elaborator wall s", "kernel wall s", "ratio"], rows)


def certify_cluster() -> str:
    rows = []
    c = load("certify.json")
    for name in ("cluster", "cluster-kernel"):
        entry = c[name]
        rows.append([name, num(entry["ray"]["distinct_statements"]), num(entry["ray"].get("wall_seconds"), 1),
                     num(entry["local"].get("wall_seconds"), 1), num(entry["overhead_ratio_wall"], 3),
                     num(entry["overhead_ratio_lean_phase"], 3), num(entry["cluster_start_seconds"], 1)])
    return table(["entry", "distinct statements", "cluster wall s", "local wall s", "overhead (wall)",
                  "overhead (Lean phase)", "cluster start s"], rows)


# ---- beyond the training distribution -----------------------------------------------------------

def beyond_cells(r: dict) -> list[str]:
    """A run's figures beyond training: first held-out occurrence (lowest over lengths), exact on
    chains whose end tree training never visited (at 256 and at the longest length), and the least
    exact end-tree size at 256."""
    beyond = r.get("beyond") or {}
    first = beyond.get("first_heldout") or {}
    first_cell = f3(min(v["exact"] for v in first.values())) if first else DASH
    unseen = beyond.get("by_end_seen") or {}
    longest = max(unseen, key=int) if unseen else None
    unseen_cell = DASH if not unseen else " / ".join(
        f"{f3(at(unseen.get(n, {}).get('unseen'), 'exact'))}" for n in ("256", longest))
    sizes = (beyond.get("by_end_size") or {}).get("256")
    size_cell = DASH
    if sizes:
        worst = min((k for k in sizes if sizes[k]["exact"] is not None), key=lambda k: sizes[k]["exact"])
        size_cell = f"{f3(sizes[worst]['exact'])} ({worst} tokens)"
    return [first_cell, unseen_cell, size_cell]


BEYOND_HEADER = ["run", "dataset", "arch", "objective", "steps", *(f"exact@{n}" for n in LENGTHS),
                 "first held-out (lowest)", "unseen ends @256 / longest", "least exact size @256",
                 "events the tables move right", "steps/s"]


def registers_recipe(r: dict) -> str:
    """``registers (hard, inherited, readout 1.0)``: the arch, and for the registers how their moves are made."""
    if r["arch"] != "registers":
        return r["arch"]
    parts = [r["moves"], *([r["tables"]] if r.get("tables", "free") != "free" else []),
             *([f"readout {r['move_readout']:g}"] if r.get("move_readout") else [])]
    return f"registers ({', '.join(parts)})"


def table_moves_cell(r: dict) -> str:
    """Of the domain's events, how many the tables alone move right on every tree (four atoms)."""
    moves = r.get("table_moves")
    return f"{moves['events_right']} of {moves['events']}" if moves else DASH


def beyond_table(section: str) -> str:
    runs = load("tracker-beyond.json").get(section, {})
    rows = [[name, r["dataset"], registers_recipe(r), r["objective"], num(r["steps"]),
             *(f3(at(r["exact"], n)) for n in LENGTHS), *beyond_cells(r), table_moves_cell(r),
             f3(r.get("steps_per_second"))] for name, r in runs.items()]
    return table(BEYOND_HEADER, rows) if rows else "No run has finished yet.\n"


def unvisited(training: dict | None) -> list[str]:
    """The analysed end trees training never visited, and the affine R² on their states ("–": not read)."""
    if not training:
        return ["–", "–"]
    return [f"{num(training['unvisited_end_trees'])} of {num(training['end_trees'])}",
            f3(training["r2_unvisited"]) if training["r2_unvisited"] is not None else "–"]


def mechanism_runs() -> str:
    runs = load("tracker-mechanism.json")["runs"]
    rows = [[name, r["arch"], r["objective"], r["domain"]["atoms"], r["histories"], r["string"],
             num(r["states"]), num(r["trees"]),
             f3(r["purity_at_trees"]), num(r["pure_clusters"]), num(r["fewest_pure"]), r["code_width"], r["pc95"],
             r["pc99"], f3(r["affine_r2"]), f3(r["permutation"]), f3(r["permutation_two"]), f3(r["fitted"]),
             f3(r["fitted_two"]), f3(r["rotation"]), f"{r['singular_p05']:.2f}–{r['singular_p95']:.2f}",
             *unvisited(r["training"])]
            for name, r in runs.items()]
    return table(["run", "arch", "objective", "atoms", "states from", "string", "states", "trees", "purity at trees",
                  "pure clusters", "fewest pure", "width", "PCs 95%", "PCs 99%", "affine R²", "permutation",
                  "2 steps", "per-event map", "2 steps", "rotation", "singular values p5–p95",
                  "ends training never visited", "affine R² there"], rows) \
        if rows else "No run has been analysed yet.\n"


def soft_runs(name: str = "tracker-soft.json") -> str:
    found = load(name) if (RESULTS / name).is_file() else {}
    rows = [[r["cell"], r["seed"], num(r["steps"]), *(f3(at(r["exact"], n)) for n in LENGTHS),
             f5(at(r["pair_distance"], "8")), f3(r["unrelated_distance"]), f3(r["participation_ratio"]),
             num(r["seconds"], 0)] for r in found.get("runs", [])]
    missing = ", ".join(found.get("missing", []))
    text = table(["cell", "seed", "steps", *(f"exact {n}" for n in LENGTHS), "pair distance 8", "unrelated distance",
                  "participation ratio", "train s"], rows) if rows else "No run has finished yet.\n"
    return text + (f"\nNot run yet: {missing}.\n" if missing else "")


# ---- a million events ---------------------------------------------------------------------------

MILLION = ("256", "65536", "1048576")


def million_runs() -> str:
    found = load("tracker-million.json")
    rows = [[r["arm"], r["seed"], num(r["chains"]), num(r["steps"]), *(f3(at(r["exact"], n)) for n in MILLION),
             f3(at(r["right_throughout"], str(r["steps"]))), num(r["events_per_second"], 0),
             num(r["minutes"], 1), num(r["cpu_seconds"] / 60, 1), num(r["ms_per_lockstep"], 2), num(r["peak_rss_mb"], 0),
             DASH if not r.get("load_average_before_after") else "{:.1f} / {:.1f}".format(*r["load_average_before_after"])]
            for r in found["runs"]]
    rows += [[r["arm"], r["seed"], num(r["chains"]), f"{r['steps_done']:,} (cut)", *(f3(at(r["exact"], n)) for n in MILLION),
              DASH, DASH, num(r["seconds"] / 60, 1), num(r["cpu_seconds"] / 60, 1), num(r["ms_per_lockstep_cpu"], 2), DASH,
              DASH] for r in found.get("in_progress", [])]
    header = ["arm", "seed", "chains", "steps", *(f"exact@{int(n):,}" for n in MILLION), "right throughout",
              "events/s", "minutes", "CPU minutes", "ms per lock-step (stepping)", "peak MB",
              "load before / after"]
    return table(header, rows) if rows else "No evaluation has finished yet.\n"


def million_histogram() -> str:
    runs = load("tracker-million.json")["runs"]
    if not runs:
        return "No evaluation has finished yet.\n"
    bins = list(runs[0]["first_wrong"])
    return table(["arm", "seed", *bins], [[r["arm"], r["seed"], *(r["first_wrong"].get(b, 0) for b in bins)]
                                          for r in runs])


# ---- the command reference ----------------------------------------------------------------------

def cli() -> str:
    from click.testing import CliRunner

    from leanbridge.cli import main as certify
    from oracle.cli import main as train_oracle
    from prover.cli import main as prove
    from stepwise.cli import main as train_stepwise
    from tracker.analysis_cli import main as analyse_tracker
    from tracker.cli import main as train_tracker
    from tracker.stream_cli import main as evaluate_tracker

    parts = []
    for name, command in (("certify", certify), ("train-tracker", train_tracker), ("prove", prove),
                          ("train-oracle", train_oracle), ("analyse-tracker", analyse_tracker),
                          ("evaluate-tracker", evaluate_tracker), ("train-stepwise", train_stepwise)):
        text = CliRunner().invoke(command, ["--help"], prog_name=name, terminal_width=100).output
        parts.append(f"### `{name}`\n\n```\n{text.rstrip()}\n```\n")
        if any(p.name == "sets" for p in command.params):  # its rare settings, behind --set
            listing = CliRunner().invoke(command, ["--settings"], prog_name=name).output
            parts.append(f"`{name} --settings`:\n\n```\n{listing.rstrip()}\n```\n")
    return "\n".join(parts)


def beyond_speed() -> str:
    """Training speed at one thread of each recipe timed by benchmarks/tracker_speed.py --schedule."""
    rows = []
    for path in sorted(RESULTS.glob("tracker-speed-*.json")):
        s = json.loads(path.read_text(encoding="utf-8"))
        if "steps_per_cpu_second" not in s:
            continue
        c = s["config"]
        recipe = " ".join([s["schedule"], *(f"{k}={v}" for k, v in s.get("overrides", {}).items())])
        # the arch as the moves were made: a recorded schedule's name alone says what it was then
        arch = registers_recipe({**c, "moves": c.get("moves", "soft")})
        rows.append([recipe, s["dataset"]["path"].rsplit("/", 1)[-1], arch, num(c["steps"], 0),
                     num(s["steps_per_cpu_second"], 2), num(c["steps"] / s["steps_per_cpu_second"] / 60, 1),
                     num(s["steps_per_second"], 2), f"{s['eval_chains']} x {s['eval_length']:,}" if s["eval_chains"] else "none"])
    return table(["recipe", "dataset", "arch", "recipe steps", "steps per CPU second", "recipe, CPU minutes",
                  "steps/s (wall, shared cores)", "evaluated chains x events"], rows)


def beyond_prover() -> str:
    """Six atoms, problems between trees training never visited: each searcher's success and kernel calls."""
    found = load("tracker-beyond.json").get("prover")
    if not found:
        return "Not run yet.\n"
    rows = [[name, num(r["problems"], 0), num(r["solved"], 0), f3(r["success"]), num(r["budget_calls"], 0),
             num(r["kernel_calls_per_solved"], 1)] for name, r in found["searchers"].items()]
    return table(["searcher", "problems", "solved", "success", "kernel budget", "kernel calls per solved"], rows)


# ---- one registers recipe for everything held out -------------------------------------------------

REGISTERS_RESULTS = "tracker-registers.json"


def minutes(seconds: float | None) -> str:
    return DASH if seconds is None else f"{seconds / 60:.1f}"


def registers_recipe_runs() -> str:
    """The registers-recipe batch's runs: exact by length, the figures beyond training (as the beyond
    batch's table reads them), and when the checks found each exact."""
    found = load(REGISTERS_RESULTS) if (RESULTS / REGISTERS_RESULTS).is_file() else {}
    rows = [[name, r["dataset"], num(r["steps"]), *(f3(at(r["exact"], n)) for n in LENGTHS), *beyond_cells(r),
             num(at(r.get("stop"), "exact_at_step")), minutes(at(r.get("stop"), "exact_at_seconds"))]
            for name, r in found.get("runs", {}).items()]
    missing = ", ".join(found.get("missing", []))
    text = table(["run", "dataset", "steps", *(f"exact@{n}" for n in LENGTHS), "first held-out (lowest)",
                  "unseen ends @256 / longest", "least exact size @256", "exact at step", "minutes to exact"],
                 rows) if rows else "No run has finished yet.\n"
    return text + (f"\nNot run yet: {missing}.\n" if missing and rows else "")


def registers_recipe_predictions() -> str:
    if not (RESULTS / REGISTERS_RESULTS).is_file():
        return "Not judged yet: no run of the batch has finished.\n"
    return predictions(REGISTERS_RESULTS)


PROGRAMS_RESULTS = "programs.json"
PROGRAM_LENGTHS = ("16", "64", "256", "1024", "4096")


def seeds_cell(values: list) -> str:
    """One figure per seed, ``a / b / c``; a dash for a seed without it, one dash when no seed has it."""
    return " / ".join(f3(v) for v in values) if any(v is not None for v in values) else DASH


def runs_by_arm(found: dict) -> dict[str, list[dict]]:
    """A results file's runs grouped by arm (in order of first appearance), each arm's by seed."""
    by_arm: dict[str, list[dict]] = {}
    for r in found.get("runs", []):
        by_arm.setdefault(r["arm"], []).append(r)
    return {arm: sorted(runs, key=lambda r: r["seed"]) for arm, runs in by_arm.items()}


def programs_runs() -> str:
    """The programs comparison by arm: exact by length (one figure per seed), training fit, the
    partner distance's growth from 16 to 256, the slot's RMS at 4,096 and the training seconds."""
    found = load(PROGRAMS_RESULTS) if (RESULTS / PROGRAMS_RESULTS).is_file() else {}
    rows = []
    for arm, runs in runs_by_arm(found).items():
        rms = [at((r.get("evaluation") or {}).get("state_rms"), "4096") for r in runs]
        rows.append([arm, ", ".join(str(r["seed"]) for r in runs),
                     *(seeds_cell([at(r["exact"], n) for r in runs]) for n in PROGRAM_LENGTHS),
                     seeds_cell([at(r.get("in_distribution"), "train") for r in runs]),
                     seeds_cell([r.get("pair_growth") for r in runs]),
                     DASH if all(v is None for v in rms) else seeds_cell(rms),
                     " / ".join(num(r.get("seconds"), 0) for r in runs)])
    floors = [[f"floor ({name})", "", *(f3(at(floor, n)) for n in PROGRAM_LENGTHS), "", "", "", ""]
              for name, floor in found.get("floor", {}).items()]
    missing = found.get("missing", [])
    text = table(["arm", "seeds", *(f"exact@{n}" for n in PROGRAM_LENGTHS), "train fit", "pair growth 16-256",
                  "slot RMS @4096", "train s"], rows + floors) if rows else "No run has finished yet.\n"
    return text + (f"\nNot run yet: {len(missing)} runs.\n" if missing and rows else "")


def programs_seed() -> str:
    """The seed's figures setting by setting, beside ours (one figure per seed of the arm that runs
    the setting: exact at the length, or the share of its own training programs it fits)."""
    found = load(PROGRAMS_RESULTS) if (RESULTS / PROGRAMS_RESULTS).is_file() else {}
    by_arm = runs_by_arm(found)
    rows = []
    for row in found.get("seed", []):
        runs = by_arm.get(row["arm"], [])
        read = [at(r.get("in_distribution"), "train") if row["at"] == "fit" else at(r["exact"], row["at"])
                for r in runs]
        rows.append([row["setting"], row["seed"], f"{row['arm']} ({len(runs)} of 3)" if runs else row["arm"],
                     seeds_cell(read) if runs else "not run yet"])
    if not rows:
        return "Not collected yet.\n"
    return table(["setting", "the seed", "our arm (seeds)", "ours, seed by seed"], rows)


def programs_where() -> str:
    """Where each finished run with a state goes wrong: the share of steps it leaves right by
    operation (from a right state), and at 256 and 4,096 statements the first wrong statement's
    quartiles and the programs never wrong."""
    found = load(PROGRAMS_RESULTS) if (RESULTS / PROGRAMS_RESULTS).is_file() else {}
    runs = [r for r in found.get("runs", []) if r.get("where")]
    ops = sorted({op for r in runs for op in r["where"]["statements"]["right_by_operation"]})
    rows = []
    for r in runs:
        where = r["where"]
        right = where["statements"]["right_by_operation"]
        cells = []
        for n in ("256", "4096"):
            at_n = where["lengths"].get(n) or {}
            quartiles = at_n.get("first_wrong_quartiles")
            cells += [DASH if quartiles is None else " / ".join(map(str, quartiles)),
                      f"{at_n.get('never_wrong', 0)} of {at_n.get('programs', 0)}"]
        rows.append([f"{r['arm']}-s{r['seed']}", *(f3(at(right.get(op), "right")) for op in ops), *cells])
    if not rows:
        return "No run has been read yet (`--collect --where`).\n"
    return table(["run", *(f"right after {op}" for op in ops), "first wrong @256 (quartiles)", "never wrong @256",
                  "first wrong @4096", "never wrong @4096"], rows)


def programs_predictions() -> str:
    if not (RESULTS / PROGRAMS_RESULTS).is_file():
        return "Not judged yet: no run of the batch has finished.\n"
    return predictions(PROGRAMS_RESULTS)


SELF_DISTILL_RESULTS = "self-distill.json"
SELF_DISTILL_LENGTHS = ("8", "16", "64", "256", "1024", "4096")  # rewrite events 8-1,024, Bits statements 16-4,096


def self_distill_runs() -> str:
    """The self-distillation comparison by arm: exact by length (one figure per seed; the rewrite arms
    are evaluated at 8 to 1,024 events, the Bits arms at 16 to 4,096 statements), the median first
    wrong event at 256 and the tokens written per event (step-by-step arms), training seconds."""
    found = load(SELF_DISTILL_RESULTS) if (RESULTS / SELF_DISTILL_RESULTS).is_file() else {}
    rows = []
    for arm, runs in runs_by_arm(found).items():
        at256 = [((r.get("evaluation") or {}).get("256") or {}) for r in runs]
        firsts = [((a.get("first_wrong") or {}).get("quartiles") or [None, None])[1] for a in at256]
        rows.append([arm, ", ".join(str(r["seed"]) for r in runs),
                     *(seeds_cell([at(r["exact"], n) for r in runs]) for n in SELF_DISTILL_LENGTHS),
                     " / ".join(num(v, 0) for v in firsts) if any(a for a in at256) else DASH,
                     " / ".join(num(a.get("tokens_per_event"), 2) for a in at256) if any(at256) else DASH,
                     " / ".join(num(r.get("seconds"), 0) for r in runs)])
    missing = found.get("missing", [])
    text = table(["arm", "seeds", *(f"exact@{n}" for n in SELF_DISTILL_LENGTHS), "first wrong@256 (median)",
                  "tokens/event @256", "train s"], rows) if rows else "No run has finished yet.\n"
    return text + (f"\nNot run yet: {len(missing)} runs.\n" if missing and rows else "")


def self_distill_predictions() -> str:
    if not (RESULTS / SELF_DISTILL_RESULTS).is_file():
        return "Not judged yet: no run of the batch has finished.\n"
    return predictions(SELF_DISTILL_RESULTS)


GROUPS_RESULTS = "groups.json"
GROUP_LENGTHS = ("16", "64", "256", "1024", "4096")


def groups_seed() -> str:
    """The seed's group rows (sections 42 and 43) beside ours: how many of the arm's seeds are exact
    at the row's length, or the Spearman it names; before any collection the rows as registered
    (``benchmarks.groups_comparison.SEED_FIGURES``), ours empty."""
    if (RESULTS / GROUPS_RESULTS).is_file():
        rows = [[r["setting"], r["seed"], r["arm"], r["ours"] or "not run yet"] for r in load(GROUPS_RESULTS)["seed"]]
    else:
        if str(ROOT) not in sys.path:
            sys.path.insert(0, str(ROOT))
        from benchmarks.groups_comparison import SEED_FIGURES

        rows = [[setting, figure, arm, ""] for setting, figure, arm, _ in SEED_FIGURES]
    return table(["setting", "the seed", "our arm", "ours"], rows)


def groups_runs() -> str:
    """The groups comparison by arm: exact by length (one figure per seed), exact at 1,048,576 (the
    recipe's streamed evaluation), the partner distance's growth from 16 to 256, training seconds."""
    found = load(GROUPS_RESULTS) if (RESULTS / GROUPS_RESULTS).is_file() else {}
    rows = []
    for arm, runs in runs_by_arm(found).items():
        million = [at(at(r.get("million"), "exact"), "1048576") for r in runs]
        rows.append([arm, ", ".join(str(r["seed"]) for r in runs),
                     *(seeds_cell([at(r["exact"], n) for r in runs]) for n in GROUP_LENGTHS),
                     seeds_cell(million), seeds_cell([r.get("pair_growth") for r in runs]),
                     " / ".join(num(r.get("seconds"), 0) for r in runs)])
    missing = found.get("missing", [])
    text = table(["arm", "seeds", *(f"exact@{n}" for n in GROUP_LENGTHS), "exact@1,048,576", "pair growth 16-256",
                  "train s"], rows) if rows else "No run has finished yet.\n"
    return text + (f"\nNot run yet: {len(missing)} runs.\n" if missing and rows else "")


def groups_predictions() -> str:
    if not (RESULTS / GROUPS_RESULTS).is_file():
        return "Not judged yet: no run of the batch has finished.\n"
    return predictions(GROUPS_RESULTS)


GENERATORS: dict[str, Callable[[], str]] = {
    "self-distill-runs": self_distill_runs, "self-distill-predictions": self_distill_predictions,
    "programs-runs": programs_runs, "programs-predictions": programs_predictions, "programs-where": programs_where,
    "programs-seed": programs_seed,
    "groups-seed": groups_seed, "groups-runs": groups_runs, "groups-predictions": groups_predictions,
    "tracker-runs": tracker_runs, "tracker-predictions": lambda: predictions("tracker.json"),
    "tracker-probes": tracker_probes, "tracker-speed": tracker_speed,
    "hard-validation": hard_validation, "hard-runs": hard_runs,
    "hard-predictions": lambda: predictions("tracker-hard.json"), "hard-where": hard_where,
    "tier2-diagnosis": tier2_diagnosis,
    "tte-runs": tte_runs, "tte-exploration": tte_exploration,
    "prover-runs": prover_runs,
    "oracle-runs": oracle_runs, "oracle-predictions": lambda: predictions("oracle.json"),
    "oracle-searchers": oracle_searchers, "oracle-planners": oracle_planners, "oracle-gate-runs": oracle_gate_runs,
    "oracle-gate-predictions": lambda: predictions("oracle.json", "gate"), "oracle-complete": oracle_complete,
    "oracle-completion-runs": lambda: oracle_gate_runs("completion"),
    "oracle-completion-predictions": lambda: predictions("oracle.json", "completion"),
    "oracle-tree-runs": lambda: oracle_gate_runs("tree"),
    "oracle-tree-predictions": lambda: predictions("oracle.json", "tree"),
    "oracle-tree-planners": lambda: oracle_planners("tree_planners"),
    "tier2-batch": tier2_batch, "tier2-batch-where": tier2_batch_where,
    "tier2-coverage": tier2_coverage,
    "tier2-predictions": lambda: predictions("tracker-tier2.json"),
    "beyond-validation": lambda: beyond_table("validation"), "beyond-batch": lambda: beyond_table("batch"),
    "beyond-predictions": lambda: predictions("tracker-beyond.json"), "beyond-speed": beyond_speed, "beyond-prover": beyond_prover,
    "registers-recipe-runs": registers_recipe_runs, "registers-recipe-predictions": registers_recipe_predictions,
    "certify-runs": certify_runs, "certify-checkers": certify_checkers, "certify-cluster": certify_cluster,
    "mechanism-runs": mechanism_runs, "mechanism-predictions": lambda: predictions("tracker-mechanism.json"),
    "soft-runs": soft_runs, "soft-predictions": lambda: predictions("tracker-soft.json"),
    "soft-seed-runs": lambda: soft_runs("tracker-soft-seed.json"),
    "soft-seed-predictions": lambda: predictions("tracker-soft-seed.json"),
    "million-runs": million_runs, "million-histogram": million_histogram,
    "million-predictions": lambda: predictions("tracker-million.json"),
    "cli": cli,
}


def generated(text: str, cache: dict[str, str]) -> str:
    """``text`` with every marked block rewritten."""
    def fill(match: re.Match) -> str:
        name = match["name"]
        if name not in GENERATORS:
            raise KeyError(f"no generator for block {name!r}")
        if name not in cache:
            cache[name] = GENERATORS[name]()
        return match.group(1) + cache[name] + match.group(4)
    return BLOCK.sub(fill, text)


def pages() -> list[Path]:
    return sorted(p for p in DOCS.rglob("*.md") if BLOCK.search(p.read_text(encoding="utf-8")))


def stale() -> list[str]:
    """The pages whose generated blocks differ from what the results say now."""
    cache: dict[str, str] = {}
    return [p.relative_to(ROOT).as_posix() for p in pages()
            if generated(p.read_text(encoding="utf-8"), cache) != p.read_text(encoding="utf-8")]


def main(argv: list[str]) -> int:
    if "--check" in argv:
        found = stale()
        for name in found:
            print(f"stale: {name} (run python docs/generate.py)")
        return 1 if found else 0
    cache: dict[str, str] = {}
    for page in pages():
        text = page.read_text(encoding="utf-8")
        new = generated(text, cache)
        if new != text:
            page.write_text(new, encoding="utf-8")
            print(f"wrote {page.relative_to(ROOT).as_posix()}")
    return 0


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT))
    sys.exit(main(sys.argv[1:]))

"""The completion batch: its arm is the gate's recipe with the completion term, and its judge
reads the registered bars (failed by the first seed below one, untested while a seed is missing).
The tree part is the same recipe with the tree term; its planner bar is met by either seed's search."""
import json
import os
import re
import subprocess
import sys
from pathlib import Path

from benchmarks.harness import comparison

ROOT = Path(__file__).resolve().parents[1]
GATE, COMPLETION, TREE = comparison("oracle-gate"), comparison("oracle-completion"), comparison("oracle-tree")
RECIPE = COMPLETION.settings["recipe"]
judge = COMPLETION.judge


def run_dir(seed: int, runs: Path, part=COMPLETION) -> Path:
    return part.run_dir(next(iter(part.arms)), seed, runs)


def collected(tmp_path: Path, part: str) -> subprocess.CompletedProcess:
    """``python -m benchmarks.oracle_completion --part PART --collect`` in ``tmp_path`` (runs under runs/,
    results in oracle.json): nothing trained, the part judged on what oracle.json records."""
    env = {**os.environ, "PYTHONPATH": str(ROOT), "OMP_NUM_THREADS": "1"}
    done = subprocess.run([sys.executable, "-m", "benchmarks.oracle_completion", "--part", part, "--collect",
                           "--runs", "runs", "--out", "oracle.json", "--quiet"], cwd=tmp_path, env=env,
                          capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    return done


def report(seed, all_right=1.0, recall=1.0, unrelated=0.5, binary=1.0):
    lengths = ("8", "16", "64", "256", "1024", "4096")
    return {"seed": seed, "unrelated_distance": {n: unrelated for n in lengths},
            "comparison": {"all_right": {n: all_right for n in lengths}, "by_verdict": {"complete": recall}},
            "binary": {"binary_all_right": {n: binary for n in lengths}}}


def test_the_arm_is_the_gate_recipe_with_the_completion_term():
    base = GATE.config("chosen", 1)
    config = COMPLETION.config("completion", 1)
    assert config.seed == 1 and config.arch == "recurrence" and config.objective == "nerode"
    assert config.metric_pairs == 1 and config.completion_margin == RECIPE["completion_margin"] > 0
    assert config.metric_delay == config.invariance_delay == 0.5
    assert (config.steps, config.validation, config.invariance_delay) == (base.steps, base.validation,
                                                                         base.invariance_delay)
    assert run_dir(0, Path("runs")) == Path("runs/oracle-recurrence-nerode-s0")


def test_the_judge_waits_for_both_seeds_and_fails_on_the_first_below_its_bar():
    verdicts = {p["id"]: p["verdict"] for p in judge([report(0)])}
    assert set(verdicts.values()) == {"untested"}
    verdicts = {p["id"]: p["verdict"] for p in judge([report(0), report(1)])}
    assert set(verdicts.values()) == {"pass"}
    verdicts = {p["id"]: p["verdict"] for p in judge([report(0, recall=0.98, unrelated=0.1)])}
    assert verdicts["completion_recall"] == verdicts["completion_no_collapse"] == "fail"
    assert verdicts["completion_exact_short"] == "untested"
    verdicts = {p["id"]: p["verdict"] for p in judge([report(0), report(1, all_right=0.99, binary=0.5)])}
    assert verdicts["completion_exact_short"] == verdicts["completion_binary_kept"] == "fail"


def planner(seed, success, calls, runs=Path("runs")):
    return {"success": success, "kernel_calls_per_solved": calls,
            "oracle": {"run": str(run_dir(seed, runs, TREE)), "seed": seed}}


def test_the_tree_part_adds_the_tree_term_and_lives_apart():
    tree = TREE
    config = tree.config("tree", 0)
    assert config.tree_weight == 1.0 and COMPLETION.config("completion", 0).tree_weight == 0.0
    assert {k: v for k, v in tree.settings["recipe"].items() if k != "tree_weight"} == RECIPE
    assert run_dir(1, Path("runs"), tree) == Path("runs/oracle-recurrence-nerode-tree-s1")
    ids = [p["id"] for p in tree.judge([report(0), report(1)])]
    assert ids == list(tree.predictions) and all(i.startswith("tree_") for i in ids)


def test_the_tree_planner_passes_on_either_seed_and_fails_only_when_both_are_short():
    runs = [report(0), report(1)]
    verdict = lambda planners: {p["id"]: p["verdict"] for p in TREE.judge(runs, planners=planners)}["tree_planner"]  # noqa: E731
    assert verdict([]) == "untested"
    assert verdict([planner(0, 0.995, 1.05)]) == "pass"
    assert verdict([planner(0, 0.98, 1.0)]) == "untested"
    assert verdict([planner(0, 0.98, 1.0), planner(1, 1.0, 1.2)]) == "fail"
    assert verdict([planner(0, 0.98, 1.0), planner(1, 1.0, 1.1)]) == "pass"
    assert verdict([planner(0, 0.0, None), planner(1, 0.0, None)]) == "fail"  # nothing solved


def test_the_tree_planners_are_read_from_their_own_section_by_run(tmp_path):
    out = tmp_path / "oracle.json"

    def part_planners() -> list[dict]:  # the planner reports the tree part's judge read (its measured searches)
        collected(tmp_path, "tree")
        measured = next(p for p in json.loads(out.read_text())["tree"]["predictions"] if p["id"] == "tree_planner")
        return [planner(int(seed), f["success"], f["calls_per_solved"]) for seed, f in measured["measured"].items()]

    assert part_planners() == []
    mine, other = planner(0, 1.0, 1.0), {**planner(1, 1.0, 1.0), "oracle": {"run": "runs/else", "seed": 1}}
    out.write_text(json.dumps({"planners": [planner(1, 1.0, 1.0)], "tree_planners": [mine, other]}))
    assert part_planners() == [mine]


def test_the_gate_figure_draws_every_recorded_part(tmp_path):
    def gate_figure(out: Path) -> Path:  # the figure a collection of the tree part draws from what out records
        done = collected(tmp_path, "tree")
        return tmp_path / re.search(r"^wrote \S+ and (\S+)$", done.stderr, re.M).group(1)

    lengths = {n: 1.0 for n in ("8", "16", "64")}
    run = lambda seed, arch="recurrence": {**report(seed), "arch": arch, "comparison": {"all_right": lengths}}  # noqa: E731
    out = tmp_path / "oracle.json"
    out.write_text(json.dumps({"gate": {"runs": [run(0), run(0, "truth")]}, "tree": {"runs": [run(0), run(1)]}}))
    path = gate_figure(out)
    assert path == tmp_path / "oracle-gate-figures" / "chains-all-right.png"
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"

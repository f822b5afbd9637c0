"""The project speaks of itself only: its README, docs, command help, code and results name no
numbered work period, no issue number, no path of the machine it was built on and no time of
day at which something was done. An experiment page may give the date its predictions were
committed (a fact of the experiment); nothing else carries a date."""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
HERE = Path(__file__).resolve().relative_to(ROOT).as_posix()

# What is read: the manual and the docs, every Python file, the Makefile and pyproject, the
# results; fixtures under tests/data are other people's texts and are not.
SUFFIXES = {".md", ".py", ".json", ".toml"}
NAMES = {"Makefile", "LICENSE"}
DATED = ("docs/experiments/",)  # pages that may carry the date of a registration

RULES: dict[str, re.Pattern] = {
    "a numbered work period": re.compile(
        r"\b(?:stop|session|sitting)[ -]\d+\b"
        r"|\b(?:first|second|third|fourth|fifth|this|last|next|previous|earlier|later) (?:session|sitting)s?\b"
        r"|\b(?:this|last|next|previous|the same) stop\b(?![.\w]| rule| check| when)",
        re.IGNORECASE),
    "an issue number": re.compile(r"\bissues? #?\d+\b|(?:^|[\s(\[])#\d+\b", re.IGNORECASE | re.MULTILINE),
    "a build machine's path": re.compile(r"/work/|/tmp/clone|/tmp/bash_jobs"),
    "a time of day": re.compile(r"\b\d\d:\d\d(?:\s*[-–]\s*\d\d:\d\d)?\s*UTC\b|\b\d\d:\d\d\s*[-–]\s*\d\d:\d\d\b"),
}
DATE = re.compile(r"\b20\d\d-[01]\d-[0-3]\d\b")

# Files that other work owns at present and that still carry such words; each entry is (path,
# the words), so that a line that moves stays allowed and a new mention does not. Temporary:
# this list is to be emptied as those files are swept.
ALLOWED: set[tuple[str, str]] = {
}


def project_files() -> list[Path]:
    try:
        listed = subprocess.run(["git", "ls-files"], cwd=ROOT, capture_output=True, text=True, check=True).stdout
        paths = [ROOT / line for line in listed.splitlines()]
    except (OSError, subprocess.CalledProcessError):  # not a checkout: every file but the ignored kinds
        paths = [p for p in ROOT.rglob("*") if not {".venv", "data", "runs", ".git"} & set(p.parts)]
    docs = list((ROOT / "docs").rglob("*.md")) if (ROOT / "docs").is_dir() else []
    chosen = {p for p in [*paths, *docs] if p.is_file() and (p.suffix in SUFFIXES or p.name in NAMES)}
    return sorted(p for p in chosen
                  if not p.relative_to(ROOT).as_posix().startswith("tests/data/")
                  and p.relative_to(ROOT).as_posix() != HERE)


def help_texts() -> dict[str, str]:
    """Every command's --help, as a user sees it."""
    from click.testing import CliRunner

    from leanbridge.cli import main as certify
    from oracle.cli import main as train_oracle
    from prover.cli import main as prove
    from tracker.cli import main as train_tracker
    from tracker.stream_cli import main as evaluate_tracker

    commands = {"certify": certify, "train-tracker": train_tracker, "prove": prove, "train-oracle": train_oracle,
                "evaluate-tracker": evaluate_tracker}
    return {f"help of {name}": CliRunner().invoke(command, ["--help"], terminal_width=100).output
            for name, command in commands.items()}


def findings(name: str, text: str) -> list[str]:
    found = []
    for number, line in enumerate(text.splitlines(), 1):
        for what, rule in RULES.items():
            for match in rule.finditer(line):
                words = match.group(0).strip(" ([")
                if (name, words.lower()) not in {(p, w.lower()) for p, w in ALLOWED}:
                    found.append(f"{name}:{number}: {what}: {words!r} in {line.strip()[:120]!r}")
        if not name.startswith(DATED):
            for match in DATE.finditer(line):
                found.append(f"{name}:{number}: a date: {match.group(0)!r} in {line.strip()[:120]!r}")
    return found


def test_the_rules_catch_what_they_are_for():
    caught = ["as at stop 13", "(issue 14)", "see #14 for", "git clone /work/main", "(2026-11-30, 16:50 UTC)",
              "in the second session", "run at 18:30-20:20"]
    for text in caught:
        assert findings("README.md", text), text
    kept = ["``#0`` is the innermost binder", "the stop rule", "training stops after two checks",
            "scope='session'", "round(x, 2)", "exact from step 2,750"]
    for text in kept:
        assert not findings("README.md", text), text
    assert findings("README.md", "registered 2026-11-30") and not findings("docs/experiments/x.md", "registered 2026-11-30")


@pytest.mark.parametrize("path", project_files(), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_a_file_speaks_of_the_project_only(path):
    name = path.relative_to(ROOT).as_posix()
    found = findings(name, path.read_text(encoding="utf-8", errors="replace"))
    assert not found, "\n".join(found)


def test_the_commands_help_speaks_of_the_project_only():
    found = [f for name, text in help_texts().items() for f in findings(name, text)]
    assert not found, "\n".join(found)


# ---- the library in its own words: it says what its code does and why, citing no paper's section ----

LIBRARY = ("chains", "leanbridge", "training", "tracker", "stepwise", "oracle", "prover")  # docs and benchmarks may cite
CITATION = re.compile(r"\bsections?\s+\d+|§\s*\d+", re.IGNORECASE)


def citations(text: str, name: str) -> list[str]:
    """``name:line: citation`` for every numbered section the Python ``text`` cites."""
    return [f"{name}:{number}: {match.group(0)!r} in {line.strip()[:120]!r}"
            for number, line in enumerate(text.splitlines(), 1) for match in CITATION.finditer(line)]


def test_the_citation_rule_catches_what_it_is_for():
    caught = ["(section 48)", "sections 43-47 of the seed", "Section 50's figure", "§51", "(§ 52)"]
    for text in caught:
        assert citations(text, "m.py"), text
    kept = ["# ---- certification ----", "the manifest's sections", "a section of 4 steps", "sections: 2"]
    for text in kept:
        assert not citations(text, "m.py"), text


@pytest.mark.parametrize("path", [p for place in LIBRARY for p in sorted((ROOT / place).rglob("*.py"))],
                         ids=lambda p: p.relative_to(ROOT).as_posix())
def test_the_library_cites_no_section_of_a_paper(path):
    found = citations(path.read_text(encoding="utf-8"), path.relative_to(ROOT).as_posix())
    assert not found, "\n".join(found)


# ---- structure: a function a newcomer reads in one screen ----

LONGEST = 80  # lines of one function, its signature, docstring and nested functions included
# the code the rule holds for
SHORT = ("prover", "oracle", "stepwise", "training", "tracker/data.py", "tracker/train.py", "tracker/losses.py", "tracker/config.py",
         "tracker/cli.py", "tracker/schedules.py", "tracker/inference.py", "tracker/build.py", "tracker/analysis_cli.py")


def long_functions(text: str, name: str) -> list[str]:
    """``name:line: function (N lines)`` for every function of ``text`` longer than LONGEST lines."""
    import ast

    return [f"{name}:{node.lineno}: {node.name} ({node.end_lineno - node.lineno + 1} lines)"
            for node in ast.walk(ast.parse(text))
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
            and node.end_lineno - node.lineno + 1 > LONGEST]


def test_the_length_rule_catches_a_long_function():
    body = "".join(f"    x{k} = {k}\n" for k in range(LONGEST))
    assert long_functions(f"def f():\n{body}", "x.py") == [f"x.py:1: f ({LONGEST + 1} lines)"]
    assert not long_functions(f"def f():\n{body[body.index(chr(10)) + 1:]}", "x.py")


@pytest.mark.parametrize("place", SHORT)
def test_no_function_runs_past_80_lines(place):
    root = ROOT / place
    files = sorted(root.rglob("*.py")) if root.is_dir() else [root]
    found = [f for path in files for f in long_functions(path.read_text(encoding="utf-8"),
                                                          path.relative_to(ROOT).as_posix())]
    assert not found, "\n".join(found)


# ---- structure: the Lean bridge ----

BRIDGE_FUNCTION_LINES = 80  # lines of one function of leanbridge/, nested functions included
BRIDGE_MODULE_LINES = 500  # lines of one module of leanbridge/
# a checker compared with, or given as, a name: the checker travels as a leanbridge.checker.Checker
CHECKER_AS_TEXT = re.compile(r"\bchecker\s*(?:==|!=|=)\s*[\"'](?:kernel|elaborator)[\"']")


def bridge_findings(text: str, name: str) -> list[str]:
    """What breaks the Lean bridge's structural rules in one module's ``text``."""
    import ast

    lines = text.splitlines()
    found = [f"{name}: {len(lines)} lines"] if len(lines) > BRIDGE_MODULE_LINES else []
    found += [f"{name}:{node.lineno}: {node.name} is {node.end_lineno - node.lineno + 1} lines"
              for node in ast.walk(ast.parse(text)) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
              and node.end_lineno - node.lineno + 1 > BRIDGE_FUNCTION_LINES]
    found += [f"{name}:{n}: the checker as text: {line.strip()[:80]}" for n, line in enumerate(lines, 1)
              if CHECKER_AS_TEXT.search(line)]
    return found


def test_the_bridge_rules_catch_what_they_are_for():
    body = "".join(f"    x{k} = {k}\n" for k in range(BRIDGE_FUNCTION_LINES))
    assert bridge_findings(f"def f():\n{body}", "m.py") == [f"m.py:1: f is {BRIDGE_FUNCTION_LINES + 1} lines"]
    assert not bridge_findings(f"def f():\n{body[body.index(chr(10)) + 1:]}", "m.py")
    assert bridge_findings("x = 1\n" * (BRIDGE_MODULE_LINES + 1), "m.py") == [f"m.py: {BRIDGE_MODULE_LINES + 1} lines"]
    for line in ('kernel = bridge.checker == "kernel"', "AskConfig(checker='elaborator')", 'other = checker != "kernel"'):
        assert bridge_findings(line + "\n", "m.py"), line
    assert not bridge_findings("kernel = bridge.checker is Checker.KERNEL\n", "m.py")


@pytest.mark.parametrize("path", sorted((ROOT / "leanbridge").rglob("*.py")), ids=lambda p: p.relative_to(ROOT).as_posix())
def test_the_bridge_reads_in_short_functions_and_modules_and_types_its_checker(path):
    found = bridge_findings(path.read_text(encoding="utf-8"), path.relative_to(ROOT).as_posix())
    assert not found, "\n".join(found)


# ---- structure: one way to restore a run, each setting declared once, no import cycle ----

CHECKPOINT_NAMED = re.compile(r"""["']checkpoint\.pt["']""")  # the checkpoint's file name as a string literal


def test_the_checkpoint_rule_catches_the_file_name_written_out():
    for text in ('path = out / "checkpoint.pt"', "torch.save(blob, where / 'checkpoint.pt')"):
        assert CHECKPOINT_NAMED.search(text), text
    for text in ("path = out / CHECKPOINT", "the run's checkpoint (``checkpoint.pt``) is read back"):
        assert not CHECKPOINT_NAMED.search(text), text


def test_the_checkpoint_is_named_once():
    """Every trainer and loader (the training machinery, the tracker, the oracle, the prover) and every benchmark
    finds a run's checkpoint by ``training.checkpoint.CHECKPOINT``; the file name is written nowhere else."""
    found = [path.relative_to(ROOT).as_posix() for place in ("training", "tracker", "oracle", "prover", "benchmarks")
             for path in sorted((ROOT / place).rglob("*.py"))
             if CHECKPOINT_NAMED.search(path.read_text(encoding="utf-8"))]
    assert found == ["training/checkpoint.py"]


def test_every_training_setting_is_declared_once_and_made_an_option_or_settable():
    """A setting is one config field with its default and its help; the commands' options are made
    from it, so an option's help and default are the field's. A setting its declaration calls rare
    is given by --set instead: its option is hidden (an alias kept for older command lines), --set
    reads its default back as that default, and --settings lists it; a setting that is not rare is
    shown and refused by --set."""
    from dataclasses import MISSING, fields

    from click.testing import CliRunner

    from oracle.cli import main as train_oracle
    from oracle.config import OracleConfig
    from tracker.cli import main as train_tracker
    from tracker.config import TrainConfig
    from training.config import Setting
    from training.options import SettingError, read_sets

    for config, command in ((TrainConfig, train_tracker), (OracleConfig, train_oracle)):
        options = {p.name: p for p in command.params}
        listing = CliRunner().invoke(command, ["--settings"]).output
        listed = {m[1] for m in re.finditer(r"^  (\w+)=", listing, re.MULTILINE)}  # "  name=default  (takes)"
        for field in fields(config):
            said = field.metadata.get("setting")
            assert isinstance(said, Setting) and said.help, f"{config.__name__}.{field.name} says nothing"
            option = options[field.name]
            assert option.help == said.help and field.default is not MISSING
            assert str(option.default) == str(field.default), f"{config.__name__}.{field.name}"
            assert option.hidden == said.rare and (field.name in listed) == said.rare, field.name
            pair = f"{field.name}={str(field.default).lower() if said.flag else field.default}"
            if said.rare:
                assert read_sets([pair], config(), "command") == {field.name: field.default}
            else:
                with pytest.raises(SettingError, match="an option of its own"):
                    read_sets([pair], config(), "command")
        assert not options["sets"].hidden and listed <= {f.name for f in fields(config)}


PACKAGES = ("chains", "leanbridge", "tracker", "oracle", "prover", "stepwise")


def package_imports(root: Path = ROOT, packages: tuple[str, ...] = PACKAGES) -> dict[str, set[str]]:
    """Each module of ``packages`` under ``root`` (subpackages and their __init__ too) -> the modules of
    those packages it imports, at its top or inside a function. ``from p import m`` names the module
    ``p.m`` when there is one, else ``p``; a relative import is read from the module's package."""
    import ast

    modules = {}
    for package in packages:
        for path in sorted((root / package).rglob("*.py")):
            parts = path.relative_to(root).with_suffix("").parts
            modules[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    graph = {}
    for name, path in modules.items():
        here = name.split(".") if path.name == "__init__.py" else name.split(".")[:-1]  # the module's package
        imported = set()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                imported |= {a.name for a in node.names}
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:  # from . import m, from ..p import x: counted from the module's package
                    base = ".".join(here[: len(here) - node.level + 1] + ([base] if base else []))
                imported |= {f"{base}.{a.name}" if f"{base}.{a.name}" in modules else base for a in node.names}
        graph[name] = {m for m in imported if m in modules and m != name}
    return graph


def import_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One cycle of ``graph`` (module -> the modules it imports), or None."""
    done: set[str] = set()

    def walk(module: str, path: list[str]) -> list[str] | None:
        if module in path:
            return path[path.index(module):] + [module]
        if module in done or module not in graph:
            return None
        for imported in sorted(graph[module]):
            cycle = walk(imported, path + [module])
            if cycle:
                return cycle
        done.add(module)
        return None

    return next((c for c in (walk(m, []) for m in sorted(graph)) if c), None)


def test_the_cycle_finder_finds_a_cycle():
    assert import_cycle({"a": {"b"}, "b": {"c"}, "c": {"a"}}) == ["a", "b", "c", "a"]
    assert import_cycle({"a": {"b"}, "b": {"c"}, "c": set()}) is None


def test_the_cycle_finder_reads_imports_inside_functions_and_from_packages(tmp_path):
    """A cycle closed by an import inside a function, through a subpackage, is a cycle."""
    files = {"pkg/__init__.py": "", "pkg/a.py": "from pkg.sub import b\n", "pkg/sub/__init__.py": "",
             "pkg/sub/b.py": "def f():\n    from pkg import a  # deferred\n    return a\n",
             "pkg/sub/c.py": "from ..a import x\nfrom . import b\nimport pkg.sub\n"}
    for name, text in files.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    graph = package_imports(tmp_path, ("pkg",))
    assert graph["pkg.a"] == {"pkg.sub.b"} and graph["pkg.sub.b"] == {"pkg.a"}
    assert graph["pkg.sub.c"] == {"pkg.a", "pkg.sub.b", "pkg.sub"}
    assert import_cycle(graph) == ["pkg.a", "pkg.sub.b", "pkg.a"]
    (tmp_path / "pkg/sub/b.py").write_text("def f():\n    return 1\n")
    assert import_cycle(package_imports(tmp_path, ("pkg",))) is None


def test_no_module_of_the_project_imports_itself_back():
    """Dependencies point one way inside every package and between them: the configs, the schedules,
    the losses and the checkpoint sit below the trainers, the shared types below the modules that use
    them; no two modules import each other, not even from inside a function."""
    cycle = import_cycle(package_imports())
    assert cycle is None, " -> ".join(cycle)


# ---- structure: the benchmarks, modules over one comparison harness ----

# a load of a module by path or by name, and a name or path of the benchmarks beside it
LOADER = re.compile(r"\b(?:spec_from_file_location|run_path|run_module|import_module)\(")
BENCHMARK_NAMED = re.compile(r"""["']benchmarks["']|benchmarks/\w+\.py|["']benchmarks\.""")


HARNESS = ("harness", "catalog", "__main__")  # what the scripts share, and their one entry point


def benchmark_imports(text: str) -> list[str]:
    """The benchmark modules other than the harness that the Python ``text`` imports, and the loaders
    it calls where it names the benchmarks."""
    import ast

    shared = {f"benchmarks.{m}" for m in HARNESS}
    found = []
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.ImportFrom) and node.module == "benchmarks":
            found += [f"benchmarks.{a.name}" for a in node.names if a.name not in HARNESS]
        elif isinstance(node, ast.ImportFrom) and (node.module or "").startswith("benchmarks."):
            found += [node.module] if node.module not in shared else []
        elif isinstance(node, ast.Import):
            found += [a.name for a in node.names if a.name.startswith("benchmarks.") and a.name not in shared]
    if BENCHMARK_NAMED.search(text):
        found += [m.group(0) for m in LOADER.finditer(text)]
    return found


def test_the_benchmark_rule_catches_what_it_is_for():
    caught = ["from benchmarks import tracker_comparison", "from benchmarks.oracle_completion import judge",
              "import benchmarks.grid", "from benchmarks import harness, grid",
              'path = ROOT / "benchmarks" / "grid.py"\nspec = importlib.util.spec_from_file_location("g", path)',
              'driver = importlib.import_module(f"benchmarks.{batch}")',
              "runpy.run_module('benchmarks.grid', run_name='__main__')"]
    for text in caught:
        assert benchmark_imports(text), text
    kept = ["from benchmarks import harness", "from benchmarks.harness import comparison", "import benchmarks.harness",
            "from benchmarks.catalog import CATALOG", "from benchmarks.__main__ import main",
            'subprocess.run([sys.executable, "-m", "benchmarks.grid"])',
            'spec = importlib.util.spec_from_file_location("docs_generate", ROOT / "docs" / "generate.py")']
    for text in kept:
        assert not benchmark_imports(text), text


@pytest.mark.parametrize("path", [p for p in sorted((ROOT / "tests").glob("*.py")) if p.name != Path(HERE).name],
                         ids=lambda p: p.name)
def test_a_test_reaches_a_benchmark_only_through_the_harness_or_its_command(path):
    found = benchmark_imports(path.read_text(encoding="utf-8"))
    assert not found, f"{path.name}: " + ", ".join(found)


# The training functions a benchmark reaches only through the harness (benchmarks/harness.py: a Plan
# of runs, or ``launch`` for a command run as a user runs it, which alone decides to resume it).
LAUNCHERS = {"tracker.train.train", "oracle.train.train", "tracker.grid.run_spec", "training.grid.finished_or_trained"}
RESUME_FLAG = re.compile(r"""["']--resume["']""")  # a command's resume flag written out
# The benchmark that calls a training function itself, and which: its worker trains with the code of
# a reference commit (the bits of two commits compared), which has no harness.
OWN_TRAINING = {"reproduce_check.py": {"tracker.train.train", "oracle.train.train"}}


def launches(text: str) -> set[str]:
    """How the Python ``text`` launches a training other than through the harness: the training
    functions of LAUNCHERS it imports or names, and "--resume" where it writes a resume flag itself."""
    import ast

    found = {"--resume"} if RESUME_FLAG.search(text) else set()
    for node in ast.walk(ast.parse(text)):
        if isinstance(node, ast.ImportFrom):
            found |= {f"{node.module}.{a.name}" for a in node.names} & LAUNCHERS
        elif isinstance(node, ast.Attribute):
            found |= {ast.unparse(node)} & LAUNCHERS
    return found


def test_the_launch_rule_catches_what_it_is_for():
    caught = {"from tracker.train import TrainConfig, train": "tracker.train.train",
              "def f():\n    from oracle.train import train as fit\n    return fit": "oracle.train.train",
              "from tracker.grid import RunSpec, run_spec": "tracker.grid.run_spec",
              "from training.grid import finished_or_trained": "training.grid.finished_or_trained",
              "import tracker.train\nreport = tracker.train.train(config, out)": "tracker.train.train",
              'resume = ["--resume"] if (out / CHECKPOINT).is_file() else []': "--resume",
              "command.append('--resume')": "--resume"}
    for text, what in caught.items():
        assert launches(text) == {what}, text
    kept = ["from tracker.train import Trainer, TrainConfig", "from tracker.grid import RunSpec",
            "from oracle.grid import OracleRunSpec", "from benchmarks.harness import Plan, launch",
            '"""Each run resumed (train-tracker --resume) where it was cut short."""', "trainer.train_step(step)"]
    for text in kept:
        assert not launches(text), text


@pytest.mark.parametrize("path", [p for p in sorted((ROOT / "benchmarks").glob("*.py")) if p.name != "harness.py"],
                         ids=lambda p: p.name)
def test_a_benchmark_launches_a_training_only_through_the_harness(path):
    found = launches(path.read_text(encoding="utf-8")) - OWN_TRAINING.get(path.name, set())
    assert not found, f"{path.name}: " + ", ".join(sorted(found))


def test_a_benchmark_trains_by_itself_only_where_it_still_must():
    """An exception that is no longer used is dropped, so that it cannot cover a new launch."""
    for name, allowed in OWN_TRAINING.items():
        assert allowed <= launches((ROOT / "benchmarks" / name).read_text(encoding="utf-8")), name


@pytest.mark.parametrize("path", sorted((ROOT / "benchmarks").glob("*.py")), ids=lambda p: p.name)
def test_a_benchmark_runs_as_a_module_without_editing_the_import_path(path):
    assert "sys.path" not in path.read_text(encoding="utf-8"), f"{path.name}: run it as python -m benchmarks.NAME"


def test_every_registered_comparison_declares_itself_and_judges_nothing_without_its_runs():
    from benchmarks.harness import REGISTRY, comparison

    for name in REGISTRY:
        declared = comparison(name)
        assert declared.registered and all(declared.arms[arm] for arm in declared.registered), name
        judged = declared.judge([])
        assert {p["verdict"] for p in judged} == {"untested"}, name
        assert {p["prediction"] for p in judged} == set(declared.predictions.values()), name
        arm = declared.registered[0]
        seed = declared.arms[arm][0]
        assert declared.run_dir(arm, seed, Path("runs")) != declared.run_dir(arm, seed + 1, Path("runs")), name
        assert declared.config(arm, seed) is not None, name


# The modules of the layers above the domains that read one domain's own code: each is that domain's
# own route (the rewrite domain's loader, fresh stream, registers, heap layouts, move-table stream, searches, oracle,
# step-by-step text and shortest histories; the programs machines' registers, code encoder and error
# reading; the groups have none, they take the generic route). Every other module takes the domain as a value from a
# dataset's manifest (chains.domains), which is how a domain of one's own goes through every command.
DOMAIN_ROUTES = {
    "chains.groups": set(),
    "chains.rewrite": {"oracle.data", "oracle.inference", "oracle.scorer", "prover.problems", "prover.run",
                       "prover.search", "stepwise.data", "stepwise.rewrite_pairs", "stepwise.train", "tracker.analysis",
                       "tracker.data", "tracker.fresh", "tracker.inference", "tracker.layouts", "tracker.registers",
                       "tracker.stream"},
    "chains.programs": {"tracker.code_encoder", "tracker.data", "tracker.domain_errors", "tracker.variables"},
}


def test_only_the_named_routes_read_a_domain_s_own_code():
    graph = package_imports()
    above = [m for m in graph if m.split(".")[0] in ("tracker", "oracle", "prover", "stepwise")]
    for domain, routes in DOMAIN_ROUTES.items():
        readers = {m for m in above if any(x == domain or x.startswith(f"{domain}.") for x in graph[m])}
        assert readers == routes, f"{domain}: {sorted(readers ^ routes)} differ from the named routes"
    generic = {"tracker.dataset", "tracker.domain_data", "tracker.domain_fresh", "tracker.domain_run",
               "tracker.domain_stream", "tracker.domain_analysis", "tracker.train", "tracker.models", "tracker.losses", "prover.domain_search",
               "stepwise.distill", "stepwise.domain_pairs"}
    assert not generic & set().union(*DOMAIN_ROUTES.values())

"""Rare settings behind --set SETTING=VALUE: --set gives the config the setting's option gives, bad
pairs are refused in one line naming the setting and what it takes, the rare options stay accepted
as hidden aliases (every command line written before keeps working), and --settings lists them."""
import json
import re
import shlex
from dataclasses import fields
from pathlib import Path

import click
import pytest
from click.testing import CliRunner
from hypothesis import given, settings, strategies as st

import oracle.cli
import tracker.cli
from oracle.config import OracleConfig
from tracker.config import TrainConfig
from training.options import SettingError, read_sets

ROOT = Path(__file__).resolve().parent.parent
COMMANDS = {"train-tracker": (tracker.cli, TrainConfig), "train-oracle": (oracle.cli, OracleConfig)}
RARE = [(name, f) for name, (_, config) in COMMANDS.items() for f in fields(config) if f.metadata["setting"].rare]
# command lines on which a setting may be valid (some take only the registers, or a transformer):
# --set must agree with the option on each
BASES = {"train-tracker": ([], ["--schedule", "registers"], ["--arch", "transformer"]), "train-oracle": ([],)}


class Built(Exception):
    """Raised in place of training: the config the command built from its command line."""

    def __init__(self, config) -> None:
        super().__init__("built")
        self.config = config


def built(command: str, args: list[str], out: Path):
    """The config ``command`` builds from ``args`` (its training replaced), or its refusal: (exit code, output)."""
    module, _ = COMMANDS[command]

    def instead(config, *rest, **keywords):
        raise Built(config)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(module, "train", instead)
        result = CliRunner().invoke(module.main, [*args, "--device", "cpu", "--out", str(out)], prog_name=command)
    if isinstance(result.exception, Built):
        return result.exception.config
    assert "Traceback" not in result.output, result.output
    return result.exit_code, result.output


def values(field) -> st.SearchStrategy[str]:
    """Texts of values the setting's option takes."""
    said = field.metadata["setting"]
    if said.choices is not None:
        return st.sampled_from(said.choices)
    if said.flag is not None:
        return st.sampled_from(["true", "false"])
    low = -100 if said.low is None else said.low
    high = low + 100 if said.high is None else said.high
    if field.type in ("int", int):
        return st.integers(int(low) + said.low_open, int(high) - said.high_open).map(str)
    return st.floats(low, high, exclude_min=said.low_open, exclude_max=said.high_open).map(repr)


def expected(field, text: str):
    """The value ``text`` stands for, read by hand."""
    said = field.metadata["setting"]
    if said.flag is not None:
        return text == "true"
    return text if said.choices is not None else {"int": int, "float": float}[field.type](text)


def as_option(field, text: str) -> list[str]:
    said = field.metadata["setting"]
    if said.flag is not None:
        on, off = said.flag.split("/")
        return [on if text == "true" else off]
    return [f"--{field.name.replace('_', '-')}", text]


@pytest.fixture(scope="module")
def out(tmp_path_factory) -> Path:
    return tmp_path_factory.mktemp("options") / "run"


@settings(max_examples=150, deadline=None)
@given(st.sampled_from(RARE), st.data())
def test_set_gives_the_config_its_option_gives(out, rare, data):
    command, field = rare
    text = data.draw(values(field), label=field.name)
    made = []
    for base in BASES[command]:
        by_option = built(command, [*base, *as_option(field, text)], out)
        by_set = built(command, [*base, "--set", f"{field.name}={text}"], out)
        assert by_option == by_set, (base, by_option, by_set)  # the same config, or the same refusal
        if not isinstance(by_set, tuple):
            made.append(by_set)
            assert getattr(by_set, field.name) == expected(field, text)
    assert made, f"{field.name}={text} made no config"


@pytest.mark.parametrize("command", COMMANDS)
def test_a_setting_not_given_keeps_its_default_and_sets_add_up(command, out):
    plain = built(command, [], out)
    said = [(f, f.metadata["setting"]) for c, f in RARE if c == command]
    two = [f for f, s in said if s.low is not None and s.high is None][:2]  # any value above the default
    changed = built(command, [arg for f in two for arg in ("--set", f"{f.name}={getattr(plain, f.name) + 1}")], out)
    assert {f.name: getattr(changed, f.name) for f in two} == {f.name: getattr(plain, f.name) + 1 for f in two}
    assert all(getattr(changed, f.name) == getattr(plain, f.name) for f in fields(plain) if f not in two)


REFUSED = [
    (["--set", "tabels=tied"], ["no setting tabels", "did you mean tables?"]),
    (["--set", "step=5"], ["no setting step", "did you mean --steps?"]),
    (["--set", "steps=5"], ["steps is an option of its own", "give --steps 5"]),
    (["--set", "width=abc"], ["--set width=abc: width is an option of its own, --width, which takes an integer >= 8, "
                              "not 'abc'"]),  # not "give --width abc", which would fail in turn
    (["--set", "fixed_norm=false"], ["give --fixed-norm or --free-norm"]),
    (["--set", "tables=wide"], ["tables takes one of free, tied, inherited, not 'wide'"]),
    (["--set", "warmup_steps=-1"], ["warmup_steps takes an integer >= 0"]),
    (["--set", "gamma=1"], ["gamma takes a number in (0, 1)"]),
    (["--set", "invariance_ramp=much"], ["invariance_ramp takes a number in [0, 1]"]),
    (["--set", "mu"], ["--set mu: not SETTING=VALUE", "train-tracker --settings"]),
    (["--set", "mu=1", "--set", "mu=2"], ["mu is set twice"]),
    (["--tables", "tied", "--set", "tables=inherited"], ["tables is given twice", "--tables"]),
    (["--set", "invariance_ramp=0.3", "--invariance-ramp", "0.3"], ["invariance_ramp is given twice"]),
]


@pytest.mark.parametrize("args,said", REFUSED, ids=[" ".join(a) for a, _ in REFUSED])
def test_a_bad_pair_is_refused_in_one_line_naming_the_setting(args, said, out):
    code, output = built("train-tracker", ["--schedule", "registers", *args], out)
    assert code == 2 and len(output.strip().splitlines()) == 1, output
    assert all(part in output for part in said), output
    assert not out.exists()


def test_the_library_refuses_with_a_typed_one_line_error():
    with pytest.raises(SettingError, match=r"^--set moves=firm: moves takes one of soft, hard, not 'firm'$"):
        read_sets(["moves=firm"], TrainConfig(), "train-tracker")
    assert issubclass(SettingError, ValueError)
    assert read_sets(["slot-noise=0.5", "tables=tied"], TrainConfig(), "x") == {"slot_noise": 0.5, "tables": "tied"}


@pytest.mark.parametrize("command", COMMANDS)
def test_the_listing_names_every_rare_setting_and_help_shows_none(command):
    module, config = COMMANDS[command]
    listing = CliRunner().invoke(module.main, ["--settings"], prog_name=command)
    assert listing.exit_code == 0
    listed = {m[1]: m[2] for m in re.finditer(r"^  (\w+)=(\S+)  \((.+)\)$", listing.output, re.MULTILINE)}
    rare = [f for c, f in RARE if c == command]
    assert list(listed) == [f.name for f in rare]  # in the config's order
    defaults = config()
    assert all(listed[f.name] in (str(getattr(defaults, f.name)), '""') for f in rare)
    assert CliRunner().invoke(module.main, ["--set", "help"], prog_name=command).output == listing.output
    shown = CliRunner().invoke(module.main, ["--help"], prog_name=command, terminal_width=200).output
    options = set(re.findall(r"^  (--[a-z-]+)", shown, re.MULTILINE))
    assert "--set" in options and f"{command} --settings" in shown
    assert not options & {f"--{f.name.replace('_', '-')}" for f in rare}
    common = [f for f in fields(config) if not f.metadata["setting"].rare and f.metadata["setting"].flag is None]
    assert options >= {f"--{f.name.replace('_', '-')}" for f in common}


def shell_blocks(text: str) -> list[str]:
    """The fenced blocks of a markdown ``text`` that hold no Python, continuation lines joined."""
    blocks, block, fence = [], [], None
    for line in text.splitlines():
        if line.startswith("```"):
            if fence is None:
                fence, block = line[3:].strip(), []
            else:
                if fence not in ("python", "py"):
                    blocks.append("\n".join(block).replace("\\\n", " "))
                fence = None
        elif fence is not None:
            block.append(line)
    return blocks


def recorded_lines() -> tuple[list[tuple[str, str]], set[tuple[str, str]]]:
    """Every train-tracker or train-oracle command line written in the results, the Makefile and the
    README's and docs' shell blocks, as (command, its arguments), one with placeholders left out; and
    every (command, option) quoted in the README's and docs' prose."""
    texts = [json.dumps(json.loads(p.read_text(encoding="utf-8"))) for p in sorted((ROOT / "results").glob("*.json"))]
    texts.append((ROOT / "Makefile").read_text(encoding="utf-8"))
    quoted = set()
    for page in [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]:
        text = page.read_text(encoding="utf-8")
        texts += shell_blocks(text)
        for quote in re.findall(r"`(?:\.venv/bin/)?(train-tracker|train-oracle) ([^`\n]+)`", text):
            quoted |= {(quote[0], option) for option in re.findall(r"(?<![\w-])--[a-z][a-z-]*", quote[1])}
    lines = []
    for text in texts:
        for match in re.finditer(r"(?:\.venv/bin/)?(train-tracker|train-oracle) (-[^\n\"]*)", text):
            if not re.search(r"[\[<>(|]|\b[A-Z]{2,}\b", match[2]):  # [--option], <arm>, a|b, DIR; prose (>= ...)
                lines.append((match[1], match[2]))
    return lines, quoted


def test_every_command_line_written_before_is_still_accepted():
    lines, quoted = recorded_lines()
    given = {a for _, args in lines for a in shlex.split(args)}
    assert {"--checkpoint-every", "--objective"} <= given  # the reading finds recorded lines, rare options among them
    for command, args in lines:
        module, _ = COMMANDS[command]
        try:
            module.main.make_context(command, shlex.split(args))
        except click.ClickException as e:
            pytest.fail(f"{command} {args}: {e.format_message()}")
    assert ("train-oracle", "--tree-weight") in quoted and ("train-tracker", "--objective") in quoted
    for command, option in quoted:
        known = {o for p in COMMANDS[command][0].main.params for o in (*p.opts, *p.secondary_opts)}
        assert option in known, f"{command} {option}"

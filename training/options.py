"""Command-line options generated from the training settings of train-tracker and train-oracle.

Each setting is declared once, as a field of the command's config dataclass with its default and
what a command says of it (``training.config.setting``); ``config_options`` makes its option,
named after the field (``--warmup-steps`` is ``warmup_steps``), so a command builds its config
from its options by name. The defaults shown by ``--help`` are read from the config it is given.

A setting its declaration calls rare (``Setting.rare``) is not shown by ``--help``: ``set_options``
gives the command one repeatable ``--set SETTING=VALUE``, each value read and checked as the
setting's option reads it (``read_value``), and ``--settings`` (or ``--set help``) lists every rare
setting with its default and the values it takes. The rare setting's option is accepted too, as a
hidden alias, so that a recorded command line that gives it as an option runs as written; ``given_settings`` refuses
a setting given both ways.
"""
from __future__ import annotations

import difflib
import textwrap
from collections.abc import Callable, Sequence
from dataclasses import Field, fields
from pathlib import Path
from typing import Any

import click
from click.core import ParameterSource

from training.config import Setting
from training.runlog import LogConfig

Decorator = Callable[[Callable], Callable]

# the settings both trainers have, in the order --help shows them after each command's own
SHARED = ("seed", "steps", "width", "batch_chains", "lr", "final_lr_fraction", "warmup_steps", "weight_decay",
          "grad_clip", "fixed_norm", "mu", "invariance_delay", "invariance_ramp", "nextlat_weight", "nextlat_delay",
          "nextlat_ramp", "checkpoint_every")


class SettingError(ValueError):
    """A ``--set`` pair or a setting's value that is refused: one line naming the setting."""


class BadSetting(click.ClickException):
    """A refused setting on the command line: one line, exit status 2 (bad usage), no usage text."""

    exit_code = 2


def config_options(defaults, names: Sequence[str], prefix: str = "") -> Decorator:
    """The options of the settings ``names`` of ``defaults`` (a config instance: a TrainConfig, an
    OracleConfig, a StopConfig...), in that order, each with the default it has there; with a
    ``prefix``, ``--<prefix>-<name>`` (the command's parameter ``<prefix>_<name>``). A rare
    setting's option is hidden (``set_options`` gives it)."""
    declared = {f.name: f for f in fields(defaults)}
    return stacked([config_option(declared[name], getattr(defaults, name), prefix) for name in names])


def config_option(field: Field, default, prefix: str = "") -> Decorator:
    """The option of one config field, as its ``Setting`` says, defaulting to ``default``."""
    said: Setting = field.metadata["setting"]
    name = f"{prefix}_{field.name}" if prefix else field.name
    if said.flag is not None:
        return click.option(said.flag, default=default, show_default=True, help=said.help, hidden=said.rare)
    if said.path:
        default = Path(default)
    return click.option(f"--{name.replace('_', '-')}", type=accepted(field), default=default, show_default=True,
                        help=said.help, hidden=said.rare)


def _kind(field: Field) -> str:
    return field.type if isinstance(field.type, str) else field.type.__name__  # "int", "float", "str", "bool"


def accepted(field: Field) -> click.ParamType:
    """The type a config field's value is read and checked with, by its option and by --set."""
    said: Setting = field.metadata["setting"]
    kind = _kind(field)
    if said.flag is not None:
        return click.BOOL
    if said.choices is not None:
        return click.Choice(said.choices)
    if said.path:
        return click.Path(path_type=Path)
    if said.low is not None or said.high is not None:
        return (click.IntRange if kind == "int" else click.FloatRange)(
            said.low, said.high, min_open=said.low_open, max_open=said.high_open)
    return {"int": click.INT, "float": click.FLOAT}.get(kind, click.STRING)


def accepts(field: Field) -> str:
    """What a config field takes, in words: "an integer >= 1", "a number in [0, 1)", "one of a, b"..."""
    said: Setting = field.metadata["setting"]
    if said.flag is not None:
        return "true or false"
    if said.choices is not None:
        return "one of " + ", ".join(said.choices)
    if said.path:
        return "a directory"
    what = {"int": "an integer", "float": "a number"}.get(_kind(field), "text")
    low, high = (f"{x:g}" if x is not None else None for x in (said.low, said.high))
    if low is not None and high is not None:
        return f"{what} in {'(' if said.low_open else '['}{low}, {high}{')' if said.high_open else ']'}"
    if low is not None:
        return f"{what} {'>' if said.low_open else '>='} {low}"
    if high is not None:
        return f"{what} {'<' if said.high_open else '<='} {high}"
    return what


def read_value(field: Field, text: str) -> Any:
    """``text`` read as a value of ``field``, exactly as its option reads it (a directory kept as
    text); SettingError, naming the setting and what it takes, when it is not one."""
    try:
        value = accepted(field).convert(text, None, None)
    except click.BadParameter:
        raise SettingError(f"{field.name} takes {accepts(field)}, not {text!r}") from None
    return str(value) if field.metadata["setting"].path else value


def _option_of(field: Field) -> str:
    """The option of a setting that has one shown: ``--steps``, ``--fixed-norm or --free-norm``."""
    said: Setting = field.metadata["setting"]
    return said.flag.replace("/", " or ") if said.flag else f"--{field.name.replace('_', '-')}"


def _closest(name: str, declared: dict[str, Field]) -> str:
    """"; did you mean X?" naming the setting spelled most like ``name`` (its option, where it has one
    shown), or "" when none is close."""
    close = difflib.get_close_matches(name, declared, n=1)
    if not close:
        return ""
    field = declared[close[0]]
    return f"; did you mean {field.name if field.metadata['setting'].rare else _option_of(field)}?"


def read_sets(pairs: Sequence[str], defaults, command: str) -> dict[str, Any]:
    """``--set`` pairs ``SETTING=VALUE`` -> {setting: value} for the rare settings of ``defaults``;
    SettingError, one line naming the pair, for a pair that is not one (a name of no setting, with
    the closest one's; a setting with an option of its own; a bad value; a setting set twice)."""
    declared = {f.name: f for f in fields(defaults) if "setting" in f.metadata}
    out: dict[str, Any] = {}
    for pair in pairs:
        name, sep, text = pair.partition("=")
        name = name.strip().replace("-", "_")
        if not sep or not name:
            raise SettingError(f"--set {pair}: not SETTING=VALUE ({command} --settings lists the settings)")
        if name not in declared:
            raise SettingError(f"--set {pair}: no setting {name}{_closest(name, declared)} ({command} --settings "
                               "lists them)")
        field = declared[name]
        if not field.metadata["setting"].rare:
            if field.metadata["setting"].flag:
                raise SettingError(f"--set {pair}: {name} is an option of its own: give {_option_of(field)}")
            try:
                read_value(field, text)
            except SettingError:  # name the option it belongs to, and what that takes, never a command that fails
                raise SettingError(f"--set {pair}: {name} is an option of its own, {_option_of(field)}, which takes "
                                   f"{accepts(field)}, not {text!r}") from None
            raise SettingError(f"--set {pair}: {name} is an option of its own: give {_option_of(field)} {text}")
        if name in out:
            raise SettingError(f"--set {pair}: {name} is set twice")
        try:
            out[name] = read_value(field, text)
        except SettingError as e:
            raise SettingError(f"--set {pair}: {e}") from None
    return out


def _shown(value: Any) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    return str(value) if value != "" else '""'


def settings_listing(defaults, command: str, note: str = "") -> str:
    """Every rare setting of ``defaults`` (in the config's order), each with its default, what it
    takes and its help: what ``--settings`` prints. ``note`` ends the first line."""
    lines = textwrap.wrap(f"The rare settings of {command}, each given as --set SETTING=VALUE (repeat --set for "
                          f"more), shown as SETTING=DEFAULT (what it takes){note}:", width=100)
    for field in fields(defaults):
        said = field.metadata.get("setting")
        if said is None or not said.rare:
            continue
        lines += ["", f"  {field.name}={_shown(getattr(defaults, field.name))}  ({accepts(field)})",
                  *textwrap.wrap(said.help, width=96, initial_indent="      ", subsequent_indent="      ")]
    return "\n".join(lines)


def set_options(defaults, command: str, note: str = "") -> Decorator:
    """``--set SETTING=VALUE`` (repeatable): the rare settings of ``defaults``, read by ``read_sets``
    into the command's parameter ``sets`` ({setting: value}); and ``--settings`` (or ``--set
    help``): their listing (``settings_listing``, with ``note``)."""
    def listed(context: click.Context, param: click.Parameter, value: bool) -> None:
        if value:
            click.echo(settings_listing(defaults, command, note))
            context.exit()

    def read(context: click.Context, param: click.Parameter, pairs: tuple[str, ...]) -> dict[str, Any]:
        listed(context, param, "help" in pairs)
        try:
            return read_sets(pairs, defaults, command)
        except SettingError as e:
            raise BadSetting(str(e)) from None

    return stacked([
        click.option("--set", "sets", multiple=True, metavar="SETTING=VALUE", callback=read,
                     help=f"A rare setting, given as SETTING=VALUE (repeatable): `{command} --settings` (or --set "
                          "help) lists every one with its default and the values it takes."),
        click.option("--settings", is_flag=True, expose_value=False, is_eager=True, hidden=True, callback=listed,
                     help="List the settings --set takes, and exit."),
    ])


def given_settings(settings: dict[str, Any], sets: dict[str, Any]) -> dict[str, Any]:
    """The settings the command line gives: those of the command's ``settings`` (its options by
    name) not left at their default, and ``sets`` (its --set's); BadSetting, in one line, for a
    setting given both as its option and by --set."""
    context = click.get_current_context()
    given = {name: value for name, value in settings.items()
             if context.get_parameter_source(name) != ParameterSource.DEFAULT}
    for name in sorted(given.keys() & sets.keys()):
        option = next(p for p in context.command.params if p.name == name)
        raise BadSetting(f"{name} is given twice, as {'/'.join(option.opts + option.secondary_opts)} and by "
                         f"--set {name}=...: give it once")
    return {**given, **sets}


RESUME_HELP = ("Continue from the checkpoint in --out with the same settings (with none there yet, start the "
               "run: one command line starts a run and continues it after an interruption); with a larger --steps "
               "(and every other setting the same), extend the run: its steps so far are the original run's, and the "
               "schedule is continued, every further step at the final learning rate (--lr times "
               "final_lr_fraction) with every loss term at its final weight; the report records it as "
               "extension.extended_from. Any other change of settings is refused.")


def run_options(default_out: str) -> Decorator:
    """--out, --resume, --force, --threads, --quiet, --log-every and --tensorboard: where a run goes, how
    it runs and what it logs, not what it learns."""
    options = [
        click.option("--out", type=click.Path(path_type=Path), default=None,
                     help=f"Run directory [default: {default_out}]."),
        click.option("--resume", is_flag=True, help=RESUME_HELP),
        click.option("--force", is_flag=True,
                     help="Replace the run at --out, finished or not, whatever its settings (without it any run "
                          "there is refused, naming what differs; --resume continues or extends it instead)."),
        click.option("--threads", type=click.IntRange(1), default=None,
                     help="Torch threads [default: torch's, one per core]. Runs repeat bit for bit at a fixed "
                          "count of one."),
        click.option("--quiet", is_flag=True, help="No progress bar."),
        click.option("--log-every", type=click.IntRange(1), default=LogConfig.every, show_default=True,
                     help="Steps between lines of the run's metrics.jsonl (step, learning rate, every loss term; "
                          "the last step is always logged)."),
        click.option("--tensorboard", is_flag=True,
                     help="Also write TensorBoard event files into <out>/tensorboard (needs the tensorboard "
                          "extra: pip install 'exact-state[tensorboard]')."),
    ]

    return stacked(options)


def stacked(options: list[Decorator]) -> Decorator:
    """One decorator applying ``options`` in order (the first is shown first by --help)."""
    def decorate(command: Callable) -> Callable:
        for option in reversed(options):
            command = option(command)
        return command

    return decorate

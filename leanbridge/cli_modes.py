"""Which of certify's options go with which of its modes: rewrite chains (the default), programs, groups,
a domain of one's own, ``--verify`` and ``--mathlib``. An option given where it means nothing is refused
in one line (a usage error, exit status 2) naming it as the user types it and the mode or dataset it
does not fit."""
from __future__ import annotations

from pathlib import Path

import click

from chains.imported.load import is_import_path
from chains.manifest import DatasetError, domain_name, read_manifest_json

# The options of one mode only, in the order a refusal names the first one given.
MATHLIB_ONLY = ("dirs", "split", "max_theorems", "dry_run", "dojo_timeout", "repo")
PROGRAMS_ONLY = ("values", "program_lengths", "preset")
GROUPS_ONLY = ("group", "distractor", "partner_words")
IMPORTED_OPTIONS = ("domain", "chains", "length", "partners", "test_lengths", "test_chains", "hold_out", "jobs", "store",
                    "timeout", "memory_mb", "force")
REWRITE_ONLY = ("atoms", "tier", "max_size", "length", "starts", "start_walk", "tier2_weight", "corrupt", "probes",
                "probe_chains", "checker")
CHAIN_ONLY = ("domain", "group", "distractor", "partner_words", "values", "program_lengths", "preset",
              "atoms", "tier", "max_size", "chains", "length", "partners", "test_lengths", "starts", "start_walk",
              "tier2_weight", "hold_out", "corrupt", "test_chains", "jobs", "store", "timeout", "memory_mb", "probes",
              "probe_chains", "cluster", "checker", "verify_dir", "force")


def flag(name: str) -> str:
    """The option of the parameter ``name`` as the user types it (``corrupt``: --corrupt-partners)."""
    for param in click.get_current_context().command.params:
        if param.name == name:
            return next((opt for opt in param.opts if opt.startswith("--")), param.opts[0])
    return f"--{name.replace('_', '-')}"


def refuse_off_rewrite(directory: Path, rewrite_only: list[str]) -> None:
    """A UsageError naming the first of ``rewrite_only`` (options given, of rewrite chains only) when
    ``directory`` holds a dataset of another domain, which --verify re-checks by its own route."""
    if not rewrite_only:
        return
    try:
        manifest = read_manifest_json(directory)
    except DatasetError:
        return  # --verify says what is wrong with it
    domain = domain_name(manifest) if isinstance(manifest, dict) else "rewrite"
    if domain != "rewrite":
        raise click.UsageError(f"{flag(rewrite_only[0])} is for rewrite chains; {directory} is a {domain} dataset")


def refuse_misplaced(options: dict, given: set[str]) -> None:
    """A UsageError for the first option of ``given`` (the names of the options the user typed) that
    the mode ``options`` ask for does not take; the --mathlib mode's are refused where it is read."""
    mathlib_only = [name for name in MATHLIB_ONLY if name in given]
    if mathlib_only:
        raise click.UsageError(f"{flag(mathlib_only[0])} goes with --mathlib")
    groups_only = [name for name in GROUPS_ONLY if name in given]
    if groups_only and options["domain"] != "groups":
        raise click.UsageError(f"{flag(groups_only[0])} goes with --domain groups")
    if is_import_path(options["domain"]) or options["domain"] == "groups":
        others = [name for name in CHAIN_ONLY if name in given and name not in IMPORTED_OPTIONS + GROUPS_ONLY]
        if others:
            whose = ("--domain groups" if options["domain"] == "groups"
                     else f"a domain of one's own ({options['domain']})")
            if others[0] in PROGRAMS_ONLY:
                raise click.UsageError(f"{flag(others[0])} goes with --domain programs")
            belongs = "is for rewrite chains, not" if others[0] in REWRITE_ONLY else "is not"
            raise click.UsageError(f"{flag(others[0])} {belongs} for {whose}")
    elif options["domain"] != "programs":
        programs_only = [name for name in PROGRAMS_ONLY if name in given]
        if programs_only:
            raise click.UsageError(f"{flag(programs_only[0])} goes with --domain programs")
    elif options["verify_dir"] is None:
        rewrite_only = [name for name in REWRITE_ONLY if name in given]
        if rewrite_only:
            raise click.UsageError(f"{flag(rewrite_only[0])} is for rewrite chains, not for --domain programs")
    if options["preset"] and options["verify_dir"] is not None:
        raise click.UsageError("--preset names the sizes of a dataset to make; --verify re-checks one as it is")
    if options["verify_dir"] is not None:
        refuse_off_rewrite(options["verify_dir"], [name for name in REWRITE_ONLY if name in given])

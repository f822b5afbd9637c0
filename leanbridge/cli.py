"""The ``certify`` command: build a certified dataset, or verify one from scratch."""
from __future__ import annotations

import json
import os
from pathlib import Path

import click

from chains.domains import own_domain, registered
from chains.groups import GROUPS, import_path as group_path
from chains.holdout import HoldOut, HoldOutRefused
from chains.imported.dataset import DEFAULT_TEST_CHAINS as IMPORTED_TEST_CHAINS
from chains.imported.dataset import DEFAULT_TEST_LENGTHS as IMPORTED_TEST_LENGTHS
from chains.imported.dataset import DomainSpec
from chains.imported.load import DomainImportError, is_import_path
from chains.manifest import STARTS, DatasetError
from chains.programs.dataset import DEFAULT_TEST_LENGTHS as PROGRAM_TEST_LENGTHS
from chains.programs.dataset import PRESETS as PROGRAM_PRESETS
from chains.programs.dataset import ProgramsSpec
from chains.programs.syntax import Machine
from chains.rewrite.corrupt import Corruption
from chains.rewrite.dataset import DEFAULT_TEST_LENGTHS, PROBE_TEST_LENGTHS, DatasetSpec
from chains.rewrite.space import Domain, EnumerationIncomplete
from leanbridge.asker import AskConfig
from leanbridge.certificates import DATASET_BRIDGE, CertificationFailed, default_store
from leanbridge.certify import certify_dataset
from leanbridge.certify_domain import certify_domain, is_domain_dataset, verify_domain
from leanbridge.certify_programs import certify_programs, is_programs_dataset, verify_programs
from leanbridge.checker import CHECKERS, Checker
from leanbridge.cli_modes import CHAIN_ONLY, MATHLIB_ONLY, flag, refuse_misplaced
from leanbridge.cliutil import OneLineCommand, PhaseBars, positive_ints, user_errors
from leanbridge.mathlib.benchmark import BenchmarkError
from leanbridge.mathlib.dataset import certify_mathlib
from leanbridge.mathlib.replay import ReplayConfig, ReplayUnavailable
from leanbridge.mathlib.selection import SEED_DIRS, SelectionSpec
from leanbridge.runner import LeanLimits
from leanbridge.verify import verify_dataset


def _hold_out(ctx, param, value: str | None) -> HoldOut | None:
    """click callback: ``events:K``, ``pairs:K`` or ``states`` as a ``HoldOut``."""
    if value is None:
        return None
    try:
        return HoldOut.parse(value)
    except ValueError as e:
        raise click.BadParameter(str(e)) from None


def _domain(ctx, param, value: str) -> str:
    """click callback: a registered domain's name, or a domain of one's own by its import path."""
    if value in registered() or is_import_path(value):
        return value
    raise click.BadParameter(f"{value!r:.60} is neither a shipped domain ({', '.join(registered())}) nor an import "
                             "path package.module:Name")


def _checker(ctx, param, value: str | None) -> Checker | None:
    """click callback: a checker's name as a ``Checker``."""
    return None if value is None else Checker(value)


def _corruption(ctx, param, value: str | None) -> Corruption | None:
    """click callback: ``near:F`` or ``far:F`` as a ``Corruption``."""
    if value is None:
        return None
    try:
        return Corruption.parse(value)
    except ValueError as e:
        raise click.BadParameter(str(e)) from None


@click.command(cls=OneLineCommand, context_settings={"help_option_names": ["-h", "--help"]})
@click.option("--domain", default="rewrite", show_default=True, callback=_domain, metavar="NAME|MODULE:NAME",
              help="rewrite: expression trees under rewrite rules (--atoms, --tier); programs: straight-line programs "
                   "on a register machine of eight variables (--values), every statement's effect and every "
                   "partner's equivalence certified by the kernel evaluating the programs library; "
                   "groups: a group's word problem (--group, --distractor), certified as a domain of one's own is, the "
                   "manifest naming it chains.groups:<GROUP>; "
                   "package.module:Name: a domain of one's own, importable here (docs/guide/bring-your-own-domain.md), "
                   "every step and equivalence certified by the kernel evaluating its Lean module (--chains, --length, "
                   "--partners, --test-lengths, --test-chains, --seed, --hold-out).")
@click.option("--group", type=click.Choice(list(GROUPS)), default="S5", show_default=True,
              help="With --domain groups: S5 (120 elements; the adjacent transpositions (i i+1)), A5 (60; the "
                   "3-cycles (i i+1 i+2)) or S3xS3 (36; (0 1), (1 2) on one factor's points, (3 4), (4 5) on the "
                   "other's); a history starts at the identity and its state is the product of its generators.")
@click.option("--distractor", is_flag=True,
              help="With --domain groups: draw the event id, which changes nothing, among the generators.")
@click.option("--partner-words", type=click.Choice(["random", "reduced", "path"]), default="random",
              show_default=True,
              help="With --domain groups: each partner a random equivalent word of any length up to the history's "
                   "(random), the history's reduced form, its canonical shortest word (reduced), or, with "
                   "--distractor, the history's own generators in their order with its distractors moved (path: "
                   "the control for pairs that differ only in distractors). The manifest's domain records any but "
                   "random (chains.groups:<GROUP>[_distractor]_<KIND>).")
@click.option("--values", type=click.Choice(["2", "16"]), default="2", show_default=True,
              help="With --domain programs: 2, the Bits machine (not, and, or, xor); 16, the Arithmetic machine "
                   "(+, -, * modulo 16 and if a < b then c else d).")
@click.option("--program-lengths", default="4:16", show_default=True, metavar="MIN:MAX",
              help="With --domain programs: a training program's statements, uniform in [MIN, MAX].")
@click.option("--preset", type=click.Choice(list(PROGRAM_PRESETS)), default=None,
              help="With --domain programs: named sizes. small: 500 training programs and 32 test programs of each "
                   "of 16, 64 and 256 statements, a first dataset in minutes (make demo-programs). --chains, "
                   "--test-lengths or --test-chains given beside it override its value; the default --out gains "
                   "its name (data/programs-bits-small).")
@click.option("--atoms", type=click.IntRange(2, 6), default=4, show_default=True, help="Distinct atoms per start tree.")
@click.option("--tier", type=click.IntRange(1, 2), default=1, show_default=True,
              help="1: commutativity and associativity; 2: adds distributivity and factoring.")
@click.option("--max-size", type=click.IntRange(1), default=None,
              help="Tier 2: largest tree in tokens a step may produce [default: 4*atoms-1].")
@click.option("--chains", type=click.IntRange(1), default=5000, show_default=True, help="Training chains.")
@click.option("--length", type=click.IntRange(1), default=8, show_default=True, help="Events per training chain.")
@click.option("--partners", type=click.IntRange(0), default=2, show_default=True,
              help="Certified partners (equivalent histories) per chain.")
@click.option("--test-lengths", default=None, callback=positive_ints,
              help=f"Comma-separated lengths of the held-out test splits [default: "
                   f"{','.join(map(str, DEFAULT_TEST_LENGTHS))}; with --probes {','.join(map(str, PROBE_TEST_LENGTHS))}; "
                   f"with --domain programs {','.join(map(str, PROGRAM_TEST_LENGTHS))}; with groups or a domain of "
                   f"one's own {','.join(map(str, IMPORTED_TEST_LENGTHS))}].")
@click.option("--starts", type=click.Choice(STARTS), default="start", show_default=True,
              help="Where training chains start: start, a uniformly random start tree; reachable, a tree drawn "
                   "uniformly among every tree of the domain a chain can visit (on tier 2 the larger trees too; "
                   "refused when there are too many to enumerate). Test chains always start at a start tree.")
@click.option("--start-walk", type=click.IntRange(0), default=0, show_default=True,
              help="Training chains start where a random walk of this many events from the tree --starts draws "
                   "ends (0: at that tree), so that they visit the states long chains visit; test chains always "
                   "start at a start tree.")
@click.option("--tier2-weight", type=click.FloatRange(0, min_open=True), default=1.0, show_default=True,
              help="Tier 2: training chains pick each applicable size-changing event this many times as often as "
                   "each other applicable event (1: uniformly); test chains always pick uniformly.")
@click.option("--hold-out", "hold_out", default=None, metavar="PROTOCOL", callback=_hold_out,
              help="Hold part of the domain out of training. events:K: K events (rule@position), drawn from the "
                   "seed so that every rule and position keeps other events, appear in no training chain or "
                   "partner, and every test chain holds at least one. pairs:K: K ordered pairs of events, drawn "
                   "among the adjacent pairs random walks take often, appear adjacently in no training chain or "
                   "partner, and every test chain holds one (test lengths of at least 2). states: sampling "
                   "unchanged. Under each, the manifest's holdout field records what was held out, the trees "
                   "training visits and, per test split, the chains ending at a tree training never visited; "
                   "--verify checks them. On programs, groups and a domain of one's own the events are the statements, "
                   "generators or events their own histories use.")
@click.option("--corrupt-partners", "corrupt", default=None, metavar="KIND:SHARE", callback=_corruption,
              help="Rewrite chains only. A soft checker on purpose: replace this share of the training partners "
                   "by wrong ones, drawn from the seed. near:F: a near miss, a history ending one rewrite from the "
                   "chain's end; far:F: a random other class, a history ending at a start tree other than the "
                   "chain's end. A wrong "
                   "partner's steps are certified; it carries no equivalence certificate and is marked wrong in "
                   "the file, the manifest's corrupt_partners says how many, --verify names each one as not "
                   "certified, and the trainers refuse the dataset unless told --corrupted-checker.")
@click.option("--test-chains", type=click.IntRange(1), default=None,
              help=f"Chains per test split [default: 512; with --domain programs {ProgramsSpec().test_chains}; "
                   f"with groups or a domain of one's own {IMPORTED_TEST_CHAINS}].")
@click.option("--seed", type=int, default=0, show_default=True, help="Seed of every random choice.")
@click.option("--jobs", type=click.IntRange(1), default=os.cpu_count() or 1, show_default=True,
              help="Lean processes at once.")
@click.option("--out", type=click.Path(path_type=Path), default=None,
              help="Dataset directory [default: data/tier<T>-a<K>; with --domain programs data/programs-bits or "
                   "data/programs-arithmetic; with --domain groups data/groups-<group>[-distractor][-<partner words>]; "
                   "with a domain of one's own data/<its name>].")
@click.option("--store", type=click.Path(path_type=Path), default=None,
              help="Certificate store (SQLite) [default: the cache's certificates.sqlite].")
@click.option("--force", is_flag=True,
              help="Replace a dataset at --out that was made with other settings (without it such a dataset is "
                   "refused, naming what differs; a re-run with the same settings makes the same files again).")
@click.option("--timeout", type=click.FloatRange(1), default=600, show_default=True,
              help="Seconds one Lean process may run.")
@click.option("--memory-mb", type=click.IntRange(256), default=8192, show_default=True,
              help="Address-space limit of one Lean process, in MiB.")
@click.option("--probes", is_flag=True,
              help="At every step of every training chain (and of --probe-chains test chains) try five probe "
                   "events and record Lean's verdict on each.")
@click.option("--probe-chains", type=click.IntRange(1), default=128, show_default=True,
              help="Test chains per split that carry probes.")
@click.option("--cluster", default=None, metavar="ADDRESS",
              help="Send the batches of statements to the Ray cluster at ADDRESS as tasks (auto: the one running "
                   "on this machine); its CPUs replace --jobs. Needs the package's [cluster] extra.")
@click.option("--checker", type=click.Choice(CHECKERS), default=None, callback=_checker,
              help="Rewrite chains only (programs, groups and a domain of one's own have one route each, the "
                   "manifest's certificate: trace or step): who certifies the steps and equivalences: kernel "
                   "(explicit kernel terms straight to the Lean kernel through kcheck, a C program built with gcc on "
                   "first use, about twenty times as many statements per CPU-second; the bundled Lean only) or "
                   "elaborator (Lean text through Lean's elaborator and kernel, #print axioms after each; any Lean "
                   "4.35.0). Probes always go to the elaborator. A kernel-route certificate is stored and identified "
                   "apart from the elaborator's. [default: kernel; with --verify, the "
                   "checker the manifest names]")
@click.option("--verify", "verify_dir", type=click.Path(path_type=Path), default=None,
              help="Re-check every step and equivalence of this dataset in Lean, trusting nothing stored.")
@click.option("--mathlib", "mathlib_dir", type=click.Path(path_type=Path), default=None,
              help="Mathlib probe verdicts instead of chains: read this LeanDojo Benchmark 4 directory, build "
                   "five probes per step and replay them in LeanDojo (needs the mathlib extra and a traced Mathlib).")
@click.option("--dirs", default=None,
              help="With --mathlib: comma-separated Mathlib directories to take proofs from "
                   "[default: the seed's Nat, Int, Real, List and SpecialFunctions].")
@click.option("--split", type=click.Choice(["random", "novel_premises"]), default="random", show_default=True,
              help="With --mathlib: which of the benchmark's splits to read (its theorems are then split by length).")
@click.option("--max-theorems", type=click.IntRange(1), default=None,
              help="With --mathlib: at most this many proofs per split, a seeded sample.")
@click.option("--dry-run", is_flag=True, help="With --mathlib: build and count the probes, replay nothing, write nothing.")
@click.option("--dojo-timeout", type=click.IntRange(1), default=120, show_default=True,
              help="With --mathlib: seconds LeanDojo may take to open a theorem or run one tactic.")
@click.option("--repo", default=None,
              help="With --mathlib: open theorems in this local clone of the benchmark's repository (at its commit) "
                   "instead of resolving its GitHub URL.")
def main(**options) -> None:
    """Certify rewrite chains (or programs, group words, or histories of a domain of one's own) with the Lean kernel
    and write them as a dataset."""
    ctx = click.get_current_context()
    given = {name for name in options if ctx.get_parameter_source(name) is not click.core.ParameterSource.DEFAULT}
    if options["mathlib_dir"] is not None:
        chain_only = [name for name in CHAIN_ONLY if name in given]
        if chain_only:
            raise click.UsageError(f"{flag(chain_only[0])} is for rewrite chains, not for --mathlib")
        _mathlib(options["mathlib_dir"], *(options[name] for name in MATHLIB_ONLY), options["seed"], options["out"])
        return
    refuse_misplaced(options, given)
    bridge = AskConfig(jobs=options["jobs"], cluster=options["cluster"],
                       limits=LeanLimits(timeout_s=options["timeout"], memory_mb=options["memory_mb"]),
                       checker=options["checker"] or DATASET_BRIDGE.checker)
    if options["verify_dir"] is not None:
        _verify(options["verify_dir"], bridge, options["checker"])
    elif options["domain"] == "programs":
        _build_programs(options, bridge, given)
    elif options["domain"] == "groups":  # a shipped domain on the generic route: named by its import path
        suffix = ("-distractor" if options["distractor"] else "") + (
            "" if options["partner_words"] == "random" else f"-{options['partner_words']}")
        try:
            domain = group_path(options["group"], options["distractor"], options["partner_words"])
        except ValueError as e:
            raise click.UsageError(f"--partner-words {options['partner_words']}: {e}") from None
        _build_imported({**options, "domain": domain}, bridge,
                        Path("data") / f"groups-{options['group'].lower()}{suffix}")
    elif is_import_path(options["domain"]):
        _build_imported(options, bridge)
    else:
        _build(options, bridge)


def _verify(directory: Path, bridge: AskConfig, checker: Checker | None) -> None:
    """``certify --verify``: re-check a dataset and say what was confirmed."""
    if is_programs_dataset(directory):
        _verify_programs(directory, bridge)
        return
    if is_domain_dataset(directory):
        _verify_imported(directory, bridge)
        return
    bars = PhaseBars()
    with user_errors(CertificationFailed, cleanup=bars.close,
                     interrupted="interrupted; certificates committed so far are kept in the store"):
        report = verify_dataset(directory, bridge, bars, checker)
        bars.close()
    wrong = report.pop("not_certified", None)
    click.echo(json.dumps(report, indent=2))
    if wrong:
        click.echo(f"{len(wrong)} partners not certified (put there on purpose, as the manifest's "
                   f"corrupt_partners says); first: {wrong[0]}")
    if report["checker"] != report["manifest_checker"]:
        click.echo(f"note: {directory} was certified by the {report['manifest_checker']} checker; "
                   f"re-checked with the {report['checker']} checker, as --checker asked")
    probes = f", {report['probes']} probe verdicts confirmed by Lean" if report["probes"] else ""
    click.echo(f"verified {directory}: {report['steps']} steps and {report['equivalences']} "
               f"equivalences, {report['distinct_statements']} distinct statements certified by Lean{probes}")


def _spec(options: dict) -> DatasetSpec:
    """The dataset the chain options describe; a UsageError for a combination the spec refuses."""
    try:
        return DatasetSpec(
            domain=Domain(options["atoms"], options["tier"], options["max_size"]), chains=options["chains"],
            length=options["length"], partners=options["partners"],
            test_lengths=options["test_lengths"] or (PROBE_TEST_LENGTHS if options["probes"] else DEFAULT_TEST_LENGTHS),
            test_chains=options["test_chains"] or 512, seed=options["seed"], probes=options["probes"],
            probe_chains=options["probe_chains"], start_walk=options["start_walk"],
            tier2_weight=options["tier2_weight"], starts=options["starts"], holdout=options["hold_out"],
            corrupt=options["corrupt"])
    except ValueError as e:
        raise click.UsageError(str(e)) from None


def _build(options: dict, bridge: AskConfig) -> None:
    """``certify``: build the dataset the options describe and show its manifest's figures."""
    bars = PhaseBars()
    with user_errors(CertificationFailed, cleanup=bars.close,
                     interrupted="interrupted; certificates committed so far are kept in the store"):
        spec = _spec(options)
        out = options["out"] or Path("data") / f"tier{options['tier']}-a{options['atoms']}"
        try:
            manifest = certify_dataset(spec, out, options["store"] or default_store(), bridge, bars, options["force"])
        except EnumerationIncomplete as e:  # raised before anything is written
            raise click.ClickException(f"--starts reachable: {e}") from None
        except HoldOutRefused as e:  # raised before anything is written, or while sampling
            bars.close()
            raise click.UsageError(f"--hold-out {options['hold_out']}: {e}") from None
        bars.close()
    click.echo(json.dumps(_shown(manifest), indent=2))
    click.echo(f"wrote {out} (Lean {manifest['lean']['version']}, {manifest['lean']['path']})")


def _program_lengths(text: str) -> tuple[int, int]:
    low, colon, high = text.partition(":")
    if not (colon and low.strip().isdigit() and high.strip().isdigit()):
        raise click.BadParameter(f"{text!r} is not MIN:MAX", param_hint="--program-lengths")
    return int(low), int(high)


def programs_spec(options: dict, given: set[str] = frozenset()) -> ProgramsSpec:
    """The programs dataset the options describe: a ``--preset``'s sizes where it names one, except
    for the options in ``given`` (those the user typed), which override it; a UsageError for a
    combination the spec refuses."""
    options = dict(options)
    for name, value in PROGRAM_PRESETS.get(options.get("preset") or "", {}).items():
        if name not in given:
            options[name] = value
    low, high = _program_lengths(options["program_lengths"])
    try:
        return ProgramsSpec(machine=Machine(int(options["values"])), chains=options["chains"], min_length=low,
                            max_length=high, partners=options["partners"],
                            test_lengths=options["test_lengths"] or PROGRAM_TEST_LENGTHS,
                            test_chains=options["test_chains"] or ProgramsSpec().test_chains, seed=options["seed"],
                            holdout=options["hold_out"])
    except ValueError as e:
        raise click.UsageError(str(e)) from None


def _build_programs(options: dict, bridge: AskConfig, given: set[str]) -> None:
    """``certify --domain programs``: build the programs dataset the options describe."""
    bars = PhaseBars()
    spec = programs_spec(options, given)
    preset = f"-{options['preset']}" if options["preset"] else ""
    out = options["out"] or Path("data") / f"programs-{spec.machine.name}{preset}"
    with user_errors(CertificationFailed, cleanup=bars.close,
                     interrupted="interrupted; certificates committed so far are kept in the store"):
        try:
            manifest = certify_programs(spec, out, options["store"] or default_store(), bridge, bars, options["force"])
        except HoldOutRefused as e:
            bars.close()
            raise click.UsageError(f"--hold-out {options['hold_out']}: {e}") from None
        bars.close()
    shown = {k: manifest[k] for k in ("domain", "chains", "steps", "distinct_traces", "equivalences",
                                      "distinct_equivalences", "kernel_checked", "certified", "failed", "floor",
                                      "seconds")}
    click.echo(json.dumps(shown, indent=2))
    click.echo(f"wrote {out} (Lean {manifest['lean']['version']}, {manifest['lean']['path']})")


def _build_imported(options: dict, bridge: AskConfig, out: Path | None = None) -> None:
    """``certify --domain package.module:Name``: build the dataset of a domain of one's own (or of a
    shipped domain on the same route; ``out``: where it goes unless --out says)."""
    try:
        name = own_domain(options["domain"]).name
        spec = DomainSpec(domain=options["domain"], chains=options["chains"], length=options["length"],
                          partners=options["partners"], test_lengths=options["test_lengths"] or IMPORTED_TEST_LENGTHS,
                          test_chains=options["test_chains"] or IMPORTED_TEST_CHAINS, seed=options["seed"],
                          holdout=options["hold_out"])
    except (DomainImportError, ValueError) as e:
        raise click.UsageError(f"--domain {options['domain']}: {e}" if isinstance(e, DomainImportError) else str(e)
                               ) from None
    out = options["out"] or out or Path("data") / name
    bars = PhaseBars()
    with user_errors(CertificationFailed, cleanup=bars.close,
                     interrupted="interrupted; certificates committed so far are kept in the store"):
        try:
            manifest = certify_domain(spec, out, options["store"] or default_store(), bridge, bars, options["force"])
        except HoldOutRefused as e:
            bars.close()
            raise click.UsageError(f"--hold-out {options['hold_out']}: {e}") from None
        bars.close()
    shown = {k: manifest[k] for k in ("domain", "chains", "steps", "distinct_steps", "equivalences",
                                      "distinct_equivalences", "kernel_checked", "certified", "failed", "holdout",
                                      "seconds") if k in manifest}
    click.echo(json.dumps(shown, indent=2))
    click.echo(f"wrote {out} (Lean {manifest['lean']['version']}, {manifest['lean']['path']})")


def _verify_imported(directory: Path, bridge: AskConfig) -> None:
    """``certify --verify`` of a dataset of a domain of one's own."""
    bars = PhaseBars()
    with user_errors(CertificationFailed, cleanup=bars.close,
                     interrupted="interrupted; certificates committed so far are kept in the store"):
        report = verify_domain(directory, bridge, bars)
        bars.close()
    click.echo(json.dumps(report, indent=2))
    click.echo(f"verified {directory}: {report['steps']} steps and {report['equivalences']} equivalences, "
               f"{report['distinct_statements']} distinct theorems certified by Lean")


def _verify_programs(directory: Path, bridge: AskConfig) -> None:
    """``certify --verify`` of a programs dataset."""
    bars = PhaseBars()
    with user_errors(CertificationFailed, cleanup=bars.close,
                     interrupted="interrupted; certificates committed so far are kept in the store"):
        report = verify_programs(directory, bridge, bars)
        bars.close()
    click.echo(json.dumps(report, indent=2))
    click.echo(f"verified {directory}: {report['steps']} statements and {report['equivalences']} equivalences, "
               f"{report['distinct_statements']} distinct theorems certified by Lean")


def _shown(manifest: dict) -> dict:
    """The manifest's figures a person reads after a build."""
    shown = {k: manifest[k] for k in ("atoms", "tier", "max_size", "trees", "classes", "steps", "distinct_steps",
                                      "equivalences", "kernel_checked", "certified", "failed", "seconds")}
    if "probes" in manifest:
        shown["probes"] = {k: manifest["probes"][k] for k in ("probes", "distinct_probes", "kernel_checked",
                                                              "accepted_fraction", "referee_disagreements")}
    if "holdout" in manifest:
        shown["holdout"] = {k: v for k, v in manifest["holdout"].items() if k != "protocol"}
    if "corrupt_partners" in manifest:
        shown["corrupt_partners"] = {k: manifest["corrupt_partners"][k] for k in ("kind", "share", "replaced",
                                                                                  "partners")}
    return shown


def _mathlib(benchmark: Path, dirs: str | None, split: str, max_theorems: int | None, dry_run: bool,
             dojo_timeout: int, repo: str | None, seed: int, out: Path | None) -> None:
    chosen = tuple(d.strip() for d in dirs.split(",") if d.strip()) if dirs is not None else SEED_DIRS
    try:
        spec = SelectionSpec(dirs=chosen, max_theorems=max_theorems, seed=seed)
    except ValueError as e:
        raise click.UsageError(str(e)) from None
    out = out or Path("data") / "mathlib-probes"
    bars = PhaseBars()
    try:
        report = certify_mathlib(benchmark, split, spec, out, ReplayConfig(timeout_s=dojo_timeout, repo=repo),
                                 dry_run=dry_run, progress=bars)
    except (BenchmarkError, ReplayUnavailable, DatasetError) as e:
        bars.close()
        raise click.ClickException(str(e)) from None
    except KeyboardInterrupt:
        bars.close()
        raise click.ClickException("interrupted; no dataset was written" + (
            "" if dry_run else ", and the replays finished so far are kept in the journal beside --out")) from None
    bars.close()
    click.echo(json.dumps(report, indent=2))
    if dry_run:
        probes = report["probes"]
        click.echo(f"dry run: {probes['train']['proofs']} training and {probes['test']['proofs']} test proofs "
                   f"({report['selection']['novel_premise']} with a novel premise), "
                   f"{probes['train']['probes'] + probes['test']['probes']} probes; nothing replayed or written")
    else:
        click.echo(f"wrote {out}: {report['records']['train']} training and {report['records']['test']} test proofs "
                   f"confirmed by Lean ({report['novel_premise_confirmed']} novel), "
                   f"{sum(report['probes']['by_kind'].values())} probe verdicts")


if __name__ == "__main__":
    main()

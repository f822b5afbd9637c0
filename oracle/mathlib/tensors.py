"""A Mathlib probe dataset (``certify --mathlib``, format ``mathlib-probes/1``) as the oracle's
tensors, the same ``OracleData`` a chain dataset gives, so that every arm, objective and metric
reads either.

A proof plays a chain's part: its items are the initial proof state (the record's ``start``)
read once, then its gold tactics, one per step; at step t its probes are the tactics tried on
the state before tactic t, each with Lean's verdict class (``accepted``, ``complete`` or
``rejected:<class>``; the goals left after an ``accepted`` are not a target). Every text
becomes token ids through ``oracle.mathlib.tokens`` with a vocabulary built from the training
split alone. What a chain dataset has and a proof has not: certified partners (equivalent
histories, for the invariance term) and the proof state after each step (for the arm handed
the true state); ``oracle.train`` refuses those arms and objectives here.

Test proofs are split by their length (8 to 15 tactics in the seed's selection), each length a
split, and carry ``novel`` (N,): the record's ``novel_premise`` mark. Tokenizing a pilot's few
thousand proofs takes seconds, so nothing is cached.
"""
from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import asdict
from pathlib import Path

import torch

from chains.manifest import MATHLIB_FORMAT, DatasetError, check_count, manifest_path
from chains.writer import file_sha256
from oracle.mathlib.tokens import UNK, TextVocab, TokenizerSpec, split
from oracle.tensors import HARD_KIND, OracleData, ordered_kinds, pack_probe_rows

SPLITS = ("train.jsonl", "test.jsonl")


def _classes(manifest: dict, where: str) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(verdict classes, probe kinds) from the manifest's probe counts."""
    probes = manifest.get("probes")
    by_verdict = probes.get("by_verdict") if isinstance(probes, dict) else None
    by_kind = probes.get("by_kind") if isinstance(probes, dict) else None
    if not (isinstance(by_verdict, dict) and by_verdict and isinstance(by_kind, dict) and by_kind):
        raise DatasetError(f"{where}: no probe counts (probes.by_verdict, probes.by_kind); "
                           "make the dataset with certify --mathlib")
    kinds = ordered_kinds(by_kind)
    if HARD_KIND not in kinds:
        raise DatasetError(f"{where}: the probe counts have no {HARD_KIND!r} probes (the hard class)")
    return tuple(by_verdict), kinds


def _check_files(directory: Path, manifest: dict, where: str) -> None:
    files = manifest.get("files")
    for name in SPLITS:
        meta = files.get(name) if isinstance(files, dict) else None
        if not isinstance(meta, dict) or not isinstance(meta.get("sha256"), str):
            raise DatasetError(f"{where}: lists no {name} with its sha256")
        path = directory / name
        if not path.is_file():
            raise DatasetError(f"{path}: listed in the manifest but missing")
        if file_sha256(path) != meta["sha256"]:
            raise DatasetError(f"{path}: contents differ from the hash in the manifest (edited after the replay); "
                               "re-run certify --mathlib")


def _lines(path: Path) -> Iterator[tuple[int, dict]]:
    with open(path, "rb") as handle:
        for n, raw in enumerate(handle, 1):
            try:
                record = json.loads(raw.decode("utf-8"))
            except UnicodeDecodeError as e:
                raise DatasetError(f"{path} line {n}: not UTF-8 text (byte {e.start + 1})") from None
            except (ValueError, RecursionError) as e:  # RecursionError: brackets nested past Python's stack
                raise DatasetError(f"{path} line {n}: not JSON ({str(e).splitlines()[0][:120]})") from None
            if not isinstance(record, dict):
                raise DatasetError(f"{path} line {n}: a record must be a JSON object")
            yield n, record


def _is_text_list(value) -> bool:
    return isinstance(value, list) and bool(value) and all(isinstance(x, str) and x.strip() for x in value)


def check_record(record: dict, kinds: tuple[str, ...], verdicts: tuple[str, ...], where: str) -> None:
    """DatasetError naming ``where`` (file, line, record) unless the record is a proof with a
    probe list per step in the shared probe format."""
    if not (isinstance(record.get("start"), str) and record["start"].strip()):
        raise DatasetError(f"{where}: no start (the initial proof state)")
    events = record.get("events")
    if not _is_text_list(events):
        raise DatasetError(f"{where}: events must be a non-empty list of tactic texts")
    probes = record.get("probes")
    if not isinstance(probes, list) or len(probes) != len(events):
        raise DatasetError(f"{where}: probes must list one entry per step ({len(events)}), found "
                           f"{len(probes) if isinstance(probes, list) else type(probes).__name__}")
    if not isinstance(record.get("novel_premise", False), bool):
        raise DatasetError(f"{where}: novel_premise must be true or false")
    for t, step in enumerate(probes):
        if not isinstance(step, list):
            raise DatasetError(f"{where} step {t}: the probes of a step must be a list")
        for probe in step:
            if not (isinstance(probe, list) and len(probe) in (3, 4) and _is_text_list(probe[:3])):
                raise DatasetError(f"{where} step {t}: a probe must be [kind, tactic, verdict] (+ goals left), "
                                   f"got {probe!r:.80}")
            kind, text, verdict = probe[:3]
            if kind not in kinds or verdict not in verdicts:
                raise DatasetError(f"{where} step {t}: kind {kind!r} or verdict {verdict!r} is not in the "
                                   "manifest's probe counts")
            if len(probe) == 4 and not (verdict == "accepted" and isinstance(probe[3], int) and probe[3] >= 1):
                raise DatasetError(f"{where} step {t}: goals left ({probe[3]!r}) go only with an accepted verdict")
            if kind == "gold" and text != events[t]:
                raise DatasetError(f"{where} step {t}: the gold probe {text!r:.60} is not the proof's tactic "
                                   f"{events[t]!r:.60}")


def read_records(directory: Path, name: str, kinds: tuple[str, ...], verdicts: tuple[str, ...],
                 expected: int | None) -> list[dict]:
    """The split's records, each checked; DatasetError when there are none or not ``expected``."""
    path = directory / name
    records = []
    for n, record in _lines(path):
        check_record(record, kinds, verdicts, f"{path} line {n} (record {str(record.get('id'))[:40]})")
        records.append(record)
    if isinstance(expected, int):
        check_count(path, len(records), expected, "record")
    if not records:
        raise DatasetError(f"{path}: no proofs")
    return records


class _TextBuilder:
    """Interns proof states, tactics and probes as token rows while the records are read."""

    def __init__(self, vocab: TextVocab, spec: TokenizerSpec, verdicts: tuple[str, ...], kinds: tuple[str, ...]):
        self.vocab, self.spec = vocab, spec
        self.verdict_id = {v: i for i, v in enumerate(verdicts)}
        self.kind_id = {k: i for i, k in enumerate(kinds)}
        self.items: dict[tuple[str, str], int] = {}
        self.item_rows: list[list[int]] = [[]]  # row 0: padding
        self.probes: dict[str, int] = {"": 0}
        self.probe_rows: list[list[int]] = [[]]
        self.truncated = {"states": 0, "tactics": 0}
        self.tokens = {"test": 0, "test_unknown": 0}

    def _encode(self, text: str, state: bool) -> list[int]:
        """A state keeps its last tokens (its goal), a tactic its first; each distinct text counts once."""
        limit = self.spec.state_tokens if state else self.spec.tactic_tokens
        toks = split(text)
        self.truncated["states" if state else "tactics"] += len(toks) > limit
        return self.vocab.ids(toks, limit, keep="tail" if state else "head")

    def item(self, text: str, state: bool) -> int:
        key = ("state" if state else "tactic", text)
        if key not in self.items:
            self.items[key] = len(self.item_rows)
            self.item_rows.append(self._encode(text, state))
        return self.items[key]

    def probe(self, text: str) -> int:
        if text not in self.probes:
            self.probes[text] = len(self.probe_rows)
            self.probe_rows.append(self._encode(text, state=False))
        return self.probes[text]

    def proof(self, record: dict, test: bool) -> dict:
        items = [self.item(record["start"], state=True)] + [self.item(e, state=False) for e in record["events"]]
        rows = [[(self.probe(p[1]), self.verdict_id[p[2]], self.kind_id[p[0]]) for p in step]
                for step in record["probes"]]
        if test:
            used = [self.item_rows[i] for i in items] + [self.probe_rows[q] for row in rows for q, _, _ in row]
            self.tokens["test"] += sum(len(r) for r in used)
            self.tokens["test_unknown"] += sum(r.count(self.vocab.index[UNK]) for r in used)
        return {"items": items, "rows": rows, "novel": bool(record.get("novel_premise", False))}


def _pack(proofs: list[dict], steps: int, with_novel: bool) -> dict[str, torch.Tensor]:
    """items (N, T) int32 (0-padded after a proof's last tactic), partner_items (N, 0, T) (no
    partners), truth_items (N, S) zeros (no true states), probes / verdicts / kinds (N, S, P);
    on a test split also novel (N,) bool."""
    items = torch.zeros(len(proofs), steps + 1, dtype=torch.int32)
    for n, proof in enumerate(proofs):
        items[n, : len(proof["items"])] = torch.tensor(proof["items"], dtype=torch.int32)
    out = {"items": items, "partner_items": torch.zeros(len(proofs), 0, steps + 1, dtype=torch.int32),
           "truth_items": torch.zeros(len(proofs), steps, dtype=torch.int32),
           **pack_probe_rows([p["rows"] for p in proofs], steps)}
    if with_novel:
        out["novel"] = torch.tensor([p["novel"] for p in proofs], dtype=torch.bool)
    return out


def _table(rows: list[list[int]], width: int) -> torch.Tensor:
    out = torch.zeros(len(rows), width, dtype=torch.long)
    for i, row in enumerate(rows):
        out[i, : len(row)] = torch.tensor(row, dtype=torch.long)
    return out


def identity_of(directory: Path, manifest: dict, tokens: dict) -> dict:
    files = manifest["files"]
    content = {"format": MATHLIB_FORMAT, "seed": manifest.get("seed"),
               "files": {name: files[name]["sha256"] for name in SPLITS}}
    benchmark = manifest.get("benchmark") if isinstance(manifest.get("benchmark"), dict) else {}
    metadata = benchmark.get("metadata") if isinstance(benchmark.get("metadata"), dict) else {}
    return {"dataset": {"path": str(directory), "format": MATHLIB_FORMAT,
                        "dataset_id": hashlib.sha256(json.dumps(content, sort_keys=True).encode()).hexdigest(),
                        "seed": manifest.get("seed"), "records": manifest.get("records"),
                        "novel_premise_confirmed": manifest.get("novel_premise_confirmed"), "tokens": tokens},
            "lean": {"from_repo": metadata.get("from_repo"), "lean_dojo": manifest.get("lean_dojo")}}


def load_mathlib_probes(directory: Path | str, manifest: dict, spec: TokenizerSpec = TokenizerSpec()
                        ) -> OracleData:
    """The dataset's proofs as tensors; DatasetError (one line, naming the file and record) on
    anything the format does not allow."""
    directory = Path(directory)
    where = str(manifest_path(directory))
    verdicts, kinds = _classes(manifest, where)
    _check_files(directory, manifest, where)
    records = {name: read_records(directory, name, kinds, verdicts, manifest["files"][name].get("records"))
               for name in SPLITS}
    train = records["train.jsonl"]
    vocab = TextVocab.build((text for r in train for text in
                             [r["start"], *r["events"], *(p[1] for step in r["probes"] for p in step)]),
                            spec.min_count)
    builder = _TextBuilder(vocab, spec, verdicts, kinds)
    train_proofs = [builder.proof(r, test=False) for r in train]
    by_length: dict[int, list[dict]] = defaultdict(list)
    for r in records["test.jsonl"]:
        by_length[len(r["events"])].append(builder.proof(r, test=True))
    width = max(len(row) for row in builder.item_rows + builder.probe_rows)
    tokens = {**asdict(spec), "vocab_size": vocab.size, "truncated": builder.truncated,
              "test_unknown_fraction": (builder.tokens["test_unknown"] / builder.tokens["test"]
                                        if builder.tokens["test"] else None)}
    return OracleData(
        tracker=None, item_tokens=_table(builder.item_rows, width),
        probe_tokens=_table(builder.probe_rows, max(len(row) for row in builder.probe_rows)),
        probe_events=tuple(builder.probes), verdicts=verdicts, kinds=kinds,
        train=_pack(train_proofs, max(len(p["rows"]) for p in train_proofs), with_novel=False),
        tests={length: _pack(proofs, length, with_novel=True) for length, proofs in sorted(by_length.items())},
        probe_chains=len(records["test.jsonl"]), vocab_size=vocab.size,
        identity=identity_of(directory, manifest, tokens),
        encoding={"text_vocab": list(vocab.tokens), "tokenizer": asdict(spec)})

"""One split of a certified dataset as a ``torch.utils.data.Dataset``: a chain an item, its
tokens as the trackers read them, the state after every step and its certified partners.

The tokens and item ids are ``tracker.data.load_dataset``'s (the same vocabulary, the same
cache), so what a ``DataLoader`` over it yields is what training reads; the states after every
step are replayed from the split's JSON Lines when an item is read, by the domain the manifest
names (``chains.domains.domain_of_manifest``): its reader parses the line, its ``apply`` moves the
state, its ``state_classes`` are the readout's targets. Nothing here knows which domain it reads.
"""
from __future__ import annotations

import re
from pathlib import Path

import torch
from torch.utils.data import Dataset

from chains.domains import domain_of_manifest
from chains.manifest import DatasetError, manifest_path, read_manifest
from tracker.data import TrackerData, load_dataset


def split_file(split: str | int) -> str:
    """The file of a split: ``"train"`` is ``train.jsonl``; ``8`` or ``"test-8"`` is ``test-8.jsonl``."""
    if isinstance(split, int) and not isinstance(split, bool):
        return f"test-{split}.jsonl"
    if isinstance(split, str) and (split == "train" or re.fullmatch(r"test-[1-9][0-9]*", split)):
        return f"{split}.jsonl"
    raise ValueError(f"split {split!r:.40} is neither 'train', 'test-<length>' nor a test length")


class ChainDataset(Dataset):
    """The chains of one split (``"train"``, ``"test-<L>"`` or the length ``L``) of the certified
    dataset in ``directory``: rewrite chains, or programs. Item ``i`` is chain ``i`` of the split's
    file, a dict of tensors (T = the split's longest history + 1, the start being step 0; E tokens
    per item, P per state, K partners):

    - ``items`` (T,): the item ids the trackers read (``data.item_tokens`` rows; 0 is padding)
    - ``tokens`` (T, E): those items' token ids: the start tree's Polish tokens, then per event the
      rule's token and one token per bit of its path (programs: the start state's values, then per
      statement its target, operation and operands), PAD (0) after
    - ``trees`` (T, P): the state after every step (row 0: the start) as output token ids, PAD rows
      after its end: the cross-entropy target of every step (a tree, PAD after its end; programs:
      each variable's value c as the output id c + 1)
    - ``partner_items`` (K, T), ``partner_tokens`` (K, T, E), ``partner_trees`` (K, T, P): the
      certified partners, each padded after its own end
    - ``partner_lengths`` (K,): each partner's steps, its start included

    Every rewrite chain of a split has the same length, and every chain the same number of
    partners, so torch's default collation stacks items into batches (programs of different
    lengths are padded to the split's longest history). ``data`` is a ``load_dataset`` result of
    the same directory to share (one is loaded otherwise, which checks the dataset's certification
    and writes or reads its cache)."""

    def __init__(self, directory: Path | str, split: str | int = "train", data: TrackerData | None = None) -> None:
        self.directory = Path(directory)
        self.file = split_file(split)
        self.data = load_dataset(self.directory) if data is None else data
        rows = self.data.train if self.file == "train.jsonl" else self.data.tests.get(int(self.file[5:-6]))
        if rows is None:
            lengths = ", ".join(f"test-{n}" for n in sorted(self.data.tests))
            raise DatasetError(f"{self.directory}: no split {self.file[:-6]} (it has train, {lengths})")
        self.chain_items = rows["chain_items"].long()  # (N, T)
        self.partner_items = rows["partner_items"].long()  # (N, K, T)
        self.domain = domain_of_manifest(read_manifest(self.directory), str(manifest_path(self.directory)))
        # byte offset of every line, so that an item parses one line and a DataLoader's workers
        # receive offsets, not parsed chains
        self.offsets, at = [], 0
        with open(self.directory / self.file, "rb") as handle:
            for raw in handle:
                self.offsets.append(at)
                at += len(raw)
        if len(self.offsets) != len(self.chain_items):
            raise DatasetError(f"{self.directory / self.file}: {len(self.offsets)} lines, the loaded dataset "
                               f"{len(self.chain_items)} chains")

    def __len__(self) -> int:
        return len(self.offsets)

    def record(self, index: int):
        """Chain ``index`` of the split as its domain's reader parses it (``parse_record``): on
        rewrite chains a ``ChainRecord`` of ``chains.rewrite.dataset`` (start, events, end,
        certificate ids, partners, probes), on programs a ``ProgramRecord`` of
        ``chains.programs.files`` (id, history, partners)."""
        with open(self.directory / self.file, "rb") as handle:
            handle.seek(self.offsets[index])
            line = handle.readline().decode("utf-8")
        return self.domain.parse_record(line, f"{self.directory / self.file} line {index + 1}")

    def tree_row(self, state) -> torch.Tensor:
        """(P,) the output token ids of a state (its readout's classes as the vocabulary numbers
        them): a tree's tokens, PAD after its end; a program state's values, value c as c + 1."""
        ids = self.data.vocab.output_ids(self.domain.state_classes(state))
        if any(ids[self.data.tree_len:]):
            raise ValueError(f"a state of {len(ids)} readout positions in rows of {self.data.tree_len}")
        row = torch.zeros(self.data.tree_len, dtype=torch.long)
        row[:min(len(ids), self.data.tree_len)] = torch.tensor(ids[:self.data.tree_len])
        return row

    def tree_text(self, row: torch.Tensor) -> str:
        """The text of a (P,) row of output token ids (the inverse of ``tree_row``): a tree in
        Polish notation, or a program state's eight hexadecimal digits; "" for a row of padding."""
        ids = row.tolist()
        if not any(ids):
            return ""
        return self.domain.state_text(self.domain.state_of_classes(self.data.vocab.classes_of(ids)))

    def _trees(self, history: tuple, steps: int) -> torch.Tensor:
        """(steps, P): the state after every step of ``history`` (start, events), PAD rows after its end."""
        out = torch.zeros(steps, self.data.tree_len, dtype=torch.long)
        state, events = history
        out[0] = self.tree_row(state)
        for t, event in enumerate(events, 1):
            state = self.domain.apply(state, event)
            out[t] = self.tree_row(state)
        return out

    def __getitem__(self, index: int) -> dict[str, torch.Tensor]:
        if not -len(self) <= index < len(self):
            raise IndexError(f"chain {index} of a split of {len(self)}")
        index %= len(self)
        history, mates = self.domain.record_histories(self.record(index))
        items, partners = self.chain_items[index], self.partner_items[index]  # (T,), (K, T)
        steps = items.shape[0]
        item_tokens = self.data.item_tokens
        partner_trees = torch.zeros(partners.shape[0], steps, self.data.tree_len, dtype=torch.long)  # (K, T, P)
        for p, mate in enumerate(mates):
            partner_trees[p] = self._trees(mate, steps)
        return {"items": items, "tokens": item_tokens[items], "trees": self._trees(history, steps),
                "partner_items": partners, "partner_tokens": item_tokens[partners], "partner_trees": partner_trees,
                "partner_lengths": (partners != 0).sum(1)}

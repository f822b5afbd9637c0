"""tracker.dataset.ChainDataset: a certified split as a torch Dataset gives the tokens the
trackers read, the tree after every step and the partners, batches through a DataLoader; the
training cache lies where formats.md says; and the same files read with Hugging Face
``datasets`` where it is installed."""
from __future__ import annotations

import json

import pytest
import torch
from torch.utils.data import DataLoader

from chains.manifest import DatasetError
from chains.rewrite.rules import Event, apply
from chains.rewrite.trees import parse_polish, polish
from tracker.data import cache_path, load_dataset
from tracker.dataset import ChainDataset

ATOMS = ("a", "b", "c", "d")


@pytest.fixture(scope="module")
def tiny(certify_tiny):
    return certify_tiny(chains=12, test_chains=4)


def lines(directory, name):
    return [json.loads(line) for line in (directory / name).read_text().splitlines()]


def replayed(start: str, events: list[str]) -> list[str]:
    """The tree after every step of a history, by the rules (the start first)."""
    tree = parse_polish(start, ATOMS)
    out = [start]
    for event in events:
        tree = apply(tree, Event.parse(event))
        out.append(polish(tree))
    return out


@pytest.mark.parametrize("split", ["train", "test-8", 16])
def test_an_item_is_the_chain_as_the_trackers_read_it(tiny, split):
    dataset = ChainDataset(tiny, split)
    name = "train.jsonl" if split == "train" else f"test-{str(split).removeprefix('test-')}.jsonl"
    chains = lines(tiny, name)
    assert len(dataset) == len(chains)
    names = dataset.data.vocab.tokens
    for i in (0, len(chains) - 1):
        item, chain = dataset[i], chains[i]
        steps = len(chain["events"]) + 1
        assert item["items"].shape == (steps,) and item["tokens"].shape == (steps, dataset.data.item_len)
        read = [" ".join(names[t] for t in row if t != 0) for row in item["tokens"].tolist()]
        assert read[0] == chain["start"]
        assert read[1:] == [" ".join([e.split("@")[0], *e.split("@")[1]]) for e in chain["events"]]
        assert [dataset.tree_text(row) for row in item["trees"]] == replayed(chain["start"], chain["events"])
        assert dataset.tree_text(item["trees"][-1]) == chain["end"]
        k = len(chain["partners"])
        assert item["partner_items"].shape[0] == item["partner_trees"].shape[0] == k > 0
        for p, mate in enumerate(chain["partners"]):
            length = len(mate["events"]) + 1
            assert int(item["partner_lengths"][p]) == length
            trees = [dataset.tree_text(row) for row in item["partner_trees"][p]]
            assert trees[:length] == replayed(mate["start"], mate["events"]) and set(trees[length:]) <= {""}
            assert trees[length - 1] == chain["end"]  # certified equivalent: the same end tree
            assert not item["partner_tokens"][p, length:].any()


def test_the_items_and_targets_are_training_s(tiny):
    data = load_dataset(tiny)
    dataset = ChainDataset(tiny, data=data)
    assert dataset.data is data
    for i in range(len(dataset)):
        item = dataset[i]
        assert torch.equal(item["items"], data.train["chain_items"][i].long())
        assert torch.equal(item["tokens"], data.item_tokens[data.train["chain_items"][i].long()])
        assert torch.equal(item["trees"], data.tree_tokens[data.train["chain_trees"][i].long()])
        assert torch.equal(item["partner_items"], data.train["partner_items"][i].long())


def test_a_data_loader_batches_it(tiny):
    dataset = ChainDataset(tiny, "test-16")
    batches = list(DataLoader(dataset, batch_size=3))
    assert [b["items"].shape[0] for b in batches] == [3, 1]
    first = batches[0]
    assert first["tokens"].shape == (3, 17, dataset.data.item_len)
    assert first["trees"].shape == (3, 17, dataset.data.tree_len)
    assert torch.equal(first["trees"][2], dataset[2]["trees"])
    assert torch.equal(dataset[-1]["items"], dataset[len(dataset) - 1]["items"])
    with pytest.raises(IndexError):
        dataset[len(dataset)]


def test_a_split_it_lacks_is_refused_in_one_line(tiny):
    with pytest.raises(DatasetError, match=r"no split test-64 \(it has train, test-8, test-16\)"):
        ChainDataset(tiny, 64)
    with pytest.raises(ValueError, match="neither 'train'"):
        ChainDataset(tiny, "validation")


def test_the_training_cache_lies_where_formats_md_says(tiny):
    load_dataset(tiny)
    cached = cache_path(tiny)
    assert cached.is_file() and cached.parent == tiny / ".cache"
    assert cached.name.startswith("tracker-") and cached.suffix == ".pt"


def test_hugging_face_datasets_reads_the_same_lines(tiny):
    datasets = pytest.importorskip("datasets")
    read = datasets.load_dataset("json", data_files={"train": str(tiny / "train.jsonl"),
                                                     "test_8": str(tiny / "test-8.jsonl")},
                                 cache_dir=str(tiny.parent / "hf-cache"))
    chains = lines(tiny, "train.jsonl")
    assert read["train"].num_rows == len(chains)
    assert read["train"][0]["start"] == chains[0]["start"] and read["train"][0]["events"] == chains[0]["events"]
    assert read["test_8"][0]["partners"][0]["end"] == lines(tiny, "test-8.jsonl")[0]["end"]

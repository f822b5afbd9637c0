"""The evaluation beyond training (``tracker.evaluate.beyond_training``): on held-out datasets
certified here, a stand-in tracker that replays the rules is right everywhere, and one that skips
the held-out events is wrong exactly from their first occurrence on; the chains whose end tree
training never visits are counted as the manifest counts them; tier 2 is split by end-tree size."""
from __future__ import annotations

import json

import pytest
import torch
import torch.nn as nn

from chains.holdout import HoldOut
from chains.rewrite.dataset import DatasetSpec
from chains.rewrite.rules import Event, apply
from chains.rewrite.space import Domain
from chains.rewrite.trees import parse_tokens, tokens
from leanbridge.certify import certify_dataset
from tracker.data import first_heldout, held_out, load_dataset
from tracker.evaluate import EvalConfig, evaluate
from tracker.models import ModelConfig


@pytest.fixture(scope="module")
def certified(tmp_path_factory):
    root = tmp_path_factory.mktemp("beyond")

    def make(holdout: HoldOut, domain: Domain = Domain()) -> object:
        out = root / f"{holdout.kind}-{domain.tier}"
        if not out.exists():
            spec = DatasetSpec(domain=domain, chains=40, test_lengths=(8, 16), test_chains=12, holdout=holdout)
            certify_dataset(spec, out, root / "store.sqlite")
        return out
    return make


class Replayer(nn.Module):
    """Reads a history with Python's rules and 'decodes' the true tree, one-hot by readout position;
    with ``skip``, it ignores those events (a tracker blind to them)."""

    def __init__(self, data, skip: frozenset[str] = frozenset()) -> None:
        super().__init__()
        self.config = ModelConfig()
        self.anchor = nn.Parameter(torch.zeros(1))  # where the evaluation finds the device
        self.data, self.skip = data, skip
        self.names = data.vocab.tokens
        self.index = {tuple(row): r for r, row in enumerate(data.tree_tokens.tolist())}

    def final_view(self, items: torch.Tensor) -> torch.Tensor:
        atoms = self.data.vocab.atoms
        out = []
        for row in items.tolist():
            tree = None
            for item in row:
                if item == 0:
                    continue
                toks = [self.names[t] for t in self.data.item_tokens[item].tolist() if t != 0]
                if tree is None:
                    tree = parse_tokens(toks, atoms)
                    continue
                event = Event(toks[0], "".join(toks[1:]))
                if str(event) not in self.skip:
                    tree = apply(tree, event) or tree  # a blind tracker's tree may not take every event
            ids = [self.data.vocab.index()[t] for t in tokens(tree)]
            ids += [0] * (self.data.tree_len - len(ids))
            out.append(nn.functional.one_hot(torch.tensor(ids), self.data.vocab.n_out).float().flatten())
        return torch.stack(out)

    def readout(self, z: torch.Tensor) -> torch.Tensor:
        return z.unflatten(-1, (self.data.tree_len, self.data.vocab.n_out))


def test_first_heldout_on_hand_made_histories():
    comm, mul, assoc = Event("add_comm", ""), Event("mul_comm", "1"), Event("add_assoc", "")
    marks = held_out({"holdout": {"kind": "events", "events": ["mul_comm@1"]}})
    events = [comm, comm, mul, assoc, mul]  # items: the start tree, then these
    assert first_heldout(events, marks) == 3  # the item right after the first mul_comm@1
    assert first_heldout(events[:2], marks) is None
    pairs = held_out({"holdout": {"kind": "pairs", "pairs": [["mul_comm@1", "add_assoc@"]]}})
    assert first_heldout(events, pairs) == 4  # after the pair's second event
    assert first_heldout([assoc], pairs) is None  # a first event is no pair's second
    assert held_out({"holdout": {"kind": "states"}}) is None and held_out({}) is None


@pytest.mark.parametrize("kind", ["events", "pairs"])
def test_a_rule_replaying_tracker_is_right_and_one_blind_to_held_out_events_is_wrong_from_them(certified, kind):
    out = certified(HoldOut(kind, 2))
    data = load_dataset(out)
    held = json.loads((out / "manifest.json").read_text())["holdout"]
    right = evaluate(Replayer(data), data, EvalConfig(pair_lengths=(8,)))
    for length in ("8", "16"):
        assert right["exact"][length] == 1.0
        assert right["beyond"]["first_heldout"][length] == {"exact": 1.0, "chains": 12}
    if kind == "events":
        blind = evaluate(Replayer(data, frozenset(held["events"])), data, EvalConfig(pair_lengths=(8,)))
        # tier-1 events always change the tree: skipping one is wrong right after it
        assert blind["beyond"]["first_heldout"]["8"] == {"exact": 0.0, "chains": 12}


def test_unseen_end_trees_are_counted_as_the_manifest_counts_them(certified):
    out = certified(HoldOut("states"))
    data = load_dataset(out)
    held = json.loads((out / "manifest.json").read_text())["holdout"]
    report = evaluate(Replayer(data), data, EvalConfig(pair_lengths=(8,)))
    for length in ("8", "16"):
        unseen = held["unseen_end_chains"][f"test-{length}"]
        split = report["beyond"]["by_end_seen"].get(length)
        if unseen == 0:
            assert split is None
        else:
            assert split["unseen"] == {"exact": 1.0, "chains": unseen}
            assert split["seen"]["chains"] == 12 - unseen
        assert report["chains"][length] == 12


def test_tier2_is_split_by_end_tree_size(certified):
    out = certified(HoldOut("states"), Domain(4, 2))
    data = load_dataset(out)
    report = evaluate(Replayer(data), data, EvalConfig(pair_lengths=(8,)))
    sizes = report["beyond"]["by_end_size"]
    assert sizes, "tier-2 test chains end at trees of several sizes"
    for length, by_size in sizes.items():
        assert sum(v["chains"] for v in by_size.values()) == 12
        assert all(int(k) % 2 == 1 and v["exact"] == 1.0 for k, v in by_size.items())


def test_train_tracker_prints_the_figures_beyond_training(certified, tmp_path):
    """The command shows what training did not show beside exact: right just after the first
    held-out event, per length, as report.json has it."""
    from click.testing import CliRunner

    from tracker.cli import main as train_tracker

    out = certified(HoldOut("events", 2))
    result = CliRunner().invoke(train_tracker, ["--data", str(out), "--steps", "4", "--batch-chains", "4",
                                                "--width", "16", "--quiet", "--threads", "1", "--out",
                                                str(tmp_path / "run")])
    assert result.exit_code == 0, result.output
    report = json.loads((tmp_path / "run" / "report.json").read_text())
    printed = json.loads(result.output[: result.output.rindex("}") + 1])
    assert printed["beyond"]["first_heldout"] == report["beyond"]["first_heldout"]
    assert set(printed["beyond"]["first_heldout"]) == {"8", "16"}

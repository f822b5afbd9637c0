"""Readout layouts: the heap layout holds the same trees, and an event moves whole subtrees."""
import pytest
import torch
from hypothesis import given, settings, strategies as st

from chains.rewrite.rules import RULES, Event, apply
from chains.rewrite.trees import OPS, all_trees, atom_names, internal_positions, subtree, tokens
from tests.strategies import any_trees
from tracker.layouts import heap_index, heap_path, heap_positions, heap_tokens, heap_tree, laid_out, paths_of

ATOMS = "abcd"
IDS = {tok: i for i, tok in enumerate(("<pad>", *OPS, *ATOMS))}  # tracker.data.Vocab's output ids
NAMES = {i: tok for tok, i in IDS.items()}


def fixed_sources(rows_before, rows_after) -> dict[int, set[int]]:
    """Output position -> the input positions that hold its token in every pair of rows."""
    source: dict[int, set[int]] = {}
    for before, after in zip(rows_before, rows_after):
        for j, tok in enumerate(after):
            if tok:
                here = {i for i, t in enumerate(before) if t == tok}
                source[j] = source[j] & here if j in source else here
    return source


def polish_rows(trees, width):
    out = torch.zeros(len(trees), width, dtype=torch.long)
    for r, tree in enumerate(trees):
        ids = [IDS[t] for t in tokens(tree)]
        out[r, : len(ids)] = torch.tensor(ids)
    return out


def tree_at(row: list[int], position: int = 0):
    tok = NAMES[row[position]]
    if tok in OPS:
        return (tok, tree_at(row, 2 * position + 1), tree_at(row, 2 * position + 2))
    return tok


def node_paths(tree, prefix: str = ""):
    """The path of every node of ``tree``, leaves too."""
    yield prefix
    if not isinstance(tree, str):
        yield from node_paths(tree[1], prefix + "0")
        yield from node_paths(tree[2], prefix + "1")


def to_heap_and_back(tree, atoms, positions: int):
    """``tree``'s heap slots (every node where its path says) and the tree those slots hold."""
    slots = heap_tokens(tokens(tree), lambda t: t in OPS, positions, "")
    assert slots is not None and len(slots) == positions
    for path in node_paths(tree):
        node = subtree(tree, path)
        assert slots[heap_index(path)] == (node if isinstance(node, str) else node[0])
    assert sum(t != "" for t in slots) == len(tokens(tree))  # padding wherever the tree has no node
    return heap_tree(slots, "", lambda t: t in atoms)


@pytest.mark.parametrize("k", [2, 3, 4])
def test_every_tree_of_a_small_domain_goes_to_the_heap_and_back(k):
    atoms = atom_names(k)
    for tree in all_trees(atoms):  # 4, 48 and 960 trees; the deepest has k - 1 levels below its root
        assert to_heap_and_back(tree, atoms, 2 ** k - 1) == tree


@settings(max_examples=200, deadline=None)
@given(any_trees(ATOMS, max_leaves=8), st.integers(0, 3))
def test_a_tree_with_repeated_atoms_goes_to_the_heap_and_back(tree, room):
    depth = max(len(path) for path in node_paths(tree))
    assert to_heap_and_back(tree, ATOMS, 2 ** (depth + 1 + room) - 1) == tree
    # one level short of its deepest node, it does not fit
    assert heap_tokens(tokens(tree), lambda t: t in OPS, 2 ** depth - 1, "") is None


@settings(max_examples=200, deadline=None)
@given(any_trees(ATOMS, max_leaves=8), st.data())
def test_what_is_not_one_tree_is_refused_both_ways(tree, data):
    polish = tokens(tree)
    cut = data.draw(st.integers(0, len(polish) - 1))
    assert heap_tokens(polish[:cut], lambda t: t in OPS, 255, "") is None  # an operator short of operands
    assert heap_tokens(polish + ["a"], lambda t: t in OPS, 255, "") is None  # a token past the tree's end
    assert heap_tokens(polish + ["", "a"], lambda t: t in OPS, 255, "") is not None  # read up to the first pad
    slots = heap_tokens(polish, lambda t: t in OPS, 255, "")
    stray = data.draw(st.sampled_from([i for i, t in enumerate(slots) if t == ""]))
    assert heap_tree(slots[:stray] + ["a"] + slots[stray + 1:], "", lambda t: t in ATOMS) is None  # a token off it
    if not isinstance(tree, str):
        leaves = [heap_index(p) for p in node_paths(tree) if isinstance(subtree(tree, p), str)]
        leaf = data.draw(st.sampled_from(leaves))
        assert heap_tree(slots[:leaf] + [""] + slots[leaf + 1:], "", lambda t: t in ATOMS) is None  # a child missing


@given(st.integers(0, 2 ** 16))
def test_a_heap_position_and_its_path_are_one(i):
    path = heap_path(i)
    assert heap_index(path) == i and len(path) == (i + 1).bit_length() - 1  # its depth
    assert heap_index(path + "0") == 2 * i + 1 and heap_index(path + "1") == 2 * i + 2


def test_heap_positions_names_the_positions_a_tree_fills():
    assert heap_positions(tokens(("+", "a", ("*", "b", "c"))), lambda t: t in OPS) == {
        0: "+", 1: "a", 2: "*", 5: "b", 6: "c"}
    with pytest.raises(ValueError, match="after the tree's end"):
        heap_positions(["a", "b"], lambda t: t in OPS)
    with pytest.raises(ValueError, match="short of a tree"):
        heap_positions(["+", "a"], lambda t: t in OPS)


@settings(max_examples=60, deadline=None)
@given(st.lists(any_trees(ATOMS, max_leaves=8), min_size=1, max_size=6))
def test_the_heap_layout_holds_the_same_trees(trees):
    heap = paths_of(polish_rows(trees, 15))
    assert heap.shape[1] == 255  # room for a tree of 8 leaves at depth 7
    for tree, row in zip(trees, heap.tolist()):
        assert tree_at(row) == tree
        assert sum(tok != 0 for tok in row) == len(tokens(tree))  # PAD wherever the tree has no node


@settings(max_examples=60, deadline=None)
@given(st.lists(any_trees(ATOMS, max_leaves=8), min_size=2, max_size=12), st.sampled_from(sorted(RULES)))
def test_an_event_moves_the_same_positions_in_every_tree_it_applies_to(trees, rule):
    """In the heap layout each output position after an event reads one fixed position before it
    (or is PAD), whatever the tree: the event is one linear map of the position code."""
    for path in {p for t in trees for p in internal_positions(t)}:
        event = Event(rule, path)
        pairs = [(t, apply(t, event, 15)) for t in trees]  # within the tier-2 size bound
        pairs = [(a, b) for a, b in pairs if b is not None]
        if len(pairs) < 2:
            continue
        rows = paths_of(polish_rows([t for pair in pairs for t in pair], 15)).tolist()
        source = fixed_sources(rows[::2], rows[1::2])
        assert all(source.values()), (event, source)


def test_in_polish_order_the_same_event_moves_tokens_by_an_amount_that_depends_on_the_tree():
    event = Event("add_comm", "")
    trees = [("+", "a", ("*", "b", "c")), ("+", ("*", "a", "b"), "c")]
    after = [apply(t, event, None) for t in trees]
    polish = fixed_sources(polish_rows(trees, 5).tolist(), polish_rows(after, 5).tolist())
    assert not all(polish.values())
    heap = paths_of(polish_rows(trees + after, 5)).tolist()
    assert all(fixed_sources(heap[:2], heap[2:]).values())


def test_polish_is_the_identity_and_an_unknown_layout_is_refused():
    rows = polish_rows([("+", "a", "b")], 7)
    assert laid_out(rows, "polish") is rows
    with pytest.raises(ValueError, match="unknown layout"):
        laid_out(rows, "postfix")


# ---- the layout and the cross-entropy's positions in training -----------------------------------

@pytest.fixture(scope="module")
def tiny(tmp_path_factory):
    from chains.rewrite.dataset import DatasetSpec
    from chains.rewrite.space import Domain
    from leanbridge.certify import certify_dataset

    root = tmp_path_factory.mktemp("layouts")
    certify_dataset(DatasetSpec(domain=Domain(4, 2), chains=40, test_lengths=(8,), test_chains=8), root / "data",
                    root / "store.sqlite")
    return root / "data"


def test_a_paths_run_reads_the_heap_layout_and_skips_positions_off_the_tree(tiny):
    from tracker.data import load_dataset, sample_batch
    from tracker.train import IGNORED, TrainConfig, Trainer

    data = load_dataset(tiny)
    config = TrainConfig(data=str(tiny), width=16, steps=3, layout="paths", ce_positions="tree")
    trainer = Trainer(config, data)
    targets = trainer.data.tree_tokens  # (R, 255) for trees of up to 15 tokens
    assert targets.shape == (len(data.tree_tokens), 255) and trainer.model.tree_len == 255
    real = paths_of(data.tree_tokens)
    assert torch.equal(targets >= 0, real != 0) and torch.equal(targets[targets >= 0], real[real != 0])
    assert (targets[real == 0] == IGNORED).all()
    generator = torch.Generator().manual_seed(0)
    losses = trainer.losses(sample_batch(trainer.data, 4, generator), 0, generator)
    assert all(torch.isfinite(v) for v in losses.values())


def test_exactness_ignores_the_positions_a_run_does_not_read():
    from tracker.evaluate import right_trees

    class Fixed:  # a readout that predicts the same tokens for every view
        def __init__(self, tokens):
            self.logits = torch.nn.functional.one_hot(torch.tensor(tokens), 7).float()

        def readout(self, views):
            return self.logits.expand(len(views), *self.logits.shape)

    class Data:
        tree_tokens = torch.tensor([[1, 3, 4, 0, 0], [1, 3, 4, -100, -100]])

    model = Fixed([1, 3, 4, 5, 6])  # right on the tree's own three positions, wrong off it
    assert right_trees(model, torch.zeros(2, 8), torch.tensor([0, 1]), Data).tolist() == [False, True]

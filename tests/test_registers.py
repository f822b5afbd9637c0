"""The registers arch: its relative addressing can express every rewrite rule of both tiers
exactly (Python's rules are the referee), a tracker built on it with such tables tracks random
chains of any length exactly, and its state machine agrees with its batched runs."""
from __future__ import annotations

import random
from types import SimpleNamespace
from unittest.mock import patch

import pytest
import torch
import torch.nn.functional as F
from hypothesis import given, settings, strategies as st

from conftest import torch_threads

from chains.rewrite.rules import Event, apply, successors, tier_rules
from chains.rewrite.trees import atom_names, random_tree, subtree, tokens
from tracker import registers
from tracker.data import Vocab
from tracker.models import ModelConfig
from tracker.registers import (EMPTY, SOURCE_HEADS, TARGET_HEADS, TABLES, HardRead, MixedRead, RegisterTracker,
                              addressing, heap_index, heap_path, table_moves)

ATOMS = atom_names(4)
VOCAB = Vocab(ATOMS, tier_rules(2))
INDEX = VOCAB.index()
LEAVES = 8  # tier 2 over four atoms: trees of at most 15 tokens
POSITIONS = 2 ** LEAVES - 1
MAX_SIZE = 15


def heap(tree) -> list[int]:
    """A tree's output ids by heap position (PAD elsewhere)."""
    out = [0] * POSITIONS
    stack = [0]
    for tok in tokens(tree):
        i = stack.pop()
        out[i] = INDEX[tok]
        if tok in "+*":
            stack += [2 * i + 2, 2 * i + 1]
    return out


def random_walk(rng: random.Random, steps: int, rules: tuple[str, ...]):
    """A start tree and ``steps`` uniformly random applicable events, with the trees they pass."""
    tree = random_tree(rng, ATOMS)
    trees, events = [tree], []
    for _ in range(steps):
        event, tree = rng.choice(successors(tree, rules, MAX_SIZE))
        events.append(event)
        trees.append(tree)
    return trees, events


def consistent_sources() -> dict[tuple[str, int], set[int]]:
    """(rule, target head) -> the candidate columns that give the right token at every register of
    every sampled application of the rule (Python's rules decide what is right)."""
    head, source = (t.tolist() for t in addressing(POSITIONS))
    ok: dict[tuple[str, int], set[int]] = {}
    rng = random.Random(0)
    for _ in range(300):
        trees, events = random_walk(rng, 6, tier_rules(2))
        for before, event, after in zip(trees, events, trees[1:]):
            old, new = heap(before) + [0], heap(after)  # the empty register reads PAD
            q = heap_index(event.path)
            for j in range(POSITIONS):
                h = head[q][j]
                if h < 0:
                    assert old[j] == new[j], "a register outside the event's subtree changed"
                    continue
                right = {c for c, i in enumerate(source[q][j]) if i >= 0 and old[i] == new[j]}
                ok[(event.rule, h)] = ok.get((event.rule, h), set(range(EMPTY + 1))) & right
    return ok


@pytest.fixture(scope="module")
def tables() -> dict[tuple[str, int], set[int]]:
    return consistent_sources()


def test_heap_paths_round_trip():
    for i in range(POSITIONS):
        assert heap_index(heap_path(i)) == i
    assert heap_path(0) == "" and heap_path(1) == "0" and heap_path(2) == "1" and heap_path(4) == "01"


def test_every_rule_of_both_tiers_has_one_exact_source_per_head(tables):
    rules_seen = {rule for rule, _ in tables}
    assert rules_seen == set(tier_rules(2))
    for (rule, h), columns in tables.items():
        assert columns, f"{rule}: no candidate source writes the registers of head {TARGET_HEADS[h]!r} right"


def hand_set(tables, width: int = 16, moves: str = "soft", margin: float = 2.0, tables_kind: str = "free"
             ) -> RegisterTracker:
    """A register tracker whose tables choose one exact source per head, whose tokens are one-hot
    and whose readout names each register's token: the shape's own reach, nothing learned. Tied
    and inherited tables add a parent's score (at most the parent row's own, or what the parent's
    own parent adds to it) to a head's, so there a head's chosen source scores more, by depth, than
    any parent can add."""
    items = torch.zeros(1, MAX_SIZE, dtype=torch.long)
    torch.manual_seed(0)
    model = RegisterTracker(ModelConfig(arch="registers", width=width, moves=moves, tables=tables_kind), items,
                            VOCAB.size, VOCAB.n_out, POSITIONS)
    with torch.no_grad():
        # the chosen source scores TABLE_SCALE * margin above the others (margin 2: e^-40 for each other)
        model.table.zero_()
        for (rule, h), columns in tables.items():
            depth = len(TARGET_HEADS[h]) if tables_kind != "free" else 0
            model.table[tier_rules(2).index(rule), h, min(columns)] = margin * (2 * depth + 1)
        model.content.weight.copy_(torch.eye(VOCAB.n_out, width))
        model.head.weight.copy_(torch.eye(VOCAB.n_out, width) * 10)
        model.head.bias.zero_()
        model.ln_out.weight.fill_(1.0)
        model.ln_out.bias.zero_()
    return model.eval()


def decode(model: RegisterTracker, w: torch.Tensor) -> list[int]:
    return model.readout(model.view(w)).argmax(-1)[0].tolist()


def item_rows(tree, events: list[Event]) -> list[list[int]]:
    rows = [[INDEX[t] for t in tokens(tree)]]
    rows += [[INDEX[e.rule]] + [INDEX[b] for b in e.path] for e in events]
    return [row + [0] * (MAX_SIZE - len(row)) for row in rows]


@settings(max_examples=15, deadline=None)
@given(seed=st.integers(0, 10_000))
def test_hand_set_tables_track_random_tier2_chains_exactly(tables, seed):
    model = hand_set(tables)
    trees, events = random_walk(random.Random(seed), 200, tier_rules(2))
    rows = torch.tensor(item_rows(trees[0], events))
    with torch.no_grad():
        w = model.read(model.initial_state(1), rows[:1])
        assert decode(model, w) == heap(trees[0])
        for t, tree in enumerate(trees[1:], 1):
            w = model.read(w, rows[t: t + 1])
            assert decode(model, w) == heap(tree), f"wrong after event {t}: {events[t - 1]}"


def test_a_rule_moves_the_same_way_at_every_position(tables):
    """The table is per rule: an event at a position a training set never showed is read with the
    entries learned elsewhere. Here: add_comm at every position of a deep tree."""
    model = hand_set(tables)
    tree = ("+", ("+", ("+", "a", "b"), "c"), "d")
    for path in ("", "0", "00"):
        event = Event("add_comm", path)
        rows = torch.tensor(item_rows(tree, [event]))
        with torch.no_grad():
            w = model.read(model.read(model.initial_state(1), rows[:1]), rows[1:])
        assert decode(model, w) == heap(apply(tree, event))


def test_batched_runs_equal_one_item_at_a_time(tables):
    model = hand_set(tables)
    rng = random.Random(3)
    histories = [random_walk(rng, n, tier_rules(2)) for n in (5, 9, 2)]
    lookup: dict[tuple[int, ...], int] = {}
    rows_of = []
    for trees, events in histories:
        rows_of.append([lookup.setdefault(tuple(r), len(lookup) + 1) for r in item_rows(trees[0], events)])
    item_tokens = torch.zeros(len(lookup) + 1, MAX_SIZE, dtype=torch.long)
    for row, i in lookup.items():
        item_tokens[i] = torch.tensor(row)
    torch.manual_seed(0)
    model = RegisterTracker(ModelConfig(arch="registers", width=16), item_tokens, VOCAB.size, VOCAB.n_out, POSITIONS)
    weights = {k: v for k, v in hand_set(tables).state_dict().items() if k != "embed.item_tokens"}
    model.load_state_dict(weights, strict=False)
    items = torch.zeros(len(rows_of), max(map(len, rows_of)), dtype=torch.long)
    for n, ids in enumerate(rows_of):
        items[n, : len(ids)] = torch.tensor(ids)
    with torch.no_grad():
        ends = model.final_view(items)
        for n, ids in enumerate(rows_of):
            w = model.initial_state(1)
            for i in ids:
                w = model.read(w, item_tokens[i: i + 1])
            torch.testing.assert_close(model.view(w)[0], ends[n])


def test_registers_need_a_heap_of_positions():
    with pytest.raises(ValueError, match="layout paths"):
        RegisterTracker(ModelConfig(arch="registers", width=8), torch.zeros(1, 7, dtype=torch.long),
                        VOCAB.size, VOCAB.n_out, 12)


def test_hard_moves_copy_exactly_where_a_blurred_table_mixes():
    """A table whose right source wins by little (a weight of about 0.6 among 16 candidates): soft
    moves blend the other sources into every register they write; hard moves copy the top one
    exactly, so the registers stay the tokens' own embeddings along a chain of any length."""
    tables = consistent_sources()
    trees, events = random_walk(random.Random(5), 60, tier_rules(2))
    rows = torch.tensor(item_rows(trees[0], events))
    distances = {}
    for moves in ("soft", "hard"):
        model = hand_set(tables, moves=moves, margin=0.15)
        with torch.no_grad():
            w = model.read(model.initial_state(1), rows[:1])
            for t in range(1, len(rows)):
                w = model.read(w, rows[t: t + 1])
            exact = model._normed(model.content(torch.tensor([heap(trees[-1])])))
        distances[moves] = (w - exact).norm().item()
        if moves == "hard":
            assert decode(model, w) == heap(trees[-1])
    assert distances["soft"] > 1e-3 > distances["hard"] * 100  # soft: blended; hard: the tokens' own embeddings


@settings(max_examples=25, deadline=None)
@given(st.integers(0, 2**31 - 1), st.sampled_from([1.0, 60.0]))
def test_a_hard_read_has_the_straight_through_products_bits(seed, spread):
    """HardRead reads one source forward and gathers the candidates only backward; its output and
    both gradients are bit for bit those of the straight-through product it replaces, with masked
    candidates, weights that underflow to zero and registers read by several targets."""
    g = torch.Generator().manual_seed(seed)
    m, p, s, w = 3, 15, EMPTY + 1, 8
    pool = torch.randn(m, p + 1, w, generator=g, requires_grad=True)
    scores = torch.randn(m, p, s, generator=g) * spread
    scores = scores.masked_fill(torch.rand(m, p, s, generator=g) < 0.4, float("-inf"))
    scores[..., 0] = scores[..., 0].clamp(min=0)  # every register keeps one candidate
    scores.requires_grad_()
    source = torch.randint(0, p + 1, (m, p, s), generator=g)
    grad = torch.randn(m, p, w, generator=g)
    weights = scores.softmax(-1)
    straight = F.one_hot(weights.argmax(-1), s).to(weights.dtype) + (weights - weights.detach())
    reference = (straight.unsqueeze(-1) * pool[torch.arange(m)[:, None, None], source]).sum(-2)
    read = HardRead.apply(pool, scores.softmax(-1), source)
    assert torch.equal(read, reference)
    for a, b in zip(torch.autograd.grad(read, [pool, scores], grad), torch.autograd.grad(reference, [pool, scores], grad)):
        assert torch.equal(a, b)


class OldHardRead(torch.autograd.Function):
    """The referee: HardRead as it was before its backward went in chunks, every live candidate and
    its register's gradient row gathered at once (K, W)."""

    @staticmethod
    def forward(ctx, pool, weights, source):
        m, p1, width = pool.shape
        flat = source + torch.arange(m).view(m, 1, 1) * p1
        read = flat.gather(-1, weights.argmax(-1, keepdim=True)).flatten()
        ctx.save_for_backward(pool, weights, flat, read)
        return pool.reshape(-1, width).index_select(0, read).view(m, -1, width)

    @staticmethod
    def backward(ctx, grad):
        pool, weights, flat, read = ctx.saved_tensors
        width = pool.shape[-1]
        grad_rows = grad.reshape(-1, width)
        grad_pool = torch.zeros_like(pool).view(-1, width).index_add_(0, read, grad_rows).view_as(pool)
        live = (weights > 0).flatten().nonzero()[:, 0]
        candidates = pool.reshape(-1, width).index_select(0, flat.flatten().index_select(0, live))
        dots = (candidates * grad_rows.index_select(0, live // weights.shape[-1])).sum(-1)
        return grad_pool, torch.zeros_like(weights).view(-1).index_copy_(0, live, dots).view_as(weights), None


def old_mixture(pool: torch.Tensor, weights: torch.Tensor, source: torch.Tensor) -> torch.Tensor:
    """The referee: a soft read as it was before MixedRead, every candidate gathered (M, P, S, W) and
    autograd's backward of the weighted sum."""
    gathered = pool[torch.arange(pool.shape[0])[:, None, None], source]
    return (weights.unsqueeze(-1) * gathered).sum(-2)


@settings(max_examples=40, deadline=None)
@given(st.integers(0, 2**31 - 1), st.integers(1, 3), st.integers(1, 20), st.integers(1, EMPTY + 1),
       st.integers(1, 40), st.integers(1, 64), st.sampled_from([1.0, 60.0]))
def test_the_reads_in_chunks_have_the_bits_of_reading_every_candidate_at_once(seed, m, p, s, w, chunk, spread):
    """HardRead and MixedRead gather their candidates CHUNK rows at a time; their outputs and their
    gradients to the pool and to every weight are bit for bit the referees', which gather them all at
    once: for any shapes and chunk sizes, with masked candidates (weight 0, reading register 0),
    weights that underflow to zero, registers outside the subtree (one candidate, itself) and
    registers read by several targets. At one thread, the trainings' count: at two, the referee's
    accumulation into the pool is split between the threads and rounds in another order."""
    g = torch.Generator().manual_seed(seed)
    pool = torch.randn(m, p + 1, w, generator=g)
    source = torch.randint(0, p + 1, (m, p, s), generator=g)
    source = source.masked_fill((torch.rand(m, p, s, generator=g) < 0.4) & (torch.arange(s) > 0), -1)
    outside = torch.rand(m, p, generator=g) < 0.3
    source[outside] = torch.where(torch.arange(s) == 0, torch.arange(p).view(p, 1), -1).expand(m, p, s)[outside]
    scores = (torch.randn(m, p, s, generator=g) * spread).masked_fill(source < 0, float("-inf"))
    weights = scores.softmax(-1)
    grad = torch.randn(m, p, w, generator=g)
    with patch.object(registers, "CHUNK", chunk), torch_threads(1):
        for read, referee in ((HardRead.apply, OldHardRead.apply), (MixedRead.apply, old_mixture)):
            found = []
            for how in (read, referee):
                leaves = pool.clone().requires_grad_(), weights.clone().requires_grad_()
                out = how(*leaves, source.clamp(min=0))
                found.append((out, *torch.autograd.grad(out, leaves, grad)))
            assert all(torch.equal(a, b) for a, b in zip(*found))


@pytest.mark.parametrize("moves,tables_kind", [("hard", "inherited"), ("soft", "free")])
def test_a_trackers_bits_are_those_of_its_reads_gathering_every_candidate_at_once(monkeypatch, one_thread, moves,
                                                                                    tables_kind):
    """The whole tracker, hard moves read as mixtures too (the move readout) and soft moves: its
    views, registers, mixtures and every parameter's gradient are bit for bit those it had when its
    reads gathered every candidate at once (the referees), the two reads' gradients to the same pool
    and weights added as before; at one thread, as trainings run."""
    rng = random.Random(5)
    walks = [random_walk(rng, 4, tier_rules(2)) for _ in range(3)]
    items_table = torch.tensor([row for trees, events in walks for row in item_rows(trees[0], events)])
    items = torch.arange(len(items_table)).view(3, -1)
    torch.manual_seed(4)
    model = RegisterTracker(ModelConfig(arch="registers", width=32, moves=moves, tables=tables_kind), items_table,
                            VOCAB.size, VOCAB.n_out, POSITIONS)
    with torch.no_grad():
        model.table.normal_(std=0.2, generator=torch.Generator().manual_seed(6))  # tables that lean, not yet sharp
    monkeypatch.setattr(registers, "CHUNK", 1000)  # several chunks a read
    found = []
    for reads in ((HardRead, MixedRead), (OldHardRead, SimpleNamespace(apply=old_mixture))):
        monkeypatch.setattr(registers, "HardRead", reads[0])
        monkeypatch.setattr(registers, "MixedRead", reads[1])
        outs = model(items, soft_reads=True)
        g = torch.Generator().manual_seed(7)  # the same random gradient for both
        loss = sum((o * torch.randn(o.shape, generator=g)).sum() for o in outs)
        grads = torch.autograd.grad(loss, list(model.parameters()), allow_unused=True)  # the readout reads none
        found.append((*outs, *(grad for grad in grads if grad is not None)))
    assert len(found[0]) == 3 + 5  # table, beta, content, the LayerNorm's two
    assert all(torch.equal(a, b) for a, b in zip(*found, strict=True))


def test_table_moves_name_the_one_head_a_table_gets_wrong(tables):
    """Hand-set tables move every event right on every tree; send one head of add_assoc to a wrong
    source and exactly the applications that have a node at that head go wrong, naming it."""
    rng = random.Random(3)
    trees = [random_walk(rng, 4, tier_rules(2))[0][-1] for _ in range(40)]
    model = hand_set(tables, moves="hard")
    moves = table_moves(model, VOCAB.rules, INDEX, trees, MAX_SIZE)
    assert moves and all(m.right == m.applications and not m.wrong_heads for m in moves)
    rule, h = tier_rules(2).index("add_assoc"), TARGET_HEADS.index("01")
    with torch.no_grad():
        model.table[rule, h] = 0.0
        model.table[rule, h, SOURCE_HEADS.index("000")] = 2.0  # x's left child where its right one belongs
    broken = {m.event: m for m in table_moves(model, VOCAB.rules, INDEX, trees, MAX_SIZE) if m.right < m.applications}
    assert broken and all(e.startswith("add_assoc@") and m.wrong_heads == ("01",) for e, m in broken.items())
    # right wherever the moved x (the left child of the event's left child) is an atom: it has no children
    for e, m in broken.items():
        path = e.split("@")[1]
        assert m.right >= sum(1 for t in trees for ev, _ in successors(t, tier_rules(2), MAX_SIZE)
                              if str(ev) == e and isinstance(subtree(t, path + "00"), str))


def test_tied_tables_move_a_subtrees_children_on_heads_never_set(tables):
    """Root associativity's heads 00 and 01 move the children of x, which only a tree where x is a
    subtree exercises. With those two rows left empty, free tables read the wrong source there;
    tied tables inherit the parent head's move (x from 00: its children from 000 and 001)."""
    rng = random.Random(11)
    trees = [random_walk(rng, 4, tier_rules(2))[0][-1] for _ in range(40)]
    rule = tier_rules(2).index("add_assoc")
    found = {}
    for kind in TABLES:
        model = hand_set(tables, moves="hard", tables_kind=kind)
        with torch.no_grad():
            for h in ("00", "01"):
                model.table[rule, TARGET_HEADS.index(h)] = 0.0
        moves = {m.event: m for m in table_moves(model, VOCAB.rules, INDEX, trees, MAX_SIZE)}
        found[kind] = {e: m for e, m in moves.items() if m.right < m.applications}
        assert all(e.startswith("add_assoc@") for e in found[kind])  # no other rule is touched
        assert sum(m.applications for e, m in moves.items() if e.startswith("add_assoc@")) > 0
    assert found["free"] and not found["tied"] and not found["inherited"]


def referee_scores(own: torch.Tensor, kind: str) -> list[list[list[float]]]:
    """The tables a move reads (R, 7, S), by the heads' bit strings: where a head and a source end in
    the same bit, their parents' score is added, the parent's own entry (tied) or its score as read
    (inherited); the empty register's column has no parent."""
    rules = own.shape[0]
    out = [[[0.0] * (EMPTY + 1) for _ in TARGET_HEADS] for _ in range(rules)]
    for r in range(rules):
        for h, target in sorted(enumerate(TARGET_HEADS), key=lambda p: len(p[1])):  # parents first
            for c in range(EMPTY + 1):
                score = own[r, h, c].item()
                source = SOURCE_HEADS[c] if c < EMPTY else None
                if kind != "free" and target and source and target[-1] == source[-1]:
                    ph, pc = TARGET_HEADS.index(target[:-1]), SOURCE_HEADS.index(source[:-1])
                    score += own[r, ph, pc].item() if kind == "tied" else out[r][ph][pc]
                out[r][h][c] = score
    return out


@settings(max_examples=20, deadline=None)
@given(seed=st.integers(0, 2**16), kind=st.sampled_from(TABLES))
def test_a_heads_score_adds_its_parents_as_each_kind_of_table_says(seed, kind):
    """scores() against a referee that walks the heads' bit strings: free rows are their own, tied
    rows add the parent's own entry, inherited rows the parent's score as the moves read it."""
    items = torch.zeros(1, MAX_SIZE, dtype=torch.long)
    model = RegisterTracker(ModelConfig(arch="registers", width=8, tables=kind), items, VOCAB.size, VOCAB.n_out,
                            POSITIONS)
    with torch.no_grad():
        model.table.copy_(torch.randn(model.table.shape, generator=torch.Generator().manual_seed(seed)))
    want = torch.tensor(referee_scores(model.table.detach(), kind))
    assert torch.allclose(model.scores().detach(), want, atol=1e-5)


def test_inherited_tables_follow_the_parents_move_where_tied_ones_follow_its_own_entry(tables):
    """The tied tables' failure on a trained run, by hand: root associativity's rows 00 and 01 left
    empty, and head 0's own entries putting the wrong source 11 a hair above the right one 00 while
    the root head's tie (its own entry for 0 above 1) makes head 0's move the right one. Tied tables
    then carry x's children from 11's, inherited ones from 00's."""
    rng = random.Random(11)
    trees = [random_walk(rng, 4, tier_rules(2))[0][-1] for _ in range(40)]
    rule = tier_rules(2).index("add_assoc")
    wrong = {}
    for kind in ("tied", "inherited"):
        model = hand_set(tables, moves="hard", tables_kind=kind)
        with torch.no_grad():
            for h in ("00", "01"):
                model.table[rule, TARGET_HEADS.index(h)] = 0.0
            x, root = TARGET_HEADS.index("0"), TARGET_HEADS.index("")
            right = model.table[rule, x, SOURCE_HEADS.index("00")].item()  # hand_set's margin at depth 1
            model.table[rule, x, SOURCE_HEADS.index("11")] = right + 0.01
            model.table[rule, root, SOURCE_HEADS.index("0")] = 0.5
        head_x = model.scores()[rule, x].argmax().item()
        assert SOURCE_HEADS[head_x] == "00"  # x itself moves right under both
        wrong[kind] = {m.event: m.wrong_heads for m in table_moves(model, VOCAB.rules, INDEX, trees, MAX_SIZE)
                       if m.right < m.applications}
    assert wrong["tied"] and all(e.startswith("add_assoc@") for e in wrong["tied"])
    assert not wrong["inherited"]


def test_a_start_tree_is_written_whole_whatever_the_rows_beside_it_read():
    """A start tree read by every row (a history's first item) writes its registers and moves
    nothing; among rows at other steps (events, padding) each row reads as it would alone, the
    start tree's rows to the bit."""
    rng = random.Random(7)
    walks = [random_walk(rng, 3, tier_rules(2)) for _ in range(4)]
    torch.manual_seed(1)
    model = RegisterTracker(ModelConfig(arch="registers", width=16, moves="hard"), torch.zeros(1, MAX_SIZE,
                            dtype=torch.long), VOCAB.size, VOCAB.n_out, POSITIONS).eval()
    starts = torch.tensor([item_rows(trees[0], [])[0] for trees, _ in walks])  # (4, E)
    with torch.no_grad():
        model._move = lambda *args: pytest.fail("a start tree read by every row moved the registers")
        w = model.read(model.initial_state(4), starts)
        assert torch.equal(w, model._write_tree(torch.tensor([heap(trees[0]) for trees, _ in walks])))
        assert torch.equal(model.read(w.flip(0), starts), w)  # over any registers: the tree alone
        del model._move
        # row 0 reads a new start tree, row 1 its first event, row 2 padding, row 3 its first event
        mixed = torch.stack([starts[1], torch.tensor(item_rows(walks[1][0][0], walks[1][1])[1]),
                             torch.zeros(MAX_SIZE, dtype=torch.long),
                             torch.tensor(item_rows(walks[3][0][0], walks[3][1])[1])])
        together = model.read(w, mixed)
        assert torch.equal(together[0], w[1]) and torch.equal(together[2], w[2])
        for n in (1, 3):
            torch.testing.assert_close(together[n], model.read(w[n: n + 1], mixed[n: n + 1])[0])


def test_a_tables_entropy_is_log_16_when_level_and_falls_as_a_move_is_chosen():
    items = torch.zeros(1, MAX_SIZE, dtype=torch.long)
    model = RegisterTracker(ModelConfig(arch="registers", width=8), items, VOCAB.size, VOCAB.n_out, POSITIONS)
    assert torch.allclose(model.table_entropy(), torch.log(torch.tensor(float(EMPTY + 1))))
    with torch.no_grad():
        model.table[:, :, 3] = 1.0  # every head reads source column 3 by a margin of TABLE_SCALE
    assert model.table_entropy().item() < 1e-6
    with torch.no_grad():
        model.table.zero_()
        model.table[0, 0, 3] = 0.05  # one row leans a little: the mean entropy drops a little
    drop = torch.log(torch.tensor(float(EMPTY + 1))) - model.table_entropy()
    assert 0 < drop.item() < 0.1


def test_the_sharpness_term_widens_a_moves_margin_where_nothing_else_pulls():
    """The term's gradient on a row that leans, alone: the leaning entry rises, the others fall."""
    items = torch.zeros(1, MAX_SIZE, dtype=torch.long)
    model = RegisterTracker(ModelConfig(arch="registers", width=8), items, VOCAB.size, VOCAB.n_out, POSITIONS)
    with torch.no_grad():
        model.table[2, 1, 5] = 0.01
    model.table_entropy().backward()
    grad = model.table.grad[2, 1]
    assert grad[5] < 0 and (grad[torch.arange(EMPTY + 1) != 5] > 0).all()  # descent raises column 5
    assert model.table.grad[0].abs().sum() == 0  # a level row has no gradient: nothing to sharpen


@pytest.mark.parametrize("moves", ["hard", "soft"])
def test_reading_the_moves_as_mixtures_leaves_the_run_to_the_bit(moves):
    """forward(soft_reads=True) gives the same views and registers as forward(), and its reads are the
    moves' mixtures before the update: a start tree's own view at step 0, a register a one-hot table
    moves read exactly as the hard move reads it."""
    rng = random.Random(3)
    walks = [random_walk(rng, 4, tier_rules(2)) for _ in range(3)]
    rows = [item_rows(trees[0], events) for trees, events in walks]
    items_table = torch.tensor([row for r in rows for row in r])  # every item of every walk
    items = torch.arange(len(items_table)).view(3, -1)  # (3, 5): each walk's start tree then its events
    torch.manual_seed(2)
    model = RegisterTracker(ModelConfig(arch="registers", width=16, moves=moves), items_table, VOCAB.size,
                            VOCAB.n_out, POSITIONS)
    z, w = model(items)
    z2, w2, reads = model(items, soft_reads=True)
    assert torch.equal(z, z2) and torch.equal(w, w2) and reads.shape == z.shape
    assert torch.equal(reads[:, 0], z[:, 0]) and not torch.equal(reads[:, 1:], z[:, 1:])

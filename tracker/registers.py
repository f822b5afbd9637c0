"""A register tracker: one register per position of the tree, moved by relative addressing.

The state is P registers of width W, one per heap position of the readout's ``paths`` layout
(the root is 0, the children of position i are 2i + 1 and 2i + 2; ``tracker.layouts``). A start
tree writes each register with the embedding of the token at its position (PAD where the tree
has no node). A rewrite event (rule r at node q) then acts on the registers in three parts:

1. **Move, by attention keyed on positions.** Every register j inside the subtree at q reads a
   softmax mixture of candidate source registers. Write j's path below q as ``h + t``, where the
   head h is its first two bits (fewer when it is shallower) and t the rest; its candidates are
   the registers at ``q + h' + t`` for every string h' of at most three bits (the empty register,
   the PAD embedding, where that lies below the heap), and the empty register itself. With
   ``moves="hard"`` a register reads exactly its top-scored candidate, and the table learns through
   the softmax's gradient (straight-through); with ``soft`` it reads the softmax mixture. The score of a
   candidate is a learned table entry ``T[r, h, h']``: one table per rule, shared by every
   position. Registers outside the subtree keep their content.
2. **One shared update network** on every register: attention from the register to the token
   embeddings (keys and values both; a sharpness beta learned), which writes back the mixture of
   tokens the register holds. A register a move left slightly mixed is pulled back to the token
   it mostly holds, so small errors of a move do not add up along a chain.
3. **Normalisation after every write**: each register rescaled to norm sqrt(W).

With ``tables="tied"`` a head's score for a source adds its parent head's score for the source's
parent wherever both end in the same bit: a subtree moved whole moves its children with it, so a
head that training never moved content through (the children of x in root associativity, on four
atoms the one place x is a subtree) leans on its parent's move instead of on nothing. The tie reads
the parent's own entry; with ``tables="inherited"`` it reads the parent's score as the moves read it,
itself inherited, so that a head no training exercised takes its parent's chosen move however small
the parent's own margin (the tied tables' entries there can sit a hundredth apart).

What the shape gives for free, and what it does not: a rule's move is the same table at every
position (so a rule learned at some positions reads at the others, where its heads fit) and never
looks at the registers' content (so a tree training never showed is moved like any other); the
tables, the token embeddings, the update network and the readout are learned, by the same
objectives as every tracker. The rules of both tiers move whole subtrees by heads of at most two
bits on the written side and three on the read side, so the table can express each exactly.

The view z that the readout reads and the objectives compare is every register's LayerNorm,
flattened (P * W); the readout is one linear map from a register to its position's token,
shared by all positions.
"""
from __future__ import annotations

import math
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache
from itertools import product

import torch
import torch.nn as nn

from chains.rewrite.rules import successors
from chains.rewrite.trees import Tree, tokens
from tracker.layouts import N_OPS, PAD_ID, heap_index, heap_path, heap_tokens
from tracker.models import ModelConfig, Recurrent, parsed_rows

MOVES = ("soft", "hard")  # how a move reads its sources (ModelConfig.moves)
TABLES = ("free", "tied", "inherited")  # how a table's rows relate (ModelConfig.tables)
TARGET_HEADS = ("",) + tuple("".join(b) for n in (1, 2) for b in product("01", repeat=n))  # 7
SOURCE_HEADS = ("",) + tuple("".join(b) for n in (1, 2, 3) for b in product("01", repeat=n))  # 15
# the tables' scores are TABLE_SCALE * T: an optimiser step moves a score by about TABLE_SCALE * lr,
# so that a move becomes a sharp choice of one source in hundreds of steps, not thousands
TABLE_SCALE = 20.0
BETA_INIT = 20.0  # the update's sharpness at init: a register at cosine 0.9 to one token and 0.5 to the next weighs them e^8 : 1
EMPTY = len(SOURCE_HEADS)  # the candidate column of the empty register (a source outside the tree)
# candidate rows (of width W) a read gathers at a time: they and their products stay in the cache
# (gathered at once, the 340,000 of a tier-2 batch's move went through memory several times)
CHUNK = 4096


def parent_scores() -> tuple[torch.Tensor, torch.Tensor]:
    """For the tied tables: (target head, source column) -> the index into a rule's flattened table
    row of (the head's parent, the source's parent) where both end in the same bit, and a 0/1 mask
    of where that holds (a target head of one or two bits against a source head of at least one)."""
    index = torch.zeros(len(TARGET_HEADS), EMPTY + 1, dtype=torch.long)
    mask = torch.zeros(len(TARGET_HEADS), EMPTY + 1)
    for h, target in enumerate(TARGET_HEADS):
        for c, source in enumerate(SOURCE_HEADS):
            if target and source and target[-1] == source[-1]:
                index[h, c] = TARGET_HEADS.index(target[:-1]) * (EMPTY + 1) + SOURCE_HEADS.index(source[:-1])
                mask[h, c] = 1.0
    return index, mask


@lru_cache(maxsize=8)
def addressing(positions: int) -> tuple[torch.Tensor, torch.Tensor]:
    """For an event at each node q of a heap of ``positions`` registers:

    - ``head`` (Q, P): the target head index (in TARGET_HEADS) of every register j inside the
      subtree at q, -1 outside it;
    - ``source`` (Q, P, EMPTY + 1): the register each candidate head reads (its index in
      SOURCE_HEADS, then the empty register), ``positions`` for the empty register (also where the
      candidate lies below the heap's last level, where no tree has a node); a register outside
      the subtree has itself as its one candidate, the other columns -1.
    """
    paths = [heap_path(i) for i in range(positions)]
    head = torch.full((positions, positions), -1, dtype=torch.long)
    source = torch.full((positions, positions, EMPTY + 1), -1, dtype=torch.long)
    for q, at in enumerate(paths):
        for j, path in enumerate(paths):
            if not path.startswith(at):
                source[q, j, 0] = j  # outside the subtree: its one candidate is itself
                continue
            below = path[len(at):]
            h, t = below[:2], below[2:]
            head[q, j] = TARGET_HEADS.index(h)
            for c, h2 in enumerate(SOURCE_HEADS):
                i = heap_index(at + h2 + t)
                # a source below the heap's last level holds no node of any tree: the empty register
                source[q, j, c] = i if i < positions else positions
            source[q, j, EMPTY] = positions
    return head, source


def _heap_tokens(row: list[int], positions: int) -> list[int] | None:
    """A start tree's Polish output ids (up to the first PAD) -> its tokens by heap position; None
    when the row is not a tree that fits ``positions`` (an event's tokens)."""
    return heap_tokens(row, lambda tok: tok <= N_OPS, positions, PAD_ID)


def _pool_rows(pool: torch.Tensor, source: torch.Tensor) -> torch.Tensor:
    """Sources (M, P, S) indices into pool (M, P + 1, W) -> the same sources as rows of
    pool.view(M * (P + 1), W)."""
    m, p1 = pool.shape[:2]
    return source + torch.arange(m, device=pool.device).view(m, 1, 1) * p1


def _chunks(n: int, size: int) -> Iterator[slice]:
    """Slices of ``range(n)``, ``size`` at a time (at least one)."""
    size = max(1, size)
    return (slice(a, a + size) for a in range(0, n, size))


class HardRead(torch.autograd.Function):
    """A hard move's read: register j of row m takes its top-weighted source, pool[m, source[m, j, top]].

    Forward it reads one source per register, a sixteenth of a soft move's reading. Backward it
    gives what the straight-through product ``sum_s (onehot_s + w_s - sg(w_s)) * pool[source_s]`` would:
    the read register's gradient to its one source, and to each weight w_s the dot product of its
    candidate with the gradient (the candidates gathered only then, never kept, CHUNK rows at a time).
    The bits equal that product's, forward and backward (tests/test_registers.py)."""

    @staticmethod
    def forward(ctx, pool: torch.Tensor, weights: torch.Tensor, source: torch.Tensor) -> torch.Tensor:
        # pool (M, P + 1, W) registers and the empty one; weights (M, P, S); source (M, P, S) indices into pool
        m, _, width = pool.shape
        flat = _pool_rows(pool, source)  # (M, P, S) rows of pool.view(M * (P + 1), W)
        read = flat.gather(-1, weights.argmax(-1, keepdim=True)).flatten()  # (M * P,)
        ctx.save_for_backward(pool, weights, flat, read)
        return pool.reshape(-1, width).index_select(0, read).view(m, -1, width)  # (M, P, W)

    @staticmethod
    def backward(ctx, grad: torch.Tensor):
        pool, weights, flat, read = ctx.saved_tensors  # grad (M, P, W)
        width = pool.shape[-1]
        pool_rows, grad_rows = pool.reshape(-1, width), grad.reshape(-1, width)  # (M * (P + 1), W), (M * P, W)
        grad_pool = torch.zeros_like(pool_rows).index_add_(0, read, grad_rows).view_as(pool)
        # only the candidates of non-zero weight: the softmax's backward multiplies every other
        # one's gradient by its weight, 0 (a register outside the event's subtree has one candidate)
        live = (weights > 0).flatten().nonzero()[:, 0]  # (K,) into weights.view(-1)
        sources, targets = flat.flatten().index_select(0, live), live // weights.shape[-1]  # (K,) their rows
        dots = grad.new_empty(live.shape)  # (K,)
        for at in _chunks(len(live), CHUNK):
            # each candidate's product with its register's gradient and the sum over W, as over all K
            # at once, on rows that stay in the cache
            torch.sum(pool_rows.index_select(0, sources[at]) * grad_rows.index_select(0, targets[at]), -1, out=dots[at])
        return grad_pool, torch.zeros_like(weights).view(-1).index_copy_(0, live, dots).view_as(weights), None


class MixedRead(torch.autograd.Function):
    """A soft read (a soft move, or the move readout's mixtures): register j of row m takes the
    mixture ``sum_s weights[m, j, s] * pool[m, source[m, j, s]]``.

    Its bits, forward and backward, are those of gathering every candidate (M, P, S, W) and summing
    their weighted products over S, with autograd's backward of that: to each weight the sum over W
    of its candidate times the gradient, to each pool register its readers' weighted gradients added
    in the readers' order, masked candidates (weight 0) included (tests/test_registers.py), at one
    thread: at more, autograd splits that gather's accumulation between the threads, where these reads
    give the same bits at any count. The candidates are gathered CHUNK rows at a time instead, forward
    and again backward, and never kept."""

    @staticmethod
    def forward(ctx, pool: torch.Tensor, weights: torch.Tensor, source: torch.Tensor) -> torch.Tensor:
        # pool (M, P + 1, W) registers and the empty one; weights (M, P, S); source (M, P, S) indices into pool
        m, _, width = pool.shape
        s = weights.shape[-1]
        flat = _pool_rows(pool, source).view(-1, s)  # (M * P, S) rows of pool.view(M * (P + 1), W)
        pool_rows, w = pool.reshape(-1, width), weights.reshape(-1, s, 1)
        out = pool.new_empty(m, weights.shape[1], width)  # (M, P, W)
        for at in _chunks(len(flat), CHUNK // s):
            candidates = pool_rows.index_select(0, flat[at].flatten()).view(-1, s, width)  # (chunk, S, W)
            torch.sum(w[at] * candidates, -2, out=out.view(-1, width)[at])
        ctx.save_for_backward(pool, weights, flat)
        return out

    @staticmethod
    def backward(ctx, grad: torch.Tensor):
        pool, weights, flat = ctx.saved_tensors  # grad (M, P, W)
        width, s = pool.shape[-1], weights.shape[-1]
        pool_rows, w, g = pool.reshape(-1, width), weights.reshape(-1, s, 1), grad.reshape(-1, 1, width)
        grad_pool = torch.zeros_like(pool_rows)  # (M * (P + 1), W)
        grad_weights = weights.new_empty(flat.shape)  # (M * P, S)
        for at in _chunks(len(flat), CHUNK // s):
            index = flat[at].flatten()  # (chunk * S,)
            candidates = pool_rows.index_select(0, index).view(-1, s, width)  # (chunk, S, W)
            torch.sum(g[at] * candidates, -1, out=grad_weights[at])
            grad_pool.index_add_(0, index, (g[at] * w[at]).view(-1, width))
        return grad_pool.view_as(pool), grad_weights.view_as(weights), None


class RegisterTracker(Recurrent):
    """Registers by tree position, moved by per-rule tables over relative heads (module docstring).
    The state is w (H, P, W); item 0 (padding) leaves it unchanged."""

    def __init__(self, config: ModelConfig, item_tokens: torch.Tensor, vocab_size: int, n_out: int,
                 tree_len: int) -> None:
        super().__init__(config, item_tokens, vocab_size, n_out, tree_len)
        leaves = math.log2(tree_len + 1)
        if leaves != int(leaves):
            raise ValueError(f"the registers arch reads its tree by path (layout paths): {tree_len} readout "
                             "positions is not a heap of 2^L - 1")
        w = config.width
        self.rules = vocab_size - n_out - 2  # the vocabulary: output tokens, the rules, the bits 0 and 1
        self.content = nn.Embedding(n_out, w)  # a register's content: the token at its position
        self.table = nn.Parameter(torch.zeros(self.rules, len(TARGET_HEADS), EMPTY + 1))  # T[r, h, h']
        self.log_beta = nn.Parameter(torch.tensor(math.log(BETA_INIT)))  # the update's sharpness
        self.ln_out = nn.LayerNorm(w)
        self.head = nn.Linear(w, n_out)  # one readout for every register
        # P, saved with the weights: load_run rebuilds the model from it
        self.register_buffer("positions", torch.tensor(tree_len), persistent=True)
        head, source = addressing(tree_len)
        self.register_buffer("target_head", head, persistent=False)  # (Q, P)
        self.register_buffer("source", source, persistent=False)  # (Q, P, S)
        parent, tied = parent_scores()
        self.register_buffer("parent", parent, persistent=False)  # (7, S) into a rule's flattened (7 * S) row
        self.register_buffer("tied", tied if config.tables != "free" else torch.zeros_like(tied), persistent=False)
        kind, heap, rule, node = self._parse(item_tokens.tolist())
        self.register_buffer("item_kind", kind, persistent=False)  # (I,) 1 tree, 2 event, 0 padding
        self.register_buffer("item_heap", heap, persistent=False)  # (I, P) a tree item's tokens by position
        self.register_buffer("item_rule", rule, persistent=False)  # (I,) an event's rule index
        self.register_buffer("item_node", node, persistent=False)  # (I,) an event's heap position
        self._init_weights()
        self._rows: dict[tuple[int, ...], tuple[int, list[int], int, int]] = {}  # parsed token rows (read)

    @property
    def view_width(self) -> int:
        return self.tree_len * self.config.width

    def _parse_row(self, row: list[int]) -> tuple[int, list[int], int, int]:
        """One item's token ids -> (kind, heap tokens, rule, node)."""
        positions = self.tree_len
        if not row or row[0] == 0:
            return 0, [0] * positions, 0, 0
        n_out = self.n_out
        if row[0] < n_out:
            heap = _heap_tokens(row, positions)
            if heap is None:
                raise ValueError("an item that starts with a tree token is not a tree that fits the registers")
            return 1, heap, 0, 0
        bits = {n_out + self.rules: "0", n_out + self.rules + 1: "1"}
        path = "".join(bits[t] for t in row[1:] if t != 0)
        node = heap_index(path)
        if node >= positions or row[0] >= n_out + self.rules:
            raise ValueError("an event item names no rule or a position outside the registers")
        return 2, [0] * positions, row[0] - n_out, node

    def items_changed(self, item_tokens: torch.Tensor) -> None:
        # a fresh batch's table (I', E) parsed as the model's own is at construction
        kind, heap, rule, node = (t.to(item_tokens.device) for t in self._parse(item_tokens.tolist()))
        self.item_kind, self.item_heap, self.item_rule, self.item_node = kind, heap, rule, node

    def _parse(self, rows: list[list[int]]):
        parsed = [self._parse_row(row) for row in rows]
        return (torch.tensor([p[0] for p in parsed]), torch.tensor([p[1] for p in parsed]).view(len(rows), -1),
                torch.tensor([p[2] for p in parsed]), torch.tensor([p[3] for p in parsed]))

    def _normed(self, w: torch.Tensor) -> torch.Tensor:
        return w * (math.sqrt(w.shape[-1]) / w.norm(dim=-1, keepdim=True).clamp(min=1e-6))

    def _write_tree(self, heap: torch.Tensor) -> torch.Tensor:
        """(M, P) heap token ids -> registers (M, P, W)."""
        return self._normed(self.content(heap))

    def _move(self, w: torch.Tensor, rule: torch.Tensor, node: torch.Tensor, soft: bool = False):
        """registers w (M, P, W), events (rule, node) (M,) -> registers (M, P, W) after the event;
        with ``soft`` also the registers as the softmax mixtures of their sources read them, normalised,
        before the update (what the move-readout term reads: under hard moves a table's choice keeps
        a gradient toward the right source there after the top one is right)."""
        m, p, width = w.shape
        head = self.target_head[node]  # (M, P), -1 outside the subtree (its own register, weight 1)
        source = self.source[node]  # (M, P, S)
        scores = TABLE_SCALE * self.scores()[rule.unsqueeze(1), head.clamp(min=0)]  # (M, P, S)
        scores = scores.masked_fill(source < 0, float("-inf"))
        weights = scores.softmax(-1)  # (M, P, S)
        empty = self._normed(self.content.weight[0]).expand(m, 1, width)  # the PAD register
        pool = torch.cat([w, empty], 1)  # (M, P + 1, W)
        source = source.clamp(min=0)  # a masked candidate reads register 0, at weight 0
        hard = self.config.moves == "hard"
        if hard:
            # exactly the top source forward, the softmax's gradient backward (straight-through):
            # a move copies registers without blending, however long the chain
            moved = self._update(self._normed(HardRead.apply(pool, weights, source)))
            if not soft:
                return moved
        mixed = self._normed(MixedRead.apply(pool, weights, source))  # (M, P, W)
        if not hard:
            moved = self._update(mixed)
        return (moved, mixed) if soft else moved

    def scores(self) -> torch.Tensor:
        """The tables a move reads (R, 7, S): T itself (free), or T plus, where a head and a source end
        in the same bit, the score of their parents (tied: a head training never exercised inherits
        its parent's move, since a subtree moved whole moves its children with it)."""
        if self.config.tables == "free":
            return self.table
        if self.config.tables == "tied":
            return self.table + self.table.flatten(1)[:, self.parent] * self.tied
        # inherited: the parent's score as its own moves read it, itself inherited (heads are at most
        # two bits deep, so two rounds reach the root head)
        scores = self.table
        for _ in range(2):
            scores = self.table + scores.flatten(1)[:, self.parent] * self.tied
        return scores

    def table_entropy(self) -> torch.Tensor:
        """The mean entropy (nats) of every (rule, head) row's choice of source, as the moves read
        the tables (a register inside the subtree has every candidate live): log 16 for a level row,
        0 for a move that reads one source only."""
        logp = (TABLE_SCALE * self.scores()).log_softmax(-1)  # (R, 7, S)
        return -(logp.exp() * logp).sum(-1).mean()

    def _update(self, w: torch.Tensor) -> torch.Tensor:
        """The shared update network: registers (M, P, W) read against the token embeddings and
        rewritten with the mixture they match (cosine scores times beta)."""
        tokens = self._normed(self.content.weight)  # (V_out, W), each of norm sqrt(W)
        scores = (w @ tokens.T) * (self.log_beta.exp() / w.shape[-1])  # (M, P, V_out): beta * cosine
        return self._normed(scores.softmax(-1) @ tokens)

    def _take(self, w: torch.Tensor, kind: torch.Tensor, heap: torch.Tensor, rule: torch.Tensor,
              node: torch.Tensor, soft: bool = False):
        """Registers w (M, P, W) after one more item per row (kind 1 a start tree, 2 an event, 0
        padding) -> registers (M, P, W), and with ``soft`` the registers as ``_move``'s mixtures read
        them (the same registers on rows that did not move). A start tree is written over whatever
        the row held; when every row reads one (a history's first item), nothing is moved."""
        starts = int((kind == 1).sum())  # one read of the device for the step
        if starts == len(kind):
            tree = self._write_tree(heap)
            return (tree, tree) if soft else tree
        kind = kind.view(-1, 1, 1)
        if soft:
            moved, mixed = self._move(w, rule, node, soft=True)
            out, read = torch.where(kind == 2, moved, w), torch.where(kind == 2, mixed, w)
        else:
            out = torch.where(kind == 2, self._move(w, rule, node), w)
        if starts:  # rows at different steps (states held by a caller): a start tree only where a row reads one
            tree = self._write_tree(heap)
            out = torch.where(kind == 1, tree, out)
            read = torch.where(kind == 1, tree, read) if soft else None
        return (out, read) if soft else out

    def _run(self, items: torch.Tensor, keep_all: bool, soft: bool = False):
        """Items (H, T), every history's start tree first -> (the views (H, P * W) after each step
        when ``keep_all``, the registers (H, P, W) at the end, and with ``soft`` the views of the
        moves read as mixtures after each step)."""
        first = items[:, 0]
        w = self._write_tree(self.item_heap[first])  # the start trees, written: step 0 moves nothing
        views = [self.view(w)] if keep_all else []
        reads = [views[0]] if soft else []
        for t in range(1, items.shape[1]):
            it = items[:, t]
            taken = self._take(w, self.item_kind[it], self.item_heap[it], self.item_rule[it], self.item_node[it],
                               soft=soft)
            w, read = taken if soft else (taken, None)
            if keep_all:
                views.append(self.view(w))
            if soft:
                reads.append(self.view(read))
        return (views, w, reads) if soft else (views, w)

    def forward(self, items: torch.Tensor, soft_reads: bool = False):
        """(views (H, T, P * W), registers (H, P, W)); with ``soft_reads`` also the views of the moves
        read as softmax mixtures before the update (H, T, P * W), for the move-readout term."""
        if soft_reads:
            views, w, reads = self._run(items, keep_all=True, soft=True)
            return torch.stack(views, 1), w, torch.stack(reads, 1)
        views, w = self._run(items, keep_all=True)
        return torch.stack(views, 1), w  # (H, T, P * W), (H, P, W)

    def final_view(self, items: torch.Tensor) -> torch.Tensor:
        return self.view(self._run(items, keep_all=False)[1])

    def advance(self, state: torch.Tensor, rows: torch.Tensor, items: torch.Tensor) -> torch.Tensor:
        w = self._take(state[rows], self.item_kind[items], self.item_heap[items], self.item_rule[items],
                        self.item_node[items])
        return self.view(w)

    def readout(self, z: torch.Tensor) -> torch.Tensor:
        return self.head(z.unflatten(-1, (self.tree_len, self.config.width)))  # (..., P, V_out)

    # the state machine (tracker.inference, the prover's imagination)
    def initial_state(self, n: int) -> torch.Tensor:
        """Empty registers (n, P, W): every position PAD until the start tree is read."""
        return self._write_tree(torch.zeros(n, self.tree_len, dtype=torch.long, device=self.table.device))

    def read(self, w: torch.Tensor, toks: torch.Tensor) -> torch.Tensor:
        parsed = parsed_rows(self._rows, self._parse_row, toks)
        device = w.device
        kind = torch.tensor([p[0] for p in parsed], device=device)
        heap = torch.tensor([p[1] for p in parsed], device=device).view(len(parsed), -1)
        rule = torch.tensor([p[2] for p in parsed], device=device)
        node = torch.tensor([p[3] for p in parsed], device=device)
        return self._take(w, kind, heap, rule, node)

    def view(self, w: torch.Tensor) -> torch.Tensor:
        return self.ln_out(w).flatten(-2)  # (..., P * W)



@dataclass(frozen=True)
class TableMoves:
    """How one event's table moves the registers, checked on every tree it applies to."""

    event: str  # the event, as text (rule@path)
    right: int  # applications where every register of the subtree reads the right token
    applications: int
    wrong_heads: tuple[str, ...]  # target heads (paths below the event, "" its node) whose top source is wrong somewhere


def table_moves(model: RegisterTracker, rules: Sequence[str], index: dict[str, int], trees: Iterable[Tree],
                max_size: int | None = None) -> list[TableMoves]:
    """The moves a trained register tracker's tables (as its moves read them) make on their own (each register reading its
    top-scored source, before the update network), against Python's rules on every application of
    every event to ``trees``: where a table is right, the shape carries the event to any tree;
    where it is wrong, on which heads. ``rules`` and ``index`` are the run's vocabulary's."""
    head, source = (t.tolist() for t in addressing(model.tree_len))
    top = model.scores().detach().cpu().tolist()  # (R, target heads, EMPTY + 1)
    reads: dict[tuple[int, int], list[tuple[int, str, int]]] = {}  # (rule, node) -> (register, its head, read)

    def read_by(r: int, q: int) -> list[tuple[int, str, int]]:
        # which register each register of the subtree at q reads: its head's top-scored live
        # source (the first top one, as argmax); the same whatever the tree holds
        if (r, q) not in reads:
            reads[r, q] = [(j, TARGET_HEADS[h], source[q][j][max((c for c, i in enumerate(source[q][j]) if i >= 0),
                                                                 key=lambda c: top[r][h][c])])
                           for j, h in enumerate(head[q]) if h >= 0]
        return reads[r, q]

    found: dict[str, list] = {}
    for tree in trees:
        before = _heap_tokens([index[t] for t in tokens(tree)], model.tree_len) + [0]  # the empty register reads PAD
        for event, after in successors(tree, tuple(rules), max_size):
            want = _heap_tokens([index[t] for t in tokens(after)], model.tree_len)
            wrong = {h for j, h, i in read_by(rules.index(event.rule), heap_index(event.path)) if before[i] != want[j]}
            tally = found.setdefault(str(event), [0, 0, set()])
            tally[0] += not wrong
            tally[1] += 1
            tally[2] |= wrong
    return [TableMoves(e, right, n, tuple(sorted(heads))) for e, (right, n, heads) in sorted(found.items())]

"""A register per variable: the registers arch on a programs dataset.

The state is eight registers of width W, register i holding variable ``v{i}``'s value as that
value's embedding (a learned table of V rows, each rescaled to norm sqrt(W)). A start state writes
register i with its value. A statement ``v_t = op(a_1 … a_4)`` (operands padded with ``pad``, as
``chains.programs.domain.ProgramsDomain.event_tokens`` writes it) acts in three parts:

1. **Read by name.** Each operand token queries a pool of candidates, the eight registers, the V
   constants (the value embeddings themselves) and an empty one (zero, read by ``pad``), by the
   cosine of the token's learned query to the candidates' learned keys, times a learned sharpness.
   With ``moves="hard"`` an operand reads exactly its top candidate and the keys learn through the
   softmax's gradient (straight-through, as the rewrite registers' hard moves); ``soft`` reads the
   softmax mixture.
2. **One shared operation network** computes the new value from the operation's embedding and the
   four values read: a ReLU network of two hidden layers (HIDDEN * W wide) giving logits over the
   V values, the value written being the softmax mixture of the value embeddings (hard: the top
   value, straight-through). Two hidden layers express every operation of both machines exactly,
   the conditional included (tests/test_variables.py sets one by hand).
3. **Write by name.** The target's query attends to the eight registers' keys; the register it
   picks (hard: exactly one) takes the new value, the others keep theirs, and every register is
   rescaled to norm sqrt(W) after the write.

Under hard reads and writes the registers only ever hold value embeddings, copied: a tracker whose
keys and operation network are right on every statement is right after any number of them.

The view the readout reads and the objectives compare is every register's LayerNorm, flattened
(8 * W); the readout, shared by all eight, is one linear map from a register to its variable's value
plus a learned multiple of the register's cosine to each value's content. That tie fixes what a
value's index means: the operation network's choice k writes value k, which reads back as k from the
first step. Without it only the zero state ever starts a program, nothing else names a value's index,
and on the Arithmetic machine the network and the readout settled on a code that gave two values one
reading (docs/experiments/programs.md).
"""
from __future__ import annotations

import math

import torch
import torch.nn as nn

from chains.programs.domain import EVENT_WIDTH, ProgramsDomain
from chains.programs.syntax import MACHINE_VALUES, VARIABLES, Machine
from tracker.domain_data import DomainVocab
from tracker.models import ModelConfig, Recurrent, parsed_rows

HIDDEN = 8  # the operation network's hidden layers are HIDDEN * W wide
OPERANDS = EVENT_WIDTH - 2  # operand slots of a statement's tokens (after the target and the operation)
BETA_INIT = 10.0  # the reads' and writes' sharpness at init (scores are beta * cosine)
TIE_INIT = 10.0  # the readout's tie at init (a register's logit for value k: tie * its cosine to k's content)
START, STATEMENT = 1, 2  # item kinds (0: padding)


def programs_vocab(vocab_size: int, n_out: int, tree_len: int) -> DomainVocab | None:
    """The programs vocabulary a model of these dimensions reads, or None when they are not a
    programs dataset's: one readout position per variable and the vocabulary of the machine whose
    values are the readout's classes. (A rewrite readout has an odd number of positions, a tree's
    tokens or a heap's, never the eight variables.)"""
    values = n_out - 1
    if tree_len != VARIABLES or values not in MACHINE_VALUES:
        return None
    domain = ProgramsDomain(Machine(values))
    vocab = DomainVocab(values, domain.vocabulary(), domain.name)
    return vocab if vocab.size == vocab_size else None


def straight_through(weights: torch.Tensor) -> torch.Tensor:
    """(..., S) softmax weights -> the one-hot of their top entry forward, their gradient backward."""
    hard = nn.functional.one_hot(weights.argmax(-1), weights.shape[-1]).to(weights.dtype)
    return hard + (weights - weights.detach())


class VariableTracker(Recurrent):
    """One register per variable, read and written by name (module docstring). The state is
    w (H, 8, W); item 0 (padding) leaves it unchanged."""

    def __init__(self, config: ModelConfig, item_tokens: torch.Tensor, vocab_size: int, n_out: int,
                 tree_len: int) -> None:
        super().__init__(config, item_tokens, vocab_size, n_out, tree_len)
        vocab = programs_vocab(vocab_size, n_out, tree_len)
        if vocab is None:
            raise ValueError("a register per variable reads a programs dataset's vocabulary: "
                             f"{vocab_size} tokens, {n_out} output ids and {tree_len} positions are not one")
        w, values = config.width, vocab.classes
        index = vocab.index()
        self.values = values
        self._kind = {index[f"c{k}"]: START for k in range(values)} | {index[f"v{i}"]: STATEMENT
                                                                      for i in range(VARIABLES)}
        self._const = {index[f"c{k}"]: k for k in range(values)}
        self._pad = index["pad"]
        self._ops = {index[op] for op in Machine(values).ops}
        self._operands = {index[f"v{i}"] for i in range(VARIABLES)} | set(self._const) | {self._pad, 0}
        self.value = nn.Embedding(values, w)  # a value's register content (rescaled to norm sqrt(W))
        self.query = nn.Embedding(vocab_size, w)  # a name's (or constant's, or pad's) query
        self.op = nn.Embedding(vocab_size, w)  # an operation's input to the network
        self.keys = nn.Parameter(torch.randn(VARIABLES + values + 1, w))  # registers, constants, empty
        self.log_beta = nn.Parameter(torch.tensor(math.log(BETA_INIT)))
        hidden = HIDDEN * w
        self.net = nn.Sequential(nn.Linear((1 + OPERANDS) * w, hidden), nn.ReLU(), nn.Linear(hidden, hidden),
                                 nn.ReLU(), nn.Linear(hidden, values))
        self.ln_out = nn.LayerNorm(w)
        self.head = nn.Linear(w, n_out)  # one readout for every register
        # the readout's tie to the value contents: a register holding value k reads as k from the
        # first step (module docstring)
        self.tie = nn.Parameter(torch.tensor(TIE_INIT))
        # P, saved with the weights: load_run rebuilds the model from it
        self.register_buffer("positions", torch.tensor(tree_len), persistent=True)
        kind, start, event = self._parse(item_tokens.tolist())
        self.register_buffer("item_kind", kind, persistent=False)  # (I,)
        self.register_buffer("item_start", start, persistent=False)  # (I, 8) a start's values
        self.register_buffer("item_event", event, persistent=False)  # (I, 6) a statement's token ids
        self._init_weights()
        for layer in self.net:  # PyTorch's own init for the ReLU network (the 0.02 normal starves it)
            if isinstance(layer, nn.Linear):
                layer.reset_parameters()
        # every name's (constant's, pad's) query starts at its candidate's key, so that each reads
        # and writes its own register from the first step: hard reads from a random matching do not
        # find it (docs/experiments/programs.md); both stay learned
        named = [index[f"v{i}"] for i in range(VARIABLES)] + [index[f"c{k}"] for k in range(values)] + [self._pad]
        with torch.no_grad():
            self.query.weight[named] = self.keys
        self._rows: dict[tuple[int, ...], tuple[int, list[int], list[int]]] = {}  # parsed token rows (read)

    @property
    def view_width(self) -> int:
        return VARIABLES * self.config.width

    def _parse_row(self, row: list[int]) -> tuple[int, list[int], list[int]]:
        """One item's token ids -> (kind, start values (8), statement tokens (6))."""
        kind = self._kind.get(row[0], 0) if row else 0
        if kind == START and len(row) >= VARIABLES and all(t in self._const for t in row[:VARIABLES]) \
                and not any(row[VARIABLES:]):
            return START, [self._const[t] for t in row[:VARIABLES]], [self._pad] * EVENT_WIDTH
        if (kind == STATEMENT and len(row) >= EVENT_WIDTH and row[1] in self._ops
                and all(t in self._operands for t in row[2:EVENT_WIDTH]) and not any(row[EVENT_WIDTH:])):
            return STATEMENT, [0] * VARIABLES, [t if t else self._pad for t in row[:EVENT_WIDTH]]
        if not any(row):
            return 0, [0] * VARIABLES, [self._pad] * EVENT_WIDTH
        raise ValueError("an item is neither a start state nor a statement of the machine")

    def items_changed(self, item_tokens: torch.Tensor) -> None:
        kind, start, event = self._parse(item_tokens.tolist())
        device = item_tokens.device
        self.item_kind, self.item_start, self.item_event = kind.to(device), start.to(device), event.to(device)

    def _parse(self, rows: list[list[int]]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        parsed = [self._parse_row(row) for row in rows]
        return (torch.tensor([p[0] for p in parsed]), torch.tensor([p[1] for p in parsed]).view(len(rows), VARIABLES),
                torch.tensor([p[2] for p in parsed]).view(len(rows), EVENT_WIDTH))

    def _normed(self, w: torch.Tensor) -> torch.Tensor:
        return w * (math.sqrt(w.shape[-1]) / w.norm(dim=-1, keepdim=True).clamp(min=1e-6))

    def _contents(self) -> torch.Tensor:
        """(V, W) every value's register content."""
        return self._normed(self.value.weight)

    def _attend(self, tokens: torch.Tensor, keys: torch.Tensor) -> torch.Tensor:
        """Token ids (M, A), keys (S, W) -> each token's weights over the keys (M, A, S): the
        softmax of beta * cosine, or under hard moves its one-hot top, straight-through."""
        q = nn.functional.normalize(self.query(tokens), dim=-1)  # (M, A, W)
        scores = (q @ nn.functional.normalize(keys, dim=-1).T) * self.log_beta.exp()  # (M, A, S)
        weights = scores.softmax(-1)
        return straight_through(weights) if self.config.moves == "hard" else weights

    def _statement(self, w: torch.Tensor, event: torch.Tensor, soft: bool = False):
        """Registers w (M, 8, W) after each row's statement, given by its tokens (M, 6); with
        ``soft`` also the registers as they would be with the value written as its softmax mixture
        (the move readout's: under hard writes it keeps a gradient toward the right value)."""
        m, _, width = w.shape
        contents = self._contents()  # (V, W)
        pool = torch.cat([w, contents.expand(m, -1, -1), w.new_zeros(m, 1, width)], 1)  # (M, 8 + V + 1, W)
        reads = self._attend(event[:, 2:], self.keys) @ pool  # (M, 4, W)
        logits = self.net(torch.cat([self.op(event[:, 1]), reads.flatten(1)], -1))  # (M, V)
        chosen = logits.softmax(-1)
        hard = self.config.moves == "hard"
        mixed = self._normed(chosen @ contents) if soft or not hard else None  # (M, W): the value as its mixture
        new = straight_through(chosen) @ contents if hard else mixed  # hard: exactly one value's content
        write = self._attend(event[:, :1], self.keys[:VARIABLES])[:, 0].unsqueeze(-1)  # (M, 8, 1)
        after = self._normed(w * (1 - write) + write * new.unsqueeze(1))
        if not soft:
            return after
        return after, self._normed(w * (1 - write) + write * mixed.unsqueeze(1))

    def _take(self, w: torch.Tensor, kind: torch.Tensor, start: torch.Tensor, event: torch.Tensor,
              soft: bool = False):
        """Registers w (M, 8, W) after one more item per row (kind 1 a start state, 2 a statement, 0
        padding). A start is written over whatever the row held. With ``soft``, a pair: the
        registers, and the same with each statement's value written as its mixture."""
        starts = int((kind == START).sum())  # one read of the device for the step
        if starts == len(kind):
            out = self._normed(self.value(start))
            return (out, out) if soft else out
        kind = kind.view(-1, 1, 1)
        moved = self._statement(w, event, soft)
        outs = [torch.where(kind == STATEMENT, m, w) for m in (moved if soft else (moved,))]
        if starts:
            outs = [torch.where(kind == START, self._normed(self.value(start)), o) for o in outs]
        return tuple(outs) if soft else outs[0]

    def _run(self, items: torch.Tensor, keep_all: bool, soft: bool = False):
        """Items (H, T), every history's start first -> (the views (H, 8 * W) after each step when
        ``keep_all``, the registers (H, 8, W) at the end[, with ``soft`` the views with each step's
        value written as its mixture])."""
        w = self._normed(self.value(self.item_start[items[:, 0]]))
        views = [self.view(w)] if keep_all else []
        mixed = [self.view(w)]
        for t in range(1, items.shape[1]):
            it = items[:, t]
            w = self._take(w, self.item_kind[it], self.item_start[it], self.item_event[it], soft)
            if soft:
                w, read = w
                mixed.append(self.view(read))
            if keep_all:
                views.append(self.view(w))
        return (views, w, mixed) if soft else (views, w)

    def forward(self, items: torch.Tensor, soft_reads: bool = False):
        """(views (H, T, 8 * W), registers (H, 8, W)); with ``soft_reads`` also the views with each
        statement's value written as its softmax mixture (H, T, 8 * W), for the move-readout term."""
        if soft_reads:
            views, w, mixed = self._run(items, keep_all=True, soft=True)
            return torch.stack(views, 1), w, torch.stack(mixed, 1)
        views, w = self._run(items, keep_all=True)
        return torch.stack(views, 1), w

    def final_view(self, items: torch.Tensor) -> torch.Tensor:
        return self.view(self._run(items, keep_all=False)[1])

    def advance(self, state: torch.Tensor, rows: torch.Tensor, items: torch.Tensor) -> torch.Tensor:
        return self.view(self._take(state[rows], self.item_kind[items], self.item_start[items],
                                    self.item_event[items]))

    def readout(self, z: torch.Tensor) -> torch.Tensor:
        registers = z.unflatten(-1, (VARIABLES, self.config.width))  # (..., 8, W), each one's LayerNorm
        shown = nn.functional.normalize(self.ln_out(self._contents()), dim=-1)  # (V, W) each value as a register shows it
        tied = self.tie * nn.functional.normalize(registers, dim=-1) @ shown.T  # (..., 8, V)
        return self.head(registers) + nn.functional.pad(tied, (1, 0))  # (..., 8, V_out); class 0 (PAD) untied

    # the state machine (tracker.domain_run)
    def initial_state(self, n: int) -> torch.Tensor:
        """Registers (n, 8, W) of the zero state, where every program starts."""
        return self._normed(self.value(torch.zeros(n, VARIABLES, dtype=torch.long, device=self.keys.device)))

    def read(self, w: torch.Tensor, toks: torch.Tensor) -> torch.Tensor:
        parsed = parsed_rows(self._rows, self._parse_row, toks)
        device = w.device
        kind = torch.tensor([p[0] for p in parsed], device=device)
        start = torch.tensor([p[1] for p in parsed], device=device).view(len(parsed), VARIABLES)
        event = torch.tensor([p[2] for p in parsed], device=device).view(len(parsed), EVENT_WIDTH)
        return self._take(w, kind, start, event)

    def view(self, w: torch.Tensor) -> torch.Tensor:
        return self.ln_out(w).flatten(-2)  # (..., 8 * W)

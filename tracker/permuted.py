"""A register per position, moved by the domain's permutations: the registers arch on a domain whose
events permute its positions' contents (``chains.registers.PermutedPositions``: the groups).

The state is P registers of width W, one per readout position (P = ``len(domain.readout())``). A
start state, read as one token per position, writes register i with its i-th token's embedding (a
learned table, each row rescaled to norm sqrt(W)). An event moves the registers by the permutation
the domain gives for its tokens (``position_moves``): register i takes what register p[i] held, a
gather. The permutations are asked of the domain once per distinct item and never learned; no
register is ever blended, so a readout right on every start token's embedding is right after any
number of events.

The view the readout reads and the objectives compare is every register's LayerNorm, flattened
(P * W); the readout is one linear map from a register to the class at its position, shared by all
positions. What is learned: the start tokens' embedding, the LayerNorm and the readout.

Of the settings of the learned moves elsewhere, none changes these: a move reads exactly one register
whatever ``moves`` says, the move readout reads the views themselves and the sharpness term is 0;
``tables`` other than free, with no tables to tie, is refused.
"""
from __future__ import annotations

import math

import torch
import torch.nn as nn

from chains.protocol import StateDomain
from chains.registers import PermutedPositions, is_permutation
from tracker.domain_data import DomainVocab
from tracker.models import ModelConfig, Recurrent, parsed_rows

START, EVENT = 1, 2  # item kinds (0: padding)


class PermutedRegisters(Recurrent):
    """One register per position, moved by the event's permutation (module docstring). The state is
    w (H, P, W); item 0 (padding) leaves it unchanged. Built as every arch is, and told the domain."""

    def __init__(self, config: ModelConfig, item_tokens: torch.Tensor, vocab_size: int, n_out: int, tree_len: int,
                 *, domain: StateDomain) -> None:
        super().__init__(config, item_tokens, vocab_size, n_out, tree_len)
        if not isinstance(domain, PermutedPositions):
            raise ValueError(f"the {domain.name} domain's events do not permute its positions (position_moves)")
        vocab = DomainVocab(max(domain.readout()), domain.vocabulary(), domain.name)
        if (vocab.size, vocab.n_out, len(domain.readout())) != (vocab_size, n_out, tree_len):
            raise ValueError(f"a register per position reads the {domain.name} domain's vocabulary and readout: "
                             f"{vocab_size} tokens, {n_out} output ids and {tree_len} positions are not its")
        if config.tables != "free":
            raise ValueError(f"the {domain.name} domain's registers move by its permutations: they have no tables "
                             f"to tie (tables {config.tables})")
        self._domain, self._tokens = domain, vocab.tokens
        w = config.width
        self.content = nn.Embedding(vocab_size, w)  # a start token's register content (rescaled to norm sqrt(W))
        self.ln_out = nn.LayerNorm(w)
        self.head = nn.Linear(w, n_out)  # one readout for every register
        # P, saved with the weights: a run is rebuilt from it
        self.register_buffer("positions", torch.tensor(tree_len), persistent=True)
        kind, start, moves = self._parse(item_tokens.tolist())
        self.register_buffer("item_kind", kind, persistent=False)  # (I,) 1 a start, 2 an event, 0 padding
        self.register_buffer("item_start", start, persistent=False)  # (I, P) a start's token ids by position
        self.register_buffer("item_moves", moves, persistent=False)  # (I, P) an event's permutation
        self._init_weights()
        self._rows: dict[tuple[int, ...], tuple[int, list[int], list[int]]] = {}  # parsed token rows (read)

    @property
    def view_width(self) -> int:
        return self.tree_len * self.config.width

    def _parse_row(self, row: list[int]) -> tuple[int, list[int], list[int]]:
        """One item's token ids (0-padded) -> (kind, start token ids by position, permutation)."""
        positions, name = self.tree_len, self._domain.name
        unmoved = list(range(positions))
        ids = [t for t in row if t != 0]
        if not ids:
            return 0, [0] * positions, unmoved
        if max(ids) >= len(self._tokens):
            raise ValueError(f"an item names a token id outside the {name} domain's vocabulary")
        tokens = [self._tokens[t] for t in ids]
        moves = self._domain.position_moves(tokens)
        if moves is not None:
            if not is_permutation(moves, positions):
                raise ValueError(f"the {name} domain's position_moves gave {list(moves)!r:.60} for "
                                 f"{' '.join(tokens)!r:.40}: not a permutation of its {positions} positions")
            return EVENT, [0] * positions, list(moves)
        if len(ids) != positions:
            raise ValueError(f"an item is neither an event of the {name} domain nor a start state read as one "
                             f"token per position ({positions})")
        return START, ids, unmoved

    def _parse(self, rows: list[list[int]]) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        parsed = [self._parse_row(row) for row in rows]
        return (torch.tensor([p[0] for p in parsed]), torch.tensor([p[1] for p in parsed]).view(len(rows), -1),
                torch.tensor([p[2] for p in parsed]).view(len(rows), -1))

    def _normed(self, w: torch.Tensor) -> torch.Tensor:
        return w * (math.sqrt(w.shape[-1]) / w.norm(dim=-1, keepdim=True).clamp(min=1e-6))

    def _take(self, w: torch.Tensor, kind: torch.Tensor, start: torch.Tensor, moves: torch.Tensor) -> torch.Tensor:
        """Registers w (M, P, W) after one more item per row: kind (M,), start token ids (M, P) and
        permutations (M, P) (the identity on a start and on padding). A start is written over whatever
        the row held; an event's row i takes row moves[i]."""
        moved = w.gather(1, moves.unsqueeze(-1).expand(-1, -1, w.shape[-1]))  # (M, P, W)
        return torch.where((kind == START).view(-1, 1, 1), self._normed(self.content(start)), moved)

    def _run(self, items: torch.Tensor, keep_all: bool) -> tuple[list[torch.Tensor], torch.Tensor]:
        """Items (H, T) -> (the views (H, P * W) after each step when ``keep_all``, the registers (H, P, W)
        at the end)."""
        w = self.initial_state(items.shape[0])
        views = []
        for t in range(items.shape[1]):
            it = items[:, t]
            w = self._take(w, self.item_kind[it], self.item_start[it], self.item_moves[it])
            if keep_all:
                views.append(self.view(w))
        return views, w

    def forward(self, items: torch.Tensor, soft_reads: bool = False):
        """(views (H, T, P * W), registers (H, P, W)); with ``soft_reads`` (the move readout) the views
        once more: the moves are exact, read as they are."""
        views, w = self._run(items, keep_all=True)
        z = torch.stack(views, 1)
        return (z, w, z) if soft_reads else (z, w)

    def final_view(self, items: torch.Tensor) -> torch.Tensor:
        return self.view(self._run(items, keep_all=False)[1])

    def advance(self, state: torch.Tensor, rows: torch.Tensor, items: torch.Tensor) -> torch.Tensor:
        return self.view(self._take(state[rows], self.item_kind[items], self.item_start[items],
                                    self.item_moves[items]))

    def readout(self, z: torch.Tensor) -> torch.Tensor:
        return self.head(z.unflatten(-1, (self.tree_len, self.config.width)))  # (..., P, V_out)

    def table_entropy(self) -> torch.Tensor:
        """0: no tables, the moves are the domain's (the sharpness term has nothing to sharpen)."""
        return self.head.weight.new_zeros(())

    # the state machine (tracker.domain_run)
    def initial_state(self, n: int) -> torch.Tensor:
        """Registers (n, P, W) holding the padding token's content until a start state is read."""
        return self._normed(self.content(torch.zeros(n, self.tree_len, dtype=torch.long,
                                                     device=self.head.weight.device)))

    def read(self, w: torch.Tensor, toks: torch.Tensor) -> torch.Tensor:
        parsed = parsed_rows(self._rows, self._parse_row, toks)
        device = w.device
        kind = torch.tensor([p[0] for p in parsed], device=device)
        start = torch.tensor([p[1] for p in parsed], device=device).view(len(parsed), -1)
        moves = torch.tensor([p[2] for p in parsed], device=device).view(len(parsed), -1)
        return self._take(w, kind, start, moves)

    def view(self, w: torch.Tensor) -> torch.Tensor:
        return self.ln_out(w).flatten(-2)  # (..., P * W)

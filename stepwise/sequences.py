"""What the step-by-step model reads and writes, whatever the domain: one token sequence per history.

A history's sequence, in the ids of its vocabulary (``stepwise.data.StepwiseVocab`` on rewrite chains,
``stepwise.domain_data.DomainStepVocab`` on any other domain):

    the start's tokens, EOS,
    then per event: its tokens, SEP, the state after it, EOS

The start and the events are given; the model writes every state after a SEP and the EOS that closes
it: those are the *written* positions, and the training loss counts them only (``written_loss``).
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import torch
import torch.nn.functional as F

SEP, EOS = "<sep>", "<eos>"
PAD_ID = 0  # padding, after a sequence's end


def written_sequence(vocab, chain: tuple, states: Sequence[Sequence[int]]
                     ) -> tuple[list[int], list[bool]]:
    """(token ids, written) of a history's sequence, the state after each event given as the token ids
    written for it (the truth, or a model's own writing, right or wrong), one per event: written[i]
    says the model writes token i (a state's token or its EOS)."""
    ids = [*vocab.start_ids(chain[0]), vocab.eos]
    written = [False] * len(ids)
    for event, state_ids in zip(chain[1], states, strict=True):
        given = [*vocab.event_ids(event), vocab.sep]
        state = [*state_ids, vocab.eos]
        ids += given + state
        written += [False] * len(given) + [True] * len(state)
    return ids, written


def written_states(vocab, ids: Sequence[int]) -> list[list[int]]:
    """The token ids written after each SEP of a sequence, up to (not including) its EOS."""
    states, current = [], None
    for i in ids:
        if i == vocab.sep:
            current = []
        elif i == vocab.eos and current is not None:
            states.append(current)
            current = None
        elif current is not None:
            current.append(i)
    return states


def written_loss(logits: torch.Tensor, ids: torch.Tensor, written: torch.Tensor) -> torch.Tensor:
    """Mean cross-entropy of the next token over the written positions only. ``logits`` (B, L, V)
    at every position; ``ids`` and ``written`` (B, L): the logits at i predict token i + 1, counted
    where token i + 1 is written (a state's token or EOS), never where it is given (an event, SEP)."""
    target, counted = ids[:, 1:], written[:, 1:]  # (B, L - 1)
    chosen = logits[:, :-1][counted]  # (M, V) the predictions of written tokens
    return F.cross_entropy(chosen, target[counted])


def padded(sequences: Sequence[tuple[list[int], list[bool]]]) -> tuple[torch.Tensor, torch.Tensor]:
    """(ids, written) per history -> (N, L) token ids padded with PAD_ID and (N, L) written flags."""
    length = max(len(ids) for ids, _ in sequences)
    ids_out = torch.full((len(sequences), length), PAD_ID, dtype=torch.long)
    written_out = torch.zeros(len(sequences), length, dtype=torch.bool)
    for n, (ids, written) in enumerate(sequences):
        ids_out[n, : len(ids)] = torch.tensor(ids)
        written_out[n, : len(ids)] = torch.tensor(written)
    return ids_out, written_out


@dataclass(frozen=True)
class Sequences:
    """B chains' sequences, padded with PAD_ID after each one's end."""

    ids: torch.Tensor  # (B, L) token ids
    written: torch.Tensor  # (B, L) bool: the token is one the model writes


def sample_sequences(data, chains: int, generator: torch.Generator) -> Sequences:
    """B = ``chains`` training sequences drawn with ``generator`` (on the CPU: the same batches on
    every device), trimmed to the longest of them."""
    rows = torch.randint(0, data.train_ids.shape[0], (chains,), generator=generator)
    ids, written = data.train_ids[rows], data.train_written[rows]  # (B, L)
    length = int((ids != PAD_ID).sum(1).max())
    return Sequences(ids[:, :length], written[:, :length])

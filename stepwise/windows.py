"""The state form of the step-by-step model (``context="state"``): before it writes a state it reads
one window, its last written state and the event, never the history behind them, so that it learns
one step s' = f(s, e) in token form.

A window, in the ids of the model's vocabulary (``stepwise.data.StepwiseVocab`` or
``stepwise.domain_data.DomainStepVocab``):

    the state before (as written: ``vocab.state_ids``), EOS, the event's tokens, SEP, the state after it, EOS

It is the stretch of a history's sequence (``stepwise.sequences``) around one event, so its written
positions (the state after and its EOS) and the loss on them (``written_loss``) are the history
form's. The first event's state before is the start written as a state (on rewrite chains the same
tokens as the start), so that every window reads alike. Every window starts at position 0: no
position exceeds one window's length, whatever the history's length.

Training reads each training chain cut into its windows, the true states before and after each
event (``TrainingWindows``); free running runs a history window by window, each window's state
before being what the model wrote in the previous one (``stepwise.evaluate.free_run_windows``).
"""
from __future__ import annotations

from collections.abc import Sequence

import torch

from stepwise.sequences import PAD_ID, Sequences, padded


def window_prompt(vocab, before: Sequence[int], event) -> list[int]:
    """The given tokens of a window: the state before (token ids), EOS, the event's tokens, SEP."""
    return [*before, vocab.eos, *vocab.event_ids(event), vocab.sep]


def window_sequence(vocab, before: Sequence[int], event, after: Sequence[int]) -> tuple[list[int], list[bool]]:
    """(token ids, written) of one window: written[i] says the model writes token i (the state
    after's tokens and its EOS)."""
    given = window_prompt(vocab, before, event)
    return [*given, *after, vocab.eos], [False] * len(given) + [True] * (len(after) + 1)


def chain_windows(vocab, chain: tuple, states: Sequence) -> list[tuple[list[int], list[bool]]]:
    """One window per event of ``chain`` (a start and its events), ``states`` the true state after
    each event: window k reads the state before event k and writes the state after it."""
    ids = [vocab.state_ids(s) for s in (chain[0], *states)]
    return [window_sequence(vocab, ids[k], event, ids[k + 1]) for k, event in enumerate(chain[1])]


class TrainingWindows:
    """Every window of a dataset's training chains, padded once (``ids``, ``written``: (W, Lw));
    a step draws as many windows as ``batch_chains`` whole chains hold on average."""

    def __init__(self, data) -> None:
        chains = data.train_chains()
        windows = [w for chain in chains for w in chain_windows(data.vocab, chain, data.replay(chain))]
        self.ids, self.written = padded(windows)  # (W, Lw) each
        self.per_chain = max(1, round(len(windows) / len(chains)))  # the mean events of a training chain

    def sample(self, chains: int, generator: torch.Generator) -> Sequences:
        """``chains`` x ``per_chain`` windows drawn uniformly with ``generator`` (on the CPU: the
        same batches on every device), trimmed to the longest of them."""
        rows = torch.randint(0, self.ids.shape[0], (chains * self.per_chain,), generator=generator)
        ids, written = self.ids[rows], self.written[rows]  # (B, Lw)
        length = int((ids != PAD_ID).sum(1).max())
        return Sequences(ids[:, :length], written[:, :length])

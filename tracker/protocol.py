"""The model protocol: what a tracker is to the rest of the stack, built-in arch or one's own.

A tracker reads a history one item at a time (a start, then one event per step) and carries a
state. Everything past training (``tracker.inference``, ``tracker.domain_run``, the certified
stream, the analyses, the prover's imagination) steps a model through four calls only:

- ``initial_state(n)`` -> state (n, ...): the state before any item, for n histories;
- ``read(state, toks)`` -> state (M, ...): each row after one more item, given by its token ids
  toks (M, E), 0-padded (the start item first, then one event item per step);
- ``view(state)`` -> z (..., view_width): what the readout reads and the objectives compare; a
  state that keeps its shape is viewed with leading dimensions too (the stream's (steps, N, ...));
- ``readout(z)`` -> logits (..., P, n_out): a class per readout position.

A state is one tensor with a row per history, so that callers batch, select and repeat states
with plain tensor indexing. Its shape is fixed from step to step, except along a dimension that
is 0 in ``initial_state``: that one grows by one per item read (the transformer's state is its
history of pooled items, (n, T, C), T growing), and states in one batch then share their length.

Training reads the model as a ``torch.nn.Module`` too: ``forward(items)`` -> (z (H, T,
view_width) after every item, the state at the end) over the dataset's item ids (H, T) (0 is
padding, at the end), ``final_view(items)`` -> (H, view_width), ``advance(state, rows, items)``
-> the view (M, view_width) of ``state``'s ``rows`` after one more item each, and the item
embedding ``embed`` (``tracker.models.ItemEmbedding``, which NextLat pools). ``Stepped`` derives
those three from the four stepping calls, so a model of one's own writes only ``__init__``,
``initial_state``, ``read`` and ``view`` (docs/guide/bring-your-own-model.md).

Optional heads: a model may have more (the registers' ``table_entropy``, a transformer's dropout);
the training options that use them name the archs they are for.
"""
from __future__ import annotations

from typing import Protocol, runtime_checkable

import torch

from tracker.models import ModelConfig, Tracker

# what every model's class is built with, built-in or one's own: the model's settings, the
# dataset's item tokens (I, E) (``ItemEmbedding``'s table), the vocabulary's size, the readout's
# classes n_out (PAD first) and its positions P
CONSTRUCTOR = "(config: ModelConfig, item_tokens: Tensor (I, E), vocab_size: int, n_out: int, tree_len: int)"
STEPPING = ("initial_state", "read", "view", "readout")  # what every caller past training steps a model by
TRAINING = ("forward", "final_view", "advance")  # and what training reads besides


@runtime_checkable
class TrackerModel(Protocol):
    """A tracker as every command reads it (the module's docstring)."""

    tree_len: int  # P: readout positions
    n_out: int  # the readout's classes, PAD (0) included

    @property
    def view_width(self) -> int: ...

    def initial_state(self, n: int) -> torch.Tensor: ...

    def read(self, state: torch.Tensor, toks: torch.Tensor) -> torch.Tensor: ...

    def view(self, state: torch.Tensor) -> torch.Tensor: ...

    def readout(self, z: torch.Tensor) -> torch.Tensor: ...


def missing_methods(cls: type) -> list[str]:
    """The protocol's calls ``cls`` lacks (stepping and training), in order; [] when it has them all."""
    return [name for name in (*STEPPING, *TRAINING) if not callable(getattr(cls, name, None))]


def growing_dims(model: TrackerModel) -> tuple[int, ...]:
    """The dimensions of a state (after the row's) that grow by one per item: those of size 0 before
    any item."""
    with torch.no_grad():
        shape = model.initial_state(1).shape[1:]
    return tuple(d for d, size in enumerate(shape) if size == 0)


def state_shape(model: TrackerModel) -> tuple[int, ...]:
    """One history's state shape, -1 where it grows with the history."""
    with torch.no_grad():
        return tuple(-1 if size == 0 else size for size in model.initial_state(1).shape[1:])


def fits(state: object, shape: tuple[int, ...]) -> bool:
    """Whether ``state`` is a tensor of ``shape`` (``state_shape``'s: -1 any length)."""
    return isinstance(state, torch.Tensor) and state.dim() == len(shape) and all(
        e == -1 or e == s for e, s in zip(shape, state.shape))


def shape_text(shape: tuple[int, ...]) -> str:
    """``state_shape``'s shape as a message shows it: (T, 16) for (-1, 16)."""
    names = ["T" if e == -1 else str(e) for e in shape]
    return f"({', '.join(names)}{',' if len(names) == 1 else ''})"


class Stepped(Tracker):
    """A tracker defined by its stepping alone: a subclass gives ``initial_state``, ``read`` and
    ``view`` (and builds its layers in ``__init__``, calling this one first); training's ``forward``,
    ``final_view`` and ``advance`` read the dataset's items through them, one step at a time.
    The state must keep its shape from step to step (rows whose history has ended keep theirs)."""

    def __init__(self, config: ModelConfig, item_tokens: torch.Tensor, vocab_size: int, n_out: int,
                 tree_len: int) -> None:
        super().__init__(config, item_tokens, vocab_size, n_out, tree_len)

    def _steps(self, items: torch.Tensor, keep_all: bool) -> tuple[list[torch.Tensor], torch.Tensor]:
        """Items (H, T) -> (the views (H, view_width) after every step when ``keep_all``, the state
        at each history's end (H, ...)); padding items (id 0) leave a row as it was."""
        w = self.initial_state(items.shape[0])
        views = []
        for t in range(items.shape[1]):
            live = items[:, t] != 0  # (H,)
            moved = self.read(w, self.embed.item_tokens[items[:, t]])  # (H, ...): padding rows discarded below
            w = torch.where(live.view(-1, *([1] * (w.dim() - 1))), moved, w)
            if keep_all:
                views.append(self.view(w))
        return views, w

    def forward(self, items: torch.Tensor):
        views, w = self._steps(items, keep_all=True)
        return torch.stack(views, 1), w  # (H, T, view_width), (H, ...)

    def final_view(self, items: torch.Tensor) -> torch.Tensor:
        return self.view(self._steps(items, keep_all=False)[1])

    def advance(self, state: torch.Tensor, rows: torch.Tensor, items: torch.Tensor) -> torch.Tensor:
        return self.view(self.read(state[rows], self.embed.item_tokens[items]))

    def initial_state(self, n: int) -> torch.Tensor:
        raise NotImplementedError

    def read(self, state: torch.Tensor, toks: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError

    def view(self, state: torch.Tensor) -> torch.Tensor:
        raise NotImplementedError

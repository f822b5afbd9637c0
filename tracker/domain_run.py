"""A trained tracker of a ``chains.protocol.StateDomain`` dataset (programs) as a state
machine: read start states, move by events, decode states, and score targets.

    from tracker import load_run                 # a programs run comes back as a DomainRun
    run = load_run("runs/programs-bits-fast")
    state = run.encode("00000000")
    state = run.step(state, "v3 = 1")
    run.decode(state)                            # "00010000" for a tracker exact on it
    state = run.run("00000000", ["v3 = 1", "v2 = not v3"], check=True)   # replayed by the machine first
    run.views([("00000000", ["v3 = 1"]), ("00010000", [])])          # (2, C): what the readout reads

The same calls as ``tracker.inference.TrackedRun``, states and events as text or the domain's
values; ``encode_batch``, ``step_batch`` and ``decode_batch`` move many states at once (the
prover's beam). Every arch is stepped through the model protocol (``tracker.protocol``:
``initial_state``, ``read``, ``view``, ``readout``), one's own included: the slot recurrence and the
registers (on programs a register per variable, ``tracker.variables``; on a domain whose events permute
its positions a register per position, ``tracker.permuted``) carry a state of one shape;
a transformer's state is its history of pooled items (N, T, C), so the states of one batch have
read equally many items (as the stream's chains and the prover's beam have). Events are embedded
from their tokens, so any statement of the machine can be read, not only those of the dataset.
"""
from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

import torch

from chains.domains import domain_of_manifest
from chains.manifest import DOMAIN_FORMAT, PROGRAMS_FORMAT, DatasetError
from chains.protocol import EventRefused, StateDomain
from tracker.build import arch_importable, build_model
from tracker.config import TrainConfig
from tracker.domain_data import DomainVocab
from tracker.protocol import TrackerModel, fits, shape_text, state_shape
from training.checkpoint import RunCheckpoint, RunUnavailable


class DomainRun:
    """A tracker of ``domain``: one state a call (``encode``, ``step``, ``decode``, ``run``), or many
    (``*_batch``: ``w`` is (N, …) for N histories)."""

    def __init__(self, model: TrackerModel, domain: StateDomain, vocab: DomainVocab, item_len: int, identity: dict,
                 device: str = "cpu") -> None:
        self.model, self.domain, self.vocab, self.item_len = model, domain, vocab, item_len
        self.identity, self.device = identity, device
        self._index = vocab.index()

    def describe(self) -> dict:
        return dict(self.identity)

    def _items(self, token_lists: Sequence[Sequence[str]]) -> torch.Tensor:
        """(N, E) token ids of N items."""
        rows = []
        for toks in token_lists:
            if len(toks) > self.item_len:
                raise ValueError(f"an item of {len(toks)} tokens is longer than the tracker reads ({self.item_len})")
            unknown = [t for t in toks if t not in self._index]
            if unknown:
                raise ValueError(f"{unknown[0]!r:.40} is not a token of the {self.domain.name} domain: not a start "
                                 "state or an event of it")
            ids = [self._index[t] for t in toks]
            rows.append(ids + [0] * (self.item_len - len(ids)))
        return torch.tensor(rows, dtype=torch.long, device=self.device)

    def _state(self, state):
        return self.domain.parse_state(state) if isinstance(state, str) else state

    def _event(self, event):
        return self.domain.parse_event(event) if isinstance(event, str) else event

    def encode(self, start) -> torch.Tensor:
        """The state after reading a start state (text or the domain's value)."""
        return self.encode_batch([self._state(start)])[0]

    def step(self, state: torch.Tensor, event) -> torch.Tensor:
        """``state`` moved by one event (text or the domain's value)."""
        return self.step_batch(self._carried(state).unsqueeze(0), [self._event(event)])[0]

    def decode(self, state: torch.Tensor) -> str | None:
        """The domain state ``state`` stands for, as text; None when its readout names no state."""
        decoded = self.decode_batch(self._carried(state).unsqueeze(0))[0]
        return None if decoded is None else self.domain.state_text(decoded)

    def _carried(self, state: object) -> torch.Tensor:
        """``state`` when it is what ``encode`` or ``step`` returned; TypeError saying what one is."""
        shape = state_shape(self.model)
        if not fits(state, shape):
            given = f"a tensor of shape {tuple(state.shape)}" if isinstance(state, torch.Tensor) else type(state).__name__
            raise TypeError(f"a state is what encode or step returned (a tensor of shape {shape_text(shape)}), "
                            f"not {given}")
        return state

    def _tokens(self, what: str, value, tokens) -> list[str]:
        """``tokens(value)``: the domain's tokens of a start state or an event; ValueError in one
        line naming ``what`` was expected when ``value`` is not one."""
        try:
            return list(tokens(value))
        except Exception:  # the domain's own code refusing a value it cannot read
            raise ValueError(f"{value!r:.60} is not {what} of the {self.domain.name} domain") from None

    def encode_batch(self, starts: Sequence) -> torch.Tensor:
        """The states (N, …) after reading each start state (text or the domain's values; a whole
        history is read by ``run`` or ``views``)."""
        rows = [self._tokens("a start state", self._state(s), self.domain.start_tokens) for s in starts]
        with torch.no_grad():
            return self.model.read(self.model.initial_state(len(starts)), self._items(rows))

    def step_batch(self, w: torch.Tensor, events: Sequence) -> torch.Tensor:
        """Each state of ``w`` (N, …) moved by its event (N events, text or the domain's values)."""
        rows = [self._tokens("an event", self._event(e), self.domain.event_tokens) for e in events]
        with torch.no_grad():
            return self.model.read(w, self._items(rows))

    def view(self, state: torch.Tensor) -> torch.Tensor:
        """(C,): what the readout reads of one state (the view the Nerode terms compare)."""
        with torch.no_grad():
            return self.model.view(self._carried(state).unsqueeze(0))[0]

    def views(self, histories: Sequence[tuple]) -> torch.Tensor:
        """(N, C): the view after each whole history, each ``(start, events)``."""
        return torch.stack([self.view(self.run(start, events)) for start, events in histories])

    def log_probs(self, w: torch.Tensor) -> torch.Tensor:
        """(N, P, classes): each readout position's log-probabilities over the domain's classes."""
        with torch.no_grad():
            logits = self.model.readout(self.model.view(w))  # (N, P, n_out): PAD, then the classes
            return torch.log_softmax(logits[..., 1:], dim=-1)

    def decode_classes(self, w: torch.Tensor) -> list[list[int]]:
        """Each state's argmax class per readout position."""
        return self.log_probs(w).argmax(-1).tolist()

    def decode_batch(self, w: torch.Tensor) -> list:
        """The domain states ``w`` (N, …) stands for, read off the argmax classes by the domain
        (``state_of_classes``); None where they name no state."""
        return [self._decoded(classes) for classes in self.decode_classes(w)]

    def _decoded(self, classes: list[int]):
        try:
            return self.domain.state_of_classes(classes)
        except ValueError:
            return None

    def run(self, start, events: Sequence, check: bool = False) -> torch.Tensor:
        """The state after a whole history (text or values); with ``check`` the history is first
        replayed with the domain's own rules (EventRefused naming the first that does not apply)."""
        if isinstance(events, str):
            raise TypeError("events is a list of events, not one text")
        start = self._state(start)
        parsed = []
        for k, event in enumerate(events):
            try:
                parsed.append(self._event(event))
            except ValueError as e:
                raise ValueError(f"step {k}: {e}") from None
        events = parsed
        if check:
            state = start
            for k, event in enumerate(events):
                try:
                    state = self.domain.apply(state, event)
                except EventRefused as e:
                    raise EventRefused(f"step {k}: {e}") from None
        state = self.encode(start)
        for event in events:
            state = self.step(state, event)
        return state


def load_domain_run(directory: Path | str, device: str = "cpu", run: RunCheckpoint | None = None) -> DomainRun:
    """The tracker a ``train-tracker`` run on programs or a domain of one's own wrote into ``directory``
    (``run``: its checkpoint, when the caller has read it), of any arch."""
    run = run if run is not None else RunCheckpoint.read(directory, "tracker", TrainConfig)
    trained_on = run.blob.get("identity", {}).get("dataset", {})
    if not isinstance(trained_on.get("domain"), dict):
        raise RunUnavailable(f"tracker {run.run_dir}: trained on rewrite chains; read it with tracker.load_run")
    own = "import" in trained_on["domain"]  # a domain of one's own, named by its import path
    manifest_like = {"format": DOMAIN_FORMAT if own else PROGRAMS_FORMAT, "domain": trained_on["domain"]}
    try:
        domain = domain_of_manifest(manifest_like, str(run.run_dir))
    except DatasetError as e:
        raise RunUnavailable(f"tracker {run.run_dir}: {e}") from None
    vocab = DomainVocab(max(domain.readout()), domain.vocabulary(), domain)
    state = run.blob["model"]
    arch_importable(run)

    def build() -> torch.nn.Module:
        # readout positions: the registers save theirs; the others read them off the readout's rows
        positions = int(state["positions"]) if "positions" in state else state["head.weight"].shape[0] // vocab.n_out
        return build_model(run.config.model, state["embed.item_tokens"], vocab.size, vocab.n_out, positions,
                           domain=vocab.domain)

    model = run.restored_model(build, "its weights do not fit its settings",
                               (KeyError, AttributeError, IndexError, RuntimeError, ValueError))
    item_len = state["embed.item_tokens"].shape[1]  # item_tokens (I, E): E tokens per item
    return DomainRun(model.to(device), domain, vocab, item_len, run.identity(trained_on), device)

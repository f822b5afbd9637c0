"""What a dataset of a domain of one's own holds: its spec and its sampled splits.

``DomainSpec`` decides everything the dataset holds; ``sample_split`` draws one split through the
domain's own ``start_state``, ``sample_events`` and ``sample_partner``, from a generator of its own
(``chains.seeds.split_rng``): the same spec and the same domain give the same histories. Under a
held-out protocol (``chains.imported.holdout``) the training histories and their partners avoid
what is held out and every test history holds it.
"""
from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from chains.holdout import HoldOut
from chains.imported.holdout import HeldOut, avoiding, holding
from chains.protocol import StateDomain
from chains.seeds import split_rng

DEFAULT_TEST_LENGTHS = (16, 64, 256)
DEFAULT_TEST_CHAINS = 64


@dataclass(frozen=True)
class Sample:
    """A history and its partners, each as (start, events)."""

    start: object
    events: tuple
    partners: tuple[tuple[object, tuple], ...]


@dataclass(frozen=True, kw_only=True)
class DomainSpec:
    """Everything that decides a dataset of a domain of one's own."""

    domain: str  # its import path, package.module:Name
    chains: int = 5000  # training histories
    length: int = 8  # events per training history
    partners: int = 2  # certified equivalent histories per history
    test_lengths: tuple[int, ...] = DEFAULT_TEST_LENGTHS  # one test split per length
    test_chains: int = DEFAULT_TEST_CHAINS  # histories per test split
    seed: int = 0
    holdout: HoldOut | None = None

    def __post_init__(self) -> None:
        if self.chains < 1 or self.test_chains < 1 or self.length < 1:
            raise ValueError("chains, test_chains and length must be at least 1")
        if self.partners < 0:
            raise ValueError("partners must be at least 0")
        if any(n < 1 for n in self.test_lengths) or len(set(self.test_lengths)) != len(self.test_lengths):
            raise ValueError("test lengths must be distinct and at least 1")

    def settings(self) -> dict:
        """The settings this spec makes a dataset with, as ``chains.manifest.settings_of`` reads them
        back from its manifest."""
        return {"domain": self.domain, "chains": self.chains, "length": self.length, "partners": self.partners,
                "test_lengths": list(self.test_lengths), "test_chains": self.test_chains, "seed": self.seed,
                "hold_out": None if self.holdout is None else str(self.holdout)}

    def split_names(self) -> list[tuple[str, int]]:
        """(file stem, history length), in writing order."""
        return [("train", self.length)] + [(f"test-{n}", n) for n in self.test_lengths]


def sample_split(domain: StateDomain, spec: DomainSpec, name: str, length: int,
                 held: HeldOut | None = None) -> Iterator[Sample]:
    """The histories of split ``name`` with their partners; a pure function of the domain, spec, name
    and what is ``held`` out (HoldOutRefused when the domain cannot satisfy it)."""
    rng = split_rng(spec.seed, name)
    training = name == "train"
    guarded = held is not None and held.kind != "states"
    for _ in range(spec.chains if training else spec.test_chains):
        start = domain.start_state(rng)
        if not guarded:
            events = tuple(domain.sample_events(rng, start, length))
        elif training:
            events = tuple(avoiding(lambda: domain.sample_events(rng, start, length), list, held, "a training history"))
        else:
            events = tuple(holding(domain, rng, start, length, held))

        def partner():
            return domain.sample_partner(rng, start, events)

        draws = (avoiding(partner, lambda p: list(p[1]), held, "a training partner") if guarded and training
                 else partner() for _ in range(spec.partners))
        yield Sample(start, events, tuple((s, tuple(e)) for s, e in draws))

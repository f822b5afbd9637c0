"""``chains.contract.check_domain`` catches each broken rule of the contract, in one line naming it,
on the guide's own domain made wrong one rule at a time."""
from __future__ import annotations

import random

import pytest

from chains.contract import DomainContractError, check_domain
from dial_domain import Dial


class WrongPartner(Dial):
    def sample_partner(self, rng: random.Random, start: int, events):
        return start, [*events, "turn"]


class TextLoses(Dial):
    def state_text(self, state: int) -> str:
        return str(min(state, 3))


class ReadoutLies(Dial):
    def state_of_classes(self, classes):
        return 0


class ReadoutTakesAnything(Dial):
    def state_of_classes(self, classes):
        return int(classes[0]) % 6


class TokenOutside(Dial):
    def event_tokens(self, event: str) -> list[str]:
        return [f"move-{event}"]


class SuccessorsLie(Dial):
    def successors(self, state: int):
        yield "turn", state


class Unseeded(Dial):
    draws = random.Random(0)

    def sample_events(self, rng: random.Random, start: int, length: int) -> list[str]:
        return [self.draws.choice(("turn", "back")) for _ in range(length)]


class Crashes(Dial):
    def apply(self, state: int, event: str) -> int:
        if state == 5:
            raise KeyError(state)
        return super().apply(state, event)


class Misnamed(Dial):
    def describe(self) -> dict:
        return {"name": "clock"}


BROKEN = {
    WrongPartner: "partner ends at another state",
    TextLoses: "parse_state(state_text(s)) is not s",
    ReadoutLies: "state_of_classes(state_classes(s)) is not s",
    ReadoutTakesAnything: "accepts classes outside the readout",
    TokenOutside: "is not in vocabulary()",
    SuccessorsLie: "successors names 'turn' leading elsewhere",
    Unseeded: "the same seed drew another history",
    Crashes: "apply raised KeyError",
    Misnamed: "describe()'s name 'clock' is not the domain's name 'dial'",
}


def test_the_guide_s_domain_keeps_the_contract():
    check_domain(Dial())


@pytest.mark.parametrize("broken", BROKEN, ids=lambda c: c.__name__)
def test_each_broken_rule_is_named_in_one_line(broken):
    with pytest.raises(DomainContractError) as caught:
        check_domain(broken())
    assert BROKEN[broken] in str(caught.value)
    assert "\n" not in str(caught.value)


def test_what_is_not_a_domain_is_refused():
    with pytest.raises(DomainContractError, match="does not implement chains.protocol.StateDomain"):
        check_domain(object())

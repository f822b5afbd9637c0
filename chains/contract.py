"""The domain contract as a function a domain's author runs: ``check_domain(MyDomain())`` before
``certify``, the same checks the project's tests run on every shipped domain.

It draws histories through the domain's own sampling and checks what the pipeline relies on
without Lean: states and events read back from their text, the readout names each state and only
it, tokens come from the vocabulary, a partner ends where its history ends, ``successors`` agrees
with ``apply``, keys tell states apart, and the same seed draws the same history. Lean's side (the
module and its step theorems) is checked by ``certify`` itself, which refuses a domain at its first
step the kernel reads otherwise.
"""
from __future__ import annotations

import json
import random
from collections.abc import Callable
from itertools import islice

from chains.protocol import EventRefused, KernelEvaluated, StateDomain, run_events

SUCCESSORS_READ = 1000  # successors checked per state (a domain may have many)


class DomainContractError(ValueError):
    """A domain that breaks the contract; the one-line message names the first broken rule."""


def _checked(what: str, call: Callable[[], object]) -> object:
    """``call()``; a failure of the domain's own code raised as a violation naming ``what``."""
    try:
        return call()
    except DomainContractError:
        raise
    except Exception as e:  # the domain's code: any failure is a broken rule, said in one line
        message = str(e).splitlines()[0] if str(e) else ""
        raise DomainContractError(f"{what} raised {type(e).__name__}: {message}"[:300]) from None


def _require(ok: bool, message: str) -> None:
    if not ok:
        raise DomainContractError(message[:300])


def _describe(domain: StateDomain) -> None:
    _require(isinstance(domain, StateDomain), "it does not implement chains.protocol.StateDomain "
                                              "(docs/guide/bring-your-own-domain.md)")
    _require(isinstance(getattr(domain, "name", None), str) and domain.name != "", "its name is not a non-empty string")
    described = _checked("describe()", domain.describe)
    _require(isinstance(described, dict), f"describe() gives a {type(described).__name__}, not a dict")
    _require(described.get("name") == domain.name, f"describe()'s name {described.get('name')!r} is not the "
                                                   f"domain's name {domain.name!r}")
    _checked("describe() as JSON", lambda: json.dumps(described, sort_keys=True))
    vocabulary = _checked("vocabulary()", domain.vocabulary)
    _require(len(set(vocabulary)) == len(vocabulary), "vocabulary() names a token twice")
    readout = _checked("readout()", domain.readout)
    _require(len(readout) > 0 and all(isinstance(n, int) and n > 0 for n in readout),
             f"readout() {list(readout)!r:.60} is not a positive count of classes per position")


def _state(domain: StateDomain, state, where: str) -> None:
    text = _checked(f"state_text at {where}", lambda: domain.state_text(state))
    back = _checked(f"parse_state({text!r:.40})", lambda: domain.parse_state(text))
    _require(back == state, f"{where}: parse_state(state_text(s)) is not s for {text!r:.60}")
    classes = _checked(f"state_classes at {where}", lambda: domain.state_classes(state))
    readout = domain.readout()
    _require(len(classes) == len(readout), f"{where}: {len(classes)} classes for {len(readout)} readout positions")
    _require(all(0 <= c < n for c, n in zip(classes, readout)),
             f"{where}: a class of {list(classes)!r:.60} is outside its position's readout")
    read = _checked(f"state_of_classes at {where}", lambda: domain.state_of_classes(classes))
    _require(read == state, f"{where}: state_of_classes(state_classes(s)) is not s for {text!r:.60}")
    tokens = _checked(f"start_tokens at {where}", lambda: domain.start_tokens(state))
    unknown = set(tokens) - set(domain.vocabulary())
    if unknown:
        raise DomainContractError(f"{where}: start token {sorted(unknown)[0]!r:.30} is not in vocabulary()")


def _event(domain: StateDomain, event, where: str) -> None:
    text = _checked(f"event_text at {where}", lambda: domain.event_text(event))
    back = _checked(f"parse_event({text!r:.40})", lambda: domain.parse_event(text))
    _require(back == event, f"{where}: parse_event(event_text(e)) is not e for {text!r:.60}")
    unknown = set(_checked(f"event_tokens at {where}", lambda: domain.event_tokens(event))) - set(domain.vocabulary())
    if unknown:
        raise DomainContractError(f"{where}: event token {sorted(unknown)[0]!r:.30} is not in vocabulary()")


def _history(domain: StateDomain, seed: int, length: int) -> tuple:
    rng = random.Random(seed)
    start = _checked("start_state", lambda: domain.start_state(rng))
    events = _checked("sample_events", lambda: domain.sample_events(rng, start, length))
    return rng, start, list(events)


def _states(domain: StateDomain, start, events: list, where: str) -> list:
    try:
        return run_events(domain, start, events)
    except EventRefused as e:
        raise DomainContractError(f"{where}: a sampled event does not apply: {e}"[:300]) from None
    except Exception as e:  # the domain's apply
        raise DomainContractError(f"{where}: apply raised {type(e).__name__}: {e}"[:300]) from None


def check_history(domain: StateDomain, seed: int, length: int) -> None:
    """The contract on one history of ``length`` events drawn from ``seed``, with its partner;
    DomainContractError naming the first broken rule."""
    where = f"history of seed {seed}"
    rng, start, events = _history(domain, seed, length)
    _require(len(events) == length, f"{where}: sample_events gave {len(events)} events for length {length}")
    again = _history(domain, seed, length)[1:]
    _require(again == (start, events), f"{where}: the same seed drew another history (use only the rng given)")
    states = _states(domain, start, events, where)
    _require(_states(domain, start, events, where) == states, f"{where}: apply gave other states the second time")
    for k, state in enumerate([start, *states]):
        _state(domain, state, f"{where}, state {k}")
    for k, event in enumerate(events):
        _event(domain, event, f"{where}, event {k}")
    end = states[-1] if states else start
    partner_start, partner = _checked(f"sample_partner ({where})", lambda: domain.sample_partner(rng, start, events))
    partner_states = _states(domain, partner_start, list(partner), f"{where}, its partner")
    _require((partner_states[-1] if partner_states else partner_start) == end,
             f"{where}: its partner ends at another state")
    keys: dict[int, object] = {}
    for state in [start, *states]:
        key = _checked("state_key", lambda: domain.state_key(state))
        _require(keys.setdefault(key, state) == state, f"{where}: two states share the key {key}")
    for state in (start, end):
        for event, after in islice(_checked("successors", lambda: iter(domain.successors(state))), SUCCESSORS_READ):
            led = _checked("apply", lambda: domain.apply(state, event))
            if led != after:
                raise DomainContractError(f"{where}: successors names {domain.event_text(event)!r:.40} leading "
                                          "elsewhere than apply does")


def _readout_refuses(domain: StateDomain) -> None:
    """A readout past every position's last class names no state: ValueError in one line."""
    beyond = list(domain.readout())
    try:
        domain.state_of_classes(beyond)
    except ValueError as e:
        _require("\n" not in str(e), "state_of_classes refuses a readout in more than one line")
        return
    except Exception as e:  # the domain's code
        raise DomainContractError(f"state_of_classes of classes outside the readout raised {type(e).__name__}, "
                                  "not ValueError") from None
    raise DomainContractError("state_of_classes accepts classes outside the readout (it must raise ValueError)")


def _lean_terms(domain: StateDomain, seed: int) -> None:
    """A Lean-evaluated domain's terms are built for sampled states and events (a name that is not
    a Lean constant is refused when its ``LeanTerm`` is made)."""
    if not isinstance(domain, KernelEvaluated):
        return
    _, start, events = _history(domain, seed, 4)
    for state in [start, *_states(domain, start, events, "Lean terms' history")]:
        _checked("lean_state", lambda: domain.lean_state(state))
    for event in events:
        _checked("lean_event", lambda: domain.lean_event(event))
    source = _checked("lean_source", domain.lean_source)
    _require(isinstance(source, str) and source.lstrip().startswith("prelude"),
             "lean_source() must begin with prelude (and import Core)")


def check_domain(domain: StateDomain, *, histories: int = 20, length: int = 12, seed: int = 0) -> None:
    """Check ``domain`` against the contract on ``histories`` histories of up to ``length`` events
    drawn from seeds ``seed``, ``seed + 1``, …; DomainContractError naming the first broken rule."""
    _describe(domain)
    for k in range(histories):
        check_history(domain, seed + k, k % (length + 1))
    _readout_refuses(domain)
    _lean_terms(domain, seed)

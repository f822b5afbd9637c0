"""Fixtures that need the real Lean: found once per session, never mocked."""
import pytest
from hypothesis import settings

from leanbridge.corelib import build_core
from leanbridge.discovery import find_lean

# Tests never time anything: on a machine shared with other work a property must not fail by
# its speed (hypothesis's default deadline of 200 ms per example does exactly that).
settings.register_profile("untimed", deadline=None)
settings.load_profile("untimed")


@pytest.fixture(scope="session")
def lean():
    return find_lean()


@pytest.fixture(scope="session")
def core(lean):
    return build_core(lean)

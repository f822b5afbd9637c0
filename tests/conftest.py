"""Fixtures that need the real Lean: found once per session, never mocked."""
import pytest
from hypothesis import settings

from leanbridge.corelib import build_core
from leanbridge.discovery import find_lean

# Tests assert behaviour, never speed: no per-example deadline (a loaded machine is not a failure).
settings.register_profile("no-deadline", deadline=None)
settings.load_profile("no-deadline")


@pytest.fixture(scope="session")
def lean():
    return find_lean()


@pytest.fixture(scope="session")
def core(lean):
    return build_core(lean)

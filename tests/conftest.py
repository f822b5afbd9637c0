"""Fixtures that need the real Lean: found once per session, never mocked."""
import pytest

from leanbridge.corelib import build_core
from leanbridge.discovery import find_lean


@pytest.fixture(scope="session")
def lean():
    return find_lean()


@pytest.fixture(scope="session")
def core(lean):
    return build_core(lean)

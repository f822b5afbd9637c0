"""Fixtures that need the real Lean: found once per session, never mocked.

``pytest --no-lean`` (``make test-fast``) runs only what needs no Lean binary: a test that uses
the ``lean`` or ``core`` fixture, is marked ``lean``, or runs in other processes (a wheel's fresh
environment, a Ray cluster: the modules named ``*cluster*``) is deselected, and any other test (or
fixture) that starts a Lean process all the same is skipped at that moment, saying so."""
import pytest
from hypothesis import settings

from leanbridge.corelib import build_core
from leanbridge.discovery import find_lean

# Tests never time anything: on a machine shared with other work a property must not fail by
# its speed (hypothesis's default deadline of 200 ms per example does exactly that).
settings.register_profile("untimed", deadline=None)
settings.load_profile("untimed")

LEAN_FIXTURES = {"lean", "core"}
# Modules whose tests run in other processes (a fresh virtual environment, Ray clusters), where
# starting Lean cannot be intercepted, and single tests that run a command in a subprocess.
LEAN_MODULES = {"test_wheel.py"}
LEAN_TESTS = {"test_certify.py::test_a_run_killed_mid_certification_resumes_without_loss"}


def _elsewhere(item) -> bool:
    name = item.path.name
    return name in LEAN_MODULES or "cluster" in name or f"{name}::{item.name}" in LEAN_TESTS


def pytest_addoption(parser):
    parser.addoption("--no-lean", action="store_true", default=False,
                     help="run only the tests that need no Lean binary (make test-fast)")


def pytest_collection_modifyitems(config, items):
    if not config.getoption("--no-lean"):
        return
    kept, dropped = [], []
    for item in items:
        needs = (LEAN_FIXTURES & set(getattr(item, "fixturenames", ())) or item.get_closest_marker("lean")
                 or _elsewhere(item))
        (dropped if needs else kept).append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept


@pytest.fixture(autouse=True, scope="session")
def _no_lean_process(request):
    """Under --no-lean, starting a Lean (or kcheck) process skips the test that asked for it."""
    if not request.config.getoption("--no-lean"):
        yield
        return
    import leanbridge.corelib
    import leanbridge.kernel
    import leanbridge.runner

    def refuse(*args, **kwargs):
        pytest.skip("needs the Lean binary (deselected by --no-lean)")

    patch = pytest.MonkeyPatch()
    for module in (leanbridge.runner, leanbridge.corelib, leanbridge.kernel):
        patch.setattr(module, "lean_process", refuse)
    yield
    patch.undo()


@pytest.fixture(scope="session")
def lean():
    return find_lean()


@pytest.fixture(scope="session")
def core(lean):
    return build_core(lean)

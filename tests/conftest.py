"""Fixtures that need the real Lean: found once per session, never mocked; and the Ray cluster
the cluster tests share.

``pytest --no-lean`` (``make test-fast``) runs only what needs no Lean binary: a test that uses
the ``lean`` or ``core`` fixture, is marked ``lean``, or runs in other processes (a wheel's fresh
environment, a Ray cluster: the modules named ``*cluster*``) is deselected, and any other test (or
fixture) that starts a Lean process all the same is skipped at that moment, saying so."""
import contextlib
import os
import signal
import uuid
from collections.abc import Iterator
from pathlib import Path

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
    import leanbridge.discovery
    import leanbridge.kernel
    import leanbridge.runner

    def refuse(*args, **kwargs):
        pytest.skip("needs the Lean binary (deselected by --no-lean)")

    patch = pytest.MonkeyPatch()
    for module in (leanbridge.discovery, leanbridge.runner, leanbridge.corelib, leanbridge.kernel):
        patch.setattr(module, "lean_process", refuse)
    yield
    patch.undo()


@pytest.fixture(scope="session")
def lean():
    return find_lean()


@pytest.fixture(scope="session")
def core(lean):
    return build_core(lean)


@contextlib.contextmanager
def torch_threads(n: int):
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        yield
    finally:
        torch.set_num_threads(before)


@pytest.fixture
def one_thread():
    """torch at one thread for the test, as the CPU's pinned bits were made; the count before it
    afterwards."""
    with torch_threads(1):
        yield


@pytest.fixture(scope="module")
def one_thread_module():
    """torch at one thread for a whole module (``pytestmark = pytest.mark.usefixtures(...)``): tiny
    models run fastest on one thread, and a loaded machine makes two threads wait on each other."""
    with torch_threads(1):
        yield


# ---- Ray clusters started on this machine (the modules named *cluster*) ----

RUN_MARK = "EXACT_STATE_CLUSTER_TEST"  # in the environment of a test cluster's processes and their Lean
RAY_NODE = {"num_cpus": 1, "object_store_memory": 80 * 1024 * 1024}  # every node: one CPU, a small store


def marked_processes(marker: str) -> dict[int, str]:
    """pid -> command line of every process whose environment carries ``marker``."""
    found = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            env = (entry / "environ").read_bytes()
            cmd = (entry / "cmdline").read_bytes().replace(b"\0", b" ").decode(errors="replace")
        except OSError:
            continue
        if f"{RUN_MARK}={marker}".encode() in env.split(b"\0"):
            found[int(entry.name)] = cmd
    return found


def parent_pid(pid: int) -> int | None:
    try:
        return int(Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[1])
    except (OSError, ValueError, IndexError):
        return None


def _signal(pids: set[int], sig: int) -> None:
    for pid in pids:
        try:
            os.kill(pid, sig)
        except ProcessLookupError:  # gone by itself already
            pass


class RayTestCluster:
    """A ``ray.cluster_utils.Cluster`` of one-CPU nodes started from this process's environment
    (plus ``env``), every process of it marked with a fresh ``RUN_MARK`` value, so that a test
    finds, kills and stops what it started and nothing else on the machine."""

    def __init__(self, nodes: int = 2, env: dict[str, str] | None = None) -> None:
        from ray.cluster_utils import Cluster

        self.marker = uuid.uuid4().hex
        self.env = {**(env or {}), RUN_MARK: self.marker}
        with self._marked():
            self.cluster = Cluster(initialize_head=True, head_node_args={**RAY_NODE, "include_dashboard": False})
        for _ in range(nodes - 1):
            self.add_node()
        self.address = self.cluster.address

    @contextlib.contextmanager
    def _marked(self) -> Iterator[None]:
        """The environment every node started in the block (and so its workers and their Lean) inherits."""
        before = {key: os.environ.get(key) for key in self.env}
        os.environ.update(self.env)
        try:
            yield
        finally:
            for key, value in before.items():
                if value is None:
                    del os.environ[key]
                else:
                    os.environ[key] = value

    @property
    def head(self):
        return self.cluster.head_node

    def add_node(self):
        """A further one-CPU node, alive when this returns."""
        with self._marked():
            node = self.cluster.add_node(**RAY_NODE)
        self.cluster.wait_for_nodes()
        return node

    def processes(self) -> dict[int, str]:
        """pid -> command line of this cluster's processes (its nodes, workers and their Lean)."""
        return marked_processes(self.marker)

    def worker_of(self, pid: int) -> int | None:
        """The Ray worker of this cluster that started process ``pid`` (its Lean), if one did."""
        parent = parent_pid(pid)
        return parent if parent is not None and "ray::" in self.processes().get(parent, "") else None

    def node_processes(self, node) -> set[int]:
        """The pids of ``node``'s raylet and of every process it started (its workers)."""
        raylet = node.all_processes["raylet"][0].process.pid
        mine = self.processes()
        found, grew = {raylet}, True
        while grew:
            more = {pid for pid in mine if parent_pid(pid) in found} - found
            found |= more
            grew = bool(more)
        return found

    @property
    def nodes(self) -> list:
        """The live nodes, the head first."""
        return [self.cluster.head_node, *self.cluster.worker_nodes]

    def kill_node(self, node) -> set[int]:
        """``node`` dies whole, as a machine does. What it started (its workers, their Lean, its
        agents) is frozen first, so that nothing of it writes another byte or takes another
        task; then its own processes are killed without a chance to shut down, and last the
        frozen ones (which outlive a dead raylet for a moment). Only this cluster's processes are
        touched: each is a child of the node's raylet that carries this cluster's mark. Returns
        the pids of the node's processes, now gone."""
        own = {info.process.pid for infos in node.all_processes.values() for info in infos}
        started = self.node_processes(node) - own
        _signal(started, signal.SIGSTOP)
        self.cluster.remove_node(node, allow_graceful=False)
        _signal(started, signal.SIGKILL)
        return own | started

    def shutdown(self) -> None:
        import ray

        ray.shutdown()
        self.cluster.shutdown()


@pytest.fixture(scope="module")
def cluster():
    """A head and a second node, each one CPU, for the module's tests; each test joins it (``--cluster
    cluster.address``) and may add nodes of its own."""
    pytest.importorskip("ray")
    started = RayTestCluster(nodes=2)
    yield started
    started.shutdown()


@pytest.fixture
def new_cluster():
    """Start further clusters (``new_cluster(nodes, env)``) for one test; stopped after it."""
    pytest.importorskip("ray")
    started: list[RayTestCluster] = []

    def start(nodes: int = 1, env: dict[str, str] | None = None) -> RayTestCluster:
        started.append(RayTestCluster(nodes, env))
        return started[-1]

    yield start
    for one in started:
        one.shutdown()


def run_certify(args: list[str], **kwargs) -> tuple[int, str]:
    """The certify command run with ``args`` as a user runs it, any exception let through:
    (exit code, output). ``kwargs`` go to ``CliRunner.invoke`` (``env``)."""
    from click.testing import CliRunner

    from leanbridge.cli import main as certify

    result = CliRunner().invoke(certify, args, catch_exceptions=False, **kwargs)
    return result.exit_code, result.output


@pytest.fixture(scope="module")
def store(tmp_path_factory) -> Path:
    """A certificate store of the module's own (not yet made)."""
    return tmp_path_factory.mktemp("store") / "certificates.sqlite"


@pytest.fixture(scope="module")
def certify_tiny(tmp_path_factory):
    """``certify_tiny(chains, test_chains)``: a tiny tier-1 dataset certified by Lean for the module
    (tests at 8 and 16 steps, a store of its own), its directory."""
    from chains.rewrite.dataset import DatasetSpec
    from leanbridge.certify import certify_dataset

    def make(chains: int, test_chains: int) -> Path:
        root = tmp_path_factory.mktemp("tiny")
        certify_dataset(DatasetSpec(chains=chains, test_lengths=(8, 16), test_chains=test_chains), root / "data",
                        root / "store.sqlite")
        return root / "data"
    return make


@pytest.fixture(scope="session")
def stepwise_tiny(tmp_path_factory) -> Path:
    """A tiny tier-1 dataset certified by Lean (12 training chains, 4 test chains at 8 and 16 steps),
    made once for the step-by-step model's test modules, which only read it."""
    from chains.rewrite.dataset import DatasetSpec
    from leanbridge.certify import certify_dataset

    root = tmp_path_factory.mktemp("stepwise-tiny")
    certify_dataset(DatasetSpec(chains=12, test_lengths=(8, 16), test_chains=4), root / "data", root / "store.sqlite")
    return root / "data"


@pytest.fixture(scope="session")
def tiny_probes(tmp_path_factory) -> Path:
    """A tiny tier-1 probe dataset certified by Lean (20 training chains, tests at 8 and 16 steps),
    made once for every test module that only reads it."""
    from click.testing import CliRunner

    from leanbridge.cli import main as certify

    root = tmp_path_factory.mktemp("tiny-probes")
    result = CliRunner().invoke(certify, ["--atoms", "4", "--tier", "1", "--chains", "20", "--test-chains", "8",
                                          "--test-lengths", "8,16", "--probes", "--out", str(root / "data"),
                                          "--store", str(root / "store.sqlite")])
    assert result.exit_code == 0, result.output
    return root / "data"


@pytest.fixture(scope="module")
def tiny_probe_data(tiny_probes):
    """``tiny_probes`` as the oracle reads it (one copy per module: a test may not change another's)."""
    from oracle.data import load_probe_dataset

    return load_probe_dataset(tiny_probes)

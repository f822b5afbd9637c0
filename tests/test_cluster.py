"""certify --cluster: batches as Ray tasks on a two-node cluster started on this machine
(about 35 s together on this 2-core machine at a light load, 2.5 minutes at load 12;
``make test-cluster`` runs them alone)."""
import dataclasses
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

ray = pytest.importorskip("ray")

from chains.manifest import MANIFEST, read_manifest  # noqa: E402
from chains.rewrite.dataset import DatasetSpec  # noqa: E402
from chains.rewrite.space import Domain  # noqa: E402
from leanbridge.asker import AskConfig  # noqa: E402
from leanbridge.certify import certify_dataset  # noqa: E402
from leanbridge.cluster import ClusterError  # noqa: E402
from leanbridge.corelib import CORE_ENV, core_source  # noqa: E402

SMALL = DatasetSpec(domain=Domain(4, 1), chains=60, test_lengths=(8, 32), test_chains=12)
# The cluster (a head and a second node, one CPU each) is conftest's ``cluster`` fixture.


@pytest.fixture(scope="module")
def local(tmp_path_factory):
    out = tmp_path_factory.mktemp("local") / "d"
    certify_dataset(SMALL, out, out.parent / "store.sqlite", AskConfig(jobs=2))
    return out


def lean_processes(cluster) -> dict[int, str]:
    return {pid: cmd for pid, cmd in cluster.processes().items() if "Check.lean" in cmd}


def same_dataset(a: Path, b: Path) -> None:
    names = sorted(p.name for p in a.iterdir())
    assert names == sorted(p.name for p in b.iterdir())
    for name in names:
        if name != MANIFEST:
            assert (a / name).read_bytes() == (b / name).read_bytes(), name
    ma, mb = (read_manifest(d) for d in (a, b))
    varying = {"seconds", "phase_seconds", "store", "lean_processes", "kernel_checked"}
    assert {k: v for k, v in ma.items() if k not in varying} == {k: v for k, v in mb.items() if k not in varying}


def test_a_two_node_cluster_certifies_the_same_dataset_as_the_local_backend(cluster, local, tmp_path):
    out = tmp_path / "d"
    manifest = certify_dataset(SMALL, out, tmp_path / "store.sqlite", AskConfig(cluster=cluster.address))
    assert len([n for n in ray.nodes() if n["Alive"]]) == 2
    assert manifest["failed"] == 0 and manifest["kernel_checked"] == manifest["certified"]
    same_dataset(out, local)


def test_verify_runs_on_the_cluster(cluster, local):
    from leanbridge.verify import verify_dataset
    report = verify_dataset(local, AskConfig(cluster=cluster.address))
    assert report["failed"] == 0 and report["kernel_checked"] == report["distinct_statements"]


def test_a_worker_killed_mid_run_loses_nothing_counts_nothing_twice_and_leaves_no_lean(cluster, local, tmp_path):
    store, out = tmp_path / "store.sqlite", tmp_path / "d"
    spec = DatasetSpec(domain=Domain(4, 1), chains=60, test_lengths=(8, 32), test_chains=12)
    result: dict = {}

    def run() -> None:
        try:  # small files, so that there are more tasks than workers and the run lasts
            result["manifest"] = certify_dataset(spec, out, store, AskConfig(cluster=cluster.address, batch_size=150))
        except BaseException as e:  # noqa: BLE001 - handed to the test's thread
            result["error"] = e

    thread = threading.Thread(target=run)
    thread.start()
    killed_lean: dict[int, str] = {}
    deadline = time.time() + 120
    while not killed_lean and time.time() < deadline and thread.is_alive():
        for pid, cmd in lean_processes(cluster).items():
            worker = cluster.worker_of(pid)
            if worker is not None:
                os.kill(worker, signal.SIGKILL)  # the Ray worker running this Lean, mid-task
                killed_lean[pid] = cmd
                break
        time.sleep(0.02)
    thread.join(timeout=300)
    assert killed_lean, "no worker was caught running Lean"
    assert "error" not in result, result.get("error")
    manifest = result["manifest"]
    distinct = manifest["distinct_steps"] + manifest["distinct_equivalences"]
    with sqlite3.connect(store) as conn:
        rows = conn.execute("SELECT COUNT(*), COUNT(DISTINCT key), SUM(verdict = 'certified') FROM certificates").fetchone()
    assert rows == (distinct, distinct, distinct)
    assert manifest["kernel_checked"] == distinct and manifest["failed"] == 0
    same_dataset(out, local)
    time.sleep(0.5)  # the kernel delivers the parent-death signal asynchronously
    assert not lean_processes(cluster), "a Lean process outlived its Ray worker"


def test_a_node_with_another_core_library_is_refused_by_name(new_cluster, tmp_path):
    other = tmp_path / "Core.lean"
    other.write_text(core_source().read_text() + "\n-- another core library\n")
    ray.shutdown()  # leave the module's cluster; a test using it afterwards joins it again
    one = new_cluster(1, {CORE_ENV: str(other)})
    with pytest.raises(ClusterError, match=r"node .* answered with Lean .* and core"):
        certify_dataset(DatasetSpec(domain=Domain(3, 1), chains=4, test_lengths=(4,), test_chains=2),
                        tmp_path / "d", tmp_path / "store.sqlite", AskConfig(cluster=one.address))
    assert not (tmp_path / "d").exists()


def test_a_node_with_another_kcheck_is_refused_by_name(lean, core):
    # The task's body runs here, without Ray (it is a plain function): its answer names the
    # kcheck it used, the driver accepts that, and refuses another kcheck's or none.
    from leanbridge.checker import Checker, sources_hash
    from leanbridge.cluster import RayExecutor, answer_on_node
    from leanbridge.questions import Certify
    from leanbridge.render import equivalence_statement

    atoms = ("a", "b")
    items = [(0, Certify(equivalence_statement(("+", "a", "b"), ("+", "a", "b"), atoms)))]
    reply = answer_on_node(atoms, AskConfig(checker=Checker.KERNEL), items)
    assert reply.result is not None and reply.kcheck == (sources_hash(), lean.githash)
    assert answer_on_node(atoms, AskConfig(), items).kcheck is None
    driver = object.__new__(RayExecutor)  # its check alone, with no cluster to connect to
    driver.lean, driver.core = lean, core
    assert driver.checked(reply, Checker.KERNEL) is reply.result
    other = dataclasses.replace(reply, kcheck=("0" * 64, lean.githash))
    with pytest.raises(ClusterError, match=r"node .* answered with kcheck 000000000000 on Lean .*; this run uses "
                                           rf"kcheck {sources_hash()[:12]}"):
        driver.checked(other, Checker.KERNEL)
    with pytest.raises(ClusterError, match="answered with no kcheck"):
        driver.checked(dataclasses.replace(reply, kcheck=None), Checker.KERNEL)
    assert driver.checked(dataclasses.replace(reply, kcheck=None), "elaborator") is reply.result


def test_without_a_cluster_ray_is_never_imported(tmp_path):
    code = ("import sys; from leanbridge.cli import main\n"
            f"main(['--atoms', '3', '--chains', '4', '--test-lengths', '4', '--test-chains', '2', '--jobs', '1', "
            f"'--out', {str(tmp_path / 'd')!r}, '--store', {str(tmp_path / 's.sqlite')!r}], standalone_mode=False)\n"
            "assert 'ray' not in sys.modules, 'ray was imported'\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "d" / "manifest.json").exists()

"""certify --cluster: batches as Ray tasks on a two-node cluster started on this machine, of rewrite
chains and of programs (about 45 s together on this 2-core machine at a light load;
``make test-cluster`` runs them alone)."""
import dataclasses
import os
import re
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
from chains.programs.syntax import Machine  # noqa: E402
from chains.rewrite.dataset import DatasetSpec  # noqa: E402
from chains.rewrite.space import Domain  # noqa: E402
from leanbridge.asker import AskConfig  # noqa: E402
from leanbridge.certify import certify_dataset  # noqa: E402
from leanbridge.cluster import ClusterError  # noqa: E402
from leanbridge.corelib import CORE_ENV, core_source  # noqa: E402
from leanbridge.programs.library import PROGRAMS_ENV, programs_source  # noqa: E402
from conftest import run_certify  # noqa: E402

# two-node Ray clusters started on this machine: make test-cluster (and make test-slow) run them
pytestmark = pytest.mark.slow

SMALL = DatasetSpec(domain=Domain(4, 1), chains=60, test_lengths=(8, 32), test_chains=12)
# A few dozen programs (about 160 distinct theorems) as command-line options
PROGRAMS = ["--domain", "programs", "--chains", "24", "--test-chains", "4", "--test-lengths", "8,16"]
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
    store = str(tmp_path / "s.sqlite")
    code = ("import sys; from leanbridge.cli import main\n"
            f"main(['--atoms', '3', '--chains', '4', '--test-lengths', '4', '--test-chains', '2', '--jobs', '1', "
            f"'--out', {str(tmp_path / 'd')!r}, '--store', {store!r}], standalone_mode=False)\n"
            f"main(['--domain', 'programs', '--chains', '4', '--test-lengths', '4', '--test-chains', '2', "
            f"'--jobs', '1', '--out', {str(tmp_path / 'p')!r}, '--store', {store!r}], standalone_mode=False)\n"
            "assert 'ray' not in sys.modules, 'ray was imported'\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert (tmp_path / "d" / "manifest.json").exists() and (tmp_path / "p" / "manifest.json").exists()


# ---- programs (certify --domain programs --cluster) ----

def test_a_two_node_cluster_certifies_the_same_programs_dataset_as_local_lean(cluster, tmp_path, monkeypatch):
    from leanbridge.cluster import RayProgramsExecutor

    code, output = run_certify([*PROGRAMS, "--jobs", "2", "--out", str(tmp_path / "local"),
                                "--store", str(tmp_path / "local.sqlite")])
    assert code == 0, output
    answered: list[str] = []  # the nodes whose answers the driver took
    checked = RayProgramsExecutor.checked

    def noted(self, reply):
        answered.append(reply.node)
        return checked(self, reply)

    monkeypatch.setattr(RayProgramsExecutor, "checked", noted)
    code, output = run_certify([*PROGRAMS, "--cluster", cluster.address, "--out", str(tmp_path / "ray"),
                                "--store", str(tmp_path / "ray.sqlite")])
    assert code == 0, output
    manifest = read_manifest(tmp_path / "ray")
    assert manifest["failed"] == 0 and manifest["kernel_checked"] == manifest["certified"] > 100
    assert len(answered) >= 2 and f"(pid {os.getpid()})" not in " ".join(answered)  # every file went to a node
    same_dataset(tmp_path / "ray", tmp_path / "local")
    before = len(answered)
    code, output = run_certify(["--verify", str(tmp_path / "local"), "--cluster", cluster.address])
    assert code == 0 and "verified" in output, output
    assert len(answered) >= before + 2  # --verify asked the nodes too


def test_a_node_with_another_programs_library_is_refused_by_name(new_cluster, tmp_path):
    other = tmp_path / "Programs.lean"
    other.write_text(programs_source().read_text() + "\n-- another programs library\n")
    ray.shutdown()  # leave the module's cluster; a test using it afterwards joins it again
    one = new_cluster(1, {PROGRAMS_ENV: str(other)})
    code, output = run_certify([*PROGRAMS, "--cluster", one.address, "--out", str(tmp_path / "d"),
                                "--store", str(tmp_path / "store.sqlite")])
    assert code == 1 and "Traceback" not in output and len(output.strip().splitlines()) == 1
    assert re.search(r"node .* answered with Lean \w{12} and programs library \w{12}; this run uses Lean \w{12} "
                     r"and programs library \w{12}", output), output
    assert not (tmp_path / "d").exists()


def test_the_programs_identity_check_takes_this_run_s_lean_and_library_only(lean):
    # The task's body runs here, without Ray (a plain function): its answer names this node's Lean
    # and programs library, the driver takes it, and refuses another library's or Lean's.
    from chains.programs.syntax import parse_statement, zero_state
    from leanbridge.cluster import RayProgramsExecutor, answer_programs_on_node
    from leanbridge.programs import CheckConfig, StepQuestion, build_programs
    from leanbridge.verdicts import Complete, Rejected

    library = build_programs(lean)
    bits = Machine(2)
    true, false = (StepQuestion(bits, parse_statement("v3 = 1", bits), zero_state(), after).theorem
                   for after in ((0, 0, 0, 1, 0, 0, 0, 0), zero_state()))
    reply = answer_programs_on_node(CheckConfig(), [(0, true), (1, false)])
    assert (reply.lean_githash, reply.library_hash) == (lean.githash, library.library_hash)
    driver = object.__new__(RayProgramsExecutor)  # its check alone, with no cluster to connect to
    driver.lean, driver.library = lean, library
    verdicts = dict(driver.checked(reply).answers)
    assert isinstance(verdicts[0], Complete) and isinstance(verdicts[1], Rejected)
    for field, value in (("library_hash", "1" * 64), ("lean_githash", "2" * 40)):
        with pytest.raises(ClusterError, match=rf"node .* answered with .*(111111111111|222222222222).*; this run "
                                               rf"uses Lean {lean.githash[:12]} and programs library "
                                               rf"{library.library_hash[:12]}"):
            driver.checked(dataclasses.replace(reply, **{field: value}))

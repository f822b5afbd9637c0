"""prove searches the dataset of the run it is given, whatever the searcher, and refuses in one
line a --data of another domain than that run's."""
from __future__ import annotations

import json

import pytest
import torch
from click.testing import CliRunner

from chains.manifest import PROGRAMS_FORMAT
from prover.cli import main as prove
from prover.datasets import KERNEL_DATA, OtherDomain, dataset_to_search, domain_words

PROGRAMS = {"name": "programs", "machine": "bits", "values": 2, "variables": 8}


def fake_run(where, dataset_path, domain=None):
    """A run directory whose checkpoint records only what prove reads of it: its dataset's identity."""
    where.mkdir(parents=True)
    dataset = {"path": str(dataset_path), "dataset_id": "0" * 64, **({"domain": domain} if domain else {})}
    torch.save({"config": {"arch": "recurrence", "objective": "plain"}, "model": {}, "identity": {"dataset": dataset}},
               where / "checkpoint.pt")
    return where


def fake_dataset(where, domain=None):
    where.mkdir(parents=True)
    (where / "manifest.json").write_text(json.dumps({"format": "x", **({"domain": domain} if domain else {})}))
    return where


def test_without_data_the_runs_own_dataset_is_searched(tmp_path):
    run = fake_run(tmp_path / "run", tmp_path / "programs-data", PROGRAMS)
    assert dataset_to_search(None, run, "--tracker") == tmp_path / "programs-data"
    assert dataset_to_search(None, None, "--tracker") == KERNEL_DATA  # a kernel searcher given no run
    assert dataset_to_search(None, tmp_path / "nowhere", "--tracker") == KERNEL_DATA  # the searcher says why


def test_a_data_of_the_runs_domain_is_kept_and_one_of_another_refused(tmp_path):
    run = fake_run(tmp_path / "run", tmp_path / "programs-data", PROGRAMS)
    same = fake_dataset(tmp_path / "other-programs", PROGRAMS)
    assert dataset_to_search(same, run, "--tracker") == same
    rewrite = fake_dataset(tmp_path / "tier1")
    with pytest.raises(OtherDomain, match=r"holds rewrite chains, but --tracker .* was trained on programs on the "
                                          r"bits machine"):
        dataset_to_search(rewrite, run, "--tracker")
    rewrite_run = fake_run(tmp_path / "rewrite-run", rewrite)
    with pytest.raises(OtherDomain, match="holds programs on the bits machine, but --oracle"):
        dataset_to_search(same, rewrite_run, "--oracle")
    assert dataset_to_search(tmp_path / "missing", run, "--tracker") == tmp_path / "missing"  # left to the search
    assert domain_words({"import": "pkg.mod:Dial"}) == "the domain pkg.mod:Dial"


@pytest.mark.parametrize("searcher, option", [("imagination", "--tracker"), ("kernel-uniform", "--tracker"),
                                              ("oracle", "--oracle"), ("oracle-imagination", "--oracle")])
def test_the_command_refuses_data_of_another_domain_than_the_run_in_one_line(tmp_path, searcher, option):
    run = fake_run(tmp_path / "run", tmp_path / "programs-data", PROGRAMS)
    rewrite = fake_dataset(tmp_path / "tier1")
    out = tmp_path / "out"
    result = CliRunner().invoke(prove, ["--searcher", searcher, option, str(run), "--data", str(rewrite),
                                        "--out", str(out)])
    assert result.exit_code == 2
    assert len(result.stderr.splitlines()) == 1 and result.stderr.startswith(f"Error: --data {rewrite} holds rewrite")
    assert not out.exists()


def test_a_kernel_searcher_given_a_run_searches_the_runs_dataset(tmp_path, monkeypatch):
    import prover.cli

    searched = []
    monkeypatch.setattr(prover.cli, "_domain", lambda budget_calls, data, *rest: searched.append(data))
    data = tmp_path / "programs-data"
    (data).mkdir()
    (data / "manifest.json").write_text(json.dumps({"format": PROGRAMS_FORMAT, "domain": PROGRAMS}))
    run = fake_run(tmp_path / "run", data, PROGRAMS)
    result = CliRunner().invoke(prove, ["--searcher", "kernel-uniform", "--tracker", str(run), "--out",
                                        str(tmp_path / "out")])
    assert result.exit_code == 0, result.output
    assert searched == [data]  # the programs search, on the run's dataset: not data/tier1-a4

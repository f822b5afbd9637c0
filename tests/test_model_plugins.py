"""Models as plug-ins: every arch on every domain through one run type. For each arch (the slot
recurrence, the registers where the domain has their geometry, the transformer, DeltaProduct and
the GRU of tests/gru_model.py, a model of one's own) on rewrite chains, programs and the dial of
tests/dial_domain.py: a few training steps, the run loaded and stepped through the model protocol
(one step at a time reaching training's own view), ``evaluate-tracker`` streaming it with every
step certified, and ``prove`` using it as imagination. Then what ``--arch package.module:Class``
refuses, in one line."""
from __future__ import annotations

import json
import shutil
import sys
from pathlib import Path

import pytest
import torch
from click.testing import CliRunner

from chains.programs.dataset import ProgramsSpec
from chains.programs.syntax import Machine
from chains.rewrite.dataset import DatasetSpec
from leanbridge.asker import AskConfig
from leanbridge.certify import certify_dataset
from leanbridge.certify_programs import certify_programs
from leanbridge.cli import main as certify
from prover.cli import main as prove
from tracker.analysis_cli import main as analyse_tracker
from tracker.cli import main as train_tracker
from tracker.domain_run import DomainRun
from tracker.inference import RunUnavailable, TrackedRun, load_run
from tracker.protocol import TrackerModel
from tracker.stream_cli import main as evaluate_tracker

pytestmark = pytest.mark.usefixtures("one_thread_module")

GRU = "gru_model:GRU"
ARCHS = ("recurrence", "registers", "transformer", "deltaproduct", GRU)
DOMAINS = ("rewrite", "programs", "dial")
# the registers need a register geometry (chains.registers) that the dial does not declare
CELLS = [(d, a) for d in DOMAINS for a in ARCHS if not (d == "dial" and a == "registers")]


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    """The three tiny certified datasets (one store): domain -> directory; and the store."""
    root = tmp_path_factory.mktemp("plugins")
    store = root / "store.sqlite"
    certify_dataset(DatasetSpec(chains=16, test_lengths=(8,), test_chains=4), root / "rewrite", store)
    certify_programs(ProgramsSpec(machine=Machine(2), chains=16, partners=1, test_lengths=(16,), test_chains=4),
                     root / "programs", store, AskConfig())
    made = CliRunner().invoke(certify, ["--domain", "dial_domain:Dial", "--chains", "30", "--length", "6",
                                        "--test-lengths", "8", "--test-chains", "4", "--jobs", "1",
                                        "--out", str(root / "dial"), "--store", str(store)])
    assert made.exit_code == 0, made.output
    return {d: root / d for d in DOMAINS}, store


@pytest.fixture(scope="module")
def runs(data, tmp_path_factory):
    """``runs(domain, arch)``: a run trained 6 steps by the command (made once per module)."""
    root = tmp_path_factory.mktemp("plugin-runs")
    made: dict = {}

    def run(domain: str, arch: str):
        if (domain, arch) not in made:
            out = root / f"{domain}-{arch.replace(':', '-')}"
            args = ["--data", str(data[0][domain]), "--arch", arch, "--objective", "plain", "--steps", "6",
                    "--width", "16", "--batch-chains", "4", "--set", "warmup_steps=1", "--eval-chains", "4",
                    "--out", str(out), "--threads", "1", "--quiet"]
            if domain == "rewrite" and arch == "registers":
                args += ["--set", "layout=paths"]
            trained = CliRunner().invoke(train_tracker, args)
            assert trained.exit_code == 0, trained.output
            made[domain, arch] = out
        return made[domain, arch]
    return run


def dataset_item_ids(run, token_rows: torch.Tensor) -> torch.Tensor:
    """Token rows (T, E) of one history -> its item ids (1, T) in the dataset's item table."""
    table = {tuple(row): i for i, row in enumerate(run.model.embed.item_tokens.tolist())}
    return torch.tensor([[table[tuple(r)] for r in token_rows.tolist()]])


def one_history(run, domain: str, data_dir):
    """The first 5 events of the dataset's first test history (start, events) and its token rows (6, E)."""
    line = (data_dir / ("test-16.jsonl" if domain == "programs" else "test-8.jsonl")).read_text().splitlines()[0]
    if isinstance(run, TrackedRun):
        record = json.loads(line)
        start, events = record["start"], record["events"][:5]
        return (start, events), torch.cat([run._tree_item(start), *(run._event_item(e) for e in events)])
    start, events = run.domain.record_histories(run.domain.parse_record(line, "test"))[0]
    events = list(events)[:5]
    return (start, events), run._items([run.domain.start_tokens(start), *(run.domain.event_tokens(e) for e in events)])


@pytest.mark.parametrize("domain,arch", CELLS)
def test_every_arch_trains_loads_streams_certified_and_proves(domain, arch, data, runs, tmp_path):
    datasets, store = data
    run_dir = runs(domain, arch)
    run = load_run(run_dir)
    assert isinstance(run, TrackedRun if domain == "rewrite" else DomainRun)
    assert isinstance(run.model, TrackerModel) and run.describe()["arch"] == arch
    # stepped one item at a time through the protocol, a history reaches training's own view of it
    (start, events), rows = one_history(run, domain, datasets[domain])
    with torch.no_grad():
        expected = run.model.final_view(dataset_item_ids(run, rows))[0]
    torch.testing.assert_close(run.view(run.run(start, events)) if domain == "rewrite"
                               else run.model.view(run.run(start, events).unsqueeze(0))[0],
                               expected, atol=1e-5, rtol=1e-4)

    out = tmp_path / "stream"
    streamed = CliRunner().invoke(evaluate_tracker, [str(run_dir), "--lengths", "4,8", "--chains", "2", "--store",
                                                     str(store), "--out", str(out), "--quiet"])
    assert streamed.exit_code == 0, streamed.output
    report = json.loads((out / "report.json").read_text())
    assert report["steps"] == 8 and set(report["exact"]) == {"4", "8"} and report["tracker"]["arch"] == arch
    certified = report["certification"]
    assert certified["confirmed_steps"] > 0
    if domain != "rewrite":  # a domain's certifier counts its distinct steps; every one confirmed
        assert certified["confirmed_steps"] == certified["distinct_steps"]

    searched = tmp_path / "prove"
    proved = CliRunner().invoke(prove, ["--data", str(datasets[domain]), "--tracker", str(run_dir), "--searcher",
                                        "imagination", "--problems", "1", "--distances", "1,2", "--budget-calls", "2",
                                        "--jobs", "1", "--out", str(searched)])
    assert proved.exit_code == 0, proved.output
    results = [json.loads(line) for line in (searched / "results.jsonl").read_text().splitlines()]
    assert len(results) == 2 and all(r["calls"] <= 2 for r in results)
    assert json.loads((searched / "report.json").read_text())["kernel_calls"] == sum(r["calls"] for r in results)


def test_a_model_of_ones_own_is_read_in_batches_as_one_state_at_a_time(data, runs):
    """On rewrite chains a model of one's own whose state keeps its shape moves in batches (the
    prover's beam) to the states the one-state methods reach, histories of different lengths included."""
    run = load_run(runs("rewrite", GRU))
    assert run.batched
    records = [json.loads(line) for line in (data[0]["rewrite"] / "test-8.jsonl").read_text().splitlines()[:4]]
    histories = [(r["start"], r["events"][:n]) for n, r in enumerate(records)]  # 0 to 3 events
    batch = run.encode_batch(histories)
    alone = [run.run(start, events) for start, events in histories]
    for a, b in zip(batch, alone):
        torch.testing.assert_close(run.view(a), run.view(b), atol=1e-5, rtol=1e-4)
    moved = run.step_batch(batch, [r["events"][-1] for r in records])
    assert run.decode_batch(moved) == [run.decode_tree(s) for s in moved]


@pytest.mark.parametrize("arch", ["transformer", "deltaproduct", GRU])
def test_training_reads_what_the_stepping_reads(arch, data):
    """forward's view after every step, final_view and advance (what training reads) agree with the
    model's own stepping: a built-in arch's, and a Stepped model's derived from it (padding at the
    end of shorter histories leaves their state alone)."""
    from tracker.build import build_model
    from tracker.data import load_dataset, sample_batch
    from tracker.models import ModelConfig

    dataset = load_dataset(data[0]["rewrite"])
    batch = sample_batch(dataset, 3, torch.Generator().manual_seed(1))
    torch.manual_seed(0)
    model = build_model(ModelConfig(arch=arch, width=16), dataset.item_tokens, dataset.vocab.size,
                        dataset.vocab.n_out, dataset.tree_len, domain="rewrite")
    with torch.no_grad():
        z, state = model(batch.items)
        last = batch.lengths - 1
        ends = z[torch.arange(len(z)), last]  # (H, C)
        torch.testing.assert_close(model.final_view(batch.items), ends, atol=1e-5, rtol=1e-4)
        for h in (0, int(torch.argmin(batch.lengths))):  # the longest history and the shortest
            w = model.initial_state(1)
            for t in range(int(batch.lengths[h])):
                w = model.read(w, model.embed.item_tokens[batch.items[h:h + 1, t]])
            torch.testing.assert_close(model.view(w)[0], ends[h], atol=1e-5, rtol=1e-4)
        if arch == GRU:  # advance by one item is the longer history read whole
            rows = torch.tensor([0, 1])
            item = dataset.succ_items[batch.ends[rows], 0]
            longer = torch.cat([batch.items[rows], torch.zeros(2, 1, dtype=torch.long)], 1)
            longer[torch.arange(2), batch.lengths[rows]] = item
            torch.testing.assert_close(model.advance(state, rows, item), model.final_view(longer), atol=1e-5,
                                       rtol=1e-4)


@pytest.mark.parametrize("domain", DOMAINS)
def test_analyse_tracker_reads_a_model_of_ones_own(domain, data, runs, tmp_path):
    out = tmp_path / "analysis"
    analysed = CliRunner().invoke(analyse_tracker, [str(runs(domain, GRU)), "--chains", "24", "--length", "6",
                                                    "--out", str(out)])
    assert analysed.exit_code == 0, analysed.output
    assert (out / "analysis.json").is_file()


def test_a_batch_of_transformer_states_grows_with_its_histories(data, runs):
    """The transformer's state is its history of pooled items: a batch of equally long histories
    steps as one tensor (N, T, C), and a state of another shape is refused in one line."""
    run = load_run(runs("programs", "transformer"))
    starts = [run.domain.parse_state("00000000")] * 3
    w = run.encode_batch(starts)
    assert w.shape == (3, 1, 16)
    w = run.step_batch(w, [run.domain.parse_event("v1 = not v0")] * 3)
    assert w.shape == (3, 2, 16) and len(run.decode_batch(w)) == 3
    with pytest.raises(TypeError, match=r"a state is what encode or step returned \(a tensor of shape \(T, 16\)\)"):
        run.decode(torch.zeros(3))


@pytest.mark.parametrize("domain,start,event", [("programs", "00000000", "v3 = 1"), ("dial", "2", "turn")])
def test_one_run_api_on_every_domain_takes_text_and_refuses_what_it_cannot_read(domain, start, event, runs):
    """The batch calls read states and events as text as the one-at-a-time calls do; ``view`` and
    ``views`` are the readout's view, as the rewrite run's are; a history where a start state
    belongs is refused in one line."""
    run = load_run(runs(domain, "recurrence"))
    w = run.step_batch(run.encode_batch([start, start]), [event, event])
    one = run.step(run.encode(start), event)
    assert torch.allclose(w[0], one, atol=1e-5)  # a batch of two and one alone: equal up to rounding
    assert run.decode_batch(one.unsqueeze(0))[0] == run.domain.parse_state(run.decode(one))
    assert torch.equal(run.view(one), run.views([(start, [event])])[0])
    assert run.views([(start, [event]), (start, [])]).shape == (2, run.view(one).shape[0])
    with pytest.raises(ValueError, match=f"not a start state (of the {domain} domain|or an event of it)") as refused:
        run.encode_batch([(start, [event])])
    assert "\n" not in str(refused.value)
    with pytest.raises(ValueError, match="no such event") as refused:  # the domain's own reason, one line
        run.step_batch(w, ["no such event", "no such event"])
    assert "\n" not in str(refused.value)


@pytest.mark.parametrize("arch, why", [
    ("no_such_module_here:GRU", "cannot import no_such_module_here"),
    ("gru_model:Nothing", "gru_model has no Nothing"),
    ("dial_domain:Dial", "is not a model"),
    ("gru_model:Stepped", "a first step (initial_state, read, view) failed: NotImplementedError"),
    ("not an arch", "unknown arch"),
])
def test_an_arch_naming_no_model_is_refused_in_one_line(arch, why, data, tmp_path):
    result = CliRunner().invoke(train_tracker, ["--data", str(data[0]["dial"]), "--arch", arch, "--steps", "2",
                                                "--eval-chains", "4", "--out", str(tmp_path / "x"), "--quiet",
                                                "--threads", "1"])
    assert result.exit_code != 0 and why in result.output.strip().splitlines()[-1], result.output
    assert "Traceback" not in result.output


def test_a_run_whose_model_no_longer_imports_is_refused_in_one_line(data, tmp_path, monkeypatch):
    """The run records its arch's import path and loading imports it again: once the module is gone,
    loading the run (and every command on it) is refused in one line naming the import."""
    import gru_model

    shutil.copy(gru_model.__file__, tmp_path / "gone_model.py")
    monkeypatch.syspath_prepend(str(tmp_path))
    run_dir = tmp_path / "run"
    trained = CliRunner().invoke(train_tracker, ["--data", str(data[0]["dial"]), "--arch", "gone_model:GRU",
                                                 "--steps", "2", "--width", "8", "--batch-chains", "4",
                                                 "--eval-chains", "2", "--out", str(run_dir), "--quiet",
                                                 "--threads", "1"])
    assert trained.exit_code == 0, trained.output
    assert load_run(run_dir).describe()["arch"] == "gone_model:GRU"
    (tmp_path / "gone_model.py").unlink()
    monkeypatch.delitem(sys.modules, "gone_model")
    with pytest.raises(RunUnavailable, match=r"^tracker .*run: cannot import gone_model for the arch gone_model:GRU"):
        load_run(run_dir)
    streamed = CliRunner().invoke(evaluate_tracker, [str(run_dir), "--lengths", "4", "--quiet"])
    assert streamed.exit_code != 0 and "cannot import gone_model" in streamed.output
    assert "Traceback" not in streamed.output


def test_the_registers_refuse_a_domain_without_their_geometry_in_one_line(data, tmp_path):
    result = CliRunner().invoke(train_tracker, ["--data", str(data[0]["dial"]), "--arch", "registers", "--steps", "2",
                                                "--out", str(tmp_path / "x"), "--quiet", "--threads", "1"])
    assert result.exit_code != 0 and "that the dial domain does not declare" in result.output
    assert "Traceback" not in result.output


def test_the_guide_shows_the_gru_as_the_tests_run_it():
    """docs/guide/bring-your-own-model.md quotes tests/gru_model.py's class whole."""
    import gru_model

    source = Path(gru_model.__file__).read_text()
    guide = (Path(__file__).resolve().parent.parent / "docs" / "guide" / "bring-your-own-model.md").read_text()
    quoted = guide.split("```py\nclass GRU(Stepped):", 1)[1].split("```", 1)[0]
    assert "class GRU(Stepped):" + quoted == source[source.index("class GRU(Stepped):"):]

"""tracker.load_run: a trained run of every architecture as a state machine, the same views as the
evaluation's (on a tiny dataset certified here and runs trained a few dozen steps); the docs'
examples run in tests/test_examples.py."""
from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
import torch

from chains.rewrite.dataset import DatasetSpec
from leanbridge.certify import certify_dataset
from tracker.evaluate import EvalConfig
from tracker.inference import RunUnavailable, load_run
from tracker.train import TrainConfig, train

ROOT = Path(__file__).resolve().parent.parent
ARCHS = ("recurrence", "transformer", "deltaproduct", "registers")


@pytest.fixture(scope="module")
def tiny(certify_tiny):
    return certify_tiny(chains=40, test_chains=8)


@pytest.fixture(scope="module")
def runs(tiny, tmp_path_factory):
    root = tmp_path_factory.mktemp("runs")
    out = {}
    for arch in ARCHS:
        config = TrainConfig(data=str(tiny), arch=arch, objective="plain", width=32, steps=30, batch_chains=4,
                             checkpoint_every=30, warmup_steps=5, layout="paths" if arch == "registers" else "polish")
        train(config, root / arch, show_progress=False, eval_config=EvalConfig(pair_lengths=(8,)))
        out[arch] = root / arch
    return out


def chains(data: Path, length: int = 8, n: int = 4) -> list[dict]:
    lines = (data / f"test-{length}.jsonl").read_text().splitlines()[:n]
    return [json.loads(line) for line in lines]


def item_ids(run, start: str, events: list[str]) -> torch.Tensor:
    """The dataset's item ids of a history, found by the items' token rows."""
    table = {tuple(row): i for i, row in enumerate(run.model.embed.item_tokens.tolist())}
    rows = [run._tree_item(start), *(run._event_item(e) for e in events)]
    return torch.tensor([[table[tuple(r[0].tolist())] for r in rows]])


@pytest.mark.parametrize("arch", ARCHS)
def test_views_are_the_evaluations(runs, tiny, arch):
    run = load_run(runs[arch])
    assert run.arch == arch and run.describe()["arch"] == arch
    histories = [(c["start"], c["events"]) for c in chains(tiny)]
    views = run.views(histories)
    assert views.shape == (len(histories), run.model.view_width)
    with torch.no_grad():
        expected = torch.cat([run.model.final_view(item_ids(run, s, e)) for s, e in histories])
    torch.testing.assert_close(views, expected, atol=1e-5, rtol=1e-4)


@pytest.mark.parametrize("arch", ARCHS)
def test_step_by_step_is_the_whole_history(runs, tiny, arch):
    run = load_run(runs[arch], data=tiny)
    chain = chains(tiny, 16, 1)[0]
    state = run.encode(chain["start"])
    for event in chain["events"]:
        state = run.step(state, event)
    torch.testing.assert_close(run.view(state), run.views([(chain["start"], chain["events"])])[0])
    decoded = run.decode(state)
    assert decoded is None or isinstance(decoded, str)
    assert run.decode_tree(state) is None or decoded is not None


@pytest.mark.parametrize("arch", ARCHS)
def test_batches_are_the_one_state_methods(runs, tiny, arch):
    """encode_batch, step_batch and decode_batch (what the prover's search calls) read histories
    of different lengths, and events given as text, to the states the one-state methods reach."""
    run = load_run(runs[arch], data=tiny)
    histories = [(c["start"], c["events"][:n]) for n, c in enumerate(chains(tiny, 8, 4))]  # 0 to 3 events
    batch = run.encode_batch(histories)
    alone = [run.run(start, events) for start, events in histories]
    for a, b in zip(batch, alone):
        torch.testing.assert_close(run.view(a), run.view(b), atol=1e-5, rtol=1e-4)
    events = [c["events"][-1] for c in chains(tiny, 8, 4)]
    moved = run.step_batch(batch, events)
    for a, b in zip(moved, [run.step(s, e) for s, e in zip(alone, events)]):
        torch.testing.assert_close(run.view(a), run.view(b), atol=1e-5, rtol=1e-4)
    assert run.decode_batch(moved) == [run.decode_tree(s) for s in moved]
    assert run.encode_batch([]) == run.step_batch([], []) == run.decode_batch([]) == []
    with pytest.raises(ValueError, match="2 states but 1 events"):
        run.step_batch(batch[:2], events[:1])


def test_a_missing_run_or_another_dataset_is_refused(runs, tiny, tmp_path):
    with pytest.raises(RunUnavailable, match="no such run directory"):
        load_run(tmp_path / "nowhere")
    (tmp_path / "empty").mkdir()
    with pytest.raises(RunUnavailable, match="checkpoint"):
        load_run(tmp_path / "empty")
    other = tmp_path / "other"
    certify_dataset(DatasetSpec(chains=3, length=2, partners=1, test_lengths=(2,), test_chains=2, seed=1),
                    other, tmp_path / "store.sqlite")
    with pytest.raises(RunUnavailable, match="another dataset"):
        load_run(runs["recurrence"], data=other)


def test_a_run_comes_back_with_its_checkpoints_weights_and_a_misfit_is_one_line(runs, tmp_path):
    """load_run builds its model through the one restore path (training.checkpoint.RunCheckpoint):
    every tensor the checkpoint holds, bit for bit, in evaluation mode; weights of another shape are
    refused in one line naming the run."""
    from training.checkpoint import CHECKPOINT, Checkpoint

    for arch in ARCHS:
        stored = Checkpoint.of_run(runs[arch], TrainConfig).blob["model"]
        model = load_run(runs[arch]).model
        assert not model.training
        loaded = model.state_dict()
        assert loaded.keys() == stored.keys() and all(torch.equal(loaded[k], v) for k, v in stored.items()), arch
    blob = Checkpoint.of_run(runs["recurrence"], TrainConfig).blob
    name = next(k for k, v in blob["model"].items() if k != "head.weight" and k.endswith("weight") and v.dim() == 2)
    broken = tmp_path / "broken"
    broken.mkdir()
    torch.save({**blob, "model": {**blob["model"], name: blob["model"][name][:, :1]}}, broken / CHECKPOINT)
    with pytest.raises(RunUnavailable, match=r"^tracker .*broken: its weights do not fit its settings \(") as refused:
        load_run(broken)
    assert "\n" not in str(refused.value)


def test_importing_tracker_does_no_work():
    code = "import sys, tracker; assert 'torch' not in sys.modules; assert callable(tracker.load_run)"
    subprocess.run([sys.executable, "-c", code], check=True, cwd=ROOT)


def test_load_run_takes_a_device_as_the_commands_do(runs):
    from training.device import DeviceUnavailable

    assert load_run(runs["recurrence"], device="auto").device.type in ("cpu", "cuda")
    if not torch.cuda.is_available():
        with pytest.raises(DeviceUnavailable, match="no CUDA device"):
            load_run(runs["recurrence"], device="cuda")
    with pytest.raises(DeviceUnavailable):
        load_run(runs["recurrence"], device="tpu")


def test_a_checked_history_names_the_step_that_breaks_the_rules(runs):
    from tracker import HistoryError

    run = load_run(runs["recurrence"])
    start = "* + a b * c d"
    assert run.decode_tree(run.run(start, ["mul_comm@"], check=True)) == run.decode_tree(run.run(start, ["mul_comm@"]))
    with pytest.raises(HistoryError, match=r"step 1: add_comm@ does not apply to \* \* c d \+ a b"):
        run.run(start, ["mul_comm@", "add_comm@"], check=True)
    with pytest.raises(HistoryError, match="step 0: mul_comm@0101 does not apply"):
        run.run(start, ["mul_comm@0101"], check=True)
    with pytest.raises(HistoryError, match="each of a b c d once"):
        run.run("* + a a * c d", [], check=True)
    with pytest.raises(TypeError, match="not int"):
        run.run(start, [3], check=True)
    with pytest.raises(TypeError, match="not int"):
        run.step(run.encode(start), 3)
    run.run(start, ["add_comm@"])  # unchecked: read all the same


@pytest.mark.parametrize("arch", ARCHS)
def test_the_python_api_refuses_what_it_cannot_read_in_one_line(runs, arch):
    """What a user mistypes gets one line saying what was expected, on every architecture: one event
    where a list is expected, a history that is no (start, events) pair, a state that encode or step
    never made, and (even unchecked) a start tree outside the domain, which the tracker would read
    as another tree."""
    from tracker import HistoryError

    run = load_run(runs[arch])
    start = "* + a b * c d"
    state = run.encode(start)
    with pytest.raises(TypeError, match=r"events are a list of events, not one event: write \['mul_comm@'\]"):
        run.run(start, "mul_comm@", check=True)
    with pytest.raises(TypeError, match=r"events are a list of events"):
        run.run(start, "mul_comm@")
    with pytest.raises(TypeError, match=r"history 0: a \(start, events\) pair, not \('\* \+ a b \* c d',\)"):
        run.views([(start,)])
    for wrong in ("hello", [1, 2, 3], torch.zeros(3)):
        with pytest.raises(TypeError, match="a state is what encode or step returned"):
            run.decode(wrong)
        with pytest.raises(TypeError, match="a state is what encode or step returned"):
            run.step(wrong, "mul_comm@")
    with pytest.raises(HistoryError, match="each of a b c d once"):
        run.encode("* + a a * c d")
    assert run.decode(run.step(state, "mul_comm@")) == run.decode(run.run(start, ["mul_comm@"]))

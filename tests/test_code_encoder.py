"""The frozen code-model arm (``train-tracker --encoder``), on a tiny Qwen2 model made here with
random weights (no weights can be fetched): an item's Python line means what the statement does,
the reader is frozen and read at its middle layer, a run trains only the projection, saves none
of the code model, loads back reading the same, and every refusal is one line."""
from __future__ import annotations

import hashlib
import json
import random
import sys
from dataclasses import replace
from pathlib import Path

import pytest
import torch
from click.testing import CliRunner
from hypothesis import given, strategies as st

from chains.programs.dataset import ProgramsSpec
from chains.programs.domain import ProgramsDomain
from chains.programs.sampling import random_program
from chains.programs.syntax import VARIABLES, Machine, Statement, const, execute, var
from leanbridge.asker import AskConfig
from leanbridge.certify_programs import certify_programs
from tracker.cli import main as train_tracker
from tracker.code_encoder import EncoderUnavailable, item_of_tokens, load_reader, python_line
from tracker.data import load_dataset
from tracker.evaluate import EvalConfig, evaluate
from tracker.inference import load_run
from tracker.train import TrainConfig, Trainer, train
from training.checkpoint import CHECKPOINT, RunUnavailable, load_checkpoint

pytestmark = pytest.mark.usefixtures("one_thread_module")

MACHINES = (Machine(2), Machine(16))
EVAL = EvalConfig(max_chains=8, pair_lengths=(8,), threads=1)
HIDDEN, LAYERS = 32, 4


def operands(machine: Machine):
    return st.one_of(st.builds(var, st.integers(0, VARIABLES - 1)), st.builds(const, st.integers(0, machine.values - 1)))


def statements(machine: Machine):
    return st.sampled_from(sorted(machine.ops)).flatmap(
        lambda op: st.builds(Statement, st.integers(0, VARIABLES - 1), st.just(op),
                             st.tuples(*[operands(machine)] * machine.ops[op])))


def states(machine: Machine):
    return st.tuples(*[st.integers(0, machine.values - 1)] * VARIABLES)


@pytest.mark.parametrize("machine", MACHINES, ids=lambda m: m.name)
@given(data=st.data())
def test_a_python_line_does_what_its_item_does(machine, data):
    """exec of a statement's line over v0..v7 gives the interpreter's state; a start state's line
    sets it; both come back from the tokens a dataset holds."""
    statement, state = data.draw(statements(machine)), data.draw(states(machine))
    names = {f"v{i}": value for i, value in enumerate(state)}
    exec(python_line(statement), {}, names)
    assert tuple(names[f"v{i}"] for i in range(VARIABLES)) == execute(statement, state, machine.values)
    started: dict = {}
    exec(python_line(state), {}, started)
    assert tuple(started[f"v{i}"] for i in range(VARIABLES)) == state
    domain = ProgramsDomain(machine)
    assert item_of_tokens(domain.event_tokens(statement)) == statement
    assert item_of_tokens(domain.start_tokens(state)) == state


def test_tokens_of_no_item_are_refused_in_one_line():
    with pytest.raises(ValueError, match="not a programs item"):
        item_of_tokens(["c0", "c1"])


def corpus() -> list[str]:
    """The Python lines the tiny tokenizer learns from: every Bits statement, Arithmetic
    statements of random programs, and start states."""
    rng = random.Random(0)
    lines = [python_line(s) for s in ProgramsDomain(Machine(2)).statements()]
    lines += [python_line(s) for s in random_program(rng, Machine(16), 3000)]
    lines += [python_line(tuple(rng.randrange(16) for _ in range(VARIABLES))) for _ in range(200)]
    return lines


def make_code_model(directory: Path) -> Path:
    """A Qwen2 causal model of random weights, 4 layers of width 32, and a byte-level BPE tokenizer
    (Qwen2's pre-tokenizer) trained on ``corpus()``, saved as a local model directory."""
    from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, trainers
    from transformers import PreTrainedTokenizerFast, Qwen2Config, Qwen2ForCausalLM
    from transformers.models.qwen2.tokenization_qwen2 import PRETOKENIZE_REGEX

    tok = Tokenizer(models.BPE())
    tok.normalizer = normalizers.NFC()
    tok.pre_tokenizer = pre_tokenizers.Sequence([
        pre_tokenizers.Split(Regex(PRETOKENIZE_REGEX), behavior="isolated"),
        pre_tokenizers.ByteLevel(add_prefix_space=False, use_regex=False)])
    tok.decoder = decoders.ByteLevel()
    tok.train_from_iterator(corpus(), trainers.BpeTrainer(
        vocab_size=320, special_tokens=["<|endoftext|>"], initial_alphabet=pre_tokenizers.ByteLevel.alphabet(),
        show_progress=False))
    tokenizer = PreTrainedTokenizerFast(tokenizer_object=tok, eos_token="<|endoftext|>", pad_token="<|endoftext|>")
    tokenizer.save_pretrained(directory)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(0)
        model = Qwen2ForCausalLM(Qwen2Config(
            hidden_size=HIDDEN, num_hidden_layers=LAYERS, num_attention_heads=2, num_key_value_heads=1,
            intermediate_size=64, vocab_size=len(tokenizer), max_position_embeddings=64))
    model.save_pretrained(directory)
    return directory


def digest(directory: Path) -> dict[str, str]:
    return {p.name: hashlib.sha256(p.read_bytes()).hexdigest() for p in sorted(directory.iterdir())}


@pytest.fixture(scope="module")
def code_model(tmp_path_factory):
    """The tiny code model's directory, nothing fetched (HF_HUB_OFFLINE=1 for the module)."""
    with pytest.MonkeyPatch.context() as patch:
        patch.setenv("HF_HUB_OFFLINE", "1")
        yield make_code_model(tmp_path_factory.mktemp("code-model"))


@pytest.fixture(scope="module")
def programs(tmp_path_factory):
    """A tiny Bits dataset certified by Lean."""
    root = tmp_path_factory.mktemp("encoder-programs")
    spec = ProgramsSpec(machine=Machine(2), chains=12, partners=1, test_lengths=(8,), test_chains=4)
    certify_programs(spec, root / "data", root / "store.sqlite", AskConfig())
    return root / "data"


@pytest.fixture(scope="module")
def run(code_model, programs, tmp_path_factory):
    """A run trained 3 steps through the code model: (its directory, its report, its settings,
    the model directory's files before training)."""
    before = digest(code_model)
    config = TrainConfig(data=str(programs), encoder=str(code_model), arch="recurrence", objective="plain",
                         width=16, steps=3, batch_chains=4, checkpoint_every=3, warmup_steps=1)
    out = tmp_path_factory.mktemp("encoder-run") / "run"
    report = train(config, out, show_progress=False, eval_config=EVAL)
    return out, report, config, before


def test_the_reader_is_frozen_and_reads_the_middle_layer(code_model):
    reader = load_reader(str(code_model))
    assert not reader.model.training
    assert all(not p.requires_grad and p.dtype == torch.float32 for p in reader.model.parameters())
    line = python_line(Statement(3, "ite", (var(1), var(2), var(5), const(7))))
    ids = reader.tokenizer(line)["input_ids"]
    assert len(ids) > 3 and reader.tokenizer.decode(ids) == line  # the line, token by token
    states = reader.read(line)
    with torch.no_grad():
        layers = reader.model(input_ids=torch.tensor([ids]), output_hidden_states=True).hidden_states
    assert len(layers) == LAYERS + 1 and reader.layer == LAYERS // 2
    assert states.shape == (len(ids), HIDDEN) and torch.equal(states, layers[LAYERS // 2][0])
    assert not torch.equal(states, layers[LAYERS // 2 + 1][0])
    assert reader.describe() == {"name_or_path": str(code_model), "model_type": "qwen2",
                                 "num_hidden_layers": LAYERS, "hidden_size": HIDDEN, "layer": LAYERS // 2}


def test_training_moves_the_projection_and_never_the_code_model(code_model, programs):
    config = TrainConfig(data=str(programs), encoder=str(code_model), objective="plain", width=16, steps=3,
                         batch_chains=4, warmup_steps=1)
    trainer = Trainer(config, load_dataset(programs))
    embed = trainer.model.embed
    frozen = {k: v.clone() for k, v in embed.reader.model.state_dict().items()}
    projection = embed.project.weight.detach().clone()
    trained = {id(p) for group in trainer.optimizer.param_groups for p in group["params"]}
    assert not trained & {id(p) for p in embed.reader.model.parameters()}
    for step in range(3):
        trainer.train_step(step)
    assert all(torch.equal(v, frozen[k]) for k, v in embed.reader.model.state_dict().items())
    assert not torch.equal(embed.project.weight, projection)
    assert embed.filled > 1  # items were read


def test_a_run_records_its_reader_and_saves_none_of_it(run, code_model):
    out, report, _, before = run
    assert report["encoder"] == {"name_or_path": str(code_model), "model_type": "qwen2",
                                 "num_hidden_layers": LAYERS, "hidden_size": HIDDEN, "layer": LAYERS // 2}
    assert json.loads((out / "report.json").read_text())["encoder"] == report["encoder"]
    assert digest(code_model) == before
    saved = load_checkpoint(out / CHECKPOINT)["model"]
    assert saved["embed.project.weight"].shape == (16, HIDDEN)
    assert not {"embed.states", "embed.mask", "embed.slot", "embed.table.weight"} & saved.keys()
    assert not any("layers" in k or "reader" in k for k in saved)
    # every saved tensor but the item table is a trained parameter: the code model is none of them
    assert sum(v.numel() for k, v in saved.items() if k != "embed.item_tokens") == report["parameters"]


def test_a_loaded_run_reads_as_the_trained_one(run, programs):
    out, report, _, _ = run
    loaded = load_run(out)
    assert loaded.model.embed.filled == 1  # nothing read yet: the states were not saved
    figures = evaluate(loaded.model, load_dataset(programs), EVAL, show_progress=False)
    assert figures["exact"] == report["exact"] and figures["pair_distance"] == report["pair_distance"]
    program = ["v3 = 1", "v2 = not v3", "v5 = v2 xor v3"]  # read from their tokens, dataset's or not
    assert len(loaded.decode(loaded.run("00000000", program))) == VARIABLES


def test_a_run_whose_code_model_is_gone_is_refused_in_one_line(run, code_model, tmp_path):
    out, _, config, _ = run
    away = tmp_path / "away"
    code_model.rename(away)
    try:
        with pytest.raises(RunUnavailable) as refused:
            load_run(out)
        with pytest.raises(EncoderUnavailable, match="must be on this machine"):
            train(replace(config, steps=4), out, resume=True, show_progress=False, eval_config=EVAL)
    finally:
        away.rename(code_model)
    assert "must be on this machine" in str(refused.value) and "\n" not in str(refused.value)


def test_without_transformers_the_extra_is_named(monkeypatch):
    monkeypatch.setitem(sys.modules, "transformers", None)  # an import of it raises ImportError
    with pytest.raises(EncoderUnavailable, match=r"pip install 'exact-state\[encoder\]'"):
        load_reader("any-model")


@pytest.fixture(scope="module")
def rewrite(tmp_path_factory):
    """A tiny rewrite-chains dataset certified by Lean."""
    from chains.rewrite.dataset import DatasetSpec
    from leanbridge.certify import certify_dataset

    root = tmp_path_factory.mktemp("encoder-rewrite")
    certify_dataset(DatasetSpec(chains=6, test_lengths=(8,), test_chains=2), root / "data", root / "store.sqlite")
    return root / "data"


@pytest.mark.parametrize("case", ["absent", "hub name", "rewrite", "transformer"])
def test_train_tracker_refuses_an_encoder_it_cannot_use_in_one_line(case, code_model, programs, rewrite, tmp_path):
    data, encoder, extra, said = programs, str(code_model), [], "programs statements into the slot recurrence"
    if case == "absent":
        encoder, said = str(tmp_path / "no-model"), "must be on this machine"
    elif case == "hub name":
        encoder, said = "exact-state-tests/no-such-coder", "not in the local Hugging Face cache"
    elif case == "rewrite":
        data = rewrite
    else:
        extra = ["--arch", "transformer"]
    args = ["--data", str(data), "--encoder", encoder, "--objective", "plain", "--steps", "2", "--width", "16",
            "--batch-chains", "2", "--threads", "1", "--quiet", "--out", str(tmp_path / "run"), *extra]
    result = CliRunner().invoke(train_tracker, args)
    assert result.exit_code == 1 and "Traceback" not in result.output, result.output
    lines = [line for line in result.output.splitlines() if line.strip()]
    assert lines[-1].startswith("Error: ") and said in lines[-1]
    assert (encoder in lines[-1]) == (case in ("absent", "hub name"))  # a model it cannot read is named
    assert not (tmp_path / "run").exists()


def test_a_run_without_an_encoder_never_imports_transformers(programs, monkeypatch):
    monkeypatch.setitem(sys.modules, "transformers", None)  # any import of it would raise ImportError
    trainer = Trainer(TrainConfig(data=str(programs), objective="plain", width=16), load_dataset(programs))
    assert not hasattr(trainer.model.embed, "reader")

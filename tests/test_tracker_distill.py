"""The output-level self-distillation term (``--objective self-distill``): each chain's readout
pulled to its certified partner's, the partner a stop-gradient teacher, at the ends and after one
common next event, reading no tree label."""
import json
from dataclasses import replace

import pytest
import torch
from hypothesis import given, strategies as st

from tracker.build import build_model
from tracker.config import TrainConfig
from tracker.data import load_dataset, sample_batch
from tracker.evaluate import EvalConfig
from tracker.losses import distill_pairs, self_distill, tracker_losses
from tracker.models import ModelConfig
from tracker.train import train
from training.runlog import METRICS, LogConfig

pytestmark = pytest.mark.usefixtures("one_thread_module")


@pytest.fixture(scope="module")
def tiny(certify_tiny):
    return certify_tiny(16, 4)


@pytest.fixture(scope="module")
def data(tiny):
    return load_dataset(tiny)


@pytest.fixture(scope="module")
def model(data):
    torch.manual_seed(0)
    return build_model(ModelConfig(width=32), data.item_tokens, data.vocab.size, data.vocab.n_out, data.tree_len,
                       domain="rewrite")


def _ends(model, batch):
    """The batch's end views as leaves: chains (B, C), partners (B, K, C), and the end states (H, C)."""
    z, state = model(batch.items)
    z_end = z[torch.arange(len(z)), batch.lengths - 1].detach()
    b, k = batch.chains, batch.partners
    chain_end = z_end[:b].clone().requires_grad_()
    partner_end = z_end[b:].view(b, k, -1).clone().requires_grad_()
    return chain_end, partner_end, state.detach().clone().requires_grad_()


@given(seed=st.integers(0, 2 ** 16), scale=st.floats(0.1, 10))
def test_the_divergence_vanishes_only_where_teacher_and_student_read_alike(model, seed, scale):
    views = torch.randn(6, 32, generator=torch.Generator().manual_seed(seed)) * scale
    assert self_distill(model, views, views).abs() < 1e-6
    other = torch.roll(views, 1, dims=0)
    assert self_distill(model, views, other) > 0
    # masked pairs do not count: only the differing pair 0 kept
    same = views.clone()
    same[0] = other[0]
    kept = self_distill(model, same, views, torch.eye(6)[0])
    assert torch.allclose(kept, self_distill(model, same[:1], views[:1]), rtol=1e-3, atol=1e-6)


def test_the_teacher_gets_no_gradient(model, data):
    batch = sample_batch(data, 4, torch.Generator().manual_seed(1))
    chain_end, partner_end, state = _ends(model, batch)
    loss = distill_pairs(model, data, state, chain_end, partner_end, batch.ends, torch.Generator().manual_seed(2))
    loss.backward()
    assert loss > 0
    assert chain_end.grad.abs().sum() > 0 and state.grad[:4].abs().sum() > 0  # the chains learn
    assert partner_end.grad is None and (state.grad[4:] == 0).all()  # their partners do not


def test_the_term_is_zero_when_every_partner_is_its_chain(model, data):
    batch = sample_batch(data, 4, torch.Generator().manual_seed(3))
    chain_end, _, state = _ends(model, batch)
    k = batch.partners
    copies = chain_end.detach()[:, None].expand(-1, k, -1)  # (B, K, C): each partner read as its chain
    same_state = torch.cat([state[:4], state[:4].repeat_interleave(k, 0)])
    same = distill_pairs(model, data, same_state, chain_end, copies, batch.ends, torch.Generator().manual_seed(4))
    assert same.abs() < 1e-6


def test_the_continuation_counts_only_where_a_common_event_exists(model, data):
    batch = sample_batch(data, 4, torch.Generator().manual_seed(5))
    chain_end, partner_end, state = _ends(model, batch)
    at_ends = self_distill(model, chain_end.repeat_interleave(batch.partners, 0), partner_end.flatten(0, 1))
    stuck = replace(data, succ_items=torch.full_like(data.succ_items, -1))  # no event applies anywhere
    both = [distill_pairs(model, d, state, chain_end, partner_end, batch.ends, torch.Generator().manual_seed(6))
            for d in (stuck, data)]
    assert torch.allclose(both[0], at_ends)  # every continuation masked out: the ends alone
    assert not torch.allclose(both[1], at_ends)  # the continuations count


def test_the_term_reads_no_tree_label(model, data):
    config = TrainConfig(data="unused", objective="self-distill", width=32, steps=10, invariance_delay=0)
    batch = sample_batch(data, 4, torch.Generator().manual_seed(7))
    garbage = torch.randint(0, data.vocab.n_out, data.tree_tokens.shape, generator=torch.Generator().manual_seed(8))
    out = [tracker_losses(config, model, None, d, batch, 5, torch.Generator().manual_seed(9))
           for d in (data, replace(data, tree_tokens=garbage))]
    assert out[0]["ce"] != out[1]["ce"]  # the labels changed what the cross-entropy reads
    assert out[0]["distill"] > 0 and torch.equal(out[0]["distill"], out[1]["distill"])


@given(step=st.integers(0, 400), steps=st.integers(1, 300), mu=st.floats(0, 5),
       delay=st.floats(0, 1), ramp=st.floats(0, 1))
def test_the_distill_term_takes_the_invariance_weight_and_schedule(step, steps, mu, delay, ramp):
    config = TrainConfig(objective="self-distill", steps=steps, mu=mu, invariance_delay=delay, invariance_ramp=ramp)
    assert config.terms == {"distill"}
    assert config.weight("distill", step) == config.weight("invariance", step)


def test_a_self_distill_run_trains_and_logs_the_term(tiny, data, tmp_path):
    config = TrainConfig(data=str(tiny), objective="self-distill", width=32, steps=5, batch_chains=4,
                         invariance_delay=0.4, invariance_ramp=0)
    report = train(config, tmp_path, show_progress=False, data=data, log=LogConfig(every=1),
                   eval_config=EvalConfig(max_chains=4, pair_lengths=(8,)))
    lines = [json.loads(line) for line in (tmp_path / METRICS).read_text().splitlines()]
    distill = [r["losses"]["distill"] for r in lines if r["kind"] == "step"]
    assert len(distill) == 5
    assert distill[:2] == [0, 0] and all(v > 0 for v in distill[2:])  # held at zero for 2 of 5 steps, then on
    assert report["objective"] == "self-distill" and set(report["final_losses"]) == {"ce", "distill"}

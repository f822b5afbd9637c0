"""What the device tests of the tracker (tests/test_device.py) and of the oracle
(tests/test_oracle_device.py) share: the marks that pick the machine, the hash the CPU's bits are
pinned by and the pins of this machine's CPU kernels, and the steps a test takes by hand to stop a
run halfway and resume it."""
import hashlib
from pathlib import Path

import pytest
import torch

from training.checkpoint import load_checkpoint
from training.device import cpu_kernels

no_cuda = pytest.mark.skipif(torch.cuda.is_available(), reason="this machine has CUDA")
cuda_only = pytest.mark.skipif(not torch.cuda.is_available(), reason="no CUDA device on this machine")
pinned_torch = pytest.mark.skipif(not torch.__version__.startswith("2.13.0"),
                                  reason="the bits are pinned for torch 2.13.0")


def pins_for_these_kernels(pins: dict[str, dict]) -> dict:
    """The pinned weight hashes made on this machine's CPU kernels (``pins`` maps a
    ``cpu_kernels()`` fingerprint to its hashes); the test is skipped, saying so, on kernels no
    pins were made on, since MKL, oneDNN and ATen round differently by instruction set."""
    kernels = cpu_kernels()
    if kernels["fingerprint"] not in pins:
        pytest.skip(f"no weights pinned for the CPU kernels {kernels['fingerprint']} ({kernels['capability']}, "
                    f"{kernels['processor']}); pinned for {', '.join(sorted(pins))}")
    return pins[kernels["fingerprint"]]


def weights_hash(state: dict[str, torch.Tensor]) -> str:
    h = hashlib.sha256()
    for name in sorted(state):
        h.update(name.encode())
        h.update(state[name].detach().cpu().contiguous().numpy().tobytes())
    return h.hexdigest()[:16]


def train_steps(trainer, steps: int) -> None:
    """``steps`` training steps of a tracker's or an oracle's trainer, from step 0, counted as
    ``train()`` counts them."""
    for step in range(steps):
        trainer.train_step(step)
        trainer.step += 1


def stopped_after(trainer, steps: int, run_dir: Path) -> None:
    """``trainer`` after ``steps`` steps, its checkpoint written into ``run_dir`` (made here) for
    ``train(..., resume=True)`` to pick up."""
    train_steps(trainer, steps)
    run_dir.mkdir()
    torch.save(trainer.checkpoint(), run_dir / "checkpoint.pt")


def same_weights_on_the_cpu(straight: Path, resumed: Path) -> dict:
    """The checkpoint of the run ``straight``, after checking that the run ``resumed`` ended on
    the same weights to the bit and that the weights were saved on the CPU."""
    blob, again = (load_checkpoint(d / "checkpoint.pt") for d in (straight, resumed))
    assert all(torch.equal(blob["model"][k], again["model"][k]) for k in blob["model"])
    assert all(t.device.type == "cpu" for t in blob["model"].values())
    return blob

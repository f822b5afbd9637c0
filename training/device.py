"""Where a model trains and evaluates: a ``--device`` spec resolved to a ``torch.device``.

Specs: ``auto`` (the first CUDA device when there is one, else the CPU), ``cpu``, ``cuda``,
``cuda:N`` and ``mps``. A device this machine does not have is a ``DeviceUnavailable`` with a
one-line message, raised before anything is read or written, so a command can refuse at once.
``auto`` never picks ``mps``: it is asked for by name.
"""
from __future__ import annotations

import hashlib
import platform
import re
from contextlib import AbstractContextManager, nullcontext
from functools import cache

import torch
import torch.nn.functional as F

DEVICE_SPECS = ("auto", "cpu", "cuda", "cuda:N", "mps")
DEVICE_HELP = ("Where the model, its batches, losses, random generators and evaluation run: auto (CUDA when "
               "present, else the CPU), cpu, cuda, cuda:N or mps. On the CPU the bits are those of every earlier "
               "run on the same CPU kernels (a report's cpu_kernels); a checkpoint made on one device loads on "
               "any other.")


class DeviceUnavailable(ValueError):
    """A device spec that is not one of DEVICE_SPECS, or names a device this machine lacks."""


def resolve_device(spec: str | torch.device) -> torch.device:
    """The torch.device that ``spec`` names on this machine; DeviceUnavailable when it is not
    here (no CUDA build or no GPU, an index past the last GPU, no MPS) or is not a device spec."""
    if isinstance(spec, torch.device):
        spec = str(spec)
    name = spec.strip().lower()
    if name == "auto":
        return torch.device("cuda") if torch.cuda.is_available() else torch.device("cpu")
    if name == "cpu":
        return torch.device("cpu")
    match = re.fullmatch(r"cuda(?::(\d+))?", name)
    if match:
        if not torch.cuda.is_available():
            build = f"torch {torch.__version__}" + ("" if torch.version.cuda else ", a build without CUDA")
            raise DeviceUnavailable(f"device {spec!r}: no CUDA device on this machine ({build}); "
                                    "use --device cpu or auto")
        index = int(match.group(1) or 0)
        count = torch.cuda.device_count()
        if index >= count:
            raise DeviceUnavailable(f"device {spec!r}: this machine has {count} CUDA device(s), "
                                    f"cuda:0 to cuda:{count - 1}")
        return torch.device("cuda", index)
    if name == "mps":
        if not torch.backends.mps.is_available():
            raise DeviceUnavailable(f"device {spec!r}: no MPS (Apple GPU) device on this machine; "
                                    "use --device cpu or auto")
        return torch.device("mps")
    raise DeviceUnavailable(f"unknown device {spec!r}; choose one of {', '.join(DEVICE_SPECS)}")


def default_device(device: torch.device) -> AbstractContextManager:
    """A block in which torch's factory functions called without a device (noise and dropout
    masks drawn inside the models) create their tensors on ``device``; nothing on the CPU, where
    they already do (and where the context's per-call cost would be pure overhead)."""
    return nullcontext() if device.type == "cpu" else torch.device(device)


def to_cpu(value):
    """``value`` (tensors inside dicts, lists and tuples) with every tensor on the CPU: what a
    checkpoint holds, so that it loads on a machine without the device it was trained on."""
    if isinstance(value, torch.Tensor):
        return value.cpu()
    if isinstance(value, dict):
        return {k: to_cpu(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return type(value)(to_cpu(v) for v in value)
    return value


@cache
def cpu_kernels() -> dict:
    """What fixes a CPU run's bits besides the code, the seed and the thread count: the float
    kernels torch picks on this machine (MKL's and oneDNN's by instruction set, ATen's vectorised
    loops). ``fingerprint`` hashes the outputs and gradients of a fixed set of the operations the
    models use, at one thread, so two machines with the same fingerprint make the same bits and two
    with different ones generally do not. The caller's thread count and random generator are left
    as they were."""
    before = torch.get_num_threads()
    torch.set_num_threads(1)
    try:
        with torch.random.fork_rng(devices=[]):
            fingerprint = _kernel_fingerprint()
    finally:
        torch.set_num_threads(before)
    return {"fingerprint": fingerprint, "capability": torch.backends.cpu.get_cpu_capability(),
            "processor": _processor_name()}


def _kernel_fingerprint() -> str:
    digest = hashlib.sha256()

    def put(t: torch.Tensor) -> None:
        digest.update(t.detach().contiguous().numpy().tobytes())

    g = torch.Generator().manual_seed(0)
    # matrix products of the sizes a tracker's and an oracle's layers have: (m, k) @ (k, n)
    for m, k, n in ((4, 32, 32), (64, 96, 48), (7, 15, 130), (256, 64, 192)):
        a = torch.randn(m, k, generator=g, requires_grad=True)
        w = torch.randn(n, k, generator=g, requires_grad=True)
        y = F.linear(a, w, torch.randn(n, generator=g))
        z = F.layer_norm(torch.tanh(y) * torch.sigmoid(y) + torch.exp(-y.abs()) + F.gelu(y), (n,))
        (F.cross_entropy(z, torch.arange(m) % n) + F.log_softmax(z, -1).mean()).backward()
        for t in (y, z, a.grad, w.grad):
            put(t)
    x = torch.randn(8, 20, 64, generator=g)  # (batch, time, width)
    lstm = torch.nn.LSTM(64, 64, batch_first=True)  # oneDNN's recurrent kernels
    with torch.no_grad():
        for p in lstm.parameters():
            p.copy_(torch.randn(p.shape, generator=g) / 8)
    heads = x.view(8, 20, 4, 16).transpose(1, 2)  # (batch, heads, time, head width)
    for t in (lstm(x)[0], F.scaled_dot_product_attention(heads, heads, heads), torch.bmm(x, x.transpose(1, 2))):
        put(t)
    return digest.hexdigest()[:16]


def _processor_name() -> str:
    try:
        for line in open("/proc/cpuinfo", encoding="utf-8"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or platform.machine()

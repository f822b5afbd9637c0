"""Where a model trains and evaluates: a ``--device`` spec resolved to a ``torch.device``.

Specs: ``auto`` (the first CUDA device when there is one, else the CPU), ``cpu``, ``cuda``,
``cuda:N`` and ``mps``. A device this machine does not have is a ``DeviceUnavailable`` with a
one-line message, raised before anything is read or written, so a command can refuse at once.
``auto`` never picks ``mps``: it is asked for by name.
"""
from __future__ import annotations

import re
from contextlib import AbstractContextManager, nullcontext

import torch

DEVICE_SPECS = ("auto", "cpu", "cuda", "cuda:N", "mps")
DEVICE_HELP = ("Where the model, its batches, losses, random generators and evaluation run: auto (CUDA when "
               "present, else the CPU), cpu, cuda, cuda:N or mps. On the CPU the bits are those of every earlier "
               "run; a checkpoint made on one device loads on any other.")


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

"""Are two checkpoints, two reports, the same bits, weight for weight and figure for figure?

``compare_checkpoints`` walks two checkpoints' state parts (weights, NextLat head, optimiser
state, step, the oracle's comparison threshold) and names where they differ; ``compare_figures``
sets a report's headline figures beside reproduced ones, number by number with ``==``, at the
lengths evaluated. Neither rounds or tolerates: one ulp in one weight is a difference.
"""
from __future__ import annotations

import torch

STATE_PARTS = ("model", "nextlat_head", "optimizer", "step", "comparison")  # what a checkpoint's bits are


def compare_states(a: object, b: object, path: str = "") -> list[dict]:
    """Where two checkpoint parts differ, walked alike: tensors by ``torch.equal`` (dtype and
    shape included), dicts by key, lists by position, anything else by ``==``. Empty: identical."""
    if isinstance(a, torch.Tensor) or isinstance(b, torch.Tensor):
        if not (isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor)):
            return [{"at": path, "why": "a tensor on one side only"}]
        if a.dtype != b.dtype or a.shape != b.shape:
            return [{"at": path, "why": f"{a.dtype}{list(a.shape)} against {b.dtype}{list(b.shape)}"}]
        if torch.equal(a, b):
            return []
        diff = (a.double() - b.double()).abs().max().item() if a.is_floating_point() else None
        return [{"at": path, "why": "values", "max_abs_diff": diff}]
    if isinstance(a, dict) and isinstance(b, dict):
        out = [{"at": f"{path}.{k}".strip("."), "why": "a key on one side only"} for k in sorted(
            set(a) ^ set(b), key=str)]
        for k in sorted(set(a) & set(b), key=str):
            out += compare_states(a[k], b[k], f"{path}.{k}".strip("."))
        return out
    if isinstance(a, (list, tuple)) and isinstance(b, (list, tuple)):
        if len(a) != len(b):
            return [{"at": path, "why": f"{len(a)} items against {len(b)}"}]
        return [d for i, (x, y) in enumerate(zip(a, b)) for d in compare_states(x, y, f"{path}[{i}]")]
    return [] if a == b else [{"at": path, "why": f"{a!r} against {b!r}"[:200]}]


def count_tensors(x: object) -> int:
    """The tensors in ``x``, through its dicts, lists and tuples."""
    if isinstance(x, torch.Tensor):
        return 1
    if isinstance(x, dict):
        return sum(count_tensors(v) for v in x.values())
    if isinstance(x, (list, tuple)):
        return sum(count_tensors(v) for v in x)
    return 0


def compare_checkpoints(a: dict, b: dict) -> dict:
    """The verdict on two checkpoints: identical when every state part is (weights, NextLat head,
    optimiser state, step, the oracle's threshold), else the first differences, part by part."""
    parts = {}
    for part in STATE_PARTS:
        if part not in a and part not in b:
            continue
        found = compare_states(a.get(part), b.get(part), part)
        parts[part] = {"tensors": count_tensors(a.get(part)), "differences": len(found), "first": found[:5]}
    identical = all(p["differences"] == 0 for p in parts.values())
    return {"verdict": "identical" if identical else "different", "parts": parts}


def is_length(key: object) -> bool:
    """Whether ``key`` is a length as reports key their figures (``"256"``)."""
    return isinstance(key, str) and key.isdigit()


def pick(report: dict, path: str) -> tuple[object, bool]:
    """The figure at the dotted ``path`` of ``report`` and whether it is there."""
    value = report
    for key in path.split("."):
        if not isinstance(value, dict) or key not in value:
            return None, False
        value = value[key]
    return value, True


def within(value: object, max_length: int | None) -> object:
    """A figure with the levels keyed by length cut to the lengths up to ``max_length``."""
    if max_length is None or not isinstance(value, dict):
        return value
    lengths = bool(value) and all(is_length(k) for k in value)
    return {k: within(v, max_length) for k, v in value.items() if not lengths or int(k) <= max_length}


def flatten(value: object, path: str) -> dict[str, object]:
    """The numbers of a nested figure, keyed by their dotted paths under ``path``."""
    if isinstance(value, dict):
        out = {}
        for k, v in value.items():
            out.update(flatten(v, f"{path}.{k}"))
        return out
    return {path: value}


def compare_figures(report: dict, reproduced: dict, figures: tuple[str, ...], max_length: int | None) -> dict:
    """The headline figures of ``report`` against ``reproduced``, number by number (``==``), at the
    lengths evaluated; the figures the report lacks (a run that did not record them) are skipped and named. A figure
    marked ``+`` (pooled over every length) is skipped when the lengths are cut to ``max_length``."""
    compared, mismatches, skipped = 0, [], []
    for name in figures:
        pooled = name.startswith("+")
        name = name.lstrip("+")
        if pooled and max_length is not None:
            skipped.append(f"{name} (pooled over lengths beyond {max_length})")
            continue
        want, has = pick(report, name)
        if not has:
            skipped.append(f"{name} (none in the report)")
            continue
        got, _ = pick(reproduced, name)
        want, got = flatten(within(want, max_length), name), flatten(within(got, max_length), name)
        for key in sorted(set(want) | set(got)):
            compared += 1
            if key not in want or key not in got or want[key] != got[key]:
                mismatches.append({"figure": key, "report": want.get(key), "reproduced": got.get(key)})
    return {"verdict": "identical" if compared and not mismatches else "different", "figures": compared,
            "mismatches": mismatches[:20], "mismatched": len(mismatches), "skipped": skipped}

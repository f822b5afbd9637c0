"""What every held-out protocol promises of a written dataset, checked the same way on every domain:
no training history or partner holds what is held out, every test history holds it (but under
``states``, which holds out end states, not events)."""
from __future__ import annotations

import json
from pathlib import Path


def check_held_out(out: Path, holdout: dict, protocol: str, splits: tuple[str, ...]) -> None:
    held_events = set(holdout.get("events", []))
    held_pairs = {tuple(p) for p in holdout.get("pairs", [])}

    def holds(events) -> bool:
        return bool(held_events & set(events)) or bool(held_pairs & set(zip(events, events[1:])))

    for name in splits:
        for line in (out / name).read_text().splitlines():
            record = json.loads(line)
            if name == "train.jsonl":
                assert not any(holds(h["events"]) for h in (record, *record["partners"]))
            elif protocol != "states":
                assert holds(record["events"])

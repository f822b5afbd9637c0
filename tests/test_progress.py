"""What a user reads off a terminal: progress in a log (plain lines at intervals, never a carriage
return; nothing at all for a run shorter than the interval), and a damaged file named in whole words."""
from __future__ import annotations

import io

import pytest

from leanbridge import cliutil
from leanbridge.cliutil import LogLines, PhaseBars, progress_bar, progress_over


def test_a_log_gets_plain_lines_at_intervals(monkeypatch):
    monkeypatch.setattr(cliutil, "LOG_EVERY_S", 0.0)
    out = io.StringIO()
    bar = LogLines(200, "train", initial=100, unit="step", file=out)
    bar.update(50)
    bar.set_postfix({"loss": "0.1234"})
    bar.update(50)
    bar.close()
    lines = out.getvalue().splitlines()
    assert lines == ["train: 150/200 step (75%)", "train: 200/200 step (100%), loss 0.1234"]
    assert "\r" not in out.getvalue()


def test_a_short_run_writes_nothing_to_a_log():
    out = io.StringIO()
    bar = LogLines(10, "certify", file=out)
    for _ in range(10):
        bar.update(1)
    bar.close()
    assert out.getvalue() == ""


def test_commands_choose_lines_off_a_terminal_and_bars_on_one(monkeypatch, capsys):
    monkeypatch.setattr("sys.stderr.isatty", lambda: False, raising=False)
    assert isinstance(progress_bar(5, "x"), LogLines)
    assert not isinstance(progress_bar(5, "x", show=False), LogLines)  # silenced: no lines either
    monkeypatch.setattr(cliutil, "LOG_EVERY_S", 0.0)
    bars = PhaseBars()
    bars("steps", 3, 10)
    bars("equivalences", 1, 4)
    bars.close()
    assert list(progress_over([1, 2], "evaluate", unit="length")) == [1, 2]
    err = capsys.readouterr().err
    assert "steps: 3/10 (30%)" in err and "equivalences: 1/4 (25%)" in err and "evaluate: 2/2 length" in err
    assert "\r" not in err


@pytest.mark.parametrize("total", [0, 1])
def test_a_line_never_divides_by_an_empty_total(monkeypatch, total):
    monkeypatch.setattr(cliutil, "LOG_EVERY_S", 0.0)
    out = io.StringIO()
    LogLines(total, "phase", file=out).update(1)
    assert out.getvalue().startswith("phase: 1/")


def test_a_truncated_checkpoint_is_named_in_whole_words(tmp_path):
    """torch's own message is cut at a word's end, never mid-word."""
    import torch

    from training.files import UnreadableFile, load_torch_file, shortened

    path = tmp_path / "checkpoint.pt"
    torch.save({"model": {"w": torch.zeros(64, 64)}}, path)
    path.write_bytes(path.read_bytes()[:300])
    try:
        load_torch_file(path)
    except UnreadableFile as e:
        message = str(e)
    assert message.startswith("truncated or not a torch file")
    assert shortened("one two three", 9) == "one two…" and shortened("short", 9) == "short"
    assert all(len(shortened("word " * 40, n)) <= n for n in range(5, 60))

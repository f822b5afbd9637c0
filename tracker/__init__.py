"""State trackers trained on certified rewrite chains with Nerode objectives (seed sections 42-47).

data: datasets as tensors; models: slot recurrence, transformer, DeltaProduct; registers: one
register per tree position; objectives: the
Nerode terms; train: the loop and checkpoints; evaluate: free-running evaluation; plots;
inference: a trained run as a state machine (``load_run``); cli: the ``train-tracker`` command.

``from tracker import load_run`` imports torch only when it is first used: importing the package
does no work.
"""

__all__ = ["load_run", "TrackedRun", "RunUnavailable", "HistoryError"]


def __getattr__(name: str):
    if name in __all__:
        from tracker import inference

        return getattr(inference, name)
    raise AttributeError(f"module 'tracker' has no attribute {name!r}")

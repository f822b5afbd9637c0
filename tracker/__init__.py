"""State trackers trained on certified histories with Nerode objectives, on any domain a dataset
names.

data, domain_data: datasets as tensors (rewrite chains; any other domain through its protocol);
protocol: what a model is to every command (its stepping), and ``Stepped``, the base of a model of
one's own; build: every arch by its ``--arch`` name or import path; models, registers, variables: slot
recurrence, transformer, DeltaProduct, a register per tree position or per variable; losses: the
Nerode terms; train: the tracker's trainer (the loop and checkpoints are ``training``'s); evaluate,
stream: free-running evaluation; analysis: what a state is; inference, domain_run: a trained run as a
state machine (``load_run``); cli: the ``train-tracker`` command.

``from tracker import load_run`` imports torch only when it is first used: importing the package
does no work.
"""

__all__ = ["load_run", "TrackedRun", "RunUnavailable", "HistoryError"]


def __getattr__(name: str):
    if name in __all__:
        from tracker import inference

        return getattr(inference, name)
    raise AttributeError(f"module 'tracker' has no attribute {name!r}")

"""State trackers trained on certified rewrite chains with Nerode objectives (seed sections 42-47).

data: datasets as tensors; models: slot recurrence, transformer, DeltaProduct; objectives: the
Nerode terms; train: the loop and checkpoints; evaluate: free-running evaluation; plots; cli:
the ``train-tracker`` command.
"""

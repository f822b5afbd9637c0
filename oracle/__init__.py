"""The kernel oracle (section 50 of the seed paper): predict Lean's verdict on probe rewrites
several steps ahead without asking it.

data: probe verdicts of a certified dataset as tensors; model: the verdict head and the arms;
train: the loop and checkpoints; evaluate: free-running evaluation and its metrics; plots;
scorer: a finished run as a verdict oracle for the prover; cli: the ``train-oracle`` command;
mathlib: the Mathlib source of probe verdicts (LeanDojo Benchmark 4).
"""

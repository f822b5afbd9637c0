"""The kernel oracle: predict Lean's verdict on probe rewrites
several steps ahead without asking it.

data: probe verdicts of a certified dataset as tensors; tensors: those tensors, whichever dataset
they were read from (``OracleData``); model: the verdict head and the arms; train: the loop and
checkpoints; evaluate: free-running evaluation and its metrics; plots; inference: a finished run
as a verdict oracle for any history (``load_run``); scorer: a finished run as a verdict oracle
for the prover; cli: the ``train-oracle`` command; mathlib: the Mathlib source of probe verdicts
(LeanDojo Benchmark 4).

``from oracle import load_run`` imports torch only when it is first used: importing the package
does no work.
"""

__all__ = ["load_run", "OracleRun", "ProbeScore", "RunUnavailable"]


def __getattr__(name: str):
    if name in __all__:
        from oracle import inference

        return getattr(inference, name)
    raise AttributeError(f"module 'oracle' has no attribute {name!r}")

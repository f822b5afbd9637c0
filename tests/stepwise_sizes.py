"""The step-by-step model's test sizes, shared by its test modules: a tiny model and an
evaluation of two chains at 8 events."""
from stepwise.evaluate import StepwiseEvalConfig

TINY = {"width": 32, "depth": 2, "heads": 2, "batch_chains": 4, "warmup_steps": 1}
EVAL = StepwiseEvalConfig(lengths=(8,), chains=2)

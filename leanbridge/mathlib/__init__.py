"""Mathlib probe verdicts: proofs read from LeanDojo Benchmark 4,
selected by directory and split by length, five kinds of probe per step, each verdict from a
LeanDojo replay, written as a probe dataset (``certify --mathlib``). Reading, selecting and
building probes need nothing but the benchmark's files; only the replay needs ``lean_dojo`` (the
``mathlib`` extra) and a machine with a traced Mathlib, and it is imported only when a replay
starts. The oracle reads the records this package writes (``oracle.mathlib.tensors``)."""

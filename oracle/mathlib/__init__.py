"""Mathlib probe records (``certify --mathlib``, written by ``leanbridge.mathlib``) as the oracle's
tensors: the text tokenizer (``tokens``) and the loader (``tensors``)."""

"""The Lean bridge: find Lean, build the core library, render statements, check them with positive confirmation, store certificates.

``from leanbridge import certify_text`` certifies a step or an equation of the rewrite domain given
as text (``leanbridge.statements``); ``certify_history_text`` and ``certify_equivalence_text`` a
history's end or two histories' common end on any domain (``leanbridge.text_verdicts``). Each
module is imported when first used, so importing the package does no work.
"""

__all__ = ["certify_text", "StatementTextError", "certify_history_text", "certify_equivalence_text"]
_HOMES = {"certify_text": "statements", "StatementTextError": "statements",
          "certify_history_text": "text_verdicts", "certify_equivalence_text": "text_verdicts"}


def __getattr__(name: str):
    if name in _HOMES:
        import importlib

        return getattr(importlib.import_module(f"leanbridge.{_HOMES[name]}"), name)
    raise AttributeError(f"module 'leanbridge' has no attribute {name!r}")

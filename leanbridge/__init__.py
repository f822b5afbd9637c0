"""The Lean bridge: find Lean, build the core library, render statements, check them with positive confirmation, store certificates.

``from leanbridge import certify_text`` certifies a step or an equation given as text
(``leanbridge.statements``); the module is imported when first used, so importing the package does no work.
"""

__all__ = ["certify_text", "StatementTextError"]


def __getattr__(name: str):
    if name in __all__:
        from leanbridge import statements

        return getattr(statements, name)
    raise AttributeError(f"module 'leanbridge' has no attribute {name!r}")

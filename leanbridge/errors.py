"""Infrastructure failures. Lean's answers are values (see ``verdicts``);
these are the things that stop a run."""


def shown(text: str, limit: int = 200) -> str:
    """What a program printed, fit for a one-line message: whitespace runs collapsed, at most
    ``limit`` characters, quoted when anything else in it is not printable."""
    text = " ".join(text.split())[:limit]
    return text if text.isprintable() else repr(text)


class LeanBridgeError(Exception):
    """Base class: the message is one line a user can act on."""


class LeanNotFoundError(LeanBridgeError):
    """No usable Lean 4.35.0, or one of another build."""


class CoreLibraryError(LeanBridgeError):
    """The core library does not compile or fails its audit."""


class LeanModuleError(LeanBridgeError):
    """A Lean module the checks import beside the core library (the programs library, a domain's own
    module) is missing, does not compile, or fails its audit; the message names the module."""


class RenderError(LeanBridgeError):
    """A tree or event outside the grammar reached the renderer."""


class StoreError(LeanBridgeError):
    """The certificate store cannot be opened, read or written."""

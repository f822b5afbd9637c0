"""Infrastructure failures. Lean's verdicts on statements are values (see ``checker``);
these are the things that stop a run."""


class LeanBridgeError(Exception):
    """Base class: the message is one line a user can act on."""


class LeanNotFoundError(LeanBridgeError):
    """No usable Lean 4.35.0, or one of another build."""


class CoreLibraryError(LeanBridgeError):
    """The core library does not compile or fails its audit."""


class RenderError(LeanBridgeError):
    """A tree or event outside the grammar reached the renderer."""

"""The package's version, as its installed distribution says: what every dataset manifest,
checkpoint and report records as ``package_version``."""
from __future__ import annotations

from importlib import metadata

DISTRIBUTION = "exact-state"


def package_version() -> str:
    """The installed distribution's version; ``unknown`` when the code runs uninstalled."""
    try:
        return metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return "unknown"

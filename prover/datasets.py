"""Which certified dataset ``prove`` searches: the one ``--data`` names, else the one the run it is
given was trained on, as that run's checkpoint records it, whatever the searcher; the kernel
searchers given no run search ``KERNEL_DATA``. A ``--data`` of another domain than the run's
(rewrite chains, programs, a domain of one's own) is refused in one line.
"""
from __future__ import annotations

from pathlib import Path

from chains.manifest import DatasetError, read_manifest_json
from training.checkpoint import CHECKPOINT, CheckpointError, load_checkpoint

KERNEL_DATA = Path("data/tier1-a4")  # the kernel searchers' dataset when neither --data nor a run names one


class OtherDomain(ValueError):
    """A dataset of another domain than the run's; the message names both."""


def trained_on(run: Path) -> dict | None:
    """The identity of the dataset the run in ``run`` was trained on (``path``, ``dataset_id``, and
    ``domain`` for any domain but rewrite chains); None when the run has no readable checkpoint
    (the searcher that loads it then says why)."""
    try:
        return load_checkpoint(Path(run) / CHECKPOINT)["identity"]["dataset"]
    except CheckpointError:
        return None


def domain_words(domain: dict | None) -> str:
    """A dataset's domain (its manifest's ``domain``; None for rewrite chains) in a few words."""
    if not domain:
        return "rewrite chains"
    if domain.get("import"):
        return f"the domain {domain['import']}"
    machine = f" on the {domain['machine']} machine" if domain.get("machine") else ""
    return f"{domain.get('name', 'an unnamed domain')}{machine}"


def dataset_to_search(data: Path | None, run: Path | None, option: str) -> Path:
    """The dataset to search: ``data`` when given, else the one the run in ``run`` (given as
    ``option``, ``--tracker`` or ``--oracle``) was trained on, else ``KERNEL_DATA``. OtherDomain when
    ``data`` is a dataset of another domain than the run's (a --data that is no dataset is left for
    the search to refuse)."""
    identity = trained_on(run) if run is not None else None
    if data is None:
        return Path(identity["path"]) if identity is not None else KERNEL_DATA
    if identity is not None:
        try:
            domain = read_manifest_json(data).get("domain")
        except (DatasetError, AttributeError):
            return data
        if domain != identity.get("domain"):
            raise OtherDomain(f"--data {data} holds {domain_words(domain)}, but {option} {run} was trained on "
                              f"{domain_words(identity.get('domain'))} ({identity.get('path')}); leave --data out to "
                              "search the run's own dataset")
    return data

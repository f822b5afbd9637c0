"""The content-addressed certificate store: SQLite, one row per distinct statement.

The key is the sha256 of the statement, the core library hash and the Lean githash (see
``Statement.key``), so a row made by another Lean build or another core library can never
answer for this one. Each file's verdicts are written in one transaction: a run killed at
any moment keeps every verdict it committed and none it did not.
"""
from __future__ import annotations

import functools
import sqlite3
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TypeVar

from chains.rewrite.trees import Tree, parse_polish, polish
from leanbridge.errors import StoreError
from leanbridge.verdicts import Accepted, Answer, Complete, Rejected

CERTIFIED, ACCEPTED, REJECTED = "certified", "accepted", "rejected"

SCHEMA = """
CREATE TABLE IF NOT EXISTS certificates (
    key TEXT PRIMARY KEY,          -- sha256(core hash, Lean githash, kind, statement)
    kind TEXT NOT NULL,            -- step | equivalence | probe
    statement TEXT NOT NULL,       -- the declaration's text after its name
    verdict TEXT NOT NULL,         -- certified | accepted (a probe) | rejected
    detail TEXT NOT NULL,          -- accepted: the tree Lean inferred (Polish); rejected: class TAB Lean's words
    lean_githash TEXT NOT NULL,
    core_hash TEXT NOT NULL,
    seconds REAL NOT NULL,         -- share of the deciding Lean run
    checked_at REAL NOT NULL       -- unix time
)
"""


COLUMNS = ("key", "kind", "statement", "verdict", "detail", "lean_githash", "core_hash", "seconds", "checked_at")

Result = TypeVar("Result")


def _store_errors(method: Callable[..., Result]) -> Callable[..., Result]:
    """SQLite's failures (not a database, disk full, locked) as StoreError naming the file."""

    @functools.wraps(method)
    def wrapper(self: CertificateStore, *args, **kwargs) -> Result:
        try:
            return method(self, *args, **kwargs)
        except sqlite3.Error as e:
            raise StoreError(f"certificate store {self.path}: {e}") from None
        except OSError as e:
            raise StoreError(f"certificate store {self.path}: {e.strerror or e}") from None

    return wrapper


class CertificateStore:
    @_store_errors
    def __init__(self, path: Path | str, core_hash: str, lean_githash: str) -> None:
        self.path = Path(path)
        if str(path) != ":memory:":
            self.path.parent.mkdir(parents=True, exist_ok=True)
        self.core_hash, self.lean_githash = core_hash, lean_githash
        self._conn = sqlite3.connect(str(path), timeout=60)
        try:
            self._check_ours()  # before anything is written to the file
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute("PRAGMA synchronous=NORMAL")
            with self._conn:
                self._conn.execute(SCHEMA)
        except BaseException:
            self._conn.close()
            raise

    def _check_ours(self) -> None:
        """A new file, or an SQLite file holding this project's table and nothing else: a
        mistyped ``--store`` must not write into another program's database."""
        tables = {name for (name,) in self._conn.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        if tables - {"certificates"}:
            raise StoreError(f"certificate store {self.path}: a database of other tables "
                             f"({', '.join(sorted(tables))[:80]}), not a certificate store")
        columns = tuple(row[1] for row in self._conn.execute("PRAGMA table_info(certificates)"))
        if tables and columns != COLUMNS:
            raise StoreError(f"certificate store {self.path}: its certificates table is not this project's "
                             f"(columns {', '.join(columns)[:80]})")

    def close(self) -> None:
        self._conn.close()

    def __enter__(self) -> CertificateStore:
        return self

    def __exit__(self, *exc) -> None:
        self.close()

    @_store_errors
    def certified(self, keys: Iterable[str]) -> set[str]:
        """The keys among ``keys`` with a certified row for this Lean build and core library."""
        keys = list(keys)
        found: set[str] = set()
        for i in range(0, len(keys), 900):  # SQLite's bound-parameter limit
            chunk = keys[i:i + 900]
            rows = self._conn.execute(
                f"SELECT key FROM certificates WHERE verdict = ? AND lean_githash = ? AND core_hash = ? "
                f"AND key IN ({','.join('?' * len(chunk))})",
                [CERTIFIED, self.lean_githash, self.core_hash, *chunk])
            found.update(row[0] for row in rows)
        return found

    @_store_errors
    def answers(self, keys: Iterable[str], atoms: tuple[str, ...]) -> dict[str, Answer]:
        """Lean's stored answers on ``keys`` for this Lean build and core library. A rejection
        is an answer too (it is what Lean said about a probe); a certified statement is
        ``Complete``, an accepted probe ``Accepted`` with the tree Lean inferred."""
        keys = list(keys)
        found: dict[str, Answer] = {}
        for i in range(0, len(keys), 900):
            chunk = keys[i:i + 900]
            rows = self._conn.execute(
                f"SELECT key, verdict, detail FROM certificates WHERE lean_githash = ? AND core_hash = ? "
                f"AND key IN ({','.join('?' * len(chunk))})", [self.lean_githash, self.core_hash, *chunk])
            for key, verdict, detail in rows:
                found[key] = _decode(verdict, detail, atoms)
        return found

    @_store_errors
    def record(self, rows: Iterable[tuple[str, str, str, Answer, float]]) -> None:
        """Write ``(key, kind, statement text, answer, Lean seconds)`` rows in one transaction."""
        now = time.time()
        with self._conn:
            self._conn.executemany(
                "INSERT OR REPLACE INTO certificates VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)",
                [(key, kind, text, *_encode(answer), self.lean_githash, self.core_hash, seconds, now)
                 for key, kind, text, answer, seconds in rows])

    @_store_errors
    def count(self) -> dict[str, int]:
        return dict(self._conn.execute("SELECT verdict, COUNT(*) FROM certificates GROUP BY verdict").fetchall())


def _encode(answer: Answer) -> tuple[str, str]:
    if isinstance(answer, Rejected):
        return REJECTED, f"{answer.error_class}\t{answer.message}"
    if isinstance(answer, Accepted):
        return ACCEPTED, polish(answer.tree) if answer.tree is not None else ""
    return CERTIFIED, ""


def _decode(verdict: str, detail: str, atoms: tuple[str, ...]) -> Answer:
    if verdict == REJECTED:
        error_class, _, message = detail.partition("\t")
        return Rejected(error_class, message)
    if verdict == ACCEPTED:
        tree: Tree | None = parse_polish(detail, atoms) if detail else None
        return Accepted(tree)
    return Complete()

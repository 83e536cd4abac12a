"""The one store type of the run cache's content-addressed kinds (generations, KL profiles,
attribution records; folder names in :mod:`~pytest_provenai.cache_layout`).

An entry is a JSON object at ``root/<key[:2]>/<key>.json``, ``key`` the sha256 (64 lowercase
hex) of a canonical JSON of what the entry depends on (:func:`content_key`). Writes are
atomic (temporary file + rename), so a reader sees a whole entry or none, and two workers
writing the same key write the same bytes, the last rename winning; the first write under a
cache folder marks it (:func:`~pytest_provenai.cache_layout.mark_store`).

A read has four outcomes: a *hit*; a *miss* (no file); a *stale* entry (its decoder raised
:class:`StaleEntry`: written by a producer the caller does not trust; a miss, left on disk
for the recomputed entry to replace); or a *corrupt* one (unreadable, or its decoder raised
:class:`RejectedEntry`): reported with a
:class:`~pytest_provenai.errors.ProvenaiCacheWarning` naming the file, deleted, and a miss.
Each store counts them in ``hits``, ``misses``, ``stale``, ``corrupt``, and its puts in
``writes``. No pytest import.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar, TypeVar

from pytest_provenai._io import atomic_write_json, drop_cache_entry, sha256_text
from pytest_provenai.cache_layout import mark_store

__all__ = ["KeyedStore", "RejectedEntry", "StaleEntry", "canonical_json", "content_key"]

_KEY = re.compile(r"[0-9a-f]{64}")

T = TypeVar("T")


class RejectedEntry(Exception):
    """Raised by a store's decoder: the entry cannot be trusted; the message says why, as
    it follows the file's path in the warning ("is not valid JSON (…)")."""


class StaleEntry(Exception):
    """Raised by a store's decoder: a well-formed entry the caller does not trust (another
    producer wrote it); a miss, kept on disk until it is replaced."""


def canonical_json(obj: Any) -> str:
    """Sorted keys, no whitespace, UTF-8 kept, NaN rejected: one text per value."""
    return json.dumps(
        obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    )


def content_key(payload: Any) -> str:
    """An entry's key: sha256 (hex) of the canonical JSON of what it depends on. Raises
    ``TypeError``/``ValueError`` for values JSON cannot represent canonically (NaN, sets)."""
    return sha256_text(canonical_json(payload))


class KeyedStore:
    """Entries under ``root`` addressed by :func:`content_key` keys (see the module
    docstring). A store names itself in :attr:`dropped` (the warning for a corrupt entry,
    formatted with ``path`` and ``why``) and reads its entries with its own decoder."""

    dropped: ClassVar[str] = (
        "provenai cache: {path} {why}; the entry was dropped and will be recomputed"
    )
    allow_nan: ClassVar[bool] = False
    """Whether an entry may hold NaN/inf (a generation's log-probability may be ``-inf``)."""

    def __init__(self, root: str | os.PathLike[str]) -> None:
        self.root = Path(root)
        self.hits = 0
        self.misses = 0
        self.corrupt = 0
        self.stale = 0
        self.writes = 0

    def path(self, key: str) -> Path:
        """Where the entry for ``key`` lives: ``root/ab/abcdef….json``."""
        if not isinstance(key, str) or not _KEY.fullmatch(key):
            raise ValueError(f"cache key must be 64 lowercase hex characters, got {key!r}")
        return self.root / key[:2] / f"{key}.json"

    def stats(self) -> dict[str, int]:
        return {
            "hits": self.hits,
            "misses": self.misses,
            "corrupt": self.corrupt,
            "stale": self.stale,
            "writes": self.writes,
        }

    def _read(self, key: str, decode: Callable[[bytes], T]) -> T | None:
        """The entry under ``key`` as ``decode`` reads its bytes, or None (counted)."""
        path = self.path(key)
        try:
            raw = path.read_bytes()
        except FileNotFoundError:
            self.misses += 1
            return None
        except OSError as exc:  # unreadable: a directory in its place, permissions, …
            self._reject(path, f"cannot be read ({type(exc).__name__}: {exc})")
            return None
        try:
            value = decode(raw)
        except RejectedEntry as exc:
            self._reject(path, str(exc))
            return None
        except StaleEntry:
            self.stale += 1
            self.misses += 1
            return None
        self.hits += 1
        return value

    def _write(self, key: str, entry: dict[str, Any]) -> Path:
        """Store ``entry`` under ``key`` atomically (marking the cache folder first)."""
        path = self.path(key)
        mark_store(self.root)
        atomic_write_json(path, entry, allow_nan=self.allow_nan)
        self.writes += 1
        return path

    def _reject(self, path: Path, why: str) -> None:
        self.corrupt += 1
        self.misses += 1
        # the warning points at the code that called get(): get -> _read -> _reject
        drop_cache_entry(path, self.dropped.format(path=path, why=why), stacklevel=4)

"""Content-addressed on-disk cache of generations, safe under concurrent xdist workers.

An entry is addressed by :meth:`GenerationCache.key` — the sha256 of a canonical JSON of the
model identity key, the prompt's sha256, the decoding parameters and the prompt version — and
lives at ``root/<key[:2]>/<key>.json`` as ``{schema_version, key, meta, generation}``.

Writes are atomic (temporary file + rename), so a reader sees a whole entry or none, and two
workers writing the same key write the same content, the last rename winning. An entry that
cannot be read back (bad JSON, wrong schema, a key that does not match its file name, a
malformed generation) is reported with a
:class:`~pytest_provenai.errors.ProvenaiCacheWarning` naming the file, deleted, counted in
``corrupt`` and treated as a miss: the caller recomputes and ``put``\\ s.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Collection
from pathlib import Path
from typing import Any

from pytest_provenai._io import atomic_write_json, drop_cache_entry, sha256_text
from pytest_provenai.cache_layout import GENERATIONS, mark_store
from pytest_provenai.subject.backends.base import Generation

SCHEMA_VERSION = 1
"""Version of the entry layout; an entry with another version is treated as corrupt."""

DEFAULT_ROOT = Path(".provenai-cache") / GENERATIONS
"""Relative to the current directory; the plugin passes its own root."""

_KEY = re.compile(r"[0-9a-f]{64}")

PRODUCER_GENERATE = "generate"
"""``meta["producer"]`` of a generation made by the backend's own ``generate``; the fast
paths record their version instead (``backends.base.FAST_PATH_VERSION``)."""


class CorruptEntry(Exception):
    """Internal: why an entry on disk was rejected."""


def canonical_json(obj: Any) -> str:
    """Sorted keys, no whitespace, UTF-8 kept, NaN rejected: one text per value."""
    return json.dumps(
        obj, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    )


class GenerationCache:
    """Generations on disk under ``root``, addressed by :meth:`key`.

    ``hits``, ``misses``, ``corrupt`` and ``stale`` count :meth:`get` outcomes in this process;
    a corrupt or stale entry also counts as a ``miss``. ``writes`` counts :meth:`put` calls.
    """

    def __init__(self, root: str | os.PathLike[str] = DEFAULT_ROOT) -> None:
        self.root = Path(root)
        self.hits = 0
        self.misses = 0
        self.corrupt = 0
        self.stale = 0
        self.writes = 0

    def __repr__(self) -> str:
        return (
            f"GenerationCache({str(self.root)!r}, hits={self.hits}, misses={self.misses}, "
            f"corrupt={self.corrupt})"
        )

    @staticmethod
    def key(
        model_key: dict[str, Any], prompt: str, decoding: dict[str, Any], prompt_version: str
    ) -> str:
        """sha256 (hex) of the canonical JSON of the four things a generation depends on.

        ``model_key`` is ``Identity.model_key()`` (name, weights digest, decoding);
        ``prompt`` is the full rendered prompt (only its sha256 enters the key);
        ``decoding`` the decoding parameters; ``prompt_version`` the prompt module's
        ``PROMPT_VERSION``. Raises ``TypeError``/``ValueError`` for values JSON cannot
        represent canonically (e.g. NaN, sets).
        """
        payload = {
            "model": model_key,
            "prompt_sha256": sha256_text(prompt),
            "decoding": decoding,
            "prompt_version": prompt_version,
        }
        return sha256_text(canonical_json(payload))

    def path(self, key: str) -> Path:
        """Where the entry for ``key`` lives: ``root/ab/abcdef….json``."""
        if not isinstance(key, str) or not _KEY.fullmatch(key):
            raise ValueError(f"cache key must be 64 lowercase hex characters, got {key!r}")
        return self.root / key[:2] / f"{key}.json"

    def get(self, key: str, *, producers: Collection[str] | None = None) -> Generation | None:
        """The cached generation for ``key``, or ``None`` (missing or corrupt).

        ``producers``: the ``meta["producer"]`` values the caller trusts. An entry written by
        any other producer — an older version of a fast path, or a release that recorded
        none — is *stale*: a miss (counted in ``stale``), left on disk for the recomputed
        generation to replace."""
        path = self.path(key)
        try:
            data = path.read_bytes()
        except FileNotFoundError:
            self.misses += 1
            return None
        except OSError as exc:  # unreadable: a directory in its place, permissions, …
            self._reject(path, f"cannot be read ({exc.__class__.__name__}: {exc})")
            return None
        try:
            generation, meta = self._decode(data, key, path)
        except CorruptEntry as exc:
            self._reject(path, str(exc))
            return None
        if producers is not None and meta.get("producer") not in producers:
            self.stale += 1
            self.misses += 1
            return None
        self.hits += 1
        return generation

    def put(self, key: str, generation: Generation, meta: dict[str, Any]) -> Path:
        """Store ``generation`` under ``key`` (atomically) with JSON-able ``meta``."""
        path = self.path(key)
        entry = {
            "schema_version": SCHEMA_VERSION,
            "key": key,
            "meta": meta,
            "generation": generation.as_dict(),
        }
        mark_store(self.root)
        atomic_write_json(path, entry, allow_nan=True)  # a logprob may be -inf
        self.writes += 1
        return path

    def meta(self, key: str) -> dict[str, Any] | None:
        """The ``meta`` stored with ``key`` (no counters touched, no warning), or ``None``."""
        try:
            entry = json.loads(self.path(key).read_bytes())
            meta = entry["meta"]
        except (OSError, ValueError, KeyError, TypeError):
            return None
        return meta if isinstance(meta, dict) else None

    def stats(self) -> dict[str, int]:
        return {
            "hits": self.hits,
            "misses": self.misses,
            "corrupt": self.corrupt,
            "stale": self.stale,
            "writes": self.writes,
        }

    # -------------------------------------------------------------- internals

    def _decode(self, data: bytes, key: str, path: Path) -> tuple[Generation, dict[str, Any]]:
        try:
            entry = json.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as exc:
            raise CorruptEntry(f"is not valid JSON ({exc})") from None
        if not isinstance(entry, dict):
            raise CorruptEntry(f"holds a {type(entry).__name__}, not an object")
        version = entry.get("schema_version")
        if version != SCHEMA_VERSION:
            raise CorruptEntry(f"has schema_version {version!r}, expected {SCHEMA_VERSION}")
        if entry.get("key") != key:
            raise CorruptEntry(f"holds key {entry.get('key')!r}, not the key of its file name")
        meta = entry.get("meta")
        if not isinstance(meta, dict):
            raise CorruptEntry("has no 'meta' object")
        generation = _check_generation(entry.get("generation"))
        return Generation.from_dict(generation), meta

    def _reject(self, path: Path, why: str) -> None:
        self.corrupt += 1
        self.misses += 1
        drop_cache_entry(
            path,
            f"provenai generation cache: {path} {why}; the entry was dropped and will be "
            "recomputed",
            stacklevel=3,
        )


def _check_generation(g: Any) -> dict[str, Any]:
    """``g`` if it is a well-formed ``Generation.as_dict()``, else :class:`CorruptEntry`."""
    if not isinstance(g, dict):
        raise CorruptEntry("has no 'generation' object")
    if not isinstance(g.get("text"), str):
        raise CorruptEntry("has a generation without a text string")
    ids = g.get("token_ids", [])
    if not isinstance(ids, list) or not all(
        isinstance(t, int) and not isinstance(t, bool) for t in ids
    ):
        raise CorruptEntry("has token_ids that are not a list of integers")
    lps = g.get("logprobs", [])
    if not isinstance(lps, list) or not all(
        isinstance(x, (int, float)) and not isinstance(x, bool) for x in lps
    ):
        raise CorruptEntry("has logprobs that are not a list of numbers")
    if not isinstance(g.get("finish_reason", "stop"), str):
        raise CorruptEntry("has a finish_reason that is not a string")
    return g

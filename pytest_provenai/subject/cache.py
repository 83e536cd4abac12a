"""Content-addressed on-disk cache of generations, safe under concurrent xdist workers.

An entry is addressed by :meth:`GenerationCache.key` — the sha256 of a canonical JSON of the
model identity key, the prompt's sha256, the decoding parameters and the prompt version — and
lives at ``root/<key[:2]>/<key>.json`` as ``{schema_version, key, meta, generation}``.

The run cache's one store type (:class:`~pytest_provenai.cache_store.KeyedStore`) writes
entries atomically, so a reader sees a whole entry or none, and two workers writing the same
key write the same content, the last rename winning. An entry that cannot be read back (bad
JSON, wrong schema, a key that does not match its file name, a malformed generation) is
reported with a :class:`~pytest_provenai.errors.ProvenaiCacheWarning` naming the file,
deleted, counted in ``corrupt`` and treated as a miss: the caller recomputes and ``put``\\ s.
"""

from __future__ import annotations

import json
import os
from collections.abc import Collection
from pathlib import Path
from typing import Any

from pytest_provenai._io import sha256_text
from pytest_provenai.cache_layout import GENERATIONS
from pytest_provenai.cache_store import KeyedStore, RejectedEntry, StaleEntry, content_key
from pytest_provenai.subject.backends.base import Generation

SCHEMA_VERSION = 1
"""Version of the entry layout; an entry with another version is treated as corrupt."""

DEFAULT_ROOT = Path(".provenai-cache") / GENERATIONS
"""Relative to the current directory; the plugin passes its own root."""

PRODUCER_GENERATE = "generate/2"
"""``meta["producer"]`` of a generation made by the backend's own ``generate``; the fast
paths record their version instead (``backends.base.FAST_PATH_VERSION``). ``/2``: the
generation holds each token's greedy margin (near-tie marks); an entry of ``"generate"``
(older releases, no margins) is recomputed once."""


class GenerationCache(KeyedStore):
    """Generations on disk under ``root``, addressed by :meth:`key`.

    ``hits``, ``misses``, ``corrupt`` and ``stale`` count :meth:`get` outcomes in this process;
    a corrupt or stale entry also counts as a ``miss``. ``writes`` counts :meth:`put` calls.
    """

    dropped = (
        "provenai generation cache: {path} {why}; the entry was dropped and will be recomputed"
    )
    allow_nan = True  # a logprob may be -inf

    def __init__(self, root: str | os.PathLike[str] = DEFAULT_ROOT) -> None:
        super().__init__(root)

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
        return content_key(payload)

    def get(self, key: str, *, producers: Collection[str] | None = None) -> Generation | None:
        """The cached generation for ``key``, or ``None`` (missing or corrupt).

        ``producers``: the ``meta["producer"]`` values the caller trusts. An entry written by
        any other producer — an older version of a fast path, or a release that recorded
        none — is *stale*: a miss (counted in ``stale``), left on disk for the recomputed
        generation to replace."""

        def decode(data: bytes) -> Generation:
            generation, meta = _decode(data, key)
            if producers is not None and meta.get("producer") not in producers:
                raise StaleEntry
            return generation

        return self._read(key, decode)

    def put(self, key: str, generation: Generation, meta: dict[str, Any]) -> Path:
        """Store ``generation`` under ``key`` (atomically) with JSON-able ``meta``."""
        entry = {
            "schema_version": SCHEMA_VERSION,
            "key": key,
            "meta": meta,
            "generation": generation.as_dict(),
        }
        return self._write(key, entry)

    def meta(self, key: str) -> dict[str, Any] | None:
        """The ``meta`` stored with ``key`` (no counters touched, no warning), or ``None``."""
        try:
            entry = json.loads(self.path(key).read_bytes())
            meta = entry["meta"]
        except (OSError, ValueError, KeyError, TypeError):
            return None
        return meta if isinstance(meta, dict) else None


def _decode(data: bytes, key: str) -> tuple[Generation, dict[str, Any]]:
    """(generation, meta) of an entry's bytes, else :class:`RejectedEntry` saying why."""
    try:
        entry = json.loads(data.decode("utf-8"))
    except (UnicodeDecodeError, ValueError) as exc:
        raise RejectedEntry(f"is not valid JSON ({exc})") from None
    if not isinstance(entry, dict):
        raise RejectedEntry(f"holds a {type(entry).__name__}, not an object")
    version = entry.get("schema_version")
    if version != SCHEMA_VERSION:
        raise RejectedEntry(f"has schema_version {version!r}, expected {SCHEMA_VERSION}")
    if entry.get("key") != key:
        raise RejectedEntry(f"holds key {entry.get('key')!r}, not the key of its file name")
    meta = entry.get("meta")
    if not isinstance(meta, dict):
        raise RejectedEntry("has no 'meta' object")
    generation = _check_generation(entry.get("generation"))
    return Generation.from_dict(generation), meta


def _check_generation(g: Any) -> dict[str, Any]:
    """``g`` if it is a well-formed ``Generation.as_dict()``, else :class:`RejectedEntry`."""
    if not isinstance(g, dict):
        raise RejectedEntry("has no 'generation' object")
    if not isinstance(g.get("text"), str):
        raise RejectedEntry("has a generation without a text string")
    ids = g.get("token_ids", [])
    if not isinstance(ids, list) or not all(
        isinstance(t, int) and not isinstance(t, bool) for t in ids
    ):
        raise RejectedEntry("has token_ids that are not a list of integers")
    lps = g.get("logprobs", [])
    if not isinstance(lps, list) or not all(
        isinstance(x, (int, float)) and not isinstance(x, bool) for x in lps
    ):
        raise RejectedEntry("has logprobs that are not a list of numbers")
    if not isinstance(g.get("finish_reason", "stop"), str):
        raise RejectedEntry("has a finish_reason that is not a string")
    return g

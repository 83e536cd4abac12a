"""Attribution records on disk, so a rerun verifies nothing it verified before.

An attribution record is a pure function of its inputs and the verifier, so it is cached like
a generation: content-addressed under ``<--provenai-cache>/attribution/<key[:2]>/<key>.json``
as ``{schema_version, key, record, graph}``, written atomically (a reader sees a whole entry
or none, so a run killed mid-write leaves nothing a rerun would trust).

The key (:func:`record_key`) is the sha256 of a canonical JSON of

* the **recipe** of the verifier (:func:`recipe`) — everything the verifier's output depends
  on, computed *without building it* (no MiniLM load, no forest fit): the sha256 of the
  calibration table file, the forest parameters, the scikit-learn, torch, transformers,
  tokenizers and sentence-transformers versions (MiniLM's vectors and word pieces), the
  threshold option, the MiniLM folder's identity (its files' digest), the NLI folder's and
  the LM feature's model identities when those options are on, the premise budget, the
  repair budget, the LLM judge's identity when ``--provenai-verify-judge`` is on (model id,
  format, prompt version, threshold — not its URL, so the servers of a fleet share entries;
  a record in which a judge call failed is never stored) — and the **code digest**
  (:func:`code_digest`: every ``.py`` file of this package), so a record written by other
  code is never reused;
* the **inputs** of the record: a frozen trace or probe case as loaded (every call, output
  text, answer and gold label), or an MCP session's recorded calls with their result digests,
  the answer, its citations, what the generator saw and the model's identity.

An entry that cannot be read back (bad JSON, another schema version, a key that is not its
file name's) is reported with a :class:`~pytest_provenai.errors.ProvenaiCacheWarning`,
dropped and recomputed.
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import asdict, is_dataclass
from functools import cache
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from pytest_provenai._io import sha256_file, sha256_text
from pytest_provenai.cache_store import KeyedStore, RejectedEntry, content_key

__all__ = [
    "SCHEMA_VERSION",
    "RecordCache",
    "code_digest",
    "frozen_case_inputs",
    "package_version",
    "record_key",
]

SCHEMA_VERSION = 1
"""Version of the entry layout; an entry with another version is treated as corrupt."""

PACKAGE_ROOT = Path(__file__).resolve().parent.parent


@cache
def code_digest(root: Path = PACKAGE_ROOT) -> str:
    """sha256 over every ``.py`` file of the package (relative path and content digest)."""
    files = sorted(p for p in root.rglob("*.py") if "__pycache__" not in p.parts)
    listing = "".join(f"{p.relative_to(root).as_posix()}\t{sha256_file(p)}\n" for p in files)
    return sha256_text(listing)


def package_version(name: str) -> str | None:
    """An installed distribution's version without importing it (None: not installed)."""
    try:
        return version(name)
    except PackageNotFoundError:
        return None


def recipe(
    *,
    table: Path,
    use_lm: bool,
    forest_params: Mapping[str, Any],
    threshold: float | None,
    encoder: Mapping[str, Any],
    nli: Mapping[str, Any] | None,
    lm_model: Mapping[str, Any] | None,
    premise_budget: int,
    repair_iterations: int,
    judge: Mapping[str, Any] | None = None,
    conversation: Path | None = None,
) -> dict[str, Any]:
    """What a verifier's records depend on, as plain JSON (see the module docstring)."""
    return {
        "code": code_digest(),
        "table_sha256": sha256_file(table),
        "conversation_sha256": sha256_file(conversation) if conversation is not None else None,
        "lm_feature": use_lm,
        "forest_params": dict(forest_params),
        "sklearn": package_version("scikit-learn"),
        "torch": package_version("torch"),
        "transformers": package_version("transformers"),
        "tokenizers": package_version("tokenizers"),
        "sentence_transformers": package_version("sentence-transformers"),
        "threshold": threshold,
        "encoder": dict(encoder),
        "nli": dict(nli) if nli is not None else None,
        "lm_model": dict(lm_model) if lm_model is not None else None,
        "premise_budget": premise_budget,
        "repair_iterations": repair_iterations,
        "judge": dict(judge) if judge is not None else None,
    }


def _plain(value: Any) -> Any:
    if is_dataclass(value) and not isinstance(value, type):
        return asdict(value)
    return value


def frozen_case_inputs(case: Any) -> dict[str, Any]:
    """What of a frozen trace or probe case its record depends on: every field but where its
    file lies (``path``), its note and its free ``extra``."""
    return {k: v for k, v in asdict(case).items() if k not in ("path", "extra", "note")}


def record_key(recipe: Mapping[str, Any], kind: str, inputs: Any) -> str:
    """sha256 of the canonical JSON of the verifier's recipe, the record kind and its inputs
    (a dataclass is taken field by field)."""
    payload = {
        "schema_version": SCHEMA_VERSION,
        "recipe": recipe,
        "kind": kind,
        "inputs": _plain(inputs),
    }
    return content_key(payload)


class RecordCache(KeyedStore):
    """Attribution records (and their trace graphs) under ``root``, addressed by
    :func:`record_key`. ``hits``, ``misses``, ``corrupt`` and ``writes`` count this
    process's calls."""

    dropped = (
        "provenai attribution cache: {path} {why}; the entry was dropped and will be recomputed"
    )

    def get(self, key: str) -> tuple[dict[str, Any], dict[str, Any] | None] | None:
        """(record, graph or None) stored under ``key``, or None (missing or corrupt)."""

        def decode(raw: bytes) -> tuple[dict[str, Any], dict[str, Any] | None]:
            try:
                entry = json.loads(raw.decode("utf-8"))
                if not isinstance(entry, dict):
                    raise ValueError(f"holds a {type(entry).__name__}, not an object")
                if entry.get("schema_version") != SCHEMA_VERSION:
                    raise ValueError(f"has schema_version {entry.get('schema_version')!r}")
                if entry.get("key") != key:
                    raise ValueError("holds another key than its file name's")
                record, graph = entry.get("record"), entry.get("graph")
                if not isinstance(record, dict) or not (graph is None or isinstance(graph, dict)):
                    raise ValueError("has no record object")
            except (UnicodeDecodeError, ValueError) as exc:
                raise RejectedEntry(f"is unreadable ({exc})") from None
            return record, graph

        return self._read(key, decode)

    def put(self, key: str, record: Mapping[str, Any], graph: Mapping[str, Any] | None) -> None:
        entry = {"schema_version": SCHEMA_VERSION, "key": key, "record": record, "graph": graph}
        self._write(key, entry)

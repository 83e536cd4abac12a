"""What a run cache folder (``--provenai-cache``, default ``.provenai-cache``) holds: one home
for its folder names, its marker file and the shapes of its entries.

::

    .provenai-cache/
      CACHEDIR.TAG                      the marker: this folder is a provenai cache
      generations/ab/<64 hex>.json      model outputs (subject/cache.py)
      influence/ab/<64 hex>.json        KL profiles of ablations (subject/ablation.py)
      attribution/ab/<64 hex>.json      verified attribution records (verify/cache.py)
      mcp-traces/<case id>.json         captured MCP trace graphs (verify/runtime.py)

The marker follows the Cache Directory Tagging convention (backup tools skip such folders)
and is written by the first entry stored under a cache root (:func:`mark_store`).
``provenai cache`` only touches a folder that has the marker — or, for a cache written
before the marker existed, one whose top level holds nothing but these folders — and only
files of these shapes inside it (:func:`entry_kind`). No pytest import.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from pytest_provenai._io import atomic_write_text

__all__ = [
    "ATTRIBUTION",
    "GENERATIONS",
    "INFLUENCE",
    "KINDS",
    "MARKER",
    "MCP_TRACES",
    "entry_kind",
    "is_temp_name",
    "looks_like_cache",
    "mark",
    "mark_store",
]

GENERATIONS = "generations"
INFLUENCE = "influence"
ATTRIBUTION = "attribution"
MCP_TRACES = "mcp-traces"
KEYED_KINDS = (GENERATIONS, INFLUENCE, ATTRIBUTION)
"""Content-addressed kinds: ``<kind>/<key[:2]>/<key>.json``, key = 64 lowercase hex."""
KINDS = (*KEYED_KINDS, MCP_TRACES)

MARKER = "CACHEDIR.TAG"
MARKER_TEXT = (
    "Signature: 8a477f597d28d172789f06886806bc55\n"
    "# This folder is a pytest-provenai run cache (--provenai-cache).\n"
    "# 'provenai cache info|prune|clear' touch only folders that hold this file.\n"
)

_KEY_FILE = re.compile(r"^([0-9a-f]{2})[0-9a-f]{62}\.json$")


def mark(root: Path) -> None:
    """Write the marker into the cache folder ``root`` (created if needed) unless it is there."""
    if not (root / MARKER).is_file():
        atomic_write_text(root / MARKER, MARKER_TEXT)


def mark_store(store_root: Path) -> None:
    """Called by a store before it writes an entry under ``store_root``: when that is a
    known kind folder (``<cache>/generations`` …), mark its cache folder."""
    if store_root.name in KINDS:
        mark(store_root.parent)


def is_temp_name(name: str) -> bool:
    """A writer's temporary file (``_io.atomic_write_bytes``: ``.<name>.<random>.tmp``)."""
    return name.startswith(".") and name.endswith(".tmp")


def looks_like_cache(root: Path) -> tuple[bool, list[str]]:
    """Whether ``root`` is a provenai cache: it holds the marker, or (a cache written before
    the marker) at least one kind folder and nothing else at its top level. The second item
    names what does not belong, for the refusal message."""
    try:
        names = sorted(os.listdir(root))
    except OSError:
        return False, []
    if MARKER in names:
        return True, []
    foreign = [
        n + ("/" if (root / n).is_dir() else "")
        for n in names
        if not (n in KINDS and (root / n).is_dir() and not (root / n).is_symlink())
        and not is_temp_name(n)
    ]
    return (not foreign and any(n in KINDS for n in names)), foreign


def entry_kind(root: Path, path: Path) -> str | None:
    """The kind of the cache entry at ``path`` under ``root`` (a plain file of a known
    shape, not a temporary file), else None: anything else is never counted or removed."""
    try:
        parts = path.relative_to(root).parts
    except ValueError:
        return None
    if len(parts) == 3 and parts[0] in KEYED_KINDS:
        m = _KEY_FILE.match(parts[2])
        return parts[0] if m and m.group(1) == parts[1] else None
    if len(parts) == 2 and parts[0] == MCP_TRACES:
        name = parts[1]
        return MCP_TRACES if name.endswith(".json") and not name.startswith(".") else None
    return None

"""Writing provenance fixture sets (kinds no_answer, exposure, quotation, derivation).

Build ledger entries with :func:`original` and :func:`aid` (they compute the digests), case
objects as plain dicts, then :func:`write_provenance_set` writes ``cases/<id>.json``,
``manifest.json`` (with every case file's sha256) and ``README.md`` into a fresh folder and
loads the result back through the strict loader, so a set that is written is a set that loads.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from pytest_provenai._io import dumps_stable, sha256_bytes, sha256_text
from pytest_provenai.errors import ProvenaiError
from pytest_provenai.frozen.freeze import _write_set
from pytest_provenai.frozen.kinds import ATTRIBUTION_KINDS, PROVENANCE_KINDS
from pytest_provenai.frozen.load import (
    CASES_DIR,
    MANIFEST_NAME,
    SCHEMA_VERSION,
    load_fixture_set,
)
from pytest_provenai.frozen.model import FixtureSet

__all__ = ["CC0", "aid", "original", "write_provenance_set"]

#: The licence of the shipped synthetic sets.
CC0 = {
    "name": "CC0-1.0",
    "url": "https://creativecommons.org/publicdomain/zero/1.0/",
    "attribution": "Written for pytest-provenai; every fact in it is invented.",
}


def original(entry_id: str, text: str, *, title: str, version: int = 1) -> dict[str, Any]:
    """A ledger entry for a retained original, pinned by the sha256 of ``text``."""
    return {
        "id": entry_id,
        "kind": "original",
        "title": title,
        "version": version,
        "text": text,
        "sha256": sha256_text(text),
    }


def aid(entry_id: str, text: str, *, parent: dict[str, Any], aid_kind: str) -> dict[str, Any]:
    """A ledger entry for a generated aid made from the original ``parent`` (an
    :func:`original` dict)."""
    return {
        "id": entry_id,
        "kind": "generated",
        "aid_kind": aid_kind,
        "parent": parent["id"],
        "parent_sha256": parent["sha256"],
        "text": text,
        "sha256": sha256_text(text),
    }


def write_provenance_set(
    out: str | os.PathLike[str],
    *,
    kind: str,
    cases: Sequence[dict[str, Any]],
    description: str,
    readme: str,
    synthetic: bool = True,
    licence: dict[str, str] | None = None,
    generator: str | None = None,
    name: str | None = None,
    overwrite: bool = False,
) -> FixtureSet:
    """Write the set to the folder ``out`` (its name is the set's name unless ``name``) and
    return it as loaded. Each case dict gets ``schema_version`` and ``kind`` in front."""
    kinds = (
        *PROVENANCE_KINDS,
        *ATTRIBUTION_KINDS,
    )  # the attribution kinds share the manifest shape
    if kind not in kinds:
        raise ProvenaiError(f"kind: expected one of {', '.join(kinds)}, got {kind!r}")
    folder = Path(out)
    files: dict[str, bytes] = {}
    for case in cases:
        body = {"schema_version": SCHEMA_VERSION, "kind": kind, **case}
        rel = f"{CASES_DIR}/{case['id']}.json"
        if rel in files:
            raise ProvenaiError(f"{rel}: two cases have id {case['id']!r}")
        files[rel] = dumps_stable(body).encode("utf-8")
    manifest: dict[str, Any] = {
        "schema_version": SCHEMA_VERSION,
        "kind": kind,
        "name": name or os.path.basename(os.path.abspath(folder)),
        "synthetic": synthetic,
        "description": description,
        "licence": licence or CC0,
        "count": len(files),
        "files": {rel: sha256_bytes(data) for rel, data in sorted(files.items())},
    }
    if generator is not None:
        manifest["generator"] = generator
    files[MANIFEST_NAME] = dumps_stable(manifest).encode("utf-8")
    files["README.md"] = readme.encode("utf-8")
    _write_set(folder, os.fspath(out), files, overwrite)
    return load_fixture_set(folder)

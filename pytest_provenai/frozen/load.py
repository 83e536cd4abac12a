"""Strict loading of frozen fixture sets.

A fixture set is a folder::

    <set>/manifest.json          provenance, licence, and the sha256 of every case file
    <set>/cases/<id>.json        one case each (see schemas/case.schema.json)
    <set>/README.md              licence and attribution for people (not read here)

Loading checks everything and trusts nothing: UTF-8, JSON syntax (no duplicate keys, no NaN),
both JSON Schemas, the manifest's file digests, every source's text digest, that text is the
concatenation of its sentences, that every manifest path stays inside the set folder, that no
case file is unlisted, that case ids are unique and that gold titles name sources. Every
problem raises :class:`~pytest_provenai.errors.FixtureError` naming the file, a JSON pointer
(RFC 6901) into it, and what was expected versus what was found.

A manifest's optional ``kind`` says what its cases are: ``hotpotqa`` (the default, the
original format) or one of the provenance kinds ``no_answer``, ``exposure``, ``quotation``,
``derivation`` (schemas ``<kind>.schema.json`` sharing ``ledger.schema.json``; manifest
``provenance-manifest.schema.json``). For those, every ledger entry's sha256 is re-hashed,
every aid's parent must be an original of the same case with the pinned parent_sha256, and
``aid_only_values`` must occur in an aid and in no original.

The parts live in their own modules: ``jsonread.py`` (the strict JSON reader, pointers, value
descriptions), ``validate.py`` (schemas, field checks), ``kinds.py`` (the table of fixture
kinds: schema + build function) with ``kind_hotpotqa.py`` and ``kind_provenance.py``. This
module reads a set folder and keeps the public names callers import.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from pytest_provenai._io import sha256_bytes
from pytest_provenai.errors import FixtureError
from pytest_provenai.frozen.jsonread import (
    PathLike,
    describe_value,
    json_pointer,
    parse_json_bytes,
    read_bytes,
    what_is_there,
)
from pytest_provenai.frozen.kinds import (
    FIXTURE_KINDS,
    PROVENANCE_KINDS,
    FixtureKind,
    parse_any_case,
    parse_case,
)
from pytest_provenai.frozen.model import KINDS, AnyCase, FixtureSet
from pytest_provenai.frozen.validate import (
    ID_MAX_LENGTH,
    ID_RE,
    SCHEMA_NAMES,
    check_against_schema,
    load_schema,
)

__all__ = [
    "CASES_DIR",
    "ID_MAX_LENGTH",
    "ID_RE",
    "MANIFEST_NAME",
    "PROVENANCE_KINDS",
    "SCHEMA_NAMES",
    "SCHEMA_VERSION",
    "PathLike",
    "json_pointer",
    "load_fixture_set",
    "load_fixture_sets",
    "load_schema",
    "manifest_kind",
    "parse_any_case",
    "parse_case",
    "parse_json_bytes",
    "read_set_manifest",
]

MANIFEST_NAME = "manifest.json"
CASES_DIR = "cases"
SCHEMA_VERSION = 1


# --------------------------------------------------------------------------- manifests


def manifest_kind(path: PathLike) -> str | None:
    """The fixture kind a set folder's manifest declares (``"hotpotqa"`` when it declares
    none), or None when the manifest cannot be read or names no known kind. Never raises:
    the plugin uses it to route a set that failed to load to the tests of its kind."""
    try:
        manifest = json.loads((Path(path) / MANIFEST_NAME).read_bytes().decode("utf-8"))
    except (OSError, ValueError, RecursionError):  # too long an integer, too deep a nesting
        return None
    if not isinstance(manifest, dict):
        return None
    kind = manifest.get("kind", "hotpotqa")
    return kind if isinstance(kind, str) and kind in KINDS else None


def _declared_kind(manifest: Any, shown: str) -> str:
    if not isinstance(manifest, dict) or "kind" not in manifest:
        return "hotpotqa"  # the schema reports a manifest that is not an object
    kind = manifest["kind"]
    if not isinstance(kind, str) or kind not in KINDS:
        raise FixtureError(
            shown,
            "/kind",
            "one of " + ", ".join(json.dumps(k) for k in KINDS),
            describe_value(kind),
        )
    return kind


# --------------------------------------------------------------------------- sets


def _check_entry(key: str, root: Path, root_real: Path, manifest_shown: str) -> Path:
    """Resolve a manifest /files key to a file inside the set folder, or raise."""
    pointer = json_pointer("files", key)
    if key.startswith("/") or "\\" in key or (len(key) > 1 and key[1] == ":"):
        raise FixtureError(
            manifest_shown,
            pointer,
            "a relative POSIX path inside the set folder",
            f"the absolute or non-POSIX path {json.dumps(key)}",
        )
    parts = key.split("/")
    if ".." in parts:
        raise FixtureError(
            manifest_shown,
            pointer,
            "a path inside the set folder",
            f'{json.dumps(key)}, which escapes it through ".."',
        )
    if (
        len(parts) != 2
        or parts[0] != CASES_DIR
        or parts[1] in ("", ".", ".json")
        or not parts[1].endswith(".json")
    ):
        raise FixtureError(
            manifest_shown,
            pointer,
            f"a path of the form {CASES_DIR}/<id>.json",
            json.dumps(key, ensure_ascii=False),
        )
    file = root / key
    real = file.resolve()
    if not real.is_relative_to(root_real):
        raise FixtureError(
            manifest_shown,
            pointer,
            "a path inside the set folder",
            f"{json.dumps(key)}, which resolves to {real} through a symlink",
        )
    what = what_is_there(file)
    if what is not None:
        raise FixtureError(
            manifest_shown, pointer, f"an existing file {os.path.join(str(root), key)}", what
        )
    return file


def _unlisted_case_files(root: Path, listed: set[str]) -> list[str]:
    cases_dir = root / CASES_DIR
    found: list[str] = []
    for dirpath, dirnames, filenames in os.walk(cases_dir, followlinks=False):
        dirnames.sort()
        rel_dir = Path(dirpath).relative_to(root).as_posix()
        for name in sorted(filenames):
            if name.lower().endswith(".json") and f"{rel_dir}/{name}" not in listed:
                found.append(f"{rel_dir}/{name}")
    return found


def read_set_manifest(path: PathLike) -> tuple[dict[str, Any], FixtureKind]:
    """The manifest of the set folder ``path`` and its fixture kind, after checking it is a
    fixture-set manifest: strict JSON, the declared kind known, its kind's manifest schema
    and extra checks. Case files are not read. Raises :class:`FixtureError` naming
    ``<path>/manifest.json``; ``provenai freeze --overwrite`` uses it to tell a set from any
    other folder that holds a ``manifest.json``."""
    manifest_shown = os.path.join(os.fspath(path), MANIFEST_NAME)
    manifest_file = Path(path) / MANIFEST_NAME
    if not manifest_file.is_file():
        raise FixtureError(
            manifest_shown, "", f"a {MANIFEST_NAME} listing the set's case files", "no such file"
        )
    manifest = parse_json_bytes(read_bytes(manifest_file, manifest_shown), manifest_shown)
    spec = FIXTURE_KINDS[_declared_kind(manifest, manifest_shown)]
    check_against_schema(manifest, spec.manifest_schema, manifest_shown)
    if spec.check_manifest is not None:
        spec.check_manifest(manifest, manifest_shown)
    return manifest, spec


def load_fixture_set(path: PathLike) -> FixtureSet:
    """Load and verify the fixture set folder ``path``; the set's name is the folder name.

    Cases come in manifest ``/files`` order (the freezer writes it sorted by file path).
    Raises :class:`FixtureError` on the first problem found.
    """
    shown = os.fspath(path)
    root = Path(path)
    if not root.is_dir():
        raise FixtureError(
            shown,
            "",
            f"a fixture set folder containing {MANIFEST_NAME}",
            "a file" if root.exists() else "no such folder",
        )
    name = root.resolve().name if root.name in ("", ".", "..") else root.name
    manifest_shown = os.path.join(shown, MANIFEST_NAME)
    manifest, spec = read_set_manifest(path)
    files: dict[str, str] = manifest["files"]
    if manifest["count"] != len(files):
        raise FixtureError(
            manifest_shown,
            "/count",
            f"{len(files)} (the number of entries in /files)",
            str(manifest["count"]),
        )

    root_real = root.resolve()
    entries = [(key, _check_entry(key, root, root_real, manifest_shown)) for key in files]
    unlisted = _unlisted_case_files(root, set(files))
    if unlisted:
        raise FixtureError(
            os.path.join(shown, unlisted[0]),
            "",
            f"an entry for {unlisted[0]} in {manifest_shown} /files",
            "a case file the manifest does not list",
        )

    cases: list[AnyCase] = []
    first_file_of: dict[str, str] = {}
    for key, file in entries:
        case_shown = os.path.join(shown, key)
        data = read_bytes(file, case_shown)
        case = parse_any_case(data, case_shown, kind=spec.name, fixture_set=name)
        digest = sha256_bytes(data)
        if digest != files[key]:
            raise FixtureError(
                case_shown,
                "",
                f"sha256 {files[key]} (from {manifest_shown} {json_pointer('files', key)})",
                f"sha256 {digest}",
            )
        if case.id in first_file_of:
            raise FixtureError(
                case_shown,
                "/id",
                "a case id no other case file in the set uses",
                f"{json.dumps(case.id)}, already the id of {first_file_of[case.id]}",
            )
        first_file_of[case.id] = case_shown
        cases.append(case)
    return FixtureSet(name=name, path=shown, manifest=manifest, cases=tuple(cases))


def load_fixture_sets(
    paths: Iterable[PathLike],
) -> tuple[list[FixtureSet], list[FixtureError]]:
    """Load each set independently: one bad set does not stop the others.

    Returns the sets that loaded (in input order) and one :class:`FixtureError` per set that
    did not.
    """
    sets: list[FixtureSet] = []
    errors: list[FixtureError] = []
    for path in paths:
        try:
            sets.append(load_fixture_set(path))
        except FixtureError as exc:
            errors.append(exc)
    return sets, errors

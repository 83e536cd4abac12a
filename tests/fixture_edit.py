"""Helpers that edit a frozen fixture set on disk, for the loader's bad-input tests.

``edit_case`` and ``write_case_bytes`` re-pin the edited file's digest in the manifest (so
only the defect under test remains); ``set_at`` / ``delete_at`` / ``rehash`` build the
mutations; ``load_error`` loads a set that must fail and checks the error is one line.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pytest_provenai._io import dumps_stable, sha256_bytes, sha256_text
from pytest_provenai.errors import FixtureError
from pytest_provenai.frozen.load import load_fixture_set

Mutate = Callable[[Any], None]


def read_json(path: Path) -> Any:
    return json.loads(path.read_text(encoding="utf-8"))


def write_manifest(set_dir: Path, mutate: Mutate) -> None:
    manifest = read_json(set_dir / "manifest.json")
    mutate(manifest)
    (set_dir / "manifest.json").write_text(dumps_stable(manifest), encoding="utf-8")


def write_case_bytes(set_dir: Path, rel: str, data: bytes, *, pin: bool = True) -> None:
    """Replace a case file; with ``pin`` also update its digest in the manifest."""
    (set_dir / rel).write_bytes(data)
    if pin:
        write_manifest(set_dir, lambda m: m["files"].__setitem__(rel, sha256_bytes(data)))


def edit_case(set_dir: Path, rel: str, mutate: Mutate) -> str:
    """Mutate the case file ``rel`` (e.g. ``cases/x.json``) and re-pin its digest; returns
    ``rel``."""
    obj = read_json(set_dir / rel)
    mutate(obj)
    write_case_bytes(set_dir, rel, dumps_stable(obj).encode("utf-8"))
    return rel


def load_error(path: Path) -> FixtureError:
    with pytest.raises(FixtureError) as info:
        load_fixture_set(path)
    err = info.value
    where = f"{err.path}#{err.pointer}" if err.pointer else err.path
    assert str(err) == f"{where}: expected {err.expected}, got {err.actual}"
    assert "\n" not in str(err)
    return err


def set_at(*path: Any, value: Any) -> Mutate:
    """A mutation setting the value at ``path`` (keys and indices)."""

    def mutate(obj: Any) -> None:
        for step in path[:-1]:
            obj = obj[step]
        obj[path[-1]] = value

    return mutate


def delete_at(*path: Any) -> Mutate:
    """A mutation deleting the value at ``path``."""

    def mutate(obj: Any) -> None:
        for step in path[:-1]:
            obj = obj[step]
        del obj[path[-1]]

    return mutate


def rehash(*path: Any, text: str) -> Mutate:
    """A mutation setting an entry's text and its sha256 consistently."""

    def mutate(obj: Any) -> None:
        for step in path:
            obj = obj[step]
        obj["text"] = text
        obj["sha256"] = sha256_text(text)

    return mutate

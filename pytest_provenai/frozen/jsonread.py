"""Strict JSON reading for fixture files, and the words error messages use for JSON values.

:func:`parse_json_bytes` decodes strict UTF-8 JSON; any problem is one
:class:`~pytest_provenai.errors.FixtureError` naming the file. :func:`json_pointer` builds
the RFC 6901 pointers errors carry, and :func:`describe_value` says what a JSON value is
(``the string "x"``, ``an array of 3 items``): the one description the loaders, the
freezer and the corpus reader use in their messages.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, TypeAlias

from pytest_provenai.errors import FixtureError

__all__ = ["PathLike", "describe_value", "json_pointer", "parse_json_bytes", "read_bytes"]

PathLike: TypeAlias = "str | os.PathLike[str]"


# --------------------------------------------------------------------------- JSON pointers


def json_pointer(*parts: str | int) -> str:
    """RFC 6901 pointer from reference tokens: ``json_pointer("files", "cases/a.json")`` is
    ``/files/cases~1a.json``; no tokens give ``""`` (the whole document)."""
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


# --------------------------------------------------------------------------- strict JSON


class _DuplicateKeyError(ValueError):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


class _NonFiniteError(ValueError):
    def __init__(self, token: str) -> None:
        super().__init__(token)
        self.token = token


def _unique_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj: dict[str, Any] = {}
    for key, value in pairs:
        if key in obj:
            raise _DuplicateKeyError(key)
        obj[key] = value
    return obj


def _reject_constant(token: str) -> Any:
    raise _NonFiniteError(token)


def _line_col(data: bytes, offset: int) -> tuple[int, int]:
    line = data.count(b"\n", 0, offset) + 1
    col = offset - (data.rfind(b"\n", 0, offset) + 1) + 1
    return line, col


def parse_json_bytes(data: bytes, path: str) -> Any:
    """Decode strict UTF-8 JSON; any problem is a :class:`FixtureError` naming ``path``.

    Rejects non-UTF-8 bytes, a byte-order mark, syntax errors (with line:col), duplicate
    object keys and the non-standard constants NaN / Infinity.
    """
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line, col = _line_col(data, exc.start)
        raise FixtureError(
            path,
            "",
            "UTF-8 text",
            f"byte 0x{data[exc.start]:02x} that is not UTF-8 at line {line}:{col} "
            f"(byte offset {exc.start})",
        ) from None
    if text.startswith("\ufeff"):
        raise FixtureError(path, "", "JSON without a byte-order mark", "a BOM at line 1:1")
    try:
        return json.loads(text, object_pairs_hook=_unique_pairs, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        raise FixtureError(
            path, "", "valid JSON", f"invalid JSON at line {exc.lineno}:{exc.colno}: {exc.msg}"
        ) from None
    except _DuplicateKeyError as exc:
        raise FixtureError(
            path, "", "JSON objects with unique keys", f"duplicate key {json.dumps(exc.key)}"
        ) from None
    except _NonFiniteError as exc:
        raise FixtureError(path, "", "finite JSON numbers", f"{exc.token} (not JSON)") from None


def read_bytes(file: Path, shown: str) -> bytes:
    """The bytes of ``file``; a missing, folder or unreadable file is a FixtureError naming
    ``shown``."""
    try:
        return file.read_bytes()
    except FileNotFoundError:
        raise FixtureError(shown, "", "an existing file", "no such file") from None
    except IsADirectoryError:
        raise FixtureError(shown, "", "a file", "a folder") from None
    except OSError as exc:
        raise FixtureError(shown, "", "a readable file", exc.strerror or str(exc)) from None


# --------------------------------------------------------------------------- value descriptions


def describe_value(value: Any) -> str:
    """What a JSON value is, for the "got ..." half of an error message: ``null``, ``true``,
    ``the string "x"`` (cut at 100 characters), ``the number 7``, ``an array of 3 items``,
    ``an object``."""
    if value is None or isinstance(value, bool):
        return json.dumps(value)
    if isinstance(value, str):
        shown = json.dumps(value if len(value) <= 100 else value[:100] + "…", ensure_ascii=False)
        return f"the string {shown}"
    if isinstance(value, int | float):
        return f"the number {json.dumps(value)}"
    if isinstance(value, list):
        return f"an array of {len(value)} item{'s' if len(value) != 1 else ''}"
    if isinstance(value, dict):
        return "an object"
    return repr(value)  # pragma: no cover - JSON has no other types

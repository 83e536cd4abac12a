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
import re
import stat
from collections.abc import Iterator
from pathlib import Path
from typing import Any, TypeAlias

from pytest_provenai.errors import FixtureError

__all__ = [
    "MAX_DEPTH",
    "MAX_INT_DIGITS",
    "PathLike",
    "describe_value",
    "json_pointer",
    "parse_json_bytes",
    "read_bytes",
    "what_is_there",
]

PathLike: TypeAlias = "str | os.PathLike[str]"

#: Deepest nesting of arrays and objects a file may have (the deepest shipped document nests
#: 5 levels). Deeper documents exhaust Python's recursion in the parser or in the schema
#: validator, so they are refused first.
MAX_DEPTH = 64
#: Longest integer literal. Python refuses int/str conversions past a configurable number of
#: digits (4,300 by default, never under 640); no fixture field needs more.
MAX_INT_DIGITS = 640


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


class _LongInteger:
    """Stands in for an integer literal of more than MAX_INT_DIGITS digits, so the document
    walk can report it with its JSON pointer (the parser's hook has no position)."""

    __slots__ = ("digits",)

    def __init__(self, digits: int) -> None:
        self.digits = digits


class _IntParser:
    """``parse_int`` hook: an over-long literal becomes a :class:`_LongInteger` and is
    noted, so the walk looks for it only when there is one."""

    def __init__(self) -> None:
        self.long_seen = False

    def __call__(self, token: str) -> int | _LongInteger:
        digits = len(token) - token.startswith("-")
        if digits > MAX_INT_DIGITS:
            self.long_seen = True
            return _LongInteger(digits)
        return int(token)


def _line_col(data: bytes, offset: int) -> tuple[int, int]:
    line = data.count(b"\n", 0, offset) + 1
    col = offset - (data.rfind(b"\n", 0, offset) + 1) + 1
    return line, col


_SURROGATE_ESCAPE_RE = re.compile(r"\\u[dD][89a-fA-F]")
_SURROGATE_RE = re.compile("[\ud800-\udfff]")
_NESTING_TOKEN_RE = re.compile(r'"(?:[^"\\]|\\.)*"|[\[\]{}]')
_UNICODE_TEXT = "Unicode text (UTF-8 has no lone surrogates)"


def _nesting_error(text: str, path: str) -> FixtureError:
    """The document nests deeper than the parser could follow: say where it passes
    MAX_DEPTH (strings skipped)."""
    depth, offset = 0, 0
    for m in _NESTING_TOKEN_RE.finditer(text):
        token = m.group()
        if token in "[{":
            depth += 1
            if depth > MAX_DEPTH:
                offset = m.start()
                break
        elif token in "]}":
            depth -= 1
    line = text.count("\n", 0, offset) + 1
    col = offset - (text.rfind("\n", 0, offset) + 1) + 1
    return FixtureError(
        path,
        "",
        f"JSON nested at most {MAX_DEPTH} levels deep",
        f"nesting deeper than {MAX_DEPTH} levels at line {line}:{col}",
    )


def _lone_surrogate(text: str) -> str | None:
    m = _SURROGATE_RE.search(text)
    return None if m is None else f"lone surrogate U+{ord(m.group()):04X} at character {m.start()}"


def _members(node: Any) -> Iterator[tuple[str | int, Any]]:
    return iter(node.items()) if type(node) is dict else enumerate(node)


def _check_values(root: Any, path: str, *, strings: bool, long_ints: bool) -> None:
    """Walk the parsed document in document order, without recursion: nesting within
    MAX_DEPTH; when ``long_ints`` (the parser met one), no over-long integer; when
    ``strings`` (the text has a surrogate escape), no lone surrogate in any string or member
    name. Raises FixtureError with the JSON pointer of the first problem."""
    leaves = strings or long_ints
    if type(root) is not dict and type(root) is not list:
        error = _check_leaf(root, (), path, strings=strings)
        if error is not None:
            raise error
        return
    stack: list[tuple[tuple[str | int, ...], Iterator[tuple[str | int, Any]]]] = [
        ((), _members(root))
    ]
    while stack:
        parts, members = stack[-1]
        for key, value in members:
            if strings and type(key) is str:
                lone = _lone_surrogate(key)
                if lone is not None:
                    raise FixtureError(
                        path, json_pointer(*parts), _UNICODE_TEXT, f"a member name with a {lone}"
                    )
            kind = type(value)
            if kind is dict or kind is list:
                if len(stack) >= MAX_DEPTH:
                    raise FixtureError(
                        path,
                        json_pointer(*parts, key),
                        f"JSON nested at most {MAX_DEPTH} levels deep",
                        f"{describe_value(value)} at level {len(stack) + 1}",
                    )
                stack.append(((*parts, key), _members(value)))
                break
            if leaves:
                error = _check_leaf(value, (*parts, key), path, strings=strings)
                if error is not None:
                    raise error
        else:
            stack.pop()


def _check_leaf(
    value: Any, parts: tuple[str | int, ...], path: str, *, strings: bool
) -> FixtureError | None:
    if type(value) is _LongInteger:
        return FixtureError(
            path,
            json_pointer(*parts),
            f"an integer of at most {MAX_INT_DIGITS} digits",
            f"an integer of {value.digits} digits",
        )
    if strings and type(value) is str:
        lone = _lone_surrogate(value)
        if lone is not None:
            return FixtureError(path, json_pointer(*parts), _UNICODE_TEXT, f"a {lone}")
    return None


def parse_json_bytes(data: bytes, path: str) -> Any:
    """Decode strict UTF-8 JSON; any problem is a :class:`FixtureError` naming ``path``.

    Rejects non-UTF-8 bytes, a byte-order mark, syntax errors (with line:col), duplicate
    object keys, the non-standard constants NaN / Infinity, nesting deeper than
    :data:`MAX_DEPTH`, integers longer than :data:`MAX_INT_DIGITS` digits and escaped lone
    surrogates (``"\\ud800"`` is JSON but not Unicode text) in strings and member names.
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
    parse_int = _IntParser()
    try:
        doc = json.loads(
            text,
            object_pairs_hook=_unique_pairs,
            parse_constant=_reject_constant,
            parse_int=parse_int,
        )
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
    except RecursionError:
        raise _nesting_error(text, path) from None
    _check_values(
        doc,
        path,
        strings=_SURROGATE_ESCAPE_RE.search(text) is not None,
        long_ints=parse_int.long_seen,
    )
    return doc


def what_is_there(file: Path) -> str | None:
    """None when ``file`` is a regular file (symlinks followed), else what it is, for the
    "got ..." half of a message: ``no such file``, ``a folder``, ``a FIFO (named pipe)``…"""
    try:
        mode = file.stat().st_mode
    except FileNotFoundError:
        return "no such file"
    except OSError as exc:
        return exc.strerror or str(exc)
    if stat.S_ISREG(mode):
        return None
    if stat.S_ISDIR(mode):
        return "a folder"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe), not a regular file"
    if stat.S_ISSOCK(mode):
        return "a socket, not a regular file"
    if stat.S_ISCHR(mode) or stat.S_ISBLK(mode):
        return "a device, not a regular file"
    return "not a regular file"  # pragma: no cover


def read_bytes(file: Path, shown: str) -> bytes:
    """The bytes of ``file``; a missing, folder, FIFO, device or unreadable file is a
    FixtureError naming ``shown`` (a FIFO is never opened: reading one would block)."""
    what = what_is_there(file)
    if what is not None:
        expected = "an existing file" if what == "no such file" else "a file"
        raise FixtureError(shown, "", expected, what)
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

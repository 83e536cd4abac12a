"""Small I/O helpers: hashing and atomic writes (used for cache, golden and results)."""

from __future__ import annotations

import hashlib
import json
import os
import secrets
import shutil
import tempfile
from pathlib import Path
from typing import Any


def sha256_text(text: str) -> str:
    """sha256 hex digest of the UTF-8 bytes of ``text``."""
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sha256_file(path: str | os.PathLike[str], chunk: int = 1 << 20) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        while block := fh.read(chunk):
            h.update(block)
    return h.hexdigest()


def atomic_write_bytes(path: str | os.PathLike[str], data: bytes) -> None:
    """Write ``data`` to ``path`` so readers see the old file or the new one, never a part.

    The bytes go to a temporary file in the same folder, are fsynced, then renamed over the
    target (``os.replace`` is atomic on POSIX and Windows). Safe for concurrent writers of
    the same content (xdist workers filling one cache).
    """
    target = Path(path)
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(prefix=f".{target.name}.", suffix=".tmp", dir=target.parent)
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(data)
            fh.flush()
            os.fsync(fh.fileno())
        os.replace(tmp, target)
    except BaseException:
        try:
            os.unlink(tmp)
        except FileNotFoundError:
            pass
        raise


def drop_cache_entry(path: Path, message: str, *, stacklevel: int = 2) -> None:
    """A cache entry that cannot be trusted: warn (``ProvenaiCacheWarning``, ``message``)
    and unlink it, so the caller recomputes and stores it again. An entry already gone
    (another worker dropped or replaced it) is fine; one that cannot be unlinked (a folder
    in its place) is left for the next write to fail on loudly."""
    import warnings

    from pytest_provenai.errors import ProvenaiCacheWarning

    warnings.warn(message, ProvenaiCacheWarning, stacklevel=stacklevel + 1)
    try:
        path.unlink(missing_ok=True)
    except OSError:
        pass


def atomic_write_text(path: str | os.PathLike[str], text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))


def dumps_stable(obj: Any, *, allow_nan: bool = False) -> str:
    """Deterministic JSON: sorted keys, 2-space indent, UTF-8 kept, trailing newline.
    NaN and infinities are refused (ValueError) unless ``allow_nan``: they are not JSON."""
    text = json.dumps(obj, sort_keys=True, indent=2, ensure_ascii=False, allow_nan=allow_nan)
    return text + "\n"


def atomic_write_json(path: str | os.PathLike[str], obj: Any, *, allow_nan: bool = False) -> None:
    """:func:`dumps_stable` written atomically. A lone surrogate that reached ``obj`` (e.g. an
    undecodable file name) is written as its JSON escape instead of failing the write.
    ``allow_nan`` is for private caches only (a log-probability may be ``-inf``); results,
    records and golden files are strict JSON."""
    text = dumps_stable(obj, allow_nan=allow_nan)
    atomic_write_bytes(path, text.encode("utf-8", errors="backslashreplace"))


def _is_surrogate(ch: str) -> bool:
    return "\ud800" <= ch <= "\udfff"


MAX_RECORD_TEXT = 20_000
"""Characters kept of any one text in a record, a trace summary or the tool server's log (a
model, pipeline or client can send megabytes); a cut says so (a record's ``sanitized`` list,
a trace graph's ``meta``)."""


def json_safe(value: Any, *, max_chars: int, where: str = "") -> tuple[Any, list[str]]:
    """A copy of the JSON value ``value`` that any JSON writer can store, and what was changed
    to get it, one line per change (``"<json path>: <what>"``):

    * a lone surrogate (not encodable as UTF-8) is replaced by U+FFFD;
    * a string longer than ``max_chars`` is cut to ``max_chars`` characters;
    * NaN and infinities (not JSON) become None.

    A value that is not JSON at all (a set, an object) raises TypeError naming its path."""
    notes: list[str] = []

    def walk(v: Any, path: str) -> Any:
        if v is None or isinstance(v, (bool, int)):
            return v
        if isinstance(v, float):
            if v != v or v in (float("inf"), float("-inf")):
                notes.append(f"{path or '/'}: {v!r} is not JSON, stored as null")
                return None
            return v
        if isinstance(v, str):
            if any(_is_surrogate(ch) for ch in v):
                n = sum(_is_surrogate(ch) for ch in v)
                v = "".join("\ufffd" if _is_surrogate(ch) else ch for ch in v)
                notes.append(f"{path or '/'}: {n} lone surrogate(s) replaced by U+FFFD")
            if len(v) > max_chars:
                notes.append(f"{path or '/'}: cut to {max_chars} of {len(v)} characters")
                v = v[:max_chars]
            return v
        if isinstance(v, dict):
            out = {}
            for k, item in v.items():
                if not isinstance(k, str):
                    raise TypeError(f"{path or '/'}: key {k!r} is not a string")
                key = walk(k, path)
                out[key] = walk(item, f"{path}/{key}")
            return out
        if isinstance(v, (list, tuple)):
            return [walk(item, f"{path}/{i}") for i, item in enumerate(v)]
        raise TypeError(f"{path or '/'}: {type(v).__name__} is not a JSON value")

    return walk(value, where), notes


def fresh_sibling(parent: Path, stem: str, suffix: str) -> Path:
    """Create and return a new empty hidden folder ``parent/.<stem>.<random>.<suffix>``."""
    while True:
        candidate = parent / f".{stem}.{secrets.token_hex(4)}.{suffix}"
        try:
            candidate.mkdir()
        except FileExistsError:  # pragma: no cover - 32 random bits
            continue
        return candidate


def replace_folder(tmp: Path, out: Path) -> None:
    """Move the finished folder ``tmp`` to ``out`` atomically: an empty ``out`` is removed
    first; an existing one is moved aside, replaced, and deleted only once the new one is in
    place (on failure the old one is put back)."""
    if out.is_dir() and not out.is_symlink() and not any(out.iterdir()):
        out.rmdir()
    if not out.exists() and not out.is_symlink():
        os.replace(tmp, out)
        return
    old = fresh_sibling(out.parent, out.name, "old")
    old.rmdir()
    os.replace(out, old)
    try:
        os.replace(tmp, out)
    except BaseException:
        os.replace(old, out)
        raise
    shutil.rmtree(old, ignore_errors=True)


STALE_TEMP_SECONDS = 3600.0
"""A temporary file of :func:`atomic_write_bytes` older than this was left by a process that
died mid-write (a write takes well under a second): :func:`sweep_stale_temps` removes it."""


def sweep_stale_temps(root: str | os.PathLike[str], older_than: float = STALE_TEMP_SECONDS) -> int:
    """Remove the ``.<name>.<random>.tmp`` files :func:`atomic_write_bytes` left under ``root``
    when a process was killed mid-write, if older than ``older_than`` seconds (a running
    writer's temp file is young and is kept). Returns how many were removed; never raises for
    a file that vanished or cannot be removed."""
    import time

    base = Path(root)
    if not base.is_dir():
        return 0
    now = time.time()
    removed = 0
    for folder, _dirs, files in os.walk(base):
        for name in files:
            if not (name.startswith(".") and name.endswith(".tmp")):
                continue
            path = Path(folder) / name
            try:
                if now - path.lstat().st_mtime > older_than:
                    path.unlink()
                    removed += 1
            except OSError:
                continue
    return removed

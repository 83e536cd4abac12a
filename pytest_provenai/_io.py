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


def atomic_write_text(path: str | os.PathLike[str], text: str) -> None:
    atomic_write_bytes(path, text.encode("utf-8"))


def dumps_stable(obj: Any) -> str:
    """Deterministic JSON: sorted keys, 2-space indent, UTF-8 kept, trailing newline."""
    return json.dumps(obj, sort_keys=True, indent=2, ensure_ascii=False) + "\n"


def atomic_write_json(path: str | os.PathLike[str], obj: Any) -> None:
    atomic_write_text(path, dumps_stable(obj))


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

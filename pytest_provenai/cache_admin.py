"""``provenai cache info | prune | clear``: look at and trim the run cache.

The run cache (``--provenai-cache``, default ``.provenai-cache``; its layout is
:mod:`~pytest_provenai.cache_layout`) holds content-addressed entries:
``generations/ab/<key>.json`` (model outputs, each with its model in ``meta``),
``influence/ab/<key>.json`` (KL profiles of ablations), ``attribution/ab/<key>.json``
(verified attribution records) and ``mcp-traces/<case>.json`` (captured trace graphs).

Only a folder that is a provenai cache is touched (its ``CACHEDIR.TAG`` marker, or a
top level of nothing but those kind folders), and inside it only files of those shapes and
writers' stale temporary files: pointed at a project folder by mistake, every command refuses
with one line and removes nothing. Symbolic links are never followed.

Safe while a run uses the cache: entries are only ever *unlinked*, one file at a time, and
folders are never removed (a writer creates its temporary file in the entry's folder and
renames it into place; a removed folder would make that rename fail). A reader that finds an
entry gone treats it as a miss and recomputes; a reader that has the file open keeps reading
it (POSIX). A writer's temporary file is removed only once it is older than
:data:`~pytest_provenai._io.STALE_TEMP_SECONDS` (its writer died). So pruning or clearing
during an audit can cost recomputation, never a wrong or half-read entry.

"Last used" is the later of an entry's access and modification times (Linux updates access
times about daily under the default ``relatime``; with ``noatime`` it is the write time).
``info`` reads generation entries for their model name without changing their access time.

No pytest import.
"""

from __future__ import annotations

import contextlib
import json
import os
import stat
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_provenai import cache_layout
from pytest_provenai._io import STALE_TEMP_SECONDS
from pytest_provenai.errors import ProvenaiError

__all__ = ["CacheInfo", "cache_info", "clear_cache", "info_lines", "prune_cache"]

DAY = 86400.0


@dataclass
class CacheInfo:
    root: Path
    entries: int = 0
    bytes: int = 0
    temp_files: int = 0
    # (kind, model) -> [entries, bytes]
    groups: dict[tuple[str, str], list[int]] = field(
        default_factory=lambda: defaultdict(lambda: [0, 0])
    )
    oldest: float | None = None
    newest: float | None = None


def _walk(root: Path) -> Any:
    """(kind, path, stat) for every cache entry and every writer's temporary file (kind
    ``None``) under ``root``'s kind folders; nothing else is ever yielded. Symbolic links
    (files or folders) are never followed, so nothing outside the cache is read or removed;
    files that vanish while walking (a concurrent prune, a writer's rename) are skipped."""
    for kind in cache_layout.KINDS:
        top = root / kind
        if top.is_symlink() or not top.is_dir():
            continue
        for folder, dirs, files in os.walk(top):  # followlinks=False: links are not entered
            dirs[:] = [d for d in dirs if not (Path(folder) / d).is_symlink()]
            for name in files:
                path = Path(folder) / name
                try:
                    st = path.lstat()
                except OSError:
                    continue
                if not stat.S_ISREG(st.st_mode):
                    continue
                if cache_layout.is_temp_name(name):
                    yield None, path, st
                elif cache_layout.entry_kind(root, path) is not None:
                    yield kind, path, st


def _read_untouched(path: Path, st: os.stat_result) -> bytes:
    """The file's bytes without refreshing its access time (which "last used" reads): with
    O_NOATIME where the system allows it, else by putting the time back afterwards."""
    flags = os.O_RDONLY | getattr(os, "O_NOATIME", 0)
    try:
        fd = os.open(path, flags)
    except PermissionError:  # O_NOATIME needs the file's owner
        fd = os.open(path, os.O_RDONLY)
    try:
        with os.fdopen(fd, "rb") as fh:
            data = fh.read()
    finally:
        with contextlib.suppress(OSError):
            if os.stat(path).st_atime_ns != st.st_atime_ns:
                os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
    return data


def _model_of(kind: str, path: Path, st: os.stat_result) -> str:
    if kind != cache_layout.GENERATIONS:
        return "(not recorded)"
    try:
        meta = json.loads(_read_untouched(path, st)).get("meta", {})
        model = meta.get("model", {}) if isinstance(meta, dict) else {}
        name = model.get("name") if isinstance(model, dict) else None
        return str(name) if name else "(unknown)"
    except (OSError, ValueError, AttributeError, RecursionError):
        return "(unreadable)"


def _check_root(root: Path) -> None:
    """A folder that is not a provenai cache is refused before anything is read or removed."""
    if root.exists() and not root.is_dir():
        raise ProvenaiError(f"{root}: not a folder; give the cache folder (--cache DIR)")
    if not root.is_dir():
        return
    ok, foreign = cache_layout.looks_like_cache(root)
    if not ok:
        more = f" and {len(foreign) - 5} more" if len(foreign) > 5 else ""
        holds = f"; it holds {', '.join(foreign[:5])}{more}" if foreign else ""
        raise ProvenaiError(
            f"--cache {root}: not a pytest-provenai cache (no {cache_layout.MARKER} marker"
            f"{holds}); nothing was touched — give the folder --provenai-cache names "
            "(default .provenai-cache)"
        )


def cache_info(root: str | os.PathLike[str]) -> CacheInfo:
    """Count entries and bytes of the cache at ``root``, by kind and model."""
    base = Path(root)
    _check_root(base)
    info = CacheInfo(base)
    if not base.is_dir():
        return info
    for kind, path, st in _walk(base):
        if kind is None:
            info.temp_files += 1
            continue
        info.entries += 1
        info.bytes += st.st_size
        group = info.groups[(kind, _model_of(kind, path, st))]
        group[0] += 1
        group[1] += st.st_size
        used = max(st.st_mtime, st.st_atime)
        info.oldest = used if info.oldest is None else min(info.oldest, used)
        info.newest = used if info.newest is None else max(info.newest, used)
    return info


def _size(n: float) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1024 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GB"  # pragma: no cover


def info_lines(info: CacheInfo, now: float | None = None) -> list[str]:
    now = time.time() if now is None else now
    lines = [f"cache {info.root}: {info.entries} entries, {_size(info.bytes)}"]
    if not info.root.is_dir():
        lines[0] = f"cache {info.root}: no cache folder (nothing cached yet)"
        return lines
    for (kind, model), (n, size) in sorted(info.groups.items()):
        lines.append(f"  {kind:<12} {model:<32} {n:>7} entries  {_size(size):>9}")
    if info.oldest is not None and info.newest is not None:
        lines.append(
            f"  last used: oldest {(now - info.oldest) / DAY:.1f} days ago, newest "
            f"{(now - info.newest) / DAY:.1f} days ago"
        )
    if info.temp_files:
        lines.append(f"  {info.temp_files} temporary file(s) of writes in progress or interrupted")
    return lines


@dataclass(frozen=True)
class Removed:
    entries: int
    bytes: int
    temp_files: int


def _remove(root: Path, keep: Any, now: float) -> Removed:
    entries = size = temps = 0
    for kind, path, st in _walk(root):
        if kind is None:
            if now - st.st_mtime <= STALE_TEMP_SECONDS:
                continue  # a writer is still at it
            try:
                path.unlink()
                temps += 1
            except OSError:
                pass
            continue
        if keep(st):
            continue
        try:
            path.unlink()
        except FileNotFoundError:
            continue  # a concurrent prune took it
        except OSError as exc:
            raise ProvenaiError(f"{path}: cannot be removed ({exc.strerror})") from None
        entries += 1
        size += st.st_size
    return Removed(entries, size, temps)


def prune_cache(
    root: str | os.PathLike[str], older_than_days: float, now: float | None = None
) -> Removed:
    """Remove entries not used in the last ``older_than_days`` days (see module docstring)."""
    if not (older_than_days >= 0):
        raise ProvenaiError(
            f"--older-than: expected a number of days >= 0, got {older_than_days!r}"
        )
    base = Path(root)
    _check_root(base)
    now = time.time() if now is None else now
    if not base.is_dir():
        return Removed(0, 0, 0)
    limit = now - older_than_days * DAY
    return _remove(base, lambda st: max(st.st_mtime, st.st_atime) >= limit, now)


def clear_cache(root: str | os.PathLike[str], now: float | None = None) -> Removed:
    """Remove every entry (folders stay; see module docstring)."""
    base = Path(root)
    _check_root(base)
    if not base.is_dir():
        return Removed(0, 0, 0)
    return _remove(base, lambda st: False, time.time() if now is None else now)


def removed_line(what: str, root: Path, r: Removed) -> str:
    extra = f" and {r.temp_files} stale temporary file(s)" if r.temp_files else ""
    return f"{what} {root}: removed {r.entries} entries ({_size(r.bytes)}){extra}"

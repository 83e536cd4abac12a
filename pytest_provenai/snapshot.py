"""syrupy extension: a case's verdict record as stable JSON under ``golden/``.

Layout (deterministic names, one file per case, like pytest-recording's cassettes)::

    golden/<model-name>/<test module>/<test function>[<case name>].json

Snapshots are kept per model name so switching models compares like with like; the model
identity (name, weights digest, decoding) is inside every record. Floats are rounded to 4
places and keys sorted, so a snapshot changes only when a verdict or a number that matters
changes. Timings never enter a record.

A golden file's name is its test id made safe by :func:`golden_stem` (injective, one path
component). Golden files and the folders above them are regular files and folders: a symlink
is refused (:func:`check_golden_folder`), never read or written through, and a write replaces
the file atomically. Which golden files are unused is decided here, by
:func:`unused_goldens`, not by syrupy's own discovery (README, "Golden snapshots"); the
:class:`GoldenBook` plugin object keeps those books for a run.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
import re
import unicodedata
from collections import defaultdict
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest
from syrupy.data import SnapshotCollections
from syrupy.extensions.base import AbstractSyrupyExtension
from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode

from pytest_provenai._io import atomic_write_text
from pytest_provenai.errors import GoldenError
from pytest_provenai.golden_rules import Tolerances, differences, explain

SNAPSHOT_SCHEMA_VERSION = 2
"""2: records carry informational ``generation`` sections (output digest, near-tie marks) and are
compared by golden_rules (verdicts exact, numbers within tolerance); a version-1 file (compared
byte for byte when it was written) is read and compared under the same rules."""
FLOAT_PLACES = 4
SUFFIX = ".json"
# Characters a portable file name cannot hold, plus the two escape characters themselves.
_ESCAPED = frozenset('/\\?*:|"<>%~')
_NAME_BYTES = 255  # the file name limit of ext4, APFS, NTFS
_DIGEST_HEX = 16


def stable(obj: Any) -> Any:
    """Round floats to FLOAT_PLACES (−0.0 becomes 0.0) and tuples become lists."""
    if isinstance(obj, bool) or obj is None or isinstance(obj, (int, str)):
        return obj
    if isinstance(obj, float):
        r = round(obj, FLOAT_PLACES)
        return 0.0 if r == 0 else r
    if isinstance(obj, dict):
        return {str(k): stable(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return [stable(v) for v in obj]
    raise TypeError(f"a verdict record holds only JSON values, not {type(obj).__name__}")


def render(record: Any) -> str:
    body = {"snapshot_schema_version": SNAPSHOT_SCHEMA_VERSION, "record": stable(record)}
    return json.dumps(body, sort_keys=True, indent=2, ensure_ascii=False) + "\n"


def model_slug(name: str) -> str:
    """Folder name for a model name: 'org/Model-1' -> 'org--Model-1'."""
    slug = re.sub(r"[^A-Za-z0-9._-]+", "-", name.replace("/", "--")).strip("-.")
    return slug or "model"


def golden_stem(name: str) -> str:
    """The golden file name (without ``.json``) of syrupy's snapshot name ``name``, e.g.
    ``test_fid[5a8b…]`` or ``test_fid[hotpotqa-dev60/5a8b…]`` (a case id two sets share).

    Injective and one path component: ``/ \\ ? * : | " < >``, control and other
    non-printing characters, and ``%`` and ``~`` themselves, become ``%XX`` (their UTF-8
    bytes), so distinct names give distinct files and a name never leaves its folder. Every
    other character stays, so a case id (``[A-Za-z0-9._-]``) keeps the name syrupy gave it.
    A name over the file-name limit keeps a prefix plus ``~`` and 16 hex digits of the
    name's sha256 (``~`` appears nowhere else)."""
    stem = "".join(
        "".join(f"%{b:02X}" for b in ch.encode("utf-8", "surrogatepass"))
        if ch in _ESCAPED or unicodedata.category(ch).startswith("C")
        else ch
        for ch in name
    )
    budget = _NAME_BYTES - len(SUFFIX)
    if len(stem.encode("utf-8")) <= budget:
        return stem
    digest = hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()[:_DIGEST_HEX]
    prefix = stem.encode("utf-8")[: budget - 1 - _DIGEST_HEX].decode("utf-8", "ignore")
    return f"{prefix}~{digest}"


def _parsed(text: Any) -> Any:
    """A golden file's (or a rendered record's) JSON, or None when it is not JSON."""
    if not isinstance(text, str):
        return None
    try:
        return json.loads(text)
    except ValueError:
        return None


# -- symlinks ------------------------------------------------------------------------------
def _refuse_symlink(path: Path) -> None:
    if path.is_symlink():
        raise GoldenError(
            f"{path} is a symlink (to {os.readlink(path)}); golden snapshots must be regular "
            "files in regular folders, never read or written through a link: replace it with "
            "a copy of what it points to, or point provenai_golden at the real folder"
        )


def check_golden_path(root: Path, path: Path) -> None:
    """Raise :class:`GoldenError` if ``root`` or anything between it and ``path`` (``path``
    included) is a symlink, or if ``path`` is not inside ``root``."""
    try:
        parts = path.relative_to(root).parts
    except ValueError:
        raise GoldenError(f"{path} is not inside the golden folder {root}") from None
    current = root
    _refuse_symlink(current)
    for part in parts:
        current = current / part
        _refuse_symlink(current)


def check_golden_folder(root: Path, folder: Path) -> None:
    """:func:`check_golden_path` for ``folder`` and every entry in it."""
    check_golden_path(root, folder)
    if folder.is_dir():
        for entry in sorted(folder.iterdir()):
            _refuse_symlink(entry)


# -- unused golden files -------------------------------------------------------------------
def unused_goldens(folder: Path, functions: Iterable[str], known: Collection[str]) -> list[Path]:
    """The golden files in ``folder`` of the test functions ``functions`` (``test_fid``,
    ``TestA.test_b``) whose case name is not in ``known``: their case is in no configured
    fixture set. Files of other tests, of known cases (with any assertion index suffix), or
    with a shortened name (``~``, the case cannot be told) are never unused."""
    owners = set(functions)
    known_stems = {golden_stem(f"{f}[{n}]") for f in owners for n in known}
    unused = []
    for path in sorted(folder.iterdir()) if folder.is_dir() else ():
        stem = path.name[: -len(SUFFIX)]
        if (
            not path.name.endswith(SUFFIX)
            or path.name.startswith(".")
            or path.is_symlink()
            or not path.is_file()
            or "~" in stem
            or stem.split("[", 1)[0] not in owners
            or "[" not in stem
        ):
            continue
        prefixes = (stem[: i + 1] for i, ch in enumerate(stem) if ch == "]")
        if not any(p in known_stems for p in prefixes):
            unused.append(path)
    return unused


@dataclass
class Settled:
    """What the golden bookkeeping found at the end of a run: the summary lines, whether the
    run fails because of them, and the unused golden files (deleted or not)."""

    lines: list[str] = field(default_factory=list)
    fail: bool = False
    unused: list[Path] = field(default_factory=list)


def settle_unused(
    functions: Mapping[str, Iterable[str]],
    known: Collection[str],
    failed_sets: Sequence[str],
    *,
    update: bool,
    cleanup: bool,
    warn: bool,
    shown: Callable[[Path], str],
) -> Settled:
    """Golden bookkeeping at the end of a run, as syrupy does for its unused snapshots:
    ``functions`` maps each golden folder the run used to its test functions that ran.
    While a set in ``failed_sets`` failed to load nothing is judged. Unused files
    (:func:`unused_goldens`) are deleted under ``update`` with ``cleanup``, else reported;
    the run fails on them without ``update`` or ``warn``."""
    if failed_sets:
        return Settled(
            [
                f"unused golden files not checked: fixture set(s) {', '.join(failed_sets)} "
                "failed to load, so no golden file was reported or deleted as unused"
            ]
        )
    unused = [
        path
        for folder, names in sorted(functions.items())
        for path in unused_goldens(Path(folder), names, known)
    ]
    if not unused:
        return Settled()
    n, files = len(unused), "file" if len(unused) == 1 else "files"
    if update and cleanup:
        for path in unused:
            path.unlink()
        lines = [f"{n} unused golden {files} deleted (case in no configured fixture set)"]
        return Settled(lines + [f"Deleted {shown(p)}" for p in unused], False, unused)
    lines = [f"{n} golden {files} unused: the case is in no configured fixture set"]
    lines += [f"Unused {shown(p)}" for p in unused]
    if update:
        return Settled(lines, False, unused)
    lines.append("Re-run pytest with --snapshot-update to delete unused golden files.")
    return Settled(lines, not warn, unused)


# -- the extension -------------------------------------------------------------------------
class VerdictExtension(SingleFileSnapshotExtension):
    """Base class; :func:`extension_for` binds the golden folder and model name."""

    _write_mode = WriteMode.TEXT
    file_extension = SUFFIX[1:]
    golden_root: str = "golden"
    model_folder: str = "model"
    tolerances: Tolerances = ()  # the run's --provenai-tolerance overrides

    def serialize(self, data: Any, **kwargs: Any) -> str:
        return render(data)

    def matches(self, *, serialized_data: Any, snapshot_data: Any) -> bool:
        """Verdicts exactly, measured numbers within their tolerance (golden_rules.py): a
        record inside every tolerance matches, so ``--snapshot-update`` leaves its golden
        file as it is (no churn from noise)."""
        if serialized_data == snapshot_data:
            return True
        golden, now = _parsed(snapshot_data), _parsed(serialized_data)
        if golden is None or now is None:
            return False
        return next(differences(golden, now, tolerances=self.tolerances), None) is None

    def diff_lines(self, serialized_data: Any, snapshot_data: Any) -> Iterator[str]:
        """Each field outside its tolerance (both values, the tolerance) and each changed
        exact field; a golden file that is not JSON gets syrupy's line diff."""
        golden, now = _parsed(snapshot_data), _parsed(serialized_data)
        if golden is None or now is None:
            yield from super().diff_lines(serialized_data, snapshot_data)
            return
        yield from explain(golden, now, tolerances=self.tolerances)

    @classmethod
    def dirname(cls, *, test_location: Any) -> str:
        return str(Path(cls.golden_root) / cls.model_folder / test_location.basename)

    @classmethod
    def get_snapshot_name(cls, *, test_location: Any, index: Any = 0) -> str:
        return golden_stem(
            AbstractSyrupyExtension.get_snapshot_name(test_location=test_location, index=index)
        )

    @classmethod
    def matches_test_location(cls, *, test_location: Any, snapshot_location: str) -> bool:
        location = Path(snapshot_location)
        return location.parent == Path(cls.dirname(test_location=test_location)) and (
            location.name.startswith(cls.get_snapshot_name(test_location=test_location))
        )

    def discover_snapshots(
        self, *, test_location: Any, ignore_extensions: list[str] | None = None
    ) -> SnapshotCollections:
        """Nothing: syrupy never counts a golden file as unused (nor deletes one). Which are
        unused depends on the configured fixture sets, which only the plugin knows; it
        reports them with :func:`unused_goldens`."""
        return SnapshotCollections()

    def read_snapshot_data_from_location(
        self, *, snapshot_location: str, snapshot_name: str, session_id: str
    ) -> Any:
        check_golden_path(Path(self.golden_root), Path(snapshot_location))
        return super().read_snapshot_data_from_location(
            snapshot_location=snapshot_location,
            snapshot_name=snapshot_name,
            session_id=session_id,
        )

    @classmethod
    def write_snapshot_collection(
        cls, *, snapshot_collection: Any, name_order: dict[str, int] | None = None
    ) -> None:
        """Write the one snapshot atomically (temp file + rename, never through a symlink):
        a failure while encoding or writing leaves the old file as it was."""
        location = Path(snapshot_collection.location)
        data = next(iter(snapshot_collection)).data
        if not isinstance(data, str):
            raise TypeError(f"a golden snapshot is text, got {type(data).__name__}")
        check_golden_path(Path(cls.golden_root), location)
        atomic_write_text(location, data)


@functools.cache
def extension_for(
    golden_root: Path, model_name: str, variant: str | None = None, tolerances: Tolerances = ()
) -> type[VerdictExtension]:
    """A VerdictExtension subclass writing under ``golden_root/<model slug>/``, or
    ``golden_root/<model slug>@<variant>/`` when a ``variant`` is given (e.g. ``index-k10``
    in retrieval index mode, so those verdicts never overwrite the distractor ones), comparing
    under the run's ``tolerances``. One class per folder, so syrupy treats all of a folder's
    snapshots alike."""
    folder = model_slug(model_name) + (f"@{model_slug(variant)}" if variant else "")
    return type(
        "VerdictExtension_" + re.sub(r"\W", "_", folder),
        (VerdictExtension,),
        {"golden_root": str(golden_root), "model_folder": folder, "tolerances": tolerances},
    )


# -- golden bookkeeping for a run ---------------------------------------------------------------
GOLDEN_WORKEROUTPUT_KEY = "provenai_golden"


class GoldenBook:
    """Golden bookkeeping (README, "Golden snapshots"), a plugin of its own like syrupy's
    DeferXDist. The snapshot fixtures (:meth:`snapshot`) tell it each golden folder and test
    function a run uses (refusing a folder that holds a symlink); xdist workers send theirs
    through ``workeroutput``. At the end the controller reports the golden files of those
    tests whose case is in no configured fixture set (exit status 1) or, under
    ``--snapshot-update``, deletes them. syrupy's own unused-snapshot discovery never sees
    golden files (``VerdictExtension.discover_snapshots``). ``scope()`` gives the name of
    every configured case and the sets that failed to load (the session's
    ``golden_scope``)."""

    def __init__(
        self,
        config: pytest.Config,
        golden_root: Path,
        scope: Callable[[], tuple[frozenset[str], tuple[str, ...]]],
        tolerances: Tolerances = (),
    ) -> None:
        self.config = config
        self.golden_root = golden_root
        self.tolerances = tolerances
        self.scope = scope
        self.functions: dict[str, set[str]] = defaultdict(set)  # golden folder -> tests
        self.refused: dict[str, str | None] = {}  # golden folder -> symlink error, checked once
        self.settled: Settled | None = None

    def snapshot(self, snapshot: Any, folder: str, variant: str | None = None) -> Any:
        """syrupy's ``snapshot`` bound to the verdict extension writing under
        ``golden/<folder>/`` (see :func:`extension_for`), its folder and test function
        booked."""
        extension = extension_for(self.golden_root, folder, variant, self.tolerances)
        assertion = snapshot.use_extension(extension)
        location = assertion.test_location
        self.use(
            Path(extension.dirname(test_location=location)), location.snapshot_name.split("[")[0]
        )
        return assertion

    def use(self, folder: Path, function: str) -> None:
        key = str(folder)
        if key not in self.refused:
            try:
                check_golden_folder(self.golden_root, folder)
                self.refused[key] = None
            except GoldenError as exc:
                self.refused[key] = str(exc)
        if self.refused[key] is not None:
            raise GoldenError(self.refused[key])
        self.functions[key].add(function)

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        payload = getattr(node, "workeroutput", {}).get(GOLDEN_WORKEROUTPUT_KEY)
        for folder, functions in json.loads(payload or "{}").items():
            self.functions[folder].update(functions)

    def settle(self, session: pytest.Session) -> Settled:
        """The controller's golden bookkeeping, once (the plugin asks first under
        ``--provenai-shard``, so the shard's results can name the unused files)."""
        if self.settled is None:
            config = self.config
            self.settled = Settled()
            if self.functions and not config.getoption("disable_unused_snapshots", False):
                known, failed = self.scope()
                self.settled = settle_unused(
                    self.functions,
                    known,
                    failed,
                    update=bool(config.getoption("update_snapshots", False)),
                    cleanup=not config.getoption("no_cleanup", False),
                    warn=bool(config.getoption("warn_unused_snapshots", False)),
                    shown=lambda p: os.path.relpath(p, config.rootpath),
                )
        return self.settled

    def unused_files(self, session: pytest.Session) -> list[str]:
        """The unused golden files (relative to the rootdir), settled now if not yet."""
        return [os.path.relpath(p, self.config.rootpath) for p in self.settle(session).unused]

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if hasattr(self.config, "workerinput"):
            payload = {folder: sorted(fns) for folder, fns in self.functions.items()}
            self.config.workeroutput[GOLDEN_WORKEROUTPUT_KEY] = json.dumps(payload)  # type: ignore[attr-defined]
            return
        if self.settle(session).fail and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    @pytest.hookimpl(trylast=True)  # after syrupy's snapshot report
    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.settled is not None and self.settled.lines:
            terminalreporter.write_sep("-", "provenai golden snapshots")
            for line in self.settled.lines:
                terminalreporter.write_line(line)

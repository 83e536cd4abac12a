"""syrupy extension: a case's verdict record as stable JSON under ``golden/``.

Layout (deterministic names, one file per case, like pytest-recording's cassettes)::

    golden/<model-name>/<test module>/<test function>[<case id>].json

Snapshots are kept per model name so switching models compares like with like; the model
identity (name, weights digest, decoding) is inside every record. Floats are rounded to 4
places and keys sorted, so a snapshot changes only when a verdict or a number that matters
changes. Timings never enter a record.
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from syrupy.extensions.single_file import SingleFileSnapshotExtension, WriteMode

from pytest_provenai._io import atomic_write_text

SNAPSHOT_SCHEMA_VERSION = 1
FLOAT_PLACES = 4


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


class VerdictExtension(SingleFileSnapshotExtension):
    """Base class; :func:`extension_for` binds the golden folder and model name."""

    _write_mode = WriteMode.TEXT
    file_extension = "json"
    golden_root: str = "golden"
    model_folder: str = "model"

    def serialize(self, data: Any, **kwargs: Any) -> str:
        return render(data)

    @classmethod
    def dirname(cls, *, test_location: Any) -> str:
        return str(Path(cls.golden_root) / cls.model_folder / test_location.basename)

    @classmethod
    def write_snapshot_collection(
        cls, *, snapshot_collection: Any, name_order: dict[str, int] | None = None
    ) -> None:
        """Write the one snapshot atomically (temp file + rename): a failure while encoding
        or writing leaves the old file as it was (syrupy opens the file for writing first)."""
        data = next(iter(snapshot_collection)).data
        if not isinstance(data, str):
            raise TypeError(f"a golden snapshot is text, got {type(data).__name__}")
        atomic_write_text(snapshot_collection.location, data)


def extension_for(
    golden_root: Path, model_name: str, variant: str | None = None
) -> type[VerdictExtension]:
    """A VerdictExtension subclass writing under ``golden_root/<model slug>/``, or
    ``golden_root/<model slug>@<variant>/`` when a ``variant`` is given (e.g. ``index-k10``
    in retrieval index mode, so those verdicts never overwrite the distractor ones)."""
    folder = model_slug(model_name) + (f"@{model_slug(variant)}" if variant else "")
    return type(
        "VerdictExtension_" + re.sub(r"\W", "_", folder),
        (VerdictExtension,),
        {"golden_root": str(golden_root), "model_folder": folder},
    )

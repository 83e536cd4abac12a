"""Golden snapshot bookkeeping, end to end through pytester with the scripted generator.

The rule under test (README, "Golden snapshots"): a run neither fails on nor deletes the golden
files of cases it did not select (sampled out, a set not given, ``-k``, a set that failed to
load, a test that failed before asserting); a golden file of a test that ran whose case is in
no configured fixture set is unused: reported with exit status 1, removed by
``--snapshot-update``. It holds with the test module in the rootdir and in the shipped layout
(``suites/`` beside ``golden/``), with and without path arguments and xdist. Golden files are
regular files inside their folder, named injectively, and written atomically.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from project import GOOD_SCRIPT, RECORDS, TEST_FILE, run

from pytest_provenai.frozen.freeze import freeze_hotpotqa
from pytest_provenai.snapshot import VerdictExtension

HERE = Path(__file__).parent
LAYOUTS = ["root", "shipped"]
MINI = ["case-alpha", "case-beta", "case-gamma"]
OTHER = ["case-delta", "case-epsilon"]


def renamed(ids: list[str]) -> list[dict]:
    """Copies of the first len(ids) test records under new case ids (same questions)."""
    return [dict(rec, _id=new) for rec, new in zip(RECORDS[: len(ids)], ids, strict=True)]


def make_project(
    pytester: pytest.Pytester,
    layout: str,
    sets: dict[str, list[dict]] | None = None,
    test_file: str = TEST_FILE.format(gates=""),
) -> Path:
    """A project with fixture sets ``sets`` (name -> HotpotQA records; default: mini = the
    three test records) named in the ini, the scripted generator, and the test module in the
    rootdir (``root``) or in ``suites/`` with ``golden/`` beside it (``shipped``)."""
    root = pytester.path
    sets = sets if sets is not None else {"mini": RECORDS}
    for name, records in sets.items():
        data = root / f"{name}_dev.json"
        data.write_text(json.dumps(records), encoding="utf-8")
        freeze_hotpotqa(data, root / "fixtures" / name, seed=42)
    (root / "script.json").write_text(json.dumps(GOOD_SCRIPT), encoding="utf-8")
    (root / "scripted.py").write_text((HERE / "scripted.py").read_text(encoding="utf-8"))
    testpaths = "testpaths = suites" if layout == "shipped" else ""
    pytester.makeini(
        f"""
        [pytest]
        {testpaths}
        provenai_fixtures = {" ".join(f"fixtures/{n}" for n in sets)}
        provenai_backend = scripted:factory
        provenai_model = script.json
        provenai_results = results.json
        """
    )
    module = root / ("suites" if layout == "shipped" else ".") / "test_audit.py"
    module.parent.mkdir(exist_ok=True)
    module.write_text(test_file, encoding="utf-8")
    return root


def golden_dir(root: Path) -> Path:
    return root / "golden" / "scripted-good" / "test_audit"


def goldens(root: Path) -> dict[str, bytes]:
    folder = golden_dir(root)
    return {p.name: p.read_bytes() for p in sorted(folder.iterdir())} if folder.is_dir() else {}


def assert_nothing_unused(result: pytest.RunResult) -> None:
    """Neither syrupy nor the plugin called anything unused."""
    assert not re.search(r"snapshots? unused|golden files? unused", result.stdout.str())


def names(ids: list[str]) -> list[str]:
    return sorted(f"test_fid[{i}].json" for i in ids)


def accept(pytester: pytest.Pytester, root: Path, ids: list[str]) -> dict[str, bytes]:
    """Write the goldens of a full run; they must be exactly those of ``ids``."""
    run(pytester, "--snapshot-update").assert_outcomes(passed=len(ids))
    before = goldens(root)
    assert sorted(before) == names(ids)
    return before


# -- 6. a write that fails leaves the golden file as it was ---------------------------------
def test_failed_golden_write_never_truncates_the_file(pytester: pytest.Pytester) -> None:
    root = make_project(pytester, "root")
    before = accept(pytester, root, MINI)
    (root / "test_audit.py").write_text(
        """
from pytest_provenai.audit.fidelity import fidelity_record

def test_fid(provenai_case, provenai_subject, provenai_record, provenai_snapshot):
    record = fidelity_record(provenai_case, provenai_subject.answer(provenai_case))
    if provenai_case.id == "case-beta":
        record["answer"]["prediction"] = "lone \\ud800 surrogate"
    assert record == provenai_snapshot
""",
        encoding="utf-8",
    )
    result = run(pytester, "--snapshot-update")
    result.assert_outcomes(passed=2, failed=1)
    assert goldens(root) == before
    assert not [p for p in golden_dir(root).iterdir() if p.name.startswith(".")]


def test_unit_failed_write_keeps_the_old_bytes(tmp_path: Path) -> None:
    from syrupy.data import Snapshot, SnapshotCollection

    ext = type("Ext", (VerdictExtension,), {"golden_root": str(tmp_path)})
    target = tmp_path / "model" / "test_audit" / "test_fid[x].json"
    target.parent.mkdir(parents=True)
    target.write_bytes(b"old\n")
    collection = SnapshotCollection(location=str(target))
    collection.add(Snapshot(name="test_fid[x]", data="new \ud800\n"))
    with pytest.raises(UnicodeEncodeError):
        ext.write_snapshot_collection(snapshot_collection=collection)
    assert target.read_bytes() == b"old\n"
    assert os.listdir(target.parent) == [target.name]

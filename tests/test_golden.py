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
from types import SimpleNamespace
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st
from project import GOOD_SCRIPT, RECORDS, TEST_FILE, run

from pytest_provenai.frozen.freeze import freeze_hotpotqa
from pytest_provenai.snapshot import VerdictExtension

HERE = Path(__file__).parent
LAYOUTS = ["root", "shipped"]
MINI = ["case-alpha", "case-beta", "case-gamma"]
OTHER = ["case-delta", "case-epsilon"]


def renamed(ids: list[str]) -> list[dict[str, Any]]:
    """Copies of the first len(ids) test records under new case ids (same questions)."""
    return [dict(rec, _id=new) for rec, new in zip(RECORDS[: len(ids)], ids, strict=True)]


def make_project(
    pytester: pytest.Pytester,
    layout: str,
    sets: dict[str, list[dict[str, Any]]] | None = None,
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


# -- 1. selection: a run leaves the goldens of cases it did not select alone ----------------
@pytest.mark.parametrize("layout", LAYOUTS)
def test_sampled_run_neither_fails_on_nor_deletes_unselected_goldens(
    pytester: pytest.Pytester, layout: str
) -> None:
    root = make_project(pytester, layout)
    before = accept(pytester, root, MINI)

    result = run(pytester, "--provenai-sample", "1")
    result.assert_outcomes(passed=1)
    assert result.ret == pytest.ExitCode.OK
    assert_nothing_unused(result)

    run(pytester, "--provenai-sample", "1", "--snapshot-update").assert_outcomes(passed=1)
    assert goldens(root) == before


@pytest.mark.parametrize("layout", LAYOUTS)
def test_run_over_fewer_sets_keeps_the_other_sets_goldens(
    pytester: pytest.Pytester, layout: str
) -> None:
    root = make_project(pytester, layout, {"mini": RECORDS, "other": renamed(OTHER)})
    before = accept(pytester, root, MINI + OTHER)

    result = run(pytester, "--provenai-fixtures", "fixtures/mini")
    result.assert_outcomes(passed=3)
    assert result.ret == pytest.ExitCode.OK
    assert_nothing_unused(result)

    run(pytester, "--provenai-fixtures", "fixtures/mini", "--snapshot-update").assert_outcomes(
        passed=3
    )
    assert goldens(root) == before


def test_keyword_run_keeps_deselected_goldens(pytester: pytest.Pytester) -> None:
    root = make_project(pytester, "shipped")
    before = accept(pytester, root, MINI)
    run(pytester, "-k", "case-alpha", "--snapshot-update").assert_outcomes(passed=1)
    assert goldens(root) == before


def test_case_that_fails_before_asserting_keeps_its_golden(pytester: pytest.Pytester) -> None:
    root = make_project(pytester, "root")
    before = accept(pytester, root, MINI)
    (root / "test_audit.py").write_text(
        """
from pytest_provenai.audit.fidelity import fidelity_record

def test_fid(provenai_case, provenai_subject, provenai_record, provenai_snapshot):
    if provenai_case.id == "case-beta":
        raise RuntimeError("backend down")
    trace = provenai_subject.answer(provenai_case)
    assert provenai_record(fidelity_record(provenai_case, trace)) == provenai_snapshot
""",
        encoding="utf-8",
    )
    result = run(pytester, "--snapshot-update")
    result.assert_outcomes(passed=2, failed=1)
    assert goldens(root) == before


# -- 1. unused: a golden whose case is in no configured set ---------------------------------
def invocation(layout: str, how: str) -> list[str]:
    module = "suites/test_audit.py" if layout == "shipped" else "test_audit.py"
    return {
        "no-args": [],
        "module-path": [module],
        "node-id": [f"{module}::test_fid"],
        "keyword": ["-k", "case-alpha"],
        "xdist": ["-n", "2"],
    }[how]


HOWS = ["no-args", "module-path", "node-id", "keyword"]


# xdist once, in the shipped layout: each -n 2 run costs seconds
@pytest.mark.parametrize(
    ("layout", "how"), [(lay, how) for lay in LAYOUTS for how in HOWS] + [("shipped", "xdist")]
)
def test_golden_of_a_case_in_no_configured_set_is_unused(
    pytester: pytest.Pytester, layout: str, how: str
) -> None:
    root = make_project(pytester, layout)
    before = accept(pytester, root, MINI)
    orphan = golden_dir(root) / "test_fid[bogus-case].json"
    orphan.write_bytes(before["test_fid[case-beta].json"])
    args = invocation(layout, how)

    result = run(pytester, *args)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        [
            "*1 golden file unused*",
            "*golden/scripted-good/test_audit/test_fid?bogus-case?.json*",
            "*--snapshot-update*",
        ]
    )

    result = run(pytester, *args, "--snapshot-update")
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(
        ["*Deleted*golden/scripted-good/test_audit/test_fid?bogus-case?.json*"]
    )
    assert goldens(root) == before


def test_warn_unused_and_no_cleanup_are_honoured(pytester: pytest.Pytester) -> None:
    root = make_project(pytester, "shipped")
    before = accept(pytester, root, MINI)
    orphan = golden_dir(root) / "test_fid[bogus-case].json"
    orphan.write_bytes(b"{}\n")
    result = run(pytester, "--snapshot-warn-unused")
    assert result.ret == pytest.ExitCode.OK
    result.stdout.fnmatch_lines(["*1 golden file unused*"])
    run(pytester, "--snapshot-update", "--snapshot-no-cleanup")
    assert orphan.read_bytes() == b"{}\n"
    assert goldens(root) == {**before, orphan.name: b"{}\n"}


# -- 2. a set that failed to load: nothing under golden/ changes ----------------------------
@pytest.mark.parametrize("layout", LAYOUTS)
def test_goldens_of_a_set_that_failed_to_load_are_untouched(
    pytester: pytest.Pytester, layout: str
) -> None:
    root = make_project(pytester, layout, {"mini": RECORDS, "other": renamed(OTHER)})
    before = accept(pytester, root, MINI + OTHER)
    orphan = golden_dir(root) / "test_fid[bogus-case].json"
    orphan.write_bytes(b"{}\n")
    case_file = root / "fixtures" / "other" / "cases" / "case-delta.json"
    doc = json.loads(case_file.read_text(encoding="utf-8"))
    doc["sources"][0]["sha256"] = "0" * 64
    case_file.write_text(json.dumps(doc), encoding="utf-8")

    result = run(pytester, "--snapshot-update")
    result.assert_outcomes(passed=3, errors=1)
    result.stdout.fnmatch_lines(["*fixture-error:other*", "*golden files*not checked*other*"])
    assert goldens(root) == {**before, orphan.name: b"{}\n"}


# -- 3. symlinks under golden/ are refused ---------------------------------------------------
@pytest.mark.parametrize("what", ["file", "module-folder", "golden-root"])
def test_symlink_under_golden_is_refused(pytester: pytest.Pytester, what: str) -> None:
    root = make_project(pytester, "root")
    accept(pytester, root, MINI)
    outside = root / "outside"
    outside.mkdir()
    target = outside / "precious.txt"
    target.write_text("keep me\n", encoding="utf-8")
    if what == "file":
        link = golden_dir(root) / "test_fid[case-beta].json"
        link.unlink()
        link.symlink_to(target)
    elif what == "module-folder":
        link = golden_dir(root)
        for p in link.iterdir():
            p.rename(outside / p.name)
        link.rmdir()
        link.symlink_to(outside, target_is_directory=True)
    else:
        link = root / "golden"
        link.rename(outside / "golden")
        link.symlink_to(outside / "golden", target_is_directory=True)
    snapshot = {
        p.relative_to(outside).as_posix(): p.read_bytes() for p in outside.rglob("*") if p.is_file()
    }
    changed = json.loads(json.dumps(GOOD_SCRIPT))
    changed["script"]["Beta and Delta"] = "Answer: no [R2]"
    (root / "script.json").write_text(json.dumps(changed), encoding="utf-8")

    result = run(pytester, "--snapshot-update", "--provenai-no-cache")
    assert result.ret != pytest.ExitCode.OK
    shown = link.relative_to(root).as_posix()
    result.stdout.fnmatch_lines([f"*{re.sub(r'[][]', '?', shown)} is a symlink*regular*"])
    assert target.read_text(encoding="utf-8") == "keep me\n"
    assert {
        p.relative_to(outside).as_posix(): p.read_bytes() for p in outside.rglob("*") if p.is_file()
    } == snapshot


# -- 4. injective golden names, always inside their folder ----------------------------------
def test_same_case_id_in_two_sets_gets_distinct_goldens(pytester: pytest.Pytester) -> None:
    # set s holds x; set t holds x and sx: the test ids s/x and t/x must not share sx's file
    sets = {"s": renamed(["x"]), "t": renamed(["x", "sx"])}
    root = make_project(pytester, "root", sets)
    run(pytester, "--snapshot-update").assert_outcomes(passed=3)
    assert sorted(goldens(root)) == [
        "test_fid[s%2Fx].json",
        "test_fid[sx].json",
        "test_fid[t%2Fx].json",
    ]
    result = run(pytester)
    result.assert_outcomes(passed=3)
    assert result.ret == pytest.ExitCode.OK

    # a case's name does not depend on which cases a sample draws
    full = set(collected_ids(run(pytester, "--collect-only", "-q")))
    assert full == {"s/x", "t/x", "sx"}
    for seed in range(2):
        sampled = collected_ids(
            run(
                pytester,
                "--collect-only",
                "-q",
                "--provenai-sample",
                "1",
                "--provenai-seed",
                str(seed),
            )
        )
        assert len(sampled) == 1 and set(sampled) <= full


def collected_ids(result: pytest.RunResult) -> list[str]:
    return re.findall(r"test_fid\[(.+?)\]$", result.stdout.str(), flags=re.M)


def test_sets_sharing_a_name_and_a_case_id_are_refused(pytester: pytest.Pytester) -> None:
    root = make_project(pytester, "root", {"mini": RECORDS})
    other = root / "elsewhere" / "mini"
    data = root / "mini_dev.json"
    freeze_hotpotqa(data, other, seed=42)
    result = run(
        pytester, "--provenai-fixtures", "fixtures/mini", "elsewhere/mini", "--snapshot-update"
    )
    result.assert_outcomes(passed=3, errors=1)
    result.stdout.fnmatch_lines(["*elsewhere/mini*also*fixtures/mini*rename*"])
    assert sorted(goldens(root)) == names(MINI)


def stem(name: str) -> str:
    return VerdictExtension.get_snapshot_name(test_location=SimpleNamespace(snapshot_name=name))


def test_golden_names_keep_plain_ids_and_escape_the_rest() -> None:
    assert stem("test_fid[5a8b57f25542995d1e6f1371]") == "test_fid[5a8b57f25542995d1e6f1371]"
    assert stem("TestA.test_b[case-x.1_2]") == "TestA.test_b[case-x.1_2]"
    assert stem("test_fid[s/x]") == "test_fid[s%2Fx]"
    assert stem("test_fid[sx]") == "test_fid[sx]"
    assert stem("test_fid[../../etc]") == "test_fid[..%2F..%2Fetc]"
    long = stem("test_fid[" + "é" * 300 + "]")
    assert len(long.encode("utf-8")) + len(".json") <= 255


# names full of the characters a file name cannot hold, and long ones (the shortened form)
NAMES = st.one_of(
    st.text(alphabet=st.sampled_from('ab/\\%~:*?"<>|\x00\n\t[]. é\u200b'), max_size=12),
    st.text(max_size=300),
    st.text(alphabet="aé/", min_size=200, max_size=300),
)


@given(NAMES, NAMES)
def test_golden_names_are_injective_and_stay_in_their_folder(a: str, b: str) -> None:
    folder = Path("golden") / "m" / "test_audit"
    sa, sb = stem(f"test_fid[{a}]"), stem(f"test_fid[{b}]")
    for s in (sa, sb):
        assert (folder / f"{s}.json").parent == folder
        assert not {"/", "\\", "\0"} & set(s)
        assert len(s.encode("utf-8")) + len(".json") <= 255
    assert (sa == sb) == (a == b)


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

    ext: Any = type("Ext", (VerdictExtension,), {"golden_root": str(tmp_path)})
    target = tmp_path / "model" / "test_audit" / "test_fid[x].json"
    target.parent.mkdir(parents=True)
    target.write_bytes(b"old\n")
    collection = SnapshotCollection(location=str(target))
    collection.add(Snapshot(name="test_fid[x]", data="new \ud800\n"))
    with pytest.raises(UnicodeEncodeError):
        ext.write_snapshot_collection(snapshot_collection=collection)
    assert target.read_bytes() == b"old\n"
    assert os.listdir(target.parent) == [target.name]

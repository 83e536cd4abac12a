"""Plugin input handling through pytester: fixture files the JSON parser cannot hold, and
repeated ``--provenai-fixtures``. No model is needed: the test file records the case only."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from pytest_provenai._io import sha256_bytes
from pytest_provenai.frozen.freeze import freeze_hotpotqa

RECORDS = [
    {
        "_id": f"case-{i}",
        "question": f"What is {i}?",
        "answer": str(i),
        "type": "bridge",
        "level": "easy",
        "supporting_facts": [[f"Doc {i}", 0]],
        "context": [[f"Doc {i}", [f"{i} is {i}.", " More."]], ["Other", ["Other.", " Text."]]],
    }
    for i in range(3)
]

TEST_FILE = """
def test_case(provenai_case, provenai_record):
    provenai_record({"case_id": provenai_case.id, "set": provenai_case.fixture_set})
"""


def freeze_set(root: Path, name: str) -> Path:
    data = root / "hotpot_dev.json"
    if not data.exists():
        data.write_text(json.dumps(RECORDS), encoding="utf-8")
    folder = root / "fixtures" / name
    freeze_hotpotqa(data, folder, seed=42)
    return folder


def project(pytester: pytest.Pytester) -> Path:
    pytester.makeini(
        """
        [pytest]
        provenai_results = results.json
        """
    )
    pytester.makepyfile(test_inputs=TEST_FILE)
    return pytester.path


def run(pytester: pytest.Pytester, *args: str) -> pytest.RunResult:
    return pytester.runpytest_subprocess("-p", "no:cacheprovider", "-p", "no:xdist", *args)


def results(root: Path) -> dict:
    return json.loads((root / "results.json").read_text(encoding="utf-8"))


def break_case(folder: Path, old: bytes, new: bytes) -> None:
    """Edit case-1's bytes and re-pin its digest, so only the edit is wrong."""
    case = folder / "cases" / "case-1.json"
    data = case.read_bytes()
    assert old in data
    data = data.replace(old, new)
    case.write_bytes(data)
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    manifest["files"]["cases/case-1.json"] = sha256_bytes(data)
    (folder / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")


def test_json_the_parser_cannot_hold_is_a_fixture_error_and_other_sets_run(
    pytester: pytest.Pytester,
) -> None:
    root = project(pytester)
    freeze_set(root, "good")
    deep = freeze_set(root, "deep")
    break_case(deep, b'"level": "easy"', b'"level": ' + b"[" * 100_000 + b"]" * 100_000)
    bigint = freeze_set(root, "bigint")
    manifest = bigint / "manifest.json"
    manifest.write_bytes(manifest.read_bytes().replace(b'"seed": 42', b'"seed": ' + b"9" * 5000))
    surrogate = freeze_set(root, "surrogate")
    break_case(surrogate, b"1 is 1.", b"1 is \\ud800.")
    sets = [f"fixtures/{name}" for name in ("deep", "good", "bigint", "surrogate")]
    result = run(pytester, "--provenai-fixtures", *sets, "-rE")
    result.assert_outcomes(passed=3, errors=3)
    result.stdout.fnmatch_lines_random(
        [
            "*test_case?fixture-error:deep?*",
            "*deep*case-1.json: expected JSON nested at most 64 levels deep*",
            "*test_case?fixture-error:bigint?*",
            "*bigint*manifest.json#/seed: expected an integer of at most 640 digits*",
            "*test_case?fixture-error:surrogate?*",
            "*surrogate*case-1.json#/sources/0/sentences/0: expected Unicode text*U+D800*",
        ]
    )
    assert "Traceback" not in result.stdout.str() + result.stderr.str()
    data = results(root)
    assert [r["case_id"] for r in data["records"]["test_inputs.py::test_case"]] == [
        "case-0",
        "case-1",
        "case-2",
    ]
    assert len(data["fixture_errors"]) == 3


def test_repeated_fixtures_option_adds_up(pytester: pytest.Pytester) -> None:
    root = project(pytester)
    for name in ("one", "two", "three"):
        freeze_set(root, name)
    result = run(
        pytester,
        "--provenai-fixtures",
        "fixtures/one",
        "--provenai-fixtures",
        "fixtures/two",
        "fixtures/three",
        "-v",
    )
    result.assert_outcomes(passed=9)
    records = results(root)["records"]["test_inputs.py::test_case"]
    assert sorted({r["set"] for r in records}) == ["one", "three", "two"]

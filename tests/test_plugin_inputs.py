"""Plugin input handling through pytester: fixture files the JSON parser cannot hold, and
repeated ``--provenai-fixtures``. No model is needed: the test file records the case only."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from project import copy_fixture_set, results

from pytest_provenai._io import sha256_bytes

SHIPPED = "hotpotqa-dev-first1"
CASE = "cases/5a8b57f25542995d1e6f1371.json"

TEST_FILE = """
def test_case(provenai_case, provenai_record):
    provenai_record({"case_id": provenai_case.id, "set": provenai_case.fixture_set})
"""


def copy_set(root: Path, name: str) -> Path:
    """A copy of the shipped one-case set (the Scott Derrickson question) named ``name``."""
    return copy_fixture_set(root, SHIPPED, name)


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


def break_case(folder: Path, old: bytes, new: bytes) -> None:
    """Edit the case file's bytes and re-pin its digest, so only the edit is wrong."""
    case = folder / CASE
    data = case.read_bytes()
    assert old in data
    data = data.replace(old, new)
    case.write_bytes(data)
    manifest = json.loads((folder / "manifest.json").read_text(encoding="utf-8"))
    manifest["files"][CASE] = sha256_bytes(data)
    (folder / "manifest.json").write_text(json.dumps(manifest), encoding="utf-8")


def test_json_the_parser_cannot_hold_is_a_fixture_error_and_other_sets_run(
    pytester: pytest.Pytester,
) -> None:
    root = project(pytester)
    copy_set(root, "good")
    deep = copy_set(root, "deep")
    break_case(deep, b'"level": "hard"', b'"level": ' + b"[" * 100_000 + b"]" * 100_000)
    bigint = copy_set(root, "bigint")
    manifest = bigint / "manifest.json"
    manifest.write_bytes(manifest.read_bytes().replace(b'"seed": 42', b'"seed": ' + b"9" * 5000))
    surrogate = copy_set(root, "surrogate")
    break_case(surrogate, b"Ed Wood is a 1994", b"Ed Wood is a\\ud800 1994")
    sets = [f"fixtures/{name}" for name in ("deep", "good", "bigint", "surrogate")]
    result = run(pytester, "--provenai-fixtures", *sets, "-rE")
    result.assert_outcomes(passed=1, errors=3)
    result.stdout.fnmatch_lines_random(
        [
            "*test_case?fixture-error:deep?*",
            "*deep*5a8b57f25542995d1e6f1371.json: expected JSON nested at most 64 levels deep*",
            "*test_case?fixture-error:bigint?*",
            "*bigint*manifest.json#/seed: expected an integer of at most 640 digits*",
            "*test_case?fixture-error:surrogate?*",
            "*surrogate*5a8b*.json#/sources/0/sentences/0: expected Unicode text*U+D800 at*12*",
        ]
    )
    assert "Traceback" not in result.stdout.str() + result.stderr.str()
    data = results(root)
    assert data["records"]["test_inputs.py::test_case"] == [
        {"case_id": "5a8b57f25542995d1e6f1371", "set": "good"}
    ]
    assert len(data["fixture_errors"]) == 3


def test_repeated_fixtures_option_adds_up(pytester: pytest.Pytester) -> None:
    root = project(pytester)
    for name in ("one", "two", "three"):
        copy_set(root, name)
    result = run(
        pytester,
        "--provenai-fixtures",
        "fixtures/one",
        "--provenai-fixtures",
        "fixtures/two",
        "fixtures/three",
        "-v",
    )
    result.assert_outcomes(passed=3)
    records = results(root)["records"]["test_inputs.py::test_case"]
    assert sorted({r["set"] for r in records}) == ["one", "three", "two"]

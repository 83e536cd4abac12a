"""``@pytest.mark.provenai_kind``: a test takes cases of the fixture kinds it names (default
hotpotqa), and a set that fails to load shows up as an error for the tests of its kind."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from project import copy_fixture_set, freeze_records, results, run, write_ini

SYNTHETIC = ("synthetic-no-answer", "synthetic-exposure", "synthetic-quotation")
N_NO_ANSWER, N_EXPOSURE, N_QUOTATION = 13, 13, 35

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
    for i in range(4)
]

TEST_FILE = """
import pytest
from pytest_provenai.audit.quotation import quotation_record


def test_default(provenai_case, provenai_record):
    assert provenai_case.kind == "hotpotqa"
    provenai_record({"case_id": provenai_case.id, "kind": provenai_case.kind})


@pytest.mark.provenai_kind("quotation")
def test_quote(provenai_case, provenai_record):
    record = provenai_record(quotation_record(provenai_case))
    assert record["quotation"]["agrees"], record["quotation"]["reason"]


@pytest.mark.provenai_kind("no_answer", "exposure")
class TestGrounded:
    def test_grounded(self, provenai_case, provenai_record):
        assert provenai_case.kind in ("no_answer", "exposure")
        provenai_record({"case_id": provenai_case.id, "kind": provenai_case.kind})

    @pytest.mark.provenai_kind("exposure")
    def test_closest_marker_wins(self, provenai_case):
        assert provenai_case.kind == "exposure"
"""
N_PASSED = 4 + N_QUOTATION + (N_NO_ANSWER + N_EXPOSURE) + N_EXPOSURE


def make_project(pytester: pytest.Pytester, test_file: str = TEST_FILE) -> Path:
    root = pytester.path
    freeze_records(root, RECORDS)
    for name in SYNTHETIC:
        copy_fixture_set(root, name)
    write_ini(pytester, [f"fixtures/{n}" for n in ("mini", *SYNTHETIC)], scripted=False)
    pytester.makepyfile(test_kinds=test_file)
    return root


def test_each_test_gets_the_cases_of_its_kinds_with_and_without_xdist(
    pytester: pytest.Pytester,
) -> None:
    root = make_project(pytester)
    run(pytester, "-p", "no:xdist", "--strict-markers").assert_outcomes(passed=N_PASSED)
    records = results(root)["records"]
    assert [r["case_id"] for r in records["test_kinds.py::test_default"]] == [
        f"case-{i}" for i in range(4)
    ]
    quotes = records["test_kinds.py::test_quote"]
    assert len(quotes) == N_QUOTATION and {r["kind"] for r in quotes} == {"quotation"}
    grounded = records["test_kinds.py::TestGrounded::test_grounded"]
    assert sorted({r["kind"] for r in grounded}) == ["exposure", "no_answer"]
    assert len(grounded) == N_NO_ANSWER + N_EXPOSURE

    run(pytester, "-n", "2", "--strict-markers").assert_outcomes(passed=N_PASSED)
    assert results(root)["records"] == records


def test_sampling_is_per_kind(pytester: pytest.Pytester) -> None:
    root = make_project(pytester)
    run(pytester, "--provenai-sample", "2", "-p", "no:xdist").assert_outcomes(
        passed=2 + 2 + (2 + 2) + 2
    )
    with_synthetic = results(root)["records"]["test_kinds.py::test_default"]
    # the hotpotqa cases chosen do not depend on which other sets are configured
    run(
        pytester, "--provenai-sample", "2", "-p", "no:xdist", "--provenai-fixtures", "fixtures/mini"
    ).assert_outcomes(passed=2, skipped=3)  # no cases of their kinds: empty parameter sets
    alone = results(root)["records"]["test_kinds.py::test_default"]
    assert with_synthetic == alone


def test_broken_set_errors_only_for_tests_of_its_kind(pytester: pytest.Pytester) -> None:
    root = make_project(pytester)
    case_file = root / "fixtures" / "synthetic-quotation" / "cases" / "q-match-seed.json"
    doc = json.loads(case_file.read_text(encoding="utf-8"))
    doc["expected"] = "match"
    case_file.write_text(json.dumps(doc), encoding="utf-8")
    result = run(pytester, "-p", "no:xdist", "-rE")
    result.assert_outcomes(passed=N_PASSED - N_QUOTATION, errors=1)
    result.stdout.fnmatch_lines(
        [
            "*ERROR*test_quote?fixture-error:synthetic-quotation?*",
            "*q-match-seed.json#/expected: expected one of*got the string ?match?*",
        ]
    )
    assert "test_default[fixture-error" not in result.stdout.str()


def test_set_of_unknown_kind_errors_for_every_test(pytester: pytest.Pytester) -> None:
    root = make_project(pytester)
    (root / "fixtures" / "synthetic-exposure" / "manifest.json").write_text("{", encoding="utf-8")
    result = run(pytester, "-n", "2", "-rE")
    # 4 tests take cases, each gets the error entry; the exposure cases are gone
    result.assert_outcomes(passed=N_PASSED - 2 * N_EXPOSURE, errors=4)
    result.stdout.fnmatch_lines(["*test_default?fixture-error:synthetic-exposure?*"])


@pytest.mark.parametrize(
    ("marker", "message"),
    [
        ('"quotes"', "unknown fixture kind 'quotes'; expected hotpotqa, no_answer, exposure"),
        ("", "takes one or more fixture kinds as positional names"),
        ('kind="quotation"', "takes one or more fixture kinds as positional names"),
        ("3", "unknown fixture kind 3"),
    ],
)
def test_bad_kind_marker_is_a_usage_error(
    pytester: pytest.Pytester, marker: str, message: str
) -> None:
    make_project(
        pytester,
        "import pytest\n\n"
        f"@pytest.mark.provenai_kind({marker})\n"
        "def test_x(provenai_case):\n    pass\n",
    )
    result = run(pytester)
    # raised while parametrising, so pytest reports it as a collection error and runs nothing
    assert result.ret == pytest.ExitCode.INTERRUPTED
    result.stdout.fnmatch_lines(
        [f"*UsageError: test_kinds.py::test_x: @pytest.mark.provenai_kind*{message}*"]
    )
    result.assert_outcomes(errors=1)


def test_marker_is_registered(pytester: pytest.Pytester) -> None:
    make_project(pytester)
    result = run(pytester, "--markers")
    result.stdout.fnmatch_lines(["@pytest.mark.provenai_kind(*kinds): *no_answer*quotation*"])

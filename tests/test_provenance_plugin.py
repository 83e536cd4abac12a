"""The provenance suite end to end through pytester, with the scripted generator: gates fail
closed, and the exposure matrix reaches the terminal summary and the results JSON."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from project import results, run, use_scripted, write_ini

from pytest_provenai.frozen.write import aid, original, write_provenance_set
from pytest_provenai.subject.exposure import AID_LABEL, OMITTED_LABEL

PLACES = ("Ashby", "Brook", "Corran")


def no_answer_cases() -> list[dict[str, Any]]:
    cases = []
    for place in PLACES:
        src = original(
            f"{place.lower()}-spec",
            f"The {place} pump must be inspected. The inspection interval is not specified.",
            title=f"{place} pump specification",
        )
        gen = aid(
            f"{place.lower()}-aid",
            f"The {place} pump inspection interval is 73 days.",
            parent=src,
            aid_kind="contextual_prefix",
        )
        cases.append(
            {
                "id": f"na-{place.lower()}",
                "question": f"What is the inspection interval of the {place} pump?",
                "expected_answer": "unknown",
                "originals": [src],
                "aids": [gen],
                "aid_only_values": ["73"],
            }
        )
    return cases


def span(entry: dict[str, Any], quote: str) -> list[int]:
    start = entry["text"].encode("utf-8").index(quote.encode("utf-8"))
    return [start, start + len(quote.encode("utf-8"))]


def quotation_cases() -> list[dict[str, Any]]:
    src = original("hall", "The stage lift is rated for 750 kg.", title="Hall manual")
    gen = aid("hall-hyde", "The stage lift carries 900 kilograms.", parent=src, aid_kind="hyde")
    return [
        {
            "id": "q-match",
            "ledger": [src, gen],
            "citation": {"id": "hall", "digest": src["sha256"], "range": span(src, "750 kg")},
            "quote": "750 kg",
            "expected": "quote_match",
            "normalisation": "exact",
        },
        {
            "id": "q-generated",
            "ledger": [src, gen],
            "citation": {
                "id": "hall-hyde",
                "digest": gen["sha256"],
                "range": span(gen, "900 kilograms"),
            },
            "quote": "900 kilograms",
            "expected": "generated_target",
            "normalisation": "exact",
        },
    ]


# The scripted model answers by what the prompt shows: a clean unknown without aid text,
# the aid's value (citing the aid) when the aid is labelled, mislabelled or exposed.
SCRIPT = {
    "name": "scripted-prov",
    "script": {
        OMITTED_LABEL: "Answer: unknown\nEvidence: The interval is not specified [R0].",
        AID_LABEL: "Answer: 73 days [A0]\nEvidence: The aid says so [A0].",
        "[R1] Ashby": "Answer: 73 days [R1]",
        "[R1] Brook": "Answer: 73 days [R1]",
        "[R1] Corran": "Answer: 73 days [R1]",
        "inspection interval is 73 days": "Answer: 73 days",
        "*": "Answer: The inspection interval is not specified [R0].",
    },
}

SUITE = """
import pytest
from pytest_provenai.audit.provenance import exposure_record
from pytest_provenai.audit.quotation import quotation_record
from pytest_provenai.subject.exposure import run_treatments


@pytest.mark.provenai_kind("quotation")
@pytest.mark.provenance(quotation_agreement=1.0, false_quote_match_rate=0.0)
def test_quotation(provenai_case, provenai_record, provenai_snapshot):
    record = provenai_record(quotation_record(provenai_case))
    assert record == provenai_snapshot


@pytest.mark.provenai_kind("no_answer")
@pytest.mark.provenance({gates})
def test_no_answer(provenai_case, provenai_subject, provenai_record, provenai_snapshot):
    runs = run_treatments(provenai_subject, provenai_case)
    record = exposure_record(provenai_case, runs, model=provenai_subject.identity.model_key())
    assert provenai_record(record) == provenai_snapshot
"""

PASSING = "correct_unknown_rate=0.3, claim_accounting_complete=1.0, aid_value_leak_rate_omit=0.0"


def make_project(pytester: pytest.Pytester, gates: str = PASSING) -> Path:
    root = pytester.path
    write_provenance_set(
        root / "fixtures" / "na",
        kind="no_answer",
        cases=no_answer_cases(),
        description="test no-answer cases",
        readme="test set\n",
    )
    write_provenance_set(
        root / "fixtures" / "quote",
        kind="quotation",
        cases=quotation_cases(),
        description="test quotation cases",
        readme="test set\n",
    )
    use_scripted(root, SCRIPT)
    write_ini(pytester, ["fixtures/na", "fixtures/quote"])
    pytester.makepyfile(test_prov=SUITE.format(gates=gates))
    return root


NA_TEST = "test_prov.py::test_no_answer"


def literal(pattern: str) -> str:
    """An fnmatch pattern whose square brackets match themselves (``*`` stays a wildcard)."""
    return pattern.replace("[", "\0").replace("]", "[]]").replace("\0", "[[]")


@pytest.mark.parametrize("mode", [["-p", "no:xdist"], ["-n", "2"]])
def test_gates_and_exposure_matrix(pytester: pytest.Pytester, mode: list[str]) -> None:
    root = make_project(pytester)
    run(pytester, "-p", "no:xdist", "--snapshot-update").assert_outcomes(passed=10)
    reference = results(root)
    result = run(pytester, *mode, "--provenai-no-cache")
    result.assert_outcomes(passed=10)
    assert result.ret == pytest.ExitCode.OK
    data = results(root)
    assert data["records"] == reference["records"]
    assert data["provenance"] == reference["provenance"]
    result.stdout.fnmatch_lines(
        [
            literal(line)
            for line in (
                "*test_prov.py::test_no_answer: exposure n=3*",
                "*correct_unknown_rate*0.400*",
                "*exposure matrix (rate [95% CI])*",
                "*treatment*aid-value leak*aid citation*abstention*n",
                "*baseline*0.000 [0.00, 0.00]*0.000 [0.00, 0.00]*1.000 [1.00, 1.00]*3",
                "*label*1.000 [1.00, 1.00]*1.000 [1.00, 1.00]*0.000 [0.00, 0.00]*3",
                "*paired difference vs baseline*",
                "*mislabel*+1.000 [+1.00, +1.00]*+1.000 [+1.00, +1.00]*-1.000 [-1.00, -1.00]*",
                "*test_prov.py::test_quotation: quotation n=2*",
                "*gates: 5 passed, 0 failed*",
            )
        ]
    )
    matrix = data["provenance"][NA_TEST]["exposure_matrix"]
    rows = matrix["treatments"]
    assert matrix["treatment_order"] == ["baseline", "omit", "label", "expose", "mislabel"]
    assert sorted(rows) == sorted(matrix["treatment_order"])
    assert rows["expose"]["aid_value_leak_rate"]["value"] == 1.0
    assert rows["expose"]["aid_citation_rate"]["value"] == 0.0
    assert rows["omit"]["abstention_rate"]["value"] == 1.0
    assert rows["label"]["aid_value_leak_rate"]["delta_vs_baseline"] == 1.0
    assert all(row["n"] == 3 for row in rows.values())
    rec = data["records"][NA_TEST][0]
    assert rec["exposure"]["mislabel"]["aid_citations"] == ["R1"]
    assert rec["exposure"]["label"]["view"]["blocks"][1]["display_id"] == "A0"


def test_a_leaking_model_fails_its_gates(pytester: pytest.Pytester) -> None:
    make_project(pytester, gates="aid_value_leak_rate=0.0, correct_unknown_rate=0.9")
    result = run(pytester, "--snapshot-update")
    result.assert_outcomes(passed=7, failed=2)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines_random(
        [
            "*FAIL test_prov.py::test_no_answer provenance.aid_value_leak_rate = 1.0000*"
            "required <= 0, n=3*",
            "*FAIL test_prov.py::test_no_answer provenance.correct_unknown_rate = 0.4000*"
            "required >= 0.9, n=3*",
            "*PASS test_prov.py::test_quotation provenance.quotation_agreement = 1.0000*",
        ]
    )


def test_gates_fail_closed_when_the_subject_cannot_run_treatments(
    pytester: pytest.Pytester,
) -> None:
    root = make_project(pytester)
    pytester.makepyfile(my_rag="def answer(question, resources):\n    return 'Answer: unknown'\n")
    result = run(pytester, "--provenai-pipeline", "my_rag:answer", "--snapshot-update")
    result.assert_outcomes(passed=4, failed=6)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        [
            "*need a model subject*",
            "*FAIL test_prov.py::test_no_answer provenance.*= n/a*no record*fail closed*",
        ]
    )
    gates = {g["metric"]: g for g in results(root)["gates"] if g["test"] == NA_TEST}
    assert gates and not any(g["passed"] for g in gates.values())


def test_a_provenance_metric_typo_is_a_usage_error(pytester: pytest.Pytester) -> None:
    make_project(pytester, gates="aid_value_leek_rate=0.0")
    result = run(pytester)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*provenance(aid_value_leek_rate=...) is not a known gate metric*aid_value_leak_rate*"]
    )

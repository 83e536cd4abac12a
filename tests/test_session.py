"""The run state without a subprocess: the plan, absorbing reports, placeholders, the
results object and the summary rendered from it."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from pytest_provenai.gates import GateSpec
from pytest_provenai.options import parse_settings
from pytest_provenai.report.results import load_results, results_from_json
from pytest_provenai.report.summary import summary_lines
from pytest_provenai.session import Plan, ProvenaiSession

TEST = "t.py::test_fid"
SPEC = GateSpec(TEST, "fidelity", "answer_accuracy", 0.5)


def _record(case_id: str, correct: bool) -> dict[str, Any]:
    score = 1.0 if correct else 0.0
    return {
        "case_id": case_id,
        "answer": {"correct": correct, "em": score, "f1": score},
        "citation": {
            "exact": {"p": 1.0, "r": 1.0, "f": 1.0},
            "semantic": {"p": 1.0, "r": 1.0, "f": 1.0},
            "cited_ids": ["R0"],
            "n_invalid": 0,
        },
    }


def _session(tmp_path: Path) -> ProvenaiSession:
    values = {"provenai_results": str(tmp_path / "results.json")}
    settings = parse_settings(lambda name: values.get(name), tmp_path)
    return ProvenaiSession(settings=settings)


def _plan(session: ProvenaiSession, cases: list[str]) -> None:
    for c in cases:
        session.plan_item(f"{TEST}[{c}]", TEST, c, [SPEC])


def test_a_worker_plan_merges_idempotently() -> None:
    plan = Plan()
    plan.add_gates([SPEC])
    plan.expected["n[a]"] = (TEST, "a")
    other = Plan()
    other.merge(plan.as_dict())
    other.merge(json.loads(json.dumps(plan.as_dict())))
    assert other.as_dict() == plan.as_dict()


def test_records_absorbed_from_reports_and_placeholders_for_the_rest(tmp_path: Path) -> None:
    s = _session(tmp_path)
    _plan(s, ["a", "b", "c", "d"])
    # a worker produced a and b and reported them; c failed before recording; d never ran
    for case, ok in (("a", True), ("b", False)):
        nodeid = f"{TEST}[{case}]"
        s.add_record(nodeid, TEST, _record(case, ok))
        s.absorb_report(
            nodeid, failed=False, skipped=False, duration=0.5, payload=s.report_payload(nodeid)
        )
    s.absorb_report(f"{TEST}[c]", failed=True, skipped=False, duration=0.1, payload=None)
    results = s.finish()
    recs = results.records[TEST]
    assert [r["case_id"] for r in recs] == ["a", "b", "c", "d"]
    assert recs[2]["missing"].startswith("no record (test errored")
    assert recs[3]["missing"].startswith("no record (never reported")
    (gate,) = results.gates
    assert not gate.passed and gate.n == 2 and gate.missing == 2
    assert results.tests[TEST].n == 2 and results.tests[TEST].missing == 2
    assert results.timings["per_test_seconds"][f"{TEST}[a]"] == 0.5


def test_a_skipped_case_is_not_missing(tmp_path: Path) -> None:
    s = _session(tmp_path)
    _plan(s, ["a", "b"])
    s.add_record(f"{TEST}[a]", TEST, _record("a", True))
    s.absorb_report(
        f"{TEST}[a]",
        failed=False,
        skipped=False,
        duration=0,
        payload=s.report_payload(f"{TEST}[a]"),
    )
    s.absorb_report(f"{TEST}[b]", failed=False, skipped=True, duration=0, payload=None)
    (gate,) = s.finish().gates
    assert gate.passed and gate.n == 1 and gate.missing == 0


def test_the_payload_carries_the_plan_once(tmp_path: Path) -> None:
    s = _session(tmp_path)
    _plan(s, ["a"])
    first = s.report_payload(f"{TEST}[a]")
    second = s.report_payload(f"{TEST}[a]")
    assert "plan" in first and "plan" not in second


def test_results_round_trip_through_json_and_render_the_same_summary(tmp_path: Path) -> None:
    s = _session(tmp_path)
    _plan(s, ["a", "b"])
    for case, ok in (("a", True), ("b", True)):
        nodeid = f"{TEST}[{case}]"
        s.add_record(nodeid, TEST, _record(case, ok))
        s.absorb_report(
            nodeid, failed=False, skipped=False, duration=0, payload=s.report_payload(nodeid)
        )
    results = s.finish()
    s.write_results(results)
    again = load_results(tmp_path / "results.json")
    assert summary_lines(again) == summary_lines(results)
    # the whole document, not only what the summary shows, survives to_json -> load
    assert json.dumps(again.to_json(), sort_keys=True) == json.dumps(
        results.to_json(), sort_keys=True
    )
    lines = summary_lines(results, results_path=tmp_path / "results.json")
    assert f"{TEST}: n=2  (mean, 95% bootstrap CI by case)" in lines
    assert any(line.startswith("  PASS t.py::test_fid fidelity.answer_accuracy") for line in lines)
    assert lines[-1] == f"results: {tmp_path / 'results.json'}"


def test_a_results_file_of_another_kind_is_refused_in_one_line(tmp_path: Path) -> None:
    import pytest

    from pytest_provenai.errors import ResultsError

    bad = tmp_path / "r.json"
    for content, problem in (
        ('{"tool": "pytest-provenai", "schema_version": 1}', "schema_version 1"),
        ("[1, 2", "expected valid JSON, got invalid JSON at line 1:"),
        ('{"tool": "other"}', "not a pytest-provenai results JSON"),
    ):
        bad.write_text(content, encoding="utf-8")
        with pytest.raises(ResultsError, match=problem) as info:
            load_results(bad)
        assert str(bad) in str(info.value) and "\n" not in str(info.value)
    with pytest.raises(ResultsError, match="#/gates"):
        results_from_json(
            {
                "tool": "pytest-provenai",
                "schema_version": 2,
                "run": {},
                "models": {},
                "options": {},
                "records": {},
                "aggregates": {},
                "provenance": {},
                "gates": [{"test": "x"}],
                "fixture_errors": [],
            }
        )

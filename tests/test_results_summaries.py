"""The typed summaries of the results JSON (``MetricSummary``, ``InfluenceSummary``,
``ProvenanceSummary`` with its ``ExposureMatrix``): each writes exactly the JSON the
computing function returns and reads it back unchanged, so the results JSON's bytes do not
depend on the types; a summary that is not one is one ``ResultsError`` line."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from test_report_compare import EXPO, INF, TEST, exposure, fid, influence, results

from pytest_provenai._io import dumps_stable
from pytest_provenai.audit.fidelity import FIDELITY_METRICS
from pytest_provenai.audit.influence import InfluenceSummary, influence_summary
from pytest_provenai.audit.metrics import MetricSummary, aggregate, summaries_from_json
from pytest_provenai.audit.provenance import ProvenanceSummary, provenance_summary
from pytest_provenai.errors import ResultsError
from pytest_provenai.report.results import RunResults, load_results, results_from_json


def _run() -> RunResults:
    return results(
        {
            TEST: [fid(f"c{i}", i % 2 == 0, 0.1 * i, cited=i % 3 != 0) for i in range(6)]
            + [{"case_id": "gone", "missing": "crashed"}],
            INF: [
                influence(fid(f"i{i}", True, 0.5), {"R0": "used", "R1": "uncited_influential"})
                for i in range(3)
            ],
            EXPO: [exposure(f"e{i}", {"baseline": False, "label": i == 0}) for i in range(3)],
        }
    )


def test_each_summary_writes_exactly_what_its_function_computes() -> None:
    fidelity = [fid(f"c{i}", i % 2 == 0, 0.1 * i) for i in range(5)]
    computed = aggregate(fidelity, FIDELITY_METRICS, seed=3)
    assert {k: v.to_json() for k, v in summaries_from_json(computed).items()} == computed
    records = [influence(fid(f"i{i}", True, 0.5), {"R0": "used"}) for i in range(3)]
    inf = influence_summary(records, seed=3)
    assert InfluenceSummary.from_json(inf).to_json() == inf
    prov = provenance_summary([exposure(f"e{i}", {"baseline": False}) for i in range(2)], seed=3)
    assert prov is not None and "exposure_matrix" in prov
    assert ProvenanceSummary.from_json(prov).to_json() == prov


def test_the_results_json_reads_back_to_the_same_bytes(tmp_path: Path) -> None:
    run = _run()
    text = dumps_stable(run.to_json())
    path = tmp_path / "results.json"
    path.write_text(text, encoding="utf-8")
    again = load_results(path)
    assert dumps_stable(again.to_json()) == text
    assert again.tests == run.tests
    summary = again.tests[TEST].fidelity
    assert summary is not None and isinstance(summary["answer_accuracy"], MetricSummary)
    prov = again.tests[EXPO].provenance
    assert prov is not None and prov.exposure_matrix is not None
    assert [t for t, _ in prov.exposure_matrix.rows()] == ["baseline", "label"]


def _broken(change: Any) -> dict[str, Any]:
    data: dict[str, Any] = json.loads(dumps_stable(_run().to_json()))
    change(data)
    return data


@pytest.mark.parametrize(
    ("change", "said"),
    [
        (lambda d: d["aggregates"][TEST]["metrics"]["answer_f1"].pop("value"), "KeyError"),
        (lambda d: d["aggregates"][TEST]["metrics"]["answer_f1"].update(ci=[0.1]), "ci"),
        (lambda d: d["aggregates"][TEST].update(metrics=[]), "expected an object"),
        (lambda d: d["aggregates"][INF]["influence"].update(measured="3"), "measured"),
        (
            lambda d: d["provenance"][EXPO]["exposure_matrix"].update(treatment_order=["x"]),
            "treatment_order",
        ),
        (lambda d: d["aggregates"].update({TEST: 3}), "expected a JSON object"),
    ],
)
def test_a_malformed_summary_is_one_results_error_line(change: Any, said: str) -> None:
    with pytest.raises(ResultsError, match=said) as info:
        results_from_json(_broken(change), "r.json")
    assert "\n" not in str(info.value) and str(info.value).startswith("r.json")

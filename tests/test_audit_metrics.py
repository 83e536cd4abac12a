"""The one metric home: per-case and pooled metrics, intervals, bound validation, gates."""

from __future__ import annotations

import math
from typing import Any

import pytest

from pytest_provenai.audit.metrics import COUNT, Metric, aggregate, summarise_metric
from pytest_provenai.audit.stats import clopper_pearson
from pytest_provenai.errors import ConfigError
from pytest_provenai.gates import MARKER_METRICS, GateSpec, evaluate, parse_marker


def _claims(record: Any) -> tuple[float, float]:
    return (record["ok"], record["n"])


POOLED = Metric("claim_ok", "higher", "supported claims over all claims", ratio=_claims)
EXACT = Metric("probe_block", "higher", "blocked probes", ratio=_claims, interval="exact_binomial")
RECORDS = [
    {"case_id": "a", "ok": 1, "n": 1},
    {"case_id": "b", "ok": 0, "n": 9},
    {"case_id": "c", "ok": 3, "n": 3},
]


def test_pooled_metric_weighs_claims_not_cases() -> None:
    s = summarise_metric(POOLED, RECORDS, seed=1)
    # pooled: (1 + 0 + 3) / (1 + 9 + 3) = 4/13; a per-case mean would be (1 + 0 + 1)/3 = 2/3
    assert s["value"] == pytest.approx(4 / 13)
    assert s["numerator"] == 4 and s["denominator"] == 13 and s["n"] == 3
    lo, hi = s["ci"]
    assert 0.0 <= lo <= 4 / 13 <= hi <= 1.0
    assert summarise_metric(POOLED, RECORDS, seed=1) == s  # deterministic


def test_pooled_metric_with_no_claims_is_undefined() -> None:
    s = summarise_metric(POOLED, [{"case_id": "a", "ok": 0, "n": 0}])
    assert s["value"] is None and s["ci"] is None and s["undefined"] == 1


def test_exact_binomial_interval_matches_clopper_pearson() -> None:
    records = [{"case_id": str(i), "ok": 1, "n": 1} for i in range(50)]
    s = summarise_metric(EXACT, records)
    assert s["value"] == 1.0
    assert s["ci"] == list(clopper_pearson(50, 50))
    # 50 of 50: the lower end is (alpha/2)^(1/n) = 0.025^(1/50)
    assert s["ci"][0] == pytest.approx(0.025 ** (1 / 50), abs=1e-9) and s["ci"][1] == 1.0


def test_clopper_pearson_known_values() -> None:
    # scipy.stats.beta.ppf(0.025, 5, 6), beta.ppf(0.975, 6, 5)
    lo, hi = clopper_pearson(5, 10)
    assert lo == pytest.approx(0.18708602844739855, abs=1e-9)
    assert hi == pytest.approx(0.8129139715526015, abs=1e-9)
    assert clopper_pearson(0, 50)[0] == 0.0
    with pytest.raises(ValueError):
        clopper_pearson(3, 2)


def test_a_metric_is_per_case_or_pooled_never_both() -> None:
    with pytest.raises(ValueError, match="exactly one"):
        Metric("x", "higher", "x", fn=lambda r: 1.0, ratio=_claims)
    with pytest.raises(ValueError, match="exact binomial"):
        Metric("x", "higher", "x", fn=lambda r: 1.0, interval="exact_binomial")


def test_unreadable_record_makes_the_metric_an_error() -> None:
    agg = aggregate([*RECORDS, {"case_id": "d", "ok": "x", "n": 1}], {"claim_ok": POOLED})
    assert agg["claim_ok"]["value"] is None
    assert "record 3 (d)" in agg["claim_ok"]["error"]


@pytest.mark.parametrize(
    ("metric", "bound", "problem"),
    [
        ("answer_accuracy", float("-inf"), "finite"),
        ("answer_accuracy", -0.1, "[0, 1]"),
        ("answer_accuracy", 1.5, "[0, 1]"),
        ("answer_accuracy", float("nan"), "finite"),
        ("answer_accuracy", 10**400, "finite"),
        ("answer_accuracy", "0.5", "number"),
        ("answer_accuracy", True, "number"),
    ],
)
def test_gate_bounds_outside_the_metric_range_are_config_errors(
    metric: str, bound: Any, problem: str
) -> None:
    with pytest.raises(ConfigError) as info:
        parse_marker("t.py::test", "fidelity", {metric: bound})
    message = str(info.value)
    assert problem in message and metric in message and "\n" not in message


def test_a_huge_integer_bound_is_shown_once_by_its_size() -> None:
    with pytest.raises(ConfigError) as info:
        parse_marker("t.py::test", "fidelity", {"answer_accuracy": 10**400})
    assert str(info.value) == (
        "t.py::test: @pytest.mark.fidelity(answer_accuracy=<an integer of about 401 digits>) "
        "needs a finite bound"
    )
    with pytest.raises(ConfigError) as info:
        parse_marker("t.py::test", "fidelity", {"answer_accuracy": 1.5})
    assert str(info.value).count("1.5") == 1


def test_count_metrics_take_bounds_above_one() -> None:
    assert MARKER_METRICS["influence"]["uncited_influential"].range == COUNT
    (spec,) = parse_marker("t", "influence", {"uncited_influential": 5.5})
    assert spec.bound == 5.5
    with pytest.raises(ConfigError, match="∞"):
        parse_marker("t", "influence", {"uncited_influential": -1})


def test_every_registered_metric_has_one_definition() -> None:
    for marker, table in MARKER_METRICS.items():
        for name, metric in table.items():
            assert metric.name == name, marker
            assert metric.description and "\n" not in metric.description
            assert math.isfinite(metric.range[0])


def test_gate_over_a_pooled_metric() -> None:
    MARKER_METRICS["fidelity"]["_test_pooled"] = POOLED
    try:
        result = evaluate(GateSpec("t", "fidelity", "_test_pooled", 0.3), RECORDS, seed=3)
    finally:
        del MARKER_METRICS["fidelity"]["_test_pooled"]
    assert result.passed and result.value == pytest.approx(4 / 13) and result.n == 3

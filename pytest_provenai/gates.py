"""Population gates: specs from marker kwargs, evaluation over recorded results.

``@pytest.mark.fidelity(answer_accuracy=0.2, citation_f1=0.3)`` declares, for that test
function, that the mean of each metric over all its cases must reach the bound (or stay at or
under it, for metrics where lower is better). A gate is evaluated once, at session end, over
the records of every case of the test (merged across xdist workers), with a bootstrap 95% CI
resampled by case. It fails closed: no records, a case that produced no record, or a metric
that could not be computed is a failure, never a pass.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pytest_provenai.audit.metrics import Metric, MetricSummary, summarise_metric
from pytest_provenai.errors import ConfigError
from pytest_provenai.metric_registry import MARKER_METRICS, MARKERS

__all__ = ["MARKERS", "MARKER_METRICS", "GateResult", "GateSpec", "evaluate", "parse_marker"]


@dataclass(frozen=True)
class GateSpec:
    test: str  # the test function's node id without parameters
    marker: str
    metric: str
    bound: float

    def as_dict(self) -> dict[str, Any]:
        return {
            "test": self.test,
            "marker": self.marker,
            "metric": self.metric,
            "bound": self.bound,
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> GateSpec:
        return cls(str(d["test"]), str(d["marker"]), str(d["metric"]), float(d["bound"]))


@dataclass(frozen=True)
class GateResult:
    spec: GateSpec
    passed: bool
    value: float | None
    ci: tuple[float, float] | None
    n: int
    missing: int
    reason: str
    higher_is_better: bool
    # a shard's gate (--provenai-shard): computed over the shard's cases only, not judged;
    # `provenai merge` judges it on the whole population
    provisional: bool = False

    def as_dict(self) -> dict[str, Any]:
        return {
            **self.spec.as_dict(),
            "passed": self.passed,
            "value": self.value,
            "ci": list(self.ci) if self.ci else None,
            "n": self.n,
            "missing": self.missing,
            "reason": self.reason,
            "comparison": ">=" if self.higher_is_better else "<=",
            **({"provisional": True} if self.provisional else {}),
        }

    def line(self) -> str:
        op = ">=" if self.higher_is_better else "<="
        value = "n/a" if self.value is None else f"{self.value:.4f}"
        ci = "" if self.ci is None else f" (95% CI {self.ci[0]:.4f}–{self.ci[1]:.4f})"
        status = "PROVISIONAL" if self.provisional else "PASS" if self.passed else "FAIL"
        extra = f" — {self.reason}" if self.reason else ""
        return (
            f"{status} {self.spec.test} {self.spec.marker}.{self.spec.metric} = {value}{ci}, "
            f"required {op} {self.spec.bound:g}, n={self.n}{extra}"
        )


def parse_marker(test: str, marker: str, kwargs: Mapping[str, Any]) -> list[GateSpec]:
    """Gate specs from one marker's kwargs; unknown names or bad bounds raise ConfigError."""
    allowed = MARKER_METRICS.get(marker)
    if allowed is None:
        raise ConfigError(f"{test}: unknown provenai marker {marker!r}")
    specs = []
    for name, bound in kwargs.items():
        if name not in allowed:
            names = ", ".join(sorted(allowed)) or "none yet (this layer has no gate metrics)"
            raise ConfigError(
                f"{test}: @pytest.mark.{marker}({name}=...) is not a known gate metric; "
                f"allowed: {names}"
            )
        problem = allowed[name].check_bound(bound)
        if problem is not None:
            shown = Metric.shown_bound(bound)
            raise ConfigError(f"{test}: @pytest.mark.{marker}({name}={shown}) {problem}")
        specs.append(GateSpec(test, marker, name, float(bound)))
    return specs


def evaluate(spec: GateSpec, records: list[dict[str, Any]], *, seed: int) -> GateResult:
    """Evaluate one gate over a test's records (placeholders for cases without a record
    carry ``"missing": reason``)."""
    metric = MARKER_METRICS[spec.marker][spec.metric]
    present = [r for r in records if "missing" not in r]
    missing = len(records) - len(present)

    def fail(reason: str, value: float | None = None, ci: Any = None) -> GateResult:
        return GateResult(
            spec, False, value, ci, len(present), missing, reason, metric.higher_is_better
        )

    if not present:
        return fail("no records: the metric could not be computed (fail closed)")
    summary = MetricSummary.from_json(summarise_metric(metric, present, seed=seed))
    if summary.error is not None:
        return fail(f"metric could not be computed: {summary.error} (fail closed)")
    if summary.undefined and not metric.pooled:
        first = next(r for r in present if _undefined(metric, r))
        return fail(f"metric missing for case {first.get('case_id')!r} (fail closed)")
    if summary.value is None:
        return fail("metric undefined for every case (fail closed)")
    value = float(summary.value)
    ci = (float(summary.ci[0]), float(summary.ci[1])) if summary.ci else None
    if missing:
        return fail(f"{missing} case(s) produced no record (fail closed)", value, ci)
    ok = value >= spec.bound if metric.higher_is_better else value <= spec.bound
    return GateResult(spec, ok, value, ci, len(present), 0, "", metric.higher_is_better)


def _undefined(metric: Metric, record: Mapping[str, Any]) -> bool:
    return metric(record) is None

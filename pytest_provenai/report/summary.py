"""Terminal summary: per test n, answer accuracy/EM/F1 and citation P/R/F at both τ with
their CIs, then the gates (metric, value, CI, bound, n)."""

from __future__ import annotations

from typing import Any

from pytest_provenai.gates import GateResult

# (label, metric name) in the order they are printed
SUMMARY_METRICS: tuple[tuple[str, str], ...] = (
    ("answer accuracy", "answer_accuracy"),
    ("answer EM", "answer_em"),
    ("answer F1", "answer_f1"),
    ("citation P  (tau=1.0)", "citation_precision"),
    ("citation R  (tau=1.0)", "citation_recall"),
    ("citation F  (tau=1.0)", "citation_f1"),
    ("citation P  (tau=0.34)", "citation_precision_semantic"),
    ("citation R  (tau=0.34)", "citation_recall_semantic"),
    ("citation F  (tau=0.34)", "citation_f1_semantic"),
    ("citation-free answers", "citation_free_rate"),
)


def _fmt(m: dict[str, Any] | None) -> str:
    if not m or m.get("value") is None:
        return "n/a"
    lo, hi = m["ci"]
    text = f"{m['value']:.3f}  [{lo:.3f}, {hi:.3f}]"
    if m.get("undefined"):
        text += f"  ({m['undefined']} undefined, counted as 0)"
    return text


def summary_lines(state: Any, gate_results: list[GateResult]) -> list[str]:
    lines: list[str] = []
    models = {m.get("name") for m in state.models.values()}
    if models:
        lines.append("model: " + ", ".join(sorted(str(m) for m in models)))
    for test, agg in state.aggregates().items():
        missing = f", {agg['missing']} without a record" if agg["missing"] else ""
        lines.append(f"{test}: n={agg['n']}{missing}  (mean, 95% bootstrap CI by case)")
        for label, name in SUMMARY_METRICS:
            if name in agg["metrics"]:
                lines.append(f"  {label:<24} {_fmt(agg['metrics'][name])}")
    for err in state.fixture_errors:
        lines.append(f"fixture set error: {err}")
    if gate_results:
        failed = sum(not g.passed for g in gate_results)
        lines.append(f"gates: {len(gate_results) - failed} passed, {failed} failed")
        lines.extend("  " + g.line() for g in gate_results)
    if state.settings.results is not None and state.audited():
        lines.append(f"results: {state.settings.results}")
    return lines

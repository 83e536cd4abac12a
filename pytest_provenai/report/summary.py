"""Terminal summary: per test n, answer accuracy/EM/F1 and citation P/R/F at both τ with
their CIs, influence, provenance and attribution blocks, then the gates (metric, value, CI,
bound, n).
Rendered from the run's :class:`~pytest_provenai.report.results.RunResults`."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pytest_provenai.metric_registry import MATRIX_COLUMNS, TERMINAL_FIDELITY, label
from pytest_provenai.report.results import RunResults


def _fmt(m: dict[str, Any] | None) -> str:
    if not m or m.get("value") is None:
        return "n/a"
    lo, hi = m["ci"]
    text = f"{m['value']:.3f}  [{lo:.3f}, {hi:.3f}]"
    if m.get("undefined"):
        text += f"  ({m['undefined']} undefined, counted as 0)"
    return text


def summary_lines(results: RunResults, *, results_path: Path | None = None) -> list[str]:
    """The terminal summary of a run, rendered from its :class:`RunResults` (nothing is
    recomputed here)."""
    lines: list[str] = []
    models = {m.get("name") for m in results.models.values()}
    if models:
        lines.append("model: " + ", ".join(sorted(str(m) for m in models)))
    k = results.options.get("k")
    for test, t in results.tests.items():
        if t.fidelity is None:
            continue
        missing = f", {t.missing} without a record" if t.missing else ""
        lines.append(f"{test}: n={t.n}{missing}  (mean, 95% bootstrap CI by case)")
        for name in TERMINAL_FIDELITY:
            if name in t.fidelity:
                lines.append(f"  {label(name):<24} {_fmt(t.fidelity[name])}")
        if t.retrieval is not None:  # index mode: retrieval is reported apart from citation
            r = t.retrieval
            recall = f"retrieval recall@{k}"
            lines.append(
                f"  {recall:<24} {_fmt(r['retrieval_recall_at_k'])}; all gold retrieved "
                f"{_fmt(r['retrieval_all_gold_rate'])}; wrong answer + gold missed "
                f"{_fmt(r['retrieval_miss_answer_failure_rate'])}"
            )
    lines.extend(influence_lines(results))
    lines.extend(provenance_lines(results))
    lines.extend(attribution_lines(results))
    lines.extend(cache_lines(results))
    for err in results.fixture_errors:
        lines.append(f"fixture set error: {err}")
    if results.gates:
        failed = len(results.failed_gates)
        lines.append(f"gates: {len(results.gates) - failed} passed, {failed} failed")
        lines.extend("  " + g.line() for g in results.gates)
    if results_path is not None:
        lines.append(f"results: {results_path}")
    return lines


def cache_lines(results: RunResults) -> list[str]:
    """How much of the run came from the cache (cases whose tests made no model call;
    attribution records not verified again) and how often model weights were loaded and
    called."""
    c = results.cache or {}
    lines = []
    if c.get("model_cases"):
        lines.append(
            f"cache: {c['model_cases_from_cache']} of {c['model_cases']} model-backed case "
            f"results came from the cache (no model call); model loads {c['model_loads']}, "
            f"model calls {c['model_calls']}"
        )
    if c.get("attribution_records"):
        lines.append(
            f"cache: {c.get('attribution_records_from_cache', 0)} of "
            f"{c['attribution_records']} attribution records came from the cache "
            "(not verified again)"
        )
    return lines


def influence_lines(results: RunResults) -> list[str]:
    """Per test with influence layers: the verdict distribution over all resources and the
    number of cases showing the citation–influence gap."""
    lines: list[str] = []
    for test, t in results.tests.items():
        inf = t.influence
        if not inf:
            continue
        v = inf["verdicts"]
        lines.append(
            f"{test}: influence of {sum(v.values())} resources in {inf['measured']} cases "
            f"(--provenai-ablation {results.options.get('ablation')})"
        )
        lines.append(
            f"  verdicts: used {v['used']}, hallucinated citation {v['hallucinated_citation']}, "
            f"uncited influential {v['uncited_influential']}, low influence {v['low_influence']}"
        )
        lines.append(
            f"  citation-influence gap: {inf['gap_cases']} of {inf['measured']} cases "
            "(a cited resource with low influence, or an uncited influential one)"
        )
        if inf["not_measured"]:
            lines.append(f"  influence not measured: {inf['not_measured']} cases")
    return lines


def _cell(m: dict[str, Any]) -> str:
    if m.get("value") is None:
        return "n/a"
    lo, hi = m["ci"]
    return f"{m['value']:.3f} [{lo:.2f}, {hi:.2f}]"


def _delta(m: dict[str, Any]) -> str:
    if m.get("delta_vs_baseline") is None:
        return "—"
    lo, hi = m["delta_ci"]
    return f"{m['delta_vs_baseline']:+.3f} [{lo:+.2f}, {hi:+.2f}]"


def provenance_lines(results: RunResults) -> list[str]:
    """Per test with provenance records: its provenance metrics, and for exposure records
    the exposure matrix (rows = treatments; aid-value leak, aid citation and abstention
    rates with 95% bootstrap CIs by case; n) and each rate's paired difference from
    baseline."""
    lines: list[str] = []
    for test, t in results.tests.items():
        summ = t.provenance
        if summ is None:
            continue
        missing = f", {summ['missing']} without a record" if summ["missing"] else ""
        lines.append(
            f"{test}: {summ['layer']} n={summ['n']}{missing}  (mean, 95% bootstrap CI by case)"
        )
        for name, m in summ["metrics"].items():
            lines.append(f"  {name:<28} {_fmt(m)}")
        matrix = summ.get("exposure_matrix")
        if not matrix:
            continue
        if matrix["error"]:
            lines.append(f"  exposure matrix: not computed ({matrix['error']})")
            continue
        head = "".join(f"{col_label:<24}" for _, col_label in MATRIX_COLUMNS)
        lines.append("  exposure matrix (rate [95% CI])")
        lines.append(f"    {'treatment':<10}{head}n")
        order = matrix.get("treatment_order") or list(matrix["treatments"])
        for t in order:
            row = matrix["treatments"][t]
            cells = "".join(f"{_cell(row[c]):<24}" for c, _ in MATRIX_COLUMNS)
            lines.append(f"    {t:<10}{cells}{row['n']}")
        lines.append("  paired difference vs baseline (95% CI, cases resampled together)")
        for t in order:
            row = matrix["treatments"][t]
            if t == "baseline":
                continue
            cells = "".join(f"{_delta(row[c]):<24}" for c, _ in MATRIX_COLUMNS)
            lines.append(f"    {t:<10}{cells.rstrip()}")
    return lines


def attribution_lines(results: RunResults) -> list[str]:
    """Per test with attribution records: each attribution metric that applies, pooled over
    claims (bootstrap CI resampling traces; exact binomial for the probe and graph rates),
    with its pooled counts."""
    lines: list[str] = []
    for test, t in results.tests.items():
        if not t.attribution:
            continue
        missing = f", {t.missing} without a record" if t.missing else ""
        lines.append(f"{test}: attribution n={t.n}{missing}  (pooled over claims, 95% CI by trace)")
        for name, m in t.attribution.items():
            if m.get("value") is None:
                lines.append(f"  {name:<32} n/a ({m.get('error')})")
                continue
            lo, hi = m["ci"] if m.get("ci") else (m["value"], m["value"])
            text = f"{m['value']:.3f}  [{lo:.3f}, {hi:.3f}]"
            if m.get("denominator") is not None:
                text += f"  ({m['numerator']:g}/{m['denominator']:g})"
            lines.append(f"  {name:<32} {text}")
    return lines

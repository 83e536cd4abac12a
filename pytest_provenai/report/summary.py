"""Terminal summary: per test n, answer accuracy/EM/F1 and citation P/R/F at both τ with
their CIs, influence, provenance and attribution blocks, then the gates (metric, value, CI,
bound, n).
Rendered from the run's :class:`~pytest_provenai.report.results.RunResults`. Also the text of
a run comparison (``provenai compare``), rendered from a
:class:`~pytest_provenai.report.compare.Comparison`: all terminal text lives here, the
statistics in ``results.py`` and ``compare.py``."""

from __future__ import annotations

from pathlib import Path

from pytest_provenai.audit.metrics import MetricSummary
from pytest_provenai.audit.provenance import MatrixCell
from pytest_provenai.metric_registry import MATRIX_COLUMNS, TERMINAL_FIDELITY, label
from pytest_provenai.report.compare import Comparison, number_text
from pytest_provenai.report.results import RunResults


def _fmt(m: MetricSummary | None) -> str:
    if m is None or m.value is None:
        return "n/a"
    assert m.ci is not None  # a defined value has its interval
    lo, hi = m.ci
    text = f"{m.value:.3f}  [{lo:.3f}, {hi:.3f}]"
    if m.undefined:
        text += f"  ({m.undefined} undefined, counted as 0)"
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
    if results.shard is not None:
        sh = results.shard
        lines.append(
            f"shard {sh.spec}: {len(sh.cases)} of {len(set(sh.case_keys.values()))} cases; "
            "gates provisional (this shard's cases only), judged on the whole run by "
            "'provenai merge'"
        )
        lines.extend("  " + g.line() for g in results.gates)
    elif results.gates:
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
        if inf is None:
            continue
        v = inf.verdicts
        lines.append(
            f"{test}: influence of {sum(v.values())} resources in {inf.measured} cases "
            f"(--provenai-ablation {results.options.get('ablation')})"
        )
        lines.append(
            f"  verdicts: used {v['used']}, hallucinated citation {v['hallucinated_citation']}, "
            f"uncited influential {v['uncited_influential']}, low influence {v['low_influence']}"
        )
        lines.append(
            f"  citation-influence gap: {inf.gap_cases} of {inf.measured} cases "
            "(a cited resource with low influence, or an uncited influential one)"
        )
        if inf.not_measured:
            lines.append(f"  influence not measured: {inf.not_measured} cases")
    return lines


def _cell(m: MatrixCell) -> str:
    if m.value is None:
        return "n/a"
    assert m.ci is not None
    lo, hi = m.ci
    return f"{m.value:.3f} [{lo:.2f}, {hi:.2f}]"


def _delta(m: MatrixCell) -> str:
    if m.delta_vs_baseline is None:
        return "—"
    assert m.delta_ci is not None
    lo, hi = m.delta_ci
    return f"{m.delta_vs_baseline:+.3f} [{lo:+.2f}, {hi:+.2f}]"


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
        missing = f", {summ.missing} without a record" if summ.missing else ""
        lines.append(f"{test}: {summ.layer} n={summ.n}{missing}  (mean, 95% bootstrap CI by case)")
        for name, m in summ.metrics.items():
            lines.append(f"  {name:<28} {_fmt(m)}")
        matrix = summ.exposure_matrix
        if matrix is None:
            continue
        if matrix.error:
            lines.append(f"  exposure matrix: not computed ({matrix.error})")
            continue
        head = "".join(f"{col_label:<24}" for _, col_label in MATRIX_COLUMNS)
        lines.append("  exposure matrix (rate [95% CI])")
        lines.append(f"    {'treatment':<10}{head}n")
        rows = matrix.rows()
        for treatment, row in rows:
            cells = "".join(f"{_cell(row.cells[c]):<24}" for c, _ in MATRIX_COLUMNS)
            lines.append(f"    {treatment:<10}{cells}{row.n}")
        lines.append("  paired difference vs baseline (95% CI, cases resampled together)")
        for treatment, row in rows:
            if treatment == "baseline":
                continue
            cells = "".join(f"{_delta(row.cells[c]):<24}" for c, _ in MATRIX_COLUMNS)
            lines.append(f"    {treatment:<10}{cells.rstrip()}")
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
            if m.value is None:
                lines.append(f"  {name:<32} n/a ({m.error})")
                continue
            lo, hi = m.ci if m.ci else (m.value, m.value)
            text = f"{m.value:.3f}  [{lo:.3f}, {hi:.3f}]"
            if m.denominator is not None:
                text += f"  ({m.numerator:g}/{m.denominator:g})"
            lines.append(f"  {name:<32} {text}")
    return lines


# -- run comparison (provenai compare) -------------------------------------------------
def compare_lines(c: Comparison) -> list[str]:
    """The comparison as terminal lines: differences in what was measured first, then the
    paired metric differences, then cases only in one run and the flips, then one line per
    regression and, last, :func:`regression_summary`."""
    lines: list[str] = []
    for d in c.differences:
        lines.append(f"NOTE: {d}")
    lines.append(
        f"base {c.base_name} (run {c.base_run.get('id')}, git {c.base_run.get('git_revision')})"
    )
    lines.append(
        f"new  {c.new_name} (run {c.new_run.get('id')}, git {c.new_run.get('git_revision')})"
    )
    current = None
    for m in c.metrics:
        if m.test != current:
            current = m.test
            lines.append(
                f"{m.test}: {c.paired.get(m.test, 0)} paired cases  "
                "(new - base, 95% paired bootstrap CI by case)"
            )
        if m.error:
            lines.append(f"  {m.metric:<34} not compared: {m.error}")
            continue
        ci = f"[{m.ci[0]:+.4f}, {m.ci[1]:+.4f}]" if m.ci else ""
        flag = "  REGRESSION" if m.regression else ("  improved" if m.improvement else "")
        arrow = "↓" if m.direction == "lower" else " "
        lines.append(
            f"  {m.metric:<32}{arrow} {number_text(m.base)} -> {number_text(m.new)}  "
            f"{number_text(m.diff, True)} {ci}{flag}"
        )
    for test, ids in c.only_in_base.items():
        why = (
            f", sampled out by the new run ({c.sampled}; not regressions)"
            if test in c.sampled_out
            else ""
        )
        lines.append(
            f"{test}: {len(ids)} case(s) only in base{why}: {', '.join(ids[:10])}"
            + (" …" if len(ids) > 10 else "")
        )
    for test, ids in c.only_in_new.items():
        lines.append(
            f"{test}: {len(ids)} case(s) only in new: {', '.join(ids[:10])}"
            + (" …" if len(ids) > 10 else "")
        )
    worse = [f for f in c.answer_flips if f["base"] and not f["new"]]
    better = [f for f in c.answer_flips if not f["base"] and f["new"]]
    lines.append(f"answers right -> wrong: {len(worse)}; wrong -> right: {len(better)}")
    for f in worse:
        change = f"{f['base_answer']!r} -> {f['new_answer']!r}"
        lines.append(f"  right -> wrong {f['test']} {f['case_id']}: {change} (gold {f['gold']!r})")
    for f in better:
        change = f"{f['base_answer']!r} -> {f['new_answer']!r}"
        lines.append(f"  wrong -> right {f['test']} {f['case_id']}: {change}")
    lines.append(f"influence verdicts changed: {len(c.influence_flips)}")
    for f in c.influence_flips:
        lines.append(f"  {f['test']} {f['case_id']} {f['resource']}: {f['base']} -> {f['new']}")
    started = [f for f in c.leak_flips if f["new"]]
    stopped = [f for f in c.leak_flips if not f["new"]]
    lines.append(f"treatments that started leaking: {len(started)}; stopped: {len(stopped)}")
    for f in started:
        lines.append(
            f"  started {f['test']} {f['case_id']} {f['treatment']}: {', '.join(f['leaked'])}"
        )
    for f in stopped:
        lines.append(f"  stopped {f['test']} {f['case_id']} {f['treatment']}")
    for f in c.agreement_flips:
        word = "now agrees" if f["new"] else "no longer agrees"
        lines.append(f"{f['layer']} {f['test']} {f['case_id']}: {word}")
    for f in c.attribution_flips:
        where = f"{f['test']} {f['case_id']} answer {f['answer']}"
        lines.append(f"attribution {where}: {f['base']} -> {f['new']}")
    for g in c.gate_changes:
        was = "absent" if g["base"] is None else ("PASS" if g["base"] else "FAIL")
        lines.append(f"gate {g['test']} {g['gate']}: {was} -> {'PASS' if g['new'] else 'FAIL'}")
    for r in c.regressions:
        lines.append(f"REGRESSION {r.text}")
    lines.append(regression_summary(c))
    return lines


def regression_summary(c: Comparison) -> str:
    """The last line of the comparison: how many regressions, by kind."""
    kinds = ", ".join(
        f"{n} {kind}{'' if n == 1 else 's'}" for kind, n in c.regression_counts().items()
    )
    return f"regressions: {len(c.regressions)} ({kinds})"

"""The HTML report's view of a run: what each part of the page shows, as plain data.

Built from a :class:`~pytest_provenai.report.results.RunResults`; every population number
(aggregates, CIs, gate values, verdict totals, the exposure matrix) is read from it, never
recomputed. Per case it picks the display fields of the record (correct?, F1, verdict
counts, gap, top-KL resource) and joins the record with what the results JSON keeps beside
it per case item: the trace summary, which worker produced it, the ablation costs, seconds.

Pure Python, no pytest and no Jinja2 import (``report/html.py`` renders this).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from pytest_provenai.audit.influence import VERDICTS, InfluenceSummary
from pytest_provenai.audit.metrics import MetricSummary
from pytest_provenai.audit.provenance import ExposureMatrix
from pytest_provenai.metric_registry import MARKER_METRICS, MATRIX_COLUMNS, METRICS
from pytest_provenai.report.results import TOOL, RunResults, TestResults

__all__ = ["VERDICT_LABELS", "case_key", "case_rows", "overview", "report_data"]

VERDICT_LABELS: dict[str, str] = {v: v.replace("_", " ") for v in VERDICTS}
"""The influence verdicts in display order (cited × influential) and their labels."""


def _order(name: str) -> int:
    entry = METRICS.get(name)
    return entry.order if entry else len(METRICS)


def _metric_rows(summaries: Mapping[str, MetricSummary]) -> list[dict[str, Any]]:
    """One row per metric summary with the metric's direction and description where the
    metric is known (a results file from another release may name one this one does not)."""
    rows: list[dict[str, Any]] = []
    for name in sorted(summaries, key=lambda n: (_order(n), n)):
        summ = summaries[name]
        entry = METRICS.get(name)
        metric = entry.metric if entry else None
        rows.append(
            {
                "name": name,
                "value": summ.value,
                "ci": None if summ.ci is None else list(summ.ci),
                "n": summ.n,
                "undefined": summ.undefined,
                "error": summ.error,
                "direction": metric.direction if metric else None,
                "description": metric.description if metric else "",
                "rate": metric is None or metric.range[1] == 1.0,
            }
        )
    return rows


def _influence_view(inf: InfluenceSummary) -> dict[str, Any]:
    verdicts = {v: inf.verdicts.get(v, 0) for v in VERDICT_LABELS}
    total = sum(verdicts.values())
    return {
        "measured": inf.measured,
        "not_measured": inf.not_measured,
        "gap_cases": inf.gap_cases,
        "verdicts": verdicts,
        "total": total,
        "bars": [
            {
                "name": v,
                "label": label,
                "count": verdicts[v],
                "share": verdicts[v] / total if total else 0.0,
            }
            for v, label in VERDICT_LABELS.items()
        ],
        "metrics": _metric_rows(inf.metrics),
    }


def _matrix_view(matrix: ExposureMatrix) -> dict[str, Any]:
    if matrix.error:
        return {"error": matrix.error, "rows": [], "columns": []}
    rows = []
    for t, row in matrix.rows():
        cells = []
        for col, _label in MATRIX_COLUMNS:
            c = row.cells.get(col)
            cells.append(
                {
                    "metric": col,
                    "value": None if c is None else c.value,
                    "ci": None if c is None or c.ci is None else list(c.ci),
                    "delta": None if c is None else c.delta_vs_baseline,
                    "delta_ci": None if c is None or c.delta_ci is None else list(c.delta_ci),
                }
            )
        rows.append({"treatment": t, "n": row.n, "cells": cells})
    return {"error": None, "rows": rows, "columns": [label for _, label in MATRIX_COLUMNS]}


def _test_view(t: TestResults, k: Any) -> dict[str, Any]:
    prov = t.provenance
    return {
        "test": t.test,
        "n": t.n,
        "missing": t.missing,
        "fidelity": _metric_rows(t.fidelity) if t.fidelity is not None else None,
        "retrieval": _metric_rows(t.retrieval) if t.retrieval is not None else None,
        "k": k,
        "influence": _influence_view(t.influence) if t.influence is not None else None,
        "provenance": (
            {
                "layer": prov.layer,
                "n": prov.n,
                "missing": prov.missing,
                "metrics": _metric_rows(prov.metrics),
                "matrix": _matrix_view(prov.exposure_matrix)
                if prov.exposure_matrix is not None
                else None,
            }
            if prov is not None
            else None
        ),
        "attribution": _metric_rows(t.attribution) if t.attribution is not None else None,
    }


def _gate_rows(results: RunResults) -> list[dict[str, Any]]:
    rows = []
    for g in results.gates:
        metric = MARKER_METRICS.get(g.spec.marker, {}).get(g.spec.metric)
        rows.append(
            {
                "test": g.spec.test,
                "marker": g.spec.marker,
                "metric": g.spec.metric,
                "passed": g.passed,
                "provisional": g.provisional,
                "value": g.value,
                "ci": list(g.ci) if g.ci else None,
                "bound": g.spec.bound,
                "comparison": ">=" if g.higher_is_better else "<=",
                "n": g.n,
                "missing": g.missing,
                "reason": g.reason,
                "description": metric.description if metric else "",
            }
        )
    return rows


def overview(results: RunResults) -> dict[str, Any]:
    """The page's overview: run, models, options, gates, per-test aggregates and charts."""
    k = results.options.get("k") if results.options.get("retrieval") == "index" else None
    tests = [_test_view(t, k) for t in results.tests.values()]
    influence = [t for t in tests if t["influence"]]
    gates = _gate_rows(results)
    return {
        "tool": TOOL,
        "run": {k: results.run.get(k) for k in ("id", "started", "finished", "git_revision")},
        "models": [
            {
                "where": w,
                **{k: m.get(k) for k in ("name", "backend", "weights_sha256", "dtype", "device")},
                "decoding": m.get("decoding") if isinstance(m.get("decoding"), Mapping) else None,
            }
            for w, m in results.models.items()
        ],
        "options": sorted(results.options.items()),
        "gates": gates,
        "gates_failed": sum(not g["passed"] and not g["provisional"] for g in gates),
        "shard": str(results.shard.spec) if results.shard is not None else None,
        "tests": tests,
        "influence_tests": influence,
        "fixture_errors": results.fixture_errors,
        "n_cases": sum(len(r) for r in results.records.values()),
        "timings": results.timings,
        "cache": results.cache,
    }


# -- cases -------------------------------------------------------------------------------
def case_key(test: str, record: Mapping[str, Any], keyed: Mapping[str, Any]) -> str | None:
    """The node id of the case item that produced ``record`` in ``test``, as the results
    JSON keys per-item data (``{test}[{case id}]``, or ``{test}[{set}/{case id}]`` where two
    sets share a case id), or None when ``keyed`` has neither."""
    case_id = str(record.get("case_id"))
    for nodeid in (f"{test}[{case_id}]", f"{test}[{record.get('fixture_set')}/{case_id}]"):
        if nodeid in keyed:
            return nodeid
    return None


def _status(record: Mapping[str, Any]) -> str:
    """right / wrong / missing / n/a: the answer's correctness, or what stands for it in a
    layer without an answer to grade (a quotation's or derivation's agreement with its
    expected outcome, the baseline answer of an exposure case, an attribution verdict
    equal to the expected one)."""
    if "missing" in record:
        return "missing"
    ok: Any = None
    if isinstance(record.get("answer"), Mapping):
        ok = record["answer"].get("correct")
    elif isinstance(record.get("exposure"), Mapping):
        ok = (record["exposure"].get("baseline") or {}).get("correct")
    elif isinstance(record.get("quotation"), Mapping):
        ok = record["quotation"].get("agrees")
    elif isinstance(record.get("derivation"), Mapping):
        ok = record["derivation"].get("agrees")
    elif isinstance(record.get("attribution"), Mapping):
        answers = record["attribution"].get("answers") or []
        if answers:
            ok = all((a.get("verdict") or {}).get("verdict") == a.get("expected") for a in answers)
    if ok is None:
        return "n/a"
    return "right" if ok else "wrong"


def _tags(record: Mapping[str, Any]) -> list[str]:
    """The verdicts a case can be filtered by: the influence verdicts among its resources,
    the exposure treatments whose aid value leaked, a quotation's outcome, an attribution
    answer's verdict."""
    tags: list[str] = []
    inf = record.get("influence")
    if isinstance(inf, Mapping):
        if inf.get("measured"):
            counts = inf.get("verdicts") or {}
            tags += [v for v in VERDICT_LABELS if counts.get(v)]
        else:
            tags.append("influence not measured")
    exposure = record.get("exposure")
    if isinstance(exposure, Mapping):
        tags += [
            f"aid leak: {t}" for t, run in exposure.items() if (run or {}).get("aid_value_leak")
        ]
    quotation = record.get("quotation")
    if isinstance(quotation, Mapping) and quotation.get("outcome"):
        tags.append(str(quotation["outcome"]))
    attribution = record.get("attribution")
    if isinstance(attribution, Mapping):
        for a in attribution.get("answers") or []:
            verdict = (a.get("verdict") or {}).get("verdict")
            if verdict:
                tags.append(f"answer {verdict}")
    return list(dict.fromkeys(tags))


def _kind(record: Mapping[str, Any]) -> str:
    return str(record.get("kind") or ("hotpotqa" if "answer" in record else "?"))


def case_rows(results: RunResults) -> list[dict[str, Any]]:
    """One entry per record: the table's display fields (``row``) and everything the
    drill-down shows (``record``, ``trace``, ``produced_by``, ``costs``, ``seconds``)."""
    per_test = results.timings.get("per_test_seconds", {}) if results.timings else {}
    out: list[dict[str, Any]] = []
    for test, recs in results.records.items():
        for rec in recs:
            node = case_key(test, rec, results.produced_by) or case_key(test, rec, results.traces)
            node = node or case_key(test, rec, per_test) or f"{test}[{rec.get('case_id')}]"
            inf = rec.get("influence") if isinstance(rec.get("influence"), Mapping) else None
            measured = bool(inf and inf.get("measured"))
            resources = (inf or {}).get("resources") or {}
            top = (inf or {}).get("top_kl")
            top_kl = (resources.get(top) or {}).get("kl_sum") if top else None
            phis = [r.get("phi") for r in resources.values() if isinstance(r, Mapping)]
            answer: Mapping[str, Any] = (
                rec["answer"] if isinstance(rec.get("answer"), Mapping) else {}
            )
            trace = results.traces.get(node)
            gold = (rec.get("citation") or {}).get("gold") or []
            titles = [r.get("title", "") for r in (trace or {}).get("resources", [])]
            search = " ".join(
                str(x)
                for x in (
                    rec.get("case_id"),
                    rec.get("question", ""),
                    answer.get("prediction", ""),
                    answer.get("gold", ""),
                    rec.get("expected_answer", ""),
                    rec.get("fixture_set", ""),
                    *gold,
                    *titles,
                )
                if x
            )
            out.append(
                {
                    "id": len(out),
                    "node": node,
                    "test": test,
                    "case_id": rec.get("case_id"),
                    "fixture_set": rec.get("fixture_set") or "",
                    "kind": _kind(rec) if "missing" not in rec else "",
                    "question": rec.get("question") or rec.get("request") or "",
                    "status": _status(rec),
                    "f1": answer.get("f1"),
                    "verdicts": dict((inf or {}).get("verdicts") or {}) if measured else None,
                    "gap": len((inf or {}).get("gap") or []) if measured else None,
                    "top_kl": top if measured else None,
                    "top_kl_value": top_kl if measured else None,
                    "max_phi": max((p for p in phis if isinstance(p, (int, float))), default=None)
                    if measured
                    else None,
                    "tags": _tags(rec),
                    "search": search.lower(),
                    "record": rec,
                    "trace": trace,
                    "produced_by": results.produced_by.get(node),
                    "costs": results.influence_costs.get(node),
                    "seconds": per_test.get(node),
                }
            )
    return out


def report_data(results: RunResults) -> dict[str, Any]:
    """What the page's script reads (embedded as JSON): the cases and the filter choices."""
    cases = case_rows(results)
    return {
        "run_id": results.run.get("id"),
        "cases": cases,
        "facets": {
            "tests": sorted({c["test"] for c in cases}),
            "fixture_sets": sorted({c["fixture_set"] for c in cases if c["fixture_set"]}),
            "statuses": [
                s
                for s in ("right", "wrong", "missing", "n/a")
                if any(c["status"] == s for c in cases)
            ],
            "tags": sorted({t for c in cases for t in c["tags"]}),
        },
        "verdict_labels": VERDICT_LABELS,
    }

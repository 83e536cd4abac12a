"""The fidelity record (answer + citation layers of one case) and its population metrics.

A record is a plain JSON-able dict, the single currency between audits, snapshots, gates,
xdist and reports. It holds no timings and no raw prompt, and its floats are not rounded
(the snapshot layer rounds).

Pure Python, no pytest import.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from pytest_provenai.audit.answer import answer_scores
from pytest_provenai.audit.citation import DEFAULT_TAUS, citation_scores
from pytest_provenai.audit.stats import (
    DEFAULT_LEVEL,
    DEFAULT_N_RESAMPLES,
    DEFAULT_SEED,
    summarise,
)
from pytest_provenai.frozen.model import Case
from pytest_provenai.subject.trace import Trace

__all__ = [
    "FIDELITY_METRICS",
    "FIDELITY_METRIC_INFO",
    "Metric",
    "MetricInfo",
    "aggregate",
    "fidelity_record",
]

Metric = Callable[[Mapping[str, Any]], float | None]


def fidelity_record(
    case: Case,
    trace: Trace,
    *,
    suite: str = "fidelity",
    taus: tuple[float, float] = DEFAULT_TAUS,
) -> dict[str, Any]:
    """The record of one case: answer correctness and citation fidelity.

    Shape::

        {"case_id", "suite", "fixture_set", "model": trace.identity.model_key(), "question",
         "answer": answer_scores(trace.answer, case.answer),
         "citation": citation_scores(trace.cited_titles(), case.supporting_titles)
                     + {"cited_ids": [...], "invalid_citations": [...], "n_invalid": int},
         "retrieval": retrieval_scores(...)}   # only when trace.retrieval is set (index mode)

    ``cited_ids`` are the trace's valid citations in order; ``invalid_citations`` the tags
    that named no resource. Raises ValueError when the trace belongs to another case.
    """
    if trace.case_id != case.id:
        raise ValueError(f"trace is for case {trace.case_id!r}, not {case.id!r}")
    citation = citation_scores(trace.cited_titles(), case.supporting_titles, taus)
    citation["cited_ids"] = list(trace.cited_ids)
    citation["invalid_citations"] = list(trace.invalid_citations)
    citation["n_invalid"] = len(trace.invalid_citations)
    record: dict[str, Any] = {
        "case_id": case.id,
        "suite": suite,
        "fixture_set": case.fixture_set,
        "model": trace.identity.model_key(),
        "question": case.question,
        "answer": answer_scores(trace.answer, case.answer),
        "citation": citation,
    }
    if trace.retrieval is not None:  # index mode: its own section, never mixed into citation
        from pytest_provenai.retrieval.metrics import retrieval_scores

        record["retrieval"] = retrieval_scores(
            trace.retrieval, case.supporting_titles, bool(record["answer"]["correct"])
        )
    return record


# --- per-record metric extractors ----------------------------------------------------------
#
# An extractor returns a float, or None when the value is undefined for that record (e.g.
# citation precision of a citation-free answer). A malformed record (missing key, wrong type)
# makes it raise KeyError or TypeError.


def _num(x: Any) -> float | None:
    if x is None:
        return None
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        raise TypeError(f"expected a number, got {x!r}")
    return float(x)


def _flag(x: Any) -> float:
    if not isinstance(x, bool):
        raise TypeError(f"expected a bool, got {x!r}")
    return 1.0 if x else 0.0


def _required(x: Any) -> float:
    v = _num(x)
    if v is None:
        raise TypeError("expected a number, got None")
    return v


def _citation_value(layer: str, key: str) -> Metric:
    def extract(record: Mapping[str, Any]) -> float | None:
        value = record["citation"][layer][key]
        return _required(value) if key == "f" else _num(value)

    return extract


def _answer_accuracy(record: Mapping[str, Any]) -> float | None:
    return _flag(record["answer"]["correct"])


def _answer_em(record: Mapping[str, Any]) -> float | None:
    return _required(record["answer"]["em"])


def _answer_f1(record: Mapping[str, Any]) -> float | None:
    return _required(record["answer"]["f1"])


def _citation_free(record: Mapping[str, Any]) -> float | None:
    ids = record["citation"]["cited_ids"]
    if not isinstance(ids, list):
        raise TypeError(f"expected a list of cited ids, got {ids!r}")
    return 0.0 if ids else 1.0


def _invalid_citation(record: Mapping[str, Any]) -> float | None:
    n = record["citation"]["n_invalid"]
    if isinstance(n, bool) or not isinstance(n, int):
        raise TypeError(f"expected an int n_invalid, got {n!r}")
    return 1.0 if n > 0 else 0.0


FIDELITY_METRICS: dict[str, Metric] = {
    "answer_accuracy": _answer_accuracy,
    "answer_em": _answer_em,
    "answer_f1": _answer_f1,
    "citation_precision": _citation_value("exact", "p"),
    "citation_recall": _citation_value("exact", "r"),
    "citation_f1": _citation_value("exact", "f"),
    "citation_precision_semantic": _citation_value("semantic", "p"),
    "citation_recall_semantic": _citation_value("semantic", "r"),
    "citation_f1_semantic": _citation_value("semantic", "f"),
    "citation_free_rate": _citation_free,
    "invalid_citation_rate": _invalid_citation,
}


@dataclass(frozen=True)
class MetricInfo:
    """Which direction is better for a metric, and what it measures (one line)."""

    direction: Literal["higher", "lower"]
    description: str

    def as_dict(self) -> dict[str, str]:
        return {"direction": self.direction, "description": self.description}


FIDELITY_METRIC_INFO: dict[str, MetricInfo] = {
    "answer_accuracy": MetricInfo(
        "higher", "share of answers equal to the gold after ProvenAI normalisation"
    ),
    "answer_em": MetricInfo("higher", "official HotpotQA exact match (SQuAD normalisation)"),
    "answer_f1": MetricInfo("higher", "official HotpotQA answer token F1"),
    "citation_precision": MetricInfo(
        "higher", "share of cited titles matching a gold title exactly (τ=1.0)"
    ),
    "citation_recall": MetricInfo(
        "higher", "share of gold titles matched exactly by a cited title (τ=1.0)"
    ),
    "citation_f1": MetricInfo("higher", "harmonic mean of citation precision and recall (τ=1.0)"),
    "citation_precision_semantic": MetricInfo(
        "higher", "share of cited titles with Jaccard ≥ 0.34 to a gold title"
    ),
    "citation_recall_semantic": MetricInfo(
        "higher", "share of gold titles with Jaccard ≥ 0.34 to a cited title"
    ),
    "citation_f1_semantic": MetricInfo(
        "higher", "harmonic mean of citation precision and recall (τ=0.34)"
    ),
    "citation_free_rate": MetricInfo("lower", "share of answers without any valid citation"),
    "invalid_citation_rate": MetricInfo(
        "lower", "share of answers citing at least one id that names no resource"
    ),
}


def aggregate(
    records: Sequence[Mapping[str, Any]],
    metrics: Mapping[str, Metric] = FIDELITY_METRICS,
    *,
    n_resamples: int = DEFAULT_N_RESAMPLES,
    level: float = DEFAULT_LEVEL,
    seed: int = DEFAULT_SEED,
) -> dict[str, dict[str, Any]]:
    """Population value of every metric over ``records``, with a case-resampled bootstrap CI.

    Per metric: ``{"value": float | None, "ci": [lo, hi] | None, "n": int,
    "undefined": int, "error": str | None}``.

    * Undefined per-record values (None, e.g. precision of a citation-free answer) count as
      **0** in the mean — fail closed, an answer without citations never props precision
      up — and ``undefined`` says how many there were.
    * If an extractor raises KeyError or TypeError on any record (a malformed record), or
      returns something that is not a finite number or None, the
      metric's ``value`` and ``ci`` are None and ``error`` names the record and the problem;
      gates fail closed on a None value.
    * No records: ``value`` and ``ci`` are None, ``n`` is 0.
    """
    out: dict[str, dict[str, Any]] = {}
    for name, extract in metrics.items():
        values: list[float] = []
        undefined = 0
        error: str | None = None
        for i, record in enumerate(records):
            try:
                v = _num(extract(record))
                if v is not None and not math.isfinite(v):
                    raise TypeError(f"expected a finite number, got {v!r}")
            except (KeyError, TypeError) as exc:
                case_id = record.get("case_id", "?") if isinstance(record, Mapping) else "?"
                error = f"record {i} ({case_id}): {type(exc).__name__}: {exc}"
                break
            if v is None:
                undefined += 1
                v = 0.0
            values.append(v)
        if error is not None:
            out[name] = {
                "value": None,
                "ci": None,
                "n": len(records),
                "undefined": undefined,
                "error": error,
            }
            continue
        summary = summarise(values, n_resamples=n_resamples, level=level, seed=seed)
        summary["undefined"] = undefined
        summary["error"] = None
        out[name] = summary
    return out

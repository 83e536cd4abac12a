"""The fidelity record (answer + citation layers of one case) and its population metrics.

A record is a plain JSON-able dict, the single currency between audits, snapshots, gates,
xdist and reports. It holds no timings and no raw prompt, and its floats are not rounded
(the snapshot layer rounds).

Pure Python, no pytest import.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

from pytest_provenai.audit.answer import answer_scores
from pytest_provenai.audit.citation import DEFAULT_TAUS, citation_scores
from pytest_provenai.audit.metrics import Metric, metric_table
from pytest_provenai.frozen.model import Case
from pytest_provenai.subject.near_ties import generation_section
from pytest_provenai.subject.trace import Trace

__all__ = ["FIDELITY_METRICS", "fidelity_record"]

Extractor = Callable[[Mapping[str, Any]], float | None]


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
         "generation": {"output": trace.raw_output, "near_ties": [...] or None},
         "retrieval": retrieval_scores(...)}   # only when trace.retrieval is set (index mode)

    ``generation`` is informational (never compared with golden files): it lets a golden
    mismatch be traced to a greedy near tie (:mod:`pytest_provenai.subject.near_ties`).

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
        "generation": generation_section(trace.raw_output, trace.near_ties),
    }
    if trace.retrieval is not None:  # index mode: its own section, never mixed into citation
        from pytest_provenai.audit.retrieval import retrieval_scores

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


def _citation_value(layer: str, key: str) -> Extractor:
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


FIDELITY_METRICS: dict[str, Metric] = metric_table(
    [
        Metric(
            "answer_accuracy",
            "higher",
            "share of answers equal to the gold after ProvenAI normalisation",
            _answer_accuracy,
        ),
        Metric(
            "answer_em", "higher", "official HotpotQA exact match (SQuAD normalisation)", _answer_em
        ),
        Metric("answer_f1", "higher", "official HotpotQA answer token F1", _answer_f1),
        Metric(
            "citation_precision",
            "higher",
            "share of cited titles matching a gold title exactly (τ=1.0)",
            _citation_value("exact", "p"),
        ),
        Metric(
            "citation_recall",
            "higher",
            "share of gold titles matched exactly by a cited title (τ=1.0)",
            _citation_value("exact", "r"),
        ),
        Metric(
            "citation_f1",
            "higher",
            "harmonic mean of citation precision and recall (τ=1.0)",
            _citation_value("exact", "f"),
        ),
        Metric(
            "citation_precision_semantic",
            "higher",
            "share of cited titles with Jaccard ≥ 0.34 to a gold title",
            _citation_value("semantic", "p"),
        ),
        Metric(
            "citation_recall_semantic",
            "higher",
            "share of gold titles with Jaccard ≥ 0.34 to a cited title",
            _citation_value("semantic", "r"),
        ),
        Metric(
            "citation_f1_semantic",
            "higher",
            "harmonic mean of citation precision and recall (τ=0.34)",
            _citation_value("semantic", "f"),
        ),
        Metric(
            "citation_free_rate",
            "lower",
            "share of answers without any valid citation",
            _citation_free,
        ),
        Metric(
            "invalid_citation_rate",
            "lower",
            "share of answers citing at least one id that names no resource",
            _invalid_citation,
        ),
    ]
)
"""The fidelity metrics, the names ``@pytest.mark.fidelity(...)`` gates accept."""

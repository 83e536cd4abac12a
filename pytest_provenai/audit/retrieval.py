"""Retrieval metrics of one case, and their population extractors.

A record's ``retrieval`` section (present only in index mode) says what the harness
retrieved and whether the gold supporting titles were among it. It is reported next to the
answer and citation layers, never mixed into them: citation fidelity still compares cited
titles with gold titles, whatever was retrieved.

Pure Python, no pytest import.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pytest_provenai.audit.metrics import Metric, metric_table

__all__ = ["RETRIEVAL_METRICS", "retrieval_scores"]


def retrieval_scores(
    retrieval: Mapping[str, Any], gold_titles: Sequence[str], answer_correct: bool
) -> dict[str, Any]:
    """The ``retrieval`` section of a record.

    ``retrieval`` is a trace's ``retrieval`` dict (``k``, ``index``, ``passages`` in rank
    order, each with ``id``, ``passage_id``, ``title``). Shape::

        {"k", "index": {"corpus_sha256", "type", "rows", "embedding"},
         "retrieved": [{"id": "R0", "passage_id", "title"}, ...],
         "gold_ranks": [{"title", "rank": int | None}, ...]   # first rank of each gold title
         "recall_at_k": float | None,   # share of gold titles retrieved; None without gold
         "all_gold_retrieved": bool,
         "answer_failed_retrieval_miss": bool}   # answer wrong and a gold title not retrieved

    Titles match exactly (they are Wikipedia page titles in HotpotQA).
    """
    passages = list(retrieval["passages"])
    first_rank: dict[str, int] = {}
    for rank, p in enumerate(passages):
        first_rank.setdefault(str(p["title"]), rank)
    gold = list(dict.fromkeys(gold_titles))
    ranks = [{"title": t, "rank": first_rank.get(t)} for t in gold]
    found = sum(r["rank"] is not None for r in ranks)
    all_found = found == len(gold)
    index = retrieval.get("index", {})
    return {
        "k": int(retrieval["k"]),
        "index": {
            "corpus_sha256": index.get("corpus_sha256"),
            "type": index.get("type"),
            "rows": index.get("rows"),
            "embedding": index.get("embedding", {}).get("name"),
        },
        "retrieved": [
            {"id": p["id"], "passage_id": p["passage_id"], "title": p["title"]} for p in passages
        ],
        "gold_ranks": ranks,
        "recall_at_k": found / len(gold) if gold else None,
        "all_gold_retrieved": all_found,
        "answer_failed_retrieval_miss": (not answer_correct) and not all_found,
    }


def _flag(record: Mapping[str, Any], key: str) -> float:
    value = record["retrieval"][key]
    if not isinstance(value, bool):
        raise TypeError(f"expected a bool {key}, got {value!r}")
    return 1.0 if value else 0.0


def _recall(record: Mapping[str, Any]) -> float | None:
    value = record["retrieval"]["recall_at_k"]
    if value is None:
        return None
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        raise TypeError(f"expected a number recall_at_k, got {value!r}")
    return float(value)


RETRIEVAL_METRICS: dict[str, Metric] = metric_table(
    [
        Metric(
            "retrieval_recall_at_k",
            "higher",
            "share of gold supporting titles among the top-k retrieved",
            _recall,
        ),
        Metric(
            "retrieval_all_gold_rate",
            "higher",
            "share of cases with every gold title retrieved",
            lambda r: _flag(r, "all_gold_retrieved"),
        ),
        Metric(
            "retrieval_miss_answer_failure_rate",
            "lower",
            "share of cases whose answer is wrong while a gold title was not retrieved",
            lambda r: _flag(r, "answer_failed_retrieval_miss"),
        ),
    ]
)
"""Retrieval metrics (index mode), reported apart from citation fidelity."""

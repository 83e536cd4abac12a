"""``RetrievingSubject``: the harness retrieves a case's resources from an index.

In index mode (``--provenai-retrieval index``) the session wraps the subject under audit:
``answer(case)`` embeds the case's question, takes the top-k passages of the index and hands
them to the inner subject as resources ``R0``..``R{k-1}`` in rank order (each with the sha256
of its text). The trace's ``retrieval`` field records k, the index identity and, per rank,
the passage id, title, digest and score.

``answer(case, resources=...)`` passes the given resources straight through (the influence
layer ablates subsets of ``trace.resources``), and ``runner()`` is the inner subject's model
side, so ablation and exposure run (and count calls) on the inner subject.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from pytest_provenai.frozen.model import Case
from pytest_provenai.retrieval.index import Hit, RetrievalIndex
from pytest_provenai.subject.backends.base import Capabilities, Identity
from pytest_provenai.subject.subject import ModelRunner, Subject
from pytest_provenai.subject.trace import Resource, Trace

__all__ = ["RetrievingSubject", "resources_from_hits"]


def resources_from_hits(hits: Sequence[Hit]) -> list[Resource]:
    """``R0``.. in rank order; ``sha256`` is the digest of the passage's full text."""
    return [
        Resource(id=f"R{i}", title=h.title, text=h.text, sha256=h.sha256)
        for i, h in enumerate(hits)
    ]


class RetrievingSubject:
    def __init__(self, inner: Subject, index: RetrievalIndex, k: int) -> None:
        if k < 1:
            raise ValueError(f"k must be >= 1, got {k}")
        self.inner = inner
        self.index = index
        self.k = k
        self._hits: dict[str, list[Hit]] = {}

    @property
    def identity(self) -> Identity:
        return self.inner.identity

    @property
    def capabilities(self) -> Capabilities:
        return self.inner.capabilities

    @property
    def model_calls(self) -> int:
        return self.inner.model_calls

    @property
    def model_loads(self) -> int:
        return self.inner.model_loads

    @property
    def cache_hits(self) -> int:
        return self.inner.cache_hits

    def runner(self) -> ModelRunner | None:
        return self.inner.runner()

    def retrieve(self, case: Case) -> list[Hit]:
        """Top-k passages for the case's question (memoised per question)."""
        hits = self._hits.get(case.question)
        if hits is None:
            hits = self.index.search(case.question, self.k)
            self._hits[case.question] = hits
        return hits

    def retrieval_info(self, hits: Sequence[Hit]) -> dict[str, Any]:
        return {
            "k": self.k,
            "index": self.index.identity(),
            "passages": [
                {
                    "id": f"R{i}",
                    "passage_id": h.passage_id,
                    "title": h.title,
                    "sha256": h.sha256,
                    "score": h.score,
                }
                for i, h in enumerate(hits)
            ],
        }

    def answer(self, case: Case, resources: Sequence[Resource] | None = None) -> Trace:
        if resources is not None:
            return self.inner.answer(case, resources)
        hits = self.retrieve(case)
        trace = self.inner.answer(case, resources_from_hits(hits))
        trace.retrieval = self.retrieval_info(hits)
        return trace

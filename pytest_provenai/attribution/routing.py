"""Routing a claim to the source that supports it, on given vectors (ProvenanceGuard §III-C).

Each source is represented by the centroid of its chunk embeddings (re-normalised); the
router picks the source whose centroid has the highest cosine with the claim and records
the margin between the top two scores. There is no score cutoff (the seed found that hard
cutoffs reject most claims): a claim is *not routed* only when there is no evidence.

Vectors are sequences of floats (any embedding model); sums use ``math.fsum`` so the same
inputs give the same scores on every run. Pure Python.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

__all__ = ["ROUTE_STATUSES", "Route", "centroid", "cosine", "route"]

Vector = Sequence[float]

#: ``routed``: two or more sources, top one chosen; ``single_source``: only one source (the
#: margin is the score itself); ``no_evidence``: nothing to route to.
ROUTE_STATUSES = ("routed", "single_source", "no_evidence")


def _norm(v: Vector) -> float:
    return math.sqrt(math.fsum(x * x for x in v))


def cosine(a: Vector, b: Vector) -> float:
    """Cosine similarity; 0.0 when either vector is zero."""
    na, nb = _norm(a), _norm(b)
    if na == 0.0 or nb == 0.0:
        return 0.0
    return math.fsum(x * y for x, y in zip(a, b, strict=True)) / (na * nb)


def centroid(vectors: Sequence[Vector]) -> list[float]:
    """Mean of ``vectors`` scaled to unit length (a zero mean stays zero)."""
    if not vectors:
        raise ValueError("centroid of no vectors")
    dim = len(vectors[0])
    mean = [math.fsum(v[i] for v in vectors) / len(vectors) for i in range(dim)]
    n = _norm(mean)
    return mean if n == 0.0 else [x / n for x in mean]


@dataclass(frozen=True)
class Route:
    """The router's decision for one claim: the top source, its score, the margin to the
    second, the full ranking (source, score) best first, and the status."""

    source: str | None
    score: float
    margin: float
    ranking: tuple[tuple[str, float], ...]
    status: str

    def as_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "score": self.score,
            "margin": self.margin,
            "status": self.status,
            "ranking": [[s, v] for s, v in self.ranking],
        }


def route(claim: Vector, centroids: Mapping[str, Vector]) -> Route:
    """Route ``claim`` over ``centroids`` (source id → centroid). Ties are broken by the
    order of ``centroids`` (the order evidence was returned in)."""
    if not centroids:
        return Route(None, 0.0, 0.0, (), "no_evidence")
    scored = [(source, cosine(claim, vec)) for source, vec in centroids.items()]
    order = sorted(range(len(scored)), key=lambda i: (-scored[i][1], i))
    ranking = tuple(scored[i] for i in order)
    top_source, top = ranking[0]
    if len(ranking) == 1:
        return Route(top_source, top, top, ranking, "single_source")
    return Route(top_source, top, top - ranking[1][1], ranking, "routed")

"""A model-free encoder and a one-feature checker: the baselines of the benchmark.

:class:`LexicalEncoder` embeds a text as its hashed bag of content terms (so centroid routing
becomes lexical routing), aligns tokens by exact match and counts words as tokens.
:class:`FeatureChecker` thresholds one feature of the row (``premise_overlap`` for the
lexical-only baseline, ``route_score`` for routing only). Pure Python.
"""

from __future__ import annotations

import hashlib
import math
from collections.abc import Mapping, Sequence
from typing import Any

from pytest_provenai.attribution.protected import content_terms
from pytest_provenai.attribution.verdict import HEAD_CLASSES, Judgement

__all__ = ["FeatureChecker", "LexicalEncoder"]

_DIM = 1024


def _bucket(term: str) -> int:
    return (
        int.from_bytes(hashlib.blake2b(term.encode("utf-8"), digest_size=4).digest(), "big") % _DIM
    )


class LexicalEncoder:
    """Hashed bag-of-content-terms vectors; exact-match token alignment."""

    @property
    def identity(self) -> dict[str, Any]:
        return {"name": "lexical-hashed-terms", "dimension": _DIM}

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        out = []
        for text in texts:
            v = [0.0] * _DIM
            for term in content_terms(text):
                v[_bucket(term)] += 1.0
            n = math.sqrt(sum(x * x for x in v))
            out.append([x / n for x in v] if n else v)
        return out

    def align(self, claim: str, premise_chunks: Sequence[str]) -> tuple[float, float]:
        terms = content_terms(claim)
        if not terms:
            return 1.0, 1.0
        have: set[str] = set()
        for chunk in premise_chunks:
            have |= content_terms(chunk)
        share = len(terms & have) / len(terms)
        return share, share

    def count_tokens(self, text: str) -> int:
        return len(text.split())


class FeatureChecker:
    """p(supported) = one feature of the row, clipped to [0, 1]; the verdict head puts
    the rest of the mass on not_enough_evidence."""

    def __init__(self, feature: str, threshold: float) -> None:
        self.feature = feature
        self._threshold = threshold

    @property
    def identity(self) -> dict[str, Any]:
        return {"kind": "feature_threshold", "feature": self.feature}

    @property
    def threshold(self) -> float:
        return self._threshold

    def score(self, rows: Sequence[Mapping[str, Any]]) -> list[Judgement]:
        out = []
        for row in rows:
            p = min(1.0, max(0.0, float(row[self.feature])))
            head = dict.fromkeys(HEAD_CLASSES, 0.0)
            head["supported"], head["not_enough_evidence"] = p, 1.0 - p
            out.append(Judgement(p, head))
        return out

"""The verifier's feature vector for one claim and its routed source (ProvenanceGuard §III-D).

Numeric features come from routing (score, margin), embedding similarity (best chunk of
the routed source, best chunk anywhere), lexical overlap (content terms in the routed premise,
in the best chunk, in all evidence), protected values (count, missing from the premise,
missing from all evidence, conflicting, unreadable), negation and antonym conflicts with
the claim's evidence unit (its row in a structured source, else its best chunk), the row
check (values the claim's row lacks, values only another row holds), MiniLM token alignment,
lengths and two interactions. Categorical features are the routed source's family and the
router status. There is **no attribution feature**: the claim's content is scored with its
attribution phrase stripped, and whether the stated family fits the routed source is a
separate check (:func:`~pytest_provenai.attribution.families.compatible`), so the
calibrator cannot learn "an attribution phrase is present → supported" (issue 23).
Optional model features (the LM's log-likelihood of the claim given the premise) are added
by name.

The features are computed the same way when the calibration table is derived and when an
answer is verified, so one function builds them: :func:`claim_features`. Pure Python.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pytest_provenai.attribution.polarity import Polarity
from pytest_provenai.attribution.protected import ValueCheck, content_terms
from pytest_provenai.attribution.routing import Route
from pytest_provenai.attribution.rows import RowCheck

__all__ = [
    "CATEGORICAL_FEATURES",
    "LM_FEATURES",
    "NUMERIC_FEATURES",
    "Signals",
    "claim_features",
]

NUMERIC_FEATURES = (
    "route_score",
    "route_margin",
    "n_sources",
    "best_chunk_cos",
    "best_chunk_cos_any",
    "premise_overlap",
    "best_chunk_overlap",
    "evidence_overlap",
    "values_count",
    "values_missing",
    "values_missing_all",
    "values_conflicting",
    "values_unparsed",
    "negation_mismatch",
    "antonym_mismatch",
    "number_mismatch",
    "row_structured",
    "row_missing",
    "row_other",
    "unit_overlap",
    "names_missing",
    "align_ratio",
    "align_mean",
    "claim_terms",
    "claim_tokens",
    "premise_tokens",
    "chunk_count",
    "route_x_overlap",
    "cos_x_route",
)
CATEGORICAL_FEATURES = ("family", "route_status")
#: Added by ``--provenai-verify-lm``: mean log-probability per claim token given the premise,
#: and its gain over the claim without the premise.
LM_FEATURES = ("lm_logprob", "lm_gain")


@dataclass(frozen=True)
class Signals:
    """What the model side measured for one claim: similarities and token alignment."""

    best_chunk_cos: float
    best_chunk_cos_any: float
    best_chunk: str
    align_ratio: float
    align_mean: float
    claim_tokens: int
    premise_tokens: int


def claim_features(
    *,
    content: str,
    premise: str,
    evidence_texts: list[str],
    route: Route,
    family: str,
    values: ValueCheck,
    values_all: ValueCheck,
    signals: Signals,
    chunk_count: int,
    rows: RowCheck,
    polarity: Polarity,
    unit: str,
    names_missing: int = 0,
    extra: Mapping[str, float] | None = None,
) -> dict[str, Any]:
    """The feature row of one claim (numeric values rounded to 6 decimals, so a derived
    table is stable to the byte)."""
    terms = content_terms(content)
    n_terms = len(terms)

    def share(text: str) -> float:
        return 1.0 if not terms else len(terms & content_terms(text)) / n_terms

    premise_overlap = share(premise)
    evidence_terms: set[str] = set()
    for text in evidence_texts:
        evidence_terms |= content_terms(text)
    evidence_overlap = 1.0 if not terms else len(terms & evidence_terms) / n_terms
    row: dict[str, Any] = {
        "route_score": route.score,
        "route_margin": route.margin,
        "n_sources": float(len(route.ranking)),
        "best_chunk_cos": signals.best_chunk_cos,
        "best_chunk_cos_any": signals.best_chunk_cos_any,
        "premise_overlap": premise_overlap,
        "best_chunk_overlap": share(signals.best_chunk),
        "evidence_overlap": evidence_overlap,
        "values_count": float(values.count),
        "values_missing": float(len(values.missing)),
        "values_missing_all": float(len(values_all.missing)),
        "values_conflicting": float(len(values.conflicting)),
        "values_unparsed": float(len(values.unparsed)),
        "negation_mismatch": float(polarity.negation),
        "antonym_mismatch": float(polarity.antonym is not None),
        "number_mismatch": float(bool(values.conflicting)),
        "row_structured": float(rows.structured),
        "row_missing": float(len(rows.missing)),
        "row_other": float(len(rows.other_row) + len(rows.swapped)),
        "unit_overlap": share(unit),
        "names_missing": float(names_missing),
        "align_ratio": signals.align_ratio,
        "align_mean": signals.align_mean,
        "claim_terms": float(n_terms),
        "claim_tokens": float(signals.claim_tokens),
        "premise_tokens": float(signals.premise_tokens),
        "chunk_count": float(chunk_count),
        "route_x_overlap": route.score * premise_overlap,
        "cos_x_route": signals.best_chunk_cos * route.score,
        "family": family,
        "route_status": route.status,
    }
    for name, value in (extra or {}).items():
        row[name] = value
    return {k: (round(float(v), 6) if not isinstance(v, str) else v) for k, v in row.items()}

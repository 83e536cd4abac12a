"""Resource influence: leave-one-resource-out ablation scored as ProvenAI §3.2–3.3 define it.

For a case with resources R = r0..r(k-1), answer a and citation set C, each resource r_i is
removed (the others keep their ids and order) and the answer a−i and citations C−i are
regenerated (:mod:`pytest_provenai.subject.ablation` does the model work). Then

* Δa = 1 − Jaccard(tok(a), tok(a−i)) over the SQuAD-normalised answer word sets (two empty
  answers are identical: Δa = 0);
* Δc = 1 − |C ∩ C−i| / |C ∪ C−i| (two empty sets: Δc = 0). Both sets live in the *full*
  context's id space: a tag ``[R3]`` in the output of the run without R3 still counts as R3
  (the model claims a source it was not shown), tags naming no resource of the case are
  left out;
* φ = 0.8·Δa + 0.2·Δc; θ = max(median φ, θ_floor) per case;
* verdicts: **used** (cited, φ ≥ θ), **hallucinated citation** (cited, φ < θ), **uncited
  influential** (not cited, φ ≥ θ), **low influence** (otherwise). The off-diagonal two are
  the citation–influence gap.

Where the backend can score, the KL target is computed too: the realised full-context output
is teacher-forced under each ablated context and KL(p_t ‖ p'_t) (nats) is summed and averaged
over the *answer* positions — the output tokens of its first line, the ``Answer:`` line the
prompt asks for (the whole output when it has one line); ``kl_output_mean`` averages over
every output position (evidence and reasoning too). ``first_divergence`` is the first output
position where the ablated argmax differs from the realised token. Proposition 1 of the
paper: when Δa > 0 the KL at that position is ≥ 2(½ − ε)², with ε = 1 − the full-context
model's smallest top-token probability up to that position (recorded as ``eps``).

This module is pure (numpy only); it never imports pytest.
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pytest_provenai.audit.answer import normalize_answer
from pytest_provenai.audit.metrics import (
    COUNT,
    Metric,
    MetricSummary,
    aggregate,
    json_int,
    json_object,
    metric_table,
    summaries_from_json,
    summaries_to_json,
)
from pytest_provenai.audit.stats import DEFAULT_SEED
from pytest_provenai.subject.kl import AblatedOutput
from pytest_provenai.subject.near_ties import generation_section

ANSWER_WEIGHT = 0.8
CITATION_WEIGHT = 0.2
DEFAULT_THETA_FLOOR = 0.05
"""θ_floor default: a resource counts as influential only if removing it moves φ by at least
0.05 — any change of the citation set of up to four ids (Δc ≥ 0.25 → φ ≥ 0.05) or about a
sixteenth of the answer's words. It keeps an all-zero case (nothing moved) from calling every
resource influential through a zero median."""

VERDICTS = ("used", "hallucinated_citation", "uncited_influential", "low_influence")
GAP_VERDICTS = ("hallucinated_citation", "uncited_influential")


# -- surface proxy ---------------------------------------------------------------------------
def answer_tokens(answer: str) -> frozenset[str]:
    """tok(a): the SQuAD-normalised word set of an answer."""
    return frozenset(normalize_answer(answer).split())


def jaccard(a: frozenset[str], b: frozenset[str]) -> float:
    if not a and not b:
        return 1.0
    return len(a & b) / len(a | b)


def delta_answer(answer: str, ablated_answer: str) -> float:
    return 1.0 - jaccard(answer_tokens(answer), answer_tokens(ablated_answer))


def delta_citation(cited: Sequence[str], ablated_cited: Sequence[str]) -> float:
    return 1.0 - jaccard(frozenset(cited), frozenset(ablated_cited))


def phi(d_answer: float, d_citation: float) -> float:
    return ANSWER_WEIGHT * d_answer + CITATION_WEIGHT * d_citation


def threshold(phis: Sequence[float], floor: float = DEFAULT_THETA_FLOOR) -> float:
    """θ = max(median φ, θ_floor)."""
    return max(statistics.median(phis), floor) if phis else floor


def verdict(cited: bool, value: float, theta: float) -> str:
    influential = value >= theta
    if cited:
        return "used" if influential else "hallucinated_citation"
    return "uncited_influential" if influential else "low_influence"


def pinsker_bound(eps: float) -> float | None:
    """Proposition 1's lower bound 2(½ − ε)² on the KL at the first divergent step, defined
    for ε < ½ (None otherwise: the bound says nothing)."""
    return 2.0 * (0.5 - eps) ** 2 if eps < 0.5 else None


# -- the record layer ------------------------------------------------------------------------
def influence_layer(
    resource_ids: Sequence[str],
    answer: str,
    cited_ids: Sequence[str],
    ablations: Sequence[AblatedOutput],
    *,
    signals: Sequence[str],
    theta_floor: float = DEFAULT_THETA_FLOOR,
) -> dict[str, Any]:
    """The ``influence`` layer of a record: per-resource Δa, Δc, φ, KL and verdict, θ, the
    verdict counts and the gap. ``ablations`` has one entry per resource id, any order."""
    by_id = {a.resource_id: a for a in ablations}
    missing = [r for r in resource_ids if r not in by_id]
    if missing:
        raise ValueError(f"no ablation for resources {missing}")
    cited = [c for c in cited_ids if c in resource_ids]
    rows: dict[str, dict[str, Any]] = {}
    for rid in resource_ids:
        abl = by_id[rid]
        da = delta_answer(answer, abl.answer)
        dc = delta_citation(cited, abl.cited_ids)
        rows[rid] = {
            "cited": rid in cited,
            "delta_answer": da,
            "delta_citation": dc,
            "phi": phi(da, dc),
            "answer": abl.answer,
            "citations": sorted(abl.cited_ids, key=_id_order),
        }
        if abl.output is not None:  # informational, never compared with golden files
            rows[rid]["generation"] = generation_section(abl.output, abl.near_ties)
        if abl.kl is not None:
            kl: dict[str, Any] = {
                "kl_sum": abl.kl.kl_sum,
                "kl_mean": abl.kl.kl_mean,
                "kl_output_mean": abl.kl.kl_output_mean,
                "first_divergence": abl.kl.first_divergence,
                "kl_at_divergence": abl.kl.kl_at_divergence,
                "eps": abl.kl.eps,
            }
            infinite = sorted(k for k, v in kl.items() if isinstance(v, float) and math.isinf(v))
            for k in infinite:  # JSON has no infinity; the record says which were infinite
                kl[k] = None
            if infinite:
                kl["kl_infinite"] = infinite
            rows[rid].update(kl)
    phis = [rows[r]["phi"] for r in resource_ids]
    median = statistics.median(phis) if phis else 0.0
    theta = threshold(phis, theta_floor)
    counts = dict.fromkeys(VERDICTS, 0)
    for rid in resource_ids:
        v = verdict(rows[rid]["cited"], rows[rid]["phi"], theta)
        rows[rid]["verdict"] = v
        counts[v] += 1
    gap = [r for r in resource_ids if rows[r]["verdict"] in GAP_VERDICTS]
    layer: dict[str, Any] = {
        "measured": True,
        "signals": list(signals),
        "theta_floor": theta_floor,
        "median_phi": median,
        "theta": theta,
        "verdicts": counts,
        "gap": gap,
        "resources": rows,
    }
    if "kl" in signals and resource_ids:
        layer["top_kl"] = max(  # an infinite KL (None) ranks above every finite one
            resource_ids,
            key=lambda r: (rows[r]["kl_sum"] is None, rows[r]["kl_sum"] or 0.0),
        )
    return layer


def not_measured(reason: str) -> dict[str, Any]:
    """The layer when influence was not measured (``--provenai-ablation off``): influence
    gates then fail closed."""
    return {"measured": False, "reason": reason}


def _id_order(rid: str) -> tuple[int, str]:
    digits = rid[1:]
    return (int(digits), rid) if digits.isdigit() else (1 << 30, rid)


# -- gate metrics ----------------------------------------------------------------------------
def _layer(record: Mapping[str, Any]) -> Mapping[str, Any] | None:
    layer = record.get("influence")
    if not isinstance(layer, Mapping) or not layer.get("measured"):
        return None
    return layer


def _measured(record: Mapping[str, Any]) -> float | None:
    layer = record.get("influence")
    if not isinstance(layer, Mapping):
        return None
    return 1.0 if layer.get("measured") else 0.0


def _gap_rate(record: Mapping[str, Any]) -> float | None:
    layer = _layer(record)
    return None if layer is None else float(bool(layer["gap"]))


def _count(name: str) -> Callable[[Mapping[str, Any]], float | None]:
    def extract(record: Mapping[str, Any]) -> float | None:
        layer = _layer(record)
        return None if layer is None else float(layer["verdicts"][name])

    return extract


def _answer_sensitive(record: Mapping[str, Any]) -> float | None:
    layer = _layer(record)
    if layer is None:
        return None
    return float(any(r["delta_answer"] > 0 for r in layer["resources"].values()))


def _kl_mean(record: Mapping[str, Any]) -> float | None:
    layer = _layer(record)
    if layer is None or "kl" not in layer["signals"] or not layer["resources"]:
        return None
    values = [r["kl_mean"] for r in layer["resources"].values()]
    if any(v is None for v in values):
        return None  # an infinite KL: undefined, so a kl_mean gate fails closed
    return float(sum(values) / len(values))


def _used_share(record: Mapping[str, Any]) -> float | None:
    """Share of a case's cited resources whose verdict is used; a case citing nothing
    counts 0 (no citation was shown to be used), as citation-free precision does."""
    layer = _layer(record)
    if layer is None:
        return None
    cited = [r for r in layer["resources"].values() if r["cited"]]
    if not cited:
        return 0.0
    return float(sum(r["verdict"] == "used" for r in cited)) / len(cited)


INFLUENCE_METRICS: dict[str, Metric] = metric_table(
    [
        Metric(
            "influence_measured",
            "higher",
            "share of cases whose influence was measured (0 under --provenai-ablation off)",
            _measured,
        ),
        Metric(
            "citation_influence_gap_rate",
            "lower",
            "share of cases with a hallucinated citation or an uncited influential resource",
            _gap_rate,
        ),
        Metric(
            "used_citation_share",
            "higher",
            "share of a case's cited resources that are influential (used), 0 if none",
            _used_share,
        ),
        Metric(
            "hallucinated_citations",
            "lower",
            "cited resources per case whose removal moved the output less than θ",
            _count("hallucinated_citation"),
            range=COUNT,
        ),
        Metric(
            "uncited_influential",
            "lower",
            "uncited resources per case whose removal moved the output at least θ",
            _count("uncited_influential"),
            range=COUNT,
        ),
        Metric(
            "answer_sensitive_rate",
            "higher",
            "share of cases where removing some resource changed the answer (Δa > 0)",
            _answer_sensitive,
        ),
        Metric(
            "kl_mean",
            "higher",
            "mean over resources of the per-position KL(full ‖ ablated), nats",
            _kl_mean,
            range=COUNT,
        ),
    ]
)
"""The influence metrics, the names ``@pytest.mark.influence(...)`` gates accept."""


@dataclass(frozen=True)
class InfluenceSummary:
    """:func:`influence_summary` as a type (the results JSON's ``aggregates.<test>.influence``):
    cases ``measured`` and ``not_measured``, the verdict totals over all resources (in
    :data:`VERDICTS` order), the cases showing the citation–influence gap and the gate
    metrics' summaries (none when no case was measured)."""

    measured: int
    not_measured: int
    verdicts: dict[str, int]
    gap_cases: int
    metrics: dict[str, MetricSummary]

    def to_json(self) -> dict[str, Any]:
        return {
            "measured": self.measured,
            "not_measured": self.not_measured,
            "verdicts": dict(self.verdicts),
            "gap_cases": self.gap_cases,
            "metrics": summaries_to_json(self.metrics),
        }

    @classmethod
    def from_json(cls, data: Any) -> InfluenceSummary:
        d = json_object(data, "influence summary")
        return cls(
            measured=json_int(d["measured"], "measured"),
            not_measured=json_int(d["not_measured"], "not_measured"),
            verdicts={
                str(k): json_int(v, f"verdicts.{k}")
                for k, v in json_object(d["verdicts"], "verdicts").items()
            },
            gap_cases=json_int(d["gap_cases"], "gap_cases"),
            metrics=summaries_from_json(d["metrics"]),
        )


def influence_summary(
    records: Sequence[Mapping[str, Any]], *, seed: int = DEFAULT_SEED
) -> dict[str, Any]:
    """Population view of the influence layers of ``records``: verdict totals, the number of
    cases showing the citation–influence gap, cases not measured, and the gate metrics' means
    with bootstrap CIs by case."""
    totals = dict.fromkeys(VERDICTS, 0)
    gap_cases = measured = 0
    for rec in records:
        layer = _layer(rec)
        if layer is None:
            continue
        measured += 1
        for name in VERDICTS:
            totals[name] += int(layer["verdicts"][name])
        gap_cases += bool(layer["gap"])
    return {
        "measured": measured,
        "not_measured": len(records) - measured,
        "verdicts": totals,
        "gap_cases": gap_cases,
        "metrics": aggregate(records, INFLUENCE_METRICS, seed=seed) if measured else {},
    }

"""Claim verdicts and the fail-closed answer verdict (ProvenanceGuard §III-E/F).

A claim's verdict, first that applies:

* ``non_factual`` — template text or no content (never evidence-bearing);
* ``failed`` — a verifier component raised (fail closed);
* ``not_enough_evidence`` with reason ``not_routed`` — there is no evidence to route to;
* ``contradicted`` with reason ``high_confidence_contradiction`` — an NLI model, when one
  is given, says contradiction with probability ≥ :data:`CONTRADICTION_CONFIDENCE`;
* ``contradicted`` with reason ``value_from_other_row`` / ``negation_conflict`` /
  ``antonym_conflict`` / ``field_conflict`` / ``superlative_conflict`` — the claim's row
  lacks a value another row holds, the claim negates or says the antonym of its evidence
  unit, the field the claim names holds another value of the same sort, or another row
  beats the value the claim calls the highest or lowest (or the source's amounts of two
  things the claim compares compare them the other way)
  (:mod:`~pytest_provenai.attribution.support`), whatever the calibrated score;
* ``supported`` or ``conflated`` — the calibrated support probability reaches the
  threshold and no protected value is missing from the routed premise (or a neutral
  decision within :data:`RESCUE_MARGIN` of it is lexically rescued on exact structured
  evidence, or whatever its score when the claim quotes its evidence sentence or calls a
  column's exact sum over its rows a total; or, reason ``values_borne``, within
  :data:`VALUES_MARGIN` of it when two values or more of the claim are all present in its
  row or record, no name is missing and nothing conflicts);
  ``conflated`` when the stated attribution is incompatible with the routed source's family
  (reason ``conflation``), or names a source that neither the trace's tools, the lexicon
  nor the similarity fallback resolves (reason ``unresolved_attribution``: an unresolvable citation
  is never a pass; "according to the sources" names none and is not this);
* ``conflated`` with reasons ``conflation`` and ``insufficient_support`` — the score is under
  the threshold by less than :data:`CONFLATION_MARGIN`, no protected value is missing, and
  the stated attribution is incompatible with the routed source's family (the claim's words
  match a source it does not name);
* otherwise rejected with the verdict head's most probable reject class (the head sees
  whether the premise states another value of a missing value's kind); the reason is
  ``missing_protected_values`` when a protected value is absent from the routed premise and
  ``insufficient_support`` when the score is low.

The answer is allowed only when it is not empty, nothing failed, and every factual claim
is ``supported``; any other claim blocks it with its reason. An answer without factual
claims (e.g. the repair fallback) asserts nothing that needs evidence and is allowed.

Pure Python.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pytest_provenai.attribution.families import Attribution, compatible

__all__ = [
    "BLOCK_REASONS",
    "CLAIM_VERDICTS",
    "CONFLATION_MARGIN",
    "CONTRADICTION_CONFIDENCE",
    "REJECT_VERDICTS",
    "RESCUE_MARGIN",
    "AnswerVerdict",
    "ClaimDecision",
    "answer_verdict",
    "decide",
]

#: Verdicts a claim can get (the gold labels plus ``failed``).
CLAIM_VERDICTS = (
    "supported",
    "not_enough_evidence",
    "unsupported",
    "contradicted",
    "conflated",
    "non_factual",
    "failed",
)
#: The reject/block class of the seed's binary metrics.
REJECT_VERDICTS = frozenset(
    {"not_enough_evidence", "unsupported", "contradicted", "conflated", "failed"}
)
RESCUE_MARGIN = 0.05
"""How far under the threshold a calibrated score may be for a neutral decision to be
lexically rescued (a claim that quotes its evidence sentence word for word is rescued
whatever its score): below it, the score outweighs the words the claim shares with its row
(chosen on the hand-written validation rows in the twenty-fourth round: it stops four
validation rescues that passed three contradictions and a claim the source does not bear
out, and loses two supported claims; on train it stops nine wrong rescues and loses one)."""
VALUES_MARGIN = 0.15
"""How far under the threshold a calibrated score may be for a claim whose two values or
more are all read and present in its row or record, with no name the source lacks, no value
under another field than the one it names and nothing in conflict, to be ``supported``
(reason ``values_borne``): the values are evidence the words' score does not see ("The
stoppage notice shuts Lock 19 from 8 in the morning on Wednesday 16 July until 4 pm on Friday
the 18th" scores 0.59). Chosen on the hand-written train/validation splits in the forty-sixth
session from the scores before the rule (0.10: 31 supported claims and 5 contradictions
among such claims; 0.15: 41 and 6; 0.20: 42, 6 and a not-enough-evidence claim); with the
name, field and structure checks (a row or a record, never prose) the shipped rule
accepts 30 supported claims there and passes 2 contradictions."""
CONFLATION_MARGIN = 0.2
"""How far under the threshold a calibrated score may be for a claim whose stated source is
of another family than the routed one to be ``conflated`` rather than rejected for want of
support (no protected value missing, no conflict): its words are near the routed source's,
and that source is not the one it names ("The donations table also gives the bag's group as
O RhD negative", routed to a bag scan). Chosen on the hand-written train/validation splits."""
#: The classes of the verdict head (``conflated`` claims are supported by their source).
HEAD_CLASSES = ("supported", "not_enough_evidence", "unsupported", "contradicted")
BLOCK_REASONS = (
    "conflation",
    "unresolved_attribution",
    "high_confidence_contradiction",
    "value_from_other_row",
    "negation_conflict",
    "antonym_conflict",
    "field_conflict",
    "superlative_conflict",
    "missing_protected_values",
    "not_routed",
    "insufficient_support",
    "failed_component",
)
CONTRADICTION_CONFIDENCE = 0.9


@dataclass(frozen=True)
class ClaimDecision:
    """One claim's decision and everything that explains it."""

    index: int
    text: str
    range: tuple[int, int]
    factual: bool
    verdict: str
    reasons: tuple[str, ...]
    source: str | None = None
    tool: str | None = None
    family: str | None = None
    route_score: float = 0.0
    route_margin: float = 0.0
    route_status: str = "no_evidence"
    p_support: float | None = None
    threshold: float | None = None
    attribution: Attribution = field(default_factory=lambda: Attribution("unavailable"))
    attribution_compatible: bool | None = None
    missing_values: tuple[str, ...] = ()
    unparsed_values: tuple[str, ...] = ()
    rescued: bool = False
    nli: Mapping[str, float] | None = None
    error: str | None = None
    best_chunk: str = ""

    @property
    def supported(self) -> bool:
        return self.verdict == "supported"

    @property
    def rejected(self) -> bool:
        return self.verdict in REJECT_VERDICTS

    @property
    def content_supported_elsewhere(self) -> bool:
        """Conflated with the content supported by the routed source (not one conflated only
        near the threshold, whose reasons add ``insufficient_support``)."""
        return self.verdict == "conflated" and "insufficient_support" not in self.reasons

    def as_dict(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "text": self.text,
            "range": list(self.range),
            "factual": self.factual,
            "verdict": self.verdict,
            "reasons": list(self.reasons),
            "source": self.source,
            "tool": self.tool,
            "family": self.family,
            "route": {
                "score": self.route_score,
                "margin": self.route_margin,
                "status": self.route_status,
            },
            "p_support": self.p_support,
            "threshold": self.threshold,
            "attribution": {
                **self.attribution.as_dict(),
                "compatible": self.attribution_compatible,
            },
            "missing_values": list(self.missing_values),
            "unparsed_values": list(self.unparsed_values),
            "rescued": self.rescued,
            "nli": dict(self.nli) if self.nli is not None else None,
            "error": self.error,
        }


@dataclass(frozen=True)
class Judgement:
    """What the support checker (and, when given, the NLI model) said about one claim."""

    p_support: float
    head: Mapping[str, float]
    nli: Mapping[str, float] | None = None


def decide(
    *,
    index: int,
    text: str,
    byte_range: tuple[int, int],
    factual: bool,
    attribution: Attribution,
    route_source: str | None,
    route_tool: str | None,
    route_family: str | None,
    route_score: float,
    route_margin: float,
    route_status: str,
    judgement: Judgement | None,
    error: str | None,
    threshold: float,
    missing: Sequence[str],
    rescue_ok: bool,
    quoted: bool = False,
    summed: bool = False,
    valued: bool = False,
    best_chunk: str = "",
    conflict: str | None = None,
    unparsed: Sequence[str] = (),
    conversational: bool = False,
) -> ClaimDecision:
    """The verdict of one claim (see the module docstring); ``conversational``: the claim
    is non-factual on the conversation model's word, not the rules'."""
    base: dict[str, Any] = {
        "index": index,
        "text": text,
        "range": byte_range,
        "factual": factual,
        "source": route_source,
        "tool": route_tool,
        "family": route_family,
        "route_score": route_score,
        "route_margin": route_margin,
        "route_status": route_status,
        "attribution": attribution,
        "threshold": threshold,
        "missing_values": tuple(missing),
        "unparsed_values": tuple(unparsed),
        "best_chunk": best_chunk,
    }
    if not factual:
        reasons = ("conversational",) if conversational else ()
        return ClaimDecision(verdict="non_factual", reasons=reasons, **base)
    if error is not None:
        return ClaimDecision(verdict="failed", reasons=("failed_component",), error=error, **base)
    if route_status == "no_evidence" or route_source is None:
        return ClaimDecision(verdict="not_enough_evidence", reasons=("not_routed",), **base)
    if judgement is None:
        return ClaimDecision(
            verdict="failed", reasons=("failed_component",), error="no judgement", **base
        )
    base["p_support"] = judgement.p_support
    base["nli"] = judgement.nli
    if judgement.nli is not None and judgement.nli.get("contradiction", 0.0) >= (
        CONTRADICTION_CONFIDENCE
    ):
        return ClaimDecision(
            verdict="contradicted", reasons=("high_confidence_contradiction",), **base
        )
    if conflict is not None:
        return ClaimDecision(verdict="contradicted", reasons=(conflict,), **base)
    supported = judgement.p_support >= threshold and not missing
    rescued = False
    near = judgement.p_support >= threshold - RESCUE_MARGIN
    if not supported and not missing and rescue_ok and (near or quoted or summed):
        supported, rescued = True, True
    borne = False
    if not supported and not missing and valued:
        borne = judgement.p_support >= threshold - VALUES_MARGIN
        supported = borne
    if supported:
        fits = compatible(attribution, route_tool or "", route_family or "")
        unresolved = (attribution.status, attribution.reason) == ("ambiguous", "unresolved_phrase")
        if fits is False or unresolved:
            return ClaimDecision(
                verdict="conflated",
                reasons=("unresolved_attribution",) if unresolved else ("conflation",),
                attribution_compatible=False,
                rescued=rescued,
                **base,
            )
        return ClaimDecision(
            verdict="supported",
            reasons=("lexical_rescue",) if rescued else ("values_borne",) if borne else (),
            attribution_compatible=fits,
            rescued=rescued,
            **base,
        )
    if (
        not missing
        and attribution.status == "stated"
        and judgement.p_support >= threshold - CONFLATION_MARGIN
        and compatible(attribution, route_tool or "", route_family or "") is False
    ):
        # near the threshold, and the source the claim names is not the one its words match
        return ClaimDecision(
            verdict="conflated",
            reasons=("conflation", "insufficient_support"),
            attribution_compatible=False,
            **base,
        )
    rejects = [c for c in HEAD_CLASSES if c != "supported"]
    verdict = max(rejects, key=lambda c: (judgement.head.get(c, 0.0), -rejects.index(c)))
    reason = "missing_protected_values" if missing else "insufficient_support"
    return ClaimDecision(verdict=verdict, reasons=(reason,), **base)


@dataclass(frozen=True)
class AnswerVerdict:
    verdict: str  # "allow" | "block"
    reasons: tuple[str, ...]
    blocking: tuple[int, ...]  # indices of the claims that block

    @property
    def allowed(self) -> bool:
        return self.verdict == "allow"

    def as_dict(self) -> dict[str, Any]:
        return {
            "verdict": self.verdict,
            "reasons": list(self.reasons),
            "blocking_claims": list(self.blocking),
        }


def answer_verdict(text: str, decisions: Sequence[ClaimDecision]) -> AnswerVerdict:
    """Fail closed: allow only a non-empty answer whose every factual claim is supported."""
    if not text.strip():
        return AnswerVerdict("block", ("empty_answer",), ())
    reasons: list[str] = []
    blocking: list[int] = []
    for d in decisions:
        if d.factual and d.verdict != "supported":
            blocking.append(d.index)
            for r in d.reasons or (d.verdict,):
                if r not in reasons:
                    reasons.append(r)
    if blocking:
        return AnswerVerdict("block", tuple(reasons), tuple(blocking))
    if not any(d.factual for d in decisions):
        return AnswerVerdict("allow", ("no_evidence_requiring_claim",), ())
    return AnswerVerdict("allow", (), ())

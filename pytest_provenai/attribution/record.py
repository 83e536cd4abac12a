"""The attribution layer's records: one plain JSON dict per case, section ``attribution``.

* :func:`trace_record` — an ``mcp_trace`` case: every labelled answer verified on its gold
  claims (claim-level metrics), decomposed by the rule-based decomposer (decomposition
  metrics), and, when blocked, repaired and re-verified;
* :func:`probe_record` — a ``conflation_probe`` case: the probe answer (must be blocked as
  conflated; repaired; the wrong family must not survive the repair, except as the
  attribution of a word-for-word quote of that family's own output) and the control answer;
* :func:`session_record` — an answer written through the MCP tools (harness-driven or a
  user's agent): decomposed, verified, repaired; the captured trace graph and its
  completeness.

Each answer entry holds the text, the answer verdict with reasons, every claim's decision
(routed source, scores, reasons, attribution) beside its gold label, and the repair. The
verifier's identity and the trace graph's sha256 are in the section; no timings.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pytest_provenai.attribution.decompose import Claim, claim_at, decompose
from pytest_provenai.attribution.families import find_attribution
from pytest_provenai.attribution.graph import AnswerNode, completeness, graph_sha256, trace_graph
from pytest_provenai.attribution.pipeline import AnswerResult, Verifier
from pytest_provenai.attribution.protected import protected_values
from pytest_provenai.attribution.repair import RepairResult, repair
from pytest_provenai.attribution.statement import Listing, listing_of
from pytest_provenai.frozen.traces import (
    EvidenceSet,
    LabelledAnswer,
    LabelledClaim,
    ProbeCase,
    ToolCall,
    TraceCase,
    collect_evidence,
)

__all__ = ["Auditor", "probe_record", "session_record", "trace_record"]


@dataclass(frozen=True)
class Auditor:
    """The verifier and the repair budget a run uses."""

    verifier: Verifier
    repair_iterations: int = 1

    @property
    def identity(self) -> dict[str, Any]:
        return {**self.verifier.identity, "repair_iterations": self.repair_iterations}

    def repair(
        self,
        result: AnswerResult,
        evidence: EvidenceSet,
        tools: Mapping[str, str],
        question: str | None = None,
        listing: Listing | None = None,
    ) -> RepairResult:
        return repair(
            result,
            lambda text: self.verifier.verify(
                text, evidence, tools, question=question, listing=listing
            ),
            max_iterations=self.repair_iterations,
        )


def _gold(answer: LabelledAnswer, claim: LabelledClaim) -> dict[str, Any]:
    return {
        "range": list(claim.range),
        "text": answer.claim_text(claim),
        "verdict": claim.verdict,
        "gold_source": claim.gold_source,
        "stated_family": claim.stated_family,
        "protected_values": list(claim.protected_values),
    }


def _overlap(a: tuple[int, int], b: tuple[int, int]) -> int:
    return max(0, min(a[1], b[1]) - max(a[0], b[0]))


def decomposition(answer: LabelledAnswer, decomposed: Sequence[Claim]) -> dict[str, Any]:
    """Rule-based decomposition against the gold claims (reference-set agreement, as the
    seed measures it): a gold claim is *recalled* when a decomposed claim covers more than
    half of its bytes; a decomposed claim is *precise* when more than half of its bytes lie
    in one gold claim; among matched pairs whose gold claim has protected values, *literal
    exactness* asks that the decomposed claim keep every one of them exactly."""
    gold = list(answer.claims)
    recalled = 0
    pairs = 0
    exact = 0
    for g in gold:
        size = g.range[1] - g.range[0]
        best = max(decomposed, key=lambda d: _overlap(g.range, (d.start, d.end)), default=None)
        if best is None or 2 * _overlap(g.range, (best.start, best.end)) <= size:
            continue
        recalled += 1
        if g.protected_values:
            pairs += 1
            kept = {v.text for v in protected_values(best.text)}
            exact += all(v in kept or v in best.text for v in g.protected_values)
    precise = 0
    for d in decomposed:
        size = d.end - d.start
        if any(2 * _overlap((d.start, d.end), g.range) > size for g in gold):
            precise += 1
    return {
        "gold": len(gold),
        "decomposed": len(decomposed),
        "recalled": recalled,
        "precise": precise,
        "value_pairs": pairs,
        "values_exact": exact,
    }


_QUOTE = re.compile(r'"([^"]+)"|“([^”]+)”')


def _wrongly_stated(
    text: str,
    tools: Mapping[str, str],
    wrong: str,
    evidence: EvidenceSet,
    listing: Listing | None = None,
) -> bool:
    """Whether a claim of ``text`` (a repaired probe answer) still names the probe's wrong
    family for something that family's outputs do not say. A repair that quotes an output of
    that family word for word under its own attribution ("According to the search results
    from web_search, "…"") attributes *that* text rightly: the probe's fact is gone, so the
    wrong attribution is not retained."""
    own = [" ".join(e.text.split()) for e in evidence.items if e.family == wrong]
    for c in decompose(text, tools, listing=listing):
        if find_attribution(c.text, tools, listing).family != wrong:
            continue
        quotes = [" ".join((m.group(1) or m.group(2)).split()) for m in _QUOTE.finditer(c.text)]
        if not quotes or not all(any(q in o for o in own) for q in quotes):
            return True
    return False


def _answer_entry(
    auditor: Auditor,
    answer: LabelledAnswer,
    evidence: EvidenceSet,
    tools: Mapping[str, str],
    listing: Listing,
    role: str,
    request: str = "",
) -> tuple[dict[str, Any], AnswerResult, RepairResult]:
    claims = [
        claim_at(answer.text, g.range, tools, index=j, listing=listing)
        for j, g in enumerate(answer.claims)
    ]
    result = auditor.verifier.verify_claims(answer.text, claims, evidence, request=request)
    fixed = auditor.repair(result, evidence, tools, listing=listing)
    factual_gold = [g for g in answer.claims if g.verdict != "non_factual"]
    expected = "allow" if all(g.verdict == "supported" for g in factual_gold) else "block"
    entry = {
        "id": answer.id,
        "role": role,
        "text": answer.text,
        "expected": expected,
        "verdict": result.verdict.as_dict(),
        "claims": [
            {"gold": _gold(answer, g), **d.as_dict()}
            for g, d in zip(answer.claims, result.claims, strict=True)
        ],
        "decomposition": decomposition(answer, decompose(answer.text, tools, listing=listing)),
        "repair": fixed.as_dict(),
    }
    return entry, result, fixed


def calls_listing(
    calls: Sequence[ToolCall],
    families: Mapping[str, str],
    descriptions: Mapping[str, str] | None = None,
) -> Listing:
    """What a trace says of its tools: their descriptions and what each call opened."""
    return listing_of(((c.tool, c.arguments) for c in calls), families, descriptions)


def case_listing(case: TraceCase | ProbeCase) -> Listing:
    """The :func:`calls_listing` of a frozen trace."""
    return calls_listing(case.calls, case.families, case.descriptions)


def _graph(
    session: str,
    case: TraceCase | ProbeCase,
    answers: Sequence[tuple[LabelledAnswer, AnswerResult]],
    evidence: EvidenceSet,
) -> dict[str, Any]:
    nodes = [
        AnswerNode(
            a.id,
            a.text,
            (),
            tuple(((d.range[0], d.range[1]), d.verdict, d.source) for d in r.claims),
        )
        for a, r in answers
    ]
    graph = trace_graph(session, case.calls, case.families, answers=nodes)
    # what the writer of a frozen trace saw is what its calls returned: the evidence
    complete, missing = completeness(graph, [(e.source, e.sha256) for e in evidence.items])
    return {"sha256": graph_sha256(graph), "complete": complete, "unrecorded": missing}


def trace_record(
    case: TraceCase, auditor: Auditor, *, suite: str = "attribution"
) -> dict[str, Any]:
    """The record of one ``mcp_trace`` case (see the module docstring)."""
    evidence = collect_evidence(case.calls, case.families)
    listing = case_listing(case)
    entries = []
    results = []
    for answer in case.answers:
        entry, result, _ = _answer_entry(
            auditor, answer, evidence, case.families, listing, "answer", case.request
        )
        entries.append(entry)
        results.append((answer, result))
    return {
        "case_id": case.id,
        "suite": suite,
        "fixture_set": case.fixture_set,
        "kind": case.kind,
        "category": case.category,
        "request": case.request,
        "attribution": {
            "verifier": auditor.identity,
            "evidence": [e.as_dict() for e in evidence.items],
            "evidence_conflicts": list(evidence.conflicts),
            "graph": _graph(case.id, case, results, evidence),
            "answers": entries,
        },
    }


def probe_record(
    case: ProbeCase, auditor: Auditor, *, suite: str = "attribution"
) -> dict[str, Any]:
    """The record of one conflation probe: the probe answer and the control answer."""
    evidence = collect_evidence(case.calls, case.families)
    listing = case_listing(case)
    probe, probe_result, probe_fix = _answer_entry(
        auditor, case.probe, evidence, case.families, listing, "probe", case.request
    )
    control, control_result, _ = _answer_entry(
        auditor, case.control, evidence, case.families, listing, "control", case.request
    )
    wrong = case.probe.claims[0].stated_family
    retained = wrong is not None and _wrongly_stated(
        probe_fix.final_text, case.families, wrong, evidence, listing
    )
    return {
        "case_id": case.id,
        "suite": suite,
        "fixture_set": case.fixture_set,
        "kind": case.kind,
        "request": case.request,
        "attribution": {
            "verifier": auditor.identity,
            "evidence": [e.as_dict() for e in evidence.items],
            "evidence_conflicts": list(evidence.conflicts),
            "graph": _graph(
                case.id,
                case,
                [(case.probe, probe_result), (case.control, control_result)],
                evidence,
            ),
            "answers": [probe, control],
            "probe": {
                "shared_value": case.shared_value,
                "fact_source": case.fact_source,
                "other_source": case.other_source,
                "wrong_family": wrong,
                "wrong_attribution_retained": retained,
            },
        },
    }


def session_record(
    *,
    case_id: str,
    question: str,
    fixture_set: str,
    answer: str,
    calls: Any,
    graph_for: Any,
    cites: Sequence[str],
    seen: Sequence[tuple[str, str]],
    gold_access: bool,
    families: Mapping[str, str],
    descriptions: Mapping[str, str] | None = None,
    auditor: Auditor,
    question_for_claims: str | None,
    model: Mapping[str, Any] | None,
    driver: str,
    suite: str = "attribution",
) -> tuple[dict[str, Any], dict[str, Any]]:
    """(record, trace graph) of an answer written through the MCP tools. ``calls`` are the
    session's :class:`~pytest_provenai.frozen.traces.ToolCall` s; ``graph_for(answers)``
    builds the captured graph (with result digests) for the given answer nodes."""
    evidence = collect_evidence(calls, families)
    listing = calls_listing(calls, families, descriptions)
    result = auditor.verifier.verify(
        answer, evidence, families, question=question_for_claims, listing=listing
    )
    fixed = auditor.repair(result, evidence, families, question_for_claims, listing)
    node = AnswerNode(
        "answer",
        answer,
        tuple(cites),
        tuple(((d.range[0], d.range[1]), d.verdict, d.source) for d in result.claims),
    )
    graph = graph_for([node])
    complete, missing = completeness(graph, seen)
    returned = {n["source"] for n in graph["nodes"] if n.get("type") == "resource"}
    missing += [c for c in cites if c not in returned and c not in missing]
    record = {
        "case_id": case_id,
        "suite": suite,
        "fixture_set": fixture_set,
        "kind": "mcp_session",
        "model": dict(model) if model is not None else None,
        "question": question,
        "attribution": {
            "verifier": auditor.identity,
            "driver": driver,
            "calls": [
                {
                    "index": c.index,
                    "tool": c.tool,
                    "arguments_sha256": c.arguments_sha256,
                    "error": c.error,
                    "sources": [o.source or c.tool for o in c.outputs],
                }
                for c in calls
            ],
            "gold_access": gold_access,
            "evidence": [e.as_dict() for e in evidence.items],
            "graph": {
                "sha256": graph_sha256(graph),
                "complete": complete and not missing,
                "unrecorded": missing,
            },
            "answers": [
                {
                    "id": "answer",
                    "role": "session",
                    "text": answer,
                    "expected": None,
                    "cites": list(cites),
                    "verdict": result.verdict.as_dict(),
                    "claims": [{"gold": None, **d.as_dict()} for d in result.claims],
                    "decomposition": None,
                    "repair": fixed.as_dict(),
                }
            ],
        },
    }
    return record, graph

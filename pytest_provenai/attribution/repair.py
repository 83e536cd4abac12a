"""Bounded revise-and-reverify repair of a blocked answer (ProvenanceGuard §III-G).

Each iteration rewrites the blocked answer claim by claim from the verifier's decisions —
deterministic and from the evidence only, no model:

* ``keep`` — supported and non-factual claims stay as written;
* ``reattribute`` — a conflated claim keeps its content under the attribution phrase of the
  source it was routed to (the fact was right, its stated source wrong);
* ``evidence_rewrite`` — a contradicted or unsupported claim that was routed, or one
  conflated only near the threshold (reason ``insufficient_support``: its content is not
  supported well enough to keep), is replaced by the routed source's best-matching chunk,
  quoted, under that source's attribution;
* ``prune`` — any other blocked claim (not enough evidence, not routed, failed) is removed.

The revision is verified again by the same verifier. The loop stops when the revision is
allowed or after ``max_iterations``; an answer still blocked then (or with no factual claim
left) is replaced by :data:`FALLBACK`, text that makes no evidence-requiring claim, which is
verified too. Pure Python: the verifier is passed in as a function.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pytest_provenai.attribution.families import canonical_phrase
from pytest_provenai.attribution.pipeline import AnswerResult
from pytest_provenai.attribution.verdict import ClaimDecision

__all__ = ["FALLBACK", "MAX_ITERATIONS", "REPAIR_ACTIONS", "RepairResult", "repair"]

FALLBACK = "The tool outputs available here do not support a verified answer to this request."
MAX_ITERATIONS = 3
REPAIR_ACTIONS = ("keep", "reattribute", "evidence_rewrite", "prune")


@dataclass(frozen=True)
class RepairStep:
    iteration: int
    actions: tuple[tuple[int, str], ...]
    text: str
    verdict: str

    def as_dict(self) -> dict[str, Any]:
        return {
            "iteration": self.iteration,
            "actions": [{"claim": i, "action": a} for i, a in self.actions],
            "text": self.text,
            "verdict": self.verdict,
        }


@dataclass(frozen=True)
class RepairResult:
    attempted: bool
    steps: tuple[RepairStep, ...]
    method: str  # none | rewrite | prune | fallback
    final: AnswerResult

    @property
    def passed(self) -> bool:
        return self.final.verdict.allowed

    @property
    def final_text(self) -> str:
        return self.final.text

    def as_dict(self) -> dict[str, Any]:
        return {
            "attempted": self.attempted,
            "iterations": len([s for s in self.steps if s.iteration > 0]),
            "method": self.method,
            "steps": [s.as_dict() for s in self.steps],
            "final_text": self.final.text,
            "final_verdict": self.final.verdict.as_dict(),
            "passed": self.passed,
        }


def _sentence(text: str) -> str:
    text = text.strip()
    return text if text[-1:] in ".!?\"”'" else text + "."


def _content_of(d: ClaimDecision) -> str:
    text = d.text
    if d.attribution.phrase and d.attribution.phrase in text:
        text = text.replace(d.attribution.phrase, "", 1)
    return " ".join(text.split())


def _revise(result: AnswerResult) -> tuple[str, list[tuple[int, str]], bool]:
    """(revised text, actions, any factual claim kept)."""
    parts: list[str] = []
    actions: list[tuple[int, str]] = []
    factual_left = False
    for d in result.claims:
        if not d.factual or d.verdict == "supported":
            parts.append(_sentence(d.text))
            actions.append((d.index, "keep"))
            factual_left = factual_left or d.factual
        elif d.content_supported_elsewhere and d.family and d.tool:
            parts.append(_sentence(f"{canonical_phrase(d.family, d.tool)} {_content_of(d)}"))
            actions.append((d.index, "reattribute"))
            factual_left = True
        elif (
            d.verdict in ("contradicted", "unsupported", "conflated")
            and d.family
            and d.tool
            and d.best_chunk
        ):
            quote = d.best_chunk.strip().replace('"', "'")
            parts.append(f'{canonical_phrase(d.family, d.tool)} "{_sentence(quote)}"')
            actions.append((d.index, "evidence_rewrite"))
            factual_left = True
        else:
            actions.append((d.index, "prune"))
    return " ".join(parts), actions, factual_left


def repair(
    result: AnswerResult,
    verify: Callable[[str], AnswerResult],
    *,
    max_iterations: int = 1,
) -> RepairResult:
    """Repair a blocked ``result`` with at most ``max_iterations`` revise-and-reverify
    rounds (1 to :data:`MAX_ITERATIONS`); an allowed result is returned unchanged."""
    if not 1 <= max_iterations <= MAX_ITERATIONS:
        raise ValueError(f"repair iterations must be 1..{MAX_ITERATIONS}, got {max_iterations}")
    if result.verdict.allowed:
        return RepairResult(False, (), "none", result)
    steps: list[RepairStep] = []
    current = result
    used: set[str] = set()
    for iteration in range(1, max_iterations + 1):
        text, actions, factual_left = _revise(current)
        used.update(a for _, a in actions)
        if not factual_left or not text.strip():
            break
        current = verify(text)
        steps.append(RepairStep(iteration, tuple(actions), text, current.verdict.verdict))
        if current.verdict.allowed:
            method = "rewrite" if used & {"reattribute", "evidence_rewrite"} else "prune"
            return RepairResult(True, tuple(steps), method, current)
    final = verify(FALLBACK)
    steps.append(RepairStep(0, (), FALLBACK, final.verdict.verdict))
    return RepairResult(True, tuple(steps), "fallback", final)

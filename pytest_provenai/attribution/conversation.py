"""Conversation, not assertion: a learned check for the sentences of an answer that talk to
the reader ("Clear skies, should you go after it.", "Lots of love, Priya x") in wordings
the rules of :func:`.decompose.is_pleasantry` do not know.

The rules decide first; this model only looks at a claim they left factual, and only when
the claim could not be checking anything: it holds no protected value (number, date,
identifier), states no source, cites nothing, and at most :attr:`ConversationModel.max_shared`
of its content words occur in the trace's evidence ("The band is still showing as pending,
so get practising!" shares "band" and "pending" with the supplier table: it asserts). Then
a logistic model over the sentence's embedding gives the probability that it is
conversation; at or above the threshold the claim is ``non_factual`` with the reason
``conversational``. A claim the model wrongly takes for conversation is not checked, which
lets it through, so the threshold is chosen on hand-written train and validation domains
to take no factual claim there (see ``provenai verify conversation``).

The model is data: :func:`read_conversation_model` reads the fitted weights the verify
package ships (``pytest_provenai/verify/data/conversation.json``); fitting needs
scikit-learn and lives in :mod:`pytest_provenai.verify.conversation`. Pure Python here.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_provenai._io import sha256_bytes
from pytest_provenai.attribution.decompose import Claim
from pytest_provenai.attribution.protected import content_terms
from pytest_provenai.errors import AttributionError
from pytest_provenai.frozen.traces import EvidenceSet

__all__ = [
    "CONVERSATION_VERSION",
    "ConversationModel",
    "evidence_terms",
    "may_be_conversation",
    "read_conversation_model",
]

CONVERSATION_VERSION = 1
"""Format version of the model file."""


@dataclass(frozen=True)
class ConversationModel:
    """A fitted logistic model over sentence embeddings. ``encoder`` is the identity of the
    embedding model it was fitted with (a verifier with another encoder refuses it);
    ``sha256`` the digest of the model file."""

    weights: tuple[float, ...]
    bias: float
    threshold: float
    max_shared: float
    encoder: Mapping[str, Any]
    sha256: str

    @property
    def identity(self) -> dict[str, Any]:
        return {"sha256": self.sha256, "threshold": self.threshold, "max_shared": self.max_shared}

    def probability(self, vector: Sequence[float]) -> float:
        """P(conversation) of one sentence embedding."""
        if len(vector) != len(self.weights):
            raise ValueError(
                f"embedding has {len(vector)} dimensions, the conversation model "
                f"{len(self.weights)}"
            )
        z = self.bias + math.fsum(w * x for w, x in zip(self.weights, vector, strict=True))
        return 1.0 / (1.0 + math.exp(-z)) if z >= 0 else math.exp(z) / (1.0 + math.exp(z))


def evidence_terms(evidence: EvidenceSet) -> set[str]:
    """The content words of every evidence object (what a claim may share with them)."""
    return set().union(*(content_terms(e.text) for e in evidence.items))


def may_be_conversation(claim: Claim, shared_with: set[str], max_shared: float) -> bool:
    """Whether the model may call ``claim`` conversation (see the module docstring);
    ``shared_with``: the evidence's content words (:func:`evidence_terms`)."""
    if not claim.factual or claim.values or claim.cites:
        return False
    if claim.attribution.status != "unavailable":
        return False
    terms = content_terms(claim.content)
    return len(terms & shared_with) <= max_shared * len(terms)


def read_conversation_model(path: Path) -> ConversationModel:
    """The model in ``path`` (AttributionError naming the file and field when unusable)."""
    try:
        data = path.read_bytes()
        obj = json.loads(data)
    except (OSError, ValueError) as exc:
        raise AttributionError(
            f"{path}: conversation model unreadable ({exc}); write it with 'provenai verify "
            "conversation'"
        ) from None

    def field(name: str, check: Any, expected: str) -> Any:
        value = obj.get(name) if isinstance(obj, dict) else None
        if value is None or not check(value):
            raise AttributionError(
                f"{path}: field {name!r} must be {expected}; write the file again with "
                "'provenai verify conversation'"
            )
        return value

    def number(v: Any) -> bool:
        return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)

    field("version", lambda v: v == CONVERSATION_VERSION, f"{CONVERSATION_VERSION}")
    weights = field(
        "weights", lambda v: isinstance(v, list) and v and all(map(number, v)), "a list of numbers"
    )
    return ConversationModel(
        weights=tuple(float(w) for w in weights),
        bias=float(field("bias", number, "a number")),
        threshold=float(field("threshold", lambda v: number(v) and 0 < v < 1, "in (0, 1)")),
        max_shared=float(field("max_shared", lambda v: number(v) and 0 <= v <= 1, "in [0, 1]")),
        encoder=field("encoder", lambda v: isinstance(v, dict), "the encoder's identity"),
        sha256=sha256_bytes(data),
    )

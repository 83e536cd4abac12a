"""Fit the conversation model (:mod:`pytest_provenai.attribution.conversation`) on the
hand-written train sets and choose its threshold on train and validation.

Every gold claim of a ``*-train`` set is a training sentence: ``non_factual`` claims are
conversation, every other claim is not; not-enough-evidence claims weigh
:data:`NEE_WEIGHT` times (an on-topic claim with nothing behind it is the claim a model
most easily takes for small talk, and the one that must not be let through). The logistic
model (scikit-learn, ``C``=:data:`C`, balanced classes) is fitted on the MiniLM embeddings
of the claim texts. The threshold is the lowest of :data:`THRESHOLDS` at which no factual
claim of the train or validation sets that the model may judge
(:func:`~pytest_provenai.attribution.conversation.may_be_conversation`) is taken for
conversation; when every threshold takes one, fitting fails. Test splits are refused.

Written by ``provenai verify conversation --handwritten SET... --out FILE`` (the shipped
file is ``pytest_provenai/verify/data/conversation.json``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_provenai._io import atomic_write_text, dumps_stable, sha256_text
from pytest_provenai.attribution.conversation import (
    CONVERSATION_VERSION,
    evidence_terms,
    may_be_conversation,
)
from pytest_provenai.attribution.decompose import claim_at
from pytest_provenai.attribution.pipeline import Encoder
from pytest_provenai.attribution.record import case_listing
from pytest_provenai.errors import AttributionError
from pytest_provenai.frozen.traces import collect_evidence
from pytest_provenai.verify.derive import handwritten_cases

__all__ = ["MAX_SHARED", "NEE_WEIGHT", "THRESHOLDS", "C", "fit_conversation", "sentences_of"]

C = 3.0
NEE_WEIGHT = 3.0
MAX_SHARED = 0.25
#: 0.975 since the thirty-first round: a train domain's rule stated as a welcome ("You are
#: welcome to bring a scanner …", a contradiction) scores 0.969.
THRESHOLDS = (0.8, 0.85, 0.9, 0.95, 0.975)


@dataclass(frozen=True)
class Sentence:
    text: str
    verdict: str
    split: str
    candidate: bool

    @property
    def conversation(self) -> bool:
        return self.verdict == "non_factual"


def sentences_of(folders: Sequence[str | Path]) -> list[tuple[str, str, list[Sentence]]]:
    """(set folder, split, its gold claims as sentences) of hand-written train/validation
    sets (a test split or a trace in two sets is refused, one line naming it)."""
    out = []
    for folder, split, cases in handwritten_cases(folders):
        sentences = []
        for case in cases:
            listing = case_listing(case)
            terms = evidence_terms(collect_evidence(case.calls, case.families))
            for answer in case.answers:
                for j, gold in enumerate(answer.claims):
                    claim = claim_at(answer.text, gold.range, case.families, j, listing=listing)
                    sentences.append(
                        Sentence(
                            claim.text.strip(),
                            gold.verdict,
                            split,
                            may_be_conversation(claim, terms, MAX_SHARED),
                        )
                    )
        out.append((folder, split, sentences))
    return out


def fit_conversation(encoder: Encoder, folders: Sequence[str | Path]) -> dict[str, Any]:
    """The conversation model file's body (see the module docstring)."""
    from sklearn.linear_model import LogisticRegression

    sets = sentences_of(folders)
    train = [s for _, split, ss in sets if split == "train" for s in ss]
    checked = [s for _, _, ss in sets for s in ss]
    if not any(s.conversation for s in train) or all(s.conversation for s in train):
        raise AttributionError(
            "the train sets need both non_factual and factual claims to fit the "
            "conversation model (name *-train sets with --handwritten)"
        )
    vectors = encoder.embed([s.text for s in checked])
    index = {id(s): i for i, s in enumerate(checked)}
    x_train = [vectors[index[id(s)]] for s in train]
    y_train = [int(s.conversation) for s in train]
    weight = [NEE_WEIGHT if s.verdict == "not_enough_evidence" else 1.0 for s in train]
    model = LogisticRegression(C=C, max_iter=5000, class_weight="balanced")
    model.fit(x_train, y_train, sample_weight=weight)
    probabilities = model.predict_proba(vectors)[:, 1]
    p_of = {id(s): float(probabilities[index[id(s)]]) for s in checked}

    def tally(split: str, threshold: float) -> dict[str, int]:
        pool = [s for s in checked if s.split == split]
        taken = [s for s in pool if s.candidate and p_of[id(s)] >= threshold]
        return {
            "sentences": len(pool),
            "non_factual": sum(s.conversation for s in pool),
            "candidates": sum(s.candidate for s in pool),
            "non_factual_taken": sum(s.conversation for s in taken),
            "factual_taken": sum(not s.conversation for s in taken),
        }

    sweep: list[dict[str, Any]] = [
        {"threshold": t, "train": tally("train", t), "validation": tally("validation", t)}
        for t in THRESHOLDS
    ]
    safe = [
        row
        for row in sweep
        if row["train"]["factual_taken"] == 0 and row["validation"]["factual_taken"] == 0
    ]
    if not safe:
        raise AttributionError(
            "every threshold of the conversation model takes a factual claim of the train or "
            f"validation sets for conversation ({', '.join(map(str, THRESHOLDS))})"
        )
    chosen = safe[0]["threshold"]
    return {
        "version": CONVERSATION_VERSION,
        "encoder": encoder.identity,
        "C": C,
        "nee_weight": NEE_WEIGHT,
        "max_shared": MAX_SHARED,
        "threshold": chosen,
        "bias": round(float(model.intercept_[0]), 8),
        "weights": [round(float(w), 8) for w in model.coef_[0]],
        "sets": [
            {
                "set": Path(folder).resolve().name,
                "split": split,
                "sentences": len(ss),
                "sha256": sha256_text(dumps_stable([[s.text, s.verdict] for s in ss])),
            }
            for folder, split, ss in sets
        ],
        "sweep": sweep,
    }


def write_conversation(path: str | Path, body: dict[str, Any]) -> None:
    """Write the model file atomically (stable JSON)."""
    atomic_write_text(Path(path), dumps_stable(body))

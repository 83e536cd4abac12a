"""Abstention audit: an explicit unknown, and values the answer made up.

Two questions about one parsed answer (the ``Answer:`` section, as
:func:`pytest_provenai.subject.parse.parse_output` returns it, citation tags removed):

1. **Did it abstain?** :func:`detect_abstention` looks for an explicit unknown from the
   documented lists :data:`ABSTENTION_PHRASES` (anywhere in the answer, as whole words) and
   :data:`BARE_ABSTENTIONS` (only when they are the whole answer: ``unknown``, ``none``,
   ``n/a`` …, so that *Unknown Pleasures* or *None of the Above* are titles, not
   abstentions). An answer that says "unknown" and still commits to a protected literal
   (``"not specified, probably 73 days"``) is **hedged**, not an abstention.
2. **Did it make a value up?** :func:`fabricated_values` returns every *protected literal* of
   the answer that no original contains (and the question does not contain either: echoing
   the question's own model number adds nothing).

Protected literals (dates, times, identifiers, numbers) and what supports them live in
:mod:`pytest_provenai.audit.literals`.

Pure Python, no pytest import.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pytest_provenai.audit.literals import Literal, LiteralIndex, protected_literals

__all__ = [
    "ABSTENTION_PHRASES",
    "BARE_ABSTENTIONS",
    "Abstention",
    "abstention_verdict",
    "detect_abstention",
    "fabricated_values",
]


# --- abstention ----------------------------------------------------------------------------

ABSTENTION_PHRASES: tuple[str, ...] = (
    "unknown",  # only in the forms "is unknown", "remains unknown", "unknown." — see below
    "not specified",
    "unspecified",
    "not stated",
    "not mentioned",
    "not provided",
    "not given",
    "not known",
    "not available",
    "not included",
    "not found",
    "not clear",
    "unclear",
    "cannot be determined",
    "can't be determined",
    "could not be determined",
    "cannot determine",
    "can't determine",
    "cannot tell",
    "can't tell",
    "cannot answer",
    "can't answer",
    "cannot be answered",
    "unanswerable",
    "no information",
    "no answer",
    "no data",
    "no mention",
    "not enough information",
    "insufficient information",
    "insufficient evidence",
    "does not say",
    "do not say",
    "does not state",
    "do not state",
    "does not specify",
    "do not specify",
    "does not mention",
    "do not mention",
    "does not give",
    "do not give",
    "i don't know",
    "i do not know",
    "don't know",
    "no way to know",
)
"""Phrases that state an explicit unknown wherever they occur in the answer (whole words,
case-insensitive, any run of whitespace between words, ``’`` read as ``'``). ``unknown``
counts here only as ``… is/are/remains/was unknown`` or as the answer's first word followed
by punctuation (``Unknown. The resources …``); alone it is in :data:`BARE_ABSTENTIONS`."""

BARE_ABSTENTIONS: tuple[str, ...] = (
    "unknown",
    "none",
    "n/a",
    "na",
    "not applicable",
    "no idea",
    "nothing",
    "?",
)
"""Answers that are an abstention only when they are the whole answer (case-insensitive,
surrounding punctuation and a lead-in ``the answer is`` ignored)."""


def _phrase_pattern(phrase: str) -> str:
    words = [re.escape(w).replace("'", "['’]") for w in phrase.split()]
    return r"(?<![\w])" + r"\s+".join(words) + r"(?![\w])"


_PHRASES = [
    (p, re.compile(_phrase_pattern(p), re.IGNORECASE)) for p in ABSTENTION_PHRASES if p != "unknown"
]
_UNKNOWN_PREDICATE = re.compile(
    r"(?<![\w])(?:is|are|was|were|remains?|remained|stays?|still|currently|otherwise)\s+unknown"
    r"(?![\w])",
    re.IGNORECASE,
)
_UNKNOWN_FIRST = re.compile(r"^\W*unknown\s*[.,;:!—–-]", re.IGNORECASE)
_LEAD_IN = re.compile(r"^(?:the\s+)?(?:final\s+)?answer\s+is\s*[:,]?\s*", re.IGNORECASE)


@dataclass(frozen=True)
class Abstention:
    """The abstention reading of one answer.

    ``abstained``: an explicit unknown and no protected literal beside it. ``phrase``: the
    phrase that matched (None when none did). ``hedged``: a phrase matched but the answer
    also commits to a value (``committed`` lists those literals as written).
    """

    abstained: bool
    phrase: str | None
    hedged: bool
    committed: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        return {
            "abstained": self.abstained,
            "phrase": self.phrase,
            "hedged": self.hedged,
            "committed": list(self.committed),
        }


def _bare(answer: str) -> str:
    text = " ".join(answer.split())
    text = _LEAD_IN.sub("", text)
    return text.strip(" \t.,;:!\"'`*()[]").lower()


def _matched_phrase(answer: str) -> str | None:
    bare = _bare(answer)
    if bare in BARE_ABSTENTIONS or (not bare and answer.strip() == "?"):
        return bare or "?"
    if _UNKNOWN_PREDICATE.search(answer) or _UNKNOWN_FIRST.search(answer):
        return "unknown"
    for phrase, pattern in _PHRASES:
        if pattern.search(answer):
            return phrase
    return None


def detect_abstention(answer: str, question: str = "") -> Abstention:
    """Read ``answer`` (the parsed answer section) as an abstention or not.

    Literals that also occur in ``question`` do not count as commitments
    (``"The interval for KX-4471 is not specified"`` abstains).
    """
    phrase = _matched_phrase(answer)
    if phrase is None:
        return Abstention(False, None, False)
    echo = LiteralIndex([question])
    committed = tuple(lit.text for lit in protected_literals(answer) if not echo.supports(lit))
    if committed:
        return Abstention(False, phrase, True, committed)
    return Abstention(True, phrase, False)


def fabricated_values(answer: str, originals: Sequence[str], question: str = "") -> list[Literal]:
    """Protected literals of ``answer`` that no original contains and the question does
    not contain either, in answer order."""
    support = LiteralIndex([*originals, question])
    return [lit for lit in protected_literals(answer) if not support.supports(lit)]


def abstention_verdict(answer: str, originals: Sequence[str], question: str = "") -> dict[str, Any]:
    """The abstention layer of a record: ``{"abstained", "phrase", "hedged", "committed",
    "fabricated_values": [{kind, text}], "fabricated": bool}``."""
    a = detect_abstention(answer, question)
    fabricated = fabricated_values(answer, originals, question)
    return {
        **a.as_dict(),
        "fabricated_values": [lit.as_dict() for lit in fabricated],
        "fabricated": bool(fabricated),
    }

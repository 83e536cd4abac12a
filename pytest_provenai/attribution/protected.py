"""Protected values and lexical signals of a claim against its routed premise.

*Protected values* (ProvenanceGuard §III-B/E) are the literals that change a claim's meaning:
numbers, units, dates, times, identifiers (the machinery of
:mod:`pytest_provenai.audit.abstention`, for a claim's recorded values) and quoted values
(``"…"``, ``“…”``). A claim's value is *present* in a premise when the premise states the
same meaning (:func:`check_values`, through :mod:`pytest_provenai.attribution.values`:
dates and times by ``dateparser``, quantities by ``pint``, number words by
``number-parser``, versions and identifiers whole, quotes casefolded as text).

*Content terms* are the casefolded word tokens of a text minus stopwords; the overlap of a
claim with a premise is the fraction of the claim's content terms that the premise has.

Pure Python.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from pytest_provenai.attribution.values import Value as ReadValue
from pytest_provenai.attribution.values import match_values, read_values
from pytest_provenai.audit.literals import Literal, protected_literals

__all__ = [
    "STOPWORDS",
    "ValueCheck",
    "check_values",
    "claim_values",
    "content_terms",
    "has_negation",
    "overlap",
    "protected_values",
    "rescue",
]

STOPWORDS = frozenset(
    """a an the and or but if of to in on at by for with from as is are was were be been being
    this that these those it its it's he she they them his her their we our you your i me my
    which who whom whose what when where why how there here than then so such into onto over
    under about after before during while also both either each other any all some more most
    has have had do does did not no nor only own same too very can will just should would could
    may might must shall upon via per according says say said states stated shows showed
    lists listed reports reported""".split()
)

_WORD = re.compile(r"[^\W_]+(?:['’][^\W_]+)*")
#: A quotation; a straight double quote right after a digit is a mark of seconds or inches
#: (54°29'51.62"N, a 27" screen), not a quote.
_QUOTED = re.compile(r"(?<!\d)\"([^\"\n]{1,200})\"|“([^”\n]{1,200})”")
_NEGATION = re.compile(
    r"\b(?:not|no|never|neither|nor|none|without|cannot|nobody|nothing)\b|n['’]t\b",
    re.IGNORECASE,
)
_RESCUE_OVERLAP = 0.5
"""Content-term overlap from which a neutral decision on a claim with protected values, all
present by meaning in the claim's row, may be lexically rescued (half of its words: "Gala
start: 9.30 pm sharp" against the gala's row; "above" until the nineteenth round, which
rescued three more supported validation claims and no contradiction there)."""
_RESCUE_OVERLAP_NO_VALUES = 0.8
"""The same for a claim that states no protected value (nothing but its words to check)."""


def content_terms(text: str) -> set[str]:
    """Casefolded word tokens of ``text`` that are not stopwords (possessive ``'s`` cut)."""
    out: set[str] = set()
    for m in _WORD.finditer(text):
        word = m.group(0).casefold()
        for suffix in ("'s", "’s"):
            if word.endswith(suffix):
                word = word[: -len(suffix)]
        if word and word not in STOPWORDS:
            out.add(word)
    return out


def overlap(claim: str, premise: str | Iterable[str]) -> float:
    """Fraction of the claim's content terms that occur in the premise (1.0 for a claim
    without content terms)."""
    terms = content_terms(claim)
    if not terms:
        return 1.0
    have: set[str] = set()
    for text in [premise] if isinstance(premise, str) else premise:
        have |= content_terms(text)
    return len(terms & have) / len(terms)


def has_negation(text: str) -> bool:
    return _NEGATION.search(text) is not None


@dataclass(frozen=True)
class Value:
    """A protected value of a claim: a literal of :mod:`audit.abstention`, or a quote."""

    text: str
    kind: str  # date | time | identifier | number | quote
    literal: Literal | None = None


def protected_values(text: str) -> list[Value]:
    """The protected values of ``text`` in text order: literals, then quoted values."""
    values = [Value(lit.text, lit.kind, lit) for lit in protected_literals(text)]
    for m in _QUOTED.finditer(text):
        quote = (m.group(1) or m.group(2) or "").strip()
        if any(ch.isalnum() for ch in quote) and all(v.text != quote for v in values):
            values.append(Value(quote, "quote"))
    return values


def _folded(text: str) -> str:
    return " ".join(text.split()).casefold()


@dataclass(frozen=True)
class ValueCheck:
    """How a claim's protected values fare against a premise, compared by meaning
    (:mod:`pytest_provenai.attribution.values`): ``missing`` are absent from it;
    ``conflicting`` are the missing ones of a kind the premise states other values of — a
    swapped number, date, time, version or a changed unit; ``unparsed`` are the values no
    library could read, compared as text."""

    values: tuple[str, ...]
    missing: tuple[str, ...]
    conflicting: tuple[str, ...]
    unparsed: tuple[str, ...] = ()

    @property
    def count(self) -> int:
        return len(self.values)

    @property
    def coverage(self) -> float:
        return 1.0 if not self.values else 1.0 - len(self.missing) / len(self.values)


def claim_values(claim: str) -> list[ReadValue]:
    """The claim's values read by meaning, plus its quoted values (compared as text)."""
    out = list(read_values(claim))
    for m in _QUOTED.finditer(claim):
        quote = (m.group(1) or m.group(2) or "").strip()
        if any(ch.isalnum() for ch in quote) and all(v.text != quote for v in out):
            out.append(ReadValue(quote, "text", _folded(quote), True, m.span()))
    return out


def check_values(claim: str, premise: Sequence[str] | str) -> ValueCheck:
    """Check every protected value of ``claim`` against ``premise`` (one text or several),
    by meaning: ``20:00`` = ``8 pm``, ``2018-05-03`` = ``3 May 2018``, ``twelve`` = ``12``,
    ``0.8 kg`` = ``800 g``; versions and identifiers whole."""
    values = claim_values(claim)
    matches = match_values(values, premise)
    return ValueCheck(
        tuple(m.value.text for m in matches),
        tuple(m.value.text for m in matches if not m.present),
        tuple(m.value.text for m in matches if m.conflicting),
        tuple(m.value.text for m in matches if not m.value.parsed),
    )


def rescue(
    values: ValueCheck,
    term_overlap: float,
    *,
    structured: bool,
    conflict: bool = False,
) -> bool:
    """The lexical rescue of a neutral (not-enough-evidence) decision: only for exact
    structured evidence, only when every protected value of the claim is present by meaning,
    nothing in its evidence unit negates or contradicts the claim (``conflict``: negation,
    antonym, a value from another row), and the content-term overlap reaches
    :data:`_RESCUE_OVERLAP` (:data:`_RESCUE_OVERLAP_NO_VALUES` for a claim without
    values)."""
    bar = _RESCUE_OVERLAP if values.values else _RESCUE_OVERLAP_NO_VALUES
    return structured and not conflict and not values.missing and term_overlap >= bar

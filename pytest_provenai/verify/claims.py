"""Claim text derived from HotpotQA sentences (no model here): a sentence made readable on
its own, and the edits that turn a delivered sentence into a labelled claim.

* :func:`resolve` — the sentence stripped, a leading pronoun replaced by the paragraph's title;
* :func:`swap_value` — a protected value (number, year, date) swapped for another
  (``contradicted``);
* :func:`negate` — a negation inserted after the first ``is/was/are/were`` (``contradicted``);
* :func:`swap_entities` — two named entities swapped (``unsupported``);
* :func:`attributed` — an attribution phrase (:data:`PHRASES`, by family) put before a claim.

A :class:`Draft` is one labelled claim before it is placed in an answer.
"""

from __future__ import annotations

import random
import re
from dataclasses import dataclass
from typing import Any

from pytest_provenai.attribution.protected import has_negation
from pytest_provenai.audit.literals import protected_literals

__all__ = [
    "PHRASES",
    "TEMPLATES",
    "Draft",
    "attributed",
    "bare_title",
    "negate",
    "resolve",
    "swap_entities",
    "swap_value",
    "usable",
]

_PRONOUN = re.compile(r"^(He|She|It|They)\b")
_POSSESSIVE = re.compile(r"^(His|Her|Its|Their)\b")
_NEGATABLE = re.compile(r"\b(is|was|are|were)\b")
_NAME = re.compile(r"\b[A-Z][a-z]+(?:\s+(?:[A-Z][a-z]+|of|de|von|van|the))*\s+[A-Z][a-z]+\b")
TEMPLATES = (
    "Please verify these details against the original sources.",
    "I hope this helps.",
    "For more information, consult the full documents.",
    "Let me know if you need anything else.",
)
#: Attribution phrases the derivation writes, by family.
PHRASES = {
    "search": ("According to the search results,", "The search results say that"),
    "document": ("According to the document,", "The evidence document states that"),
    "metadata": ("According to the metadata,",),
}


@dataclass
class Draft:
    """A labelled claim before it is placed in an answer."""

    text: str
    verdict: str
    gold_source: str | None
    stated_family: str | None
    kind: str  # how it was derived: positive, value_swap, negation, entity_swap, ...

    def values(self) -> list[str]:
        from pytest_provenai.attribution.protected import protected_values

        return list(dict.fromkeys(v.text for v in protected_values(self.text)))

    def claim(self, start: int, end: int) -> dict[str, Any]:
        """The claim's entry in an answer document; ``start``/``end`` are its UTF-8 byte
        range in the answer text."""
        return {
            "range": [start, end],
            "verdict": self.verdict,
            "gold_source": self.gold_source,
            "stated_family": self.stated_family,
            "protected_values": self.values(),
        }


def bare_title(title: str) -> str:
    """A paragraph title without its parenthesised qualifier ("1920 (film)" -> "1920")."""
    return re.sub(r"\s*\([^)]*\)$", "", title).strip()


def resolve(sentence: str, title: str) -> str:
    """The sentence stripped, with a leading pronoun replaced by the paragraph's title."""
    text = " ".join(sentence.split())
    name = bare_title(title)
    text = _PRONOUN.sub(name, text, count=1)
    text = _POSSESSIVE.sub(f"{name}'s", text, count=1)
    return text


def usable(sentence: str) -> bool:
    """Whether a resolved sentence reads as one claim (5-45 words, a closing mark)."""
    words = sentence.split()
    return 5 <= len(words) <= 45 and sentence.rstrip()[-1:] in ".!?\"'”)"


def swap_value(sentence: str, rng: random.Random) -> tuple[str, str] | None:
    """(sentence with one number/year/date value changed, the new value) or None."""
    literals = [lit for lit in protected_literals(sentence) if lit.kind in ("number", "date")]
    rng.shuffle(literals)
    for lit in literals:
        years = list(re.finditer(r"\b(1[0-9]{3}|20[0-9]{2})\b", lit.text))
        if years:
            m = years[0]
            new_year = str(int(m.group(0)) + rng.choice([-7, -5, -3, -2, 2, 3, 4, 6]))
            new = lit.text[: m.start()] + new_year + lit.text[m.end() :]
        else:
            m2 = re.search(r"\d[\d,]*(?:\.\d+)?", lit.text)
            if m2 is None:
                continue
            digits = m2.group(0).replace(",", "")
            try:
                value = float(digits)
            except ValueError:
                continue
            changed = value * rng.choice([2, 3]) + rng.choice([1, 2, 5])
            text = (
                str(int(changed))
                if "." not in digits
                else f"{changed:.{len(digits.split('.')[1])}f}"
            )
            new = lit.text[: m2.start()] + text + lit.text[m2.end() :]
        if new != lit.text:
            start, end = lit.span
            return sentence[:start] + new + sentence[end:], new
    return None


def negate(sentence: str) -> str | None:
    if has_negation(sentence):
        return None
    m = _NEGATABLE.search(sentence)
    if m is None:
        return None
    return sentence[: m.end()] + " not" + sentence[m.end() :]


def swap_entities(sentence: str) -> str | None:
    """The sentence with two distinct named entities swapped (not joined by "and"/"or")."""
    names = [m for m in _NAME.finditer(sentence)]
    for i in range(len(names)):
        for j in range(i + 1, len(names)):
            a, b = names[i], names[j]
            if a.group(0) == b.group(0):
                continue
            between = sentence[a.end() : b.start()]
            if re.fullmatch(r"\s*(?:,|and|or|&)?\s*(?:and|or)?\s*", between):
                continue
            swapped = (
                sentence[: a.start()]
                + b.group(0)
                + sentence[a.end() : b.start()]
                + a.group(0)
                + sentence[b.end() :]
            )
            return swapped if swapped != sentence else None
    return None


def attributed(phrase: str, sentence: str) -> str:
    """The sentence with an attribution phrase before it (a leading article lower-cased)."""
    first = sentence.split(" ", 1)[0]
    if first.lower() in ("the", "a", "an", "in", "it", "this", "on", "at", "as", "after"):
        sentence = sentence[:1].lower() + sentence[1:]
    return f"{phrase} {sentence}"

"""Claim accounting: every statement of an answer is counted, cited or not.

**What a claim is.** The model's output is split into its kept sections by
:func:`pytest_provenai.subject.parse.split_sections` — ``preamble`` (text before the first
header, or the whole output when it has no header), ``answer``, ``evidence``, ``reasoning``;
text the parser drops as trailing junk (a special token, a new ``Question:`` turn, a repeated
section) is no part of this answer. Each section is split into lines, each line into
sentences (:func:`split_sentences`); every non-empty sentence is one **claim**. The answer
line is a claim even when it is only a noun phrase (``Roughing It [R1]``). Citation tags
that open a sentence (``… Nevada. [R0] Roughing …``) belong to the sentence before them.

**Citations.** Tags are read from each claim: ``[R1]``, ``[R1, R2]``, ``(R1)``, a bare
``R1``, ``[r01]``; and aid tags ``[A0]`` (bracketed or parenthesised only). Each distinct id
in a claim is one citation. A citation resolves through ``origins`` (the display id of every
block of the generator view → ``"original"`` or ``"generated"``) to one of
:data:`CITATION_TARGETS`: ``original``, ``aid``, ``unresolved`` (the id names no block).

**Claim status** (:data:`CLAIM_STATUSES`, first that applies): ``cited_aid`` — some citation
points at a generated aid (fail closed: mixing in an original does not excuse it);
``cited_original`` — some citation resolves to an original; ``cited_unresolved`` — cited, but
no id names a block; ``uncited``. Accounting is **complete** when every claim has a status,
the status counts add up to the number of claims, and the claims cover every non-blank
character of the kept sections (nothing the answer said was left out of the denominator).

**Rates.** Claim level: each status count over ``n_claims`` (None when there are no claims).
Citation level: ``precision`` = citations resolving to an original / all citations; an output
without citations has **undefined** precision: ``None`` and ``precision_undefined: true``,
never 0 and never 1. Optionally (``support``), each claim lists its protected literals that
no original contains (:mod:`pytest_provenai.audit.literals`).

Pure Python, no pytest import.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from pytest_provenai.audit.literals import LiteralIndex, protected_literals
from pytest_provenai.subject.parse import split_sections

__all__ = [
    "CITATION_TARGETS",
    "CLAIM_STATUSES",
    "Claim",
    "claim_accounting",
    "extract_claims",
    "find_citations",
    "split_sentences",
]

CLAIM_STATUSES = ("cited_original", "cited_aid", "cited_unresolved", "uncited")
CITATION_TARGETS = ("original", "aid", "unresolved")

_ID = r"[RrAa][ \t]?[0-9]+"
_SEP = r"[ \t]*(?:,|;|/|&|\band\b)?[ \t]*"
_TAG = re.compile(
    rf"\[[ \t]*{_ID}(?:{_SEP}{_ID})*[ \t]*\]"
    rf"|\([ \t]*{_ID}(?:{_SEP}{_ID})*[ \t]*\)"
    r"|(?<![\w\[(-])R[0-9]+(?![\w-])"
)
_ONE_ID = re.compile(r"([RrAa])[ \t]?([0-9]+)")
_LEADING_TAGS = re.compile(rf"^(?:[ \t]*(?:{_TAG.pattern})[ \t]*[.,;:]?)+")
_SENTENCE_END = re.compile(r"[.!?]+(?=\s+[\"'(\[]?[A-Z0-9\[])")
_ABBREVIATIONS = frozenset(
    {"mr", "mrs", "ms", "dr", "st", "jr", "sr", "vs", "no", "co", "inc", "ltd", "mt", "ft"}
    | {"e.g", "i.e", "etc", "approx", "fig", "vol", "jan", "feb", "mar", "apr", "jun", "jul"}
    | {"aug", "sep", "sept", "oct", "nov", "dec", "art", "sec", "p", "pp"}
)


def find_citations(text: str) -> list[str]:
    """Distinct citation ids in ``text`` in order of first appearance, normalised to
    ``R<i>``/``A<i>`` (``[r01]`` → ``R1``)."""
    ids: dict[str, None] = {}
    for m in _TAG.finditer(text):
        for one in _ONE_ID.finditer(m.group(0)):
            letter, digits = one.groups()
            ids.setdefault(f"{letter.upper()}{digits.lstrip('0') or '0'}")
    return list(ids)


def split_sentences(text: str) -> list[str]:
    """``text`` split into lines, and each line into sentences at ``.``/``!``/``?`` followed
    by whitespace and a capital letter, digit or tag — except after an abbreviation
    (``Dr.``, ``e.g.``), an initial (``J. R. R. Tolkien``) or inside a number (``3.5``).
    A sentence that starts with citation tags gives them to the sentence before it.
    Blank pieces are dropped; otherwise every character is kept (stripped at the ends)."""
    out: list[str] = []
    for line in text.split("\n"):
        start = 0
        pieces: list[str] = []
        for m in _SENTENCE_END.finditer(line):
            word_start = m.start()
            while word_start > 0 and not (
                line[word_start - 1].isspace() or line[word_start - 1] in "([\"'"
            ):
                word_start -= 1
            word = line[word_start : m.start()].lower()
            if m.group(0) == "." and (
                (len(word) == 1 and word.isalpha()) or word.rstrip(".") in _ABBREVIATIONS
            ):
                continue
            pieces.append(line[start : m.end()])
            start = m.end()
        pieces.append(line[start:])
        for piece in pieces:
            piece = piece.strip()
            if not piece:
                continue
            lead = _LEADING_TAGS.match(piece)
            if lead and out and lead.end() > 0:
                out[-1] = f"{out[-1]} {piece[: lead.end()].strip()}"
                piece = piece[lead.end() :].strip()
                if not piece:
                    continue
            out.append(piece)
    return out


@dataclass(frozen=True)
class Claim:
    """One sentence of the answer, its citations and how they resolve."""

    section: str
    text: str
    citations: tuple[str, ...]
    targets: tuple[str, ...]  # one of CITATION_TARGETS per citation
    status: str
    unsupported_literals: tuple[str, ...] = ()

    def as_dict(self) -> dict[str, Any]:
        return {
            "section": self.section,
            "text": self.text,
            "citations": list(self.citations),
            "targets": list(self.targets),
            "status": self.status,
            "unsupported_literals": list(self.unsupported_literals),
        }


def _target(cid: str, origins: Mapping[str, str]) -> str:
    origin = origins.get(cid)
    if origin == "original":
        return "original"
    if origin == "generated":
        return "aid"
    return "unresolved"


def _status(targets: tuple[str, ...]) -> str:
    if "aid" in targets:
        return "cited_aid"
    if "original" in targets:
        return "cited_original"
    if targets:
        return "cited_unresolved"
    return "uncited"


def extract_claims(
    raw: str, origins: Mapping[str, str], *, support: LiteralIndex | None = None
) -> list[Claim]:
    """Every claim of the raw output ``raw`` (see the module docstring), in text order."""
    claims: list[Claim] = []
    for section, text in split_sections(raw):
        for sentence in split_sentences(text):
            cited = tuple(find_citations(sentence))
            targets = tuple(_target(c, origins) for c in cited)
            unsupported: tuple[str, ...] = ()
            if support is not None:
                unsupported = tuple(
                    lit.text for lit in protected_literals(sentence) if not support.supports(lit)
                )
            claims.append(Claim(section, sentence, cited, targets, _status(targets), unsupported))
    return claims


def _dense(text: str) -> str:
    return "".join(text.split())


def claim_accounting(
    raw: str, origins: Mapping[str, str], *, support: LiteralIndex | None = None
) -> dict[str, Any]:
    """The claim layer of a record for one output.

    ``{"claims": [...], "n_claims", "by_status": {status: count}, "claim_rates": {status:
    rate | None}, "complete": bool, "unaccounted_chars": int, "citations": {"n", "original",
    "aid", "unresolved", "precision", "precision_undefined"},
    "claims_with_unsupported_literals": int}``.
    """
    claims = extract_claims(raw, origins, support=support)
    n = len(claims)
    by_status = {s: sum(c.status == s for c in claims) for s in CLAIM_STATUSES}
    kept = _dense("".join(text for _, text in split_sections(raw)))
    covered = _dense("".join(c.text for c in claims))
    unaccounted = 0 if kept == covered else max(1, abs(len(kept) - len(covered)))
    complete = (
        all(c.status in CLAIM_STATUSES for c in claims)
        and sum(by_status.values()) == n
        and unaccounted == 0
    )
    targets = [t for c in claims for t in c.targets]
    n_cit = len(targets)
    by_target = {t: targets.count(t) for t in CITATION_TARGETS}
    return {
        "claims": [c.as_dict() for c in claims],
        "n_claims": n,
        "by_status": by_status,
        "claim_rates": {s: (by_status[s] / n if n else None) for s in CLAIM_STATUSES},
        "complete": complete,
        "unaccounted_chars": unaccounted,
        "citations": {
            "n": n_cit,
            **by_target,
            "precision": by_target["original"] / n_cit if n_cit else None,
            "precision_undefined": n_cit == 0,
        },
        "claims_with_unsupported_literals": sum(bool(c.unsupported_literals) for c in claims),
    }

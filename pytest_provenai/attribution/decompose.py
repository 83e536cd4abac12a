"""Rule-based claim decomposition (ProvenanceGuard §III-B).

An answer is split into claims, each meant to carry one factual proposition:

1. section headers of the model's three-line format (``Answer:``, ``Evidence:``,
   ``Reasoning:``) are markup, not claims;
2. each line is split into sentences at ``.``/``!``/``?`` followed by whitespace and a
   capital, digit, quote or bracket — not after an abbreviation, an initial, or inside a
   number;
3. a sentence is split further at ``;`` and at a contrastive ``, but`` / ``, while`` /
   ``, whereas`` / ``, and also``; the parts keep the sentence's stated attribution.

A claim keeps its exact text and its [start, end) UTF-8 byte range in the answer. Its
*content* — what is verified — is the text without the attribution phrase and without
citation tags (``[R0]``); literal values (numbers, units, dates, identifiers, quantities,
quoted values) are never rewritten. A claim is *non-factual* when it has no content terms,
or when it is template text (a disclaimer, "consult a professional", "I could not find…")
that carries no protected value: such claims are not evidence-bearing.

An answer-section claim in the three-line format is usually a bare value (``no [R0]``); when
the question is given, its content is the question followed by the value, so the claim
checked is "the answer to the question is …".

Pure Python.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from pytest_provenai.attribution.families import Attribution, find_attribution
from pytest_provenai.attribution.protected import content_terms, protected_values
from pytest_provenai.audit.abstention import detect_abstention
from pytest_provenai.audit.claims import find_citations

__all__ = ["Claim", "claim_at", "decompose", "is_template"]

_HEADER = re.compile(
    r"^[ \t]*(?:\*\*)?(?P<name>final answer|answer|evidence summary|evidence|chain of reasoning|"
    r"reasoning)(?:\*\*)?[ \t]*:[ \t]*",
    re.IGNORECASE | re.MULTILINE,
)
_SENTENCE_END = re.compile(r"[.!?]+[\"'”’)]*(?=\s+[\"'“(\[]?[A-Z0-9\[])")
_CLAUSE = re.compile(r";\s+|,\s+(?=(?:but|while|whereas|and also)\b)")
_ABBREVIATIONS = frozenset(
    "mr mrs ms dr st jr sr vs no co inc ltd mt ft e.g i.e etc approx fig vol jan feb mar apr "
    "jun jul aug sep sept oct nov dec art sec p pp u.s u.k".split()
)
_TAG = re.compile(
    r"\s*(?:\[[ \t]*[RrAa][ \t]?\d+(?:[ \t]*[,;][ \t]*[RrAa]?[ \t]?\d+)*[ \t]*\]"
    r"|\([ \t]*[RrAa][ \t]?\d+(?:[ \t]*[,;][ \t]*[RrAa]?[ \t]?\d+)*[ \t]*\))"
)
_TEMPLATE = re.compile(
    r"\b(?:consult|please\s+(?:verify|check|contact|confirm|note)|i\s+am\s+not\s+a|"
    r"i['’]m\s+not\s+a|not\s+(?:legal|medical|financial|professional)\s+advice|"
    r"for\s+more\s+(?:information|details)|hope\s+this\s+helps|let\s+me\s+know|feel\s+free|"
    r"i\s+(?:cannot|can['’]t|could\s+not|couldn['’]t|was\s+unable\s+to)\s+"
    r"(?:find|verify|determine|answer|confirm)|i\s+do\s+not\s+have|i\s+don['’]t\s+have|"
    r"(?:do|does)\s+not\s+(?:support|allow)\s+a\s+verified|no\s+verified\s+answer|"
    r"double[- ]check|seek\s+professional)",
    re.IGNORECASE,
)


@dataclass(frozen=True)
class Claim:
    """One claim of an answer (see the module docstring). ``start``/``end`` are UTF-8 byte
    offsets into the answer; ``text`` is exactly those bytes."""

    index: int
    text: str
    start: int
    end: int
    content: str
    values: tuple[str, ...]
    attribution: Attribution
    factual: bool
    section: str = ""
    cites: tuple[str, ...] = field(default=())

    def as_dict(self) -> dict[str, Any]:
        return {
            "index": self.index,
            "text": self.text,
            "range": [self.start, self.end],
            "content": self.content,
            "values": list(self.values),
            "attribution": self.attribution.as_dict(),
            "factual": self.factual,
            "section": self.section,
            "cites": list(self.cites),
        }


def is_template(text: str) -> bool:
    """Template text (a disclaimer) with no protected value in it."""
    return _TEMPLATE.search(text) is not None and not protected_values(text)


def _stripped(text: str, spans: list[tuple[int, int]], offset: int) -> list[tuple[int, int]]:
    """The spans of ``text`` without their leading and trailing whitespace, shifted by
    ``offset``; blank ones dropped."""
    out = []
    for s, e in spans:
        piece = text[s:e]
        lead = len(piece) - len(piece.lstrip())
        trail = len(piece.rstrip())
        if trail > lead:
            out.append((offset + s + lead, offset + s + trail))
    return out


def _sentences(line: str, offset: int) -> list[tuple[int, int]]:
    """[start, end) character spans of the sentences of ``line`` (stripped, non-empty)."""
    spans: list[tuple[int, int]] = []
    start = 0
    for m in _SENTENCE_END.finditer(line):
        word_start = m.start()
        while word_start > 0 and not (
            line[word_start - 1].isspace() or line[word_start - 1] in "([\"'“"
        ):
            word_start -= 1
        word = line[word_start : m.start()].lower()
        if m.group(0).rstrip("\"'”’)") == "." and (
            (len(word) == 1 and word.isalpha()) or word.rstrip(".") in _ABBREVIATIONS
        ):
            continue
        spans.append((start, m.end()))
        start = m.end()
    spans.append((start, len(line)))
    return _stripped(line, spans, offset)


def _clauses(text: str, start: int, end: int) -> list[tuple[int, int]]:
    sentence = text[start:end]
    spans: list[tuple[int, int]] = []
    pos = 0
    for m in _CLAUSE.finditer(sentence):
        before = sentence[: m.start()]
        if before.count('"') % 2 or before.count("“") > before.count("”"):
            continue  # never split inside a quotation
        spans.append((pos, m.start()))
        pos = m.end()
    spans.append((pos, len(sentence)))
    return _stripped(sentence, spans, start)


def _content(text: str, attribution: Attribution, span_in_text: tuple[int, int] | None) -> str:
    if span_in_text is not None:
        text = text[: span_in_text[0]] + text[span_in_text[1] :]
    text = _TAG.sub("", text)
    text = " ".join(text.split())
    return text[:1].upper() + text[1:] if attribution.span is not None and text else text


def _make(
    answer: str,
    index: int,
    start: int,
    end: int,
    tools: Mapping[str, str],
    *,
    section: str,
    sentence: tuple[int, int] | None = None,
    question: str | None = None,
) -> Claim:
    """A claim over ``answer[start:end]`` (characters). Attribution is read from the
    enclosing ``sentence`` (default: the claim itself)."""
    text = answer[start:end]
    attribution = find_attribution(text, tools)
    span_in_claim = attribution.span
    if attribution.status == "unavailable" and sentence is not None and sentence[0] < start:
        # a later clause keeps the attribution that opens its sentence
        opening = find_attribution(answer[sentence[0] : start], tools)
        if opening.span is not None and opening.span[0] == 0:
            attribution, span_in_claim = opening, None
    content = _content(text, attribution, span_in_claim)
    bare = _TAG.sub("", text).strip()
    if section == "answer" and question:
        content = f"{question.strip()} {content}"
        factual = bool(bare.strip(" .")) and not detect_abstention(bare, question).abstained
    else:
        factual = bool(content_terms(bare)) and not is_template(text)
    values = tuple(v.text for v in protected_values(content))
    byte_start = len(answer[:start].encode("utf-8"))
    byte_end = byte_start + len(text.encode("utf-8"))
    return Claim(
        index=index,
        text=text,
        start=byte_start,
        end=byte_end,
        content=content,
        values=values,
        attribution=attribution,
        factual=factual,
        section=section,
        cites=tuple(find_citations(text)),
    )


def _segments(answer: str) -> list[tuple[str, int, int]]:
    """(section, start, end) character spans: the text between section headers."""
    headers = list(_HEADER.finditer(answer))
    if not headers:
        return [("", 0, len(answer))]
    out = []
    if answer[: headers[0].start()].strip():
        out.append(("preamble", 0, headers[0].start()))
    for i, h in enumerate(headers):
        end = headers[i + 1].start() if i + 1 < len(headers) else len(answer)
        name = h.group("name").lower()
        section = (
            "answer" if "answer" in name else "evidence" if "evidence" in name else "reasoning"
        )
        out.append((section, h.end(), end))
    return out


def decompose(answer: str, tools: Mapping[str, str], *, question: str | None = None) -> list[Claim]:
    """The claims of ``answer`` in text order (``tools``: tool name → family, for
    tool-name attributions)."""
    claims: list[Claim] = []
    for section, seg_start, seg_end in _segments(answer):
        pos = seg_start
        for line in answer[seg_start:seg_end].split("\n"):
            for s_start, s_end in _sentences(line, pos):
                for c_start, c_end in _clauses(answer, s_start, s_end):
                    claims.append(
                        _make(
                            answer,
                            len(claims),
                            c_start,
                            c_end,
                            tools,
                            section=section,
                            sentence=(s_start, s_end),
                            question=question,
                        )
                    )
            pos += len(line) + 1
    return claims


def claim_at(
    answer: str, byte_range: tuple[int, int], tools: Mapping[str, str], index: int = 0
) -> Claim:
    """The claim over a given byte range of ``answer`` (a gold claim of a fixture). Raises
    ValueError when the range is not on character boundaries."""
    data = answer.encode("utf-8")
    start_b, end_b = byte_range
    if not 0 <= start_b <= end_b <= len(data):
        raise ValueError(f"byte range {list(byte_range)} outside the answer ({len(data)} bytes)")
    try:
        start = len(data[:start_b].decode("utf-8"))
        end = start + len(data[start_b:end_b].decode("utf-8"))
    except UnicodeDecodeError:
        raise ValueError(f"byte range {list(byte_range)} is not on character boundaries") from None
    return _make(answer, index, start, end, tools, section="")

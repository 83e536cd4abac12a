"""Read a raw model output: the final answer, the evidence and reasoning, the cited ids.

The expected form (see :mod:`pytest_provenai.subject.prompt`) is::

    Answer: <short answer> [R1]
    Evidence: <evidence summary> [R1][R4]
    Reasoning: <chain of reasoning> [R4]

Small models drift from it, so :func:`parse_output` repairs the common failures and names
every repair it applied in ``ParsedOutput.repairs`` (see :data:`REPAIRS`). It never raises on
any text. Citation tags are gathered from the whole kept output (preamble, answer, evidence,
reasoning — everything before trailing junk), deduplicated in order of first appearance; a tag
that names no resource is kept in ``invalid_citations`` (deduplicated the same way), never
dropped. ``answer`` is the answer text with citation tags and markdown emphasis removed;
``evidence`` and ``reasoning`` are their section texts as written (tags kept, each run of
spaces/tabs read as one space); ``raw`` is the output unchanged.

Parsing is linear in the length of the text (no regex here backtracks over unbounded runs),
so a degenerate generation of any size cannot stall a test run.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Collection

from pytest_provenai.subject.trace import ParsedOutput

REPAIRS: dict[str, str] = {
    "missing_answer_header": "no 'Answer:' header: the first sentence of the first non-empty "
    "line (or of the text before the first other header) was taken as the answer",
    "no_answer": "no answer header and no text to take an answer from: the answer is empty",
    "markdown_header": "a section header was decorated (**Answer:**, ## Answer, 1. Answer:)",
    "header_alias": "a section header used another name (Final answer, Summary, Explanation…)",
    "inline_header": "a section header was found in the middle of a line",
    "multiline_answer": "the answer section had several lines: only the first was kept",
    "answer_lead_in": "a lead-in such as 'The answer is' was removed from the answer",
    "markdown_emphasis": "markdown emphasis (** or __) was removed from the answer",
    "trailing_junk": "text after the sections was dropped (a special token, a new "
    "'Question:'/'User:' turn, or a repeated section header)",
    "bare_tag": "a citation tag without brackets (R3) was read as [R3]",
    "grouped_tags": "several ids in one bracket ([R1, R2]) were read as [R1][R2]",
    "parenthesised_tag": "a citation tag in parentheses ((R1)) was read as [R1]",
    "lowercase_tag": "a lowercase tag ([r1]) was read as [R1]",
    "spaced_tag": "a tag with spaces inside ([ R1 ], [R 1]) was read as [R1]",
    "leading_zero_tag": "a tag with leading zeros ([R01]) was read as [R1]",
}
"""Every repair name :func:`parse_output` can report, with what it means."""

_Note = Callable[[str], None]

_SECTION_NAMES: dict[str, tuple[str, ...]] = {
    "answer": ("answer", "final answer", "short answer"),
    "evidence": ("evidence", "evidence summary", "summary of evidence", "supporting evidence"),
    "reasoning": ("reasoning", "chain of reasoning", "explanation", "rationale"),
}
_CANONICAL = {"answer", "evidence", "reasoning"}
_KIND_OF = {alias: kind for kind, names in _SECTION_NAMES.items() for alias in names}
_NAME_ALT = "|".join(
    sorted((re.escape(a).replace(r"\ ", r"[ \t]+") for a in _KIND_OF), key=len, reverse=True)
)

# A header at the start of a line: optional markdown decoration, a section name, then a
# colon (or dash) or the end of the line.
_LINE_HEADER = re.compile(
    r"^(?P<deco>[ \t]*(?:[#>]+[ \t]*)?(?:[-*+•][ \t]+)?(?:\d{1,2}[.)][ \t]*)?"
    r"(?:\*\*|__|\*)?[ \t]*)"
    rf"(?P<name>{_NAME_ALT})"
    r"(?P<tail>[ \t]*(?:\*\*|__|\*)?[ \t]*(?:[:：]|[-–—](?=[ \t])|(?=[ \t]*(?:\*\*|__)?[ \t]*$))"
    r"[ \t]*(?:\*\*|__|\*)?)",
    re.IGNORECASE | re.MULTILINE | re.ASCII,
)

# A header in the middle of a line: capitalised name and a colon, after a space or a
# sentence end ("Answer: yes [R1]. Evidence: …").
_INLINE_HEADER = re.compile(
    r"(?<=[ \t.\]\)])(?P<deco>(?:\*\*|__)?)"
    r"(?P<name>Final [Aa]nswer|Answer|Evidence(?: [Ss]ummary)?|Chain of [Rr]easoning|Reasoning)"
    r"(?P<tail>(?:\*\*|__)?[ \t]*[:：][ \t]*(?:\*\*|__)?)"
)

_BLANKS = re.compile(r"[ \t]{2,}|\t")
_SPECIAL_TOKEN = re.compile(
    r"<\|(?:im_end|im_start|endoftext|eot_id|end_of_text|end|user|assistant|system)\|>|</s>"
)
_LEADING_SPECIAL = re.compile(rf"(?:\s*(?:{_SPECIAL_TOKEN.pattern}))+")
_LINE_INDENT = re.compile(r"^[ \t]*", re.MULTILINE)
_NEW_TURN = re.compile(
    r"^[ \t]*(?:\*\*)?(?:Question|User|Human|Assistant|Resources|Q)(?:\*\*)?[ \t]*:",
    re.MULTILINE,
)

# Citation tags. One id: R, optional single space, digits (lowercase r inside brackets only).
_ID = r"[Rr][ \t]?[0-9]+"
_SEP = r"[ \t]*(?:,|;|/|&|\band\b)?[ \t]*"
_TAG = re.compile(
    rf"(?P<bracket>\[[ \t]*{_ID}(?:{_SEP}{_ID})*[ \t]*\])"
    rf"|(?P<paren>\([ \t]*{_ID}(?:{_SEP}{_ID})*[ \t]*\))"
    r"|(?P<bare>(?<![\w\[(])R[0-9]+(?![\w-]))"
)
_TAG_WITH_SPACE = re.compile(r"[ \t]*(?:" + _TAG.pattern + ")")
_ONE_ID = re.compile(r"([Rr])([ \t]?)([0-9]+)")

_LEAD_IN = re.compile(
    r"^(?:the\s+)?(?:final\s+|short\s+)?answer(?:\s+to\s+the\s+question)?\s+is\s*[:,]?\s+",
    re.IGNORECASE | re.ASCII,
)
_EMPHASIS = re.compile(r"\*\*|__")
_ABBREVIATIONS = frozenset(
    {"mr", "mrs", "ms", "dr", "st", "jr", "sr", "vs", "no", "co", "inc", "ltd", "mt", "ft"}
)
_SENTENCE_END = re.compile(r"[.!?](?=\s+[\"'(\[]?[A-Z])")


def parse_output(
    raw: str, n_resources: int, *, valid_ids: Collection[str] | None = None
) -> ParsedOutput:
    """Parse ``raw`` into answer, evidence, reasoning and citations; never raises on text.

    A tag ``R<i>`` is valid when ``0 <= i < n_resources`` — or, when ``valid_ids`` is given
    (e.g. a leave-one-out prompt that kept the original ids but dropped ``R3``), when its
    id is in ``valid_ids``. Ids are normalised to ``R<i>`` (``r01`` → ``R1``).
    """
    if n_resources < 0:
        raise ValueError(f"n_resources must be >= 0, got {n_resources}")
    repairs: list[str] = []

    def note(name: str) -> None:
        if name not in repairs:
            repairs.append(name)

    text = raw.replace("\r\n", "\n").replace("\r", "\n")
    # One space for every run of spaces/tabs: besides tidying the sections, this bounds the
    # backtracking of every ``[ \t]*`` below, so parsing stays linear on hostile text.
    text = _BLANKS.sub(" ", text)
    text = _cut_special_tokens(text, note)
    headers = _find_headers(text, note)
    text, headers = _cut_trailing_junk(text, headers, note)

    sections: dict[str, str] = {}
    for i, (kind, _start, end) in enumerate(headers):
        stop = headers[i + 1][1] if i + 1 < len(headers) else len(text)
        sections[kind] = text[end:stop].strip()

    if "answer" in sections:
        answer_text = _first_line(sections["answer"])
        if answer_text != sections["answer"].strip():
            note("multiline_answer")
    else:
        lead = text[: headers[0][1]] if headers else text
        answer_text = _first_sentence(_first_line(_strip_tags(lead)))
        note("missing_answer_header" if answer_text else "no_answer")

    cited, invalid = _collect_citations(text, n_resources, valid_ids, note)
    answer = _clean_answer(answer_text, note)
    return ParsedOutput(
        raw=raw,
        answer=answer,
        evidence=sections.get("evidence", ""),
        reasoning=sections.get("reasoning", ""),
        cited_ids=tuple(cited),
        invalid_citations=tuple(invalid),
        repairs=tuple(repairs),
    )


def format_output(answer: str, evidence: str, reasoning: str) -> str:
    """The canonical three-section form the prompt asks for (tags are part of the texts)."""
    return f"Answer: {answer}\nEvidence: {evidence}\nReasoning: {reasoning}\n"


def _cut_special_tokens(text: str, note: _Note) -> str:
    """Drop special tokens before any content; cut the text at the first one after it."""
    m = _LEADING_SPECIAL.match(text)
    if m:
        text = text[m.end() :]
    m = _SPECIAL_TOKEN.search(text)
    if m:
        if text[m.end() :].strip():
            note("trailing_junk")
        text = text[: m.start()]
    return text


def _find_headers(text: str, note: _Note) -> list[tuple[str, int, int]]:
    """Section headers as (kind, start, end of header), in text order."""
    found: list[tuple[str, int, int]] = []
    taken: dict[int, int] = {}  # line start -> end of the line-start header there
    for m in _LINE_HEADER.finditer(text):
        name = " ".join(m.group("name").lower().split())
        if name not in _CANONICAL:
            note("header_alias")
        if m.group("deco").strip() or m.group("tail").strip() not in {":", ""}:
            note("markdown_header")
        found.append((_KIND_OF[name], m.start(), m.end()))
        taken[m.start()] = m.end()
    inline = list(_INLINE_HEADER.finditer(text))
    if not inline:
        return found
    # For each line: where it starts and where its first non-blank character is.
    starts, firsts = [], []
    for m in _LINE_INDENT.finditer(text):
        starts.append(m.start())
        firsts.append(m.end())
    for m in inline:
        line = bisect.bisect_right(starts, m.start()) - 1
        if m.start() <= firsts[line] or m.start() < taken.get(starts[line], -1):
            continue  # at the start of its line, or inside a header the line pattern found
        name = " ".join(m.group("name").lower().split())
        note("inline_header")
        if name not in _CANONICAL:
            note("header_alias")
        found.append((_KIND_OF[name], m.start(), m.end()))
    found.sort(key=lambda h: h[1])
    return found


def _cut_trailing_junk(
    text: str, headers: list[tuple[str, int, int]], note: _Note
) -> tuple[str, list[tuple[str, int, int]]]:
    """Cut at a repeated section header or a new turn that follows the first header."""
    cut = len(text)
    seen: set[str] = set()
    for kind, start, _end in headers:
        if kind in seen:
            cut = start
            break
        seen.add(kind)
    if headers:
        m = _NEW_TURN.search(text, headers[0][2])
        if m and m.start() < cut:
            cut = m.start()
    if cut < len(text):
        if text[cut:].strip():
            note("trailing_junk")
        text = text[:cut]
        headers = [h for h in headers if h[1] < cut]
    return text, headers


def _collect_citations(
    text: str, n_resources: int, valid_ids: Collection[str] | None, note: _Note
) -> tuple[list[str], list[str]]:
    cited: dict[str, None] = {}  # insertion-ordered sets
    invalid: dict[str, None] = {}
    for m in _TAG.finditer(text):
        tag = m.group(0)
        if m.group("bare") is not None:
            note("bare_tag")
        elif m.group("paren") is not None:
            note("parenthesised_tag")
        ids = list(_ONE_ID.finditer(tag))
        if len(ids) > 1:
            note("grouped_tags")
        if tag[1:2].isspace() or tag[-2:-1].isspace():
            note("spaced_tag")
        for one in ids:
            letter, space, digits = one.groups()
            if letter == "r":
                note("lowercase_tag")
            if space:
                note("spaced_tag")
            number = digits.lstrip("0") or "0"
            if number != digits:
                note("leading_zero_tag")
            rid = f"R{number}"
            if _is_valid(number, rid, n_resources, valid_ids):
                cited.setdefault(rid)
            else:
                invalid.setdefault(rid)
    return list(cited), list(invalid)


def _is_valid(number: str, rid: str, n_resources: int, valid_ids: Collection[str] | None) -> bool:
    if valid_ids is not None:
        return rid in valid_ids
    # Compare lengths first: int() of a 5000-digit string raises ValueError on Python 3.11+.
    return len(number) <= len(str(n_resources)) and int(number) < n_resources


def _strip_tags(text: str) -> str:
    """``text`` without citation tags; a tag takes the whitespace before it along
    (``American [R1].`` → ``American.``)."""
    return _TAG_WITH_SPACE.sub("", text)


def _first_line(text: str) -> str:
    for line in text.split("\n"):
        if line.strip():
            return line.strip()
    return ""


def _first_sentence(line: str) -> str:
    """The first sentence of ``line``: up to a ``.!?`` followed by a capitalised word,
    skipping common abbreviations (``Dr.``, ``St.``) and initials (``J. R. R.``)."""
    for m in _SENTENCE_END.finditer(line):
        start = m.start()
        while start > 0 and not (line[start - 1].isspace() or line[start - 1] in "([\"'"):
            start -= 1
        word = line[start : m.start()]
        if len(word) <= 1 or word.lower() in _ABBREVIATIONS or "." in word:
            continue
        return line[: m.end()].strip()
    return line.strip()


def _clean_answer(answer: str, note: _Note) -> str:
    answer = _strip_tags(answer)
    if _EMPHASIS.search(answer):
        note("markdown_emphasis")
        answer = _EMPHASIS.sub("", answer)
    answer = " ".join(answer.split()).strip(" ,;:")  # punctuation left dangling by a tag
    m = _LEAD_IN.match(answer)
    if m and m.end() < len(answer):
        note("answer_lead_in")
        answer = answer[m.end() :]
    return answer.strip()


def split_sections(raw: str) -> list[tuple[str, str]]:
    """The kept output as ``(section, text)`` pieces in text order; never raises.

    ``preamble`` is text before the first section header (the whole text when there is no
    header); then ``answer``, ``evidence``, ``reasoning`` as written, with their citation
    tags, every line of a section kept (the parser's answer keeps only the first). Text that
    :func:`parse_output` drops as trailing junk (a special token, a new turn, a repeated
    header) is not included. Empty pieces are left out. Used by claim accounting, which must
    see every statement the answer makes.
    """

    def ignore(name: str) -> None:
        return None

    text = raw.replace("\r\n", "\n").replace("\r", "\n")
    text = _BLANKS.sub(" ", text)
    text = _cut_special_tokens(text, ignore)
    headers = _find_headers(text, ignore)
    text, headers = _cut_trailing_junk(text, headers, ignore)
    pieces: list[tuple[str, str]] = []
    first = headers[0][1] if headers else len(text)
    if text[:first].strip():
        pieces.append(("preamble", text[:first].strip()))
    for i, (kind, _start, end) in enumerate(headers):
        stop = headers[i + 1][1] if i + 1 < len(headers) else len(text)
        if text[end:stop].strip():
            pieces.append((kind, text[end:stop].strip()))
    return pieces

"""Provenance families and the attribution an answer states for a claim.

ProvenanceGuard §III-E, widened (issue 23): attribution spans are found by cue *shapes*
(:mod:`pytest_provenai.attribution.statement`: cue + noun phrase, possessives, "X says",
"per/under/going by X", "…, according to X") and the noun phrase is resolved from the
trace's own tool names, descriptions and call arguments (a :class:`.statement.Listing`, when
given), then the family lexicon; the pipeline
may resolve what is left by embedding similarity. Each attribution says which rule matched.
A claim that names a generic source, an unknown one or several families is *ambiguous*
(with the reason); a claim without a span takes the trace's only family when the trace has
one (*implied*), otherwise its attribution is *unavailable* — never silently assigned.

Compatibility: a stated family is compatible with the routed source when the routed
source's family is that family; a stated tool name is compatible when the routed source
came from that tool (or a tool of the same family).
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

from pytest_provenai.attribution.statement import (
    HEAD_NOUNS,
    SPEAKS_NOW,
    Listing,
    Resolution,
    Span,
    find_spans,
    heads_a_tool,
    names_a_tool,
    resolve,
)
from pytest_provenai.frozen.traces import FAMILIES

__all__ = [
    "ALIASES",
    "ATTRIBUTION_STATUSES",
    "Attribution",
    "canonical_phrase",
    "compatible",
    "find_attribution",
    "implied_attribution",
]

#: The family lexicon of head nouns (strong and weak; see :mod:`.statement`).
ALIASES: dict[str, tuple[str, ...]] = {
    family: tuple(sorted(strong | weak)) for family, (strong, weak) in HEAD_NOUNS.items()
}

ATTRIBUTION_STATUSES = ("stated", "ambiguous", "implied", "unavailable")


@dataclass(frozen=True)
class Attribution:
    """What a claim says about where its fact comes from.

    ``span`` is the [start, end) character range of the attribution phrase in the claim
    text (None when nothing is stated); ``family`` the stated or implied family; ``tool``
    a stated tool name; ``status`` one of :data:`ATTRIBUTION_STATUSES`; ``rule`` the rule
    that resolved the phrase (``tool_name``, ``tool_description``, ``tool_arguments``, ``alias``,
    ``similarity``; None when nothing was resolved); ``reason`` why a phrase was not
    resolved (``generic_source``, ``unresolved_phrase``, ``several_families``);
    ``noun_phrase`` what the phrase names (the pipeline's similarity fallback reads it)."""

    status: str
    family: str | None = None
    tool: str | None = None
    span: tuple[int, int] | None = None
    phrase: str = ""
    rule: str | None = None
    reason: str = ""
    noun_phrase: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "family": self.family,
            "tool": self.tool,
            "phrase": self.phrase,
            "rule": self.rule,
            "reason": self.reason,
        }


#: A reporting verb in the present tense after a source's noun phrase ("says", "shows").
_SPEAKS_NOW = re.compile(rf"\b(?:{'|'.join(sorted(SPEAKS_NOW))})\b", re.IGNORECASE)


def find_attribution(
    text: str, tools: Mapping[str, str], listing: Listing | None = None
) -> Attribution:
    """The attribution ``text`` states (``tools``: tool name → family; ``listing``: what
    the trace says of its tools besides, when the caller has it: their descriptions, what
    their calls opened). Every attribution phrase found by shape
    (:func:`.statement.find_spans`) is resolved (:func:`.statement.resolve`): one family
    (or one tool) → ``stated`` with the rule that matched; phrases naming
    several families → ``ambiguous`` (``several_families``); a generic or unknown noun
    phrase → ``ambiguous`` with that reason; no phrase → ``unavailable`` (see
    :func:`implied_attribution` for the trace default)."""

    asked = {i for _, ids in listing.identifiers for i in ids} if listing is not None else set()

    def names_source(np: str) -> bool:
        # an identifier a call of the trace asked for may name its output on its own
        # ("HB-3318 shows …"); only a reporting verb or a strong cue makes it one
        named = np.strip().lower() in asked
        return _resolve(np, tools, listing, named=named).family is not None

    def names_tool(np: str) -> bool:
        return names_a_tool(np, tools)

    def names_last(word: str) -> bool:
        return heads_a_tool(word, tools)

    spans = find_spans(text, names_source, names_tool, names_last)
    # an asked-for identifier alone is a source only after a strong cue or before a
    # reporting verb in the present tense ("HB-3318 shows …"); "BS34-051866 came up the
    # pod" is what the claim is about
    spans = [
        s
        for s in spans
        if s.noun_phrase.strip().lower() not in asked
        or s.shape == "cue_before"
        or (s.shape == "verb_after" and _SPEAKS_NOW.search(text, s.np_end, s.end))
    ]
    if any(s.strong for s in spans):
        # a reporting verb or a strong cue outranks "in the X" / "X has" elsewhere in the
        # claim, unless that phrase continues it ("according to the results from web_search")
        kept: list[Span] = []
        for s in spans:
            if s.strong or (
                kept and s.shape == "weak_cue" and not text[kept[-1].end : s.start].strip()
            ):
                kept.append(s)
        spans = kept
    opening = next(
        (s for s in spans if s.shape == "verb_after" and not text[: s.start].strip()), None
    )
    if opening is not None:
        # the source is the claim's subject ("The procedure does not require closures to be
        # entered in the night log"): "in/on the X" in what it says is the claim's content
        spans = [s for s in spans if s.shape != "weak_cue" or s.start < opening.end]
    if not spans:
        return Attribution("unavailable")
    resolved = [(s, _resolve(s.noun_phrase, tools, listing)) for s in spans]
    # a phrase after a strong cue, or before a reporting verb in the present tense, is a
    # source beyond doubt ("per the approval", "The letter also confirms"): it may be named
    # by what a tool's description says it returns; a past tense may be an agent's ("The
    # crew flagged …", "The airport has said …")
    resolved = [
        (s, _resolve(s.noun_phrase, tools, listing, named=True))
        if r.reason == "unresolved_phrase"
        and (
            s.shape == "cue_before"
            or (s.shape == "verb_after" and _SPEAKS_NOW.search(text, s.np_end, s.end))
        )
        else (s, r)
        for s, r in resolved
    ]
    # The span is the first phrase and every phrase that directly follows it ("According to
    # the search results from web_search, …" is one span).
    first = next((i for i, (_, r) in enumerate(resolved) if r.family is not None), 0)
    start, end = spans[first].start, spans[first].end
    for s in spans[first + 1 :]:
        if text[end : s.start].strip():
            break
        end = s.end
    span = (start, end)
    phrase = text[start:end]
    families = {r.family for _, r in resolved if r.family is not None}
    tool_names = {r.tool for _, r in resolved if r.tool is not None}
    if len(families) > 1 or len(tool_names) > 1:
        return Attribution("ambiguous", span=span, phrase=phrase, reason="several_families")
    if not families:
        reasons = [r.reason for _, r in resolved]
        reason = "unresolved_phrase" if "unresolved_phrase" in reasons else reasons[0]
        np = next((s.noun_phrase for s, r in resolved if r.reason == reason), "")
        return Attribution("ambiguous", span=span, phrase=phrase, reason=reason, noun_phrase=np)
    family = next(iter(families))
    tool = next(iter(tool_names), None)
    rules = [r.rule for _, r in resolved if r.family is not None]
    return Attribution(
        "stated",
        family=family,
        tool=tool,
        span=span,
        phrase=phrase,
        rule=rules[0],
        noun_phrase=spans[first].noun_phrase,
    )


def _resolve(
    np: str, tools: Mapping[str, str], listing: Listing | None, *, named: bool = False
) -> Resolution:
    return _resolve_cached(np, tuple(sorted(tools.items())), listing, named)


@cache
def _resolve_cached(
    np: str, tools: tuple[tuple[str, str], ...], listing: Listing | None, named: bool
) -> Resolution:
    return resolve(np, dict(tools), listing, named=named)


def implied_attribution(stated: Attribution, families_in_trace: set[str]) -> Attribution:
    """The domain default: a claim with no attribution phrase in a trace whose evidence is
    all of one family is attributed to that family (``implied``); otherwise it stays
    ``unavailable``."""
    if stated.status != "unavailable":
        return stated
    if len(families_in_trace) == 1:
        return Attribution("implied", family=next(iter(families_in_trace)))
    return stated


def compatible(attribution: Attribution, routed_tool: str, routed_family: str) -> bool | None:
    """Whether the attribution fits the routed source: True/False, or None when the
    attribution is ambiguous or unavailable (no conflation can be decided)."""
    if attribution.status not in ("stated", "implied"):
        return None
    if attribution.tool is not None:
        return attribution.tool == routed_tool or attribution.family == routed_family
    if attribution.family is None:
        return None
    return attribution.family == routed_family


_CANONICAL = {
    "record": "According to the record from {tool},",
    "search": "According to the search results from {tool},",
    "database": "According to the database query {tool},",
    "document": "According to the document from {tool},",
    "metadata": "According to the metadata from {tool},",
}


def canonical_phrase(family: str, tool: str) -> str:
    """The attribution phrase the repair step writes for a source of ``family`` from
    ``tool`` (e.g. ``According to the search results from web_search,``)."""
    template = _CANONICAL.get(family, "According to the output of {tool},")
    return template.format(tool=tool)


assert set(ALIASES) == set(FAMILIES)

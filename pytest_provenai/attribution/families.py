"""Provenance families and the attribution an answer states for a claim.

ProvenanceGuard §III-E: explicit attribution spans are matched by lexical aliases for
record, search, database, document, metadata and tool-name variants. A claim that names a
generic or several families is *ambiguous*; a claim without a span takes the trace's only
family when the trace has one (*implied*), otherwise its attribution is *unavailable* —
never silently assigned.

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

#: Lexical aliases per family (matched case-insensitively as whole words, longest first).
ALIASES: dict[str, tuple[str, ...]] = {
    "record": (
        "account record",
        "account records",
        "customer record",
        "patient record",
        "patient chart",
        "member record",
        "records system",
        "record",
        "records",
        "account",
        "chart",
        "profile",
        "registry entry",
    ),
    "search": (
        "search results",
        "search result",
        "web search",
        "search engine",
        "search hits",
        "search",
        "top hits",
    ),
    "database": (
        "database query",
        "database",
        "databases",
        "sql query",
        "query results",
        "db",
        "table",
        "data warehouse",
    ),
    "document": (
        "policy document",
        "evidence document",
        "source document",
        "document",
        "documents",
        "documentation",
        "policy",
        "manual",
        "handbook",
        "guide",
        "article",
        "paper",
        "report",
        "passage",
        "page",
    ),
    "metadata": (
        "metadata",
        "catalog entry",
        "catalogue entry",
        "catalog",
        "catalogue",
        "listing",
        "index card",
        "file properties",
        "properties",
    ),
}

#: Words that name a source without saying which family: a span made of them is ambiguous.
GENERIC = ("sources", "source", "tools", "tool", "data", "evidence", "information", "results")

ATTRIBUTION_STATUSES = ("stated", "ambiguous", "implied", "unavailable")

_CUE_BEFORE = (
    r"according\s+to|as\s+(?:stated|reported|listed|shown|noted|recorded|given|described)"
    r"\s+(?:in|by)|based\s+on|per"
)
# "in the record, …" / "from the search results, …": only with the comma (or at the start of
# the claim), so "published in the paper Nature" states nothing.
_WEAK_CUE = r"in|from"
_VERB_AFTER = (
    r"says|say|said|states|state|show|stated|shows|showed|lists|listed|reports|reported|indicates|indicated|"
    r"notes|noted|confirms|confirmed|returns|returned|mentions|mentioned|records|recorded|"
    r"gives|gave|describes|described|puts|has|had|contains|contained"
)
_DET = r"(?:the|this|that|these|those|your|our|its|their)"


@dataclass(frozen=True)
class Attribution:
    """What a claim says about where its fact comes from.

    ``span`` is the [start, end) character range of the attribution phrase in the claim
    text (None when nothing is stated); ``family`` the stated or implied family; ``tool``
    a stated tool name; ``status`` one of :data:`ATTRIBUTION_STATUSES`."""

    status: str
    family: str | None = None
    tool: str | None = None
    span: tuple[int, int] | None = None
    phrase: str = ""

    def as_dict(self) -> dict[str, Any]:
        return {
            "status": self.status,
            "family": self.family,
            "tool": self.tool,
            "phrase": self.phrase,
        }


def _tool_variants(tool: str) -> list[str]:
    words = [w for w in re.split(r"[_\-.\s]+", tool) if w]
    out = [tool]
    if len(words) > 1:
        out.append(" ".join(words))
        out.append(" ".join(reversed(words)))
    return out


@cache
def _patterns(tools: tuple[tuple[str, str], ...]) -> tuple[re.Pattern[str], dict[str, str]]:
    """One regex matching an attribution phrase, and the lookup from a lower-cased alias to
    ``family:<f>`` / ``tool:<name>`` / ``generic``."""
    lookup: dict[str, str] = {}
    for tool, _family in tools:
        for variant in _tool_variants(tool):
            lookup.setdefault(variant.lower(), f"tool:{tool}")
    for family, aliases in ALIASES.items():
        for alias in aliases:
            lookup.setdefault(alias, f"family:{family}")
    for word in GENERIC:
        lookup.setdefault(word, "generic")
    names = sorted(lookup, key=len, reverse=True)
    body = "|".join(re.escape(n).replace(r"\ ", r"\s+") for n in names)
    tool_word = r"(?:\s+(?:tool|output|outputs|entry|entries|call|lookup))?"
    before = rf"\b(?:{_CUE_BEFORE})\s+(?:{_DET}\s+)?(?P<alias>{body}){tool_word}\b\s*,?\s*"
    weak = rf"\b(?:{_WEAK_CUE})\s+(?:{_DET}\s+)?(?P<alias3>{body}){tool_word}\s*,\s*"
    after = (
        rf"\b(?:{_DET}\s+)?(?P<alias2>{body}){tool_word}\s+(?:{_VERB_AFTER})\b"
        r"(?:\s+that)?\s*:?\s*"
    )
    return re.compile(f"{before}|{weak}|{after}", re.IGNORECASE), lookup


def find_attribution(text: str, tools: Mapping[str, str]) -> Attribution:
    """The attribution ``text`` states: every attribution phrase in it is read; one family
    (or one tool) → ``stated``; generic words or several families → ``ambiguous``; none →
    ``unavailable`` (see :func:`implied_attribution` for the trace default)."""
    pattern, lookup = _patterns(tuple(sorted(tools.items())))
    hits: list[tuple[re.Match[str], str]] = []
    for m in pattern.finditer(text):
        alias = (m.group("alias") or m.group("alias2") or m.group("alias3") or "").lower()
        alias = " ".join(alias.split())
        target = lookup.get(alias)
        if target is not None:
            hits.append((m, target))
    if not hits:
        return Attribution("unavailable")
    families: set[str] = set()
    tool_names: set[str] = set()
    generic = False
    for _, target in hits:
        if target == "generic":
            generic = True
        elif target.startswith("tool:"):
            tool_names.add(target[5:])
            families.add(tools.get(target[5:], ""))
        else:
            families.add(target[7:])
    # The span is the first phrase and every phrase that directly follows it ("According to
    # the search results from web_search, …" is one span).
    start, end = hits[0][0].start(), hits[0][0].end()
    for m, _ in hits[1:]:
        if m.start() != end:
            break
        end = m.end()
    span = (start, end)
    phrase = text[start:end]
    families.discard("")
    if generic and not families and not tool_names:
        return Attribution("ambiguous", span=span, phrase=phrase)
    if len(families) > 1 or len(tool_names) > 1:
        return Attribution("ambiguous", span=span, phrase=phrase)
    family = next(iter(families), None)
    tool = next(iter(tool_names), None)
    return Attribution("stated", family=family, tool=tool, span=span, phrase=phrase)


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

"""In-memory form of tool-trace fixtures: kinds ``mcp_trace`` and ``conflation_probe``.

A trace is what a tool-using agent did for one request: the tool calls in order, each with
its canonical arguments and what it returned, and the answer(s) written from them. A call
returns one or more *outputs*; each output is one provenance-bearing evidence object
(ProvenanceGuard §III: ``(tool, source, text)``), pinned by the sha256 of its text's bytes.
``families`` says which provenance family each tool's outputs belong to (record, search,
database, document, metadata).

A labelled answer carries its claims as UTF-8 byte ranges into the answer text, each with the
source the claim's fact comes from (``gold_source``, None when no source supports it), the
family the answer states for it, the gold verdict and the protected values it contains.

Loaded by :mod:`pytest_provenai.frozen.load_traces`; produced from live MCP sessions by
:mod:`pytest_provenai.toolserver.capture`. No pytest, no model code.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pytest_provenai._io import sha256_text

#: Provenance families a tool's outputs may belong to.
FAMILIES = ("record", "search", "database", "document", "metadata")

#: Gold claim verdicts. ``conflated``: supported by the trace but attributed to a source
#: family it did not come from; ``non_factual``: a disclaimer or template text that asserts
#: nothing checkable.
VERDICTS = (
    "supported",
    "not_enough_evidence",
    "unsupported",
    "contradicted",
    "conflated",
    "non_factual",
)

#: Trace categories of the synthetic set (HotpotQA-derived traces are ``hotpotqa``).
CATEGORIES = (
    "single_tool",
    "multi_tool",
    "same_topic_distractor",
    "count_summary",
    "hotpotqa",
    "captured",
)


@dataclass(frozen=True)
class ToolOutput:
    """One evidence object a call returned: ``source`` is its stable id (None when the tool
    gave none; the evidence then falls back to the tool name)."""

    source: str | None
    text: str
    sha256: str


@dataclass(frozen=True)
class ToolCall:
    """One tool call: position in the session, tool, canonical arguments and their sha256,
    the outputs, and whether the call ended in an error (its error text is the one output)."""

    index: int
    tool: str
    arguments: dict[str, Any]
    arguments_sha256: str
    outputs: tuple[ToolOutput, ...]
    error: bool = False


@dataclass(frozen=True)
class LabelledClaim:
    """A gold claim: ``range`` = [start, end) UTF-8 byte offsets into the answer text."""

    range: tuple[int, int]
    verdict: str
    gold_source: str | None = None
    stated_family: str | None = None
    protected_values: tuple[str, ...] = ()


@dataclass(frozen=True)
class LabelledAnswer:
    id: str
    text: str
    claims: tuple[LabelledClaim, ...]

    def claim_text(self, claim: LabelledClaim) -> str:
        start, end = claim.range
        return self.text.encode("utf-8")[start:end].decode("utf-8")


@dataclass(frozen=True)
class TraceCase:
    """Kind ``mcp_trace``: one request, its tool calls (and, when recorded, the tools'
    descriptions in the server's listing), and labelled answers."""

    id: str
    request: str
    category: str
    families: dict[str, str]
    calls: tuple[ToolCall, ...]
    answers: tuple[LabelledAnswer, ...]
    fixture_set: str = ""
    path: str = ""
    kind: str = "mcp_trace"
    note: str = ""
    extra: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)
    descriptions: dict[str, str] = field(default_factory=dict)


@dataclass(frozen=True)
class ProbeCase:
    """Kind ``conflation_probe``: two sources of different families share ``shared_value``;
    the claim's fact comes from ``fact_source``. ``probe`` states the other source's family
    (must be blocked as conflated); ``control`` states the right one (should be allowed)."""

    id: str
    request: str
    families: dict[str, str]
    calls: tuple[ToolCall, ...]
    shared_value: str
    fact_source: str
    other_source: str
    probe: LabelledAnswer
    control: LabelledAnswer
    fixture_set: str = ""
    path: str = ""
    kind: str = "conflation_probe"
    category: str = "hotpotqa"
    note: str = ""
    descriptions: dict[str, str] = field(default_factory=dict)


def canonical_arguments(arguments: Mapping[str, Any]) -> tuple[str, str]:
    """(canonical JSON of a call's arguments, its sha256): sorted keys, compact, UTF-8."""
    text = json.dumps(dict(arguments), sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return text, sha256_text(text)


def call_document(
    index: int, tool: str, arguments: Mapping[str, Any], outputs: Sequence[tuple[str | None, str]]
) -> dict[str, Any]:
    """A call as a fixture file holds it: (source, text) outputs pinned by their sha256,
    the arguments by the sha256 of their canonical JSON (for the fixture writers)."""
    return {
        "index": index,
        "tool": tool,
        "arguments": dict(arguments),
        "arguments_sha256": canonical_arguments(arguments)[1],
        "outputs": [{"source": s, "text": t, "sha256": sha256_text(t)} for s, t in outputs],
        "error": False,
    }


# -- evidence objects (ProvenanceGuard §III-A) ------------------------------------------------
# Every output of every successful call is one evidence object ``(tool, source, text)`` with
# the source's provenance family; evidence is never collapsed into one anonymous context. An
# output without a stable source id falls back to the tool name (``tool@<call index>`` when
# that name is already taken by other text). The same source returned twice with the same
# digest is one object (the first call keeps it); with different digests both are kept, the
# later one as ``source@<call index>``, and the conflict is reported. Calls that ended in an
# error contribute no evidence.

#: Families whose outputs are exact structured evidence (fields and values, not prose):
#: the only ones where a neutral decision may be lexically rescued.
STRUCTURED_FAMILIES = frozenset({"record", "database", "metadata"})


@dataclass(frozen=True)
class Evidence:
    source: str
    tool: str
    family: str
    text: str
    sha256: str
    call: int
    asked: str = ""
    """The call's arguments as ``key: value`` lines: what the output was asked to be about
    (the turbine of a query's ``WHERE turbine = 'CB-T04'``, the ticket of a lookup)."""

    @property
    def structured(self) -> bool:
        return self.family in STRUCTURED_FAMILIES

    def as_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "tool": self.tool,
            "family": self.family,
            "sha256": self.sha256,
            "call": self.call,
        }


@dataclass(frozen=True)
class EvidenceSet:
    items: tuple[Evidence, ...]
    conflicts: tuple[str, ...] = ()  # source ids returned with two different digests

    def by_source(self) -> dict[str, Evidence]:
        return {e.source: e for e in self.items}

    def families(self) -> set[str]:
        return {e.family for e in self.items}


def output_sources(calls: Sequence[ToolCall]) -> list[list[str | None]]:
    """The evidence source name of every output of every call (None: an error call, a blank
    output, or a repeat of a source already returned with the same digest)."""
    seen: dict[str, str] = {}
    names: list[list[str | None]] = []
    for call in calls:
        row: list[str | None] = []
        for output in call.outputs:
            if call.error or not output.text.strip():
                row.append(None)
                continue
            source = output.source if output.source else call.tool
            if source in seen:
                if seen[source] == output.sha256:
                    row.append(None)
                    continue
                source = f"{source}@{call.index}"
                if source in seen:
                    row.append(None)
                    continue
            seen[source] = output.sha256
            row.append(source)
        names.append(row)
    return names


def collect_evidence(calls: Sequence[ToolCall], families: Mapping[str, str]) -> EvidenceSet:
    """Evidence objects of ``calls`` in call order (see the comment above). A tool that
    ``families`` does not name has family ``"unknown"``."""
    items: list[Evidence] = []
    conflicts: list[str] = []
    for call, names in zip(calls, output_sources(calls), strict=True):
        family = families.get(call.tool, "unknown")
        for output, source in zip(call.outputs, names, strict=True):
            if source is None:
                continue
            if output.source and source != output.source:
                conflicts.append(output.source)
            asked = "\n".join(f"{k}: {v}" for k, v in sorted(call.arguments.items()))
            items.append(
                Evidence(source, call.tool, family, output.text, output.sha256, call.index, asked)
            )
    return EvidenceSet(tuple(items), tuple(dict.fromkeys(conflicts)))

"""Strict loading of the attribution fixture kinds ``mcp_trace`` and ``conflation_probe``.

Schemas ``mcp_trace.schema.json`` / ``conflation_probe.schema.json`` (sharing
``trace.schema.json``), manifest ``attribution-manifest.schema.json``; rows of
:data:`pytest_provenai.frozen.kinds.FIXTURE_KINDS`. The bytes are read by
``frozen/jsonread.py`` like every kind's (deep nesting, long integers and lone surrogates
are fixture errors before these checks run). Beyond the schema,
every case is checked for what a schema cannot express, each problem a
:class:`~pytest_provenai.errors.FixtureError` naming the file, a JSON pointer, expected and
actual:

* call ``index`` is the call's position; ``arguments_sha256`` is the sha256 of the canonical
  arguments (sorted keys, compact JSON);
* every output's ``sha256`` is re-hashed from its text;
* a source id carries one digest across the whole trace;
* every tool named in ``families`` is called;
* claim ranges are non-empty, inside the answer, on UTF-8 character boundaries and do not
  overlap; a claim's protected values occur in its text; a supported or conflated claim names
  its gold source, and a gold source is a source of the trace's evidence;
* a probe's two sources are evidence of the trace, of different families, and both contain
  the shared value; the probe answer's claim states the other source's family and is
  labelled conflated, the control's states the fact source's family and is supported.
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from typing import Any

from pytest_provenai._io import sha256_text
from pytest_provenai.errors import FixtureError
from pytest_provenai.frozen.jsonread import describe_value, json_pointer
from pytest_provenai.frozen.traces import (
    LabelledAnswer,
    LabelledClaim,
    ProbeCase,
    ToolCall,
    ToolOutput,
    TraceCase,
    canonical_arguments,
    collect_evidence,
)
from pytest_provenai.frozen.validate import ID_RE, require_match

__all__ = ["build_probe_case", "build_trace_case", "evidence_sources"]


def _contains(text: str, value: str) -> bool:
    """``value`` occurs in ``text`` as a whole token sequence, casefolded, whitespace
    collapsed (``73`` is not in ``173``)."""
    needle = " ".join(value.split()).casefold()
    hay = " ".join(text.split()).casefold()
    return (
        bool(needle)
        and re.search(r"(?<![^\W_])" + re.escape(needle) + r"(?![^\W_])", hay) is not None
    )


def _calls(obj: dict[str, Any], path: str) -> tuple[ToolCall, ...]:
    calls: list[ToolCall] = []
    digest_of: dict[str, tuple[str, str]] = {}
    for i, call in enumerate(obj["calls"]):
        here = ("calls", i)
        if call["index"] != i:
            raise FixtureError(
                path, json_pointer(*here, "index"), f"{i} (the call's position)", str(call["index"])
            )
        _, args_sha = canonical_arguments(call["arguments"])
        if call["arguments_sha256"] != args_sha:
            raise FixtureError(
                path,
                json_pointer(*here, "arguments_sha256"),
                f"{args_sha} (sha256 of the canonical JSON of {json_pointer(*here, 'arguments')})",
                str(call["arguments_sha256"]),
            )
        outputs = []
        for j, out in enumerate(call["outputs"]):
            at = (*here, "outputs", j)
            digest = sha256_text(out["text"])
            if out["sha256"] != digest:
                raise FixtureError(
                    path,
                    json_pointer(*at, "sha256"),
                    f"{digest} (sha256 of {json_pointer(*at, 'text')})",
                    str(out["sha256"]),
                )
            source = out["source"]
            if source is not None:
                first = digest_of.get(source)
                if first is not None and first[0] != digest:
                    raise FixtureError(
                        path,
                        json_pointer(*at, "sha256"),
                        f"{first[0]} (source {json.dumps(source)} has that digest at "
                        f"{first[1]}; a source id names one text)",
                        f"{digest}, a second digest for the same source id",
                    )
                digest_of.setdefault(source, (digest, json_pointer(*at)))
            outputs.append(ToolOutput(source, out["text"], digest))
        calls.append(
            ToolCall(
                index=i,
                tool=call["tool"],
                arguments=call["arguments"],
                arguments_sha256=args_sha,
                outputs=tuple(outputs),
                error=call["error"],
            )
        )
    tools = {c.tool for c in calls}
    for field in ("families", "descriptions"):
        for tool in obj.get(field, {}):
            if tool not in tools:
                called = ", ".join(sorted(json.dumps(t) for t in tools)) or "none"
                raise FixtureError(
                    path,
                    json_pointer(field, tool),
                    f"a tool called in /calls ({called})",
                    f"the tool {json.dumps(tool)}, which is never called",
                )
    return tuple(calls)


def evidence_sources(calls: Sequence[ToolCall], families: dict[str, str]) -> dict[str, str]:
    """Source id → family of every evidence object of the calls (the ids the verifier
    routes to, fallbacks included)."""
    return {e.source: e.family for e in collect_evidence(calls, families).items}


def _answer(
    item: dict[str, Any], path: str, at: tuple[str | int, ...], sources: dict[str, str]
) -> LabelledAnswer:
    text: str = item["text"]
    data = text.encode("utf-8")
    claims: list[LabelledClaim] = []
    previous_end = 0
    for j, claim in enumerate(item["claims"]):
        here = (*at, "claims", j)
        start, end = claim["range"]
        where = json_pointer(*here, "range")
        if not start < end <= len(data):
            raise FixtureError(
                path,
                where,
                f"a non-empty range inside {json_pointer(*at, 'text')} ({len(data)} bytes)",
                json.dumps([start, end]),
            )
        for edge in (start, end):
            if edge < len(data) and (data[edge] & 0xC0) == 0x80:
                char_start = edge
                while char_start > 0 and (data[char_start] & 0xC0) == 0x80:
                    char_start -= 1
                char = data[char_start:].decode("utf-8", errors="ignore")[:1]
                raise FixtureError(
                    path,
                    where,
                    f"a range on UTF-8 character boundaries of {json_pointer(*at, 'text')}",
                    f"{json.dumps([start, end])}, whose byte {edge} falls inside the character "
                    f"{json.dumps(char, ensure_ascii=False)} (bytes {char_start}–"
                    f"{char_start + len(char.encode('utf-8'))})",
                )
        if start < previous_end:
            raise FixtureError(
                path,
                where,
                f"a range starting at or after byte {previous_end} (claims in order, "
                "not overlapping)",
                json.dumps([start, end]),
            )
        previous_end = end
        claim_text = data[start:end].decode("utf-8")
        for k, value in enumerate(claim["protected_values"]):
            if value not in claim_text:
                raise FixtureError(
                    path,
                    json_pointer(*here, "protected_values", k),
                    "a value that occurs in the claim's text",
                    f"{describe_value(value)}, which {describe_value(claim_text)} does not contain",
                )
        gold = claim["gold_source"]
        if gold is None and claim["verdict"] in ("supported", "conflated"):
            raise FixtureError(
                path,
                json_pointer(*here, "gold_source"),
                f"the source a {claim['verdict']} claim comes from",
                "null",
            )
        if gold is not None and gold not in sources:
            known = ", ".join(json.dumps(s) for s in sources) or "none"
            raise FixtureError(
                path,
                json_pointer(*here, "gold_source"),
                f"a source of the trace's evidence ({known})",
                describe_value(gold),
            )
        if claim["verdict"] == "conflated" and claim["stated_family"] is None:
            raise FixtureError(
                path,
                json_pointer(*here, "stated_family"),
                "the family a conflated claim states",
                "null",
            )
        claims.append(
            LabelledClaim(
                range=(start, end),
                verdict=claim["verdict"],
                gold_source=gold,
                stated_family=claim["stated_family"],
                protected_values=tuple(claim["protected_values"]),
            )
        )
    return LabelledAnswer(id=item["id"], text=text, claims=tuple(claims))


def build_trace_case(obj: dict[str, Any], path: str, fixture_set: str) -> TraceCase:
    """A schema-valid ``mcp_trace`` document → :class:`TraceCase` (or FixtureError)."""
    require_match(path, "/id", ID_RE, obj["id"])
    calls = _calls(obj, path)
    sources = evidence_sources(calls, obj["families"])
    answers = []
    seen: dict[str, int] = {}
    for i, item in enumerate(obj["answers"]):
        if item["id"] in seen:
            raise FixtureError(
                path,
                json_pointer("answers", i, "id"),
                "an answer id no other answer of the case uses",
                f"{describe_value(item['id'])}, already the id of /answers/{seen[item['id']]}",
            )
        seen[item["id"]] = i
        answers.append(_answer(item, path, ("answers", i), sources))
    return TraceCase(
        id=obj["id"],
        request=obj["request"],
        category=obj["category"],
        families=dict(obj["families"]),
        descriptions=dict(obj.get("descriptions", {})),
        calls=calls,
        answers=tuple(answers),
        fixture_set=fixture_set,
        path=path,
        note=obj.get("note", ""),
    )


def build_probe_case(obj: dict[str, Any], path: str, fixture_set: str) -> ProbeCase:
    """A schema-valid ``conflation_probe`` document → :class:`ProbeCase` (or FixtureError)."""
    require_match(path, "/id", ID_RE, obj["id"])
    calls = _calls(obj, path)
    evidence = collect_evidence(calls, obj["families"]).by_source()
    texts = {s: e.text for s, e in evidence.items()}
    fams = {s: e.family for s, e in evidence.items()}
    for name in ("fact_source", "other_source"):
        if obj[name] not in evidence:
            known = ", ".join(json.dumps(s) for s in evidence) or "none"
            raise FixtureError(
                path,
                f"/{name}",
                f"a source of the trace's evidence ({known})",
                describe_value(obj[name]),
            )
    fact, other = obj["fact_source"], obj["other_source"]
    if fams[fact] == fams[other]:
        raise FixtureError(
            path,
            "/other_source",
            f"a source of another family than fact_source ({fams[fact]})",
            f"{describe_value(other)}, also of family {fams[other]}",
        )
    value = obj["shared_value"]
    for name, source in (("fact_source", fact), ("other_source", other)):
        if not _contains(texts[source], value):
            raise FixtureError(
                path,
                "/shared_value",
                f"a value that occurs in both fact_source {json.dumps(fact)} and "
                f"other_source {json.dumps(other)}",
                f"{describe_value(value)}, which {name} {json.dumps(source)} does not contain",
            )
    answers = {}
    for name, verdict, family in (
        ("probe", "conflated", fams[other]),
        ("control", "supported", fams[fact]),
    ):
        answer = _answer(obj[name], path, (name,), fams)
        for j, claim in enumerate(answer.claims):
            here = (name, "claims", j)
            expected = {
                "verdict": verdict,
                "gold_source": fact,
                "stated_family": family,
            }
            got = {
                "verdict": claim.verdict,
                "gold_source": claim.gold_source,
                "stated_family": claim.stated_family,
            }
            for key, want in expected.items():
                if got[key] != want:
                    raise FixtureError(
                        path,
                        json_pointer(*here, key),
                        f"{json.dumps(want)} (the {name} claim of a conflation probe)",
                        json.dumps(got[key]),
                    )
        answers[name] = answer
    return ProbeCase(
        id=obj["id"],
        request=obj["request"],
        families=dict(obj["families"]),
        descriptions=dict(obj.get("descriptions", {})),
        calls=calls,
        shared_value=value,
        fact_source=fact,
        other_source=other,
        probe=answers["probe"],
        control=answers["control"],
        fixture_set=fixture_set,
        path=path,
        note=obj.get("note", ""),
    )

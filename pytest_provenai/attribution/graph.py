"""The trace graph of an answering session: stable JSON, no timestamps.

Nodes: the ``session``; each ``call`` (order, tool, canonical arguments and their sha256,
result sha256 and text when captured live, error flag); each ``resource`` (source id,
family, sha256) a call returned; each ``answer`` (sha256 of its text); each ``claim``
(byte range, verdict). Edges: session ``made`` call, call ``returned`` resource, answer
``cites`` resource, answer ``has`` claim, claim ``routed_to`` resource.

:func:`graph_sha256` is the sha256 of the graph's canonical JSON (sorted keys); the same
session gives the same digest on every run. :func:`completeness` checks that every
resource the generator saw came from a recorded call (same source id and digest).

Pure Python.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from pytest_provenai._io import dumps_stable, sha256_text
from pytest_provenai.frozen.traces import ToolCall, output_sources

__all__ = ["GRAPH_SCHEMA", "AnswerNode", "completeness", "graph_sha256", "trace_graph"]

GRAPH_SCHEMA = "provenai-trace-graph/1"


@dataclass(frozen=True)
class AnswerNode:
    """An answer in the graph: its id, text, the sources it cites and, per claim, the byte
    range, verdict and routed source."""

    id: str
    text: str
    cites: tuple[str, ...] = ()
    claims: tuple[tuple[tuple[int, int], str, str | None], ...] = field(default=())


def trace_graph(
    session: str,
    calls: Sequence[ToolCall],
    families: Mapping[str, str],
    *,
    answers: Sequence[AnswerNode] = (),
    results: Mapping[int, tuple[str, str]] | None = None,
    meta: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """The graph (see the module docstring). ``results``: call index → (result text, its
    sha256) for calls captured live."""
    nodes: list[dict[str, Any]] = [{"id": "session", "type": "session", "session": session}]
    edges: list[dict[str, str]] = []
    resources: dict[str, dict[str, Any]] = {}
    sources = output_sources(calls)
    for call, names in zip(calls, sources, strict=True):
        cid = f"call/{call.index}"
        node: dict[str, Any] = {
            "id": cid,
            "type": "call",
            "index": call.index,
            "tool": call.tool,
            "arguments": call.arguments,
            "arguments_sha256": call.arguments_sha256,
            "error": call.error,
        }
        if results is not None and call.index in results:
            node["result_text"], node["result_sha256"] = results[call.index]
        nodes.append(node)
        edges.append({"from": "session", "to": cid, "type": "made"})
        for out, name in zip(call.outputs, names, strict=True):
            source = name or out.source or call.tool
            if call.error or not out.text.strip():
                continue
            rid = f"resource/{source}"
            if rid not in resources:
                resources[rid] = {
                    "id": rid,
                    "type": "resource",
                    "source": source,
                    "family": families.get(call.tool, "unknown"),
                    "sha256": out.sha256,
                }
            edges.append({"from": cid, "to": rid, "type": "returned"})
    nodes.extend(resources.values())
    for answer in answers:
        aid = f"answer/{answer.id}"
        nodes.append({"id": aid, "type": "answer", "sha256": sha256_text(answer.text)})
        for source in answer.cites:
            edges.append({"from": aid, "to": f"resource/{source}", "type": "cites"})
        for j, (byte_range, verdict, routed) in enumerate(answer.claims):
            clid = f"claim/{answer.id}/{j}"
            nodes.append(
                {"id": clid, "type": "claim", "range": list(byte_range), "verdict": verdict}
            )
            edges.append({"from": aid, "to": clid, "type": "has"})
            if routed is not None:
                edges.append({"from": clid, "to": f"resource/{routed}", "type": "routed_to"})
    return {"schema": GRAPH_SCHEMA, "meta": dict(meta or {}), "nodes": nodes, "edges": edges}


def graph_sha256(graph: Mapping[str, Any]) -> str:
    return sha256_text(dumps_stable(graph))


def completeness(
    graph: Mapping[str, Any], seen: Iterable[tuple[str, str]]
) -> tuple[bool, list[str]]:
    """(every seen (source id, sha256) was returned by a recorded call, the ones that
    were not)."""
    returned = {(n["source"], n["sha256"]) for n in graph["nodes"] if n.get("type") == "resource"}
    missing = [source for source, sha in seen if (source, sha) not in returned]
    return not missing, missing

"""Trace capture: every tool call of an answering session, recorded on the client side.

:class:`ToolSession` is a synchronous MCP client session (the SDK's ``Client`` on an anyio
blocking portal) to the ProvenAI server in process, or to any MCP server given as a
transport. Every call — including one the SDK rejected for bad arguments, and one naming an
unknown tool — is recorded in order: tool, canonical arguments and their sha256, the result
text and its sha256, the error flag and the evidence objects (source ids) it returned. The
recorded calls make the session's trace graph (:mod:`~pytest_provenai.attribution.graph`).

``provenai mcp replay GRAPH --fixtures DIR… [--index DIR]`` reissues a graph's calls against
a fresh server and fails on any result whose digest (or error flag) changed.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from types import TracebackType
from typing import Any

from pytest_provenai._io import sha256_text
from pytest_provenai.attribution import require_extra
from pytest_provenai.attribution.graph import GRAPH_SCHEMA, AnswerNode, trace_graph
from pytest_provenai.errors import AttributionError, FixtureError
from pytest_provenai.frozen.traces import ToolCall, canonical_arguments
from pytest_provenai.toolserver.tools import FAMILIES, GOLD_TOOLS, evidence_outputs

__all__ = ["CapturedCall", "ReplayMismatch", "ToolResult", "ToolSession", "replay"]


@dataclass(frozen=True)
class ToolResult:
    """What an agent gets back from a call: the result text, its JSON (None when the text
    is not JSON) and whether the call ended in an error."""

    text: str
    data: Any
    is_error: bool


@dataclass(frozen=True)
class CapturedCall:
    call: ToolCall
    result_text: str
    result_sha256: str


def _text_of(result: Any) -> str:
    parts = [getattr(c, "text", "") for c in getattr(result, "content", []) or []]
    return "\n".join(p for p in parts if p)


@dataclass
class ToolSession:
    """A recorded MCP client session. ``server`` is an in-process ``MCPServer`` or a
    transport the SDK's ``Client`` accepts (e.g. ``StdioServerParameters``)."""

    server: Any
    session: str
    families: Mapping[str, str] = field(default_factory=lambda: dict(FAMILIES))
    captured: list[CapturedCall] = field(default_factory=list)
    #: Tool name → its description in the server's listing (read when the session opens;
    #: the verifier resolves a claim's stated source by it too).
    descriptions: dict[str, str] = field(default_factory=dict)
    _portal_cm: Any = None
    _portal: Any = None
    _client_cm: Any = None
    _client: Any = None

    def __enter__(self) -> ToolSession:
        require_extra("mcp")
        from anyio.from_thread import start_blocking_portal
        from mcp import Client

        self._portal_cm = start_blocking_portal()
        self._portal = self._portal_cm.__enter__()
        try:
            self._client_cm = self._portal.wrap_async_context_manager(Client(self.server))
            self._client = self._client_cm.__enter__()
        except BaseException:
            self._portal_cm.__exit__(None, None, None)
            raise
        try:
            listed = self._portal.call(self._client.list_tools)
        except BaseException:
            self.__exit__(None, None, None)
            raise
        self.descriptions = {t.name: t.description for t in listed.tools if t.description}
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        try:
            if self._client_cm is not None:
                self._client_cm.__exit__(exc_type, exc, tb)
        finally:
            self._portal_cm.__exit__(None, None, None)
            self._client = self._client_cm = self._portal = self._portal_cm = None

    def tool_names(self) -> list[str]:
        listed = self._portal.call(self._client.list_tools)
        return [t.name for t in listed.tools]

    def call(
        self, name: str, arguments: Mapping[str, Any] | None = None, **kwargs: Any
    ) -> ToolResult:
        """Call tool ``name`` with ``arguments`` (or keyword arguments); recorded."""
        if self._client is None:
            raise AttributionError("the tool session is closed (use it inside 'with')")
        args = {**(arguments or {}), **kwargs}
        try:
            result = self._portal.call(self._client.call_tool, name, args)
            text, is_error = _text_of(result), bool(result.is_error)
        except Exception as exc:  # a protocol error is a failed call, recorded as such
            text, is_error = f"{type(exc).__name__}: {exc}", True
        data: Any = None
        try:
            data = json.loads(text)
        except ValueError:
            data = None
        self.record(name, args, text, is_error, data)
        return ToolResult(text, data, is_error)

    def record(
        self, tool: str, arguments: Mapping[str, Any], text: str, is_error: bool, data: Any
    ) -> CapturedCall:
        _, args_sha = canonical_arguments(arguments)
        outputs = (
            () if is_error else tuple(evidence_outputs(tool, data if data is not None else text))
        )
        call = ToolCall(len(self.captured), tool, dict(arguments), args_sha, outputs, is_error)
        captured = CapturedCall(call, text, sha256_text(text))
        self.captured.append(captured)
        return captured

    # -- what the session produced ---------------------------------------------------
    @property
    def calls(self) -> list[ToolCall]:
        return [c.call for c in self.captured]

    @property
    def gold_access(self) -> bool:
        return any(c.call.tool in GOLD_TOOLS for c in self.captured)

    def graph(
        self, answers: Sequence[AnswerNode] = (), meta: Mapping[str, Any] | None = None
    ) -> dict[str, Any]:
        return trace_graph(
            self.session,
            self.calls,
            self.families,
            answers=answers,
            results={c.call.index: (c.result_text, c.result_sha256) for c in self.captured},
            meta=meta,
        )


@dataclass(frozen=True)
class ReplayMismatch:
    index: int
    tool: str
    expected: str
    got: str

    def line(self) -> str:
        return f"call {self.index} ({self.tool}): expected {self.expected}, got {self.got}"


_SHA256 = re.compile(r"^[0-9a-f]{64}$")
_CALL_FIELDS: tuple[tuple[str, str, Callable[[Any], bool]], ...] = (
    ("index", "an integer call index >= 0", lambda v: type(v) is int and v >= 0),
    ("tool", "a tool name", lambda v: isinstance(v, str) and v != ""),
    ("arguments", "an object of arguments", lambda v: isinstance(v, dict)),
    ("error", "true or false", lambda v: isinstance(v, bool)),
    (
        "result_sha256",
        "the sha256 of the call's result (only a graph the audit captured, under "
        "--provenai-mcp-traces, has it; get_trace_graph's does not)",
        lambda v: isinstance(v, str) and _SHA256.match(v) is not None,
    ),
)


def read_graph(path: Path) -> dict[str, Any]:
    """A captured trace graph from ``path``, checked before anything is replayed: strict
    JSON (:func:`~pytest_provenai.frozen.jsonread.parse_json_bytes`: nesting, NaN, lone
    surrogates), the graph schema, ``nodes`` a list of objects, and every call node with an
    integer ``index``, a ``tool`` name, ``arguments`` object, ``error`` flag and the
    ``result_sha256`` only a captured graph has. Any problem is one
    :class:`~pytest_provenai.errors.AttributionError` naming the file and JSON pointer."""
    from pytest_provenai.frozen.jsonread import describe_value, json_pointer, parse_json_bytes
    from pytest_provenai.frozen.jsonread import read_bytes as read_file_bytes

    shown = str(path)
    try:
        graph = parse_json_bytes(read_file_bytes(path, shown), shown)
    except FixtureError as exc:
        raise AttributionError(str(exc)) from None

    def bad(pointer: str, expected: str, node: Any, key: str | None = None) -> AttributionError:
        if key is None:
            got = describe_value(node)
        else:
            got = describe_value(node[key]) if key in node else "nothing (the field is missing)"
        where = f"{shown}#{pointer}" if pointer else shown
        return AttributionError(f"{where}: expected {expected}, got {got}")

    if not isinstance(graph, dict):
        raise bad("", f"a trace graph object (schema {GRAPH_SCHEMA})", graph)
    if graph.get("schema") != GRAPH_SCHEMA:
        raise bad("/schema", f'"{GRAPH_SCHEMA}"', graph, "schema")
    nodes = graph.get("nodes")
    if not isinstance(nodes, list):
        raise bad("/nodes", "a list of nodes", graph, "nodes")
    calls = 0
    for i, node in enumerate(nodes):
        if not isinstance(node, dict):
            raise bad(json_pointer("nodes", i), "a node object", node)
        if node.get("type") != "call":
            continue
        calls += 1
        for key, expected, ok in _CALL_FIELDS:
            if not ok(node.get(key)):
                raise bad(json_pointer("nodes", i, key), expected, node, key)
    if not calls:
        raise AttributionError(f"{shown}#/nodes: no call nodes; nothing to replay")
    return graph


def replay(graph: Mapping[str, Any], server: Any) -> list[ReplayMismatch]:
    """Reissue every call of ``graph`` in order against ``server``; the mismatches (result
    sha256 or error flag changed)."""
    calls = sorted(
        (n for n in graph.get("nodes", []) if n.get("type") == "call"), key=lambda n: n["index"]
    )
    if not calls:
        raise AttributionError("the trace graph has no call nodes; nothing to replay")
    out: list[ReplayMismatch] = []
    with ToolSession(server, f"replay:{graph.get('nodes', [{}])[0].get('session', '')}") as s:
        for node in calls:
            if "result_sha256" not in node:
                raise AttributionError(
                    f"call {node['index']} ({node['tool']}) has no result_sha256: only "
                    "captured graphs can be replayed"
                )
            s.call(node["tool"], node["arguments"])
            got = s.captured[-1]
            if got.call.error != node["error"]:
                out.append(
                    ReplayMismatch(
                        node["index"],
                        node["tool"],
                        f"error={node['error']}",
                        f"error={got.call.error} ({got.result_text[:120]})",
                    )
                )
            elif got.result_sha256 != node["result_sha256"]:
                out.append(
                    ReplayMismatch(
                        node["index"],
                        node["tool"],
                        f"result sha256 {node['result_sha256']}",
                        f"sha256 {got.result_sha256}",
                    )
                )
    return out

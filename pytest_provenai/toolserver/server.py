"""The ProvenAI MCP server on the ``mcp`` SDK (2.x ``MCPServer``).

``build_server(tools)`` registers the six tools of :mod:`~pytest_provenai.toolserver.tools`;
an expected error (``unknown source_id 'x'``) reaches the client as one tool error; bad
arguments are rejected by the SDK's own validation. The server keeps its own view of the
session (every call that reached a tool, in order) for ``get_trace_session_status`` and
``get_trace_graph``; the harness records the authoritative trace on the client side
(:mod:`~pytest_provenai.toolserver.capture`), which also sees calls the SDK rejected.

``provenai mcp serve --fixtures DIR… [--index DIR]`` runs it on stdio through
:mod:`~pytest_provenai.toolserver.stdio`, which answers every line (the SDK's own transport
drops malformed ones silently). A lone surrogate in a tool argument is a tool error naming
the argument; ``k`` must be an integer (``true`` is not 1). The log keeps argument texts up
to :data:`MAX_ARGUMENT_TEXT` characters, the cuts recorded in the graph's ``meta``.
"""

from __future__ import annotations

import json
import sys
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from pytest_provenai._io import MAX_RECORD_TEXT, json_safe
from pytest_provenai.attribution import require_extra
from pytest_provenai.frozen.traces import ToolCall, canonical_arguments
from pytest_provenai.toolserver.tools import (
    FAMILIES,
    GOLD_TOOLS,
    HotpotTools,
    ToolInputError,
    evidence_outputs,
)

try:  # the SDK's own dependency; without the extra, build_server says which one to install
    from pydantic import StrictInt
except ImportError:  # pragma: no cover
    StrictInt = int  # type: ignore[misc]

__all__ = ["SERVER_NAME", "ServerLog", "ToolServer", "build_server", "result_object"]

SERVER_NAME = "provenai-hotpotqa"


MAX_ARGUMENT_TEXT = MAX_RECORD_TEXT
"""Longest argument text the server's log keeps (the arguments' sha256 covers all of it)."""


def lone_surrogate_argument(arguments: dict[str, Any]) -> str | None:
    """The name of the first argument whose text holds a lone surrogate (JSON can escape one;
    it is not Unicode text and cannot be hashed or written), else None."""
    for name, value in arguments.items():
        _, notes = json_safe(value, max_chars=sys.maxsize)
        if any("lone surrogate" in n for n in notes):
            return name
    return None


@dataclass
class ServerLog:
    """The server's view of its session: the calls that reached a tool. Argument texts are
    kept up to :data:`MAX_ARGUMENT_TEXT` characters (lone surrogates as U+FFFD); each cut is
    listed in ``cuts`` and in the graph's ``meta``."""

    calls: list[ToolCall] = field(default_factory=list)
    cuts: list[str] = field(default_factory=list)

    def add(self, tool: str, arguments: dict[str, Any], result: Any, error: bool) -> None:
        clean, notes = json_safe(arguments, max_chars=sys.maxsize)
        _, sha = canonical_arguments(clean)
        stored, cuts = json_safe(clean, max_chars=MAX_ARGUMENT_TEXT)
        index = len(self.calls)
        self.cuts += [f"call {index} ({tool}) arguments{c}" for c in [*notes, *cuts]]
        outputs = () if error else tuple(evidence_outputs(tool, result))
        self.calls.append(ToolCall(index, tool, stored, sha, outputs, error))

    def status(self, session: str) -> dict[str, Any]:
        sources = list(dict.fromkeys(o.source for c in self.calls for o in c.outputs if o.source))
        return {
            "session": session,
            "calls": len(self.calls),
            "errors": sum(c.error for c in self.calls),
            "tools": [c.tool for c in self.calls],
            "sources_returned": sources,
            "gold_access": any(c.tool in GOLD_TOOLS for c in self.calls),
        }

    def graph(self, session: str) -> dict[str, Any]:
        from pytest_provenai.attribution.graph import trace_graph

        meta = {"stored_arguments": self.cuts} if self.cuts else None
        return trace_graph(session, self.calls, FAMILIES, meta=meta)


@dataclass(frozen=True)
class ToolServer:
    """The SDK server object and the server's own log of the session."""

    mcp: Any  # mcp.server.mcpserver.MCPServer (the SDK is imported on use)
    log: ServerLog


def build_server(tools: HotpotTools, *, session: str = "stdio", version: str = "") -> ToolServer:
    """The MCPServer with the six tools over ``tools``, and its session log."""
    require_extra("mcp")
    from mcp.server.mcpserver import MCPServer
    from mcp.server.mcpserver.exceptions import ToolError

    server = MCPServer(
        SERVER_NAME,
        version=version,
        instructions=(
            "HotpotQA evidence tools. get_supporting_facts is for inspection only: calling it "
            "while answering is recorded as gold access."
        ),
        log_level="WARNING",
    )
    log = ServerLog()

    def logged(name: str, fn: Callable[..., dict[str, Any]], **kwargs: Any) -> dict[str, Any]:
        bad = lone_surrogate_argument(kwargs)
        if bad is not None:
            message = f"argument {bad!r} is not Unicode text (it holds a lone surrogate)"
            log.add(name, kwargs, message, True)
            raise ToolError(message)
        try:
            result = fn(**kwargs)
        except ToolInputError as exc:
            log.add(name, kwargs, str(exc), True)
            raise ToolError(str(exc)) from None
        log.add(name, kwargs, result, False)
        return result

    @server.tool(description="Question, type, level and source ids of a HotpotQA example.")
    def get_example(example_id: str) -> dict[str, Any]:
        return logged("get_example", tools.get_example, example_id=example_id)

    @server.tool(
        description="Gold supporting facts of an example. Inspection only: a call while "
        "answering is recorded as gold access."
    )
    def get_supporting_facts(example_id: str) -> dict[str, Any]:
        return logged("get_supporting_facts", tools.get_supporting_facts, example_id=example_id)

    @server.tool(description="Top-k passages for a query (the retrieval index when given).")
    def search_hotpotqa(query: str, k: StrictInt = 5) -> dict[str, Any]:
        return logged("search_hotpotqa", tools.search_hotpotqa, query=query, k=k)

    @server.tool(description="Title, text, sentences and sha256 of one passage by source id.")
    def get_evidence_document(source_id: str) -> dict[str, Any]:
        return logged("get_evidence_document", tools.get_evidence_document, source_id=source_id)

    @server.tool(description="The server's view of this session: calls, sources, gold access.")
    def get_trace_session_status() -> dict[str, Any]:
        return log.status(session)

    @server.tool(description="The server's trace graph of this session (stable JSON).")
    def get_trace_graph() -> dict[str, Any]:
        return log.graph(session)

    return ToolServer(server, log)


def result_object(text: str) -> Any:
    """A tool result's text content as JSON (tools return objects), else the text."""
    try:
        return json.loads(text)
    except ValueError:
        return text

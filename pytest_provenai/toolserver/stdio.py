"""The stdio transport of ``provenai mcp serve``: every line a client sends gets an answer.

The SDK's own stdio transport drops what it cannot parse (a line that is not JSON, not UTF-8,
a JSON array, ``"id": null``, deep nesting) without a word, and a reply it cannot encode
(a lone surrogate echoed back) kills its writer, so the client waits forever. This transport
reads each line itself and answers what the SDK would drop with the JSON-RPC error the
specification names, ``id`` null where the request has none:

* ``-32700`` parse error: not UTF-8, not JSON, nesting deeper than :data:`MAX_DEPTH`;
* ``-32600`` invalid request: not a JSON object (batches are not part of MCP), no
  ``"jsonrpc": "2.0"``, an ``id`` that is null, a boolean or not a string/number, a
  request before ``initialize`` (the legacy lifecycle; a request carrying the 2026 per-request
  ``_meta`` envelope opens a modern connection and is passed on), a message the SDK's model
  rejects, or a lone surrogate outside a tool's arguments (tools answer those themselves,
  naming the argument);
* ``-32603`` internal error for a reply that cannot be written as UTF-8 JSON.

Valid messages go to the SDK server unchanged; each refusal is also one line on stderr.
"""

from __future__ import annotations

import json
import re
import sys
from typing import Any, BinaryIO

__all__ = ["MAX_DEPTH", "check_line", "serve_stdio"]

MAX_DEPTH = 64
END_OF_INPUT_GRACE = 30.0  # seconds the server still answers requests after stdin closes
"""Deepest nesting a message may have (MCP messages nest a handful of levels)."""

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
INTERNAL_ERROR = -32603
_SURROGATE = re.compile("[\ud800-\udfff]")
_MODERN_KEY = "io.modelcontextprotocol/protocolVersion"


def _deeper_than(value: Any, limit: int) -> bool:
    """Whether ``value`` nests arrays/objects more than ``limit`` levels (stops early)."""
    level: list[Any] = [value]
    for _ in range(limit):
        level = [
            child
            for node in level
            if isinstance(node, (dict, list))
            for child in (node.values() if isinstance(node, dict) else node)
            if isinstance(child, (dict, list))
        ]
        if not level:
            return False
    return True


def _lone_surrogate_at(value: Any, path: str = "") -> str | None:
    """The JSON pointer of the first string (or key) holding a lone surrogate, else None."""
    if isinstance(value, str):
        return (path or "/") if _SURROGATE.search(value) else None
    if isinstance(value, dict):
        for key, item in value.items():
            if _SURROGATE.search(key):
                return f"{path}/(a key)"
            found = _lone_surrogate_at(item, f"{path}/{key}")
            if found:
                return found
    if isinstance(value, list):
        for i, item in enumerate(value):
            found = _lone_surrogate_at(item, f"{path}/{i}")
            if found:
                return found
    return None


def _error(id_: Any, code: int, message: str) -> dict[str, Any]:
    return {"jsonrpc": "2.0", "id": id_, "error": {"code": code, "message": message}}


def check_line(line: bytes, *, opened: bool) -> tuple[dict[str, Any] | None, dict[str, Any] | None]:
    """``(message, None)`` for a line to hand to the server, ``(None, error reply)`` for one
    it would drop, ``(None, None)`` for a blank line or a bad notification (a notification
    gets no reply, by the specification). ``opened``: an ``initialize`` (or an enveloped
    request) has been seen."""
    if not line.strip():
        return None, None
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        where = f"byte 0x{line[exc.start]:02x} at offset {exc.start}"
        return None, _error(None, PARSE_ERROR, f"Parse error: the line is not UTF-8 ({where})")
    deep = _error(None, PARSE_ERROR, f"Parse error: nesting deeper than {MAX_DEPTH} levels")
    try:
        message = json.loads(text)
    except RecursionError:
        return None, deep
    except ValueError as exc:
        return None, _error(None, PARSE_ERROR, f"Parse error: not JSON ({exc})")
    if _deeper_than(message, MAX_DEPTH):
        return None, deep
    if not isinstance(message, dict):
        kind = "an array (batches are not part of MCP)" if isinstance(message, list) else "not"
        return None, _error(
            None, INVALID_REQUEST, f"Invalid Request: a message is a JSON object, got {kind}"
        )
    has_id = "id" in message
    id_ = message.get("id")
    good_id = (isinstance(id_, int) and not isinstance(id_, bool)) or (
        isinstance(id_, str) and not _SURROGATE.search(id_)
    )
    reply_id = id_ if good_id else None
    if message.get("jsonrpc") != "2.0":
        return None, _error(reply_id, INVALID_REQUEST, 'Invalid Request: "jsonrpc" must be "2.0"')
    if has_id and not good_id:
        return None, _error(
            None, INVALID_REQUEST, 'Invalid Request: "id" must be a string or an integer'
        )
    method = message.get("method")
    if not has_id and isinstance(method, str):  # a notification: never answered
        return (None, None) if _lone_surrogate_at(message) else (message, None)
    params = message.get("params")
    arguments = params.get("arguments") if isinstance(params, dict) else None
    outside = dict(message)
    if method == "tools/call" and isinstance(params, dict):
        outside["params"] = {k: v for k, v in params.items() if k != "arguments"}
        if isinstance(arguments, dict):  # argument names must be text; values: the tool says
            bad = next((k for k in arguments if _SURROGATE.search(k)), None)
            if bad is not None:
                return None, _error(
                    reply_id,
                    INVALID_REQUEST,
                    "Invalid Request: an argument name holds a lone surrogate (not Unicode text)",
                )
    found = _lone_surrogate_at(outside)
    if found:
        return None, _error(
            reply_id,
            INVALID_REQUEST,
            f"Invalid Request: {found} holds a lone surrogate (JSON escapes that are not "
            "Unicode text)",
        )
    if isinstance(method, str) and not opened and method not in ("initialize", "ping"):
        meta = params.get("_meta") if isinstance(params, dict) else None
        if not (isinstance(meta, dict) and _MODERN_KEY in meta):
            return None, _error(
                reply_id,
                INVALID_REQUEST,
                f"Invalid Request: {method} before initialize; the session starts with an "
                "'initialize' request (MCP lifecycle)",
            )
    return message, None


def serve_stdio(mcp: Any, stdin: BinaryIO | None = None, stdout: BinaryIO | None = None) -> None:
    """Run the SDK server ``mcp`` (an ``MCPServer``) over stdin/stdout through
    :func:`check_line` (see the module docstring). Returns when stdin closes, once every
    request already read is answered (at most :data:`END_OF_INPUT_GRACE` seconds)."""
    import anyio

    anyio.run(_serve, mcp, stdin or sys.stdin.buffer, stdout or sys.stdout.buffer)


async def _serve(mcp: Any, stdin: BinaryIO, stdout: BinaryIO) -> None:
    import anyio
    from mcp.shared.message import SessionMessage
    from mcp.types import jsonrpc_message_adapter

    server = mcp._lowlevel_server  # the SDK's own run_stdio_async drives the same object
    to_server_send, to_server = anyio.create_memory_object_stream[Any](0)
    from_server_send, from_server = anyio.create_memory_object_stream[Any](0)
    replies_send, replies = anyio.create_memory_object_stream[dict[str, Any]](16)
    out = anyio.wrap_file(stdout)
    lock = anyio.Lock()
    # requests handed to the server and not yet answered: at the end of stdin the reader
    # waits for them (the SDK would cancel a handler still running when its input closes)
    pending: set[str] = set()

    async def write(obj: dict[str, Any]) -> None:
        async with lock:
            await out.write(json.dumps(obj).encode("ascii") + b"\n")
            await out.flush()

    async def reader() -> None:
        opened = False
        async with to_server_send, replies_send:
            async for line in anyio.wrap_file(stdin):
                message, error = check_line(line, opened=opened)
                if error is not None:
                    print(f"provenai mcp: refused: {error['error']['message']}", file=sys.stderr)
                    await replies_send.send(error)
                    continue
                if message is None:
                    continue
                try:
                    parsed = jsonrpc_message_adapter.validate_python(message)
                except Exception:
                    id_ = message.get("id") if "method" in message else None
                    await replies_send.send(
                        _error(
                            id_,
                            INVALID_REQUEST,
                            "Invalid Request: not a JSON-RPC request, notification or response",
                        )
                    )
                    continue
                if message.get("method") == "initialize" or (
                    isinstance(message.get("params"), dict)
                    and isinstance(message["params"].get("_meta"), dict)
                    and _MODERN_KEY in message["params"]["_meta"]
                ):
                    opened = True
                if "method" in message and message.get("id") is not None:
                    pending.add(json.dumps(message["id"]))
                await to_server_send.send(SessionMessage(parsed))
            with anyio.move_on_after(END_OF_INPUT_GRACE):
                while pending:
                    await anyio.sleep(0.01)

    async def writer() -> None:
        async with from_server:
            async for session_message in from_server:
                msg = session_message.message
                try:
                    text = msg.model_dump_json(by_alias=True, exclude_unset=True)
                    data = text.encode("utf-8")
                except (UnicodeEncodeError, ValueError):
                    id_ = getattr(msg, "id", None)
                    await write(
                        _error(
                            id_,
                            INTERNAL_ERROR,
                            "Internal error: the reply could not be written as UTF-8 JSON",
                        )
                    )
                    pending.discard(json.dumps(id_))
                    continue
                async with lock:
                    await out.write(data + b"\n")
                    await out.flush()
                pending.discard(json.dumps(getattr(msg, "id", None)))

    async def errors() -> None:
        async with replies:
            async for reply in replies:
                await write(reply)

    async with anyio.create_task_group() as tg:
        tg.start_soon(reader)
        tg.start_soon(writer)
        tg.start_soon(errors)
        await server.run(to_server, from_server_send, server.create_initialization_options())

"""The MCP side: the six tools, the SDK server in process and over stdio (a subprocess, the
SDK's own client, offline), the recording session, the trace graph, replay, and the MCP
subject in both modes (harness-driven with the scripted generator, and a user's agent)."""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any

import anyio
import pytest
from scripted import ScriptedGenerator

from pytest_provenai.attribution.graph import graph_sha256
from pytest_provenai.frozen.load import load_fixture_set
from pytest_provenai.frozen.model import Case
from pytest_provenai.subject.backends.base import Decoding
from pytest_provenai.subject.subject import ModelSubject
from pytest_provenai.toolserver.capture import ToolSession, replay
from pytest_provenai.toolserver.server import build_server
from pytest_provenai.toolserver.subject import MCPAnswerer
from pytest_provenai.toolserver.tools import TOOL_NAMES, HotpotTools, ToolInputError

REPO = Path(__file__).resolve().parents[1]
FIRST = REPO / "fixtures" / "hotpotqa-dev-first1"
CASE_ID = "5a8b57f25542995d1e6f1371"


@pytest.fixture(scope="module")
def case() -> Case:
    c = load_fixture_set(FIRST).cases[0]
    assert isinstance(c, Case)
    return c


@pytest.fixture
def tools(case: Case) -> HotpotTools:
    return HotpotTools([case])


def test_tools_never_show_the_gold_answer(tools: HotpotTools, case: Case) -> None:
    example = tools.get_example(CASE_ID)
    assert example["question"] == case.question and len(example["source_ids"]) == 10
    assert case.answer not in json.dumps(example)
    doc = tools.get_evidence_document(example["source_ids"][1])
    assert doc["title"] == "Scott Derrickson" and doc["text"] == "".join(doc["sentences"])
    facts = tools.get_supporting_facts(CASE_ID)["supporting_facts"]
    assert {f["title"] for f in facts} == {"Scott Derrickson", "Ed Wood"}
    with pytest.raises(ToolInputError, match="unknown source_id 'nope'"):
        tools.get_evidence_document("nope")
    with pytest.raises(ToolInputError, match="unknown example_id"):
        tools.get_example("nope")


def test_bm25_search_is_deterministic(tools: HotpotTools) -> None:
    first = tools.search_hotpotqa("Scott Derrickson director nationality", 3)
    assert first == tools.search_hotpotqa("Scott Derrickson director nationality", 3)
    assert first["engine"] == "bm25" and first["hits"][0]["title"] == "Scott Derrickson"
    with pytest.raises(ToolInputError, match="k must be between"):
        tools.search_hotpotqa("x", 0)


def test_session_records_every_call_including_sdk_rejections(tools: HotpotTools) -> None:
    server = build_server(tools, session="t")
    with ToolSession(server.mcp, "t") as s:
        assert sorted(s.tool_names()) == sorted(TOOL_NAMES)
        # the listing's descriptions are read when the session opens (the verifier uses them)
        assert sorted(s.descriptions) == sorted(TOOL_NAMES)
        assert "passages" in s.descriptions["search_hotpotqa"].lower()
        ok = s.call("get_example", example_id=CASE_ID)
        missing = s.call("get_evidence_document", source_id="nope")
        bad_args = s.call("search_hotpotqa", query="x", k="many")
        unknown = s.call("no_such_tool")
    assert not ok.is_error and ok.data["example_id"] == CASE_ID
    assert missing.is_error and "unknown source_id 'nope'" in missing.text
    assert bad_args.is_error and "validation error" in bad_args.text
    assert unknown.is_error
    recorded = s.captured
    assert [c.call.tool for c in recorded] == [
        "get_example",
        "get_evidence_document",
        "search_hotpotqa",
        "no_such_tool",
    ]
    assert [c.call.error for c in recorded] == [False, True, True, True]
    assert recorded[2].call.arguments == {"query": "x", "k": "many"}
    assert recorded[0].call.outputs[0].source == f"example:{CASE_ID}"
    # the server's own view saw the two calls that reached a tool
    assert [c.tool for c in server.log.calls] == ["get_example", "get_evidence_document"]


def test_graph_and_replay(tools: HotpotTools, tmp_path: Path) -> None:
    def session() -> dict[str, Any]:
        with ToolSession(build_server(tools).mcp, "g") as s:
            ids = s.call("get_example", example_id=CASE_ID).data["source_ids"]
            s.call("get_evidence_document", source_id=ids[0])
            s.call("get_evidence_document", source_id="nope")
        return s.graph()

    graph = session()
    assert graph_sha256(graph) == graph_sha256(session())  # no timestamps
    assert replay(graph, build_server(tools).mcp) == []
    graph["nodes"][2]["result_sha256"] = "0" * 64
    mismatches = replay(graph, build_server(tools).mcp)
    assert [m.index for m in mismatches] == [1]
    path = tmp_path / "graph.json"
    path.write_text(json.dumps(graph), encoding="utf-8")
    from pytest_provenai.cli import main

    assert main(["mcp", "replay", str(path), "--fixtures", str(FIRST)]) == 1


def test_replay_cli_reports_a_clean_graph(tools: HotpotTools, tmp_path: Path, capsys: Any) -> None:
    from pytest_provenai.cli import main

    with ToolSession(build_server(tools).mcp, "g") as s:
        s.call("get_example", example_id=CASE_ID)
    path = tmp_path / "graph.json"
    path.write_text(json.dumps(s.graph()), encoding="utf-8")
    assert main(["mcp", "replay", str(path), "--fixtures", str(FIRST)]) == 0
    assert "every result digest matches" in capsys.readouterr().out
    path.write_text("{}", encoding="utf-8")
    assert main(["mcp", "replay", str(path), "--fixtures", str(FIRST)]) == 2


@pytest.mark.slow
def test_serve_over_stdio_with_the_sdks_own_client() -> None:
    from mcp import Client, StdioServerParameters
    from mcp.types import TextContent

    params = StdioServerParameters(
        command=sys.executable,
        args=["-m", "pytest_provenai.cli", "mcp", "serve", "--fixtures", str(FIRST)],
        env={"HF_HUB_OFFLINE": "1", "PATH": "/usr/bin:/bin"},
    )

    async def run() -> tuple[list[str], Any, Any, Any]:
        async with Client(params) as client:
            listed = await client.list_tools()
            example = await client.call_tool("get_example", {"example_id": CASE_ID})
            first = example.content[0]
            assert isinstance(first, TextContent)
            ids = json.loads(first.text)["source_ids"]
            doc = await client.call_tool("get_evidence_document", {"source_id": ids[4]})
            bad = await client.call_tool("get_evidence_document", {"source_id": "nope"})
            status = await client.call_tool("get_trace_session_status", {})
            return [t.name for t in listed.tools], doc, bad, status

    names, doc, bad, status = anyio.run(run)
    assert sorted(names) == sorted(TOOL_NAMES)
    assert json.loads(doc.content[0].text)["title"] == "Ed Wood"
    assert bad.is_error and "unknown source_id 'nope'" in bad.content[0].text
    assert json.loads(status.content[0].text)["calls"] == 3


def test_serve_needs_hotpotqa_sets() -> None:
    from pytest_provenai.cli import main

    assert (
        main(["mcp", "serve", "--fixtures", str(REPO / "fixtures" / "synthetic-mcp-traces")]) == 2
    )


def test_mcp_subject_harness_drives_the_calls(tools: HotpotTools, case: Case) -> None:
    generator = ScriptedGenerator(
        {"*": "Answer: yes [R1]\nEvidence: Scott Derrickson is an American director [R1]."},
        "scripted",
        Decoding(),
        "cpu",
    )
    answered = MCPAnswerer(tools, subject=ModelSubject(generator)).answer(case)
    tools_called = [c.tool for c in answered.session.calls]
    assert tools_called == ["get_example"] + ["get_evidence_document"] * 10
    assert answered.cites == [answered.seen[1][0]] and len(answered.seen) == 10
    assert answered.trace is not None and answered.trace.resources[1].title == "Scott Derrickson"
    assert not answered.session.gold_access
    # the same prompt as the fidelity suite's, so both share one generation cache entry
    direct = ModelSubject(generator).answer(case)
    assert direct.view is not None and answered.trace.view is not None
    assert answered.trace.view.prompt == direct.view.prompt


def agent_reading_gold(question: str, tools: Any) -> dict[str, Any]:
    """A test agent: peeks at the gold facts, then answers from one document."""
    example = tools.call("get_example", example_id=CASE_ID).data
    tools.call("get_supporting_facts", example_id=CASE_ID)
    doc = tools.call("get_evidence_document", source_id=example["source_ids"][1]).data
    return {"answer": f"{doc['title']} is American.", "citations": [doc["source_id"], "ghost"]}


def test_mcp_subject_agent_mode_records_gold_access(tools: HotpotTools, case: Case) -> None:
    mcp = MCPAnswerer(tools, agent=f"{__name__}:agent_reading_gold")
    answered = mcp.answer(case)
    assert answered.session.gold_access and answered.driver == "agent"
    assert answered.cites[1] == "ghost"
    assert [c.tool for c in answered.session.calls] == [
        "get_example",
        "get_supporting_facts",
        "get_evidence_document",
    ]


# -- every line a client sends gets an answer (issue 22) ------------------------------------------
INIT = {
    "jsonrpc": "2.0",
    "id": 0,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "t", "version": "1"},
    },
}


def serve_lines(lines: list[bytes], timeout: float = 60.0) -> tuple[list[dict[str, Any]], str]:
    """Feed raw lines to `provenai mcp serve` (stdin then closed); its replies, its stderr."""
    import subprocess

    proc = subprocess.run(
        [sys.executable, "-m", "pytest_provenai.cli", "mcp", "serve", "--fixtures", str(FIRST)],
        input=b"".join(line + b"\n" for line in lines),
        capture_output=True,
        timeout=timeout,
        env={"HF_HUB_OFFLINE": "1", "PATH": "/usr/bin:/bin"},
    )
    replies = [json.loads(r) for r in proc.stdout.decode("utf-8").splitlines() if r.strip()]
    return replies, proc.stderr.decode("utf-8", "replace")


def rpc(id_: Any, method: str, params: dict[str, Any] | None = None) -> bytes:
    msg: dict[str, Any] = {"jsonrpc": "2.0", "id": id_, "method": method}
    if params is not None:
        msg["params"] = params
    return json.dumps(msg).encode()


@pytest.mark.slow
def test_stdio_server_answers_every_malformed_line_and_keeps_serving() -> None:
    search = '{"jsonrpc":"2.0","id":%d,"method":"tools/call","params":{"name":"search_hotpotqa",'
    lines = [
        rpc(1, "tools/list"),  # before initialize
        json.dumps(INIT).encode(),
        b'{"jsonrpc":"2.0","method":"notifications/initialized"}',
        (search % 2).encode() + b'"arguments":{"query":"a\\ud800b"}}}',  # lone surrogate
        (search % 3).encode() + b'"arguments":{"query":"x","k":true}}}',  # bool for an int
        b"not json",
        b"{",
        b"[]",
        b"\xff\xfe",
        b"[" * 100_000,
        rpc(None, "tools/list"),
        b'{"jsonrpc":"2.0","id":"a\\udc00","method":"tools/list"}',
        b'{"jsonrpc":"1.0","id":7,"method":"tools/list"}',
        rpc(9, "tools/list"),  # and the server still serves
    ]
    replies, stderr = serve_lines(lines)
    by_id = {r.get("id"): r for r in replies if r.get("id") is not None}
    nulls = [r for r in replies if r.get("id") is None]
    assert (
        by_id[1]["error"]["code"] == -32600 and "before initialize" in by_id[1]["error"]["message"]
    )
    surrogate = by_id[2]["result"]
    assert surrogate["isError"] and "argument 'query' is not Unicode text" in str(surrogate)
    assert by_id[3]["result"]["isError"] and "valid integer" in str(by_id[3]["result"])
    assert by_id[7]["error"]["code"] == -32600
    assert sorted(t["name"] for t in by_id[9]["result"]["tools"]) == sorted(TOOL_NAMES)
    codes = sorted(r["error"]["code"] for r in nulls)
    # not json, "{", 0xff, deep nesting: parse errors; [], id null, id with a surrogate: invalid
    assert codes == [-32700] * 4 + [-32600] * 3
    assert any("nesting deeper than 64" in r["error"]["message"] for r in nulls)
    assert any("not UTF-8" in r["error"]["message"] for r in nulls)
    assert stderr.count("provenai mcp: refused:") == 9


def test_the_server_log_caps_argument_text_and_records_the_cut(tools: HotpotTools) -> None:
    from pytest_provenai.toolserver.server import MAX_ARGUMENT_TEXT

    server = build_server(tools)
    huge = "q" * (MAX_ARGUMENT_TEXT * 50)
    with ToolSession(server.mcp, "cap") as s:
        s.call("search_hotpotqa", query=huge, k=1)
        s.call("search_hotpotqa", query="Scott Derrickson", k=1)
    logged = server.log.calls
    assert len(logged[0].arguments["query"]) == MAX_ARGUMENT_TEXT
    assert logged[1].arguments == {"query": "Scott Derrickson", "k": 1}
    graph = server.log.graph("cap")
    assert graph["meta"]["stored_arguments"] == [
        f"call 0 (search_hotpotqa) arguments/query: cut to {MAX_ARGUMENT_TEXT} of "
        f"{len(huge)} characters"
    ]
    assert len(json.dumps(graph)) < 3 * MAX_ARGUMENT_TEXT
    # the digest still pins the whole argument
    from pytest_provenai.frozen.traces import canonical_arguments

    assert logged[0].arguments_sha256 == canonical_arguments({"query": huge, "k": 1})[1]


def graph_file(tools: HotpotTools, tmp_path: Path) -> tuple[Path, dict[str, Any]]:
    with ToolSession(build_server(tools).mcp, "g") as s:
        s.call("get_example", example_id=CASE_ID)
    path = tmp_path / "graph.json"
    graph = s.graph()
    path.write_text(json.dumps(graph), encoding="utf-8")
    return path, graph


@pytest.mark.parametrize(
    ("change", "pointer", "said"),
    [
        (lambda g: g["nodes"][1].pop("result_sha256"), "/nodes/1/result_sha256", "get_trace_graph"),
        (lambda g: g["nodes"][1].pop("error"), "/nodes/1/error", "the field is missing"),
        (lambda g: g["nodes"][1].pop("index"), "/nodes/1/index", "the field is missing"),
        (lambda g: g["nodes"][1].update(arguments=[1]), "/nodes/1/arguments", "an array of 1"),
        (lambda g: g.update(nodes={"a": 1}), "/nodes", "an object"),
        (lambda g: g["nodes"].__setitem__(1, "call"), "/nodes/1", 'the string "call"'),
        (lambda g: g.update(schema="x"), "/schema", 'the string "x"'),
    ],
)
def test_replay_of_a_file_that_is_no_captured_graph_is_one_line_exit_2(
    tools: HotpotTools,
    tmp_path: Path,
    capsys: Any,
    change: Any,
    pointer: str,
    said: str,
) -> None:
    from pytest_provenai.cli import main

    path, graph = graph_file(tools, tmp_path)
    change(graph)
    path.write_text(json.dumps(graph), encoding="utf-8")
    assert main(["mcp", "replay", str(path), "--fixtures", str(FIRST)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"provenai: error: {path}#{pointer}: expected ")
    assert said in err[0]


def test_replay_of_a_deeply_nested_file_is_one_line_exit_2(tmp_path: Path, capsys: Any) -> None:
    from pytest_provenai.cli import main

    path = tmp_path / "deep.json"
    path.write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    assert main(["mcp", "replay", str(path), "--fixtures", str(FIRST)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and f"{path}: expected " in err[0] and "nest" in err[0]

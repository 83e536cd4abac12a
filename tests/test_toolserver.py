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
from pytest_provenai.toolserver.subject import MCPSubject
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
    answered = MCPSubject(tools, subject=ModelSubject(generator)).answer(case)
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
    mcp = MCPSubject(tools, agent=f"{__name__}:agent_reading_gold")
    answered = mcp.answer(case)
    assert answered.session.gold_access and answered.driver == "agent"
    assert answered.cites[1] == "ghost"
    assert [c.tool for c in answered.session.calls] == [
        "get_example",
        "get_supporting_facts",
        "get_evidence_document",
    ]

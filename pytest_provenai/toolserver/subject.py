"""Answering HotpotQA cases through the MCP tools, with every call recorded.

:class:`MCPAnswerer` opens one recorded session per case against the in-process ProvenAI
server. Two ways to answer:

* **the harness drives** (default): ``get_example`` → (``search_hotpotqa(question, k)``
  when a retrieval index is configured, else the example's source ids) →
  ``get_evidence_document`` per source; the documents become the resources ``R0``…, in
  that order, and the subject under audit (the embedded model by default) writes the answer
  from them — with the same prompt as the fidelity suite, so the generation cache is shared;
* **a user's agent** (``--provenai-mcp-pipeline module:callable``): ``fn(question, tools)``
  where ``tools.call(name, **arguments)`` returns a :class:`~capture.ToolResult`; it returns
  the answer text, or ``{"answer": str, "citations": [source ids]}``.

The result holds the session's captured calls, the answer, the sources it cites and the
resources the generator saw as (source id, sha256), for the trace graph's completeness.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Any

from pytest_provenai.errors import AttributionError
from pytest_provenai.frozen.model import Case
from pytest_provenai.subject.subject import Subject, import_callable, read_reply
from pytest_provenai.subject.trace import Resource, Trace
from pytest_provenai.toolserver.capture import ToolSession
from pytest_provenai.toolserver.server import build_server
from pytest_provenai.toolserver.tools import HotpotTools

__all__ = ["AGENT_CONTRACT", "MCPAnswer", "MCPAnswerer"]

AgentFn = Callable[[str, ToolSession], Any]

AGENT_CONTRACT = (
    "an MCP pipeline is called as fn(question: str, tools) — tools.call(name, **arguments) "
    "returns a ToolResult (text, data, is_error) — and returns the answer text or a mapping "
    "{'answer': str, 'citations': [source ids]}"
)


@dataclass
class MCPAnswer:
    case_id: str
    question: str
    session: ToolSession
    answer: str
    question_for_claims: str | None
    cites: list[str] = field(default_factory=list)
    seen: list[tuple[str, str]] = field(default_factory=list)
    trace: Trace | None = None
    driver: str = "harness"


class MCPAnswerer:
    """Answers a case through a recorded MCP tool session (see the module docstring). Not a
    :class:`~pytest_provenai.subject.subject.Subject`: it returns an :class:`MCPAnswer` (the
    session, answer, cited sources), not a Trace. ``subject`` writes the answer in the
    harness-driven mode; ``agent`` replaces the whole step."""

    def __init__(
        self,
        tools: HotpotTools,
        *,
        subject: Subject | None = None,
        agent: str | None = None,
        k: int | None = None,
    ) -> None:
        if (subject is None) == (agent is None):
            raise ValueError("give exactly one of subject or agent")
        self.tools = tools
        self.subject = subject
        self.agent_spec = agent
        self.agent: AgentFn | None = (
            import_callable(agent, "--provenai-mcp-pipeline") if agent else None
        )
        self.k = k

    @property
    def identity(self) -> dict[str, Any]:
        return {
            "driver": "agent" if self.agent else "harness",
            "agent": self.agent_spec,
            "tools": self.tools.identity(),
            "k": self.k,
        }

    def answer(self, case: Case) -> MCPAnswer:
        server = build_server(self.tools, session=case.id)
        with ToolSession(server.mcp, case.id) as session:
            if self.agent is not None:
                return self._agent_answer(case, session)
            return self._harness_answer(case, session)

    def _harness_answer(self, case: Case, session: ToolSession) -> MCPAnswer:
        assert self.subject is not None
        example = session.call("get_example", example_id=case.id)
        if example.is_error or not isinstance(example.data, Mapping):
            raise AttributionError(f"get_example failed for {case.id}: {example.text}")
        if self.k is not None:
            found = session.call("search_hotpotqa", query=case.question, k=self.k)
            hits = found.data.get("hits", []) if isinstance(found.data, Mapping) else []
            ids = [str(h["source_id"]) for h in hits]
        else:
            ids = [str(i) for i in example.data["source_ids"]]
        resources: list[Resource] = []
        seen: list[tuple[str, str]] = []
        by_resource: dict[str, str] = {}
        for source_id in ids:
            doc = session.call("get_evidence_document", source_id=source_id)
            if doc.is_error or not isinstance(doc.data, Mapping):
                continue
            rid = f"R{len(resources)}"
            resources.append(
                Resource(
                    id=rid,
                    title=doc.data["title"],
                    text=doc.data["text"],
                    sha256=doc.data["sha256"],
                )
            )
            from pytest_provenai._io import sha256_text

            seen.append((source_id, sha256_text(f"{doc.data['title']}\n{doc.data['text']}")))
            by_resource[rid] = source_id
        trace = self.subject.answer(case, resources)
        return MCPAnswer(
            case_id=case.id,
            question=case.question,
            session=session,
            answer=trace.raw_output,
            question_for_claims=case.question,
            cites=[by_resource[r] for r in trace.cited_ids if r in by_resource],
            seen=seen,
            trace=trace,
        )

    def _agent_answer(self, case: Case, session: ToolSession) -> MCPAnswer:
        assert self.agent is not None
        out = self.agent(case.question, session)
        reply = read_reply(out)
        if reply is None and isinstance(out, Mapping) and isinstance(out.get("answer"), str):
            raise AttributionError(
                f"--provenai-mcp-pipeline {self.agent_spec!r}: citations must be a list; "
                f"{AGENT_CONTRACT}"
            )
        if reply is None:
            raise AttributionError(
                f"--provenai-mcp-pipeline {self.agent_spec!r} returned {type(out).__name__}: "
                f"{AGENT_CONTRACT}"
            )
        text, cites = reply[0], reply[1] or []
        # the agent saw exactly what its calls returned
        seen = [(o.source or c.tool, o.sha256) for c in session.calls for o in c.outputs]
        return MCPAnswer(
            case_id=case.id,
            question=case.question,
            session=session,
            answer=text,
            question_for_claims=None,
            cites=cites,
            seen=seen,
            driver="agent",
        )

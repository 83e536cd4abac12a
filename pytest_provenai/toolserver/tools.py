"""The six HotpotQA tools of the ProvenAI MCP layer, as plain functions (no MCP here).

Over the cases of frozen HotpotQA fixture sets (and, when given, a retrieval index):

* ``get_example(example_id)`` — question, type, level and the example's source ids; never
  the gold answer;
* ``get_supporting_facts(example_id)`` — the gold supporting facts: for inspection only; a
  call while answering is recorded as gold access;
* ``search_hotpotqa(query, k)`` — the top-k passages: from the index when one is given
  (MiniLM + FAISS), else a deterministic BM25 over the fixture paragraphs;
* ``get_evidence_document(source_id)`` — title, text, sentences and sha256 of one passage
  (a fixture paragraph, or a passage an index search of this server returned);
* ``get_trace_session_status()`` / ``get_trace_graph()`` — the server's view of the current
  session (see :mod:`~pytest_provenai.toolserver.capture`).

A paragraph's source id is the retrieval corpus's passage id (``p`` + 16 hex digits of
sha256(title, text)), so index hits and fixture paragraphs share ids. Expected errors are
:class:`ToolInputError` with one line (``unknown source_id 'x'``).

:func:`evidence_outputs` turns a tool result into the evidence objects it returned.
"""

from __future__ import annotations

import json
import math
import re
from collections import Counter
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

from pytest_provenai._io import sha256_text
from pytest_provenai.frozen.model import Case
from pytest_provenai.frozen.traces import ToolOutput
from pytest_provenai.retrieval.corpus import passage_id

__all__ = [
    "ANSWERING_TOOLS",
    "FAMILIES",
    "GOLD_TOOLS",
    "INSPECTION_TOOLS",
    "TOOL_NAMES",
    "HotpotTools",
    "Paragraph",
    "ToolInputError",
    "evidence_outputs",
]

TOOL_NAMES = (
    "get_example",
    "get_supporting_facts",
    "search_hotpotqa",
    "get_evidence_document",
    "get_trace_session_status",
    "get_trace_graph",
)
#: Provenance family of each tool's outputs.
FAMILIES: dict[str, str] = {
    "get_example": "metadata",
    "get_supporting_facts": "metadata",
    "search_hotpotqa": "search",
    "get_evidence_document": "document",
}
GOLD_TOOLS = frozenset({"get_supporting_facts"})
INSPECTION_TOOLS = frozenset({"get_trace_session_status", "get_trace_graph"})
ANSWERING_TOOLS = frozenset(TOOL_NAMES) - GOLD_TOOLS - INSPECTION_TOOLS
MAX_K = 50


class ToolInputError(ValueError):
    """An expected tool error: the message is what the client sees."""


class IndexHit(Protocol):
    @property
    def rank(self) -> int: ...
    @property
    def passage_id(self) -> str: ...
    @property
    def title(self) -> str: ...
    @property
    def text(self) -> str: ...
    @property
    def sha256(self) -> str: ...
    @property
    def score(self) -> float: ...


class SearchIndex(Protocol):
    """What the tools need of a retrieval index (:class:`~retrieval.index.RetrievalIndex`)."""

    def search(self, question: str, k: int = 10) -> Sequence[IndexHit]: ...

    def identity(self) -> dict[str, Any]: ...


@dataclass(frozen=True)
class Paragraph:
    source_id: str
    title: str
    sentences: tuple[str, ...]
    text: str
    sha256: str

    def document_text(self) -> str:
        """What a tool shows of the passage as evidence: title line, then text."""
        return f"{self.title}\n{self.text}"

    def as_dict(self) -> dict[str, Any]:
        return {
            "source_id": self.source_id,
            "title": self.title,
            "text": self.text,
            "sentences": list(self.sentences),
            "sha256": self.sha256,
        }


_TOKEN = re.compile(r"[^\W_]+")


def _terms(text: str) -> list[str]:
    return [t.casefold() for t in _TOKEN.findall(text)]


class HotpotTools:
    """The tools over ``cases`` (any number of HotpotQA fixture sets) and an optional
    retrieval index."""

    def __init__(self, cases: Sequence[Case], index: SearchIndex | None = None) -> None:
        self.cases: dict[str, Case] = {}
        self.paragraphs: dict[str, Paragraph] = {}
        self.case_sources: dict[str, list[str]] = {}
        for case in cases:
            self.cases.setdefault(case.id, case)
            ids = []
            for s in case.sources:
                pid = passage_id(s.title, s.text)
                self.paragraphs.setdefault(
                    pid, Paragraph(pid, s.title, tuple(s.sentences), s.text, s.sha256)
                )
                ids.append(pid)
            self.case_sources.setdefault(case.id, ids)
        self.index = index
        # passages an index search returned: get_evidence_document serves them too
        self._seen: dict[str, Paragraph] = {}
        self._bm25: tuple[list[str], list[Counter[str]], dict[str, int], float] | None = None

    def identity(self) -> dict[str, Any]:
        listing = "".join(f"{p.source_id}\t{p.sha256}\n" for p in self.paragraphs.values())
        return {
            "cases": len(self.cases),
            "paragraphs": len(self.paragraphs),
            "paragraphs_sha256": sha256_text(listing),
            "index": self.index.identity() if self.index is not None else None,
        }

    # -- tools -------------------------------------------------------------------------
    def _case(self, example_id: str) -> Case:
        case = self.cases.get(example_id)
        if case is None:
            raise ToolInputError(f"unknown example_id {example_id!r}")
        return case

    def get_example(self, example_id: str) -> dict[str, Any]:
        case = self._case(example_id)
        return {
            "example_id": case.id,
            "question": case.question,
            "type": case.type,
            "level": case.level,
            "source_ids": list(self.case_sources[case.id]),
        }

    def get_supporting_facts(self, example_id: str) -> dict[str, Any]:
        case = self._case(example_id)
        by_title = {p.title: p for p in (self.paragraphs[i] for i in self.case_sources[case.id])}
        facts = []
        for f in case.supporting_facts:
            para = by_title.get(f.title)
            sentence = (
                para.sentences[f.sentence]
                if para is not None and f.sentence < len(para.sentences)
                else None
            )
            facts.append(
                {
                    "title": f.title,
                    "sentence_index": f.sentence,
                    "source_id": para.source_id if para else None,
                    "sentence": sentence,
                }
            )
        return {"example_id": case.id, "supporting_facts": facts}

    def get_evidence_document(self, source_id: str) -> dict[str, Any]:
        para = self.paragraphs.get(source_id) or self._seen.get(source_id)
        if para is None:
            raise ToolInputError(f"unknown source_id {source_id!r}")
        return para.as_dict()

    def search_hotpotqa(self, query: str, k: int = 5) -> dict[str, Any]:
        if not query.strip():
            raise ToolInputError("query must not be empty")
        if not 1 <= k <= MAX_K:
            raise ToolInputError(f"k must be between 1 and {MAX_K}, got {k}")
        if self.index is not None:
            hits = []
            for h in self.index.search(query, k):
                hits.append(
                    {
                        "rank": h.rank,
                        "source_id": h.passage_id,
                        "title": h.title,
                        "text": h.text,
                        "sha256": h.sha256,
                        "score": round(float(h.score), 6),
                    }
                )
                self._seen.setdefault(
                    h.passage_id, Paragraph(h.passage_id, h.title, (h.text,), h.text, h.sha256)
                )
            engine = "index"
        else:
            hits = self._bm25_search(query, k)
            engine = "bm25"
        return {"query": query, "k": k, "engine": engine, "hits": hits}

    # -- search without an index -------------------------------------------------------
    def _bm25_search(self, query: str, k: int) -> list[dict[str, Any]]:
        if self._bm25 is None:
            ids = sorted(self.paragraphs)
            docs = [Counter(_terms(self.paragraphs[i].document_text())) for i in ids]
            counts: Counter[str] = Counter()
            for d in docs:
                counts.update(d.keys())
            avg = sum(sum(d.values()) for d in docs) / max(1, len(docs))
            self._bm25 = (ids, docs, dict(counts), avg)
        ids, docs, df, avg = self._bm25
        n = len(ids)
        q = list(dict.fromkeys(_terms(query)))
        scored = []
        for pid, d in zip(ids, docs, strict=True):
            length = sum(d.values())
            score = 0.0
            for t in q:
                tf = d.get(t, 0)
                if not tf:
                    continue
                idf = math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5))
                score += idf * tf * 2.2 / (tf + 1.2 * (0.25 + 0.75 * length / avg))
            if score > 0:
                scored.append((round(score, 6), pid))
        scored.sort(key=lambda x: (-x[0], x[1]))
        out = []
        for rank, (score, pid) in enumerate(scored[:k]):
            p = self.paragraphs[pid]
            out.append(
                {
                    "rank": rank,
                    "source_id": pid,
                    "title": p.title,
                    "text": p.text,
                    "sha256": p.sha256,
                    "score": score,
                }
            )
        return out


def evidence_outputs(tool: str, result: Any) -> list[ToolOutput]:
    """The evidence objects a tool result carries (ProvenanceGuard: one per provenance-
    bearing sub-output): a document → one; search → one per hit; an example → its
    metadata; supporting facts → one per fact; inspection tools → none. Any other tool's
    result is one output without a source id (the evidence falls back to the tool name)."""
    if not isinstance(result, Mapping):
        text = result if isinstance(result, str) else json.dumps(result, sort_keys=True)
        return [ToolOutput(None, text, sha256_text(text))] if text.strip() else []
    if tool == "get_evidence_document":
        text = f"{result['title']}\n{result['text']}"
        return [ToolOutput(str(result["source_id"]), text, sha256_text(text))]
    if tool == "search_hotpotqa":
        outs = []
        for h in result.get("hits", []):
            text = f"{h['title']}\n{h['text']}"
            outs.append(ToolOutput(str(h["source_id"]), text, sha256_text(text)))
        return outs
    if tool == "get_example":
        text = (
            f"example_id: {result['example_id']}\nquestion: {result['question']}\n"
            f"type: {result['type']}\nlevel: {result['level']}"
        )
        return [ToolOutput(f"example:{result['example_id']}", text, sha256_text(text))]
    if tool == "get_supporting_facts":
        outs = []
        for j, f in enumerate(result.get("supporting_facts", [])):
            if f.get("sentence"):
                text = f"{f['title']}\n{f['sentence']}"
                outs.append(
                    ToolOutput(f"facts:{result['example_id']}:{j}", text, sha256_text(text))
                )
        return outs
    if tool in INSPECTION_TOOLS:
        return []
    text = json.dumps(result, sort_keys=True, ensure_ascii=False)
    return [ToolOutput(None, text, sha256_text(text))]

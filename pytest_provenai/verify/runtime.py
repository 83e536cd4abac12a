"""The attribution layer inside one pytest process: the verifier, built once, and the records.

:class:`AttributionRuntime` holds what the plugin's ``provenai_attribution`` and
``provenai_mcp`` fixtures use: the :class:`~pytest_provenai.attribution.record.Auditor`
(MiniLM encoder + the calibrated forest fitted once per process, the optional LM feature
and NLI folder, the repair budget) and the MCP subject over the run's HotpotQA cases. What a
case cost (seconds, tool calls) goes to ``note_costs(nodeid, costs)`` — the session hands it
on with the case's reports to the results JSON's ``attribution_costs`` — never into a record;
an MCP session's generator trace goes to ``note_trace`` (the report's per-case drill-down).
Captured trace graphs are written to ``--provenai-mcp-traces`` (one file per case).
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from pytest_provenai._io import atomic_write_json
from pytest_provenai.attribution import require_extra
from pytest_provenai.attribution.record import Auditor, probe_record, session_record, trace_record
from pytest_provenai.errors import AttributionError
from pytest_provenai.frozen.model import AnyCase, Case
from pytest_provenai.frozen.traces import ProbeCase, TraceCase
from pytest_provenai.options import AttributionSettings
from pytest_provenai.subject.subject import Subject
from pytest_provenai.subject.trace import Trace

__all__ = ["AttributionRuntime"]

SHIPPED_TABLE = Path(__file__).parent / "data" / "hotpotqa-features.json"
SHIPPED_LM_TABLE = Path(__file__).parent / "data" / "hotpotqa-features-lm.json"


@dataclass
class AttributionRuntime:
    settings: AttributionSettings
    subject: Callable[[], Subject]
    hotpot_cases: Callable[[], Sequence[Case]]
    note_costs: Callable[[str, dict[str, Any]], None]
    note_trace: Callable[[str, Trace], None] | None = None  # the report's drill-down
    backend: str = "transformers"
    model: str | None = None
    retrieval_k: int | None = None
    index: Path | None = None
    _auditor: Auditor | None = None
    _mcp: Any = None
    error: Exception | None = None

    def table(self) -> Path:
        if self.settings.table is not None:
            return self.settings.table
        return SHIPPED_LM_TABLE if self.settings.verify_lm else SHIPPED_TABLE

    def auditor(self) -> Auditor:
        """Built on first use (one per process); an error is remembered and raised again."""
        if self.error is not None:
            raise self.error
        if self._auditor is None:
            try:
                self._auditor = self._build()
            except Exception as exc:
                self.error = exc
                raise
        return self._auditor

    def _build(self) -> Auditor:
        require_extra("sklearn")
        from pytest_provenai.attribution.pipeline import FeatureSource, NLIJudge, Verifier
        from pytest_provenai.verify.checkers import ForestChecker, LMFeature, NLIFolder
        from pytest_provenai.verify.encoder import MiniLMEncoder
        from pytest_provenai.verify.forest import fit_calibrator

        table = self.table()
        if not table.is_file():
            raise AttributionError(
                f"{table}: no calibration table; write it with 'provenai verify derive"
                + (" --lm'" if self.settings.verify_lm else "'")
            )
        calibrator = fit_calibrator(table, use_lm=self.settings.verify_lm)
        extra: list[FeatureSource] = []
        if self.settings.verify_lm:
            from pytest_provenai.subject.backends import load_generator

            generator = load_generator(
                self.backend if self.backend in ("transformers", "mlx") else "transformers",
                self.model,
            )
            extra.append(LMFeature(generator))  # type: ignore[arg-type]
        nli: NLIJudge | None = None
        if self.settings.nli_model is not None:
            nli = NLIFolder(self.settings.nli_model)
        verifier = Verifier(
            MiniLMEncoder(),
            ForestChecker(calibrator, self.settings.threshold),
            nli=nli,
            extra=extra,
        )
        return Auditor(verifier, self.settings.repair_iterations)

    # -- records -----------------------------------------------------------------------
    def record(self, nodeid: str, case: AnyCase) -> dict[str, Any]:
        """The record of a frozen trace or conflation probe."""
        auditor = self.auditor()
        started = time.perf_counter()
        if isinstance(case, TraceCase):
            rec = trace_record(case, auditor)
        elif isinstance(case, ProbeCase):
            rec = probe_record(case, auditor)
        else:
            raise AttributionError(
                f"{case.id}: provenai_attribution takes mcp_trace and conflation_probe cases, "
                f"not {case.kind}; use provenai_mcp for HotpotQA cases"
            )
        self.note_costs(nodeid, {"seconds": round(time.perf_counter() - started, 4)})
        return rec

    def mcp_subject(self) -> Any:
        if self._mcp is None:
            require_extra("mcp")
            from pytest_provenai.toolserver.subject import MCPSubject
            from pytest_provenai.toolserver.tools import HotpotTools

            index = None
            if self.index is not None:
                from pytest_provenai.retrieval.index import open_index

                index = open_index(self.index)
            tools = HotpotTools(self.hotpot_cases(), index)
            if self.settings.mcp_pipeline:
                self._mcp = MCPSubject(tools, agent=self.settings.mcp_pipeline)
            else:
                self._mcp = MCPSubject(tools, subject=self.subject(), k=self.retrieval_k)
        return self._mcp

    def mcp_record(self, nodeid: str, case: AnyCase) -> dict[str, Any]:
        """Answer ``case`` through the MCP tools (every call recorded), verify and repair the
        answer; the trace graph goes to the traces folder."""
        if not isinstance(case, Case):
            raise AttributionError(
                f"{case.id}: provenai_mcp answers HotpotQA cases, not {case.kind}"
            )
        auditor = self.auditor()
        mcp = self.mcp_subject()
        started = time.perf_counter()
        answered = mcp.answer(case)
        answered_at = time.perf_counter()
        session = answered.session
        trace = answered.trace
        record, graph = session_record(
            case_id=case.id,
            question=case.question,
            fixture_set=case.fixture_set,
            answer=answered.answer,
            calls=session.calls,
            graph_for=lambda nodes: session.graph(nodes, meta={"tools": mcp.identity}),
            cites=answered.cites,
            seen=answered.seen,
            gold_access=session.gold_access,
            families=session.families,
            auditor=auditor,
            question_for_claims=answered.question_for_claims,
            model=trace.identity.model_key() if trace is not None else None,
            driver=answered.driver,
        )
        if trace is not None and self.note_trace is not None:
            self.note_trace(nodeid, trace)
        if self.settings.traces is not None:
            atomic_write_json(Path(self.settings.traces) / f"{case.id}.json", graph)
        self.note_costs(
            nodeid,
            {
                "seconds": round(time.perf_counter() - started, 4),
                "answer_seconds": round(answered_at - started, 4),
                "verify_seconds": round(time.perf_counter() - answered_at, 4),
                "generation_cached": bool(trace.cached) if trace is not None else None,
                "tool_calls": len(session.calls),
            },
        )
        return record

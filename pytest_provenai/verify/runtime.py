"""The attribution layer inside one pytest process: the verifier, built once, and the records.

:class:`AttributionRuntime` holds what the plugin's ``provenai_attribution`` and
``provenai_mcp`` fixtures use: the :class:`~pytest_provenai.attribution.record.Auditor`
(MiniLM encoder + the calibrated forest fitted once per process, the optional LM feature
and NLI folder, the repair budget) and the MCP subject over the run's HotpotQA cases. What a
case cost (seconds, tool calls) goes to ``note_costs(nodeid, costs)`` — the session hands it
on with the case's reports to the results JSON's ``attribution_costs`` — never into a record;
an MCP session's generator trace goes to ``note_trace`` (the report's per-case drill-down).
Captured trace graphs are written to ``--provenai-mcp-traces`` (one file per case).

With a run cache (``--provenai-cache``) every record is first looked up in the
:class:`~pytest_provenai.verify.cache.RecordCache`, keyed by the verifier's recipe and the
record's inputs; the verifier is built (MiniLM loaded, forest fitted) only on the first miss,
so a warm rerun loads and fits nothing. A case's costs say whether its record was cached.

With ``--provenai-verify-judge`` the verifier's support decisions come from an LLM judge
(:mod:`pytest_provenai.verify.judge`) instead of the forest, which is then neither fitted nor
consulted; MiniLM still routes claims and selects their premises. The judge's identity (not
its URL) enters the recipe; a record in which a judge call failed is returned but never
stored, so the next run asks the server again; a case's costs count its ``judge_calls``.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from pytest_provenai._io import atomic_write_json
from pytest_provenai.attribution import require_extra
from pytest_provenai.attribution.conversation import ConversationModel, read_conversation_model
from pytest_provenai.attribution.record import Auditor, probe_record, session_record, trace_record
from pytest_provenai.cache_layout import mark_store
from pytest_provenai.errors import AttributionError
from pytest_provenai.frozen.model import AnyCase, Case
from pytest_provenai.frozen.traces import ProbeCase, TraceCase
from pytest_provenai.options import AttributionSettings
from pytest_provenai.subject.subject import Subject
from pytest_provenai.subject.trace import Trace
from pytest_provenai.verify.cache import RecordCache, frozen_case_inputs, record_key
from pytest_provenai.verify.checkers import Scorer

if TYPE_CHECKING:  # the toolserver needs the mcp extra: imported when first used
    from pytest_provenai.toolserver.subject import MCPAnswer

__all__ = ["AttributionRuntime", "CaseAnswerer"]

SHIPPED_TABLE = Path(__file__).parent / "data" / "hotpotqa-features.json"
SHIPPED_CONVERSATION = Path(__file__).parent / "data" / "conversation.json"


def shipped_conversation() -> ConversationModel:
    """The conversation model the verify package ships (read on each call: once per
    verifier)."""
    return read_conversation_model(SHIPPED_CONVERSATION)


SHIPPED_LM_TABLE = Path(__file__).parent / "data" / "hotpotqa-features-lm.json"


class CaseAnswerer(Protocol):
    """What ``provenai_mcp`` needs of the MCP answerer
    (:class:`~pytest_provenai.toolserver.subject.MCPAnswerer`): an identity for the record
    cache, and a case answered through a recorded tool session."""

    @property
    def identity(self) -> dict[str, Any]: ...

    def answer(self, case: Case) -> MCPAnswer: ...


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
    cache: RecordCache | None = None
    _auditor: Auditor | None = None
    _mcp: CaseAnswerer | None = None
    _lm: Scorer | None = None
    _recipe: dict[str, Any] | None = None
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

    def _checked_table(self) -> Path:
        table = self.table()
        if not table.is_file():
            raise AttributionError(
                f"{table}: no calibration table; write it with 'provenai verify derive"
                + (" --lm'" if self.settings.verify_lm else "'")
            )
        return table

    def _lm_generator(self) -> Scorer:
        """The LM feature's generator (lazy: its weights load on the first score)."""
        if self._lm is None:
            from pytest_provenai.subject.backends import load_generator, local_backend

            backend = local_backend(self.backend)
            generator = load_generator(backend, self.model)
            if not isinstance(generator, Scorer):  # the local backends all encode prompts
                raise AttributionError(f"{backend}: the LM feature needs prompt encoding")
            self._lm = generator
        return self._lm

    def recipe(self) -> dict[str, Any]:
        """What the records depend on besides their inputs, without building the verifier
        (see :mod:`pytest_provenai.verify.cache`); computed once, errors remembered."""
        if self.error is not None:
            raise self.error
        if self._recipe is None:
            try:
                self._recipe = self._make_recipe()
            except Exception as exc:
                self.error = exc
                raise
        return self._recipe

    def _make_recipe(self) -> dict[str, Any]:
        from pytest_provenai.attribution.pipeline import PREMISE_BUDGET
        from pytest_provenai.retrieval.embed import model_identity
        from pytest_provenai.verify.cache import recipe
        from pytest_provenai.verify.encoder import ALIGN_TAU
        from pytest_provenai.verify.forest import FOREST_PARAMS

        nli = None
        if self.settings.nli_model is not None:
            from pytest_provenai._io import sha256_file
            from pytest_provenai.subject.backends.models import folder_identity

            folder = Path(self.settings.nli_model)
            name, weights = folder_identity(folder)
            cfg = folder / "config.json"
            config = sha256_file(cfg) if cfg.is_file() else None  # NLIFolder says what's wrong
            nli = {"name": name, "sha256": weights, "config_sha256": config}
        lm = self._lm_generator().identity.model_key() if self.settings.verify_lm else None
        judge = None
        if self.settings.judge_url is not None:
            from pytest_provenai.verify.judge import judge_identity

            judge = judge_identity(self.settings.judge_model or "", self.settings.judge_format)
        return recipe(
            table=self._checked_table(),
            use_lm=self.settings.verify_lm,
            forest_params=FOREST_PARAMS,
            threshold=self.settings.threshold,
            encoder={**model_identity().as_dict(), "align_tau": ALIGN_TAU},
            nli=nli,
            lm_model=lm,
            premise_budget=PREMISE_BUDGET,
            repair_iterations=self.settings.repair_iterations,
            judge=judge,
            conversation=SHIPPED_CONVERSATION,
        )

    def _build(self) -> Auditor:
        if self.settings.judge_url is not None:
            return self._build_judged()
        require_extra("sklearn")
        from pytest_provenai.subject.backends.libraries import prepare_torch_import

        prepare_torch_import()  # MiniLM is about to import torch (OMP_WAIT_POLICY)
        from pytest_provenai.attribution.pipeline import FeatureSource, NLIJudge, Verifier
        from pytest_provenai.verify.checkers import ForestChecker, LMFeature, NLIFolder
        from pytest_provenai.verify.encoder import MiniLMEncoder
        from pytest_provenai.verify.forest import fit_calibrator

        calibrator = fit_calibrator(self._checked_table(), use_lm=self.settings.verify_lm)
        extra: list[FeatureSource] = []
        if self.settings.verify_lm:
            extra.append(LMFeature(self._lm_generator()))
        nli: NLIJudge | None = None
        if self.settings.nli_model is not None:
            nli = NLIFolder(self.settings.nli_model)
        verifier = Verifier(
            MiniLMEncoder(),
            ForestChecker(calibrator, self.settings.threshold),
            nli=nli,
            extra=extra,
            conversation=shipped_conversation(),
        )
        return Auditor(verifier, self.settings.repair_iterations)

    def _build_judged(self) -> Auditor:
        """MiniLM for routing and premises, the LLM judge for support (no forest)."""
        from pytest_provenai.subject.backends.libraries import prepare_torch_import

        prepare_torch_import()  # MiniLM is about to import torch (OMP_WAIT_POLICY)
        from pytest_provenai.attribution.pipeline import NLIJudge, Verifier
        from pytest_provenai.verify.checkers import NLIFolder
        from pytest_provenai.verify.encoder import MiniLMEncoder
        from pytest_provenai.verify.judge import ForestNotConsulted, make_judge

        assert self.settings.judge_url is not None
        judge = make_judge(
            self.settings.judge_url,
            self.settings.judge_model or "",
            self.settings.judge_format,
            timeout=self.settings.judge_timeout,
        )
        nli: NLIJudge | None = None
        if self.settings.nli_model is not None:
            nli = NLIFolder(self.settings.nli_model)
        verifier = Verifier(
            MiniLMEncoder(),
            ForestNotConsulted(),
            nli=nli,
            judge=judge,
            conversation=shipped_conversation(),
        )
        return Auditor(verifier, self.settings.repair_iterations)

    def _judge_counts(self) -> tuple[int, int]:
        """(requests sent, claims failed) by this process's LLM judge so far."""
        judge = self._auditor.verifier.judge if self._auditor is not None else None
        calls, failures = getattr(judge, "calls", 0), getattr(judge, "failures", 0)
        return int(calls), int(failures)

    def _judge_costs(self, before: tuple[int, int]) -> dict[str, Any]:
        if self.settings.judge_url is None:
            return {}
        calls, failures = self._judge_counts()
        return {"judge_calls": calls - before[0], "judge_failures": failures - before[1]}

    # -- records -----------------------------------------------------------------------
    def _key(self, kind: str, inputs: Any) -> str | None:
        return record_key(self.recipe(), kind, inputs) if self.cache is not None else None

    def _cached(self, key: str | None) -> tuple[dict[str, Any], dict[str, Any] | None] | None:
        return self.cache.get(key) if self.cache is not None and key is not None else None

    def _store(
        self,
        key: str | None,
        record: dict[str, Any],
        graph: dict[str, Any] | None = None,
        *,
        keep: bool = True,
    ) -> tuple[dict[str, Any], dict[str, Any] | None]:
        """The record and graph as the cache holds them (plain JSON), stored under ``key``
        unless ``keep`` is false (a judge call failed): a computed record and a cached one are
        the same object tree."""
        try:
            plain = json.loads(json.dumps({"record": record, "graph": graph}, allow_nan=False))
        except (TypeError, ValueError):  # not plain JSON (e.g. NaN): computed, not cached
            return record, graph
        if self.cache is not None and key is not None and keep:
            self.cache.put(key, plain["record"], plain["graph"])
        return plain["record"], plain["graph"]

    def record(self, nodeid: str, case: AnyCase) -> dict[str, Any]:
        """The record of a frozen trace or conflation probe (from the cache when it has it)."""
        if not isinstance(case, (TraceCase, ProbeCase)):
            raise AttributionError(
                f"{case.id}: provenai_attribution takes mcp_trace and conflation_probe cases, "
                f"not {case.kind}; use provenai_mcp for HotpotQA cases"
            )
        started = time.perf_counter()
        key = self._key(case.kind, frozen_case_inputs(case))
        hit = self._cached(key)
        judged = self._judge_counts()
        if hit is not None:
            rec = hit[0]
        else:
            auditor = self.auditor()
            if isinstance(case, TraceCase):
                rec = trace_record(case, auditor)
            else:
                rec = probe_record(case, auditor)
            rec = self._store(key, rec, keep=self._judge_counts()[1] == judged[1])[0]
        self.note_costs(
            nodeid,
            {
                "seconds": round(time.perf_counter() - started, 4),
                "record_cached": hit is not None,
                **self._judge_costs(judged),
            },
        )
        return rec

    def mcp_subject(self) -> CaseAnswerer:
        """The MCP answerer over the run's HotpotQA cases (built once; needs the mcp extra)."""
        if self._mcp is None:
            require_extra("mcp")
            from pytest_provenai.toolserver.subject import MCPAnswerer
            from pytest_provenai.toolserver.tools import HotpotTools

            index = None
            if self.index is not None:
                from pytest_provenai.retrieval.index import open_index

                index = open_index(self.index)
            tools = HotpotTools(self.hotpot_cases(), index)
            if self.settings.mcp_pipeline:
                self._mcp = MCPAnswerer(tools, agent=self.settings.mcp_pipeline)
            else:
                self._mcp = MCPAnswerer(tools, subject=self.subject(), k=self.retrieval_k)
        return self._mcp

    def mcp_record(self, nodeid: str, case: AnyCase) -> dict[str, Any]:
        """Answer ``case`` through the MCP tools (every call recorded), verify and repair the
        answer; the trace graph goes to the traces folder."""
        if not isinstance(case, Case):
            raise AttributionError(
                f"{case.id}: provenai_mcp answers HotpotQA cases, not {case.kind}"
            )
        mcp = self.mcp_subject()
        started = time.perf_counter()
        answered = mcp.answer(case)
        answered_at = time.perf_counter()
        session = answered.session
        trace = answered.trace
        model = trace.identity.model_key() if trace is not None else None
        inputs = {
            "case_id": case.id,
            "question": case.question,
            "fixture_set": case.fixture_set,
            "session": session.session,
            "answer": answered.answer,
            "calls": [
                {**asdict(c.call), "result_sha256": c.result_sha256} for c in session.captured
            ],
            "cites": list(answered.cites),
            "seen": [list(s) for s in answered.seen],
            "families": dict(session.families),
            "descriptions": dict(session.descriptions),
            "question_for_claims": answered.question_for_claims,
            "model": model,
            "driver": answered.driver,
            "tools": mcp.identity,
        }
        key = self._key("mcp_session", inputs)
        hit = self._cached(key)
        judged = self._judge_counts()
        if hit is not None and hit[1] is not None:
            record, graph = hit[0], hit[1]
        else:
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
                descriptions=session.descriptions,
                auditor=self.auditor(),
                question_for_claims=answered.question_for_claims,
                model=model,
                driver=answered.driver,
            )
            stored_graph: dict[str, Any] | None
            record, stored_graph = self._store(
                key, record, graph, keep=self._judge_counts()[1] == judged[1]
            )
            assert stored_graph is not None
            graph = stored_graph
        if trace is not None and self.note_trace is not None:
            self.note_trace(nodeid, trace)
        if self.settings.traces is not None:
            mark_store(Path(self.settings.traces))
            atomic_write_json(Path(self.settings.traces) / f"{case.id}.json", graph)
        self.note_costs(
            nodeid,
            {
                "seconds": round(time.perf_counter() - started, 4),
                "answer_seconds": round(answered_at - started, 4),
                "verify_seconds": round(time.perf_counter() - answered_at, 4),
                "generation_cached": bool(trace.cached) if trace is not None else None,
                "record_cached": hit is not None and hit[1] is not None,
                "tool_calls": len(session.calls),
                **self._judge_costs(judged),
            },
        )
        return record

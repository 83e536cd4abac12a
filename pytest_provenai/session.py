"""Run state of one pytest process, kept in ``config.stash`` (see plugin.py), and its jobs.

:class:`ProvenaiSession` composes the parts, each in its own module:

* the cases (``selection.py``: the configured sets, sampling, each test's params);
* the subject under audit, built here once per process (one model per xdist worker);
* the plan (``plan.py``): every gate and every case item of a gated test, built at the end
  of collection, so a gate knows its expected population before any case runs;
* the transport (``transport.py``): what a test produced waits in the outbox and travels
  with its reports; the controller — or the only process, without xdist — absorbs it into
  :class:`~pytest_provenai.transport.Received`. A case that never reported a record leaves a
  placeholder, so its gates fail closed;
* the layer runners (``layers.py``: influence, attribution);
* the results, built once at the end (:meth:`ProvenaiSession.finish`), into a
  :class:`~pytest_provenai.report.results.RunResults` that the results JSON, the terminal
  summary and the HTML report all render.
"""

from __future__ import annotations

import subprocess
import time
import uuid
from collections import defaultdict
from dataclasses import dataclass, field, replace
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_provenai import cache_layout
from pytest_provenai import gates as gates_mod
from pytest_provenai._io import MAX_RECORD_TEXT, atomic_write_json, json_safe
from pytest_provenai.layers import attribution_runtime, measure_influence
from pytest_provenai.options import Settings, worker_device
from pytest_provenai.plan import Plan
from pytest_provenai.progress import LiveStatus
from pytest_provenai.report.results import RunResults, build_results, order_records
from pytest_provenai.selection import CaseParam, CaseSelection
from pytest_provenai.sharding import ShardSection, fingerprint
from pytest_provenai.subject.subject import Subject
from pytest_provenai.subject.trace import Trace
from pytest_provenai.transport import Outbox, Received, ReportPayload, WorkerPayload

if TYPE_CHECKING:  # the runtime imports the attribution layer; built on first use only
    from pytest_provenai.verify.runtime import AttributionRuntime

__all__ = ["Plan", "ProvenaiSession", "git_revision", "trace_summary"]


def _now() -> str:
    return datetime.now(timezone.utc).isoformat(timespec="seconds")


def git_revision(folder: Path) -> str | None:
    """The checkout's commit (with ``+dirty`` when it has uncommitted changes), or None
    outside a git checkout or without git."""
    try:
        rev = subprocess.run(
            ["git", "rev-parse", "HEAD"], cwd=folder, capture_output=True, text=True, timeout=5
        )
        if rev.returncode != 0:
            return None
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no"],
            cwd=folder,
            capture_output=True,
            text=True,
            timeout=5,
        )
        return rev.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")
    except (OSError, subprocess.SubprocessError):
        return None


def trace_summary(trace: Trace) -> dict[str, Any]:
    """What the report shows of a :class:`Trace` beside its record: the raw output, the
    parsed answer and citations, the resources shown (id, title, sha256; not their text) and,
    in index mode, the retrieval hits. JSON-safe; long texts cut as in records."""
    summary = {
        "case_id": trace.case_id,
        "raw_output": trace.raw_output,
        "answer": trace.answer,
        "cited_ids": list(trace.cited_ids),
        "invalid_citations": list(trace.invalid_citations),
        "repairs": list(trace.repairs),
        "resources": [{"id": r.id, "title": r.title, "sha256": r.sha256} for r in trace.resources],
        "cached": trace.cached,
        "seconds": round(trace.seconds, 4),
    }
    clean, _ = json_safe(summary, max_chars=MAX_RECORD_TEXT)
    return dict(clean)


def build_subject(settings: Settings, worker_id: str | None) -> Subject:
    """The subject under audit for this process (``worker_id``'s device and served URL), in
    index mode wrapped so the harness retrieves its resources."""
    from pytest_provenai.subject.subject import make_subject

    subject: Subject = make_subject(
        backend=settings.backend,
        model=settings.model,
        pipeline=settings.pipeline,
        device=worker_device(settings, worker_id),
        max_new_tokens=settings.max_new_tokens,
        cache_root=settings.cache / cache_layout.GENERATIONS if settings.cache else None,
        served=(
            settings.served.options(settings.served.base_url_for(worker_id), settings.model)
            if settings.served
            else None
        ),
    )
    if settings.retrieval == "index":  # the harness retrieves R0..R{k-1}
        from pytest_provenai.retrieval.index import open_index
        from pytest_provenai.retrieval.subject import RetrievingSubject

        assert settings.index is not None  # parse_settings checks it
        subject = RetrievingSubject(subject, open_index(settings.index), settings.k)
    return subject


@dataclass
class ProvenaiSession:
    settings: Settings
    worker_id: str | None = None
    rootdir: Path | None = None
    # Sets the ini names beside the run's (see selection.CaseSelection).
    ini_sets: tuple[Path, ...] = ()
    plan: Plan = field(default_factory=Plan)
    models: dict[str, dict[str, Any]] = field(default_factory=dict)  # worker id -> identity
    received: Received = field(default_factory=Received)  # the controller's (or only) view
    live: LiveStatus | None = None  # what this process runs now, for the progress line
    run_id: str = field(default_factory=lambda: uuid.uuid4().hex)
    started: float = field(default_factory=time.time)
    started_at: str = field(default_factory=_now)
    load_seconds: float = 0.0
    subject_error: Exception | None = None
    _subject: Subject | None = None
    _attribution: AttributionRuntime | None = None  # built on first use
    cases: CaseSelection = field(init=False)
    outbox: Outbox = field(init=False)

    def __post_init__(self) -> None:
        self.cases = CaseSelection(self.settings, self.ini_sets)
        self.outbox = Outbox(self.worker_id)

    # -- cases (selection.py) --------------------------------------------------------------
    def params_for(self, kinds: tuple[str, ...]) -> list[CaseParam]:
        """The params of a test that takes cases of ``kinds`` (see
        :meth:`CaseSelection.params_for`); the sets that failed to load join the plan."""
        params = self.cases.params_for(kinds)
        self.plan.add_errors(self.cases.fixture_errors)
        return params

    def golden_scope(self) -> tuple[frozenset[str], tuple[str, ...]]:
        return self.cases.golden_scope()

    # -- subject ---------------------------------------------------------------------------
    def subject(self) -> Subject:
        """The subject under audit, built once per process (one model per xdist worker)."""
        if self.subject_error is not None:
            raise self.subject_error
        if self._subject is None:
            from pytest_provenai.subject.backends.libraries import prepare_torch_import

            prepare_torch_import()  # an audit is about to load a model (OMP_WAIT_POLICY)
            start = time.perf_counter()
            try:
                self._subject = build_subject(self.settings, self.worker_id)
            except Exception as exc:
                self.subject_error = exc
                raise
            self.load_seconds = time.perf_counter() - start
            self.models[self.worker_id or "main"] = self._subject.identity.as_dict()
        return self._subject

    # -- during the run (every process) ----------------------------------------------------
    def plan_item(
        self, nodeid: str, test: str, case_id: str | None, specs: list[gates_mod.GateSpec]
    ) -> None:
        """At the end of collection, for every selected item of a gated test."""
        self.plan.plan_item(nodeid, test, case_id, specs)

    def add_record(
        self, nodeid: str, test: str, record: dict[str, Any], trace: Trace | None = None
    ) -> dict[str, Any]:
        """Take a test's verdict record and return the record as it is kept: JSON-safe (lone
        surrogates replaced, NaN/infinity as None, any text over MAX_RECORD_TEXT characters
        cut), each change listed in ``record["sanitized"]``. ``trace`` (what the subject
        produced) goes to the results JSON's ``traces`` for the report, never into the
        record."""
        if not isinstance(record, dict):
            raise TypeError(f"a verdict record is a dict, got {type(record).__name__}")
        if trace is not None:
            self.note_trace(nodeid, trace)
        clean, notes = json_safe(record, max_chars=MAX_RECORD_TEXT)
        if notes:
            clean["sanitized"] = notes
        device = self._subject.identity.device if self._subject is not None else None
        self.outbox.record(nodeid, test, clean, device)
        return dict(clean)

    def note_trace(self, nodeid: str, trace: Trace) -> None:
        """Keep what the subject produced for ``nodeid``'s case (see :func:`trace_summary`)."""
        self.outbox.box(nodeid).trace = trace_summary(trace)

    def influence(self, nodeid: str, case: Any, trace: Trace) -> dict[str, Any]:
        """The influence layer of ``trace``'s record under ``--provenai-ablation``; what it
        cost goes to the results JSON (``influence_costs``), never into the record."""
        self.note_trace(nodeid, trace)
        box = self.outbox.box(nodeid)

        def note_costs(costs: dict[str, Any]) -> None:
            box.influence_costs = costs

        return measure_influence(self.subject, case, trace, self.settings, self.live, note_costs)

    def attribution(self) -> AttributionRuntime:
        """The attribution runtime: one verifier per process. What a case cost goes out with
        its reports (``attribution_costs`` in the results JSON), never into a record."""
        if self._attribution is None:

            def note_costs(nodeid: str, costs: dict[str, Any]) -> None:
                self.outbox.box(nodeid).attribution_costs = costs

            self._attribution = attribution_runtime(
                self.settings, self.subject, self.cases.hotpot_cases, note_costs, self.note_trace
            )
        return self._attribution

    def report_payload(self, nodeid: str) -> dict[str, Any]:
        """The JSON form of what goes out with a report of ``nodeid`` (``{}``: nothing);
        see :meth:`Outbox.payload`."""
        payload = self.outbox.payload(
            nodeid, plan=self.plan, models=self.models, subject=self._subject
        )
        return payload.to_json()

    def worker_payload(self) -> str:
        """Sent through ``config.workeroutput`` when a worker ends: its plan, models and how
        many times it loaded model weights."""
        return self.outbox.worker_payload(self.plan, self.models).to_json()

    # -- absorbing (the controller, or the only process) -----------------------------------
    def absorb_report(
        self, nodeid: str, *, failed: bool, skipped: bool, duration: float, payload: Any
    ) -> None:
        """Absorb a report of ``nodeid`` and the payload it carries (its JSON form)."""
        shipped = ReportPayload.from_json(payload)
        if shipped is not None:
            if shipped.plan is not None:
                self.plan.update(shipped.plan)
            self.models.update(shipped.models or {})
        self.received.absorb(
            nodeid, failed=failed, skipped=skipped, duration=duration, payload=shipped
        )

    def merge(self, payload: str) -> None:
        """Merge a worker's :class:`WorkerPayload` (its JSON form), sent at its end."""
        worker = WorkerPayload.from_json(payload)
        self.plan.update(worker.plan)
        self.models.update(worker.models)
        self.received.model_loads.update(worker.loads)

    # -- end of session --------------------------------------------------------------------
    def finish(self, golden_unused: list[str] | None = None) -> RunResults:
        """Evaluate the gates over every planned case and build the run's results (once).
        Under ``--provenai-shard`` the gates are provisional and the results carry the
        shard section (``golden_unused``: the golden files the golden bookkeeping found
        unused, for ``provenai merge`` to report)."""
        got = self.received
        records: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for test, recs in got.records.items():
            records[test].extend(recs)
        for test, holes in got.placeholders(self.plan).items():
            records[test].extend(holes)
        ordered = order_records(records)
        gate_results = [
            gates_mod.evaluate(spec, ordered.get(spec.test, []), seed=self.settings.seed)
            for _, spec in sorted(self.plan.gates.items())
        ]
        shard = self.shard_section(golden_unused or [])
        if shard is not None:
            gate_results = [replace(g, provisional=True) for g in gate_results]
        return build_results(
            run={
                "id": self.run_id,
                "started": self.started_at,
                "finished": _now(),
                "git_revision": git_revision(self.rootdir) if self.rootdir else None,
            },
            models=self.models,
            options=self.settings.for_results(),
            records=ordered,
            gates=gate_results,
            fixture_errors=self.plan.fixture_errors,
            produced_by=got.produced_by,
            influence_costs=got.influence_costs,
            attribution_costs=got.attribution_costs,
            timings={
                "wall_seconds": round(time.time() - self.started, 3),
                "per_test_seconds": {k: round(v, 4) for k, v in sorted(got.timings.items())},
            },
            cache=got.cache_summary(),
            seed=self.settings.seed,
            traces=got.traces,
            shard=shard,
        )

    def shard_section(self, golden_unused: list[str]) -> ShardSection | None:
        """Under ``--provenai-shard``: the shard's section of its results (see
        :class:`~pytest_provenai.sharding.ShardSection`); None otherwise."""
        spec = self.settings.shard
        if spec is None:
            return None
        whole = self.plan.whole if self.plan.whole is not None else self.plan
        return ShardSection(
            spec=spec,
            fingerprint=fingerprint(
                self.settings.for_results(), self.cases.set_digests(), self.models.values()
            ),
            cases=sorted(set(self.plan.keys.values())),
            case_keys=dict(whole.keys),
            gates=[g.as_dict() for _, g in sorted(whole.gates.items())],
            expected=dict(whole.expected),
            fixture_errors=list(self.plan.fixture_errors),
            golden_unused=golden_unused,
        )

    def audited(self) -> bool:
        """True when this run produced anything to report (records, gates, fixture errors);
        always for a shard (one with no case of its own still reports its share: none)."""
        return bool(
            self.received.records
            or self.plan.gates
            or self.plan.fixture_errors
            or self.settings.shard is not None
        )

    def write_results(self, results: RunResults) -> None:
        if self.settings.results is not None and self.audited():
            atomic_write_json(self.settings.results, results.to_json())

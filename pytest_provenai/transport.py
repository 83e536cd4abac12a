"""Worker → controller transport: what a test produced travels with its reports.

What a test produced in a process (its records, which worker and device produced them, what
its ablations or attribution cost, the trace summary the report shows) waits in that
process's :class:`Outbox` and leaves as a :class:`ReportPayload` attached to each of the
test's reports as ``report.provenai`` (its JSON form: pytest serialises extra report
attributes; pytest-xdist ships them to the controller as soon as the phase ends). The
payload also carries, once per process, the plan; the model identities whenever they
changed; the model calls and cache hits since the last report; and the process's weight
loads whenever they changed. The controller — or the only process, without xdist — reads it
back (:meth:`ReportPayload.from_json`) and keeps the run in :class:`Received`. A worker that
dies later therefore loses nothing already reported. At its end each worker also sends a
:class:`WorkerPayload` (plan, models, loads) through ``config.workeroutput``.
"""

from __future__ import annotations

import json
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pytest

from pytest_provenai.plan import Plan
from pytest_provenai.subject.subject import Subject

__all__ = [
    "GATE_ATTR",
    "PAYLOAD_ATTR",
    "WORKEROUTPUT_KEY",
    "Outbox",
    "Received",
    "ReportPayload",
    "ReportSink",
    "ShippedRecord",
    "WorkerPayload",
    "ship",
]

PAYLOAD_ATTR = "provenai"  # report.provenai: a ReportPayload's JSON form
GATE_ATTR = "provenai_gate"  # set on a gate's own reports (finish.py), which carry no payload
WORKEROUTPUT_KEY = "provenai"  # config.workeroutput["provenai"]: a WorkerPayload's JSON form


@dataclass(frozen=True)
class ShippedRecord:
    """A verdict record of test function ``test`` (made JSON-safe by the session)."""

    test: str
    record: dict[str, Any]


@dataclass
class ReportPayload:
    """What rides on one report (module docstring). ``None`` is "not sent with this report"."""

    records: list[ShippedRecord] = field(default_factory=list)
    produced_by: dict[str, Any] | None = None  # {"worker", "device"}
    trace: dict[str, Any] | None = None  # session.trace_summary of the case's trace
    influence_costs: dict[str, Any] | None = None
    attribution_costs: dict[str, Any] | None = None
    models: dict[str, dict[str, Any]] | None = None  # worker id -> model identity
    plan: Plan | None = None
    model_calls: int | None = None  # since the last report; with cache_hits
    cache_hits: int | None = None
    model_loads: dict[str, int] | None = None  # worker id -> weight loads, when changed

    def to_json(self) -> dict[str, Any]:
        """The JSON form (only what is sent: an empty payload is ``{}``)."""
        out: dict[str, Any] = {}
        if self.records:
            out["records"] = [{"test": r.test, "record": r.record} for r in self.records]
        for name in ("produced_by", "trace", "influence_costs", "attribution_costs", "models"):
            value = getattr(self, name)
            if value is not None:
                out[name] = value
        if self.plan is not None:
            out["plan"] = self.plan.as_dict()
        if self.model_calls is not None:
            out["model_calls"], out["cache_hits"] = self.model_calls, self.cache_hits or 0
        if self.model_loads is not None:
            out["model_loads"] = self.model_loads
        return out

    @classmethod
    def from_json(cls, data: Any) -> ReportPayload | None:
        """Read back what :meth:`to_json` wrote; None for a report that carries none."""
        if not isinstance(data, dict):
            return None
        calls = data.get("model_calls")
        return cls(
            records=[ShippedRecord(r["test"], r["record"]) for r in data.get("records", [])],
            produced_by=data.get("produced_by"),
            trace=data.get("trace"),
            influence_costs=data.get("influence_costs"),
            attribution_costs=data.get("attribution_costs"),
            models=data.get("models"),
            plan=Plan.from_dict(data["plan"]) if "plan" in data else None,
            model_calls=int(calls) if calls is not None else None,
            cache_hits=int(data["cache_hits"]) if calls is not None else None,
            model_loads=data.get("model_loads"),
        )


@dataclass
class WorkerPayload:
    """What a worker sends through ``config.workeroutput`` when it ends: its plan, models
    and how many times it loaded model weights."""

    plan: Plan
    models: dict[str, dict[str, Any]]
    loads: dict[str, int]

    def to_json(self) -> str:
        return json.dumps({"plan": self.plan.as_dict(), "models": self.models, "loads": self.loads})

    @classmethod
    def from_json(cls, text: str) -> WorkerPayload:
        data = json.loads(text)
        return cls(Plan.from_dict(data["plan"]), data["models"], data.get("loads", {}))


class Outbox:
    """What the tests of this process produced, waiting for their next report."""

    def __init__(self, worker_id: str | None) -> None:
        self.worker = worker_id or "main"
        self._boxes: dict[str, ReportPayload] = {}
        self._plan_sent = False
        self._models_sent = 0
        self._seen = (0, 0)  # the subject's model calls and cache hits at the last report
        self.loads_sent = 0

    def box(self, nodeid: str) -> ReportPayload:
        return self._boxes.setdefault(nodeid, ReportPayload())

    def record(self, nodeid: str, test: str, record: dict[str, Any], device: str | None) -> None:
        box = self.box(nodeid)
        box.records.append(ShippedRecord(test, record))
        box.produced_by = {"worker": self.worker, "device": device}

    def payload(
        self, nodeid: str, *, plan: Plan, models: dict[str, dict[str, Any]], subject: Subject | None
    ) -> ReportPayload:
        """What goes out with a report of ``nodeid``: what the test produced since its last
        report, the models loaded since, and (once per process) the plan; the model calls it
        made and the generations it read from the cache since its last report, when any; and
        whenever it changed, how many times this process loaded model weights."""
        payload = self._boxes.pop(nodeid, None) or ReportPayload()
        if len(models) != self._models_sent:
            payload.models = dict(models)
            self._models_sent = len(models)
        if not self._plan_sent:
            payload.plan = plan
            self._plan_sent = True
        seen = (subject.model_calls, subject.cache_hits) if subject is not None else (0, 0)
        calls, hits = seen[0] - self._seen[0], seen[1] - self._seen[1]
        if calls or hits:
            payload.model_calls, payload.cache_hits = calls, hits
        self._seen = seen
        loads = subject.model_loads if subject is not None else 0
        if loads != self.loads_sent:
            payload.model_loads = {self.worker: loads}
            self.loads_sent = loads
        return payload

    def worker_payload(self, plan: Plan, models: dict[str, dict[str, Any]]) -> WorkerPayload:
        loads = {self.worker: self.loads_sent} if self.loads_sent else {}
        return WorkerPayload(plan, models, loads)


@dataclass
class Received:
    """The run as the controller (or the only process) absorbed it from the reports; the
    plan and model identities are merged into the session's own."""

    records: dict[str, list[dict[str, Any]]] = field(default_factory=lambda: defaultdict(list))
    recorded: set[str] = field(default_factory=set)
    failed: set[str] = field(default_factory=set)
    skipped: set[str] = field(default_factory=set)
    reported: set[str] = field(default_factory=set)
    timings: dict[str, float] = field(default_factory=lambda: defaultdict(float))
    produced_by: dict[str, dict[str, Any]] = field(default_factory=dict)
    influence_costs: dict[str, dict[str, Any]] = field(default_factory=dict)
    attribution_costs: dict[str, dict[str, Any]] = field(default_factory=dict)
    traces: dict[str, dict[str, Any]] = field(default_factory=dict)
    model_calls: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    cache_hits: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    model_loads: dict[str, int] = field(default_factory=dict)

    def absorb(
        self,
        nodeid: str,
        *,
        failed: bool,
        skipped: bool,
        duration: float,
        payload: ReportPayload | None,
    ) -> None:
        self.reported.add(nodeid)
        self.timings[nodeid] += duration
        if failed:
            self.failed.add(nodeid)
        if skipped:
            self.skipped.add(nodeid)
        if payload is None:
            return
        for item in payload.records:
            self.records[item.test].append(item.record)
            self.recorded.add(nodeid)
        if payload.produced_by is not None:
            self.produced_by[nodeid] = payload.produced_by
        if payload.influence_costs is not None:
            self.influence_costs[nodeid] = payload.influence_costs
        if payload.attribution_costs is not None:
            self.attribution_costs[nodeid] = payload.attribution_costs
        if payload.trace is not None:
            self.traces[nodeid] = payload.trace
        if payload.model_calls is not None:
            self.model_calls[nodeid] += payload.model_calls
            self.cache_hits[nodeid] += payload.cache_hits or 0
        self.model_loads.update(payload.model_loads or {})

    def placeholders(self, plan: Plan) -> dict[str, list[dict[str, Any]]]:
        """Every planned case item that reported no record and was not skipped becomes a
        ``{"case_id", "missing": reason}`` placeholder: its gates fail closed."""
        out: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for nodeid, (test, case_id) in sorted(plan.expected.items()):
            if nodeid in self.recorded or nodeid in self.skipped:
                continue
            if nodeid in self.reported:
                reason = "no record (test errored or failed before recording)"
            else:
                reason = "no record (never reported: its worker crashed or the run stopped)"
            out[test].append({"case_id": case_id, "missing": reason})
        return out

    def cache_summary(self) -> dict[str, int]:
        """How much of the run the caches answered: of the recorded case items that needed
        the model (made a model call or read a generation from the cache), how many made no
        model call; model calls and weight loads in all processes; of the attribution
        records, how many came from the attribution cache (no verification run)."""
        cases = [n for n in self.model_calls if n in self.recorded]
        attributed = [c for n, c in self.attribution_costs.items() if n in self.recorded]
        return {
            "model_cases": len(cases),
            "model_cases_from_cache": sum(1 for n in cases if self.model_calls[n] == 0),
            "model_calls": sum(self.model_calls.values()),
            "model_loads": sum(self.model_loads.values()),
            "attribution_records": len(attributed),
            "attribution_records_from_cache": sum(1 for c in attributed if c.get("record_cached")),
        }


def ship(report: pytest.TestReport, payload: dict[str, Any]) -> None:
    """Attach a payload's JSON form to ``report`` (nothing when it is empty)."""
    if payload:
        setattr(report, PAYLOAD_ATTR, payload)


class ReportSink:
    """Absorbs what each test produced from its reports — on the xdist controller (from any
    worker, as each phase ends) or in the only process; workers only send. A plugin object
    because ``pytest_runtest_logreport`` is not given the config. ``absorb`` is the
    session's ``absorb_report``."""

    def __init__(self, absorb: Callable[..., None]) -> None:
        self.absorb = absorb

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if getattr(report, GATE_ATTR, False):
            return  # a gate's own outcome (finish.py), not a test of the run
        self.absorb(
            report.nodeid,
            failed=report.failed,
            skipped=report.skipped,
            duration=float(getattr(report, "duration", 0.0) or 0.0),
            payload=getattr(report, PAYLOAD_ATTR, None),
        )

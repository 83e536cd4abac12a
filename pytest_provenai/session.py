"""Run state of one pytest process: settings, cases, the subject, the plan, records, results.

Kept in ``config.stash`` (see plugin.py); the hooks there only delegate here.

* **The plan** (:class:`Plan`) is what the run must produce: every gate (test, marker,
  metric, bound) and every selected case item of a gated test. It is built at the end of
  collection, so a gate knows its expected population before any case runs.
* **Records travel with their test's reports.** What a test produced (its records, which
  worker and device produced them, what its ablations cost) is attached to each of its
  reports as ``report.provenai`` (pytest serialises extra report attributes; pytest-xdist
  ships them to the controller as soon as the phase ends). The controller — or the only
  process, without xdist — absorbs them in ``pytest_runtest_logreport``. A worker that dies
  later therefore loses nothing already reported; a case that never reported a record leaves
  a placeholder, so its gates fail closed. Each worker also sends its plan with its first
  reports and in ``config.workeroutput`` at its end.
* **The results** are built once at the end (:meth:`ProvenaiSession.finish`), into a
  :class:`~pytest_provenai.report.results.RunResults` that the results JSON, the terminal
  summary and the HTML report all render.
"""

from __future__ import annotations

import json
import subprocess
import time
import uuid
from collections import Counter, defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import datetime, timezone
from pathlib import Path
from typing import TYPE_CHECKING, Any

from pytest_provenai import cache_layout
from pytest_provenai import gates as gates_mod
from pytest_provenai._io import MAX_RECORD_TEXT, atomic_write_json, json_safe
from pytest_provenai.errors import FixtureError
from pytest_provenai.frozen.model import AnyCase
from pytest_provenai.options import Settings, sample_indices, worker_device
from pytest_provenai.progress import LiveStatus
from pytest_provenai.report.results import RunResults, build_results
from pytest_provenai.subject.subject import Subject
from pytest_provenai.subject.trace import Trace

if TYPE_CHECKING:  # the runtime imports the attribution layer; built on first use only
    from pytest_provenai.verify.runtime import AttributionRuntime


@dataclass
class CaseParam:
    """What a parametrised test receives: a case, or the error that kept its set from
    loading (the ``provenai_case`` fixture raises it at setup, so the other sets still run)."""

    id: str
    case: AnyCase | None = None
    error: FixtureError | None = None
    kind: str | None = None  # the case's kind; for an error, its set's declared kind or None


@dataclass
class Plan:
    """What the run must produce: the gates, and the case items of gated tests
    (``nodeid -> (test, case id)``), plus the fixture sets that failed to load."""

    gates: dict[tuple[str, str, str], gates_mod.GateSpec] = field(default_factory=dict)
    expected: dict[str, tuple[str, str]] = field(default_factory=dict)
    fixture_errors: list[str] = field(default_factory=list)
    cases: set[str] = field(default_factory=set)  # every selected case item (progress total)

    def add_gates(self, specs: list[gates_mod.GateSpec]) -> None:
        for s in specs:
            self.gates[(s.test, s.marker, s.metric)] = s

    def as_dict(self) -> dict[str, Any]:
        return {
            "gates": [s.as_dict() for s in self.gates.values()],
            "expected": {n: list(v) for n, v in self.expected.items()},
            "fixture_errors": self.fixture_errors,
            "cases": sorted(self.cases),
        }

    def merge(self, data: dict[str, Any]) -> None:
        """Merge a worker's plan (every worker collects the same items: idempotent)."""
        self.add_gates([gates_mod.GateSpec.from_dict(g) for g in data["gates"]])
        for nodeid, (test, case_id) in data["expected"].items():
            self.expected[nodeid] = (str(test), str(case_id))
        for e in data["fixture_errors"]:
            if e not in self.fixture_errors:
                self.fixture_errors.append(e)
        self.cases.update(str(n) for n in data.get("cases", []))


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


@dataclass
class ConfiguredSet:
    """A fixture set the run uses (``in_run``) or only the ini names: its cases, or the error
    that kept it from loading."""

    folder: Path
    in_run: bool
    cases: tuple[AnyCase, ...] = ()
    error: FixtureError | None = None


def load_configured_sets(run: Sequence[Path], ini: Sequence[Path]) -> list[ConfiguredSet]:
    """Load the run's sets, then the ini's others, each folder once. One bad set does not stop
    the others; two sets of one name that hold one case id would give both cases one name,
    so the later of them fails as if it had not loaded."""
    from pytest_provenai.frozen.load import load_fixture_set

    sets: list[ConfiguredSet] = []
    seen: set[Path] = set()
    for folder, in_run in [*((f, True) for f in run), *((f, False) for f in ini)]:
        if folder.resolve() in seen:
            continue
        seen.add(folder.resolve())
        try:
            sets.append(ConfiguredSet(folder, in_run, load_fixture_set(folder).cases))
        except FixtureError as err:
            sets.append(ConfiguredSet(folder, in_run, error=err))
    owner: dict[tuple[str, str], Path] = {}
    for s in sets:
        keys = {(c.fixture_set.casefold(), c.id.casefold()): c for c in s.cases}
        clash = next((k for k in keys if k in owner), None)
        if clash is not None:
            case = keys[clash]
            s.error = FixtureError(
                str(s.folder),
                "",
                f"a set name that no other configured set holding case {case.id!r} has",
                f"{case.fixture_set!r}, also the name of {owner[clash]}: the two cases would "
                "share one test id and golden file; rename one of the set folders",
            )
            s.cases = ()
            continue
        owner.update(dict.fromkeys(keys, s.folder))
    return sets


def case_names(sets: Sequence[ConfiguredSet]) -> dict[tuple[str, str], str]:
    """(set name, case id) -> the case's name, which is its test id and golden file name: its
    id, or ``<set>/<id>`` where configured sets share the id (compared ignoring case, as a
    golden folder may live on a case-insensitive file system). It depends on the configured
    sets only, never on which cases a run samples or selects."""
    cases = [c for s in sets for c in s.cases]
    count = Counter(c.id.casefold() for c in cases)
    return {
        (c.fixture_set, c.id): c.id if count[c.id.casefold()] == 1 else f"{c.fixture_set}/{c.id}"
        for c in cases
    }


@dataclass
class ProvenaiSession:
    settings: Settings
    worker_id: str | None = None
    rootdir: Path | None = None
    plan: Plan = field(default_factory=Plan)
    # Sets the ini names beside the run's (a run given fewer --provenai-fixtures): loaded only
    # so their cases keep their names and golden files (README, "Golden snapshots").
    ini_sets: tuple[Path, ...] = ()
    _sets: list[ConfiguredSet] | None = None
    _params: list[CaseParam] | None = None
    _subject: Subject | None = None
    subject_error: Exception | None = None
    load_seconds: float = 0.0
    # what a running test produced in this process, handed on with its next report
    _outbox: dict[str, dict[str, Any]] = field(default_factory=dict)
    _plan_sent: bool = False
    _models_sent: int = 0
    _seen: tuple[int, int] = (0, 0)  # the subject's model calls and cache hits at the last report
    _loads_sent: int = 0
    # the run, as absorbed from reports (the controller, or the only process)
    records: dict[str, list[dict[str, Any]]] = field(default_factory=lambda: defaultdict(list))
    recorded: set[str] = field(default_factory=set)
    failed: set[str] = field(default_factory=set)
    skipped: set[str] = field(default_factory=set)
    reported: set[str] = field(default_factory=set)
    timings: dict[str, float] = field(default_factory=lambda: defaultdict(float))
    models: dict[str, dict[str, Any]] = field(default_factory=dict)
    produced_by: dict[str, dict[str, Any]] = field(default_factory=dict)
    influence_costs: dict[str, dict[str, Any]] = field(default_factory=dict)
    attribution_costs: dict[str, dict[str, Any]] = field(default_factory=dict)
    traces: dict[str, dict[str, Any]] = field(default_factory=dict)
    model_calls: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    cache_hits: dict[str, int] = field(default_factory=lambda: defaultdict(int))
    model_loads: dict[str, int] = field(default_factory=dict)
    run_id: str = field(default_factory=lambda: uuid.uuid4().hex)
    started: float = field(default_factory=time.time)
    started_at: str = field(default_factory=_now)
    live: LiveStatus | None = None  # what this process runs now, for the progress line
    _attribution: AttributionRuntime | None = None  # built on first use

    # -- cases -----------------------------------------------------------------------------
    def case_params(self) -> list[CaseParam]:
        """Selected cases of all configured fixture sets (loaded once, lazily).

        ``--provenai-sample`` samples each fixture kind on its own, so adding sets of another
        kind never changes which cases of a kind are chosen."""
        if self._params is None:
            from pytest_provenai.frozen.load import manifest_kind

            sets = [s for s in self.configured_sets() if s.in_run]
            cases: list[AnyCase] = [c for s in sets for c in s.cases]
            failed = [
                (s.folder.name, s.error, manifest_kind(s.folder))
                for s in sets
                if s.error is not None
            ]
            of_kind: dict[str, list[int]] = defaultdict(list)
            for index, case in enumerate(cases):
                of_kind[case.kind].append(index)
            keep = sorted(
                indices[j]
                for indices in of_kind.values()
                for j in sample_indices(len(indices), self.settings.sample, self.settings.seed)
            )
            chosen = [cases[i] for i in keep]
            names = case_names(self.configured_sets())
            params = [CaseParam(id=names[c.fixture_set, c.id], case=c, kind=c.kind) for c in chosen]
            for name, set_error, set_kind in failed:
                if str(set_error) not in self.plan.fixture_errors:
                    self.plan.fixture_errors.append(str(set_error))
                params.append(CaseParam(id=f"fixture-error:{name}", error=set_error, kind=set_kind))
            self._params = params
        return self._params

    def configured_sets(self) -> list[ConfiguredSet]:
        """The run's fixture sets, then the ini's others (loaded once, lazily)."""
        if self._sets is None:
            self._sets = load_configured_sets(self.settings.fixtures, self.ini_sets)
        return self._sets

    def golden_scope(self) -> tuple[frozenset[str], tuple[str, ...]]:
        """What golden bookkeeping needs: the name of every case of every configured set, and
        the sets that failed to load (while one has, no golden file can be called unused)."""
        sets = self.configured_sets()
        names = frozenset(case_names(sets).values())
        return names, tuple(s.folder.name for s in sets if s.error is not None)

    def params_for(self, kinds: tuple[str, ...]) -> list[CaseParam]:
        """The params of a test that takes cases of ``kinds``: those cases, plus the error
        entry of every set of those kinds that failed to load (and of every failed set whose
        kind could not be read, so no error goes unseen)."""
        return [
            p
            for p in self.case_params()
            if p.kind in kinds or (p.error is not None and p.kind is None)
        ]

    # -- subject ---------------------------------------------------------------------------
    def subject(self) -> Subject:
        """The subject under audit, built once per process (one model per xdist worker)."""
        if self.subject_error is not None:
            raise self.subject_error
        if self._subject is None:
            from pytest_provenai.subject.backends._common import prepare_torch_import
            from pytest_provenai.subject.subject import make_subject

            prepare_torch_import()  # an audit is about to load a model (OMP_WAIT_POLICY)
            start = time.perf_counter()
            try:
                self._subject = make_subject(
                    backend=self.settings.backend,
                    model=self.settings.model,
                    pipeline=self.settings.pipeline,
                    device=worker_device(self.settings, self.worker_id),
                    max_new_tokens=self.settings.max_new_tokens,
                    cache_root=(
                        self.settings.cache / cache_layout.GENERATIONS
                        if self.settings.cache
                        else None
                    ),
                    served=(
                        self.settings.served.options(
                            self.settings.served.base_url_for(self.worker_id), self.settings.model
                        )
                        if self.settings.served
                        else None
                    ),
                )
                if self.settings.retrieval == "index":  # the harness retrieves R0..R{k-1}
                    from pytest_provenai.retrieval.index import open_index
                    from pytest_provenai.retrieval.subject import RetrievingSubject

                    assert self.settings.index is not None  # parse_settings checks it
                    self._subject = RetrievingSubject(
                        self._subject, open_index(self.settings.index), self.settings.k
                    )
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
        self.plan.add_gates(specs)
        if case_id is not None:
            self.plan.expected[nodeid] = (test, case_id)

    def _box(self, nodeid: str) -> dict[str, Any]:
        return self._outbox.setdefault(nodeid, {})

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
        box = self._box(nodeid)
        box.setdefault("records", []).append({"test": test, "record": clean})
        device = self._subject.identity.device if self._subject is not None else None
        box["produced_by"] = {"worker": self.worker_id or "main", "device": device}
        return dict(clean)

    def note_trace(self, nodeid: str, trace: Trace) -> None:
        """Keep what the subject produced for ``nodeid``'s case (see :func:`trace_summary`)."""
        self._box(nodeid)["trace"] = trace_summary(trace)

    def influence(self, nodeid: str, case: Any, trace: Trace) -> dict[str, Any]:
        """The influence layer of ``trace``'s record under ``--provenai-ablation``; what it
        cost goes to the results JSON (``influence_costs``), never into the record."""
        from pytest_provenai.audit.influence import influence_layer, not_measured
        from pytest_provenai.subject.ablation import KLCache, run_ablation

        self.note_trace(nodeid, trace)
        mode = self.settings.ablation
        if mode == "off":
            return not_measured("--provenai-ablation off: influence was not measured")
        kl_cache = (
            KLCache(self.settings.cache / cache_layout.INFLUENCE) if self.settings.cache else None
        )
        subject = self.subject()
        if self.live is not None:
            self.live.influence(len(trace.resources), mode, subject.runner())
        run = run_ablation(subject, case, trace, mode=mode, kl_cache=kl_cache)
        self._box(nodeid)["influence_costs"] = run.costs()
        return influence_layer(
            [r.id for r in trace.resources],
            trace.answer,
            trace.cited_ids,
            run.outputs,
            signals=run.signals,
            theta_floor=self.settings.theta_floor,
        )

    # -- attribution ------------------------------------------------------------------------
    def attribution(self) -> AttributionRuntime:
        """The attribution runtime: one verifier per process. What a case cost goes out with
        its reports (``attribution_costs`` in the results JSON), never into a record."""
        if self._attribution is None:
            from pytest_provenai.frozen.model import Case
            from pytest_provenai.verify.cache import RecordCache
            from pytest_provenai.verify.runtime import AttributionRuntime

            def hotpot_cases() -> list[Case]:
                # the tools serve every case of the run's sets: --provenai-sample chooses
                # what is tested, not what the tools serve (a sampled record is the full
                # run's record of that case)
                sets = [s for s in self.configured_sets() if s.in_run]
                return [c for s in sets for c in s.cases if isinstance(c, Case)]

            def note_costs(nodeid: str, costs: dict[str, Any]) -> None:
                self._box(nodeid)["attribution_costs"] = costs

            index_mode = self.settings.retrieval == "index"
            self._attribution = AttributionRuntime(
                self.settings.attribution,
                self.subject,
                hotpot_cases,
                note_costs,
                self.note_trace,
                backend=self.settings.backend,
                model=self.settings.model,
                retrieval_k=self.settings.k if index_mode else None,
                index=self.settings.index if index_mode else None,
                cache=(
                    RecordCache(self.settings.cache / cache_layout.ATTRIBUTION)
                    if self.settings.cache
                    else None
                ),
            )
        return self._attribution

    def report_payload(self, nodeid: str) -> dict[str, Any]:
        """What goes out with a report of ``nodeid``: what the test produced since its last
        report, the models loaded since, and (once per process) the plan; the model calls it
        made and the generations it read from the cache since its last report, when any; and
        whenever it changed, how many times this process loaded model weights."""
        payload = self._outbox.pop(nodeid, {})
        if len(self.models) != self._models_sent:
            payload["models"] = dict(self.models)
            self._models_sent = len(self.models)
        if not self._plan_sent:
            payload["plan"] = self.plan.as_dict()
            self._plan_sent = True
        subject = self._subject
        seen = (subject.model_calls, subject.cache_hits) if subject is not None else (0, 0)
        calls, hits = seen[0] - self._seen[0], seen[1] - self._seen[1]
        if calls or hits:
            payload["model_calls"], payload["cache_hits"] = calls, hits
        self._seen = seen
        loads = self._subject.model_loads if self._subject is not None else 0
        if loads != self._loads_sent:
            payload["model_loads"] = {self.worker_id or "main": loads}
            self._loads_sent = loads
        return payload

    # -- absorbing (the controller, or the only process) -----------------------------------
    def absorb_report(
        self, nodeid: str, *, failed: bool, skipped: bool, duration: float, payload: Any
    ) -> None:
        self.reported.add(nodeid)
        self.timings[nodeid] += duration
        if failed:
            self.failed.add(nodeid)
        if skipped:
            self.skipped.add(nodeid)
        if not isinstance(payload, dict):
            return
        if "plan" in payload:
            self.plan.merge(payload["plan"])
        self.models.update(payload.get("models", {}))
        for item in payload.get("records", []):
            self.records[item["test"]].append(item["record"])
            self.recorded.add(nodeid)
        if "produced_by" in payload:
            self.produced_by[nodeid] = payload["produced_by"]
        if "influence_costs" in payload:
            self.influence_costs[nodeid] = payload["influence_costs"]
        if "attribution_costs" in payload:
            self.attribution_costs[nodeid] = payload["attribution_costs"]
        if "trace" in payload:
            self.traces[nodeid] = payload["trace"]
        if "model_calls" in payload:
            self.model_calls[nodeid] += int(payload["model_calls"])
            self.cache_hits[nodeid] += int(payload["cache_hits"])
        self.model_loads.update(payload.get("model_loads", {}))

    def worker_payload(self) -> str:
        """Sent through ``config.workeroutput`` when a worker ends: its plan, models and how
        many times it loaded model weights."""
        loads = {self.worker_id or "main": self._loads_sent} if self._loads_sent else {}
        return json.dumps({"plan": self.plan.as_dict(), "models": self.models, "loads": loads})

    def merge(self, payload: str) -> None:
        data = json.loads(payload)
        self.plan.merge(data["plan"])
        self.models.update(data["models"])
        self.model_loads.update(data.get("loads", {}))

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

    # -- end of session --------------------------------------------------------------------
    def _placeholders(self) -> dict[str, list[dict[str, Any]]]:
        """Every planned case item that reported no record and was not skipped becomes a
        ``{"case_id", "missing": reason}`` placeholder: its gates fail closed."""
        out: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for nodeid, (test, case_id) in sorted(self.plan.expected.items()):
            if nodeid in self.recorded or nodeid in self.skipped:
                continue
            if nodeid in self.reported:
                reason = "no record (test errored or failed before recording)"
            else:
                reason = "no record (never reported: its worker crashed or the run stopped)"
            out[test].append({"case_id": case_id, "missing": reason})
        return out

    def finish(self) -> RunResults:
        """Evaluate the gates over every planned case and build the run's results (once)."""
        records: dict[str, list[dict[str, Any]]] = defaultdict(list)
        for test, recs in self.records.items():
            records[test].extend(recs)
        for test, holes in self._placeholders().items():
            records[test].extend(holes)
        ordered = {
            t: sorted(r, key=lambda x: str(x.get("case_id"))) for t, r in sorted(records.items())
        }
        gate_results = [
            gates_mod.evaluate(spec, ordered.get(spec.test, []), seed=self.settings.seed)
            for _, spec in sorted(self.plan.gates.items())
        ]
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
            produced_by=self.produced_by,
            influence_costs=self.influence_costs,
            attribution_costs=self.attribution_costs,
            timings={
                "wall_seconds": round(time.time() - self.started, 3),
                "per_test_seconds": {k: round(v, 4) for k, v in sorted(self.timings.items())},
            },
            cache=self.cache_summary(),
            seed=self.settings.seed,
            traces=self.traces,
        )

    def audited(self) -> bool:
        """True when this run produced anything to report (records, gates, fixture errors)."""
        return bool(self.records or self.plan.gates or self.plan.fixture_errors)

    def write_results(self, results: RunResults) -> None:
        if self.settings.results is not None and self.audited():
            atomic_write_json(self.settings.results, results.to_json())

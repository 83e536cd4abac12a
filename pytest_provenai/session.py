"""Run state of one pytest process: settings, cases, the subject, records, gates.

Kept in ``config.stash`` (see plugin.py). Under xdist every worker has its own
``ProvenaiSession``; at the end each worker sends :meth:`worker_payload` through
``config.workeroutput`` and the controller :meth:`merge`\\ s them, then evaluates the gates and
writes results once. Without xdist the same object does both. Records are plain dicts.
"""

from __future__ import annotations

import json
import time
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

from pytest_provenai import gates as gates_mod
from pytest_provenai._io import atomic_write_json
from pytest_provenai.audit.fidelity import FIDELITY_METRICS
from pytest_provenai.audit.metrics import aggregate
from pytest_provenai.errors import FixtureError
from pytest_provenai.frozen.model import AnyCase
from pytest_provenai.options import Settings, sample_indices, worker_device
from pytest_provenai.subject.subject import Subject

RESULTS_SCHEMA_VERSION = 1


@dataclass
class CaseParam:
    """What a parametrised test receives: a case, or the error that kept its set from
    loading (the ``provenai_case`` fixture raises it at setup, so the other sets still run)."""

    id: str
    case: AnyCase | None = None
    error: FixtureError | None = None
    kind: str | None = None  # the case's kind; for an error, its set's declared kind or None


@dataclass
class ProvenaiSession:
    settings: Settings
    worker_id: str | None = None
    _params: list[CaseParam] | None = None
    _subject: Subject | None = None
    subject_error: Exception | None = None
    load_seconds: float = 0.0
    records: dict[str, list[dict[str, Any]]] = field(default_factory=lambda: defaultdict(list))
    gate_specs: dict[tuple[str, str, str], gates_mod.GateSpec] = field(default_factory=dict)
    recorded_nodeids: set[str] = field(default_factory=set)
    gated_nodeids: dict[str, tuple[str, str]] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)
    models: dict[str, dict[str, Any]] = field(default_factory=dict)
    fixture_errors: list[str] = field(default_factory=list)
    produced_by: dict[str, dict[str, Any]] = field(default_factory=dict)
    influence_costs: dict[str, dict[str, Any]] = field(default_factory=dict)
    attribution_costs: dict[str, dict[str, Any]] = field(default_factory=dict)
    _attribution: Any = None  # verify.runtime.AttributionRuntime, built on first use
    _attribution_summaries: tuple[int, dict[str, dict[str, Any]]] | None = None
    started: float = field(default_factory=time.time)

    # -- cases -----------------------------------------------------------------------------
    def case_params(self) -> list[CaseParam]:
        """Selected cases of all configured fixture sets (loaded once, lazily).

        ``--provenai-sample`` samples each fixture kind on its own, so adding sets of another
        kind never changes which cases of a kind are chosen."""
        if self._params is None:
            from pytest_provenai.frozen.load import load_fixture_set, manifest_kind

            cases: list[AnyCase] = []
            failed: list[tuple[str, FixtureError, str | None]] = []
            for folder in self.settings.fixtures:
                try:
                    cases.extend(load_fixture_set(folder).cases)
                except FixtureError as err:  # one bad set must not stop the others
                    failed.append((folder.name, err, manifest_kind(folder)))
            of_kind: dict[str, list[int]] = defaultdict(list)
            for index, case in enumerate(cases):
                of_kind[case.kind].append(index)
            keep = sorted(
                indices[j]
                for indices in of_kind.values()
                for j in sample_indices(len(indices), self.settings.sample, self.settings.seed)
            )
            chosen = [cases[i] for i in keep]
            seen: dict[str, int] = defaultdict(int)
            for c in chosen:
                seen[c.id] += 1
            params = [
                CaseParam(
                    id=c.id if seen[c.id] == 1 else f"{c.fixture_set}/{c.id}", case=c, kind=c.kind
                )
                for c in chosen
            ]
            for name, set_error, set_kind in failed:
                self.fixture_errors.append(str(set_error))
                params.append(CaseParam(id=f"fixture-error:{name}", error=set_error, kind=set_kind))
            self._params = params
        return self._params

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
            from pytest_provenai.subject.subject import make_subject

            start = time.perf_counter()
            try:
                self._subject = make_subject(
                    backend=self.settings.backend,
                    model=self.settings.model,
                    pipeline=self.settings.pipeline,
                    device=worker_device(self.settings, self.worker_id),
                    max_new_tokens=self.settings.max_new_tokens,
                    cache_root=(
                        self.settings.cache / "generations" if self.settings.cache else None
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

    # -- records and gates -----------------------------------------------------------------
    def register_gates(self, specs: list[gates_mod.GateSpec]) -> None:
        for s in specs:
            self.gate_specs[(s.test, s.marker, s.metric)] = s

    def expect_record(self, nodeid: str, test: str, case_id: str) -> None:
        self.gated_nodeids[nodeid] = (test, case_id)

    def add_record(self, nodeid: str, test: str, record: dict[str, Any]) -> None:
        json.dumps(record)  # a record must be JSON-able; fail here, not at merge time
        self.records[test].append(record)
        self.recorded_nodeids.add(nodeid)
        device = self._subject.identity.device if self._subject is not None else None
        self.produced_by[nodeid] = {"worker": self.worker_id or "main", "device": device}

    def test_finished(self, nodeid: str, outcome: str, skipped: bool) -> None:
        """After teardown: a gated case that produced no record leaves a placeholder so the
        gate fails closed (skipped cases are left out)."""
        if nodeid in self.gated_nodeids and nodeid not in self.recorded_nodeids and not skipped:
            test, case_id = self.gated_nodeids[nodeid]
            self.records[test].append({"case_id": case_id, "missing": outcome})
            self.recorded_nodeids.add(nodeid)

    # -- influence -------------------------------------------------------------------------
    def influence(self, nodeid: str, case: Any, trace: Any) -> dict[str, Any]:
        """The influence layer of ``trace``'s record under ``--provenai-ablation``; what it
        cost goes to the results JSON (``influence_costs``), never into the record."""
        from pytest_provenai.audit.influence import influence_layer, not_measured
        from pytest_provenai.subject.ablation import KLCache, run_ablation

        mode = self.settings.ablation
        if mode == "off":
            return not_measured("--provenai-ablation off: influence was not measured")
        kl_cache = KLCache(self.settings.cache / "influence") if self.settings.cache else None
        run = run_ablation(self.subject(), case, trace, mode=mode, kl_cache=kl_cache)
        self.influence_costs[nodeid] = run.costs()
        return influence_layer(
            [r.id for r in trace.resources],
            trace.answer,
            trace.cited_ids,
            run.outputs,
            signals=run.signals,
            theta_floor=self.settings.theta_floor,
        )

    # -- attribution ------------------------------------------------------------------------
    def attribution(self) -> Any:
        """The attribution runtime (:class:`pytest_provenai.verify.runtime.AttributionRuntime`):
        one verifier per process; its per-case costs are this session's
        ``attribution_costs``."""
        if self._attribution is None:
            from pytest_provenai.frozen.model import Case
            from pytest_provenai.verify.runtime import AttributionRuntime

            def hotpot_cases() -> list[Case]:
                return [p.case for p in self.case_params() if isinstance(p.case, Case)]

            self._attribution = AttributionRuntime(
                self.settings.attribution,
                self.subject,
                hotpot_cases,
                backend=self.settings.backend,
                model=self.settings.model,
                retrieval_k=self.settings.k if self.settings.retrieval == "index" else None,
                index=self.settings.index if self.settings.retrieval == "index" else None,
                costs=self.attribution_costs,
            )
        return self._attribution

    def attribution_summaries(self) -> dict[str, dict[str, Any]]:
        """Attribution metrics (pooled over claims, CIs by trace) for every test whose
        records carry the attribution layer."""
        from pytest_provenai.attribution.metrics import ATTRIBUTION_METRICS

        key = sum(len(r) for r in self.records.values())
        if self._attribution_summaries is not None and self._attribution_summaries[0] == key:
            return self._attribution_summaries[1]  # computed once for summary and results
        out = {}
        for test, recs in self.sorted_records().items():
            present = [r for r in recs if "missing" not in r]
            if present and all("attribution" in r for r in present):
                metrics = aggregate(present, ATTRIBUTION_METRICS, seed=self.settings.seed)
                out[test] = {
                    "n": len(present),
                    "missing": len(recs) - len(present),
                    "metrics": {
                        k: v for k, v in metrics.items() if v["n"] and v["value"] is not None
                    },
                }
        self._attribution_summaries = (key, out)
        return out

    # -- xdist -----------------------------------------------------------------------------
    def worker_payload(self) -> str:
        return json.dumps(
            {
                "records": self.records,
                "gates": [s.as_dict() for s in self.gate_specs.values()],
                "timings": self.timings,
                "models": self.models,
                "fixture_errors": self.fixture_errors,
                "produced_by": self.produced_by,
                "influence_costs": self.influence_costs,
                "attribution_costs": self.attribution_costs,
            }
        )

    def merge(self, payload: str) -> None:
        data = json.loads(payload)
        for test, recs in data["records"].items():
            self.records[test].extend(recs)
        self.register_gates([gates_mod.GateSpec.from_dict(g) for g in data["gates"]])
        self.timings.update(data["timings"])
        self.models.update(data["models"])
        self.produced_by.update(data["produced_by"])
        self.influence_costs.update(data.get("influence_costs", {}))
        self.attribution_costs.update(data.get("attribution_costs", {}))
        for e in data["fixture_errors"]:
            if e not in self.fixture_errors:
                self.fixture_errors.append(e)

    # -- end of session --------------------------------------------------------------------
    def sorted_records(self) -> dict[str, list[dict[str, Any]]]:
        return {
            t: sorted(recs, key=lambda r: str(r.get("case_id")))
            for t, recs in sorted(self.records.items())
        }

    def evaluate_gates(self) -> list[gates_mod.GateResult]:
        recs = self.sorted_records()
        return [
            gates_mod.evaluate(spec, recs.get(spec.test, []), seed=self.settings.seed)
            for _, spec in sorted(self.gate_specs.items())
        ]

    def aggregates(self) -> dict[str, dict[str, Any]]:
        """Fidelity means with CIs for every test whose records carry the answer and
        citation layers (later layers add their own aggregates)."""
        out = {}
        for test, recs in self.sorted_records().items():
            present = [r for r in recs if "missing" not in r]
            if present and all("answer" in r and "citation" in r for r in present):
                out[test] = {
                    "n": len(present),
                    "missing": len(recs) - len(present),
                    "metrics": aggregate(present, FIDELITY_METRICS, seed=self.settings.seed),
                }
                if all("retrieval" in r for r in present):  # index mode: kept apart
                    from pytest_provenai.audit.retrieval import RETRIEVAL_METRICS

                    out[test]["retrieval"] = aggregate(
                        present, RETRIEVAL_METRICS, seed=self.settings.seed
                    )
            if present and all("influence" in r for r in present):
                from pytest_provenai.audit.influence import influence_summary

                out.setdefault(test, {"n": len(present), "missing": len(recs) - len(present)})
                out[test]["influence"] = influence_summary(present, seed=self.settings.seed)
        return out

    def provenance_summaries(self) -> dict[str, dict[str, Any]]:
        """Provenance metrics (and, for exposure records, the exposure matrix: rows =
        treatments; aid-value leak, aid-citation and abstention rates; n) for every test
        whose records carry a provenance layer (quotation, derivation or exposure)."""
        from pytest_provenai.audit.provenance import provenance_summary

        out = {}
        for test, recs in self.sorted_records().items():
            summary = provenance_summary(recs, seed=self.settings.seed)
            if summary is not None:
                out[test] = summary
        return out

    def results(self, gate_results: list[gates_mod.GateResult]) -> dict[str, Any]:
        return {
            "schema_version": RESULTS_SCHEMA_VERSION,
            "tool": "pytest-provenai",
            "models": self.models,
            "options": self.settings.for_results(),
            "records": self.sorted_records(),
            "aggregates": self.aggregates(),
            "provenance": self.provenance_summaries(),
            "gates": [g.as_dict() for g in gate_results],
            "fixture_errors": self.fixture_errors,
            "produced_by": dict(sorted(self.produced_by.items())),
            "influence_costs": dict(sorted(self.influence_costs.items())),
            "attribution": self.attribution_summaries(),
            "attribution_costs": dict(sorted(self.attribution_costs.items())),
            "timings": {
                "wall_seconds": round(time.time() - self.started, 3),
                "per_test_seconds": dict(sorted(self.timings.items())),
            },
        }

    def audited(self) -> bool:
        """True when this run produced anything to report (records, gates, fixture errors)."""
        return bool(self.records or self.gate_specs or self.fixture_errors)

    def write_results(self, gate_results: list[gates_mod.GateResult]) -> None:
        if self.settings.results is not None and self.audited():
            atomic_write_json(self.settings.results, self.results(gate_results))

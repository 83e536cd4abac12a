"""The results of one audit run, built once at session end and rendered by every output.

:func:`build_results` computes everything a person or a program reads about a run — per test
the aggregates with their bootstrap CIs, the influence and provenance summaries, the gates —
exactly once, into a :class:`RunResults`. The results JSON (:meth:`RunResults.to_json`), the
terminal summary (``report/summary.py``) and the HTML report render that object; none of them
recomputes a number. :func:`load_results` reads a results JSON back (for ``provenai report``
and ``provenai compare``), checking that it is one.

No pytest import.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_provenai.attribution.metrics import attribution_summary
from pytest_provenai.audit.fidelity import FIDELITY_METRICS
from pytest_provenai.audit.influence import InfluenceSummary, influence_summary
from pytest_provenai.audit.metrics import (
    MetricSummary,
    aggregate,
    summaries_from_json,
    summaries_to_json,
)
from pytest_provenai.audit.provenance import ProvenanceSummary, provenance_summary
from pytest_provenai.audit.retrieval import RETRIEVAL_METRICS
from pytest_provenai.errors import FixtureError, ResultsError
from pytest_provenai.gates import GateResult, GateSpec
from pytest_provenai.sharding import ShardSection

RESULTS_SCHEMA_VERSION = 2
"""Version of the results JSON layout. 2: ``run`` (id, start and end time, git revision);
aggregates and gates computed once for every output."""

TOOL = "pytest-provenai"


@dataclass
class TestResults:
    """The population view of one test function's records: per layer the typed summaries
    (None where the test's records do not carry that layer). Each summary type lives with
    the code that computes it (``audit/metrics.py``, ``audit/influence.py``,
    ``audit/provenance.py``) and writes/reads exactly its part of the results JSON."""

    test: str
    n: int
    missing: int
    fidelity: dict[str, MetricSummary] | None = None  # metric -> summary
    retrieval: dict[str, MetricSummary] | None = None  # index mode only
    influence: InfluenceSummary | None = None
    provenance: ProvenanceSummary | None = None
    # metric -> summary, the attribution metrics that apply (pooled over claims, CI by trace)
    attribution: dict[str, MetricSummary] | None = None

    def aggregates_json(self) -> dict[str, Any] | None:
        """The test's entry of the results JSON's ``aggregates`` (None: it has none)."""
        if self.fidelity is None and self.influence is None and self.attribution is None:
            return None
        entry: dict[str, Any] = {"n": self.n, "missing": self.missing}
        if self.fidelity is not None:
            entry["metrics"] = summaries_to_json(self.fidelity)
        if self.retrieval is not None:
            entry["retrieval"] = summaries_to_json(self.retrieval)
        if self.influence is not None:
            entry["influence"] = self.influence.to_json()
        if self.attribution is not None:
            entry["attribution"] = summaries_to_json(self.attribution)
        return entry

    @classmethod
    def from_json(
        cls,
        test: str,
        aggregates: Mapping[str, Any],
        provenance: Any,
        records: Sequence[Any],
    ) -> TestResults:
        """One test's results from its ``aggregates`` entry (``{}`` when it has none), its
        ``provenance`` entry (None when none) and its records (n and missing when neither
        entry says); TypeError/ValueError/KeyError when an entry is not a summary."""
        prov = None if provenance is None else ProvenanceSummary.from_json(provenance)
        present = [r for r in records if isinstance(r, dict) and "missing" not in r]

        def summaries(key: str) -> dict[str, MetricSummary] | None:
            data = aggregates.get(key)
            return None if data is None else summaries_from_json(data)

        influence = aggregates.get("influence")
        return cls(
            test=test,
            n=int(aggregates.get("n", prov.n if prov else len(present))),
            missing=int(
                aggregates.get("missing", prov.missing if prov else len(records) - len(present))
            ),
            fidelity=summaries("metrics"),
            retrieval=summaries("retrieval"),
            influence=None if influence is None else InfluenceSummary.from_json(influence),
            provenance=prov,
            attribution=summaries("attribution"),
        )


@dataclass
class RunResults:
    """One run: what was audited, with what, and what came out. See module docstring."""

    run: dict[str, Any]
    models: dict[str, dict[str, Any]]
    options: dict[str, Any]
    records: dict[str, list[dict[str, Any]]]
    tests: dict[str, TestResults]
    gates: list[GateResult]
    fixture_errors: list[str]
    produced_by: dict[str, dict[str, Any]] = field(default_factory=dict)
    influence_costs: dict[str, dict[str, Any]] = field(default_factory=dict)
    attribution_costs: dict[str, dict[str, Any]] = field(default_factory=dict)
    timings: dict[str, Any] = field(default_factory=dict)
    cache: dict[str, int] = field(default_factory=dict)
    # per case item (node id): what the subject produced — raw output, resources (id, title,
    # sha256), cited ids — for the HTML report's drill-down; results JSON only, never a record
    traces: dict[str, dict[str, Any]] = field(default_factory=dict)
    # a shard's results (--provenai-shard): partial, its gates provisional; None otherwise
    shard: ShardSection | None = None

    @property
    def failed_gates(self) -> list[GateResult]:
        return [g for g in self.gates if not g.passed and not g.provisional]

    def to_json(self) -> dict[str, Any]:
        aggregates: dict[str, dict[str, Any]] = {}
        provenance: dict[str, dict[str, Any]] = {}
        for test, t in self.tests.items():
            entry = t.aggregates_json()
            if entry is not None:
                aggregates[test] = entry
            if t.provenance is not None:
                provenance[test] = t.provenance.to_json()
        return {
            "schema_version": RESULTS_SCHEMA_VERSION,
            "tool": TOOL,
            "run": self.run,
            "models": self.models,
            "options": self.options,
            "records": self.records,
            "aggregates": aggregates,
            "provenance": provenance,
            "gates": [g.as_dict() for g in self.gates],
            "fixture_errors": self.fixture_errors,
            "produced_by": self.produced_by,
            "influence_costs": self.influence_costs,
            "attribution_costs": self.attribution_costs,
            "cache": self.cache,
            "timings": self.timings,
            "traces": self.traces,
            **({"shard": self.shard.to_json()} if self.shard is not None else {}),
        }


def summarise_test(test: str, records: Sequence[Mapping[str, Any]], *, seed: int) -> TestResults:
    """Every population number of one test's records (placeholders of cases without a record
    carry ``"missing"`` and are counted, not scored)."""
    present = [r for r in records if "missing" not in r]
    out = TestResults(test=test, n=len(present), missing=len(records) - len(present))
    if present and all("answer" in r and "citation" in r for r in present):
        out.fidelity = summaries_from_json(aggregate(present, FIDELITY_METRICS, seed=seed))
        if all("retrieval" in r for r in present):  # index mode: kept apart from citation
            out.retrieval = summaries_from_json(aggregate(present, RETRIEVAL_METRICS, seed=seed))
    if present and all("influence" in r for r in present):
        out.influence = InfluenceSummary.from_json(influence_summary(present, seed=seed))
    prov = provenance_summary(records, seed=seed)
    out.provenance = None if prov is None else ProvenanceSummary.from_json(prov)
    if present and all("attribution" in r for r in present):
        out.attribution = summaries_from_json(attribution_summary(present, seed=seed))
    return out


def order_records(
    records: Mapping[str, Sequence[dict[str, Any]]],
) -> dict[str, list[dict[str, Any]]]:
    """The one order of a run's records: tests by node id, each test's records by case id
    (the order gates resample and the results JSON keeps, whatever the worker layout)."""
    return {
        t: sorted(recs, key=lambda r: str(r.get("case_id"))) for t, recs in sorted(records.items())
    }


def build_results(
    *,
    run: dict[str, Any],
    models: dict[str, dict[str, Any]],
    options: dict[str, Any],
    records: Mapping[str, Sequence[dict[str, Any]]],
    gates: list[GateResult],
    fixture_errors: list[str],
    produced_by: Mapping[str, dict[str, Any]],
    influence_costs: Mapping[str, dict[str, Any]],
    timings: dict[str, Any],
    attribution_costs: Mapping[str, dict[str, Any]] | None = None,
    cache: dict[str, int],
    seed: int,
    traces: Mapping[str, dict[str, Any]] | None = None,
    shard: ShardSection | None = None,
) -> RunResults:
    """The run's results; records are in :func:`order_records` order so every worker
    layout gives the same document."""
    ordered = order_records(records)
    return RunResults(
        run=run,
        models=dict(sorted(models.items())),
        options=options,
        records=ordered,
        tests={t: summarise_test(t, recs, seed=seed) for t, recs in ordered.items()},
        gates=gates,
        fixture_errors=list(fixture_errors),
        produced_by=dict(sorted(produced_by.items())),
        influence_costs=dict(sorted(influence_costs.items())),
        attribution_costs=dict(sorted((attribution_costs or {}).items())),
        timings=timings,
        cache=cache,
        traces=dict(sorted((traces or {}).items())),
        shard=shard,
    )


# -- reading a results JSON back -------------------------------------------------------------
_REQUIRED: dict[str, type] = {
    "run": dict,
    "models": dict,
    "options": dict,
    "records": dict,
    "aggregates": dict,
    "provenance": dict,
    "gates": list,
    "fixture_errors": list,
}
_JSON_NAME: dict[type, str] = {dict: "object", list: "array"}
_OPTIONAL: dict[str, type] = {
    "produced_by": dict,
    "influence_costs": dict,
    "attribution_costs": dict,
    "timings": dict,
    "cache": dict,
    "traces": dict,
}


def _gate_from(d: Mapping[str, Any]) -> GateResult:
    ci = d.get("ci")
    return GateResult(
        spec=GateSpec.from_dict(d),
        passed=bool(d["passed"]),
        value=None if d.get("value") is None else float(d["value"]),
        ci=None if not ci else (float(ci[0]), float(ci[1])),
        n=int(d["n"]),
        missing=int(d.get("missing", 0)),
        reason=str(d.get("reason", "")),
        higher_is_better=d.get("comparison", ">=") == ">=",
        provisional=d.get("provisional") is True,
    )


def results_from_json(data: Any, source: str = "results JSON") -> RunResults:
    """A :class:`RunResults` from a parsed results JSON; :class:`ResultsError` naming
    ``source`` and the problem when it is not one of this version."""
    if not isinstance(data, dict) or data.get("tool") != TOOL:
        raise ResultsError(f'{source}: not a pytest-provenai results JSON (no "tool": "{TOOL}")')
    version = data.get("schema_version")
    if version != RESULTS_SCHEMA_VERSION:
        raise ResultsError(
            f"{source}: results schema_version {version!r}, this release reads "
            f"{RESULTS_SCHEMA_VERSION}; rerun the audit with this release to get a current file"
        )
    for key, kind in _REQUIRED.items():
        if not isinstance(data.get(key), kind):
            raise ResultsError(f"{source}#/{key}: expected a JSON {_JSON_NAME[kind]}")
    for key, kind in _OPTIONAL.items():
        if key in data and not isinstance(data[key], kind):
            raise ResultsError(f"{source}#/{key}: expected a JSON {_JSON_NAME[kind]}")
    for test, recs in data["records"].items():
        if not isinstance(recs, list):
            raise ResultsError(f"{source}#/records/{test}: expected a JSON array of records")
        for i, rec in enumerate(recs):
            if not isinstance(rec, dict) or not isinstance(rec.get("case_id"), str):
                raise ResultsError(
                    f"{source}#/records/{test}/{i}: expected a record object with a case_id"
                )
    try:
        gates = [_gate_from(g) for g in data["gates"]]
    except (KeyError, TypeError, ValueError) as exc:
        raise ResultsError(
            f"{source}#/gates: malformed gate ({type(exc).__name__}: {exc})"
        ) from None
    tests: dict[str, TestResults] = {}
    names = set(data["records"]) | set(data["aggregates"]) | set(data["provenance"])
    for test in sorted(names):
        agg = data["aggregates"].get(test, {})
        if not isinstance(agg, dict):
            raise ResultsError(f"{source}#/aggregates/{test}: expected a JSON object")
        try:
            tests[test] = TestResults.from_json(
                test, agg, data["provenance"].get(test), data["records"].get(test, [])
            )
        except (KeyError, TypeError, ValueError) as exc:
            raise ResultsError(
                f"{source}: malformed summaries of {test} ({type(exc).__name__}: {exc})"
            ) from None
    return RunResults(
        run=data["run"],
        models=data["models"],
        options=data["options"],
        records=data["records"],
        tests=tests,
        gates=gates,
        fixture_errors=[str(e) for e in data["fixture_errors"]],
        produced_by=data.get("produced_by", {}),
        influence_costs=data.get("influence_costs", {}),
        attribution_costs=data.get("attribution_costs", {}),
        timings=data.get("timings", {}),
        cache=data.get("cache", {}),
        traces=data.get("traces", {}),
        shard=ShardSection.from_json(data["shard"], source) if "shard" in data else None,
    )


def load_results(path: str | Path) -> RunResults:
    """Read and check a results JSON file (one clear :class:`ResultsError` line if it is not
    one: unreadable, not strict JSON — truncated, NaN or Infinity, duplicate keys, nested
    deeper than :data:`~pytest_provenai.frozen.jsonread.MAX_DEPTH` levels —, wrong schema
    version, from another tool).

    The text goes through the same guarded reader as fixture files
    (:func:`~pytest_provenai.frozen.jsonread.parse_json_bytes`): a hostile file gives one line,
    never a RecursionError. A run's own results nest about 12 levels (top level, records, the
    test's list, then a record, whose deepest shipped kind nests 9), well inside the limit."""
    from pytest_provenai.frozen.jsonread import parse_json_bytes, read_bytes

    p = Path(path)
    try:  # read_bytes names a missing file, a folder or a FIFO (never opened) in one line
        data = parse_json_bytes(read_bytes(p, str(p)), str(p))
    except FixtureError as exc:  # "<file>[#pointer]: expected ..., got ..."
        raise ResultsError(str(exc)) from None
    return results_from_json(data, str(p))

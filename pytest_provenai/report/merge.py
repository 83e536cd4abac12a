"""``provenai merge``: the shards of one run (``--provenai-shard K/N``) joined into one
results document, judged exactly as a single run of the same cases would be.

:func:`merge_shards` reads every shard's results JSON and checks, before anything is
written, that they are parts of one run: each is a shard's results, all of ``N`` shards, the
same fingerprint (package version, record-changing options, fixture set digests, model) and
the same whole-run plan; each shard's cases are the ones the assignment gives it
(``pytest_provenai.sharding``) and its records are of those cases only; no shard is given
twice; every shard is there (or ``allow_missing``, when the cases of a missing shard become
``missing`` placeholders and their gates fail closed, as a single run's crashed worker's
do). Then the records are put in the one order (:func:`order_records`) and every gate of the
whole-run plan is evaluated on the union with the code a single run uses
(:func:`pytest_provenai.gates.evaluate`, same seed), and the results are built by
:func:`build_results`: the records, aggregates, bootstrap CIs and gate outcomes are those of
one run over the same cases.

No pytest import.
"""

from __future__ import annotations

import uuid
from collections import defaultdict
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from xml.etree import ElementTree

from pytest_provenai import gates as gates_mod
from pytest_provenai.audit.stats import DEFAULT_SEED
from pytest_provenai.errors import ResultsError
from pytest_provenai.report.results import RunResults, build_results, load_results, order_records
from pytest_provenai.sharding import ShardSection, case_key, shard_of

__all__ = ["MISSING_SHARD", "Merged", "gates_junit_xml", "merge_shards"]

MISSING_SHARD = "no record (shard {spec} was not merged: its results are missing)"
SHOWN_KEYS = 10  # missing case keys named in a message, then a count


@dataclass
class Merged:
    """A merge's outcome: the merged results, the golden files no configured case claims
    (as the shards found them), and the case keys no shard audited (``allow_missing``)."""

    results: RunResults
    golden_unused: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)


def _listed(keys: Sequence[str]) -> str:
    shown = ", ".join(keys[:SHOWN_KEYS])
    more = len(keys) - SHOWN_KEYS
    return shown + (f" (+{more} more)" if more > 0 else "")


def _short(value: Any, limit: int = 60) -> str:
    text = repr(value)
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _differences(a: Mapping[str, Any], b: Mapping[str, Any], prefix: str = "") -> list[str]:
    """The dotted names of the entries in which two fingerprints differ."""
    out = []
    for key in sorted(set(a) | set(b)):
        va, vb = a.get(key), b.get(key)
        if isinstance(va, Mapping) and isinstance(vb, Mapping):
            out += _differences(va, vb, f"{prefix}{key}.")
        elif va != vb:
            out.append(f"{prefix}{key} ({_short(va)} vs {_short(vb)})")
    return out


def _check_same_run(first: tuple[Path, ShardSection], other: tuple[Path, ShardSection]) -> None:
    (p0, s0), (p, s) = first, other
    if s.spec.count != s0.spec.count:
        raise ResultsError(
            f"{p} is shard {s.spec} and {p0} is shard {s0.spec}: shards of different runs "
            "(every shard of one run has the same N)"
        )
    f0, f = dict(s0.fingerprint), dict(s.fingerprint)
    if not f0.get("models") or not f.get("models"):  # a shard that loaded no model
        f0.pop("models", None)
        f.pop("models", None)
    diff = _differences(f0, f)
    if diff:
        raise ResultsError(
            f"{p} and {p0} are not shards of one run: {'; '.join(diff[:3])} differ; run "
            "every shard with the same model, options and fixture sets"
        )
    if (s.case_keys, s.gates, s.expected) != (s0.case_keys, s0.gates, s0.expected):
        raise ResultsError(
            f"{p} and {p0} planned different runs (the whole run's cases, gates or gated "
            "items differ): give every shard the same --provenai-sample, -k and test files"
        )


def _record_key(rec: Mapping[str, Any], case_keys: Mapping[str, str]) -> str | None:
    """A record's case key: its fixture set and id; a placeholder's (no fixture set) by its
    case name."""
    if isinstance(rec.get("fixture_set"), str) and isinstance(rec.get("case_id"), str):
        return case_key(rec["fixture_set"], rec["case_id"])
    return case_keys.get(str(rec.get("case_id")))


def _check_selection(path: Path, shard: ShardSection, results: RunResults) -> None:
    """The shard's cases are the ones the assignment gives it; its records are of those."""
    population = set(shard.case_keys.values())
    own = set(shard.cases)
    foreign = sorted(own - population)
    if foreign:
        raise ResultsError(f"{path}: cases outside the run's selection: {_listed(foreign)}")
    count = shard.spec.count
    wrong = sorted(k for k in own if shard_of(k, count) != shard.spec.index)
    absent = sorted(k for k in population - own if shard_of(k, count) == shard.spec.index)
    if wrong or absent:
        raise ResultsError(
            f"{path}: its cases are not shard {shard.spec}'s "
            f"({_listed(wrong or absent)} {'belong elsewhere' if wrong else 'are missing'}); "
            "the file was edited or made by another release"
        )
    for test, recs in results.records.items():
        for i, rec in enumerate(recs):
            key = _record_key(rec, shard.case_keys)
            if key not in own:
                raise ResultsError(
                    f"{path}#/records/{test}/{i}: case {key or rec.get('case_id')!r} is not "
                    f"in shard {shard.spec}'s selection"
                )


def _load_shards(paths: Sequence[Path]) -> list[tuple[Path, RunResults, ShardSection]]:
    if not paths:
        raise ResultsError("no shard results given: name every shard's results JSON")
    shards = []
    for path in paths:
        results = load_results(path)
        if results.shard is None:
            raise ResultsError(
                f'{path}: not a shard\'s results (no "shard" section): run each shard with '
                "--provenai-shard K/N --provenai-results FILE"
            )
        shards.append((path, results, results.shard))
    first = (shards[0][0], shards[0][2])
    seen: dict[int, Path] = {}
    for path, results, shard in shards:
        _check_same_run(first, (path, shard))
        if shard.spec.index in seen:
            raise ResultsError(
                f"{seen[shard.spec.index]} and {path} are both shard {shard.spec}: give each "
                "shard once"
            )
        seen[shard.spec.index] = path
        _check_selection(path, shard, results)
    return shards


def merge_shards(paths: Sequence[Path], *, allow_missing: bool = False) -> Merged:
    """Merge the shards' results (module docstring); ResultsError naming the file(s) and the
    problem when they are not the complete parts of one run."""
    shards = _load_shards([Path(p) for p in paths])
    whole = shards[0][2]
    count = whole.spec.count
    given = {shard.spec.index for _, _, shard in shards}
    absent = [i for i in range(1, count + 1) if i not in given]
    population = sorted(set(whole.case_keys.values()))
    missing = [k for k in population if shard_of(k, count) not in given]
    if absent and not allow_missing:
        specs = ", ".join(f"{i}/{count}" for i in absent)
        raise ResultsError(
            f"shard(s) {specs} not given: {len(missing)} case(s) not audited: "
            f"{_listed(missing) or 'none'}; give every shard's results, or pass "
            "--allow-missing to merge anyway (their gates fail closed)"
        )

    records: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for _, results, _ in shards:
        for test, recs in results.records.items():
            records[test].extend(recs)
    missing_set = set(missing)
    for _nodeid, (test, name) in sorted(whole.expected.items()):
        key = whole.case_keys.get(name)
        if key in missing_set:
            where = f"{shard_of(key, count)}/{count}"
            records[test].append({"case_id": name, "missing": MISSING_SHARD.format(spec=where)})
    ordered = order_records(records)

    first = shards[0][1]
    seed = int(first.options.get("seed", DEFAULT_SEED))
    gate_specs = sorted(
        (gates_mod.GateSpec.from_dict(g) for g in whole.gates),
        key=lambda s: (s.test, s.marker, s.metric),
    )
    gate_results = [gates_mod.evaluate(s, ordered.get(s.test, []), seed=seed) for s in gate_specs]

    def union(part: str) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for _, results, _ in shards:
            out.update(getattr(results, part))
        return out

    fixture_errors: list[str] = []
    for _, results, _ in shards:
        fixture_errors += [e for e in results.fixture_errors if e not in fixture_errors]
    cache: dict[str, int] = defaultdict(int)
    for _, results, _ in shards:
        for name, value in results.cache.items():
            cache[name] += int(value)
    per_test: dict[str, Any] = {}
    for _, results, _ in shards:
        per_test.update(results.timings.get("per_test_seconds", {}))
    walls = {str(s.spec): r.timings.get("wall_seconds") for _, r, s in shards}
    runs = [r.run for _, r, _ in shards]
    merged = build_results(
        run={
            "id": uuid.uuid4().hex,
            "started": min(str(r.get("started", "")) for r in runs),
            "finished": max(str(r.get("finished", "")) for r in runs),
            "git_revision": first.run.get("git_revision"),
            "merged_from": [
                {"file": str(p), "shard": str(s.spec), "run": r.run.get("id")}
                for p, r, s in sorted(shards, key=lambda x: x[2].spec)
            ],
        },
        models={
            f"shard{s.spec.index}/{worker}": identity
            for _, r, s in shards
            for worker, identity in r.models.items()
        },
        options=first.options,
        records=ordered,
        gates=gate_results,
        fixture_errors=fixture_errors,
        produced_by=union("produced_by"),
        influence_costs=union("influence_costs"),
        attribution_costs=union("attribution_costs"),
        timings={
            "wall_seconds": max(
                (w for w in walls.values() if isinstance(w, (int, float))), default=0
            ),
            "per_test_seconds": dict(sorted(per_test.items())),
            "shard_wall_seconds": walls,
        },
        cache=dict(cache),
        seed=seed,
        traces=union("traces"),
    )
    unused = sorted({p for _, _, s in shards for p in s.golden_unused})
    return Merged(merged, golden_unused=unused, missing=missing)


def gates_junit_xml(results: RunResults, suite: str = "provenai") -> str:
    """The gates as JUnit XML test cases, named as pytest names a gate item
    (``<test>::gate[<marker>.<metric>]``: classname from the test's path and function, name
    ``gate[...]``); a failed gate is a ``failure`` with the gate's line."""
    failed = len(results.failed_gates)
    root = ElementTree.Element("testsuites", {"name": "provenai merge"})
    node = ElementTree.SubElement(
        root,
        "testsuite",
        {"name": suite, "tests": str(len(results.gates)), "failures": str(failed), "errors": "0"},
    )
    node.set("skipped", "0")
    for g in results.gates:
        path, _, function = g.spec.test.partition("::")
        classname = ".".join(
            [path.removesuffix(".py").replace("/", "."), *([function] if function else [])]
        )
        case = ElementTree.SubElement(
            node,
            "testcase",
            {"classname": classname, "name": f"gate[{g.spec.marker}.{g.spec.metric}]", "time": "0"},
        )
        if not g.passed:
            failure = ElementTree.SubElement(case, "failure", {"message": g.line()})
            failure.text = g.line()
    ElementTree.indent(root)
    return '<?xml version="1.0" encoding="utf-8"?>\n' + ElementTree.tostring(root, "unicode") + "\n"

"""The attribution record cache (issue 13: warm reruns verify nothing again).

A record is looked up by the verifier's recipe and the record's inputs *before* the verifier
is built: a hit returns the stored record without loading MiniLM or fitting the forest, a
change of anything the verifier depends on (threshold, table, code) is a miss, and a
damaged entry warns, is dropped and is recomputed. The real verifier computes the records.
"""

from __future__ import annotations

import json
import shutil
from dataclasses import asdict, replace
from pathlib import Path
from typing import Any

import pytest

from pytest_provenai.errors import ProvenaiCacheWarning
from pytest_provenai.frozen.load import load_fixture_set
from pytest_provenai.frozen.traces import ProbeCase, TraceCase
from pytest_provenai.options import AttributionSettings
from pytest_provenai.verify import cache as cache_module
from pytest_provenai.verify.cache import RecordCache, code_digest, frozen_case_inputs, record_key
from pytest_provenai.verify.runtime import SHIPPED_TABLE, AttributionRuntime

REPO = Path(__file__).resolve().parents[1]


def runtime(root: Path | None, costs: dict[str, Any], **settings: Any) -> AttributionRuntime:
    def nothing() -> Any:
        raise AssertionError("frozen cases need no subject or HotpotQA cases")

    return AttributionRuntime(
        AttributionSettings(**settings),
        nothing,
        nothing,
        lambda nodeid, c: costs.__setitem__(nodeid, c),
        cache=RecordCache(root) if root is not None else None,
    )


@pytest.fixture(scope="module")
def real_auditor() -> Any:
    return runtime(None, {})._build()  # MiniLM + the shipped forest, built once here


@pytest.fixture(autouse=True)
def builds(real_auditor: Any, monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Every runtime builds the real verifier through this counter (one MiniLM load for
    the module)."""
    count: list[int] = []

    def build(self: AttributionRuntime) -> Any:
        count.append(1)
        return real_auditor

    monkeypatch.setattr(AttributionRuntime, "_build", build)
    return count


@pytest.fixture(scope="module")
def cases() -> list[TraceCase | ProbeCase]:
    traces = load_fixture_set(REPO / "fixtures" / "synthetic-mcp-traces").cases[:1]
    probes = load_fixture_set(REPO / "fixtures" / "hotpotqa-conflation-probes").cases[:1]
    out = [*traces, *probes]
    assert all(isinstance(c, (TraceCase, ProbeCase)) for c in out)
    return out  # type: ignore[return-value]


def test_a_cached_record_is_returned_without_building_the_verifier(
    tmp_path: Path, cases: list[TraceCase | ProbeCase], builds: list[int]
) -> None:
    costs: dict[str, Any] = {}
    cold = runtime(tmp_path / "attribution", costs)
    first = [cold.record(f"t[{c.id}]", c) for c in cases]
    assert len(builds) == 1  # it verified
    assert [costs[f"t[{c.id}]"]["record_cached"] for c in cases] == [False, False]
    assert len(list((tmp_path / "attribution").rglob("*.json"))) == 2

    warm = runtime(tmp_path / "attribution", costs)
    second = [warm.record(f"t[{c.id}]", c) for c in cases]
    assert second == first
    assert len(builds) == 1  # the warm runtime built no verifier: no MiniLM, no forest
    assert [costs[f"t[{c.id}]"]["record_cached"] for c in cases] == [True, True]
    assert warm.cache is not None and (warm.cache.hits, warm.cache.misses) == (2, 0)

    # the same records as a run without any cache
    assert [runtime(None, costs).record("t", c) for c in cases] == first


def test_anything_the_verifier_depends_on_changes_the_key(
    tmp_path: Path, cases: list[TraceCase | ProbeCase], monkeypatch: pytest.MonkeyPatch
) -> None:
    case = cases[0]
    base = runtime(tmp_path, {})
    key = base._key(case.kind, {"id": case.id})
    assert key == runtime(tmp_path, {})._key(case.kind, {"id": case.id})  # stable
    assert runtime(tmp_path, {}, threshold=0.5)._key(case.kind, {"id": case.id}) != key
    assert runtime(tmp_path, {}, repair_iterations=2)._key(case.kind, {"id": case.id}) != key
    table = tmp_path / "table.json"
    shutil.copy(SHIPPED_TABLE, table)
    with table.open("a", encoding="utf-8") as fh:
        fh.write("\n")  # same rows, other bytes: still another table file
    assert runtime(tmp_path, {}, table=table)._key(case.kind, {"id": case.id}) != key
    assert base._key(case.kind, {"id": case.id + "x"}) != key  # the inputs
    # another transformers / tokenizers / sentence-transformers: MiniLM's word pieces and
    # vectors may differ, so nothing is reused
    real_version = cache_module.package_version
    for name in ("transformers", "tokenizers", "sentence-transformers"):
        monkeypatch.setattr(
            cache_module,
            "package_version",
            lambda n, name=name: "0.0.0" if n == name else real_version(n),
        )
        assert runtime(tmp_path, {})._key(case.kind, {"id": case.id}) != key, name
    monkeypatch.setattr(cache_module, "package_version", real_version)
    # other code: the package's sources enter the key
    monkeypatch.setattr(cache_module, "code_digest", lambda: "0" * 64)
    assert runtime(tmp_path, {})._key(case.kind, {"id": case.id}) != key
    assert len(code_digest()) == 64


def test_a_changed_case_is_verified_again(
    tmp_path: Path, cases: list[TraceCase | ProbeCase]
) -> None:
    case = cases[0]
    assert isinstance(case, TraceCase)
    costs: dict[str, Any] = {}
    rt = runtime(tmp_path, costs)
    rt.record("a", case)
    edited = replace(case, request=case.request + " (edited)")
    record = rt.record("b", edited)
    assert costs["b"]["record_cached"] is False
    assert record["request"].endswith("(edited)")
    # where the case file lies is not an input of its record
    rt.record("c", replace(case, path="/elsewhere/case.json"))
    assert costs["c"]["record_cached"] is True


@pytest.mark.parametrize(
    "damage",
    [
        b"{not json",
        b'{"schema_version": 99, "key": "K", "record": {}, "graph": null}',
        b'{"schema_version": 1, "key": "another", "record": {}, "graph": null}',
        b'{"schema_version": 1, "key": "K", "record": [], "graph": null}',
    ],
)
def test_a_damaged_entry_warns_and_is_recomputed(
    tmp_path: Path, cases: list[TraceCase | ProbeCase], damage: bytes
) -> None:
    case = cases[1]
    costs: dict[str, Any] = {}
    want = runtime(tmp_path, costs).record("a", case)
    entries = list(tmp_path.rglob("*.json"))
    assert len(entries) == 1
    key = entries[0].stem
    entries[0].write_bytes(damage.replace(b'"K"', json.dumps(key).encode()))
    rt = runtime(tmp_path, costs)
    with pytest.warns(ProvenaiCacheWarning, match="attribution cache: .* dropped"):
        got = rt.record("b", case)
    assert got == want and costs["b"]["record_cached"] is False
    assert rt.cache is not None and rt.cache.corrupt == 1
    # recomputed and stored whole again
    assert runtime(tmp_path, costs).record("c", case) == want
    assert costs["c"]["record_cached"] is True


def test_the_key_takes_dataclasses_field_by_field(cases: list[TraceCase | ProbeCase]) -> None:
    case = cases[0]
    assert record_key({"r": 1}, "k", case) == record_key({"r": 1}, "k", asdict(case))
    assert record_key({"r": 1}, "k", case) != record_key({"r": 2}, "k", case)


def test_a_write_cut_off_leaves_nothing_a_rerun_trusts(
    tmp_path: Path, cases: list[TraceCase | ProbeCase]
) -> None:
    """A worker killed mid-write leaves only its temporary file (entries are written to a
    temp file and renamed): the rerun ignores it, verifies and stores the whole entry."""
    case = cases[1]
    costs: dict[str, Any] = {}
    rt = runtime(tmp_path, costs)
    key = rt._key(case.kind, frozen_case_inputs(case))
    assert key is not None
    entry = rt.cache.path(key) if rt.cache is not None else None
    assert entry is not None
    entry.parent.mkdir(parents=True)
    partial = entry.parent / f".{entry.name}.cut.tmp"
    partial.write_text('{"schema_version": 1, "key": "' + key + '", "record": {"case_id"')
    record = rt.record("a", case)
    assert costs["a"]["record_cached"] is False  # the partial write was not read
    assert json.loads(entry.read_text(encoding="utf-8"))["record"] == record

"""The attribution layer through the plugin (pytester): frozen traces and probes with the real
verifier (MiniLM + the shipped calibrated forest), MCP sessions with the scripted generator,
records identical without xdist and with -n 2, gates, results, summary, captured graphs that
replay, and every bad option value as one usage-error line."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from project import copy_fixture_set, make_project, results, run, write_ini

TRACE_TEST = """
import pytest

@pytest.mark.provenai_kind("mcp_trace", "conflation_probe")
@pytest.mark.attribution({gates})
def test_attr(provenai_case, provenai_attribution, provenai_record, provenai_attribution_snapshot):
    record = provenai_record(provenai_attribution(provenai_case))
    assert record == provenai_attribution_snapshot
"""

MCP_TEST = """
import pytest

@pytest.mark.attribution({gates})
def test_mcp(provenai_case, provenai_mcp, provenai_record, provenai_snapshot):
    record = provenai_record(provenai_mcp(provenai_case))
    assert record == provenai_snapshot
"""


def trace_project(pytester: pytest.Pytester, gates: str, *sets: str) -> Path:
    root = pytester.path
    for name in sets:
        copy_fixture_set(root, name)
    write_ini(pytester, [f"fixtures/{n}" for n in sets], scripted=False)
    pytester.makepyfile(test_attr=TRACE_TEST.format(gates=gates))
    return root


@pytest.mark.slow
def test_frozen_traces_and_probes_are_verified_gated_and_snapshotted(
    pytester: pytest.Pytester,
) -> None:
    root = trace_project(
        pytester,
        "trace_graph_complete=1.0, probe_block_rate=1.0, decomposition_precision=0.99",
        "synthetic-mcp-traces",
        "hotpotqa-conflation-probes",
    )
    result = run(pytester, "--snapshot-update", "--provenai-sample=3", "-p", "no:xdist")
    # 6 cases, 3 gates; decomposition_precision fails (0.96 on this sample: a split the
    # decomposer makes that the gold does not). A verifier gate would not do: the verifier
    # gets every claim of these 6 cases right since issue 23's second round
    result.assert_outcomes(passed=8, failed=1)
    data = results(root)
    recs = data["records"]["test_attr.py::test_attr"]
    assert len(recs) == 6
    traces = [r for r in recs if r["kind"] == "mcp_trace"]
    probes = [r for r in recs if r["kind"] == "conflation_probe"]
    assert len(traces) == 3 and len(probes) == 3
    verifier = traces[0]["attribution"]["verifier"]
    assert verifier["checker"]["kind"] == "random_forest"
    assert verifier["encoder"]["name"] == "sentence-transformers/all-MiniLM-L6-v2"
    assert "seconds" not in json.dumps(recs)  # no timings in records
    assert set(data["attribution_costs"]) == {
        f"test_attr.py::test_attr[{r['case_id']}]" for r in recs
    }
    metrics = data["aggregates"]["test_attr.py::test_attr"]["attribution"]
    assert metrics["probe_block_rate"]["denominator"] == 3  # one probe per probe record
    assert metrics["probe_block_rate"]["ci"] is not None
    assert "counts" in metrics["verdict_macro_f1"]  # pooled counts, one macro F1
    gate = {g["metric"]: g for g in data["gates"]}
    assert gate["trace_graph_complete"]["passed"]
    assert not gate["decomposition_precision"]["passed"]  # 0.99 is above what it measures
    assert result.ret == 1
    result.stdout.fnmatch_lines(
        [
            "*test_attr.py::test_attr: attribution n=6*",
            "*reject_f1*",
            "*FAIL test_attr.py::test_attr attribution.decomposition_precision*",
        ]
    )
    golden = sorted((root / "golden" / "attribution-verifier" / "test_attr").iterdir())
    assert len(golden) == 6
    assert not any(c["record_cached"] for c in data["attribution_costs"].values())
    again = run(pytester, "--provenai-sample=3", "-n", "2")
    again.assert_outcomes(passed=8, failed=1)  # the snapshots match: deterministic
    warm = results(root)
    assert warm["records"] == data["records"]
    # the rerun verified nothing: every record came from the attribution cache
    assert all(c["record_cached"] for c in warm["attribution_costs"].values())
    assert warm["cache"]["attribution_records_from_cache"] == 6
    again.stdout.fnmatch_lines(
        ["cache: 6 of 6 attribution records came from the cache (not verified again)"]
    )
    # a verifier option changes the recipe: nothing is reused
    other = run(
        pytester, "--provenai-sample=3", "-p", "no:xdist", "--provenai-verify-threshold=0.9"
    )
    assert other.ret == 1
    assert not any(c["record_cached"] for c in results(root)["attribution_costs"].values())


@pytest.mark.slow
def test_mcp_sessions_through_the_plugin_match_across_xdist(pytester: pytest.Pytester) -> None:
    root = make_project(pytester)
    pytester.makepyfile(
        test_audit=MCP_TEST.format(gates="trace_graph_complete=1.0, gold_access_rate=0.0")
    )
    plain = run(pytester, "--snapshot-update", "-p", "no:xdist", "--provenai-mcp-traces=graphs")
    plain.assert_outcomes(passed=5)  # 3 cases, 2 gates
    first = results(root)
    assert all(g["passed"] for g in first["gates"])
    recs = first["records"]["test_audit.py::test_mcp"]
    alpha = recs[0]["attribution"]
    assert [c["tool"] for c in alpha["calls"]] == ["get_example"] + ["get_evidence_document"] * 3
    assert alpha["graph"]["complete"] and not alpha["gold_access"]
    # what the generator produced and what each session cost: results JSON only, by item
    items = {f"test_audit.py::test_mcp[{r['case_id']}]" for r in recs}
    assert set(first["traces"]) == items and set(first["attribution_costs"]) == items
    assert first["traces"]["test_audit.py::test_mcp[case-alpha]"]["raw_output"]
    assert first["attribution_costs"]["test_audit.py::test_mcp[case-alpha]"]["tool_calls"] == 4
    assert alpha["answers"][0]["cites"] and alpha["answers"][0]["claims"]
    graph = root / "graphs" / "case-alpha.json"
    from pytest_provenai._io import dumps_stable, sha256_text

    assert sha256_text(dumps_stable(json.loads(graph.read_text()))) == alpha["graph"]["sha256"]
    replayed = pytester.run(
        sys.executable,
        "-m",
        "pytest_provenai.cli",
        "mcp",
        "replay",
        str(graph),
        "--fixtures",
        str(root / "fixtures" / "mini"),
    )
    assert replayed.ret == 0, replayed.stderr.str()
    spread = run(pytester, "-n", "2", "--provenai-mcp-traces=graphs2")
    spread.assert_outcomes(passed=5)
    assert results(root)["records"] == first["records"]
    # a sampled run tests fewer cases but its tools serve the same corpus: same records
    sampled = run(pytester, "-p", "no:xdist", "--provenai-sample=1", "--provenai-no-cache")
    sampled.assert_outcomes(passed=3)
    (one,) = results(root)["records"]["test_audit.py::test_mcp"]
    assert one == next(r for r in recs if r["case_id"] == one["case_id"])


@pytest.mark.parametrize(
    ("blocked", "test_file", "extra"),
    [("sklearn", TRACE_TEST, "scikit-learn"), ("mcp", MCP_TEST, "mcp")],
)
def test_a_missing_library_is_one_line_naming_the_extra(
    pytester: pytest.Pytester, blocked: str, test_file: str, extra: str
) -> None:
    if test_file is TRACE_TEST:
        trace_project(pytester, "trace_graph_complete=1.0", "synthetic-mcp-traces")
    else:
        make_project(pytester)
        pytester.makepyfile(test_audit=MCP_TEST.format(gates="trace_graph_complete=1.0"))
    pytester.makeconftest(f"import sys\nsys.modules[{blocked!r}] = None\n")
    result = run(pytester, "-p", "no:xdist")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stdout.fnmatch_lines(
        [
            f"*provenai: {extra} is not installed; install the attribution extra: "
            "pip install 'pytest-provenai[[]attribution[]]'*"
        ]
    )

"""The report's inputs and wiring without a browser: trace summaries kept beside records
(never in them), the page rendered from results alone, --provenai-report at the end of a run
(merged across xdist workers), its option checks."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from project import make_project, results, run

from pytest_provenai.options import Settings
from pytest_provenai.report.html import render_report, script_json
from pytest_provenai.report.results import load_results
from pytest_provenai.report.view import case_rows
from pytest_provenai.session import ProvenaiSession
from pytest_provenai.subject.backends.base import Decoding, Identity
from pytest_provenai.subject.trace import Resource, Trace


def settings() -> Settings:
    return Settings(
        backend="transformers",
        model=None,
        pipeline=None,
        fixtures=(),
        sample=None,
        seed=42,
        results=None,
        golden=Path("golden"),
        cache=None,
        device="cpu",
        devices=(),
        max_new_tokens=8,
    )


def trace(case_id: str, raw: str) -> Trace:
    identity = Identity("x", "m", "0" * 64, "none", Decoding(), "cpu")
    return Trace(
        case_id=case_id,
        resources=[Resource("R0", "Title \ud800 zero", "text", "a" * 64)],
        raw_output=raw,
        answer="yes",
        cited_ids=["R0"],
        invalid_citations=[],
        identity=identity,
    )


def test_a_trace_goes_to_the_results_traces_never_into_the_record() -> None:
    s = ProvenaiSession(settings=settings())
    kept = s.add_record(
        "t.py::test_a[c1]", "t.py::test_a", {"case_id": "c1"}, trace("c1", "Answer: yes [R0]")
    )
    assert kept == {"case_id": "c1"}
    s.absorb_report(
        "t.py::test_a[c1]",
        failed=False,
        skipped=False,
        duration=0.1,
        payload=s.report_payload("t.py::test_a[c1]"),
    )
    r = s.finish()
    assert r.records["t.py::test_a"] == [{"case_id": "c1"}]
    t = r.traces["t.py::test_a[c1]"]
    assert t["raw_output"] == "Answer: yes [R0]" and t["cited_ids"] == ["R0"]
    assert t["resources"] == [{"id": "R0", "title": "Title \ufffd zero", "sha256": "a" * 64}]
    row = case_rows(r)[0]
    assert row["trace"] == t and row["node"] == "t.py::test_a[c1]"


def test_script_json_cannot_close_its_element() -> None:
    text = script_json({"t": "</script><script>alert(1)</script>&\u2028"})
    assert "<" not in text and ">" not in text and "&" not in text and "\u2028" not in text
    assert json.loads(text) == {"t": "</script><script>alert(1)</script>&\u2028"}


def test_the_page_pins_its_own_script_by_hash(tmp_path: Path, pytester: pytest.Pytester) -> None:
    root = make_project(pytester)
    run(pytester, "--snapshot-update").assert_outcomes(passed=4)
    page = render_report(load_results(root / "results.json"))
    import base64
    import hashlib

    scripts = re.findall(r"<script>(.*?)</script>", page, flags=re.S)
    assert len(scripts) == 1
    digest = base64.b64encode(hashlib.sha256(scripts[0].encode()).digest()).decode()
    assert f"script-src &#39;sha256-{digest}&#39;" in page


@pytest.mark.parametrize("mode", [["-p", "no:xdist"], ["-n", "2"]])
def test_report_is_written_at_the_end_of_the_run(
    pytester: pytest.Pytester, mode: list[str]
) -> None:
    root = make_project(pytester)
    result = run(pytester, *mode, "--snapshot-update", "--provenai-report=out/report.html")
    result.assert_outcomes(passed=4)
    page = (root / "out" / "report.html").read_text(encoding="utf-8")
    found = re.search(
        r'<script type="application/json" id="provenai-data">(.*?)</script>', page, re.S
    )
    assert found is not None
    data = json.loads(found[1])
    assert sorted(c["case_id"] for c in data["cases"]) == ["case-alpha", "case-beta", "case-gamma"]
    assert data["run_id"] == results(root)["run"]["id"]
    result.stdout.fnmatch_lines(["*report: *out/report.html*"])

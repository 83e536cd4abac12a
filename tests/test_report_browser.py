"""The HTML report in a real browser: Debian's chromium driven by Playwright for Python.

One small real run (tests/report_project.py: the plugin audits HotpotQA-style, exposure and
quotation cases with the scripted generator and writes results.json + report.html) and one
browser for the whole module. Checked: no console errors and no network request; every
overview number equals the results JSON; clicking a case opens its drill-down; the filters
and the search change the visible rows; case text holding HTML/JS is shown as text and runs
nothing; the attribution drill-down highlights claims by their byte ranges. Screenshots go
to ``test-artifacts/`` (or ``$PROVENAI_TEST_ARTIFACTS``).

Skips with one line only where no browser can be had: Playwright not installed, or no
``chromium`` on PATH (``make test`` installs Debian's with apt-get where it runs as root).
"""

from __future__ import annotations

import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from project import RECORDS
from report_project import build_run, results_of

from pytest_provenai.report.html import render_report, write_html
from pytest_provenai.report.results import load_results

ROOT = Path(__file__).resolve().parent.parent
ARTIFACTS = Path(os.environ.get("PROVENAI_TEST_ARTIFACTS", ROOT / "test-artifacts"))
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
XSS = "<script>alert(1)</script>"


def _chromium() -> str:
    found = os.environ.get("PROVENAI_CHROMIUM") or shutil.which("chromium")
    found = found or shutil.which("chromium-browser")
    if not found:
        pytest.skip("no chromium on PATH (make test installs Debian's chromium when run as root)")
    return found


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    sync_api = pytest.importorskip(
        "playwright.sync_api", reason="playwright not installed: pip install '.[browser]'"
    )
    executable = _chromium()
    with tempfile.TemporaryDirectory(prefix="provenai-chromium-") as profile:
        pw = sync_api.sync_playwright().start()
        try:
            context = pw.chromium.launch_persistent_context(
                profile,
                executable_path=executable,
                headless=True,
                args=CHROMIUM_ARGS,
                viewport={"width": 1400, "height": 1000},
            )
            yield context
            context.close()
        finally:
            pw.stop()


class Page:
    """A page opened on a report, with what it logged."""

    def __init__(self, context: Any, path: Path) -> None:
        self.errors: list[str] = []
        self.requests: list[str] = []
        self.dialogs: list[str] = []
        self.page = context.new_page()
        self.page.on("console", self._console)
        self.page.on("pageerror", lambda e: self.errors.append(str(e)))
        self.page.on("request", lambda r: self.requests.append(r.url))
        self.page.on("dialog", self._dialog)
        self.page.goto(path.as_uri())
        self.page.wait_for_selector("body[data-ready=true]")

    def _dialog(self, dialog: Any) -> None:
        self.dialogs.append(dialog.message)
        dialog.dismiss()

    def _console(self, message: Any) -> None:
        if message.type in ("error", "warning"):
            self.errors.append(message.text)

    def shown(self) -> int:
        return int(self.page.get_attribute("#shown", "data-shown"))

    def visible_cases(self) -> list[tuple[str, str]]:
        return [
            (c, t)
            for c, t in self.page.eval_on_selector_all(
                "#case-rows tr:not([hidden])",
                "rows => rows.map(r => [r.dataset.case, r.children[1].title])",
            )
        ]

    def select(self, selector: str, value: str) -> None:
        self.page.select_option(selector, value)

    def search(self, text: str) -> None:
        self.page.fill("#f-search", text)
        self.page.wait_for_selector("body:not([data-busy])", state="attached")

    def close(self) -> None:
        self.page.close()


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("report-run")
    proc = build_run(root)
    # two gates fail on purpose (citation_f1, aid_value_leak_rate): exit 1, report written
    assert proc.returncode == 1, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert (root / "report.html").is_file()
    return root


@pytest.fixture
def page(browser: Any, run: Path) -> Iterator[Page]:
    p = Page(browser, run / "report.html")
    yield p
    assert p.errors == [], p.errors
    assert all(u.startswith("file:") for u in p.requests), p.requests
    p.close()


def _float(text: str | None) -> float | None:
    return None if text is None or text == "" else float(text)


def test_overview_numbers_equal_the_results_json(page: Page, run: Path) -> None:
    data = results_of(run)
    pg = page.page
    # gates: outcome, value, n — one row each, in the JSON's order
    rows = pg.eval_on_selector_all(
        "tr.gate",
        "rs => rs.map(r => [r.dataset.test, r.dataset.metric, r.dataset.value, "
        "r.dataset.passed, r.dataset.n, r.children[3].textContent.trim()])",
    )
    assert len(rows) == len(data["gates"]) == 7
    for (test, metric, value, passed, n, shown), g in zip(rows, data["gates"], strict=True):
        assert (test, metric) == (g["test"], f"{g['marker']}.{g['metric']}")
        assert _float(value) == g["value"] and shown == f"{g['value']:.4f}"
        assert passed == ("true" if g["passed"] else "false") and int(n) == g["n"]
    failed = sum(not g["passed"] for g in data["gates"])
    assert pg.text_content("#gate-badge") == f"gates: {7 - failed} passed, {failed} failed"
    # aggregates: every metric row of every test equals the JSON's value
    metric_rows = pg.eval_on_selector_all(
        "table.metrics tr[data-metric]",
        "rs => rs.map(r => [r.dataset.test, r.dataset.metric, r.dataset.value, "
        "r.children[1].textContent.trim()])",
    )
    expected: dict[tuple[str, str], Any] = {}
    for test, agg in data["aggregates"].items():
        summaries = {
            **agg.get("metrics", {}),
            **agg.get("retrieval", {}),
            **(agg.get("influence") or {}).get("metrics", {}),
        }
        for name, m in summaries.items():
            expected[(test, name)] = m["value"]
    for test, prov in data["provenance"].items():
        for name, m in prov["metrics"].items():
            expected[(test, name)] = m["value"]
    seen = {(t, m): (_float(v), shown) for t, m, v, shown in metric_rows}
    assert set(seen) == set(expected)
    for key, value in expected.items():
        assert seen[key][0] == value, key
        assert seen[key][1] == (f"{value:.3f}" if value is not None else "n/a"), key
    # influence verdict distribution and the gap
    inf = data["aggregates"]["test_influence.py::test_inf"]["influence"]
    counts = dict(
        pg.eval_on_selector_all(
            "figure.verdicts text.count", "ts => ts.map(t => [t.dataset.verdict, t.dataset.value])"
        )
    )
    assert {k: int(v) for k, v in counts.items()} == inf["verdicts"]
    assert int(pg.get_attribute("figure.gap .gap-cases", "data-value")) == inf["gap_cases"]
    # the exposure heat map
    matrix = data["provenance"]["test_prov.py::test_no_answer"]["exposure_matrix"]["treatments"]
    cells = pg.eval_on_selector_all(
        "table.heat td[data-metric]",
        "cs => cs.map(c => [c.parentElement.dataset.treatment, c.dataset.metric, c.dataset.value])",
    )
    assert len(cells) == 15
    for treatment, metric, value in cells:
        assert _float(value) == matrix[treatment][metric]["value"]
    n_records = sum(len(r) for r in data["records"].values())
    assert page.shown() == n_records == 11
    assert pg.text_content("#run-id") == data["run"]["id"]
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    pg.screenshot(path=str(ARTIFACTS / "report-overview.png"), full_page=True)


def test_clicking_a_case_opens_its_drilldown(page: Page, run: Path) -> None:
    pg = page.page
    assert pg.is_hidden("#drill")
    pg.click("#case-rows tr[data-case='case-alpha']:has(td[title='test_influence.py::test_inf'])")
    assert pg.is_visible("#drill")
    drill = pg.text_content("#drill-body")
    assert "Which river flows through Alphaville?" in drill
    assert "Answer: Blue River [R0]" in drill  # the raw output, from the trace
    rows = pg.eval_on_selector_all(
        "#drill-body table.resources tbody tr",
        "rs => rs.map(r => [...r.children].map(c => c.textContent.trim()))",
    )
    record = next(
        r
        for r in results_of(run)["records"]["test_influence.py::test_inf"]
        if r["case_id"] == "case-alpha"
    )
    resources = record["influence"]["resources"]
    assert [r[0] for r in rows] == sorted(resources)
    r0 = rows[0]
    assert r0[1] == "Alphaville" and r0[2] == "yes" and r0[3] == "yes"
    assert r0[6].endswith(f"{resources['R0']['phi']:.3f}")
    assert r0[8] == "used" and r0[9].startswith("unknown")  # the answer without R0
    pg.screenshot(path=str(ARTIFACTS / "report-drilldown.png"))
    pg.click("#drill-close")
    assert pg.is_hidden("#drill")


def test_filters_and_search_change_the_visible_rows(page: Page, run: Path) -> None:
    data = results_of(run)
    all_rows = page.visible_cases()
    assert len(all_rows) == 11
    page.select("#f-test", "test_influence.py::test_inf")
    assert page.shown() == 3
    assert {t for _, t in page.visible_cases()} == {"test_influence.py::test_inf"}
    page.select("#f-tag", "uncited_influential")
    expected = sorted(
        r["case_id"]
        for r in data["records"]["test_influence.py::test_inf"]
        if r["influence"]["verdicts"]["uncited_influential"]
    )
    assert sorted(c for c, _ in page.visible_cases()) == expected == ["case-gamma"]
    page.select("#f-tag", "")
    page.select("#f-gap", "gap")
    assert page.shown() == 3  # every influence case shows the gap here
    page.select("#f-test", "")
    page.select("#f-gap", "unmeasured")
    assert page.shown() == 8  # cases without an influence layer
    page.select("#f-gap", "")
    page.select("#f-set", "quote")
    assert sorted(c for c, _ in page.visible_cases()) == ["q-generated", "q-match"]
    page.select("#f-set", "")
    page.search("zeta corp")
    assert sorted(t for c, t in page.visible_cases() if c == "case-gamma") == [
        "test_audit.py::test_fid",
        "test_influence.py::test_inf",
    ]
    assert page.shown() == 2
    page.search("")
    # sorting by F1 descending puts the n/a provenance rows last
    page.page.click("#case-table th[data-sort='f1']")
    page.page.click("#case-table th[data-sort='f1']")
    order = [c for c, _ in page.visible_cases()]
    assert order[-1].startswith(("na-", "q-")) and order[0].startswith("case-")


def test_case_text_with_html_is_shown_as_text_and_runs_nothing(
    browser: Any, tmp_path: Path
) -> None:
    records = json.loads(json.dumps(RECORDS))
    alpha = records[0]
    alpha["context"][2][0] = XSS  # a title
    alpha["question"] = (
        'Which river flows through "Alphaville" </script><img src=x onerror=alert(2)>?'
    )
    alpha["context"][1][1][1] = " " + "x" * 6000  # a very long line
    proc = build_run(tmp_path, records=records, provenance=False)
    assert proc.returncode in (0, 1), proc.stdout[-3000:]
    html = (tmp_path / "report.html").read_text(encoding="utf-8")
    assert XSS not in html and "<img src=x" not in html
    page = Page(browser, tmp_path / "report.html")
    try:
        page.page.click(
            "#case-rows tr[data-case='case-alpha']:has(td[title='test_influence.py::test_inf'])"
        )
        titles = page.page.eval_on_selector_all(
            "#drill-body table.resources tbody tr td:nth-child(2)",
            "cs => cs.map(c => c.textContent)",
        )
        assert XSS in titles
        assert "</script><img src=x onerror=alert(2)>" in page.page.text_content("#drill-body")
        assert (
            page.page.eval_on_selector_all("#drill-body script, #drill-body img", "xs => xs.length")
            == 0
        )
        page.page.wait_for_timeout(200)
        assert page.dialogs == []
        assert page.errors == [], page.errors
        assert all(u.startswith("file:") for u in page.requests), page.requests
    finally:
        page.close()


ATTRIBUTION_TEXT = (
    "Le café opened in 1921, the record says. The search results say it has 40 seats."
)


def _claim(text: str, part: str, index: int, verdict: str, source: str) -> dict[str, Any]:
    start = text.encode("utf-8").index(part.encode("utf-8"))
    return {
        "index": index,
        "text": part,
        "range": [start, start + len(part.encode("utf-8"))],
        "factual": True,
        "verdict": verdict,
        "reasons": [] if verdict == "supported" else ["conflation"],
        "source": source,
        "tool": "get_record" if source == "rec-1" else "search_web",
        "family": "record" if source == "rec-1" else "search",
        "route": {"score": 0.81, "margin": 0.12, "status": "routed"},
        "p_support": 0.9 if verdict == "supported" else 0.2,
        "threshold": 0.65,
        "attribution": {"family": "record", "compatible": verdict == "supported"},
        "missing_values": [],
        "gold": {"verdict": verdict, "gold_source": source},
    }


def attribution_results(run: Path) -> Any:
    """The real run's results plus one hand-made attribution record (the shape issue 11's
    layer writes, documented in report.html.j2)."""
    results = load_results(run / "results.json")
    text = ATTRIBUTION_TEXT
    record = {
        "case_id": "attr-cafe",
        "suite": "attribution",
        "fixture_set": "synthetic-traces",
        "kind": "mcp_trace",
        "request": "When did Le café open, and how many seats does it have?",
        "attribution": {
            "verifier": {"name": "forest"},
            "graph": {"sha256": "ab" * 32, "complete": True},
            "answers": [
                {
                    "id": "a1",
                    "role": "answer",
                    "text": text,
                    "expected": "block",
                    "verdict": {"verdict": "block", "reasons": ["conflation"]},
                    "claims": [
                        _claim(
                            text,
                            "Le café opened in 1921, the record says.",
                            0,
                            "supported",
                            "rec-1",
                        ),
                        _claim(
                            text, "The search results say it has 40 seats.", 1, "conflated", "rec-1"
                        ),
                    ],
                    "repair": {
                        "attempted": True,
                        "method": "rewrite",
                        "passed": True,
                        "final_text": "Le café opened in 1921, the record says.",
                    },
                }
            ],
        },
    }
    results.records["suites/test_attribution.py::test_trace"] = [record]
    return results


def test_attribution_claims_are_highlighted_in_the_answer(
    browser: Any, run: Path, tmp_path: Path
) -> None:
    out = tmp_path / "attribution.html"
    write_html(out, render_report(attribution_results(run)))
    page = Page(browser, out)
    try:
        page.page.click("#case-rows tr[data-case='attr-cafe']")
        marks = page.page.eval_on_selector_all(
            "#drill-body mark.claim", "ms => ms.map(m => [m.className, m.textContent])"
        )
        assert marks == [
            ["claim supported", "Le café opened in 1921, the record says."],
            ["claim conflated", "The search results say it has 40 seats."],
        ]
        body = page.page.text_content("#drill-body")
        assert "block" in body and "rec-1" in body and "get_record / record" in body
        assert page.errors == []
        page.page.screenshot(path=str(ARTIFACTS / "report-attribution.png"))
    finally:
        page.close()

"""Scale of the HTML report: file size, render time and browser load time at N cases;
prints a Markdown table (not a test).

    .venv/bin/python benchmarks/bench_report.py [--cases 61,2000,5000] [--runs 3]
        [--screenshot docs/report.png] [--out DIR]

The records are the shipped audit's real records: the golden snapshots of the default model
(golden/SmolLM2-135M-Instruct: fidelity and influence over the 61 HotpotQA dev cases,
provenance over the synthetic sets), built into a RunResults exactly as a run builds it
(report.results.build_results, the shipped suites' gates). For N beyond the 61 influence
cases the influence records are repeated with new case ids (``<id>~<k>``), so each case
carries a full 10-resource influence layer, the heaviest record the suites write. Trace
summaries carry each case's real resource titles from the fixture sets; the golden files
keep no raw output, so the report says so.

Measured per N: rendering in Python (RunResults -> HTML string) and file size; then in
headless Chromium (Debian's, via Playwright; skipped when absent) from navigation to the
page's ``data-ready`` mark, a filter change (test + verdict), a search, and opening a case's
drill-down — each the median of ``--runs`` fresh page loads.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import platform
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from pytest_provenai import gates as gates_mod  # noqa: E402
from pytest_provenai.frozen.load import load_fixture_set  # noqa: E402
from pytest_provenai.frozen.model import Case  # noqa: E402
from pytest_provenai.report.html import render_report, write_html  # noqa: E402
from pytest_provenai.report.results import RunResults, build_results  # noqa: E402
from pytest_provenai.subject.prompt import make_resources  # noqa: E402

GOLDEN = ROOT / "golden" / "SmolLM2-135M-Instruct"
CHROMIUM_ARGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def shipped_gates() -> dict[str, list[gates_mod.GateSpec]]:
    """The shipped suites' gates, read from their markers."""
    out: dict[str, list[gates_mod.GateSpec]] = {}
    for path in sorted((ROOT / "suites").glob("test_*.py")):
        spec = importlib.util.spec_from_file_location(f"suite_{path.stem}", path)
        assert spec and spec.loader
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
        for name in dir(module):
            fn = getattr(module, name)
            for mark in getattr(fn, "pytestmark", []):
                if mark.name in gates_mod.MARKERS:
                    test = f"suites/{path.name}::{name}"
                    out.setdefault(test, []).extend(
                        gates_mod.parse_marker(test, mark.name, mark.kwargs)
                    )
    return out


def titles_by_case() -> dict[str, list[dict[str, str]]]:
    out = {}
    for name in ("hotpotqa-dev60", "hotpotqa-dev-first1"):
        for case in load_fixture_set(ROOT / "fixtures" / name).cases:
            assert isinstance(case, Case)
            out[case.id] = [
                {"id": r.id, "title": r.title, "sha256": r.sha256}
                for r in make_resources(case.sources)
            ]
    return out


def golden_records() -> dict[str, list[dict[str, Any]]]:
    records: dict[str, list[dict[str, Any]]] = {}
    for folder in sorted(GOLDEN.iterdir()):
        for path in sorted(folder.glob("*.json")):
            test_name = path.name.split("[", 1)[0]
            test = f"suites/{folder.name}.py::{test_name}"
            records.setdefault(test, []).append(json.loads(path.read_text())["record"])
    return records


def build(n_influence: int | None) -> RunResults:
    records = golden_records()
    inf_test = "suites/test_influence.py::test_influence"
    if n_influence is not None:
        base = records[inf_test]
        grown = []
        for k in range(n_influence):
            rec = json.loads(json.dumps(base[k % len(base)]))
            if k >= len(base):
                rec["case_id"] = f"{rec['case_id']}~{k // len(base)}"
            grown.append(rec)
        records[inf_test] = grown
    titles = titles_by_case()
    traces = {}
    for test, recs in records.items():
        for rec in recs:
            plain = rec["case_id"].split("~", 1)[0]
            if plain in titles:
                traces[f"{test}[{rec['case_id']}]"] = {
                    "case_id": rec["case_id"],
                    "raw_output": None,  # not in golden files
                    "answer": rec["answer"]["prediction"],
                    "cited_ids": rec["citation"]["cited_ids"],
                    "invalid_citations": rec["citation"]["invalid_citations"],
                    "repairs": [],
                    "resources": titles[plain],
                    "cached": True,
                    "seconds": 0.0,
                }
    specs = shipped_gates()
    gate_results = [
        gates_mod.evaluate(s, records.get(s.test, []), seed=42)
        for test in sorted(specs)
        for s in specs[test]
    ]
    model = records["suites/test_fidelity.py::test_fidelity"][0]["model"]
    return build_results(
        run={"id": "golden-records", "started": "", "finished": "", "git_revision": None},
        models={"main": {**model, "backend": "transformers", "dtype": "float32", "device": "cpu"}},
        options={"seed": 42, "ablation": "exact", "retrieval": "distractor", "k": 10},
        records=records,
        gates=gate_results,
        fixture_errors=[],
        produced_by={},
        influence_costs={},
        timings={},
        cache={},
        seed=42,
        traces=traces,
    )


IN_PAGE = """([id, value]) => {
  const t = performance.now();
  const el = document.getElementById(id);
  el.value = value;
  el.dispatchEvent(new Event(id === "f-search" ? "input" : "change"));
  return performance.now() - t;
}"""


def browser_times(path: Path, runs: int) -> dict[str, float] | None:
    """Milliseconds measured inside the page (performance.now), so Playwright's own round
    trips do not count: navigation start to the page's ready mark; a filter change (test,
    then verdict); opening a drill-down. The search is debounced by 120 ms; it is timed as
    the refresh it triggers."""
    chromium = shutil.which("chromium")
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        return None
    if not chromium:
        return None
    got: dict[str, list[float]] = {"load": [], "filter": [], "search": [], "drill": []}
    with sync_playwright() as pw, tempfile.TemporaryDirectory() as profile:
        ctx = pw.chromium.launch_persistent_context(
            profile,
            executable_path=chromium,
            headless=True,
            args=CHROMIUM_ARGS,
            viewport={"width": 1400, "height": 1000},
        )
        for _ in range(runs):
            page = ctx.new_page()
            page.goto(path.as_uri())
            page.wait_for_selector("body[data-ready=true]", timeout=120_000)
            got["load"].append(float(page.get_attribute("body", "data-ready-ms") or "nan"))
            got["filter"].append(
                page.evaluate(IN_PAGE, ["f-test", "suites/test_influence.py::test_influence"])
                + page.evaluate(IN_PAGE, ["f-tag", "uncited_influential"])
            )
            page.evaluate("document.getElementById('f-search').value = 'nationality'")
            got["search"].append(
                page.evaluate(
                    """() => { const t = performance.now();
                       document.getElementById('f-search').dispatchEvent(new Event('input'));
                       return new Promise(done => { const wait = () =>
                         document.body.hasAttribute('data-busy') ? setTimeout(wait, 5)
                         : done(performance.now() - t - 120); wait(); }); }"""
                )
            )
            got["drill"].append(
                page.evaluate(
                    """() => { const t = performance.now();
                       document.querySelector('#case-rows tr').click();
                       return performance.now() - t; }"""
                )
            )
            page.close()
        ctx.close()
    return {k: statistics.median(v) / 1000 for k, v in got.items()}


def screenshot(path: Path, out: Path) -> None:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as pw, tempfile.TemporaryDirectory() as profile:
        ctx = pw.chromium.launch_persistent_context(
            profile,
            executable_path=shutil.which("chromium"),
            headless=True,
            args=CHROMIUM_ARGS,
            viewport={"width": 1280, "height": 860},
            device_scale_factor=1,
        )
        page = ctx.new_page()
        page.goto(path.as_uri())
        page.wait_for_selector("body[data-ready=true]")
        page.select_option("#f-test", "suites/test_influence.py::test_influence")
        page.fill("#f-search", "Scott Derrickson")
        page.click("#case-rows tr:not([hidden])")
        page.wait_for_selector("#drill:not([hidden])")
        page.evaluate("document.querySelector('#aggregates').scrollIntoView()")
        page.screenshot(path=str(out), type="png")
        ctx.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n", 1)[0])
    ap.add_argument("--cases", default="61,2000,5000", help="influence cases per size")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--out", default=None, help="keep the pages in this folder")
    ap.add_argument("--screenshot", default=None, help="write a PNG of the 61-case report")
    args = ap.parse_args()
    out = Path(args.out or tempfile.mkdtemp(prefix="bench-report-"))
    out.mkdir(parents=True, exist_ok=True)
    print(f"machine: {platform.machine()}, {platform.system()}, Python {platform.python_version()}")
    print()
    print(
        "| influence cases | all records | build results s | render s | file size | "
        "load (to ready) s | filter s | search s | drill-down s |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for n in (int(x) for x in args.cases.split(",")):
        t = time.perf_counter()
        results = build(n)
        built = time.perf_counter() - t
        t = time.perf_counter()
        page = render_report(results)
        rendered = time.perf_counter() - t
        path = out / f"report-{n}.html"
        write_html(path, page)
        size = path.stat().st_size / 1e6
        times = browser_times(path, args.runs)
        cells = (
            [f"{times[k]:.2f}" for k in ("load", "filter", "search", "drill")]
            if times
            else ["(no chromium)"] * 4
        )
        total = sum(len(r) for r in results.records.values())
        print(
            f"| {n:,} | {total:,} | {built:.1f} | {rendered:.2f} | {size:.1f} MB | "
            + " | ".join(cells)
            + " |"
        )
        if args.screenshot and n == min(int(x) for x in args.cases.split(",")):
            screenshot(path, Path(args.screenshot))
    print()
    print(f"pages in {out}")


if __name__ == "__main__":
    main()

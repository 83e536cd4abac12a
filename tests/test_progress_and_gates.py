"""The progress line (progress.py) and gates as test outcomes (``--junitxml``)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest
from project import GOOD_SCRIPT, make_project, results, run

from pytest_provenai.progress import LiveStatus, Progress, ProgressReporter, fmt_duration


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_line_counts_cases_and_gives_an_eta_from_the_measured_time() -> None:
    clock = Clock()
    p = Progress(clock)
    cases = {f"t.py::test_a[c{i}]" for i in range(10)}
    assert p.line(set(), []) is None  # nothing to audit: no line
    assert p.line(cases, []) == "provenai 0/10 cases · ETA unknown"
    clock.now += 40
    p.finish("t.py::test_a[c0]", 19.0)
    p.finish("t.py::test_a[c1]", 21.0)
    p.finish("t.py::other", 5.0)  # not a case item: neither counted nor named
    assert p.line(cases, []) == "provenai 2/10 cases · t.py::test_a · 20.0 s/case · ETA 2m40s"
    assert fmt_duration(3 * 3600 + 120) == "3h02m"


INFLUENCE = "suites/test_influence.py::test_influence"
ATTRIBUTION = "suites/test_attribution.py::test_attribution"


def two_suites(influence: int = 10, attribution: int = 100) -> set[str]:
    return {f"{INFLUENCE}[i{k}]" for k in range(influence)} | {
        f"{ATTRIBUTION}[a{k}]" for k in range(attribution)
    }


def test_eta_weighs_each_test_functions_own_cost_per_case() -> None:
    """Issue 22 item 8: 100 attribution cases at 0.6 s and 2 of 10 influence cases at 60 s
    done; the 8 influence cases left take 8 min, not 8 × the overall mean (≈ 1.8 s)."""
    clock = Clock()
    p = Progress(clock)
    cases = two_suites()
    p.finish(f"{INFLUENCE}[i0]", 59.0)
    p.finish(f"{INFLUENCE}[i1]", 61.0)
    for k in range(100):
        clock.now += 0.6
        p.finish(f"{ATTRIBUTION}[a{k}]", 0.6)
    assert p.line(cases, []) == f"provenai 102/110 cases · {ATTRIBUTION} · 0.6 s/case · ETA 8m00s"
    clock.now += 3600  # the wall clock plays no part in the estimate
    p.finish(f"{INFLUENCE}[i2]", 60.0)
    assert p.line(cases, []) == f"provenai 103/110 cases · {INFLUENCE} · 60.0 s/case · ETA 7m00s"
    # the other way round: the cheap cases left cost their own time, not the costly mean
    p = Progress(clock)
    for k in range(10):
        p.finish(f"{INFLUENCE}[i{k}]", 60.0)
    for k in range(50):
        p.finish(f"{ATTRIBUTION}[a{k}]", 0.6)
    assert p.line(cases, []) == f"provenai 60/110 cases · {ATTRIBUTION} · 0.6 s/case · ETA 30s"


def test_eta_is_unknown_while_a_remaining_test_has_no_finished_case() -> None:
    p = Progress(Clock())
    cases = two_suites(influence=3, attribution=3)
    for k in range(3):
        p.finish(f"{ATTRIBUTION}[a{k}]", 0.6)
        line = p.line(cases, [])
        assert line == f"provenai {k + 1}/6 cases · {ATTRIBUTION} · 0.6 s/case · ETA unknown"
    p.finish(f"{INFLUENCE}[i0]", 60.0)  # measured now; attribution has none left
    assert p.line(cases, []) == f"provenai 4/6 cases · {INFLUENCE} · 60.0 s/case · ETA 2m00s"
    p.finish(f"{INFLUENCE}[i1]", 60.0)
    p.finish(f"{INFLUENCE}[i2]", 60.0)
    assert p.line(cases, []) == f"provenai 6/6 cases · {INFLUENCE} · 60.0 s/case"


def test_eta_divides_the_work_among_the_processes_running_cases() -> None:
    cases = two_suites(influence=10, attribution=0)
    p = Progress(Clock(), workers=4)
    p.finish(f"{INFLUENCE}[i0]", 60.0)
    p.finish(f"{INFLUENCE}[i1]", 60.0)
    assert (p.line(cases, []) or "").endswith("ETA 2m00s")  # 8 × 60 s / 4
    for k in range(2, 8):
        p.finish(f"{INFLUENCE}[i{k}]", 60.0)
    assert (p.line(cases, []) or "").endswith("ETA 1m00s")  # 2 left: 2 of the 4 work
    # more workers reporting than configured (e.g. --tx given otherwise) count too
    p = Progress(Clock(), workers=1)
    p.finish(f"{INFLUENCE}[i0]", 60.0, worker="gw0")
    p.finish(f"{INFLUENCE}[i1]", 60.0, worker="gw1")
    p.finish(f"{INFLUENCE}[i2]", 60.0, worker="gw1")
    assert (p.line(cases, []) or "").endswith("ETA 3m30s")  # 7 × 60 s / 2


def test_reporter_times_a_case_over_setup_call_and_teardown() -> None:
    lines: list[str] = []
    cases = two_suites(influence=2, attribution=0)
    reporter = ProgressReporter(
        mode="plain",
        every=0.0,
        cases=lambda: cases,
        running=lambda: [],
        write_line=lines.append,
        column=lambda: 0,
        workers=1,
    )

    def report(nodeid: str, when: str, duration: float, **extra: Any) -> Any:
        return SimpleNamespace(nodeid=nodeid, when=when, duration=duration, **extra)

    reporter.pytest_runtest_logreport(report(f"{INFLUENCE}[i0]", "setup", 30.0))
    reporter.pytest_runtest_logreport(report("x::gate[m]", "teardown", 9.0, provenai_gate=True))
    reporter.pytest_runtest_logreport(report(f"{INFLUENCE}[i0]", "call", 29.5))
    reporter.pytest_runtest_logreport(report(f"{INFLUENCE}[i0]", "teardown", 0.5))
    assert lines == [f"provenai 1/2 cases · {INFLUENCE} · 60.0 s/case · ETA 1m00s"]
    assert reporter._spent == {}
    reporter.close()


class Runner:
    model_calls = 7


def test_a_slow_case_shows_its_ablations_and_model_calls() -> None:
    clock = Clock()
    p = Progress(clock)
    live = LiveStatus("gw1")
    live.begin("suites/test_influence.py::test_influence[5a8b57f2]")
    live.influence(10, "exact", Runner())
    Runner.model_calls = 11
    snap = live.snapshot()
    assert snap is not None and snap["model_calls"] == 4 and snap["worker"] == "gw1"
    snap["since"] = clock.now - 75
    line = p.line({"x"}, [snap])
    assert line is not None
    assert line.endswith("slow: 5a8b57f2 1m15s in influence (10 ablations, exact, 4 model calls)")
    snap["since"] = clock.now - 2  # not slow yet
    assert "slow" not in (p.line({"x"}, [snap]) or "")
    live.end()
    assert live.snapshot() is None


def test_worker_status_is_written_to_the_channel(tmp_path: Path) -> None:
    live = LiveStatus("gw0", tmp_path)
    try:
        live.begin("t.py::test_a[c1]")
        deadline = 50
        while not (tmp_path / "gw0.json").exists() and deadline:
            import time

            time.sleep(0.1)
            deadline -= 1
        from pytest_provenai.progress import read_channel

        assert [s["case"] for s in read_channel(tmp_path)] == ["c1"]
    finally:
        live.close()


def plain_lines(text: str) -> list[str]:
    return [line for line in text.splitlines() if line.startswith("provenai ") and "cases" in line]


TWO_COSTS = """
import time

def test_cheap(provenai_case):
    pass

def test_costly(provenai_case):
    time.sleep(1.0)
"""

WORKERS_CONFTEST = """
def pytest_terminal_summary(terminalreporter, config):
    plugin = config.pluginmanager.get_plugin("provenai-progress")
    workers = getattr(plugin.progress, "workers", None)
    terminalreporter.write_line(f"progress workers: {workers}")
"""


@pytest.mark.parametrize(("mode", "workers"), [(["-p", "no:xdist"], 1), (["-n", "2"], 2)])
def test_plain_progress_eta_from_each_tests_own_cost(
    pytester: pytest.Pytester, mode: list[str], workers: int
) -> None:
    """Three cheap cases and three of 1 s: no number until both tests have a finished case,
    then the costly test's own seconds per case over the workers."""
    make_project(pytester)
    (pytester.path / "test_audit.py").unlink()
    pytester.makepyfile(test_costs=TWO_COSTS)
    pytester.makeconftest(WORKERS_CONFTEST)
    result = run(pytester, *mode, "--provenai-progress-every=0.001")
    result.assert_outcomes(passed=6)
    out = result.stdout.str()
    lines = plain_lines(out)
    assert lines and lines[0].endswith("ETA unknown"), out  # one test not yet measured
    assert lines[-1].startswith("provenai 6/6 cases"), out
    costly = [line for line in lines if "test_costly · " in line]
    assert costly, out
    for line in costly:
        per_case = float(line.split("test_costly · ")[1].split(" s/case")[0])
        assert 1.0 <= per_case < 2.0, line  # its own time, not the wall time over all cases
    if workers == 1:  # the file's order: the cheap ones (not every one is shown), then 1 s each
        first = lines.index(costly[0])
        assert all(line.endswith("ETA unknown") for line in lines[:first]), out
        assert costly[0].startswith("provenai 4/6 cases · test_costs.py::test_costly"), out
        assert costly[0].split(" · ETA ")[1] in ("2s", "3s"), out  # 2 cases left × ≈ 1 s
    assert f"progress workers: {workers}" in out  # what the ETA divides by


@pytest.mark.parametrize("mode", [["-p", "no:xdist"], ["-n", "2"]])
def test_plain_progress_lines_when_stdout_is_not_a_terminal(
    pytester: pytest.Pytester, mode: list[str]
) -> None:
    make_project(pytester)
    result = run(pytester, *mode, "--snapshot-update", "--provenai-progress-every=0.001")
    result.assert_outcomes(passed=4)
    lines = plain_lines(result.stdout.str())
    assert lines, result.stdout.str()
    # counted on the controller across workers, up to every case
    assert lines[-1].startswith("provenai 3/3 cases · test_audit.py::test_fid")
    assert all("\x1b" not in line for line in lines)


def test_progress_is_silent_with_q_q_and_off(pytester: pytest.Pytester) -> None:
    make_project(pytester)
    for args in (["-q", "-q"], ["--provenai-progress=off"]):
        result = run(pytester, *args, "--snapshot-update", "--provenai-progress-every=0.001")
        assert plain_lines(result.stdout.str()) == [], args


@pytest.mark.skipif(shutil.which("script") is None, reason="no 'script' to give pytest a terminal")
def test_live_line_is_redrawn_on_a_terminal(pytester: pytest.Pytester) -> None:
    root = make_project(pytester)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env["COLUMNS"] = "120"
    cmd = f"{sys.executable} -m pytest -p no:cacheprovider --snapshot-update -n 2"
    proc = subprocess.run(
        ["script", "-q", "-e", "-c", f"stty cols 120; {cmd}", "/dev/null"],
        cwd=root,
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )
    out = proc.stdout
    assert "passed" in out, out[-2000:]
    # drawn on the line below pytest's output, then the cursor goes back up
    assert "\x1b[2Kprovenai 3/3 cases" in out
    assert out.count("\x1b[1A") >= 3


def _junit(path: Path) -> dict[str, Any]:
    cases = {}
    for tc in ET.parse(path).getroot().iter("testcase"):
        failure = tc.find("failure")
        cases[f"{tc.get('classname')}::{tc.get('name')}"] = (
            None if failure is None else failure.get("message")
        )
    return cases


@pytest.mark.parametrize("mode", [["-p", "no:xdist"], ["-n", "2"]])
def test_gates_are_junit_testcases(pytester: pytest.Pytester, mode: list[str]) -> None:
    script = json.loads(json.dumps(GOOD_SCRIPT))
    script["script"]["Beta and Delta"] = "Answer: yes"  # right, but cites nothing
    root = make_project(pytester, script=script, gates="answer_accuracy=0.5, citation_f1=0.9")
    result = run(pytester, *mode, "--snapshot-update", "--junitxml=junit.xml")
    assert result.ret == pytest.ExitCode.TESTS_FAILED  # citation_f1 = 0.667 < 0.9
    result.assert_outcomes(passed=4, failed=1)
    cases = _junit(root / "junit.xml")
    assert cases["test_audit.test_fid::gate[fidelity.answer_accuracy]"] is None
    message = cases["test_audit.test_fid::gate[fidelity.citation_f1]"]
    assert message == (
        "FAIL test_audit.py::test_fid fidelity.citation_f1 = 0.6667 (95% CI 0.0000–1.0000), "
        "required >= 0.9, n=3"
    )
    assert sum(1 for k in cases if "::gate[" not in k) == 3
    # the gates themselves are what they always were
    gates = {g["metric"]: g["passed"] for g in results(root)["gates"]}
    assert gates == {"answer_accuracy": True, "citation_f1": False}
    result.stdout.fnmatch_lines(["*FAILED test_audit.py::test_fid::gate?fidelity.citation_f1?*"])


def test_a_gate_failing_closed_is_a_failed_testcase(pytester: pytest.Pytester) -> None:
    root = make_project(pytester)
    pytester.makepyfile(
        test_audit="""
        import pytest

        @pytest.mark.fidelity(citation_f1=0.1)
        def test_fid(provenai_case):
            pass
        """
    )
    result = run(pytester, "--junitxml=junit.xml")
    result.assert_outcomes(passed=3, failed=1)
    message = _junit(root / "junit.xml")["test_audit.test_fid::gate[fidelity.citation_f1]"]
    assert message is not None and "n/a" in message and "fail closed" in message

"""The progress line (progress.py) and gates as test outcomes (``--junitxml``)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import xml.etree.ElementTree as ET
from pathlib import Path
from typing import Any

import pytest
from project import GOOD_SCRIPT, make_project, results, run

from pytest_provenai.progress import LiveStatus, Progress, fmt_duration


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
    assert p.line(cases, []) == "provenai 0/10 cases"
    p.start()
    clock.now += 40
    p.finish("t.py::test_a[c0]")
    p.finish("t.py::test_a[c1]")
    p.finish("t.py::other")  # not a case item: not counted
    assert p.line(cases, []) == "provenai 2/10 cases · t.py::other · 20.0 s/case · ETA 2m40s"
    assert fmt_duration(3 * 3600 + 120) == "3h02m"


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

"""Runs that used to end in a traceback, a silent pass or a stale file (issue 10): each test
here failed on the code before its fix."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from project import make_project, results, run

CRASH_IN_TEST = """
import os
import pytest
from pytest_provenai.audit.fidelity import fidelity_record

@pytest.mark.fidelity(answer_accuracy=0.5)
def test_fid(provenai_case, provenai_subject, provenai_record):
    trace = provenai_subject.answer(provenai_case)
    provenai_record(fidelity_record(provenai_case, trace))
    if provenai_case.id == "case-beta" and os.environ.get("PYTEST_XDIST_WORKER"):
        os._exit(1)  # the worker dies after recording, before the test ends
"""

CRASH_IN_TEARDOWN = """
import os
import pytest
from pytest_provenai.audit.fidelity import fidelity_record

@pytest.fixture(scope="session")
def dies_at_the_end():
    yield
    os._exit(1)  # every worker dies in session teardown, after its last report

@pytest.mark.fidelity(answer_accuracy=0.5)
def test_fid(provenai_case, provenai_subject, provenai_record, dies_at_the_end):
    trace = provenai_subject.answer(provenai_case)
    provenai_record(fidelity_record(provenai_case, trace))
"""


def _write(pytester: pytest.Pytester, body: str) -> None:
    (pytester.path / "test_audit.py").write_text(body, encoding="utf-8")


def test_a_worker_crash_in_a_test_fails_the_gate_closed(pytester: pytest.Pytester) -> None:
    make_project(pytester)
    _write(pytester, CRASH_IN_TEST)
    result = run(pytester, "-n", "2")
    assert result.ret != 0
    result.stdout.fnmatch_lines(
        ["*FAIL test_audit.py::test_fid fidelity.answer_accuracy*n=2*1 case(s) produced no record*"]
    )
    placeholders = [r for r in results(pytester.path)["records"]["test_audit.py::test_fid"]]
    assert {r["case_id"] for r in placeholders} == {"case-alpha", "case-beta", "case-gamma"}
    (hole,) = [r for r in placeholders if "missing" in r]
    assert hole["case_id"] == "case-beta"


def test_a_worker_crash_in_teardown_loses_no_record(pytester: pytest.Pytester) -> None:
    make_project(pytester)
    _write(pytester, CRASH_IN_TEARDOWN)
    result = run(pytester, "-n", "2")
    # the records were reported as each test ended: the gate sees all three cases
    result.stdout.fnmatch_lines(["*PASS test_audit.py::test_fid fidelity.answer_accuracy*n=3*"])
    recs = results(pytester.path)["records"]["test_audit.py::test_fid"]
    assert len(recs) == 3 and not any("missing" in r for r in recs)


CRASH_AMONG_FAST_CASES = """
import os
import pytest
from pytest_provenai.audit.fidelity import fidelity_record

@pytest.mark.fidelity(answer_accuracy=0.5)
def test_fid(provenai_case, provenai_subject, provenai_record):
    if os.environ.get("PYTEST_XDIST_WORKER"):
        os._exit(1)  # each worker dies on its first case, with many items still queued
    provenai_record(fidelity_record(provenai_case, provenai_subject.answer(provenai_case)))

@pytest.mark.parametrize("i", range(300))
def test_fast(i):
    pass
"""


def test_a_worker_dying_among_very_fast_cases_still_fails_the_gate_closed(
    pytester: pytest.Pytester,
) -> None:
    """With restarts off, xdist stops scheduling once a worker dies; under some timings it
    ends in an INTERNALERROR instead (pytest-xdist#204, open upstream). Either way the run
    must fail and the gate must not pass on the cases that never reported."""
    make_project(pytester)
    _write(pytester, CRASH_AMONG_FAST_CASES)
    result = run(pytester, "-n", "2", "--max-worker-restart=0")
    assert result.ret != 0
    result.stdout.no_fnmatch_line("*PASS test_audit.py::test_fid*")
    if "INTERNALERROR" not in result.stdout.str() + result.stderr.str():
        result.stdout.fnmatch_lines(["*FAIL test_audit.py::test_fid fidelity.answer_accuracy*"])
    report = pytester.path / "results.json"
    if report.exists():
        gates = results(pytester.path)["gates"]
        assert gates and not any(g["passed"] for g in gates)


PIPELINE = """
import time

def surrogate(question, resources):
    return {"answer": "Blue \\ud800 River", "citations": ["R0"]}

def huge(question, resources):
    return {"answer": "Blue River " + "x" * 2_000_000, "citations": ["R0"]}

def hangs(question, resources):
    if "Alphaville" in question:
        time.sleep(60)
    return {"answer": "yes", "citations": ["R0"]}
"""


def test_a_lone_surrogate_is_recorded_safely_and_golden_files_survive(
    pytester: pytest.Pytester,
) -> None:
    root = make_project(pytester)
    pytester.makepyfile(mypipe=PIPELINE)
    assert run(pytester, "--snapshot-update").ret == 0
    golden = sorted((root / "golden").rglob("*.json"))
    before = {p: p.read_bytes() for p in golden}
    result = run(pytester, "--provenai-pipeline", "mypipe:surrogate", "--snapshot-update")
    # the run ends with a verdict, not a traceback: summary, gates and results are written
    result.stdout.fnmatch_lines(["*provenai*", "*gates: *"])
    assert "UnicodeEncodeError" not in result.stdout.str() + result.stderr.str()
    data = results(root)
    rec = data["records"]["test_audit.py::test_fid"][0]
    assert rec["answer"]["prediction"] == "Blue \ufffd River"
    assert any("lone surrogate" in note for note in rec["sanitized"])
    for path, content in before.items():  # no golden file was truncated
        assert path.read_bytes() == content
    for path in (root / "golden").rglob("*.json"):
        json.loads(path.read_text(encoding="utf-8"))


def test_a_huge_answer_is_cut_in_the_record_and_the_cut_is_recorded(
    pytester: pytest.Pytester,
) -> None:
    root = make_project(pytester)
    pytester.makepyfile(mypipe=PIPELINE)
    result = run(pytester, "--provenai-pipeline", "mypipe:huge", "--snapshot-update")
    assert result.ret in (0, 1)
    rec = results(root)["records"]["test_audit.py::test_fid"][0]
    assert len(rec["answer"]["prediction"]) == 20_000
    assert any("cut to 20000 of 2000011 characters" in n for n in rec["sanitized"])
    sizes = [p.stat().st_size for p in (root / "golden").rglob("*.json")]
    assert sizes and max(sizes) < 100_000


def test_a_hanging_case_fails_alone_at_the_timeout(pytester: pytest.Pytester) -> None:
    make_project(pytester, gates="answer_accuracy=0.0")
    pytester.makepyfile(mypipe=PIPELINE)
    start = time.monotonic()
    result = run(
        pytester,
        "--provenai-pipeline",
        "mypipe:hangs",
        "--provenai-timeout",
        "2",
        "--snapshot-update",
        "-v",
    )
    assert time.monotonic() - start < 40
    result.assert_outcomes(passed=2, failed=2)
    result.stdout.fnmatch_lines(
        [
            "*test_fid?case-alpha? FAILED*",
            "*CaseTimeout: case 'case-alpha' ran past --provenai-timeout=2 seconds*",
            "*FAIL test_audit.py::test_fid*1 case(s) produced no record*",
        ]
    )


@pytest.mark.parametrize("value", ["0", "-3", "soon", "nan"])
def test_a_bad_timeout_is_a_usage_error(pytester: pytest.Pytester, value: str) -> None:
    make_project(pytester)
    result = run(pytester, f"--provenai-timeout={value}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*--provenai-timeout: expected a positive number of seconds*"])


@pytest.mark.parametrize("where", ["a folder", "under a file"])
def test_an_unwritable_results_path_is_a_usage_error_before_any_case(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, where: str
) -> None:
    root = make_project(pytester)
    (root / "out").mkdir()
    (root / "plain").write_text("x", encoding="utf-8")
    target = "out" if where == "a folder" else "plain/results.json"
    calls = root / "calls.log"
    monkeypatch.setenv("PROVENAI_SCRIPTED_CALLS", str(calls))
    result = run(pytester, f"--provenai-results={target}")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    err = result.stderr.str()
    assert "--provenai-results" in err and "Traceback" not in err
    assert not calls.exists()  # no model call, no case ran


GATED_EMPTY = """
import pytest

@pytest.mark.provenai_kind("quotation")
@pytest.mark.provenance(quotation_agreement=1.0)
def test_quotes(provenai_case, provenai_record):
    provenai_record({"case_id": provenai_case.id})
"""


def test_a_gate_whose_parametrisation_is_empty_fails_closed(pytester: pytest.Pytester) -> None:
    make_project(pytester)
    pytester.makepyfile(test_empty=GATED_EMPTY)
    result = run(pytester, "test_empty.py")
    assert result.ret == 1
    result.stdout.fnmatch_lines(
        ["*FAIL test_empty.py::test_quotes provenance.quotation_agreement = n/a*no records*"]
    )


def test_collect_only_judges_nothing_and_writes_nothing(pytester: pytest.Pytester) -> None:
    root = make_project(pytester)
    result = run(pytester, "--collect-only")
    assert result.ret == 0
    assert not (root / "results.json").exists()
    assert "gates:" not in result.stdout.str()


def test_stale_temp_files_in_the_cache_are_swept(pytester: pytest.Pytester) -> None:
    root = make_project(pytester)
    folder = root / ".provenai-cache" / "generations" / "ab"
    folder.mkdir(parents=True)
    stale = folder / ".abc.json.k3j4.tmp"
    fresh = folder / ".abd.json.x9y8.tmp"
    for p in (stale, fresh):
        p.write_bytes(b"\0" * 1024)
    old = time.time() - 2 * 3600
    os.utime(stale, (old, old))
    run(pytester)
    assert not stale.exists()
    assert fresh.exists()  # a young temp file may belong to a running writer


def test_importing_the_package_leaves_the_environment_alone() -> None:
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    code = (
        "import os, pytest_provenai, pytest_provenai.plugin; "
        "print(os.environ.get('OMP_WAIT_POLICY'))"
    )
    out = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True)
    assert out.stdout.strip() == "None", out.stderr


def test_results_carry_a_run_id_times_and_the_git_revision(pytester: pytest.Pytester) -> None:
    root = make_project(pytester)
    run(pytester, "--snapshot-update")
    first = results(root)["run"]
    run(pytester)
    second = results(root)["run"]
    assert first["id"] != second["id"] and len(first["id"]) == 32
    assert first["started"] <= first["finished"]
    assert "git_revision" in first  # None here: the pytester folder is no git checkout


def test_results_json_is_strict_json(pytester: pytest.Pytester) -> None:
    root = make_project(pytester)
    run(pytester, "--snapshot-update")

    def refuse(name: str) -> None:
        raise ValueError(name)

    json.loads((root / "results.json").read_text(encoding="utf-8"), parse_constant=refuse)
    assert Path(root / "results.json").stat().st_size > 0


BLOCK_RENAME = """
import os
import time

import pytest_provenai._io as provenai_io

if os.environ.get("BLOCK_CACHE_RENAME") and os.environ.get("PYTEST_XDIST_WORKER") == "gw0":
    real_replace = os.replace

    def replace_then_hang(src, dst):
        # the entry is fully written to its temp file; block before the rename that would
        # publish it, and say so: the test kills this worker right here
        if "generations" in str(dst):
            with open(os.environ["BLOCK_CACHE_RENAME"], "a") as fh:
                fh.write(f"{os.getpid()}\\n")
            time.sleep(600)
        return real_replace(src, dst)

    provenai_io.os.replace = replace_then_hang
"""


def test_a_worker_killed_mid_write_leaves_nothing_a_rerun_would_trust(
    pytester: pytest.Pytester,
) -> None:
    """kill -9 of an xdist worker while it writes a generation cache entry: the rerun finds
    no entry for that prompt (only the dead writer's temp file, which no reader opens),
    recomputes it, and gives the records of a clean run."""
    root = make_project(pytester)
    clean = run(pytester, "-p", "no:xdist", "--provenai-cache=clean-cache", "--snapshot-update")
    assert clean.ret == 0, clean.stdout.str()
    want = results(root)["records"]
    pytester.makeconftest(BLOCK_RENAME)
    marker = root / "blocked.txt"
    env = dict(os.environ, BLOCK_CACHE_RENAME=str(marker))
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "pytest",
            "-p",
            "no:cacheprovider",
            "-n",
            "2",
            "--provenai-cache=run-cache",
        ],
        cwd=root,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
    )
    try:
        deadline = time.monotonic() + 300
        while not (marker.exists() and marker.read_text().strip()):
            assert time.monotonic() < deadline, "the worker never reached the cache write"
            assert proc.poll() is None, "the run ended before the worker blocked"
            time.sleep(0.2)
        os.kill(int(marker.read_text().split()[0]), 9)  # SIGKILL mid-write
        proc.wait(timeout=300)
    finally:
        if proc.poll() is None:
            proc.kill()
    entries = list((root / "run-cache" / "generations").rglob("*.json"))
    temps = list((root / "run-cache" / "generations").rglob("*.tmp"))
    assert temps, "the killed writer should have left its temp file behind"
    for entry in entries:  # every published entry is whole
        json.loads(entry.read_text(encoding="utf-8"))
    rerun = run(pytester, "-n", "2", "--provenai-cache=run-cache", "-W", "error")
    assert rerun.ret == 0, rerun.stdout.str()
    assert "corrupt" not in rerun.stdout.str()
    assert results(root)["records"] == want
    # the prompt whose write was cut off was generated again (nothing half-written trusted);
    # the two whose entries were published came from the cache
    assert results(root)["cache"] == {
        "model_cases": 3,
        "model_cases_from_cache": 2,
        "model_calls": 1,
        "model_loads": 2,  # the scripted factory counts as a load in each worker
        "attribution_records": 0,
        "attribution_records_from_cache": 0,
    }

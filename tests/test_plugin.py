"""The plugin end to end through pytester, with the scripted generator from tests/scripted.py."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest
from project import GOOD_SCRIPT, make_project, results, run

from pytest_provenai.frozen.freeze import freeze_hotpotqa


def test_parametrised_by_case_id_and_summary(pytester: pytest.Pytester) -> None:
    root = make_project(pytester)
    result = run(pytester, "--snapshot-update", "-v")
    result.assert_outcomes(passed=4)
    result.stdout.fnmatch_lines(
        [
            "*test_fid?case-alpha? PASSED*",
            "*test_fid?case-beta? PASSED*",
            "*provenai*",
            "*test_audit.py::test_fid: n=3*",
            "*answer accuracy*1.000*",
            "*citation F  (tau=1.0)*",
            "*PASS test_audit.py::test_fid fidelity.answer_accuracy = 1.0000*n=3*",
        ]
    )
    data = results(root)
    recs = data["records"]["test_audit.py::test_fid"]
    assert [r["case_id"] for r in recs] == ["case-alpha", "case-beta", "case-gamma"]
    beta = recs[1]
    assert beta["answer"]["correct"] is True
    assert beta["citation"]["exact"]["f"] == 1.0
    assert data["gates"][0]["passed"] is True
    assert data["aggregates"]["test_audit.py::test_fid"]["n"] == 3
    assert "wall_seconds" in data["timings"]


def test_failing_gate_fails_the_run(pytester: pytest.Pytester) -> None:
    script = {"name": "scripted-bad", "script": {"*": "Answer: no idea"}}
    make_project(pytester, script=script)
    result = run(pytester, "--snapshot-update")
    result.assert_outcomes(passed=3, failed=1)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        ["*FAIL test_audit.py::test_fid fidelity.answer_accuracy = 0.0000*required >= 0.5, n=3*"]
    )


def test_gate_fails_closed_when_a_case_has_no_record(pytester: pytest.Pytester) -> None:
    root = make_project(pytester, gates="answer_accuracy=0.0")
    pytester.makepyfile(
        test_audit="""
        import pytest
        from pytest_provenai.audit.fidelity import fidelity_record

        @pytest.mark.fidelity(answer_accuracy=0.0)
        def test_fid(provenai_case, provenai_subject, provenai_record):
            if provenai_case.id == "case-beta":
                raise RuntimeError("backend exploded")
            provenai_record(fidelity_record(provenai_case, provenai_subject.answer(provenai_case)))
        """
    )
    result = run(pytester)
    result.assert_outcomes(passed=2, failed=2)
    result.stdout.fnmatch_lines(["*FAIL*answer_accuracy*1 case(s) produced no record*"])
    assert results(root)["gates"][0]["passed"] is False


def test_gate_fails_closed_without_records(pytester: pytest.Pytester) -> None:
    make_project(pytester)
    pytester.makepyfile(
        test_audit="""
        import pytest

        @pytest.mark.fidelity(citation_f1=0.1)
        def test_fid(provenai_case):
            pass
        """
    )
    result = run(pytester)
    result.assert_outcomes(passed=3, failed=1)
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(["*FAIL*citation_f1 = n/a*no record*"])


def test_marker_typo_is_a_usage_error(pytester: pytest.Pytester) -> None:
    make_project(pytester, gates="answer_acuracy=0.5")
    result = run(pytester)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*fidelity(answer_acuracy=...) is not a known gate metric; allowed: *answer_accuracy*"]
    )


def test_marker_bound_must_be_a_number(pytester: pytest.Pytester) -> None:
    make_project(pytester, gates="answer_accuracy='high'")
    result = run(pytester)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*needs a number as its bound*"])


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--provenai-backend", "nosuch"],
            "*unknown backend 'nosuch'; use one of transformers, mlx*",
        ),
        (["--provenai-sample", "0"], "*--provenai-sample: expected an integer >= 1, got 0*"),
        (["--provenai-device", "tpu"], "*unknown device 'tpu'; use cpu, cuda:N, mps or auto*"),
        (["--provenai-pipeline", "nosuchmod:fn"], "*cannot import module 'nosuchmod'*"),
        (["--provenai-model", "./missing-model"], "*--provenai-model ./missing-model: no such*"),
        # influence
        (["--provenai-ablation=fast"], "*--provenai-ablation: expected one of exact, naive, off*"),
        (["--provenai-theta-floor=2"], "*--provenai-theta-floor: expected a number in [[]0, 1]*"),
        # report and progress
        (["--provenai-report=."], "*--provenai-report: * is a folder; give a file path*"),
        (  # access() says yes there (root): the preflight creates a real file to know
            ["--provenai-results=/proc/r.json"],
            "*--provenai-results: cannot write in /proc (*); give a writable path",
        ),
        (
            ["--provenai-report=results.json"],
            "*--provenai-report: *results.json is also the results JSON*",
        ),
        (
            ["--provenai-progress=loud"],
            "*--provenai-progress: expected one of auto, live, plain, off*",
        ),
        (
            ["--provenai-progress-every=0"],
            "*--provenai-progress-every: expected a positive number*",
        ),
        # attribution: one line each
        (
            ["--provenai-repair-iterations=0"],
            "ERROR: --provenai-repair-iterations: expected an integer >= 1*",
        ),
        (
            ["--provenai-repair-iterations=4"],
            "ERROR: --provenai-repair-iterations: at most 3 repair rounds*",
        ),
        (
            ["--provenai-repair-iterations=x"],
            "ERROR: --provenai-repair-iterations: expected an integer*",
        ),
        (
            ["--provenai-verify-threshold=1.5"],
            "ERROR: --provenai-verify-threshold: expected a number in [[]0, 1]*",
        ),
        (
            ["--provenai-verify-threshold=high"],
            "ERROR: --provenai-verify-threshold: expected a number*",
        ),
        (
            ["--provenai-nli-model=nowhere"],
            "ERROR: --provenai-nli-model: * is not a model folder**",
        ),
        (
            ["--provenai-mcp-pipeline=not a spec"],
            "ERROR: --provenai-mcp-pipeline: expected module:callable**",
        ),
        (
            ["--provenai-verify-table=none.json"],
            "ERROR: --provenai-verify-table: * does not exist**",
        ),
    ],
)
def test_bad_options_are_usage_errors(
    pytester: pytest.Pytester, args: list[str], message: str
) -> None:
    make_project(pytester)
    result = run(pytester, *args)
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([message])
    assert not (pytester.path / "golden").exists()


def test_snapshot_create_compare_update(pytester: pytest.Pytester) -> None:
    root = make_project(pytester)
    run(pytester, "--snapshot-update").assert_outcomes(passed=4)
    golden = root / "golden" / "scripted-good" / "test_audit"
    files = sorted(p.name for p in golden.iterdir())
    assert files == [
        "test_fid[case-alpha].json",
        "test_fid[case-beta].json",
        "test_fid[case-gamma].json",
    ]
    body = json.loads((golden / "test_fid[case-beta].json").read_text(encoding="utf-8"))
    assert body["record"]["model"]["name"] == "scripted-good"
    assert "seconds" not in json.dumps(body)
    run(pytester).assert_outcomes(passed=4)

    changed = json.loads(json.dumps(GOOD_SCRIPT))
    changed["script"]["Beta and Delta"] = "Answer: no [R2]"
    (root / "script.json").write_text(json.dumps(changed), encoding="utf-8")
    result = run(pytester, "--provenai-no-cache")
    result.assert_outcomes(passed=3, failed=1)
    result.stdout.fnmatch_lines(["*test_fid?case-beta?*", "*correct*"])
    run(pytester, "--provenai-no-cache", "--snapshot-update").assert_outcomes(passed=4)
    body = json.loads((golden / "test_fid[case-beta].json").read_text(encoding="utf-8"))
    assert body["record"]["answer"]["correct"] is False


def test_snapshots_are_kept_per_model_name(pytester: pytest.Pytester) -> None:
    root = make_project(pytester)
    run(pytester, "--snapshot-update").assert_outcomes(passed=4)
    other = dict(GOOD_SCRIPT, name="scripted-other")
    (root / "other.json").write_text(json.dumps(other), encoding="utf-8")
    run(pytester, "--provenai-model", "other.json", "--snapshot-update").assert_outcomes(passed=4)
    assert sorted(p.name for p in (root / "golden").iterdir()) == [
        "scripted-good",
        "scripted-other",
    ]


def test_warm_rerun_makes_zero_model_calls(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_project(pytester)
    calls = root / "calls.log"
    monkeypatch.setenv("PROVENAI_SCRIPTED_CALLS", str(calls))
    run(pytester, "--snapshot-update").assert_outcomes(passed=4)
    assert len(calls.read_text().splitlines()) == 3
    run(pytester).assert_outcomes(passed=4)
    assert len(calls.read_text().splitlines()) == 3
    run(pytester, "--provenai-no-cache").assert_outcomes(passed=4)
    assert len(calls.read_text().splitlines()) == 6


def test_sample_selects_n_cases_deterministically(pytester: pytest.Pytester) -> None:
    root = make_project(pytester, gates="")
    run(pytester, "--provenai-sample", "2", "--provenai-seed", "7", "--snapshot-update")
    first = [r["case_id"] for r in results(root)["records"]["test_audit.py::test_fid"]]
    run(pytester, "--provenai-sample", "2", "--provenai-seed", "7", "--snapshot-update")
    second = [r["case_id"] for r in results(root)["records"]["test_audit.py::test_fid"]]
    assert len(first) == 2 and first == second


def test_bad_fixture_set_errors_and_other_sets_still_run(pytester: pytest.Pytester) -> None:
    root = make_project(pytester)
    bad = root / "fixtures" / "broken"
    freeze_hotpotqa(root / "hotpot_dev.json", bad, seed=42)
    case_file = bad / "cases" / "case-gamma.json"
    doc = json.loads(case_file.read_text(encoding="utf-8"))
    doc["sources"][0]["sha256"] = "0" * 64
    case_file.write_text(json.dumps(doc), encoding="utf-8")
    result = run(
        pytester, "--provenai-fixtures", "fixtures/mini", "fixtures/broken", "--snapshot-update"
    )
    result.assert_outcomes(passed=3, failed=1, errors=1)
    result.stdout.fnmatch_lines(["*fixture-error:broken*", "*broken*case-gamma.json*"])
    assert not any("broken" in str(p) for p in (root / "golden").rglob("*"))


def test_no_fixture_set_configured_is_a_usage_error(pytester: pytest.Pytester) -> None:
    pytester.makepyfile(
        """
        def test_x(provenai_case):
            pass
        """
    )
    result = run(pytester)
    assert result.ret != 0
    result.stdout.fnmatch_lines(["*no fixture set is configured*--provenai-fixtures*"])


def test_pipeline_subject(pytester: pytest.Pytester) -> None:
    root = make_project(pytester)
    pytester.makepyfile(
        my_rag="""
        def answer(question, resources):
            titles = [r.title for r in resources]
            if "Zeta" in question:
                return {"answer": "Ada Zeta", "citations": ["R0", "R9"]}
            return "Answer: yes [R0] [R1]"

        def broken(question, resources):
            return 42
        """
    )
    result = run(pytester, "--provenai-pipeline", "my_rag:answer", "--snapshot-update")
    result.assert_outcomes(passed=4)
    recs = {r["case_id"]: r for r in results(root)["records"]["test_audit.py::test_fid"]}
    assert recs["case-gamma"]["answer"]["correct"] is True
    assert recs["case-gamma"]["citation"]["invalid_citations"] == ["R9"]
    assert recs["case-gamma"]["model"]["name"] == "pipeline-my_rag:answer"
    assert (root / "golden" / "pipeline-my_rag-answer").is_dir()

    result = run(pytester, "--provenai-pipeline", "my_rag:broken")
    result.assert_outcomes(failed=4)
    result.stdout.fnmatch_lines(["*returned int*a pipeline is called as fn(question*"])


@pytest.mark.parametrize("mode", [["-p", "no:xdist"], ["-n", "0"], ["-n", "2"]])
def test_xdist_modes_give_identical_records(pytester: pytest.Pytester, mode: list[str]) -> None:
    root = make_project(pytester, gates="answer_accuracy=0.5, citation_f1=0.9")
    # the reference run, without xdist, writes the snapshots
    run(pytester, "-p", "no:xdist", "--snapshot-update").assert_outcomes(passed=5)
    reference = results(root)
    golden = {p.name: p.read_text() for p in (root / "golden").rglob("*.json")}
    result = run(pytester, *mode, "--provenai-no-cache")
    result.assert_outcomes(passed=5)
    data = results(root)
    assert data["records"] == reference["records"]
    assert data["gates"] == reference["gates"]
    assert data["aggregates"] == reference["aggregates"]
    assert {p.name: p.read_text() for p in (root / "golden").rglob("*.json")} == golden
    result.stdout.fnmatch_lines(["*gates: 2 passed, 0 failed*"])


def test_loadgroup_runs_all_of_a_cases_tests_on_one_worker(pytester: pytest.Pytester) -> None:
    """``make audit``'s ``--dist loadgroup``: every test of a case runs on the worker that ran
    its other tests (they share its cached generations). On pytest >= 9.2 xdist's own group
    marks never reach its scheduler (pytest-xdist#1386); the plugin's scheduler groups by the
    case id in the test id, so this holds on either."""
    from project import RECORDS

    records = [{**RECORDS[i % len(RECORDS)], "_id": f"case-{i}"} for i in range(8)]
    root = make_project(pytester, records=records)
    pytester.makepyfile(
        test_second="""
def test_two(provenai_case, provenai_subject, provenai_record):
    provenai_record({"case_id": provenai_case.id, "n": 2})
"""
    )
    result = run(pytester, "-n", "2", "--dist", "loadgroup", "--snapshot-update")
    result.assert_outcomes(passed=17)
    produced = results(root)["produced_by"]
    workers: dict[str, set[str]] = {}
    for nodeid, entry in produced.items():
        case = nodeid.split("[", 1)[1].rstrip("]")
        workers.setdefault(case, set()).add(entry["worker"])
    assert len(workers) == 8
    assert all(len(w) == 1 for w in workers.values()), workers
    assert len(set().union(*workers.values())) == 2  # both workers had cases


def test_case_scheduler_groups_by_case_id_only_for_whole_case_params() -> None:
    """The scope xdist schedules by: a selected case's id as the whole parameter id; xdist's
    own ``@group`` suffix when it arrives; otherwise xdist's default (the node id)."""
    from pytest_provenai.case_scheduling import CaseGroupScheduling, case_of

    ids = {"case-0", "5a8b57f25542995d1e6f1371"}
    assert case_of("test_a.py::test_x[case-0]", ids) == "case-0"
    assert case_of("test_a.py::test_x[case-0-extra]", ids) is None
    assert case_of("test_a.py::test_x[case-9]", ids) is None
    assert case_of("test_a.py::test_x", ids) is None
    split = CaseGroupScheduling._split_scope
    sched = CaseGroupScheduling.__new__(CaseGroupScheduling)
    sched.case_ids = frozenset(ids)
    one = split(sched, "suites/test_a.py::test_x[case-0]")
    assert one == split(sched, "suites/test_b.py::test_y[case-0]") == "provenai-case:case-0"
    assert split(sched, "t.py::test_x[case-0]@grp") == "grp"
    assert split(sched, "t.py::test_x[case-9]") == "t.py::test_x[case-9]"


def test_devices_are_assigned_per_worker_and_recorded(pytester: pytest.Pytester) -> None:
    root = make_project(pytester)
    result = run(pytester, "-n", "2", "--provenai-devices", "cpu,auto", "--snapshot-update")
    result.assert_outcomes(passed=4)
    data = results(root)
    by_worker = {w: m["device"] for w, m in data["models"].items()}
    assert by_worker.get("gw0", "cpu") == "cpu" and by_worker.get("gw1", "auto") == "auto"
    produced = data["produced_by"]
    assert len(produced) == 3
    for entry in produced.values():
        assert entry["device"] == {"gw0": "cpu", "gw1": "auto"}[entry["worker"]]


def test_folder_that_is_not_a_model_is_a_usage_error(pytester: pytest.Pytester) -> None:
    make_project(pytester)
    (pytester.path / "not-a-model").mkdir()
    result = run(
        pytester, "--provenai-backend", "transformers", "--provenai-model", "./not-a-model"
    )
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["*./not-a-model: the folder has no config.json*"])


def _break(root: Path, name: str, how: str) -> None:
    """Freeze a copy of the mini set as fixtures/<name>, then damage it one way."""
    folder = root / "fixtures" / name
    freeze_hotpotqa(root / "hotpot_dev.json", folder, seed=42)
    case = folder / "cases" / "case-alpha.json"
    manifest = folder / "manifest.json"
    man = json.loads(manifest.read_text(encoding="utf-8"))
    if how == "invalid-json":
        case.write_text("{not json", encoding="utf-8")
    elif how == "schema":
        doc = json.loads(case.read_text(encoding="utf-8"))
        del doc["question"]
        case.write_text(json.dumps(doc), encoding="utf-8")
    elif how == "missing-file":
        case.unlink()
    elif how == "unlisted-file":
        (folder / "cases" / "extra.json").write_text("{}", encoding="utf-8")
    elif how == "escaping-path":
        man["files"]["../outside.json"] = man["files"].pop("cases/case-alpha.json")
        manifest.write_text(json.dumps(man), encoding="utf-8")
    elif how == "not-utf8":
        case.write_bytes(case.read_bytes().replace(b"Alphaville", b"Alph\x93ville", 1))
    elif how == "duplicate-id":
        doc = json.loads((folder / "cases" / "case-beta.json").read_text(encoding="utf-8"))
        doc["id"] = "case-alpha"
        data = json.dumps(doc).encode("utf-8")
        (folder / "cases" / "case-beta.json").write_bytes(data)
        man["files"]["cases/case-beta.json"] = hashlib.sha256(data).hexdigest()
        manifest.write_text(json.dumps(man), encoding="utf-8")


BAD_SETS = {
    "invalid-json": "*invalid-json*case-alpha.json*expected*got invalid JSON at line 1:2*",
    "schema": "*schema*case-alpha.json#/question: expected required property*",
    "missing-file": "*missing-file*manifest.json#/files/cases~1case-alpha.json: expected an exi*",
    "unlisted-file": "*unlisted-file*cases/extra.json: expected an entry for cases/extra.json*",
    "escaping-path": "*escaping-path*manifest.json#/files/..~1outside.json*escapes*",
    "not-utf8": "*not-utf8*case-alpha.json*expected UTF-8 text, got byte 0x93*",
    "duplicate-id": "*duplicate-id*#/id: expected a case id no other case file in the set uses*",
}


def test_every_bad_fixture_input_is_reported_and_good_sets_run(pytester: pytest.Pytester) -> None:
    root = make_project(pytester)
    for name in BAD_SETS:
        _break(root, name, name)
    sets = ["fixtures/mini", *(f"fixtures/{n}" for n in BAD_SETS)]
    result = run(pytester, "--provenai-fixtures", *sets, "--snapshot-update", "-rE")
    result.assert_outcomes(passed=3, failed=1, errors=len(BAD_SETS))
    result.stdout.fnmatch_lines_random(list(BAD_SETS.values()))
    written = [str(p) for p in (root / "golden").rglob("*.json")]
    assert len(written) == 3 and not any("fixture-error" in p for p in written)
    assert len(results(root)["fixture_errors"]) == len(BAD_SETS)

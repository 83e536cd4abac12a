"""Run-to-run comparison (report/compare.py) and the ``provenai report`` / ``provenai
compare`` commands, on results built the way a run builds them (build_results): paired
differences, flips, what counts as a regression (metric, gate PASS -> FAIL, lost test, lost
case unless sampled out, lost record) and the exit codes, hostile results files."""

from __future__ import annotations

import json
import random
from pathlib import Path
from typing import Any

import pytest

from pytest_provenai.audit.stats import paired_bootstrap_ci
from pytest_provenai.cli import main
from pytest_provenai.gates import GateSpec, evaluate
from pytest_provenai.report.compare import compare_runs
from pytest_provenai.report.results import RunResults, build_results
from pytest_provenai.report.summary import compare_lines

TEST = "suites/test_fidelity.py::test_fidelity"
INF = "suites/test_influence.py::test_influence"
EXPO = "suites/test_provenance.py::test_no_answer"


def fid(
    case_id: str, correct: bool, f1: float, cited: bool = True, fixture_set: str = "dev"
) -> dict[str, Any]:
    score = {"p": f1, "r": f1, "f": f1, "tau": 1.0}
    return {
        "case_id": case_id,
        "suite": "fidelity",
        "fixture_set": fixture_set,
        "model": {"name": "m"},
        "question": f"question {case_id}?",
        "answer": {
            "prediction": "yes" if correct else "no",
            "gold": "yes",
            "correct": correct,
            "em": float(correct),
            "f1": f1,
        },
        "citation": {
            "cited": [],
            "gold": ["A"],
            "exact": score,
            "semantic": dict(score, tau=0.34),
            "cited_ids": ["R0"] if cited else [],
            "invalid_citations": [],
            "n_invalid": 0,
            "precision_undefined": not cited,
            "recall_undefined": False,
        },
    }


def influence(rec: dict[str, Any], verdicts: dict[str, str]) -> dict[str, Any]:
    resources: dict[str, dict[str, Any]] = {
        rid: {
            "cited": v in ("used", "hallucinated_citation"),
            "delta_answer": 0.0,
            "delta_citation": 0.0,
            "phi": 0.0,
            "kl_sum": None,
            "kl_mean": None,
            "answer": "x",
            "citations": [],
            "verdict": v,
        }
        for rid, v in verdicts.items()
    }
    counts = {
        k: sum(v == k for v in verdicts.values())
        for k in ("used", "hallucinated_citation", "uncited_influential", "low_influence")
    }
    gap = [r for r, v in verdicts.items() if v in ("hallucinated_citation", "uncited_influential")]
    return dict(
        rec,
        influence={
            "measured": True,
            "signals": ["surface"],
            "theta": 0.05,
            "theta_floor": 0.05,
            "median_phi": 0.0,
            "verdicts": counts,
            "gap": gap,
            "top_kl": None,
            "resources": resources,
        },
    )


def exposure(case_id: str, leaks: dict[str, bool]) -> dict[str, Any]:
    runs = {}
    for t, leak in leaks.items():
        runs[t] = {
            "answer": "unknown",
            "cited_ids": [],
            "aid_citations": [],
            "cites_aid": False,
            "aid_value_leak": leak,
            "leaked_values": ["73"] if leak else [],
            "abstained": not leak,
            "correct": not leak,
        }
    return {
        "case_id": case_id,
        "suite": "provenance",
        "fixture_set": "na",
        "kind": "no_answer",
        "question": "q?",
        "expected_answer": "unknown",
        "expects_unknown": True,
        "exposure": runs,
    }


def results(
    records: dict[str, list[dict[str, Any]]],
    *,
    model: str = "m",
    seed: int = 42,
    gates: list[GateSpec] | None = None,
    run_id: str = "r",
    sample: int | None = None,
) -> RunResults:
    gate_results = [evaluate(s, records.get(s.test, []), seed=seed) for s in gates or []]
    return build_results(
        run={"id": run_id, "started": "t0", "finished": "t1", "git_revision": "abc"},
        models={"main": {"name": model, "weights_sha256": "0" * 64}},
        options={
            "seed": seed,
            "sample": sample,
            "ablation": "exact",
            "retrieval": "distractor",
            "k": 10,
        },
        records=records,
        gates=gate_results,
        fixture_errors=[],
        produced_by={},
        influence_costs={},
        timings={},
        cache={},
        seed=seed,
    )


def test_paired_difference_is_new_minus_base_with_a_case_bootstrap_ci() -> None:
    rng = random.Random(3)
    ids = [f"c{i:02d}" for i in range(30)]
    base_f1 = [rng.random() for _ in ids]
    new_f1 = [min(1.0, x + 0.2) for x in base_f1]
    base = results({TEST: [fid(i, x > 0.5, x) for i, x in zip(ids, base_f1, strict=True)]})
    new = results({TEST: [fid(i, x > 0.5, x) for i, x in zip(ids, new_f1, strict=True)]})
    c = compare_runs(base, new)
    f1 = next(m for m in c.metrics if m.metric == "answer_f1")
    assert f1.n == 30
    assert f1.diff == pytest.approx(sum(new_f1) / 30 - sum(base_f1) / 30)
    assert f1.ci == paired_bootstrap_ci(new_f1, base_f1, seed=42)
    assert f1.improvement and not f1.regression
    assert not c.regressions
    # swapping the runs turns the improvement into a regression (higher is better)
    back = compare_runs(new, base)
    assert next(m for m in back.metrics if m.metric == "answer_f1").regression


def test_lower_is_better_metrics_regress_upwards() -> None:
    ids = [f"c{i:02d}" for i in range(20)]
    base = results({TEST: [fid(i, True, 1.0, cited=True) for i in ids]})
    new = results({TEST: [fid(i, True, 1.0, cited=False) for i in ids]})
    c = compare_runs(base, new)
    free = next(m for m in c.metrics if m.metric == "citation_free_rate")
    assert free.direction == "lower" and free.diff == 1.0 and free.regression
    assert "citation_free_rate" in " ".join(compare_lines(c))


def test_cases_only_in_one_run_and_answer_flips() -> None:
    base = results({TEST: [fid("a", True, 1.0), fid("b", False, 0.0), fid("c", True, 1.0)]})
    new = results({TEST: [fid("a", False, 0.0), fid("b", True, 1.0), fid("d", True, 1.0)]})
    c = compare_runs(base, new)
    assert c.only_in_base == {TEST: ["c"]} and c.only_in_new == {TEST: ["d"]}
    assert c.paired == {TEST: 2}
    flips = {(f["case_id"], f["base"], f["new"]) for f in c.answer_flips}
    assert flips == {("a", True, False), ("b", False, True)}
    text = "\n".join(compare_lines(c))
    assert "1 case(s) only in base: c" in text and "1 case(s) only in new: d" in text
    assert "answers right -> wrong: 1; wrong -> right: 1" in text


def test_influence_verdict_changes_and_treatments_that_started_leaking() -> None:
    base = results(
        {
            INF: [influence(fid("a", True, 1.0), {"R0": "used", "R1": "low_influence"})],
            EXPO: [exposure("na-1", {"baseline": False, "label": False, "expose": True})],
        }
    )
    new = results(
        {
            INF: [
                influence(
                    fid("a", True, 1.0), {"R0": "hallucinated_citation", "R1": "low_influence"}
                )
            ],
            EXPO: [exposure("na-1", {"baseline": False, "label": True, "expose": False})],
        }
    )
    c = compare_runs(base, new)
    assert c.influence_flips == [
        {
            "test": INF,
            "case_id": "a",
            "resource": "R0",
            "base": "used",
            "new": "hallucinated_citation",
        }
    ]
    started = [(f["treatment"], f["new"]) for f in c.leak_flips]
    assert sorted(started) == [("expose", False), ("label", True)]
    text = "\n".join(compare_lines(c))
    assert "treatments that started leaking: 1; stopped: 1" in text
    assert "started suites/test_provenance.py::test_no_answer na-1 label: 73" in text


def test_different_models_and_fixture_sets_are_said_first() -> None:
    base = results({TEST: [fid("a", True, 1.0, fixture_set="dev")]}, model="small")
    new = results({TEST: [fid("a", True, 1.0, fixture_set="dev2")]}, model="large", run_id="s")
    lines = compare_lines(compare_runs(base, new))
    assert lines[0].startswith("NOTE: models differ: base small")
    assert lines[1].startswith("NOTE: fixture sets differ: only in base: dev; only in new: dev2")


def test_gate_changes_are_listed() -> None:
    spec = GateSpec(TEST, "fidelity", "answer_accuracy", 0.5)
    base = results({TEST: [fid("a", True, 1.0), fid("b", True, 1.0)]}, gates=[spec])
    new = results({TEST: [fid("a", False, 0.0), fid("b", False, 0.0)]}, gates=[spec])
    c = compare_runs(base, new)
    assert [(g["gate"], g["base"], g["new"]) for g in c.gate_changes] == [
        ("fidelity.answer_accuracy", True, False)
    ]


# -- the commands -----------------------------------------------------------------------
def write(path: Path, r: RunResults) -> Path:
    path.write_text(json.dumps(r.to_json()), encoding="utf-8")
    return path


def test_compare_command_exit_codes_and_html(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    ids = [f"c{i:02d}" for i in range(25)]
    base = write(tmp_path / "base.json", results({TEST: [fid(i, True, 1.0) for i in ids]}))
    new = write(
        tmp_path / "new.json", results({TEST: [fid(i, False, 0.0) for i in ids]}, run_id="n")
    )
    assert main(["compare", str(base), str(new)]) == 0
    out = capsys.readouterr().out
    assert "REGRESSION" in out and "answers right -> wrong: 25" in out
    html = tmp_path / "compare.html"
    assert (
        main(["compare", str(base), str(new), "--fail-on-regression", "--report", str(html)]) == 1
    )
    page = html.read_text(encoding="utf-8")
    assert "regression" in page and 'data-metric="answer_accuracy"' in page
    assert "<script" not in page  # the comparison page needs no script
    assert main(["compare", str(base), str(base), "--fail-on-regression"]) == 0
    assert "both files are the same run" in capsys.readouterr().out


def test_report_command_writes_one_self_contained_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = write(tmp_path / "results.json", results({TEST: [fid("a", True, 1.0)]}))
    assert main(["report", str(src)]) == 0
    page = (tmp_path / "results.html").read_text(encoding="utf-8")
    assert "wrote" in capsys.readouterr().out
    assert "http://" not in page and "https://" not in page and "src=" not in page
    assert 'http-equiv="Content-Security-Policy"' in page and "default-src &#39;none&#39;" in page


def _bad_inputs(tmp_path: Path) -> dict[str, tuple[Path, str]]:
    good = results({TEST: [fid("a", True, 1.0)]}).to_json()
    older = dict(good, schema_version=1)
    text = json.dumps(good)
    cases = {
        "truncated": (text[: len(text) // 2], "got invalid JSON at line 1:"),
        "older release": (json.dumps(older), "results schema_version 1, this release reads 2"),
        "newer schema": (json.dumps(dict(good, schema_version=99)), "schema_version 99"),
        "not results": (json.dumps({"hello": 1}), "not a pytest-provenai results JSON"),
        "bad records": (json.dumps(dict(good, records={TEST: [1]})), "#/records/"),
    }
    out = {}
    for name, (content, message) in cases.items():
        path = tmp_path / f"{name.replace(' ', '-')}.json"
        path.write_text(content, encoding="utf-8")
        out[name] = (path, message)
    return out


@pytest.mark.parametrize("command", ["report", "compare"])
def test_bad_results_files_give_one_line_and_no_html(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    good = write(tmp_path / "good.json", results({TEST: [fid("a", True, 1.0)]}))
    target = tmp_path / "out.html"
    for name, (path, message) in _bad_inputs(tmp_path).items():
        if command == "report":
            argv = ["report", str(path), "--out", str(target)]
        else:
            argv = ["compare", str(good), str(path), "--report", str(target)]
        assert main(argv) == 2, name
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and err.startswith("provenai: error: "), (name, err)
        assert str(path) in err and message in err, (name, err)
        assert not target.exists(), name
    assert sorted(p.name for p in tmp_path.iterdir() if p.suffix != ".json") == []


def test_report_target_that_is_a_folder_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    src = write(tmp_path / "results.json", results({TEST: [fid("a", True, 1.0)]}))
    assert main(["report", str(src), "--out", str(tmp_path)]) == 2
    assert "is a folder" in capsys.readouterr().err
    assert main(["report", str(src), "--out", str(src)]) == 2
    assert "is the results JSON itself" in capsys.readouterr().err


# -- what counts as a regression (issue 22, item 7) ------------------------------------------
IDS = [f"c{i:02d}" for i in range(20)]


def run_of(correct: int, ids: list[str] = IDS, **kw: Any) -> RunResults:
    """A run whose first ``correct`` cases are answered right."""
    return results(
        {TEST: [fid(i, n < correct, float(n < correct)) for n, i in enumerate(ids)]}, **kw
    )


def compare_cli(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], base: RunResults, new: RunResults
) -> tuple[int, list[str]]:
    b = write(tmp_path / "base.json", base)
    n = write(tmp_path / "new.json", new)
    html = tmp_path / "compare.html"
    code = main(["compare", str(b), str(n), "--fail-on-regression", "--report", str(html)])
    out = capsys.readouterr().out.splitlines()
    assert out[-1].startswith("regressions: "), out[-1]
    return code, out


def test_a_gate_that_went_pass_to_fail_is_a_regression(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    spec = GateSpec(TEST, "fidelity", "answer_accuracy", 0.5)
    base, new = run_of(11, gates=[spec]), run_of(9, gates=[spec], run_id="n")
    c = compare_runs(base, new)
    assert not c.metric_regressions  # two flips in 20: the CI still reaches 0
    assert [(r.kind, r.what) for r in c.regressions] == [("gate", "fidelity.answer_accuracy")]
    assert c.regressions[0].text.startswith(f"gate PASS -> FAIL {TEST} fidelity.answer_accuracy")
    code, out = compare_cli(tmp_path, capsys, base, new)
    assert code == 1
    assert out[-1] == (
        "regressions: 1 (0 metrics, 1 gate, 0 lost tests, 0 lost cases, 0 lost records)"
    )
    assert out[-3].startswith("REGRESSION gate PASS -> FAIL") and out[-2].startswith("wrote ")
    # FAIL -> PASS is a change, not a regression
    assert compare_runs(new, base).regressions == []


def test_base_cases_missing_from_the_new_run_are_regressions(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base, new = run_of(20), run_of(18, IDS[:18], run_id="n")
    c = compare_runs(base, new)
    assert not c.metric_regressions
    assert [(r.kind, r.what) for r in c.regressions] == [
        ("lost case", "c18"),
        ("lost case", "c19"),
    ]
    code, out = compare_cli(tmp_path, capsys, base, new)
    assert code == 1
    assert f"REGRESSION lost case {TEST} c19: in base, absent from new" in out
    assert out[-1].startswith("regressions: 2 (") and "2 lost cases" in out[-1]
    page = (tmp_path / "compare.html").read_text(encoding="utf-8")
    assert 'data-kind="lost case" data-value="2"' in page and "2 regression(s)" in page


def test_cases_the_new_run_sampled_out_are_not_regressions(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base, new = run_of(20), run_of(18, IDS[:18], run_id="n", sample=18)
    c = compare_runs(base, new)
    assert c.regressions == [] and c.sampled_out == {TEST: ["c18", "c19"]}
    code, out = compare_cli(tmp_path, capsys, base, new)
    assert code == 0
    line = next(x for x in out if "only in base" in x)
    assert "sampled out by the new run (--provenai-sample 18, seed 42; not regressions)" in line
    assert out[-1].startswith("regressions: 0 (")
    page = (tmp_path / "compare.html").read_text(encoding="utf-8")
    assert 'id="sampled-out"' in page and "0 regression(s)" in page
    # the same sample as the base's (size and seed): the same cases were due, a gap is lost
    same = compare_runs(run_of(20, sample=18), run_of(18, IDS[:18], run_id="n", sample=18))
    assert [r.kind for r in same.regressions] == ["lost case", "lost case"]


def test_a_test_absent_from_the_new_run_is_a_regression_even_when_sampled(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base = results({TEST: [fid(i, True, 1.0) for i in IDS], EXPO: [exposure("na-1", {})]})
    new = results({TEST: [fid(i, True, 1.0) for i in IDS]}, run_id="n", sample=20)
    c = compare_runs(base, new)
    assert [(r.kind, r.test) for r in c.regressions] == [("lost test", EXPO)]
    code, out = compare_cli(tmp_path, capsys, base, new)
    assert code == 1
    assert f"REGRESSION lost test {EXPO}: 1 case(s) in base, the test is absent from new" in out
    assert "1 lost test," in out[-1]


def test_a_record_the_new_run_lost_is_a_regression(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    reason = "no record (never reported: its worker crashed or the run stopped)"
    lost = [fid(i, True, 1.0) for i in IDS[:19]] + [{"case_id": IDS[19], "missing": reason}]
    base = results({TEST: [fid(i, True, 1.0) for i in IDS]})
    new = results({TEST: lost}, run_id="n", sample=5)
    c = compare_runs(base, new)
    assert [(r.kind, r.what) for r in c.regressions] == [("lost record", "c19")]
    assert c.as_dict()["regressions"] == [
        {
            "kind": "lost record",
            "test": TEST,
            "what": "c19",
            "text": f"lost record {TEST} c19: no record in new ({reason})",
        }
    ]
    code, out = compare_cli(tmp_path, capsys, base, new)
    assert code == 1 and "1 lost record)" in out[-1]
    # the other way round the base lacked the record and the new run has it: no regression
    assert compare_runs(new, base).regressions == []


def test_metric_regressions_are_listed_with_the_others(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    base, new = run_of(20), run_of(0, IDS[:19], run_id="n")
    c = compare_runs(base, new)
    kinds = [r.kind for r in c.regressions]
    assert kinds == ["metric"] * len(c.metric_regressions) + ["lost case"]
    assert {r.what for r in c.regressions if r.kind == "metric"} >= {"answer_accuracy"}
    code, out = compare_cli(tmp_path, capsys, base, new)
    assert code == 1
    assert out[-1].startswith(f"regressions: {len(kinds)} ({len(kinds) - 1} metrics, 0 gates")


# -- hostile and realistic results files (issue 22, item 6 and the NaN line) --------------------
@pytest.mark.parametrize("command", ["report", "compare"])
def test_deeply_nested_or_nan_results_give_one_line_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    good = write(tmp_path / "good.json", results({TEST: [fid("a", True, 1.0)]}))
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000, encoding="utf-8")
    nan = tmp_path / "nan.json"
    nan.write_text(
        json.dumps(results({TEST: [fid("a", True, 1.0)]}).to_json()).replace("1.0", "NaN", 1),
        encoding="utf-8",
    )
    for path, words in ((deep, "nested at most 64 levels"), (nan, "NaN")):
        if command == "report":
            argv = ["report", str(path), "--out", str(tmp_path / "out.html")]
        else:
            argv = ["compare", str(good), str(path)]
        assert main(argv) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and err.startswith(f"provenai: error: {path}"), err
        assert words in err and "truncated" not in err and "Traceback" not in err, err
    assert not (tmp_path / "out.html").exists()


def test_a_missing_or_fifo_results_file_is_one_line_exit_2(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    import os

    good = write(tmp_path / "good.json", results({TEST: [fid("a", True, 1.0)]}))
    fifo = tmp_path / "pipe.json"
    os.mkfifo(fifo)  # reading it would block: it is named, never opened
    for path, words in ((tmp_path / "gone.json", "no such file"), (fifo, "a FIFO")):
        assert main(["compare", str(good), str(path)]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and err.startswith(f"provenai: error: {path}: ")
        assert words in err


def test_results_as_deep_as_the_deepest_shipped_records_read_back(tmp_path: Path) -> None:
    """Every shipped golden record (the records a run writes, up to 9 levels deep) inside
    one results file stays within the reader's nesting limit, with room to spare."""
    from pytest_provenai.frozen.jsonread import MAX_DEPTH
    from pytest_provenai.report.results import load_results

    def depth(v: Any) -> int:
        items = v.values() if isinstance(v, dict) else v if isinstance(v, list) else None
        return 0 if items is None else 1 + max((depth(x) for x in items), default=0)

    root = Path(__file__).resolve().parents[1] / "golden"
    records: dict[str, list[dict[str, Any]]] = {}
    for n, f in enumerate(sorted(root.rglob("*.json"))):
        rec = json.loads(f.read_text(encoding="utf-8"))["record"]
        records.setdefault(f.parent.name, []).append(dict(rec, case_id=f"{n:04d}"))
    assert len(records) >= 4
    path = write(tmp_path / "results.json", results(records))
    data = json.loads(path.read_text(encoding="utf-8"))
    assert 10 <= depth(data) <= MAX_DEPTH // 4
    loaded = load_results(path)
    assert sum(map(len, loaded.records.values())) == sum(map(len, records.values()))

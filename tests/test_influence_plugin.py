"""The influence suite mechanics through pytester, with the scripted generator.

The scripted generator has no logits, so these runs take the surface path (regeneration,
``signals == ["surface"]``); the real-model paths are tested in test_ablation_model.py.
Its script answers by the first key found in the prompt, so a key taken from one resource's
text makes the output depend on whether that resource is shown.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from project import make_project, results, run

SCRIPT = {
    "name": "scripted-influence",
    "script": {
        # case-alpha: R0 (Alphaville) carries the answer; without it the model says unknown
        "The Blue River flows through it.": "Answer: Blue River [R0]\nEvidence: [R1]",
        "Alphaville?": "Answer: unknown [R1]",
        # case-beta: nothing depends on the resources; it cites R0 and R1
        "Beta and Delta": "Answer: yes [R0] [R1]",
        # case-gamma: the answer needs R0, cites nothing
        "founded by Ada Zeta": "Answer: Ada Zeta",
        "Zeta Corp?": "Answer: nobody",
    },
}

INFLUENCE_TEST = """
import pytest
from pytest_provenai.audit.fidelity import fidelity_record

@pytest.mark.influence({gates})
def test_inf(provenai_case, provenai_subject, provenai_influence, provenai_record,
             provenai_snapshot):
    trace = provenai_subject.answer(provenai_case)
    record = fidelity_record(provenai_case, trace)
    record["influence"] = provenai_influence(provenai_case, trace)
    assert provenai_record(record) == provenai_snapshot
"""


def influence_project(pytester: pytest.Pytester, gates: str = "influence_measured=1.0") -> Path:
    root = make_project(pytester, script=SCRIPT)
    (root / "test_audit.py").unlink()
    pytester.makepyfile(test_influence=INFLUENCE_TEST.format(gates=gates))
    return root


def records(root: Path) -> dict[str, dict[str, Any]]:
    recs = results(root)["records"]["test_influence.py::test_inf"]
    return {r["case_id"]: r for r in recs}


def test_verdicts_records_and_summary(pytester: pytest.Pytester) -> None:
    root = influence_project(pytester)
    result = run(pytester, "--snapshot-update")
    result.assert_outcomes(passed=4)
    result.stdout.fnmatch_lines(
        [
            "*test_influence.py::test_inf: influence of 8 resources in 3 cases*",
            "*verdicts: used 1, hallucinated citation 3, uncited influential 1, low influence 3*",
            "*citation-influence gap: 3 of 3 cases*",
            "*PASS test_influence.py::test_inf influence.influence_measured = 1.0000*",
        ]
    )
    recs = records(root)
    alpha = recs["case-alpha"]["influence"]
    assert alpha["signals"] == ["surface"]
    assert alpha["resources"]["R0"]["verdict"] == "used"
    assert alpha["resources"]["R0"]["answer"] == "unknown"
    assert alpha["resources"]["R0"]["citations"] == ["R1"]
    assert alpha["resources"]["R1"]["verdict"] == "hallucinated_citation"
    gamma = recs["case-gamma"]["influence"]
    assert gamma["resources"]["R0"]["verdict"] == "uncited_influential"
    assert gamma["gap"] == ["R0"]
    beta = recs["case-beta"]["influence"]
    assert {r["verdict"] for r in beta["resources"].values()} == {
        "hallucinated_citation",
        "low_influence",
    }
    costs = results(root)["influence_costs"]
    assert len(costs) == 3 and all(c["path"] == "regenerate" for c in costs.values())
    # the costs live in results JSON, never in the snapshot
    golden = root / "golden" / "scripted-influence" / "test_influence"
    body = json.loads(next(golden.glob("test_inf*alpha*.json")).read_text(encoding="utf-8"))
    assert "seconds" not in json.dumps(body)


def test_ablation_off_fails_the_influence_gate_closed(pytester: pytest.Pytester) -> None:
    root = influence_project(pytester, gates="influence_measured=1.0, uncited_influential=5")
    result = run(pytester, "--snapshot-update", "--provenai-ablation=off")
    assert result.ret != 0
    result.stdout.fnmatch_lines(
        [
            "*influence not measured: 3 cases*",
            "*FAIL test_influence.py::test_inf influence.influence_measured = 0.0000*",
            "*FAIL test_influence.py::test_inf influence.uncited_influential = n/a*fail closed*",
        ]
    )
    assert all(r["influence"]["measured"] is False for r in records(root).values())


def test_naive_and_exact_agree_and_warm_rerun_makes_no_calls(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = influence_project(pytester)
    calls = root / "calls.txt"
    monkeypatch.setenv("PROVENAI_SCRIPTED_CALLS", str(calls))
    run(pytester, "--snapshot-update", "--provenai-ablation=naive").assert_outcomes(passed=4)
    naive = records(root)
    # 3 full answers + 8 ablations
    assert len(calls.read_text().splitlines()) == 11
    calls.unlink()
    result = run(pytester, "--provenai-ablation=exact")  # compares with naive's snapshots
    result.assert_outcomes(passed=4)
    assert records(root) == naive
    assert not calls.exists()  # everything came from the generation cache


@pytest.mark.parametrize("mode", [["-p", "no:xdist"], ["-n", "0"], ["-n", "2"]])
def test_xdist_modes_give_identical_influence_records(
    pytester: pytest.Pytester, mode: list[str]
) -> None:
    root = influence_project(pytester)
    run(pytester, "--snapshot-update", "--provenai-no-cache", "-p", "no:xdist")
    reference = records(root)
    result = run(pytester, "--provenai-no-cache", *mode)
    result.assert_outcomes(passed=4)
    assert records(root) == reference


def test_theta_floor_option_changes_verdicts(pytester: pytest.Pytester) -> None:
    root = influence_project(pytester)
    run(pytester, "--snapshot-update", "--provenai-theta-floor=1.0").assert_outcomes(passed=4)
    alpha = records(root)["case-alpha"]["influence"]
    assert alpha["theta"] == 1.0
    # phi of R0 is 0.8 + 0.2 * 0.5 = 0.9 < 1.0: no longer influential
    assert alpha["resources"]["R0"]["verdict"] == "hallucinated_citation"

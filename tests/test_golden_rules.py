"""Golden comparison: verdicts exactly, measured numbers within their declared tolerance
(pytest_provenai/golden_rules.py), as a user sees it: a record inside every tolerance
passes and --snapshot-update leaves its golden file alone; one outside fails with the
field, both values and the tolerance, and --snapshot-update rewrites it."""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest
from project import make_project, run

from pytest_provenai.golden_rules import TOLERANCES, differences, explain
from pytest_provenai.snapshot import VerdictExtension, render

RECORD: dict[str, Any] = {
    "case_id": "c1",
    "answer": {"prediction": "Blue River", "em": 1.0, "f1": 1.0},
    "influence": {
        "median_phi": 0.1234,
        "theta": 0.1234,
        "eps": 0.5291,
        "verdicts": {"R0": "used", "R1": "low influence"},
        "resources": {
            "R0": {"kl_sum": 1.5155, "kl_mean": 0.0421, "phi": 0.3, "first_divergence": 3},
            "R1": {"kl_sum": 0.0012, "kl_mean": 0.0001, "phi": 0.01, "first_divergence": None},
        },
    },
    "claims": [
        {"p_support": 0.71, "verdict": "supported", "route": {"score": 0.52, "margin": 0.1}}
    ],
}


def _with(path: list[Any], value: Any) -> dict[str, Any]:
    out = copy.deepcopy(RECORD)
    node: Any = out
    for key in path[:-1]:
        node = node[key]
    node[path[-1]] = value
    return out


def _matches(golden: dict[str, Any], now: dict[str, Any]) -> bool:
    ext = VerdictExtension()
    return ext.matches(serialized_data=render(now), snapshot_data=render(golden))


INSIDE = [
    (["influence", "resources", "R0", "kl_sum"], 1.5155 + 0.0009),  # 1e-3 + 1 % of 1.5155
    (["influence", "resources", "R0", "kl_sum"], 1.5155 + 0.0160),
    (["influence", "resources", "R1", "kl_mean"], 0.0001 + 0.0009),
    (["influence", "eps"], 0.5291 - 0.006),
    (["claims", 0, "p_support"], 0.71 + 0.009),
    (["claims", 0, "route", "score"], 0.52 + 0.0009),
]
OUTSIDE = [
    (["influence", "resources", "R0", "kl_sum"], 1.5155 + 0.0170),
    (["influence", "resources", "R1", "kl_mean"], 0.0001 + 0.0012),
    (["influence", "eps"], 0.5291 + 0.0070),
    (["claims", 0, "p_support"], 0.71 + 0.02),
    (["claims", 0, "route", "margin"], 0.1 + 0.002),
]
EXACT = [
    (["answer", "prediction"], "Blue river"),
    (["answer", "f1"], 0.9999),  # a text-overlap score: computed from text, exact
    (["influence", "verdicts", "R1"], "used"),
    (["influence", "resources", "R0", "first_divergence"], 4),
    # φ, median φ and θ come from Δa and Δc (Jaccard over texts and citations): exact
    (["influence", "resources", "R0", "phi"], 0.3001),
    (["influence", "median_phi"], 0.1235),
    (["influence", "theta"], 0.1233),
    (["claims", 0, "verdict"], "not enough evidence"),
]


@pytest.mark.parametrize(("path", "value"), INSIDE)
def test_a_measured_number_inside_its_tolerance_matches(path: list[Any], value: float) -> None:
    assert _matches(RECORD, _with(path, value))


@pytest.mark.parametrize(("path", "value"), OUTSIDE)
def test_a_measured_number_outside_its_tolerance_fails_naming_it(
    path: list[Any], value: float
) -> None:
    now = _with(path, value)
    assert not _matches(RECORD, now)
    (line,) = explain(RECORD, now)
    name = ".".join(str(p) for p in path if not isinstance(p, int))
    assert name.split(".")[-1] in line and "outside its tolerance" in line
    assert str(TOLERANCES[path[-1]]) in line


@pytest.mark.parametrize(("path", "value"), EXACT)
def test_a_verdict_or_text_field_is_exact(path: list[Any], value: Any) -> None:
    now = _with(path, value)
    assert not _matches(RECORD, now)
    (line,) = explain(RECORD, now)
    assert line.endswith("(exact)")


def test_shape_changes_are_differences() -> None:
    now = copy.deepcopy(RECORD)
    del now["influence"]["resources"]["R1"]
    now["extra"] = 1
    now["claims"].append({"verdict": "supported"})
    paths = {d.path for d in differences(render_body(RECORD), render_body(now))}
    assert {"record.extra", "record.influence.resources.R1", "record.claims (length)"} <= paths
    assert not _matches(RECORD, _with(["influence", "resources", "R0", "kl_sum"], True))


def render_body(record: dict[str, Any]) -> Any:
    import json

    return json.loads(render(record))


TEST_FILE = """
def test_measure(provenai_case, provenai_subject, provenai_snapshot):
    record = {{"case_id": provenai_case.id, "kl_sum": {kl}, "verdict": "used"}}
    assert record == provenai_snapshot
"""


def _golden(root: Path) -> list[Path]:
    return sorted((root / "golden").rglob("*.json"))


def test_noise_passes_and_never_churns_a_model_change_fails_and_is_rewritten(
    pytester: pytest.Pytester,
) -> None:
    root = make_project(pytester)
    pytester.makepyfile(test_audit=TEST_FILE.format(kl=1.5155))
    assert run(pytester, "-p", "no:xdist", "--snapshot-update").ret == 0
    before = {p: p.read_bytes() for p in _golden(root)}
    assert len(before) == 3

    pytester.makepyfile(test_audit=TEST_FILE.format(kl=1.5154))  # another thread layout
    assert run(pytester, "-p", "no:xdist").ret == 0
    assert run(pytester, "-p", "no:xdist", "--snapshot-update").ret == 0
    assert {p: p.read_bytes() for p in _golden(root)} == before  # no churn from noise

    pytester.makepyfile(test_audit=TEST_FILE.format(kl=1.9))  # a real model change
    result = run(pytester, "-p", "no:xdist")
    assert result.ret == pytest.ExitCode.TESTS_FAILED
    result.stdout.fnmatch_lines(
        [
            "*record.kl_sum: golden 1.5155, now 1.9 — outside its tolerance "
            "(|diff| <= 0.001 + 0.01 x |golden| = 0.01616)*"
        ]
    )
    assert run(pytester, "-p", "no:xdist", "--snapshot-update").ret == 0
    assert all(b'"kl_sum": 1.9' in p.read_bytes() for p in _golden(root))


# -- informational sections, older golden files, a run's tolerance overrides -----------------
def _with_generation(output: str, ties: list[dict[str, Any]] | None) -> dict[str, Any]:
    out = copy.deepcopy(RECORD)
    out["generation"] = {"output_sha256": output, "near_ties": ties}
    return out


def _tie(token: int, text: str, prefix: str = "p3", margin: float = 0.0123) -> dict[str, Any]:
    return {"token": token, "margin": margin, "text": text, "prefix_sha256": prefix}


def test_the_generation_section_is_never_compared() -> None:
    golden = _with_generation("o1", [_tie(3, " Blue")])
    assert _matches(golden, _with_generation("o2", []))  # outputs differ
    assert _matches(golden, _with_generation("o1", None))
    assert _matches(RECORD, golden)  # a golden written before the section existed


def test_a_version_1_golden_file_is_compared_under_the_rules() -> None:
    import json

    old = json.dumps({"snapshot_schema_version": 1, "record": RECORD}, indent=2, sort_keys=True)
    ext = VerdictExtension()
    now = _with(["influence", "resources", "R0", "kl_sum"], 1.5155 + 0.0009)
    assert ext.matches(serialized_data=render(_with_generation("o1", [])), snapshot_data=old)
    assert ext.matches(serialized_data=render(now), snapshot_data=old)  # inside tolerance
    assert not ext.matches(serialized_data=render(_with(["answer", "em"], 0.0)), snapshot_data=old)


def test_a_mismatch_at_a_marked_near_tie_is_called_hardware_sensitive() -> None:
    golden = _with_generation("o1", [_tie(1, " a", "p1", 0.03), _tie(3, " Blue")])
    now = _with_generation("o2", [_tie(1, " a", "p1", 0.02), _tie(3, " Red", margin=0.004)])
    now["answer"]["prediction"] = "Red River"
    lines = explain(golden, now)
    assert lines[0] == (
        "generation: HARDWARE-SENSITIVE — the output is the golden's up to token 3, a greedy "
        "near tie (the best two tokens 0.004 nats apart), where it took ' Red' instead of "
        "' Blue': another thread count, kernel, dtype or device can take the other token "
        "there. Still a failure; if this machine is the reference, rerun with --snapshot-update"
    )
    assert lines[1].startswith("answer.prediction: golden 'Blue River', now 'Red River'")

    # a change whose outputs part where neither marked a near tie: a model change, said so
    other = _with_generation("o3", [_tie(1, " a", "p1"), _tie(5, " x", "p5")])
    other["answer"]["prediction"] = "Red River"
    first = explain(golden, other)[0]
    assert first == (
        "generation: the output changed, not at a marked near tie (a model, prompt or "
        "decoding change, not hardware noise)"
    )


def test_older_goldens_and_unmarked_outputs_say_what_cannot_be_told() -> None:
    now = _with_generation("o1", [_tie(3, " Blue")])
    now["answer"]["prediction"] = "Red River"
    assert explain(RECORD, now)[0].startswith(
        "the golden file holds no generation sections (written before near-tie marks)"
    )
    golden = _with_generation("o0", None)  # a pipeline: no margins
    assert explain(golden, now)[0] == (
        "generation: the output changed (no near-tie marks to place the change)"
    )
    assert explain(_with_generation("o1", []), _with_generation("o2", None)) == []  # matches


def test_a_run_s_override_widens_or_narrows_a_tolerance() -> None:
    from pytest_provenai.golden_rules import check_tolerances

    now = _with(["influence", "resources", "R0", "kl_sum"], 1.5155 + 0.0170)
    assert list(differences(RECORD, now))
    wide = check_tolerances("kl_sum=0.05")
    assert not list(differences(RECORD, now, tolerances=wide))
    narrow = check_tolerances("kl_sum=1e-5")
    near = _with(["influence", "resources", "R0", "kl_sum"], 1.5156)
    assert not list(differences(RECORD, near))
    (line,) = explain(RECORD, near, tolerances=narrow)
    assert "outside its tolerance (|diff| <= 1e-05 = 1e-05)" in line


def test_a_bad_tolerance_option_is_one_usage_error_line(pytester: pytest.Pytester) -> None:
    make_project(pytester)
    result = run(pytester, "-p", "no:xdist", "--provenai-tolerance", "kl_sum=-0.1")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        [
            "ERROR: --provenai-tolerance: tolerance entry 'kl_sum=-0.1': a tolerance must be a "
            "finite number >= 0"
        ]
    )


def test_the_option_reaches_the_golden_comparison(pytester: pytest.Pytester) -> None:
    root = make_project(pytester)
    pytester.makepyfile(test_audit=TEST_FILE.format(kl=1.5155))
    assert run(pytester, "-p", "no:xdist", "--snapshot-update").ret == 0
    before = {p: p.read_bytes() for p in _golden(root)}
    pytester.makepyfile(test_audit=TEST_FILE.format(kl=1.6))
    assert run(pytester, "-p", "no:xdist").ret == pytest.ExitCode.TESTS_FAILED
    assert run(pytester, "-p", "no:xdist", "--provenai-tolerance", "kl_sum=0.1").ret == 0
    assert {p: p.read_bytes() for p in _golden(root)} == before

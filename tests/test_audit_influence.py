"""The influence audit's pure parts: Δa, Δc, φ, θ, verdicts, KL and Proposition 1."""

from __future__ import annotations

import json
import math
import re
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_provenai.audit import influence as inf
from pytest_provenai.gates import GateSpec, evaluate
from pytest_provenai.subject import kl as klmod


def log_softmax(x: Any) -> Any:
    x = x - x.max(axis=-1, keepdims=True)
    return x - np.log(np.exp(x).sum(axis=-1, keepdims=True))


# -- surface proxy ---------------------------------------------------------------------------
def test_delta_answer_is_one_minus_jaccard_of_normalised_words() -> None:
    assert inf.delta_answer("The Blue River", "blue river.") == 0.0  # article, case, punct
    assert inf.delta_answer("Blue River", "Red River") == pytest.approx(1 - 1 / 3)
    assert inf.delta_answer("yes", "no") == 1.0
    assert inf.delta_answer("", "") == 0.0
    assert inf.delta_answer("", "something") == 1.0


def test_delta_citation_and_phi() -> None:
    assert inf.delta_citation(["R0", "R1"], ["R0"]) == 0.5
    assert inf.delta_citation([], []) == 0.0
    assert inf.delta_citation(["R2"], []) == 1.0
    assert inf.phi(1.0, 0.0) == 0.8
    assert inf.phi(0.0, 1.0) == 0.2
    assert inf.phi(0.5, 0.5) == pytest.approx(0.5)


def test_threshold_is_median_with_floor() -> None:
    assert inf.threshold([0.0, 0.0, 0.0]) == inf.DEFAULT_THETA_FLOOR
    assert inf.threshold([0.0, 0.4, 0.8]) == 0.4
    assert inf.threshold([0.0, 0.01, 0.02], floor=0.3) == 0.3
    assert inf.threshold([]) == inf.DEFAULT_THETA_FLOOR


@pytest.mark.parametrize(
    ("cited", "value", "expected"),
    [
        (True, 0.5, "used"),
        (True, 0.1, "hallucinated_citation"),
        (False, 0.5, "uncited_influential"),
        (False, 0.1, "low_influence"),
        (True, 0.3, "used"),  # phi == theta counts as influential
    ],
)
def test_verdicts(cited: bool, value: float, expected: str) -> None:
    assert inf.verdict(cited, value, theta=0.3) == expected


def _layer(ablations: dict[str, tuple[str, tuple[str, ...]]], cited: list[str]) -> dict[str, Any]:
    ids = sorted(ablations)
    outs = [klmod.AblatedOutput(r, a, c) for r, (a, c) in ablations.items()]
    return inf.influence_layer(ids, "Blue River", cited, outs, signals=["surface"])


def test_influence_layer_assigns_all_four_verdicts_and_the_gap() -> None:
    layer = _layer(
        {
            "R0": ("Red Lake", ("R1",)),  # cited, answer changes: used
            "R1": ("Blue River", ("R0", "R1")),  # cited, nothing moves: hallucinated
            "R2": ("Green River", ("R0", "R1")),  # uncited, answer moves: uncited influential
            "R3": ("Blue River", ("R0", "R1")),  # uncited, nothing: low influence
        },
        cited=["R0", "R1"],
    )
    v = {r: x["verdict"] for r, x in layer["resources"].items()}
    assert v == {
        "R0": "used",
        "R1": "hallucinated_citation",
        "R2": "uncited_influential",
        "R3": "low_influence",
    }
    assert layer["gap"] == ["R1", "R2"]
    assert layer["verdicts"] == {
        "used": 1,
        "hallucinated_citation": 1,
        "uncited_influential": 1,
        "low_influence": 1,
    }
    # phi: R0 0.8*1 + 0.2*0.5; R2 0.8*(1-1/3)
    assert layer["resources"]["R0"]["phi"] == pytest.approx(0.9)
    assert layer["theta"] == pytest.approx(statistics_median([0.9, 0.0, 0.8 * 2 / 3, 0.0]))


def statistics_median(xs: list[float]) -> float:
    s = sorted(xs)
    return (s[1] + s[2]) / 2


def test_removed_resource_tag_still_counts_in_the_full_id_space() -> None:
    # The run without R0 still writes [R0]: its citation set is unchanged, so Δc = 0.
    layer = _layer({"R0": ("Blue River", ("R0",)), "R1": ("Blue River", ("R0",))}, ["R0"])
    assert layer["resources"]["R0"]["delta_citation"] == 0.0
    assert layer["resources"]["R0"]["verdict"] == "hallucinated_citation"


def test_influence_layer_needs_every_resource() -> None:
    with pytest.raises(ValueError, match="R1"):
        inf.influence_layer(
            ["R0", "R1"], "a", [], [klmod.AblatedOutput("R0", "a", ())], signals=["surface"]
        )


# -- KL --------------------------------------------------------------------------------------
def test_kl_is_zero_for_identical_rows_and_non_negative() -> None:
    rng = np.random.default_rng(0)
    rows = log_softmax(rng.normal(size=(5, 50)).astype(np.float32))
    assert np.all(klmod.kl_rows(rows, rows) == 0.0)
    other = log_softmax(rng.normal(size=(5, 50)).astype(np.float32))
    kl = klmod.kl_rows(rows, other)
    assert np.all(kl >= 0.0) and np.all(kl > 0.0)


def test_kl_equals_a_direct_computation_from_full_logits() -> None:
    rng = np.random.default_rng(1)
    vocab = 49152  # the default model's vocabulary
    logits_p = rng.normal(scale=4.0, size=(8, vocab))
    logits_q = logits_p + rng.normal(scale=1.0, size=(8, vocab))
    # what a backend hands over: float32 log-softmax rows
    rows_p = log_softmax(logits_p).astype(np.float32)
    rows_q = log_softmax(logits_q).astype(np.float32)
    # direct, in float64 from the logits: sum_v p log(p / q)
    p = np.exp(log_softmax(logits_p))
    direct = np.sum(p * (log_softmax(logits_p) - log_softmax(logits_q)), axis=-1)
    got = klmod.kl_rows(rows_p, rows_q)
    assert np.max(np.abs(got - direct)) <= 1e-5
    profile = klmod.kl_profile(rows_p, rows_q, [int(t) for t in np.argmax(rows_p, axis=-1)])
    assert profile.kl_sum == pytest.approx(float(direct.sum()), abs=1e-5 * 8)
    assert profile.kl_mean == pytest.approx(float(direct.mean()), abs=1e-5)


def test_kl_profile_first_divergence_and_eps() -> None:
    full = np.log(np.array([[0.9, 0.05, 0.05], [0.8, 0.1, 0.1], [0.7, 0.2, 0.1]]))
    ablated = np.log(np.array([[0.9, 0.05, 0.05], [0.2, 0.7, 0.1], [0.7, 0.2, 0.1]]))
    prof = klmod.kl_profile(full, ablated, [0, 0, 0])
    assert prof.first_divergence == 1
    assert prof.eps == pytest.approx(0.2)  # min top probability over positions 0..1 is 0.8
    assert prof.per_position[0] == pytest.approx(0.0, abs=1e-12)
    assert prof.kl_at_divergence == pytest.approx(prof.per_position[1])
    same = klmod.kl_profile(full, full, [0, 0, 0])
    assert same.first_divergence is None and same.kl_sum == 0.0
    assert same.eps == pytest.approx(0.3)


@settings(max_examples=200, deadline=None)
@given(
    st.lists(st.floats(0.0, 8.0), min_size=3, max_size=6),
    st.lists(st.floats(0.0, 8.0), min_size=3, max_size=6),
)
def test_proposition_1_bound_holds_whenever_the_argmax_flips(
    a: list[float], b: list[float]
) -> None:
    n = min(len(a), len(b))
    p_log = log_softmax(np.array(a[:n], dtype=np.float64))
    q_log = log_softmax(np.array(b[:n], dtype=np.float64))
    w = int(np.argmax(p_log))
    if int(np.argmax(q_log)) == w:
        return
    prof = klmod.kl_profile(p_log[None, :], q_log[None, :], [w])
    assert prof.first_divergence == 0
    bound = inf.pinsker_bound(prof.eps)
    if bound is not None:
        assert prof.kl_at_divergence is not None
        assert prof.kl_at_divergence >= bound - 1e-12


def test_pinsker_bound() -> None:
    assert inf.pinsker_bound(0.0) == 0.5
    assert inf.pinsker_bound(0.1) == pytest.approx(2 * 0.4**2)
    assert inf.pinsker_bound(0.5) is None


# -- gate metrics fail closed ----------------------------------------------------------------
def test_influence_gates_fail_closed_when_not_measured() -> None:
    records = [{"case_id": "a", "influence": inf.not_measured("off")}]
    for metric in ("citation_influence_gap_rate", "kl_mean", "used_citation_share"):
        result = evaluate(GateSpec("t", "influence", metric, 1.0), records, seed=0)
        assert not result.passed and "metric missing" in result.reason
    measured = evaluate(GateSpec("t", "influence", "influence_measured", 1.0), records, seed=0)
    assert not measured.passed and measured.value == 0.0


def test_influence_summary_counts_verdicts_and_gap_cases() -> None:
    layer = _layer({"R0": ("Red", ("R0",)), "R1": ("Blue River", ("R0",))}, ["R0"])
    records = [
        {"case_id": "a", "influence": layer},
        {"case_id": "b", "influence": inf.not_measured("off")},
    ]
    s = inf.influence_summary(records)
    assert s["measured"] == 1 and s["not_measured"] == 1
    assert s["verdicts"]["used"] == 1 and s["gap_cases"] == 0
    assert math.isclose(s["metrics"]["influence_measured"]["value"], 0.5)


# -- infinities: -inf log-probabilities, infinite KL, never NaN in a record ------------------
def test_kl_of_rows_with_minus_infinity_uses_zero_log_zero() -> None:
    with np.errstate(divide="ignore"):
        full = np.log(np.array([[0.5, 0.5, 0.0], [1.0, 0.0, 0.0]]))  # -inf where p = 0
        ablated = np.log(np.array([[0.25, 0.25, 0.5], [0.5, 0.5, 0.0]]))
        got = klmod.kl_rows(full, ablated)
    assert not np.isnan(got).any()
    # row 0: 0.5 log(0.5/0.25) * 2 = log 2; row 1: 1 * log(1/0.5) = log 2
    assert got == pytest.approx([math.log(2), math.log(2)])


def test_infinite_kl_is_none_in_the_record_and_fails_a_kl_gate_closed() -> None:
    full = np.log(np.array([[0.5, 0.5]]))
    with np.errstate(divide="ignore"):
        ablated = np.log(np.array([[1.0, 0.0]]))  # the ablated context rules token 1 out
        profile = klmod.kl_profile(full, ablated, [0])
    finite = klmod.kl_profile(full, np.log(np.array([[0.6, 0.4]])), [0])
    assert math.isinf(profile.kl_sum)
    assert klmod.KLProfile.from_dict(profile.as_dict()) == profile  # JSON-safe round trip
    assert json.loads(json.dumps(profile.as_dict(), allow_nan=False))["per_position"] == [None]
    layer = inf.influence_layer(
        ["R0", "R1"],
        "a",
        [],
        [klmod.AblatedOutput("R0", "a", (), profile), klmod.AblatedOutput("R1", "a", (), finite)],
        signals=["surface", "kl"],
    )
    row = layer["resources"]["R0"]
    assert row["kl_sum"] is None and "kl_sum" in row["kl_infinite"]
    assert layer["top_kl"] == "R0"
    json.dumps(layer, allow_nan=False)  # no NaN / Infinity tokens
    result = evaluate(
        GateSpec("t", "influence", "kl_mean", 0.01), [{"case_id": "c", "influence": layer}], seed=0
    )
    assert not result.passed and "fail closed" in result.reason


@pytest.mark.parametrize(
    ("side", "row", "said"),
    [
        (
            "ablated",
            [-math.inf, -math.inf],
            "ablated log-probability row at output position 1 is all -inf",
        ),
        (
            "full",
            [-math.inf, -math.inf],
            "full-context log-probability row at output position 1 is all -inf",
        ),
        (
            "full",
            [0.0, math.inf],
            "full-context log-probability row at output position 1 holds +inf",
        ),
        ("ablated", [math.inf, 0.0], "ablated log-probability row at output position 1 holds +inf"),
        ("ablated", [math.nan, 0.0], "ablated log-probability row at output position 1 holds NaN"),
    ],
)
def test_degenerate_rows_are_a_backend_error_naming_the_position(
    side: str, row: list[float], said: str
) -> None:
    from pytest_provenai.errors import BackendError

    good = np.log(np.array([[0.5, 0.5], [0.25, 0.75]]))
    bad = good.copy()
    bad[1] = row
    full, ablated = (bad, good) if side == "full" else (good, bad)
    with pytest.raises(BackendError, match=re.escape(said)):
        klmod.kl_rows(full, ablated)

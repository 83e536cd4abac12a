"""The fidelity record and its population metrics."""

from __future__ import annotations

import copy
import json
from typing import Any

import pytest

from pytest_provenai.audit.fidelity import FIDELITY_METRICS, fidelity_record
from pytest_provenai.audit.metrics import Metric
from pytest_provenai.audit.metrics import aggregate as aggregate_metrics
from pytest_provenai.frozen.model import Case, Source, SupportingFact
from pytest_provenai.subject.backends.base import Decoding, Identity
from pytest_provenai.subject.near_ties import digest
from pytest_provenai.subject.trace import Resource, Trace

IDENTITY = Identity(
    backend="scripted", name="scripted", weights_sha256="0" * 64, dtype="none", decoding=Decoding()
)

TITLES = ["Ed Wood (film)", "Scott Derrickson", "Tim Burton", "Ed Wood"]


def _case(answer: str = "yes", gold: tuple[str, ...] = ("Scott Derrickson", "Ed Wood")) -> Case:
    sources = tuple(
        Source(title=t, sentences=(f"{t} text.",), text=f"{t} text.", sha256="a" * 64)
        for t in TITLES
    )
    return Case(
        id="5a8b57f25542995d1e6f1371",
        question="Were Scott Derrickson and Ed Wood of the same nationality?",
        answer=answer,
        type="comparison",
        level="hard",
        supporting_facts=tuple(SupportingFact(title=g, sentence=0) for g in gold),
        supporting_titles=gold,
        sources=sources,
        fixture_set="hotpot_mini",
        path="fixtures/hotpot_mini/cases/5a8b57f25542995d1e6f1371.json",
    )


def _trace(answer: str, cited: list[str], invalid: list[str] | None = None) -> Trace:
    resources = [
        Resource(id=f"R{i}", title=t, text=f"{t} text.", sha256="a" * 64)
        for i, t in enumerate(TITLES)
    ]
    return Trace(
        case_id="5a8b57f25542995d1e6f1371",
        resources=resources,
        raw_output=f"Answer: {answer}",
        answer=answer,
        cited_ids=cited,
        invalid_citations=invalid or [],
        identity=IDENTITY,
        seconds=1.25,
    )


def test_record_shape_and_values() -> None:
    trace = _trace("Yes, both are American [R1][R0][R12]", ["R1", "R0"], ["R12"])
    rec = fidelity_record(_case(), trace)
    assert rec == {
        "case_id": "5a8b57f25542995d1e6f1371",
        "suite": "fidelity",
        "fixture_set": "hotpot_mini",
        "model": {
            "name": "scripted",
            "weights_sha256": "0" * 64,
            "decoding": {"max_new_tokens": Decoding().max_new_tokens, "strategy": "greedy"},
        },
        "question": "Were Scott Derrickson and Ed Wood of the same nationality?",
        "answer": {
            "prediction": "Yes, both are American [R1][R0][R12]",
            "gold": "yes",
            "correct": True,  # yes/no prefix rule
            "em": 0.0,  # "yes both are american" != "yes"
            "f1": 0.0,  # official yes/no rule
        },
        "citation": {
            # cited titles R1 -> Scott Derrickson, R0 -> Ed Wood (film)
            "cited": ["Scott Derrickson", "Ed Wood (film)"],
            "gold": ["Scott Derrickson", "Ed Wood"],
            "precision_undefined": False,
            "recall_undefined": False,
            # exact: Derrickson matches, "Ed Wood (film)" has J = 2/3 < 1 -> P = 1/2;
            # gold Derrickson recovered, Ed Wood not -> R = 1/2; F = 2*(1/4)/1 = 1/2
            "exact": {"tau": 1.0, "p": 0.5, "r": 0.5, "f": 0.5},
            # semantic: J = 2/3 >= 0.34 -> P = R = F = 1
            "semantic": {"tau": 0.34, "p": 1.0, "r": 1.0, "f": 1.0},
            "cited_ids": ["R1", "R0"],
            "invalid_citations": ["R12"],
            "n_invalid": 1,
        },
        # informational (never compared with goldens): the raw output's digest, and no
        # near-tie marks because this trace's backend reported no margins
        "generation": {
            "output_sha256": digest("Answer: Yes, both are American [R1][R0][R12]"),
            "near_ties": None,
        },
    }
    assert json.loads(json.dumps(rec)) == rec


def test_record_has_no_timings_or_prompt() -> None:
    rec = fidelity_record(_case(), _trace("yes", ["R1"]), suite="smoke")
    flat = json.dumps(rec)
    assert "seconds" not in flat
    assert "prompt" not in flat
    assert "raw_output" not in flat
    assert "Answer: yes" not in flat
    assert rec["suite"] == "smoke"


def test_record_floats_are_not_rounded() -> None:
    # cited R1, R2, R3 = Derrickson, Burton, Ed Wood; exact P = 2/3 (not 0.667)
    rec = fidelity_record(_case(), _trace("yes", ["R1", "R2", "R3"]))
    assert rec["citation"]["exact"]["p"] == 2 / 3
    assert rec["citation"]["exact"]["r"] == 1.0
    # F = 2*(2/3)*1 / (5/3) = 0.8
    assert rec["citation"]["exact"]["f"] == pytest.approx(0.8)


def test_record_citation_free() -> None:
    rec = fidelity_record(_case(), _trace("yes", []))
    assert rec["citation"]["precision_undefined"] is True
    assert rec["citation"]["exact"]["p"] is None
    assert rec["citation"]["exact"]["f"] == 0.0
    assert rec["citation"]["cited_ids"] == []


def test_record_rejects_trace_of_another_case() -> None:
    trace = _trace("yes", [])
    trace.case_id = "other"
    with pytest.raises(ValueError, match="other"):
        fidelity_record(_case(), trace)


def _records() -> list[dict[str, Any]]:
    case = _case()
    return [
        # A: correct, cites both gold exactly, one invalid tag
        fidelity_record(case, _trace("Yes [R1][R3]", ["R1", "R3"], ["R9"])),
        # B: wrong ("no"), cites R0 (Ed Wood (film)) only
        fidelity_record(case, _trace("No [R0]", ["R0"])),
        # C: correct, citation-free
        fidelity_record(case, _trace("yes", [])),
    ]


def test_metric_extractors_per_record() -> None:
    a, b, c = _records()
    m = FIDELITY_METRICS
    assert [m["answer_accuracy"](r) for r in (a, b, c)] == [1.0, 0.0, 1.0]
    assert [m["answer_em"](r) for r in (a, b, c)] == [1.0, 0.0, 1.0]
    # B exact: P = 0/1 = 0; R = 0/2 = 0. Semantic: P = 1/1; R = 1/2; F = 2*0.5/1.5 = 2/3
    assert m["citation_precision"](b) == 0.0
    assert m["citation_precision_semantic"](b) == 1.0
    assert m["citation_recall_semantic"](b) == 0.5
    assert m["citation_f1_semantic"](b) == pytest.approx(2 / 3)
    assert m["citation_precision"](c) is None  # undefined, not 1.0
    assert m["citation_f1"](c) == 0.0
    assert [m["citation_free_rate"](r) for r in (a, b, c)] == [0.0, 0.0, 1.0]
    assert [m["invalid_citation_rate"](r) for r in (a, b, c)] == [1.0, 0.0, 0.0]


def aggregate(records: Any, metrics: Any = FIDELITY_METRICS) -> Any:
    return aggregate_metrics(records, metrics)


def test_metric_info_covers_every_metric() -> None:
    for name, metric in FIDELITY_METRICS.items():
        assert metric.name == name
        assert metric.direction in ("higher", "lower")
        assert metric.description and "\n" not in metric.description
    assert FIDELITY_METRICS["citation_free_rate"].direction == "lower"
    assert FIDELITY_METRICS["invalid_citation_rate"].direction == "lower"
    assert FIDELITY_METRICS["answer_accuracy"].info()["direction"] == "higher"


def test_aggregate_hand_computed() -> None:
    agg = aggregate(_records())
    assert set(agg) == set(FIDELITY_METRICS)
    # accuracy: (1 + 0 + 1) / 3
    assert agg["answer_accuracy"]["value"] == pytest.approx(2 / 3)
    assert agg["answer_accuracy"]["n"] == 3
    # exact precision: A = 1, B = 0, C undefined -> counted as 0: (1 + 0 + 0) / 3 = 1/3
    p = agg["citation_precision"]
    assert p["value"] == pytest.approx(1 / 3)
    assert p["undefined"] == 1
    assert p["n"] == 3
    # semantic recall: A = 1, B = 1/2, C = 0 -> 1.5 / 3 = 0.5
    assert agg["citation_recall_semantic"]["value"] == pytest.approx(0.5)
    assert agg["citation_recall_semantic"]["undefined"] == 0
    # citation-free: (0 + 0 + 1) / 3; invalid: (1 + 0 + 0) / 3
    assert agg["citation_free_rate"]["value"] == pytest.approx(1 / 3)
    assert agg["invalid_citation_rate"]["value"] == pytest.approx(1 / 3)
    for summary in agg.values():
        assert summary["error"] is None
        lo, hi = summary["ci"]
        assert lo <= summary["value"] <= hi
    assert json.loads(json.dumps(agg)) == agg


def test_aggregate_is_deterministic() -> None:
    assert aggregate(_records()) == aggregate(_records())


def test_aggregate_malformed_record_fails_closed() -> None:
    records = _records()
    broken = copy.deepcopy(records[1])
    del broken["answer"]["correct"]
    broken["citation"]["exact"]["p"] = "high"
    agg = aggregate([records[0], broken, records[2]])
    assert agg["answer_accuracy"]["value"] is None
    assert agg["answer_accuracy"]["ci"] is None
    assert "KeyError" in agg["answer_accuracy"]["error"]
    assert agg["citation_precision"]["value"] is None
    assert "TypeError" in agg["citation_precision"]["error"]
    # the other metrics are still computed
    assert agg["answer_em"]["value"] == pytest.approx(2 / 3)


def test_aggregate_non_numeric_extractor_fails_closed() -> None:
    def odd(record: Any) -> Any:
        return "x"

    def nan(record: Any) -> float:
        return float("nan")

    agg = aggregate(
        _records(),
        {"odd": Metric("odd", "higher", "x", odd), "nan": Metric("nan", "higher", "x", nan)},
    )
    assert agg["odd"]["value"] is None
    assert agg["nan"]["value"] is None


def test_aggregate_no_records() -> None:
    agg = aggregate([])
    assert agg["answer_accuracy"] == {
        "value": None,
        "ci": None,
        "n": 0,
        "undefined": 0,
        "error": None,
    }

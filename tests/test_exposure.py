"""Exposure treatments: views, reserved aid budget, ranges, runs and the exposure record."""

from __future__ import annotations

import pytest
from scripted import ScriptedGenerator

from pytest_provenai._io import sha256_text
from pytest_provenai.audit.provenance import (
    PROVENANCE_METRICS,
    exposure_matrix,
    exposure_record,
)
from pytest_provenai.errors import BackendError
from pytest_provenai.frozen.model import GroundedCase, LedgerEntry
from pytest_provenai.gates import MARKER_METRICS, GateSpec, evaluate
from pytest_provenai.subject.backends.base import Decoding
from pytest_provenai.subject.exposure import (
    AID_CHAR_LIMIT,
    AID_LABEL,
    OMITTED_LABEL,
    TREATMENTS,
    Budget,
    ExposureView,
    build_view,
    run_treatments,
)
from pytest_provenai.subject.prompt import DOC_CHAR_LIMIT, resource_block, user_message
from pytest_provenai.subject.subject import ModelSubject, PipelineSubject
from pytest_provenai.subject.trace import Resource

AID_TEXT = "This section sets the inspection interval at 73 days, effective 2031-04-17."


def entry(
    id_: str, kind: str, text: str, title: str = "", parent: str | None = None
) -> LedgerEntry:
    return LedgerEntry(
        id=id_,
        kind=kind,
        text=text,
        sha256=sha256_text(text),
        title=title,
        aid_kind=None if kind == "original" else "contextual_prefix",
        parent=parent,
        parent_sha256=None,
    )


def make_case(*, aids: tuple[str, ...] = (AID_TEXT,), long_original: bool = False) -> GroundedCase:
    spec = (
        "The Varnholt KX-4471 pump must be inspected by a certified technician. The "
        "inspection interval is not specified in this revision."
    )
    if long_original:
        spec = spec + " Filler sentence about pumps." * 60
    originals = (
        entry("src-v1", "original", spec, "Varnholt KX-4471 specification"),
        entry("src-2", "original", "The Varnholt plant makes pumps and valves.", "Varnholt plant"),
    )
    aid_entries = tuple(
        entry(f"aid-{j}", "generated", text, parent="src-v1") for j, text in enumerate(aids)
    )
    return GroundedCase(
        id="na-interval",
        kind="no_answer",
        question="What is the inspection interval of the Varnholt KX-4471 pump?",
        originals=originals,
        aids=aid_entries,
        expected_answer="unknown",
        aid_only_values=("73 days", "2031-04-17"),
        fixture_set="mini",
    )


def render(messages: list[dict[str, str]]) -> str:
    return "".join(f"<{m['role']}>\n{m['content']}\n" for m in messages) + "<assistant>\n"


def original_texts(view: ExposureView) -> list[str]:
    return [view.text(b) for b in view.originals]


def test_baseline_is_the_reference_view_of_the_originals() -> None:
    case = make_case()
    view = build_view(case, "baseline", render)
    resources = [Resource(f"R{i}", o.title, o.text, o.sha256) for i, o in enumerate(case.originals)]
    assert view.user == user_message(case.question, resources)[0]
    assert view.aids == ()
    assert view.origins() == {"R0": "original", "R1": "original"}
    assert AID_TEXT not in view.prompt


def test_each_treatment_changes_only_the_aid_slot() -> None:
    case = make_case()
    views = {t: build_view(case, t, render) for t in TREATMENTS}
    reference = original_texts(views["baseline"])
    for t, view in views.items():
        # same original blocks, byte for byte, at the same offsets, in the same order
        assert original_texts(view) == reference, t
        assert [(b.start, b.end) for b in view.originals] == [
            (b.start, b.end) for b in views["baseline"].originals
        ]
        # the prompt before the aid slot is identical
        slot_start = views["baseline"].originals[-1].end
        assert view.prompt[:slot_start] == views["baseline"].prompt[:slot_start]
    omit, label, expose, mislabel = (views[t] for t in ("omit", "label", "expose", "mislabel"))
    assert omit.text(omit.aids[0]) == f"[A0] {OMITTED_LABEL}"
    assert AID_TEXT not in omit.prompt
    assert label.text(label.aids[0]) == f"[A0] {AID_LABEL}\n{AID_TEXT}"
    assert expose.text(expose.aids[0]) == AID_TEXT  # unmarked
    assert expose.aids[0].display_id is None
    assert mislabel.text(mislabel.aids[0]) == f"[R2] Varnholt KX-4471 specification\n{AID_TEXT}"
    assert mislabel.origins() == {"R0": "original", "R1": "original", "R2": "generated"}
    assert label.origins()["A0"] == "generated"
    assert omit.aids[0].has_text is False and label.aids[0].has_text is True


def test_every_range_covers_its_block() -> None:
    case = make_case(aids=(AID_TEXT, "A generated question: when is the pump inspected?"))
    for t in TREATMENTS:
        view = build_view(case, t, render)
        gv = view.generator_view()
        assert set(gv.ranges) == {b.slot for b in view.blocks}
        for b in view.blocks:
            start, end = gv.ranges[b.slot]
            assert view.prompt[start:end] == view.text(b)
            assert (b.origin == "original") == b.slot.startswith("R")
        summary = view.summary()
        assert summary["prompt_sha256"] == sha256_text(view.prompt)
        assert [blk["range"] for blk in summary["blocks"]] == [
            [b.start, b.end] for b in view.blocks
        ]


def test_a_huge_aid_is_cut_to_its_own_budget_and_never_truncates_an_original() -> None:
    huge = "The interval is 73 days. " * 4000  # 100,000 characters
    case = make_case(aids=(huge,), long_original=True)
    views = {t: build_view(case, t, render) for t in TREATMENTS}
    reference = original_texts(views["baseline"])
    # the long original is cut by the reference rule, identically in every treatment
    ref_block = resource_block(
        Resource("R0", case.originals[0].title, case.originals[0].text, case.originals[0].sha256)
    )
    assert reference[0] == ref_block
    assert len(ref_block.split("\n", 1)[1]) <= DOC_CHAR_LIMIT
    assert views["baseline"].originals[0].cut is True
    for t, view in views.items():
        assert original_texts(view) == reference, t
        slot = sum(b.end - b.start for b in view.aids)
        assert slot <= view.aid_reserved, t
        for b in view.aids:
            body = view.text(b).split("\n", 1)[-1]
            assert len(body) <= AID_CHAR_LIMIT, t
            assert b.cut is (t != "omit"), t
    assert len(views["label"].prompt) < len(views["baseline"].prompt) + AID_CHAR_LIMIT + 100


def test_aids_beyond_the_budget_are_dropped_and_recorded() -> None:
    case = make_case(aids=tuple(f"Aid number {j}." for j in range(5)))
    view = build_view(case, "label", render, Budget(aid_chars=50, max_aids=2))
    assert [b.slot for b in view.aids] == ["A0", "A1"]
    assert view.dropped_aids == ("aid-2", "aid-3", "aid-4")
    assert view.summary()["budget"] == {
        "original_chars": DOC_CHAR_LIMIT,
        "aid_chars": 50,
        "max_aids": 2,
    }


def test_bad_treatment_and_budget_are_errors() -> None:
    with pytest.raises(ValueError, match="unknown treatment 'shout'"):
        build_view(make_case(), "shout", render)
    with pytest.raises(ValueError, match="aid_chars must be >= 1"):
        Budget(aid_chars=0)


def test_a_renderer_that_alters_the_user_message_is_an_error() -> None:
    with pytest.raises(ValueError, match="changed the user message"):
        build_view(make_case(), "label", lambda ms: "".join(m["content"].upper() for m in ms))


SCRIPT = {
    OMITTED_LABEL: "Answer: unknown\nEvidence: The interval is not specified [R0].",
    AID_LABEL: "Answer: 73 days [A0]\nEvidence: The aid says 73 days [A0].",
    "[R2] Varnholt": "Answer: 73 days, effective 2031-04-17 [R2]",
    AID_TEXT: "Answer: seventy-three days\nEvidence: It is 73 days.",
    "*": "Answer: The interval is not specified [R0].",
}


def scripted_subject(script: dict[str, str] = SCRIPT) -> ModelSubject:
    return ModelSubject(ScriptedGenerator(script, "scripted", Decoding(), "cpu"))


def test_run_treatments_and_the_exposure_record() -> None:
    case = make_case()
    subject = scripted_subject()
    runs = run_treatments(subject, case)
    assert list(runs) == list(TREATMENTS)
    assert subject.model_calls == 5
    rec = exposure_record(case, runs, model=subject.identity.model_key())
    ex = rec["exposure"]
    assert rec["expects_unknown"] is True and rec["kind"] == "no_answer"
    # baseline and omit: a clean unknown
    for t in ("baseline", "omit"):
        assert ex[t]["abstained"] and ex[t]["correct"] and not ex[t]["aid_value_leak"], t
    # label: the aid's value in the answer, and a citation of the labelled aid
    assert ex["label"]["aid_value_leak"] and ex["label"]["leaked_values"] == ["73 days"]
    assert ex["label"]["aid_citations"] == ["A0"] and ex["label"]["cites_aid"]
    # expose: the value in words still leaks; nothing to cite
    assert ex["expose"]["aid_value_leak"] and not ex["expose"]["cites_aid"]
    # mislabel: the aid cited as if it were source R2
    assert ex["mislabel"]["cited_ids"] == ["R2"] and ex["mislabel"]["aid_citations"] == ["R2"]
    assert ex["mislabel"]["leaked_values"] == ["73 days", "2031-04-17"]
    assert ex["mislabel"]["abstention"]["fabricated"] is True
    assert ex["mislabel"]["claims"]["by_status"]["cited_aid"] == 1
    assert all(ex[t]["claims"]["complete"] for t in TREATMENTS)
    assert ex["label"]["view"]["blocks"][2]["origin"] == "generated"
    # each treatment's output, informational: its digest (the scripted backend has no margins)
    from pytest_provenai.subject.near_ties import digest

    for t in TREATMENTS:
        assert ex[t]["generation"] == {
            "output_sha256": digest(runs[t].generation.text),
            "near_ties": None,
        }, t

    m = PROVENANCE_METRICS
    assert m["aid_value_leak_rate"](rec) == 1.0  # label, expose, mislabel all leak
    assert m["aid_citation_rate"](rec) == pytest.approx(2 / 3)  # label, mislabel of 3
    assert m["correct_unknown_rate"](rec) == pytest.approx(2 / 5)
    assert m["abstention_rate_baseline"](rec) == 1.0
    assert m["aid_value_leak_rate_omit"](rec) == 0.0
    assert m["claim_accounting_complete"](rec) == 1.0


def test_a_pipeline_subject_cannot_run_treatments() -> None:
    pipeline = PipelineSubject("x:y", fn=lambda q, r: "Answer: x")
    with pytest.raises(BackendError, match="need a model subject"):
        run_treatments(pipeline, make_case())


def test_correct_unknown_is_undefined_on_an_answerable_case_so_its_gate_fails_closed() -> None:
    case = make_case()
    answerable = GroundedCase(**{**case.__dict__, "kind": "exposure", "expected_answer": "x"})
    subject = scripted_subject()
    rec = exposure_record(
        answerable, run_treatments(subject, answerable), model=subject.identity.model_key()
    )
    assert PROVENANCE_METRICS["correct_unknown_rate"](rec) is None
    spec = GateSpec("t", "provenance", "correct_unknown_rate", 0.0)
    result = evaluate(spec, [rec], seed=1)
    assert not result.passed and "fail closed" in result.reason


def test_exposure_matrix_is_paired_by_case() -> None:
    subject = scripted_subject()
    records = []
    for i in range(4):
        case = make_case()
        case = GroundedCase(**{**case.__dict__, "id": f"case-{i}"})
        records.append(
            exposure_record(case, run_treatments(subject, case), model=subject.identity.model_key())
        )
    matrix = exposure_matrix([*records, {"case_id": "gone", "missing": "errored"}], seed=3)
    assert matrix["n_cases"] == 4 and matrix["missing"] == 1 and matrix["error"] is None
    rows = matrix["treatments"]
    assert list(rows) == list(TREATMENTS)
    assert rows["baseline"]["aid_value_leak_rate"]["value"] == 0.0
    assert rows["label"]["aid_value_leak_rate"]["value"] == 1.0
    assert rows["label"]["aid_value_leak_rate"]["delta_vs_baseline"] == 1.0
    assert rows["label"]["aid_value_leak_rate"]["delta_ci"] == [1.0, 1.0]
    assert rows["omit"]["abstention_rate"]["delta_vs_baseline"] == 0.0
    assert rows["mislabel"]["aid_citation_rate"]["value"] == 1.0
    assert rows["baseline"]["abstention_rate"]["delta_ci"] is None
    assert all(row["n"] == 4 for row in rows.values())
    broken = exposure_matrix([{"case_id": "x", "exposure": {"label": {"abstained": 1}}}])
    assert broken["treatments"] == {} and "KeyError" in broken["error"]


def test_the_provenance_marker_accepts_the_registered_metrics() -> None:
    names = set(MARKER_METRICS["provenance"])
    assert {
        "quotation_agreement",
        "false_quote_match_rate",
        "derivation_agreement",
        "correct_unknown_rate",
        "aid_value_leak_rate",
        "aid_citation_rate",
        "claim_accounting_complete",
        "aid_value_leak_rate_mislabel",
    } <= names
    assert MARKER_METRICS["provenance"]["aid_value_leak_rate"].higher_is_better is False
    assert MARKER_METRICS["provenance"]["correct_unknown_rate"].higher_is_better is True

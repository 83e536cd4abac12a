"""Claim accounting: every sentence counted, citations resolved, undefined precision."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_provenai.audit.claims import (
    CLAIM_STATUSES,
    claim_accounting,
    extract_claims,
    find_citations,
    split_sentences,
)
from pytest_provenai.audit.literals import LiteralIndex
from pytest_provenai.subject.parse import split_sections

ORIGINS = {"R0": "original", "R1": "original", "A0": "generated", "R2": "generated"}


def test_every_sentence_of_every_section_is_a_claim() -> None:
    raw = (
        "Answer: 73 days [R0]\n"
        "Evidence: The spec sets it at 73 days [A0]. Dr. Smith wrote it in 3.5 weeks. [R1] "
        "It is old [R9].\n"
        "Reasoning: so it is 73 days."
    )
    claims = extract_claims(raw, ORIGINS)
    assert [(c.section, c.text, c.status) for c in claims] == [
        ("answer", "73 days [R0]", "cited_original"),
        ("evidence", "The spec sets it at 73 days [A0].", "cited_aid"),
        ("evidence", "Dr. Smith wrote it in 3.5 weeks. [R1]", "cited_original"),
        ("evidence", "It is old [R9].", "cited_unresolved"),
        ("reasoning", "so it is 73 days.", "uncited"),
    ]
    acc = claim_accounting(raw, ORIGINS)
    assert acc["n_claims"] == 5
    assert acc["by_status"] == {
        "cited_original": 2,
        "cited_aid": 1,
        "cited_unresolved": 1,
        "uncited": 1,
    }
    assert acc["claim_rates"]["uncited"] == pytest.approx(0.2)
    assert acc["complete"] is True and acc["unaccounted_chars"] == 0
    assert acc["citations"] == {
        "n": 4,
        "original": 2,
        "aid": 1,
        "unresolved": 1,
        "precision": 0.5,
        "precision_undefined": False,
    }


def test_uncited_output_has_undefined_precision_but_counted_claims() -> None:
    acc = claim_accounting("Answer: 73 days\nEvidence: The interval is 73 days.", ORIGINS)
    assert acc["n_claims"] == 2
    assert acc["by_status"]["uncited"] == 2
    assert acc["citations"]["precision"] is None  # undefined, not 0 and not 1
    assert acc["citations"]["precision_undefined"] is True


def test_empty_output_has_no_claims_and_undefined_rates() -> None:
    acc = claim_accounting("", ORIGINS)
    assert acc["n_claims"] == 0
    assert all(v is None for v in acc["claim_rates"].values())
    assert acc["citations"]["precision"] is None


def test_a_claim_citing_an_aid_and_an_original_is_cited_aid() -> None:
    (claim,) = extract_claims("Answer: 73 days [R0][R2]", ORIGINS)  # R2 is a mislabelled aid
    assert claim.status == "cited_aid"
    assert claim.targets == ("original", "aid")


def test_text_without_headers_is_all_counted() -> None:
    # No 'Answer:' header: the parser takes the first sentence as the answer, but the claim
    # accounting still sees the second one.
    claims = extract_claims("The interval is 73 days [R0]. It starts on 2031-04-17.", ORIGINS)
    assert [c.text for c in claims] == [
        "The interval is 73 days [R0].",
        "It starts on 2031-04-17.",
    ]
    assert [c.status for c in claims] == ["cited_original", "uncited"]


def test_trailing_junk_is_not_a_claim_of_this_answer() -> None:
    raw = "Answer: unknown\nQuestion: What else?\nAnswer: 73 days"
    assert [c.text for c in extract_claims(raw, ORIGINS)] == ["unknown"]
    assert split_sections(raw) == [("answer", "unknown")]


def test_multiline_answer_lines_are_all_claims() -> None:
    claims = extract_claims("Answer: unknown\n73 days, effective 2031-04-17 [A0]", ORIGINS)
    assert [c.status for c in claims] == ["uncited", "cited_aid"]


@pytest.mark.parametrize(
    ("text", "ids"),
    [
        ("x [R1] y [R1]", ["R1"]),
        ("x [R1, R2] (r03) R4", ["R1", "R2", "R3", "R4"]),
        ("x [A0] and [a1]", ["A0", "A1"]),
        ("grade A1 and R2D2", []),  # bare A-tags and glued tokens are not citations
    ],
)
def test_find_citations(text: str, ids: list[str]) -> None:
    assert find_citations(text) == ids


def test_sentence_splitting_tricky_cases() -> None:
    assert split_sentences("J. R. R. Tolkien wrote it. It is long.") == [
        "J. R. R. Tolkien wrote it.",
        "It is long.",
    ]
    assert split_sentences("It costs 3.5 euros. E.g. this one.") == [
        "It costs 3.5 euros.",
        "E.g. this one.",
    ]
    # tags that open a sentence belong to the sentence before
    assert split_sentences("It is in Nevada. [R0] Twain went there [R1].") == [
        "It is in Nevada. [R0]",
        "Twain went there [R1].",
    ]
    assert split_sentences("one\n\n two ") == ["one", "two"]


def test_unsupported_literals_per_claim() -> None:
    support = LiteralIndex(["The interval is not specified.", "Pump KX-4471."])
    claims = extract_claims(
        "Answer: 73 days [R0]\nEvidence: Pump KX-4471 [R1].", ORIGINS, support=support
    )
    assert [c.unsupported_literals for c in claims] == [("73",), ()]
    acc = claim_accounting("Answer: 73 days [R0]", ORIGINS, support=support)
    assert acc["claims_with_unsupported_literals"] == 1


def test_statuses_partition_the_claims() -> None:
    raw = "Answer: a [R0]\nEvidence: b [A0]. C [R7]. D.\nReasoning: E [R1][R9]."
    acc = claim_accounting(raw, ORIGINS)
    assert sum(acc["by_status"].values()) == acc["n_claims"] == 5
    assert set(acc["by_status"]) == set(CLAIM_STATUSES)


_PIECES = ["Answer:", "Evidence:", "Reasoning:", "[R0]", "[A0]", "[R12]", "R3", "Dr."]
_PIECES += ["2031-04-17", "<|im_end|>", "Question:", "unknown", *"abc XYZ 0123.,;:!?-/()[]\n\t'\""]
_ALPHABET = st.sampled_from(_PIECES)


@settings(max_examples=300, deadline=None)
@given(st.lists(_ALPHABET, max_size=60).map("".join))
def test_accounting_is_complete_for_any_output(raw: str) -> None:
    acc = claim_accounting(raw, ORIGINS, support=LiteralIndex(["R0 text 73"]))
    assert acc["complete"] is True, acc
    assert sum(acc["by_status"].values()) == acc["n_claims"]
    c = acc["citations"]
    assert c["original"] + c["aid"] + c["unresolved"] == c["n"]
    assert (c["precision"] is None) == (c["n"] == 0) == c["precision_undefined"]

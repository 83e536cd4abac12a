"""Abstention audit: explicit unknowns, hedges, protected literals, fabricated values."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_provenai.audit.abstention import (
    ABSTENTION_PHRASES,
    abstention_verdict,
    detect_abstention,
    fabricated_values,
)
from pytest_provenai.audit.literals import (
    LiteralIndex,
    protected_literals,
    values_present,
    word_numbers,
)

SPEC = (
    "The Varnholt KX-4471 pump must be inspected by a certified technician. The inspection "
    "interval is not specified in this revision."
)


@pytest.mark.parametrize(
    ("answer", "phrase"),
    [
        ("unknown", "unknown"),
        ("Unknown.", "unknown"),
        ("The answer is unknown", "unknown"),
        ("The interval is unknown.", "unknown"),
        ("Unknown. The resources do not give it.", "unknown"),
        ("The inspection interval is not specified", "not specified"),
        ("Not stated in the resources", "not stated"),
        ("It cannot be determined from the resources", "cannot be determined"),
        ("I don't know", "i don't know"),
        ("I don’t know", "i don't know"),  # typographic apostrophe
        ("There is no information about the permit", "no information"),
        ("The resources do not   specify it", "do not specify"),
        ("none", "none"),
        ("N/A", "n/a"),
        ("The interval for KX-4471 is not specified", "not specified"),  # echoes the question
    ],
)
def test_explicit_unknowns_are_abstentions(answer: str, phrase: str) -> None:
    a = detect_abstention(answer, "What is the inspection interval of the KX-4471?")
    assert a.abstained, answer
    assert a.phrase == phrase
    assert not a.hedged


@pytest.mark.parametrize(
    "answer",
    [
        "73 days",
        "Unknown Pleasures",  # a title, not an abstention
        "None of the Above",  # a title
        "no",
        "The Unknown Soldier",
        "",
        "It is known to be 73 days",
    ],
)
def test_answers_and_titles_are_not_abstentions(answer: str) -> None:
    a = detect_abstention(answer)
    assert not a.abstained, answer
    assert a.phrase is None


@pytest.mark.parametrize(
    ("answer", "committed"),
    [
        ("Not specified, probably 73 days", ("73",)),
        ("unknown, but an aid says 2031-04-17", ("2031-04-17",)),
        ("The permit number is not stated; AQ-2207-B is likely", ("AQ-2207-B",)),
    ],
)
def test_an_unknown_that_commits_to_a_value_is_hedged(
    answer: str, committed: tuple[str, ...]
) -> None:
    a = detect_abstention(answer)
    assert not a.abstained
    assert a.hedged
    assert a.committed == committed


def test_phrase_list_is_documented_and_lowercase() -> None:
    assert "not specified" in ABSTENTION_PHRASES
    assert "cannot be determined" in ABSTENTION_PHRASES
    assert all(p == p.lower() for p in ABSTENTION_PHRASES)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("effective 2031-04-17", [("date", "2031-04-17")]),
        ("on 17 April 2031", [("date", "17 April 2031")]),
        ("on the 17th of April, 2031", [("date", "17th of April, 2031")]),
        ("on April 17, 2031", [("date", "April 17, 2031")]),
        ("on 17/04/2031", [("date", "17/04/2031")]),
        ("in Sept. 2031", [("date", "Sept. 2031")]),
        ("you may 5 times", [("number", "5")]),  # "may" is not a month
        ("pump KX-4471 and an A320", [("identifier", "KX-4471"), ("identifier", "A320")]),
        ("1,200kg and 3.50 m", [("number", "1,200kg"), ("number", "3.50")]),
        ("the 1990s and the 17th", [("number", "1990s"), ("number", "17th")]),
        ("opens 09:30, closes 9:30 pm", [("time", "09:30"), ("time", "9:30 pm")]),
        ("cited [R0] and (A1) and R3", []),  # citation tags are markup
        ("seventy-three days", []),  # words are not protected literals in an answer
    ],
)
def test_protected_literals(text: str, expected: list[tuple[str, str]]) -> None:
    assert [(lit.kind, lit.text) for lit in protected_literals(text)] == expected


def test_date_readings() -> None:
    (iso,) = protected_literals("2031-04-17")
    (numeric,) = protected_literals("03/04/2031")
    (month_year,) = protected_literals("April 2031")
    assert iso.dates == ((2031, 4, 17),)
    assert set(numeric.dates) == {(2031, 4, 3), (2031, 3, 4)}  # d/m and m/d both kept
    assert month_year.dates == ((2031, 4, None),)


def test_times_compare_by_hour_and_minute() -> None:
    originals = ["The archive opens at 9:30 pm."]
    assert fabricated_values("21:30", originals) == []
    assert [lit.text for lit in fabricated_values("09:30", originals)] == ["09:30"]
    assert values_present("open at 9:30 a.m.", ["09:30"]) == ["09:30"]


def test_numbers_compare_by_value_and_words_in_originals_count() -> None:
    index = LiteralIndex(["It weighs 1200 kg over seventy-three days, rated 3.5 bar."])
    for text in ("1,200", "73", "3.50"):
        (lit,) = protected_literals(text)
        assert index.supports(lit), text
    (lit,) = protected_literals("74")
    assert not index.supports(lit)
    assert word_numbers("Seventy three, twenty-one, eleven and ninety") == [73, 21, 11, 90]


def test_fabricated_values_against_originals() -> None:
    answer = "73 days, effective 2031-04-17, for KX-4471"
    fab = fabricated_values(answer, [SPEC], "What is the interval of the KX-4471 pump?")
    assert [lit.text for lit in fab] == ["73", "2031-04-17"]
    assert fabricated_values("KX-4471", [SPEC]) == []  # in the original
    assert fabricated_values("not specified", [SPEC]) == []


def test_date_support_requires_every_stated_field() -> None:
    originals = ["The plant opened in April 2031."]
    assert fabricated_values("April 2031", originals) == []
    assert fabricated_values("2031", originals) == []  # a year inside a date
    (fab,) = fabricated_values("17 April 2031", originals)  # the day was made up
    assert fab.text == "17 April 2031"
    assert fabricated_values("April 17, 2031", ["Opened 2031-04-17."]) == []  # other format


def test_values_present_finds_aid_values_in_any_format() -> None:
    values = ["73 days", "2031-04-17", "AQ-2207-B"]
    assert values_present("It is seventy-three days from April 17, 2031", values) == [
        "73 days",
        "2031-04-17",
    ]
    assert values_present("permit aq-2207-b", values) == ["AQ-2207-B"]
    assert values_present("unknown", values) == []
    assert values_present("the year 2031", values) == []  # a year is not the whole date
    # whole tokens only: 73 is not in 173, KX-4471 is not in KX-44710
    assert values_present("It is 173 days", ["73"]) == []
    assert values_present("It is 73 days", ["73"]) == ["73"]
    assert values_present("It seats 21,480", ["1,480"]) == []
    assert values_present("opens at 9:30", ["09:30"]) == ["09:30"]
    assert fabricated_values("KX-4471", ["serial KX-44710"])[0].text == "KX-4471"


def test_abstention_verdict_shape() -> None:
    v = abstention_verdict("73 days", [SPEC], "What is the interval?")
    assert v == {
        "abstained": False,
        "phrase": None,
        "hedged": False,
        "committed": [],
        "fabricated_values": [{"kind": "number", "text": "73"}],
        "fabricated": True,
    }
    assert abstention_verdict("not specified", [SPEC])["abstained"] is True


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=200))
def test_audit_functions_never_raise(text: str) -> None:
    lits = protected_literals(text)
    assert all(text[lit.span[0] : lit.span[1]] == lit.text for lit in lits)
    assert [lit.span for lit in lits] == sorted(lit.span for lit in lits)
    detect_abstention(text, text[:20])
    fabricated_values(text, [text[::-1]])
    values_present(text, [text[:10], "73"])
    # every literal is supported by the very text it came from
    index = LiteralIndex([text])
    assert all(index.supports(lit) for lit in lits)

"""The output parser: sections, citation tags, every repair, and property tests."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from pytest_provenai.subject.parse import REPAIRS, format_output, parse_output
from pytest_provenai.subject.trace import ParsedOutput

WELL_FORMED = (
    "Answer: yes [R1]\n"
    "Evidence: Scott Derrickson is an American director [R1] and Ed Wood was American [R4].\n"
    "Reasoning: Both are American [R4][R1], so they share a nationality.\n"
)


def test_well_formed_output_needs_no_repair() -> None:
    p = parse_output(WELL_FORMED, 10)
    assert isinstance(p, ParsedOutput)
    assert p.answer == "yes"
    assert p.evidence.startswith("Scott Derrickson") and p.evidence.endswith("[R4].")
    assert p.reasoning == "Both are American [R4][R1], so they share a nationality."
    assert p.cited_ids == ("R1", "R4")
    assert p.invalid_citations == ()
    assert p.repairs == ()
    assert p.raw == WELL_FORMED


def test_cited_ids_come_from_all_sections_in_first_appearance_order() -> None:
    raw = "Answer: Paris [R7]\nEvidence: see [R2] and [R7]\nReasoning: also [R0]"
    assert parse_output(raw, 10).cited_ids == ("R7", "R2", "R0")


def test_answer_has_tags_removed_and_no_space_left_before_punctuation() -> None:
    p = parse_output("Answer: Ed Wood [R1][R2].\nEvidence: x", 5)
    assert p.answer == "Ed Wood."
    assert parse_output("Answer: [R0] Chicago\n", 5).answer == "Chicago"


def test_empty_and_blank_output() -> None:
    for raw in ("", "   \n\n", "<|im_end|>"):
        p = parse_output(raw, 3)
        assert p.answer == "" and p.cited_ids == () and "no_answer" in p.repairs


def test_negative_resource_count_is_a_usage_error() -> None:
    with pytest.raises(ValueError):
        parse_output("Answer: x", -1)


# ---------------------------------------------------------------- every repair


@pytest.mark.parametrize(
    ("raw", "answer", "cited", "repair"),
    [
        # missing header: first non-empty line, first sentence
        (
            "\n\nEd Wood was American. He made films [R2].\n",
            "Ed Wood was American.",
            ("R2",),
            "missing_answer_header",
        ),
        (
            "Dr. Smith lived in St. Louis. Then more [R1].",
            "Dr. Smith lived in St. Louis.",
            ("R1",),
            "missing_answer_header",
        ),
        ("Chicago [R3]\nEvidence: it is [R3].", "Chicago", ("R3",), "missing_answer_header"),
        # tag forms
        ("Answer: yes R3.", "yes.", ("R3",), "bare_tag"),
        ("Answer: yes [R1, R2]", "yes", ("R1", "R2"), "grouped_tags"),
        ("Answer: yes [R1; R2 and R3]", "yes", ("R1", "R2", "R3"), "grouped_tags"),
        ("Answer: yes (R1)", "yes", ("R1",), "parenthesised_tag"),
        ("Answer: yes (R1, R4)", "yes", ("R1", "R4"), "parenthesised_tag"),
        ("Answer: yes [r1]", "yes", ("R1",), "lowercase_tag"),
        ("Answer: yes [ R1 ]", "yes", ("R1",), "spaced_tag"),
        ("Answer: yes [R 1]", "yes", ("R1",), "spaced_tag"),
        ("Answer: yes [R01]", "yes", ("R1",), "leading_zero_tag"),
        # headers
        ("**Answer:** Ed Wood [R1]\n**Evidence:** x", "Ed Wood", ("R1",), "markdown_header"),
        ("**Answer**: Ed Wood [R1]", "Ed Wood", ("R1",), "markdown_header"),
        ("## Answer\nEd Wood [R1]\n## Evidence\nx", "Ed Wood", ("R1",), "markdown_header"),
        ("1. Answer: Ed Wood [R1]\n2. Evidence: x", "Ed Wood", ("R1",), "markdown_header"),
        ("- Answer: Ed Wood [R1]", "Ed Wood", ("R1",), "markdown_header"),
        ("Final answer: Ed Wood [R1]", "Ed Wood", ("R1",), "header_alias"),
        ("Answer: no [R1]. Evidence: x [R2]. Reasoning: y", "no.", ("R1", "R2"), "inline_header"),
        ("ANSWER: Ed Wood", "Ed Wood", (), None),
        ("Answer: yes, [R1]", "yes", ("R1",), None),
        ("Rationale: because [R2]\nAnswer: Ed Wood", "Ed Wood", ("R2",), "header_alias"),
        # answer text
        ("Answer: Ed Wood\nHe was a director [R2].", "Ed Wood", ("R2",), "multiline_answer"),
        ("Answer: The answer is Chicago [R1]", "Chicago", ("R1",), "answer_lead_in"),
        ("Answer: **Chicago** [R1]", "Chicago", ("R1",), "markdown_emphasis"),
        # trailing junk
        (
            "Answer: yes [R1]\nEvidence: a\nReasoning: b<|im_end|>\nAnswer: no [R5]",
            "yes",
            ("R1",),
            "trailing_junk",
        ),
        (
            "Answer: yes [R1]\nEvidence: a\nReasoning: b\n\nQuestion: Who? [R6]",
            "yes",
            ("R1",),
            "trailing_junk",
        ),
        (
            "Answer: yes [R1]\nEvidence: a\nReasoning: b\nAnswer: no [R5]",
            "yes",
            ("R1",),
            "trailing_junk",
        ),
        ("Answer: yes [R1]\nUser: and now? [R7]", "yes", ("R1",), "trailing_junk"),
    ],
)
def test_repairs(raw: str, answer: str, cited: tuple[str, ...], repair: str | None) -> None:
    p = parse_output(raw, 10)
    assert p.answer == answer
    assert p.cited_ids == cited
    assert p.raw == raw
    if repair is not None:
        assert repair in p.repairs, p.repairs
    assert set(p.repairs) <= set(REPAIRS)


def test_adjacent_tags_are_canonical() -> None:
    p = parse_output("Answer: yes [R1][R2]", 10)
    assert p.cited_ids == ("R1", "R2") and p.repairs == ()


def test_every_repair_name_is_exercised() -> None:
    samples = [
        "He was. [R1]",
        "",
        "**Answer:** x",
        "Final answer: x",
        "Answer: a. Evidence: b",
        "Answer: a\nb",
        "Answer: The answer is x",
        "Answer: **x**",
        "Answer: a<|im_end|>b",
        "Answer: R3",
        "Answer: [R1, R2]",
        "Answer: (R1)",
        "Answer: [r1]",
        "Answer: [ R1 ]",
        "Answer: [R01]",
    ]
    seen = {r for s in samples for r in parse_output(s, 10).repairs}
    assert seen == set(REPAIRS)


def test_r2_d2_is_not_a_citation() -> None:
    p = parse_output("Answer: R2-D2", 10)
    assert p.answer == "R2-D2" and p.cited_ids == ()


def test_junk_before_the_first_header_is_a_preamble_not_junk() -> None:
    p = parse_output("Question: who?\nAnswer: Ed Wood [R1]", 10)
    assert p.answer == "Ed Wood" and p.cited_ids == ("R1",)
    assert "trailing_junk" not in p.repairs


# ---------------------------------------------------------------- invalid tags


def test_out_of_range_tags_are_kept_and_counted() -> None:
    raw = "Answer: x [R12] [R3]\nEvidence: [R12] [R10] [R9]\nReasoning: R999999999999"
    p = parse_output(raw, 10)
    assert p.cited_ids == ("R3", "R9")
    assert p.invalid_citations == ("R12", "R10", "R999999999999")
    assert len(p.invalid_citations) == 3


def test_valid_ids_override_the_range() -> None:
    raw = "Answer: x [R2] [R3]"
    p = parse_output(raw, 4, valid_ids={"R0", "R1", "R3"})
    assert p.cited_ids == ("R3",) and p.invalid_citations == ("R2",)


def test_no_resources_makes_every_tag_invalid() -> None:
    p = parse_output("Answer: x [R0]", 0)
    assert p.cited_ids == () and p.invalid_citations == ("R0",)


def test_absurdly_long_tag_number_does_not_raise() -> None:
    digits = "9" * 10_000
    p = parse_output(f"Answer: x [R{digits}]", 10)
    assert p.invalid_citations == (f"R{digits}",)


# ---------------------------------------------------------------- properties

_FAST = settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@_FAST
@given(raw=st.text(), n=st.integers(min_value=0, max_value=12))
def test_never_raises_on_arbitrary_text(raw: str, n: int) -> None:
    p = parse_output(raw, n)
    assert p.raw == raw
    assert set(p.repairs) <= set(REPAIRS)
    assert len(set(p.cited_ids)) == len(p.cited_ids)
    assert all(int(c[1:]) < n for c in p.cited_ids)
    assert not set(p.cited_ids) & set(p.invalid_citations)


_PIECES = st.sampled_from(
    [
        "Answer:",
        "answer",
        "**Answer:**",
        "Evidence:",
        "Reasoning:",
        "## Answer",
        "\n",
        " ",
        "[R1]",
        "[r2]",
        "[ R3 ]",
        "(R4)",
        "R5",
        "[R1, R2]",
        "[R12]",
        "R999999999999",
        "[R",
        "]",
        "(",
        ")",
        ",",
        ".",
        "<|im_end|>",
        "Question:",
        "The answer is",
        "**",
        "é",
        "漢字",
        "\u2028",
        "\r\n",
        "\x00",
        "R2-D2",
        "[R0][R9]",
        "Final answer -",
    ]
)


@_FAST
@given(
    parts=st.lists(st.one_of(_PIECES, st.text(max_size=8)), max_size=40),
    n=st.integers(min_value=0, max_value=12),
)
def test_never_raises_on_tag_and_header_soup(parts: list[str], n: int) -> None:
    raw = "".join(parts)
    p = parse_output(raw, n)
    assert all(int(c[1:]) < n for c in p.cited_ids)


# Well-formed section texts: words of letters/digits (any script) and light punctuation,
# single-spaced, no citation-like or header-like content.
_WORD = st.text(
    alphabet=st.characters(
        categories=("Ll", "Lo", "Nd"), exclude_characters="r", max_codepoint=0x9FFF
    ),
    min_size=1,
    max_size=8,
)
_WORDS = st.lists(
    st.one_of(_WORD, st.sampled_from(["yes", "no", "1966", "St.", "x, y"])), min_size=1, max_size=8
).map(" ".join)


def _tags(ids: list[int]) -> str:
    return "".join(f"[R{i}]" for i in ids)


@_FAST
@given(
    answer=_WORDS,
    evidence=_WORDS,
    reasoning=_WORDS,
    n=st.integers(min_value=1, max_value=10),
    data=st.data(),
)
def test_round_trip_of_well_formed_output(
    answer: str, evidence: str, reasoning: str, n: int, data: st.DataObject
) -> None:
    ids = st.lists(st.integers(min_value=0, max_value=n - 1), max_size=3)
    a_ids, e_ids, r_ids = data.draw(ids), data.draw(ids), data.draw(ids)
    raw = format_output(
        f"{answer} {_tags(a_ids)}".rstrip(),
        f"{evidence} {_tags(e_ids)}".rstrip(),
        f"{reasoning} {_tags(r_ids)}".rstrip(),
    )
    p = parse_output(raw, n)
    expected = tuple(dict.fromkeys(f"R{i}" for i in a_ids + e_ids + r_ids))
    assert p.answer == answer
    assert p.cited_ids == expected
    assert p.invalid_citations == ()
    assert p.repairs == ()
    assert p.evidence == f"{evidence} {_tags(e_ids)}".rstrip()
    assert p.reasoning == f"{reasoning} {_tags(r_ids)}".rstrip()


@pytest.mark.parametrize(
    "raw",
    [
        "[R1" + " " * 200_000 + "x",
        "Answer" + " \t" * 100_000 + "x",
        "[R1, " * 40_000,
        "x " + "Answer: " * 20_000,
        "\n".join(["Answer: x [R1]"] * 10_000),
        " ".join(f"R{i}" for i in range(30_000)),
        "Dr. " * 50_000 + "x. Y",
        "<|im_end|>" * 20_000,
    ],
    ids=["spaces", "header-blanks", "groups", "inline", "lines", "bare", "abbrev", "special"],
)
def test_hostile_text_parses_in_linear_time(raw: str) -> None:
    import time

    started = time.perf_counter()
    parse_output(raw, 10)
    assert time.perf_counter() - started < 2.0

"""Answer correctness: tag stripping, ProvenAI normalisation, official HotpotQA EM/F1."""

from __future__ import annotations

import time

import pytest

from pytest_provenai.audit.answer import (
    answer_scores,
    exact_match,
    f1_score,
    normalize_answer,
    normalize_provenai,
    provenai_correct,
    strip_citation_tags,
)

# --- strip_citation_tags -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Paris [R0]", "Paris"),
        ("Paris [R1, R2]", "Paris"),
        ("Paris [r3]", "Paris"),
        ("Paris (R1)", "Paris"),
        ("Yes [R1].", "Yes."),
        ("[R1] Yes", "Yes"),
        ("American [R1], born in 1966", "American, born in 1966"),
        ("Paris [R1][R2]", "Paris"),
        ("Paris [R1; R2]", "Paris"),
        ("Paris [R1-R3]", "Paris"),
        ("foo[R1]bar", "foo bar"),
        ("foo[R1][R2]bar", "foo bar"),  # a run of adjacent tags is one tag
        ("Paris [R 1]", "Paris"),  # the parser accepts one space inside brackets
        ("Paris [R1 R2]", "Paris"),
        ("Paris [R1/R2]", "Paris"),
        ("Paris [R1] (R2)", "Paris"),
        ("Paris\n[R1]", "Paris"),
        ("Ed Wood [R1] and Scott Derrickson [R2]", "Ed Wood and Scott Derrickson"),
        ("", ""),
        ("   ", ""),
    ],
)
def test_strip_citation_tags(text: str, expected: str) -> None:
    assert strip_citation_tags(text) == expected


@pytest.mark.parametrize(
    "text",
    [
        "R2D2",  # R2 glued to a word: not a tag
        "COVID-R3",  # hyphenated: not a standalone token
        "r2 score",
        "BMW R32",  # a bare R<number> is answer text: only bracketed tags are markup
        "Paris R3",
        "R1 and R2",
        "as shown in R1, R2.",
        "R1-R3",
        "Route [1]",  # numeric brackets are not resource tags
        "[Ref 1]",
        "the R&B singer",
        "the R 1 road",  # "R 1" only counts inside brackets
    ],
)
def test_strip_citation_tags_keeps_non_tags(text: str) -> None:
    assert strip_citation_tags(text) == text


@pytest.mark.parametrize(
    "text",
    [
        " " * 100_000 + "x",
        "a" + " " * 100_000,
        "[R1" + " " * 50_000 + "x",
        "[" + "R1 " * 30_000 + "x",
        "R1, " * 30_000 + "x",
    ],
)
def test_strip_citation_tags_is_linear_on_adversarial_input(text: str) -> None:
    t0 = time.perf_counter()
    strip_citation_tags(text)
    assert time.perf_counter() - t0 < 1.0


# --- normalize_provenai / provenai_correct -------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("Yes [R1].", "yes"),
        ("  Ed   Wood!  ", "ed wood"),
        ("The Eiffel Tower.", "the eiffel tower"),  # articles kept (not SQuAD)
        ("1,000 people.", "1,000 people"),  # inner punctuation kept
        ("yes . [R2]", "yes"),  # trailing run of punctuation and spaces dropped
        ("What?!", "what"),
    ],
)
def test_normalize_provenai(text: str, expected: str) -> None:
    assert normalize_provenai(text) == expected


@pytest.mark.parametrize(
    ("prediction", "gold", "expected"),
    [
        ("Yes.", "yes", True),
        ("yes", "Yes", True),
        ("Yes, both are American [R1][R2].", "yes", True),  # yes/no by prefix
        ("yes both are american", "yes", True),
        ("yesterday", "yes", False),  # prefix must be a whole word
        ("yes-man", "yes", False),
        ("No.", "no", True),
        ("No, he was British", "no", True),
        ("not sure", "no", False),
        ("nobody", "no", False),
        ("no", "yes", False),
        ("Yes", "no", False),
        ("Paris [R1]", "paris", True),
        ("Paris, France", "Paris", False),  # prefix rule is for yes/no gold only
        ("The Eiffel Tower", "Eiffel Tower", False),  # articles are not removed here
        ("Ed Wood.", "Ed Wood", True),
        ("", "", True),
        ("", "yes", False),
        ("something", "", False),
        ("R2", "R2", True),  # a bare R<number> is answer text, in the prediction as in the gold
        ("BMW R32", "BMW R32", True),
        ("BMW R32 [R1]", "BMW R32", True),
        ("BMW [R32]", "BMW R32", False),  # bracketed: a tag, gone from the prediction
    ],
)
def test_provenai_correct(prediction: str, gold: str, expected: bool) -> None:
    assert provenai_correct(prediction, gold) is expected


# --- official HotpotQA metrics -------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("The Eiffel Tower!", "eiffel tower"),
        ("An apple, a day", "apple day"),
        ("theatre of the absurd", "theatre of absurd"),  # "the" only as a whole word
        ("U.S.A.", "usa"),
        ("  Hello\n\tworld  ", "hello world"),
        ("1,000", "1000"),
        ("", ""),
    ],
)
def test_normalize_answer(text: str, expected: str) -> None:
    assert normalize_answer(text) == expected


def test_exact_match() -> None:
    assert exact_match("The Eiffel Tower.", "eiffel tower") == 1.0
    assert exact_match("Yes.", "yes") == 1.0
    assert exact_match("Eiffel Tower in Paris", "Eiffel Tower") == 0.0
    assert exact_match("", "") == 1.0


def test_f1_partial_overlap() -> None:
    # pred "the eiffel tower" -> [eiffel, tower]; gold "Eiffel tower in Paris" ->
    # [eiffel, tower, in, paris]; common = 2; P = 2/2 = 1; R = 2/4 = 0.5;
    # F1 = 2*1*0.5/1.5 = 2/3
    f1, p, r = f1_score("the Eiffel Tower", "Eiffel tower in Paris")
    assert p == 1.0
    assert r == 0.5
    assert f1 == pytest.approx(2 / 3)


def test_f1_counts_tokens_as_multiset() -> None:
    # pred [new, york, new, york] vs gold [new, york]; Counter & = {new:1, york:1} -> 2;
    # P = 2/4 = 0.5; R = 2/2 = 1; F1 = 2*0.5*1/1.5 = 2/3
    f1, p, r = f1_score("New York New York", "New York")
    assert (p, r) == (0.5, 1.0)
    assert f1 == pytest.approx(2 / 3)


def test_f1_yes_no_rule() -> None:
    # "no" vs "yes": special tokens that differ -> 0 (they share no token anyway)
    assert f1_score("no", "yes") == (0.0, 0.0, 0.0)
    # "Yes." normalises to "yes" == gold -> 1 token of 1: P = R = F1 = 1
    assert f1_score("Yes.", "yes") == (1.0, 1.0, 1.0)
    # gold "yes", prediction "yes both are american": gold is special and they differ -> 0,
    # although token overlap would give P = 1/4, R = 1, F1 = 0.4
    assert f1_score("Yes, both are American", "yes") == (0.0, 0.0, 0.0)
    # prediction "no" vs gold "no way": prediction is special and differs -> 0
    assert f1_score("no", "no way") == (0.0, 0.0, 0.0)
    # "noanswer" is special too
    assert f1_score("noanswer", "no answer") == (0.0, 0.0, 0.0)
    assert f1_score("noanswer", "noanswer") == (1.0, 1.0, 1.0)


def test_f1_no_overlap_and_empty() -> None:
    assert f1_score("London", "Paris") == (0.0, 0.0, 0.0)
    # official script: no common token -> 0, even for two empty strings
    assert f1_score("", "") == (0.0, 0.0, 0.0)
    # "the a an" normalises to "" -> no tokens
    assert f1_score("the a an", "Paris") == (0.0, 0.0, 0.0)


def test_answer_scores_strips_tags_before_em_f1() -> None:
    s = answer_scores("The Eiffel Tower [R1].", "Eiffel Tower")
    # correct: "the eiffel tower" != "eiffel tower" (ProvenAI keeps articles)
    # em: strip -> "The Eiffel Tower." -> "eiffel tower" == "eiffel tower" -> 1.0
    # f1: 2 common / 2 pred / 2 gold -> 1.0
    assert s == {
        "prediction": "The Eiffel Tower [R1].",
        "gold": "Eiffel Tower",
        "correct": False,
        "em": 1.0,
        "f1": 1.0,
    }


def test_answer_scores_tag_tokens_do_not_count() -> None:
    # Without stripping, "[R1, R2]" would add tokens "r1 r2" and lower precision.
    s = answer_scores("Chicago [R1, R2]", "Chicago, Illinois")
    # pred [chicago]; gold [chicago, illinois]; P = 1, R = 1/2, F1 = 2*0.5/1.5 = 2/3
    assert s["em"] == 0.0
    assert s["f1"] == pytest.approx(2 / 3)
    assert s["correct"] is False


def test_answer_scores_yes_prefix() -> None:
    s = answer_scores("Yes, both are American [R1][R2]", "yes")
    assert s["correct"] is True  # ProvenAI prefix rule
    assert s["em"] == 0.0  # official EM: "yes both are american" != "yes"
    assert s["f1"] == 0.0  # official yes/no rule
    assert isinstance(s["em"], float)
    assert isinstance(s["f1"], float)


# Answers that hold bare R<number> tokens ("BMW R32", "the R101 airship", road numbers):
# the official HotpotQA metrics on the raw strings are exact_match / f1_score here (the
# re-implementation of hotpot_evaluate_v1.py's logic tested above). answer_scores must give
# exactly those numbers when the prediction has no bracketed tag, and the numbers of the
# prediction without its bracketed tags when it has some.
R_TOKEN_PAIRS = [
    ("BMW R32", "BMW R32"),
    ("The BMW R32", "BMW R32 motorcycle"),
    ("BMW", "BMW R32"),
    ("R101", "the R101 airship"),
    ("R1 and R2", "R1 and R2"),
    ("R2", "R2"),
    ("R2", "yes"),
    ("Route R1, R2 and R3", "R2"),
    ("R2-D2", "R2-D2"),
]


@pytest.mark.parametrize(("prediction", "gold"), R_TOKEN_PAIRS)
def test_answer_scores_match_official_metrics_on_bare_r_tokens(prediction: str, gold: str) -> None:
    s = answer_scores(prediction, gold)
    assert (s["em"], s["f1"]) == (exact_match(prediction, gold), f1_score(prediction, gold)[0])


@pytest.mark.parametrize(("prediction", "gold"), R_TOKEN_PAIRS)
@pytest.mark.parametrize("tag", [" [R0]", " [R1, R2]", " (R3)", "[r4][R5]"])
def test_answer_scores_drop_only_bracketed_tags(prediction: str, gold: str, tag: str) -> None:
    s = answer_scores(prediction + tag, gold)
    assert (s["em"], s["f1"]) == (exact_match(prediction, gold), f1_score(prediction, gold)[0])
    assert s["correct"] is provenai_correct(prediction, gold)

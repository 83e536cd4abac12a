"""Citation fidelity: title tokens, Jaccard and P/R/F at τ = 1.0 and τ = 0.34."""

from __future__ import annotations

import json

import pytest

from pytest_provenai.audit.citation import citation_scores, jaccard, title_tokens


def test_title_tokens() -> None:
    assert title_tokens("Ed Wood (film)") == {"ed", "wood", "film"}
    assert title_tokens("Scott Derrickson") == {"scott", "derrickson"}
    assert title_tokens("Scott's_Place--2") == {"scott", "s", "place", "2"}
    assert title_tokens("Café Society") == {"café", "society"}
    assert title_tokens("ED WOOD") == title_tokens("ed wood")
    assert title_tokens("") == frozenset()
    assert title_tokens("(!)") == frozenset()


def test_jaccard() -> None:
    # {ed, wood, film} ∩ {ed, wood} = 2; ∪ = 3 -> 2/3
    assert jaccard(title_tokens("Ed Wood (film)"), title_tokens("Ed Wood")) == pytest.approx(2 / 3)
    assert jaccard({"a"}, {"a"}) == 1.0
    assert jaccard({"a"}, {"b"}) == 0.0
    assert jaccard(frozenset(), {"a"}) == 0.0
    assert jaccard(frozenset(), frozenset()) == 0.0  # documented convention


def test_perfect_citation() -> None:
    s = citation_scores(["Scott Derrickson", "Ed Wood"], ["Ed Wood", "Scott Derrickson"])
    for layer in ("exact", "semantic"):
        assert (s[layer]["p"], s[layer]["r"], s[layer]["f"]) == (1.0, 1.0, 1.0)
    assert s["precision_undefined"] is False
    assert s["exact"]["tau"] == 1.0
    assert s["semantic"]["tau"] == 0.34


def test_partial_title_matches_semantic_only() -> None:
    # cited {ed, wood, film} vs gold {ed, wood}: J = 2/3 -> ≥ 0.34 (match), < 1.0 (no match)
    s = citation_scores(["Ed Wood (film)"], ["Ed Wood"])
    assert s["exact"] == {"tau": 1.0, "p": 0.0, "r": 0.0, "f": 0.0}
    assert s["semantic"] == {"tau": 0.34, "p": 1.0, "r": 1.0, "f": 1.0}


def test_one_third_is_below_semantic_threshold() -> None:
    # {wood, band} vs {ed, wood}: ∩ = {wood} = 1, ∪ = 3 -> 1/3 = 0.333… < 0.34: no match
    s = citation_scores(["Wood (band)"], ["Ed Wood"])
    assert s["semantic"]["p"] == 0.0
    assert s["semantic"]["r"] == 0.0


def test_case_and_punctuation_do_not_break_exact_match() -> None:
    # token sets equal -> J = 1.0 -> exact match at τ = 1
    s = citation_scores(["ed wood"], ["Ed Wood"])
    assert s["exact"]["p"] == 1.0


def test_mixed_precision_recall() -> None:
    cited = ["Scott Derrickson", "Ed Wood (film)", "Tim Burton"]
    gold = ["Scott Derrickson", "Ed Wood"]
    s = citation_scores(cited, gold)
    # exact: cited matches -> Derrickson yes, "Ed Wood (film)" no (2/3), Burton no -> P = 1/3
    #        gold recovered -> Derrickson yes, Ed Wood no -> R = 1/2
    #        F = 2*(1/3)*(1/2) / (1/3 + 1/2) = (1/3) / (5/6) = 2/5
    assert s["exact"]["p"] == pytest.approx(1 / 3)
    assert s["exact"]["r"] == pytest.approx(1 / 2)
    assert s["exact"]["f"] == pytest.approx(2 / 5)
    # semantic: Derrickson yes, Ed Wood (film) yes (2/3), Burton: {tim, burton} vs gold -> 0
    #           P = 2/3; R = 2/2 = 1; F = 2*(2/3)*1 / (5/3) = 4/5
    assert s["semantic"]["p"] == pytest.approx(2 / 3)
    assert s["semantic"]["r"] == 1.0
    assert s["semantic"]["f"] == pytest.approx(4 / 5)


def test_citation_free_answer_has_undefined_precision() -> None:
    s = citation_scores([], ["Ed Wood", "Scott Derrickson"])
    assert s["precision_undefined"] is True
    for layer in ("exact", "semantic"):
        assert s[layer]["p"] is None  # never a silent 1.0
        assert s[layer]["r"] == 0.0
        assert s[layer]["f"] == 0.0
    assert s["cited"] == []


def test_duplicate_citations_count_once() -> None:
    # unique cited = [Ed Wood, Tim Burton] -> exact P = 1/2 (not 2/3 with the duplicate)
    # gold [Ed Wood, Scott Derrickson] -> R = 1/2; F = 2*(1/4)/1 = 1/2
    s = citation_scores(["Ed Wood", "Ed Wood", "Tim Burton"], ["Ed Wood", "Scott Derrickson"])
    assert s["cited"] == ["Ed Wood", "Tim Burton"]
    assert s["exact"]["p"] == 0.5
    assert s["exact"]["r"] == 0.5
    assert s["exact"]["f"] == 0.5


def test_duplicate_gold_titles_count_once() -> None:
    s = citation_scores(["Ed Wood"], ["Ed Wood", "Ed Wood", "Scott Derrickson"])
    assert s["gold"] == ["Ed Wood", "Scott Derrickson"]
    assert s["exact"]["r"] == 0.5


def test_no_match_at_all() -> None:
    s = citation_scores(["Tim Burton"], ["Ed Wood"])
    # P = 0, R = 0 -> P + R = 0 -> F = 0 (no division by zero)
    assert s["exact"] == {"tau": 1.0, "p": 0.0, "r": 0.0, "f": 0.0}
    assert s["precision_undefined"] is False


def test_empty_gold_has_undefined_recall() -> None:
    s = citation_scores(["Ed Wood"], [])
    assert s["recall_undefined"] is True
    assert s["exact"] == {"tau": 1.0, "p": 0.0, "r": None, "f": 0.0}
    both = citation_scores([], [])
    assert both["precision_undefined"] is True
    assert both["recall_undefined"] is True
    assert both["semantic"] == {"tau": 0.34, "p": None, "r": None, "f": 0.0}


def test_title_without_tokens_never_matches() -> None:
    # J(∅, ∅) = 0 < 1.0 and < 0.34
    s = citation_scores(["(!)"], ["?"])
    assert s["exact"]["p"] == 0.0
    assert s["semantic"]["p"] == 0.0


def test_custom_taus_and_validation() -> None:
    # τ = 0.5 semantic: J = 2/3 ≥ 0.5 match; J = 1/3 < 0.5 no match
    s = citation_scores(["Ed Wood (film)", "Wood (band)"], ["Ed Wood"], taus=(1.0, 0.5))
    assert s["semantic"]["tau"] == 0.5
    assert s["semantic"]["p"] == 0.5
    with pytest.raises(ValueError):
        citation_scores(["a"], ["a"], taus=(1.5, 0.34))
    with pytest.raises(ValueError):
        citation_scores(["a"], ["a"], taus=(1.0,))  # type: ignore[arg-type]


def test_output_shape_is_stable_and_json_able() -> None:
    s = citation_scores(("Ed Wood",), ("Ed Wood",))
    assert list(s) == [
        "cited",
        "gold",
        "precision_undefined",
        "recall_undefined",
        "exact",
        "semantic",
    ]
    assert list(s["exact"]) == ["tau", "p", "r", "f"]
    assert json.loads(json.dumps(s)) == s
    assert isinstance(s["cited"], list)

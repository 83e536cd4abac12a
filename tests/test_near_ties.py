"""Greedy near ties (pytest_provenai/subject/near_ties.py): every backend path reports each
token's margin over the runner-up, the same whichever path decoded it, and a record marks the
positions under NEAR_TIE_MARGIN with their characters in the output."""

from __future__ import annotations

from typing import Any

import pytest
from facts_prompts import FACTS, ablated, default_transformers, facts_prompt

from pytest_provenai.subject.backends.base import Generation
from pytest_provenai.subject.near_ties import (
    NEAR_TIE_MARGIN,
    NearTie,
    digest,
    generation_section,
    near_ties,
)

PIECES = {1: "The", 2: " Blue", 3: " River", 4: "."}


def _decode(ids: list[int]) -> str:
    return "".join(PIECES[i] for i in ids)


def test_marks_name_the_token_its_text_and_margin() -> None:
    gen = Generation("The Blue River.", [1, 2, 3, 4], [-0.1] * 4, "stop", [2.0, 0.01, 0.3, 0.0])
    assert near_ties(gen, _decode) == [
        NearTie(token=1, margin=0.01, text=" Blue", prefix_sha256=digest("The")),
        NearTie(token=3, margin=0.0, text=".", prefix_sha256=digest("The Blue River")),
    ]
    wide = near_ties(gen, _decode, margin=0.5)
    assert wide is not None and [(m.token, m.text) for m in wide] == [
        (1, " Blue"),
        (2, " River"),
        (3, "."),
    ]
    section = generation_section(gen.text, near_ties(gen, _decode))
    assert section == {
        "output_sha256": digest("The Blue River."),
        "near_ties": [
            {"token": 1, "margin": 0.01, "text": " Blue", "prefix_sha256": digest("The")},
            {"token": 3, "margin": 0.0, "text": ".", "prefix_sha256": digest("The Blue River")},
        ],
    }
    assert "The Blue River." not in str(section)  # digests, never the raw output


def test_no_margins_or_no_decoder_is_unknown_not_none_found() -> None:
    assert near_ties(Generation("x", [1], [-0.1]), _decode) is None  # a backend without margins
    gen = Generation("The", [1], [-0.1], "stop", [1.0])
    assert near_ties(gen, None) is None
    assert near_ties(gen, _decode) == []  # margins known, no near tie
    assert generation_section("x", None) == {"output_sha256": digest("x"), "near_ties": None}


def test_any_output_has_a_digest() -> None:
    assert digest("Blue \ud800 River") != digest("Blue \ufffd River")  # a lone surrogate
    assert len(digest("")) == 16


def test_a_generation_round_trips_its_margins_through_the_cache_form() -> None:
    gen = Generation("The", [1], [-0.1], "stop", [0.25])
    assert Generation.from_dict(gen.as_dict()) == gen
    assert Generation.from_dict({"text": "old entry"}).margins == []


# -- the transformers backend: generate, the ablation fast path, generate_many ---------------
@pytest.fixture(scope="module")
def model() -> Any:
    return default_transformers(max_new_tokens=16)


def test_every_path_reports_generate_s_margins(model: Any) -> None:
    full, variants = ablated(model)
    realised = model.generate(full)
    naive = [model.generate(v) for v in variants]
    for g in [realised, *naive]:
        assert len(g.margins) == len(g.token_ids) and min(g.margins) >= 0.0
        assert g.margins != sorted(g.margins)  # real numbers, not a constant fill

    # the fast path at a wide tie margin: teacher-forced rows, drafts, replays at near ties
    result = model.ablation_pass(full, variants, realised.token_ids, margin=0.2)
    assert result.decode.fallbacks >= 1 and any(v.divergence is not None for v in result.variants)
    many = model.generate_many(variants, margin=0.2)
    for fast in [*(v.generation for v in result.variants), *many.generations]:
        same = next(n for n in naive if n.token_ids == fast.token_ids)
        assert len(fast.margins) == len(same.margins)
        assert max(abs(a - b) for a, b in zip(fast.margins, same.margins, strict=True)) < 1e-3


def test_a_record_marks_the_near_ties_of_a_real_generation(model: Any) -> None:
    from pytest_provenai.subject.subject import ModelSubject

    gen = model.generate(facts_prompt(model, FACTS[1:]))
    marks = ModelSubject(model).near_ties(gen)
    assert marks is not None
    assert [m.token for m in marks] == [i for i, m in enumerate(gen.margins) if m < NEAR_TIE_MARGIN]
    wide = near_ties(gen, model.decode, margin=0.5)  # "Zorbia is a planet in …": 6 of 13
    assert wide is not None and len(wide) >= 3
    for m in wide:
        assert m.text == model.decode([gen.token_ids[m.token]])
        assert m.prefix_sha256 == digest(model.decode(gen.token_ids[: m.token]))
        assert m.margin == gen.margins[m.token] < 0.5

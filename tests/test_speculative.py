"""Speculative re-alignment (subject/backends/speculative.py): the acceptance rule never takes
a token a block computation cannot vouch for, and decoding with any drafts gives exactly the
greedy output. Pure Python: a toy "model" (a table of argmax and top-two gap per context)
stands in for the logits, so every property is checked without torch."""

from __future__ import annotations

import math
import random

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_provenai.subject.backends.base import TIE_MARGIN
from pytest_provenai.subject.backends.speculative import (
    DRAFT_MAX,
    DRAFT_START,
    Drafter,
    accept_block,
    block_width,
)

M = TIE_MARGIN


def test_all_drafts_accepted_then_the_last_position_gives_the_next_token() -> None:
    assert accept_block([5, 6, 7], [1.0, 1.0, 1.0], [5, 6], M) == (2, 7)


def test_the_first_wrong_draft_ends_the_block_with_the_argmax_there() -> None:
    assert accept_block([5, 9, 7], [1.0, 1.0, 1.0], [5, 6], M) == (1, 9)
    assert accept_block([4, 6, 7], [1.0, 1.0, 1.0], [5, 6], M) == (0, 4)


def test_a_draft_that_is_the_argmax_only_within_the_tie_margin_is_never_accepted() -> None:
    # draft 6 *is* the argmax at position 1, but by less than the margin: not decided there
    assert accept_block([5, 6, 7], [1.0, M / 2, 1.0], [5, 6], M) == (1, None)
    # exactly the margin is not "more than the margin"
    assert accept_block([5, 6, 7], [1.0, M, 1.0], [5, 6], M) == (1, None)
    assert accept_block([5, 6, 7], [math.nan, 1.0, 1.0], [5, 6], M) == (0, None)
    # a near tie at the position after the drafts: drafts kept, next token undecided
    assert accept_block([5, 6, 7], [1.0, 1.0, 0.0], [5, 6], M) == (2, None)


def test_a_block_needs_one_position_more_than_its_drafts() -> None:
    with pytest.raises(ValueError, match="needs 3 positions"):
        accept_block([1, 2], [1.0, 1.0], [1, 2], M)


def test_drafts_resynchronise_on_the_realised_output_after_an_insertion() -> None:
    realised = [10, 11, 12, 13, 14, 15, 16, 17]
    d = Drafter(prompt=[1, 2, 3], realised=realised)
    # the ablated output inserted 99 after 12: the tail 13.. still drafts
    assert d.propose([10, 11, 12, 99, 13], limit=3) == [14, 15, 16]
    # a substituted token: re-sync on the n-gram before it fails, the token after re-syncs
    assert d.propose([10, 11, 77], limit=2) == []
    assert d.propose([10, 11, 77, 13], limit=2) == [14, 15]


def test_prompt_lookup_drafts_where_the_realised_output_has_no_match() -> None:
    prompt = [1, 2, 3, 40, 41, 42, 43, 5]
    d = Drafter(prompt=prompt, realised=[7, 8, 9])
    assert d.propose([50, 40, 41], limit=4) == [42, 43, 5]
    # a single repeated token is too weak a signal for prompt lookup
    assert d.propose([50, 42], limit=4) == []


def test_a_repeated_phrase_or_loop_in_the_output_drafts_itself() -> None:
    d = Drafter(prompt=[], realised=[])
    assert d.propose([5, 6, 7, 5, 6, 7, 5, 6], limit=6) == [7, 5, 6, 7]
    assert d.propose([1, 2, 3, 9, 9, 9], limit=3) == [9, 9, 9]


def test_the_hint_leads_the_draft_and_the_limit_and_length_bound_it() -> None:
    d = Drafter(prompt=[], realised=[1, 2, 3, 4, 5, 6, 7, 8, 9, 10])
    assert d.propose([1, 2], limit=10, hint=[9]) == [9, 10]
    assert d.propose([1, 2], limit=2) == [3, 4]
    assert d.propose([1, 2], limit=0) == []
    assert len(d.propose([1], limit=100)) == DRAFT_START


def test_the_draft_length_adapts_to_acceptance() -> None:
    d = Drafter(prompt=[], realised=list(range(100)))
    d.update(drafted=4, accepted=4)
    assert d.length == DRAFT_START + 2
    d.update(drafted=6, accepted=1)
    assert d.length == DRAFT_START + 1
    for _ in range(50):
        d.update(drafted=d.length, accepted=d.length)
    assert d.length == DRAFT_MAX
    for _ in range(50):
        d.update(drafted=3, accepted=0)
    assert d.length == 1
    d.update(drafted=0, accepted=0)  # nothing drafted: nothing learned
    assert d.length == 1


def test_the_block_is_as_wide_as_the_drafts_are_likely_to_be_accepted() -> None:
    assert block_width([[], []], [0.9, 0.9]) == 1  # nothing drafted: one position
    assert block_width([list(range(16))], [0.99]) == 17  # one row, sure drafts: all of them
    assert block_width([list(range(16))], [0.05]) == 1  # drafts that never hold: none
    # one row with a good draft among many without: padding every row is not worth much
    many = [list(range(16))] + [[]] * 8
    assert block_width(many, [0.9] + [0.5] * 8) < block_width([list(range(16))], [0.9])
    d = Drafter(prompt=[], realised=[])
    assert d.acceptance == 0.5
    d.update(drafted=8, accepted=8)
    assert d.acceptance == 0.9


# -- decoding with drafts is greedy decoding -------------------------------------------------
VOCAB = 6
STOP = 0


def toy_model(seed: int, tie_rate: float) -> dict[tuple[int, ...], tuple[int, float]]:
    """A memoised table: context -> (argmax, top-two gap); a fraction of contexts are near
    ties. Deterministic per seed."""
    table: dict[tuple[int, ...], tuple[int, float]] = {}
    rng = random.Random(seed)

    def lookup(ctx: tuple[int, ...]) -> tuple[int, float]:
        if ctx not in table:
            tok = rng.randrange(VOCAB)
            gap = rng.uniform(0, M) if rng.random() < tie_rate else rng.uniform(2 * M, 5.0)
            table[ctx] = (tok, gap)
        return table[ctx]

    return lookup  # type: ignore[return-value]


def greedy(model: object, prompt: tuple[int, ...], max_new: int) -> list[int] | None:
    """Step-by-step greedy decoding; None if it meets a near tie (only ``generate`` may
    decide one)."""
    out: list[int] = []
    while len(out) < max_new:
        tok, gap = model(prompt + tuple(out))  # type: ignore[operator]
        if not gap > M:
            return None
        out.append(tok)
        if tok == STOP:
            break
    return out


def speculative(
    model: object, prompt: tuple[int, ...], max_new: int, drafter: Drafter, noise: int
) -> list[int] | None:
    """The backends' decoding loop over the toy model: a block of drafts per step, verified
    position by position; ``noise`` drafts are corrupted at random positions."""
    rng = random.Random(noise)
    out: list[int] = []
    while len(out) < max_new:
        drafts = drafter.propose(out, max_new - len(out) - 1)
        drafts = [rng.randrange(VOCAB) if rng.random() < 0.2 else t for t in drafts]
        top, gaps = [], []
        for j in range(len(drafts) + 1):
            tok, gap = model(prompt + tuple(out) + tuple(drafts[:j]))  # type: ignore[operator]
            top.append(tok)
            gaps.append(gap)
        accepted, nxt = accept_block(top, gaps, drafts, M)
        drafter.update(len(drafts), accepted)
        new = drafts[:accepted] + ([] if nxt is None else [nxt])
        for tok in new:
            out.append(tok)
            if tok == STOP or len(out) >= max_new:
                return out
        if nxt is None:
            return None
    return out


@settings(max_examples=300, deadline=None)
@given(
    seed=st.integers(0, 10_000),
    tie_rate=st.sampled_from([0.0, 0.05, 0.3]),
    max_new=st.integers(1, 40),
    realised_seed=st.integers(0, 100),
)
def test_speculative_decoding_is_greedy_decoding_or_defers_a_near_tie(
    seed: int, tie_rate: float, max_new: int, realised_seed: int
) -> None:
    model = toy_model(seed, tie_rate)
    prompt = (1, 2, 3, 4)
    want = greedy(model, prompt, max_new)
    # drafts from a realised output that is the greedy one perturbed (or unrelated)
    rng = random.Random(realised_seed)
    base = want if want is not None else [rng.randrange(VOCAB) for _ in range(max_new)]
    realised = [t if rng.random() < 0.8 else rng.randrange(VOCAB) for t in base]
    got = speculative(model, prompt, max_new, Drafter(list(prompt), realised), realised_seed)
    if want is None:
        # the greedy path meets a near tie: the fast path must not decide it
        assert got is None
    else:
        assert got == want

"""The generation prompt: resource ids, the doc cut, and the ranges of resource blocks."""

from __future__ import annotations

import re

import pytest

from pytest_provenai._io import sha256_text
from pytest_provenai.frozen.model import Source
from pytest_provenai.subject import prompt as P
from pytest_provenai.subject.trace import GeneratorView, Resource


def source(title: str, text: str) -> Source:
    return Source(title=title, sentences=(text,), text=text, sha256=sha256_text(text))


def resources(n: int, text_len: int = 40) -> list[Resource]:
    return P.make_resources(
        [source(f"Title {i}", (f"Doc {i} says something. " * 200)[:text_len]) for i in range(n)]
    )


def plain(messages: list[dict[str, str]]) -> str:
    """A trivial renderer: the user message unchanged (what a pipeline backend does)."""
    return messages[-1]["content"]


def chatml(messages: list[dict[str, str]]) -> str:
    """A ChatML renderer, like SmolLM2's chat template."""
    body = "".join(f"<|im_start|>{m['role']}\n{m['content']}<|im_end|>\n" for m in messages)
    return body + "<|im_start|>assistant\n"


def test_prompt_version_is_a_nonempty_string() -> None:
    assert isinstance(P.PROMPT_VERSION, str) and P.PROMPT_VERSION


def test_make_resources_ids_in_fixture_order_with_pinned_digests() -> None:
    srcs = [source("Ed Wood", "Ed Wood was an American filmmaker."), source("B", "Bee.")]
    rs = P.make_resources(srcs)
    assert [r.id for r in rs] == ["R0", "R1"]
    assert [(r.title, r.text, r.sha256) for r in rs] == [(s.title, s.text, s.sha256) for s in srcs]
    assert P.make_resources([]) == []


@pytest.mark.parametrize("render", [plain, chatml], ids=["plain", "chatml"])
@pytest.mark.parametrize("n", [0, 1, 3, 10])
def test_ranges_slice_exactly_to_resource_blocks(render: object, n: int) -> None:
    rs = resources(n, text_len=1500)
    view = P.build_prompt("Which one?", rs, render)  # type: ignore[arg-type]
    assert isinstance(view, GeneratorView)
    assert list(view.ranges) == [r.id for r in rs]
    previous_end = 0
    for r in rs:
        start, end = view.ranges[r.id]
        block = view.prompt[start:end]
        assert block == P.resource_block(r)
        assert block.startswith(f"[{r.id}] {r.title}\n")
        assert start >= previous_end  # blocks in order, not overlapping
        previous_end = end
    assert view.as_dict()["ranges"] == {k: list(v) for k, v in view.ranges.items()}


def test_ranges_point_into_the_user_message_not_an_earlier_copy() -> None:
    rs = resources(2)

    def echo_twice(messages: list[dict[str, str]]) -> str:
        # A renderer that shows the user message in the system turn too (pathological).
        return "SYSTEM " + messages[-1]["content"] + "\nUSER " + messages[-1]["content"] + "\n"

    view = P.build_prompt("q?", rs, echo_twice)
    user_at = view.prompt.index("\nUSER ") + len("\nUSER ")
    assert all(start >= user_at for start, _ in view.ranges.values())


def test_prompt_asks_for_three_sections_citations_and_the_limit() -> None:
    rs = resources(3)
    view = P.build_prompt("Were A and B of the same nationality?", rs, chatml)
    for wanted in ("Answer:", "Evidence:", "Reasoning:", "[R1]"):
        assert wanted in view.prompt
    assert f"at most {P.CITATION_LIMIT}" in view.prompt
    assert "Were A and B of the same nationality?" in view.prompt
    assert view.prompt.endswith("<|im_start|>assistant\n")


def test_question_whitespace_is_normalised() -> None:
    view = P.build_prompt("  Who\n  wrote   it? ", resources(1), plain)
    assert "Question: Who wrote it?" in view.prompt


def test_renderer_that_changes_the_user_message_is_an_error() -> None:
    with pytest.raises(ValueError, match="changed the user message"):
        P.build_prompt("q", resources(2), lambda m: m[-1]["content"].upper())


def test_more_than_ten_resources_is_an_error() -> None:
    P.build_prompt("q", resources(10), plain)
    with pytest.raises(ValueError, match=r"at most 10 resources .*got 11"):
        P.build_prompt("q", resources(11), plain)


def test_duplicate_resource_ids_are_an_error() -> None:
    r = resources(1)[0]
    with pytest.raises(ValueError, match="unique"):
        P.build_prompt("q", [r, r], plain)


def test_leave_one_out_keeps_the_original_ids() -> None:
    rs = resources(4)
    ablated = [r for r in rs if r.id != "R2"]
    view = P.build_prompt("q", ablated, chatml)
    assert list(view.ranges) == ["R0", "R1", "R3"]
    assert "[R2]" not in "".join(view.prompt[s:e] for s, e in view.ranges.values())


# ---------------------------------------------------------------- the 900-character cut


def test_short_text_is_unchanged() -> None:
    text = "x" * P.DOC_CHAR_LIMIT
    assert P.cut_text(text) == text
    assert P.cut_text("") == ""


def test_long_text_is_cut_at_a_word_boundary_with_an_ellipsis() -> None:
    words = " ".join(f"word{i}" for i in range(400))
    cut = P.cut_text(words)
    assert len(cut) <= P.DOC_CHAR_LIMIT
    assert cut.endswith("…") and not cut.endswith(" …")
    kept = cut[:-1]
    assert words.startswith(kept)
    assert words[len(kept)] == " "  # the cut fell on a word boundary
    assert len(kept) > P.DOC_CHAR_LIMIT - 12  # and lost less than one word


def test_cut_exactly_before_a_space_keeps_the_last_whole_word() -> None:
    text = "a" * (P.DOC_CHAR_LIMIT - 1) + " tail"
    assert P.cut_text(text) == "a" * (P.DOC_CHAR_LIMIT - 1) + "…"


def test_one_huge_token_is_cut_hard() -> None:
    text = "short " + "x" * 2000
    cut = P.cut_text(text)
    assert len(cut) == P.DOC_CHAR_LIMIT
    assert cut == text[: P.DOC_CHAR_LIMIT - 1] + "…"


@pytest.mark.parametrize("limit", [1, 2, 5, 50])
def test_cut_respects_small_limits(limit: int) -> None:
    text = "alpha beta gamma delta " * 10
    cut = P.cut_text(text, limit)
    assert len(cut) <= limit and cut.endswith("…")


def test_block_uses_the_cut_text_and_keeps_the_full_digest() -> None:
    text = " ".join(["lorem"] * 500)
    (r,) = P.make_resources([source("Lorem", text)])
    view = P.build_prompt("q", [r], chatml)
    start, end = view.ranges["R0"]
    block = view.prompt[start:end]
    assert block == f"[R0] Lorem\n{P.cut_text(text)}"
    assert len(block.split("\n", 1)[1]) <= P.DOC_CHAR_LIMIT
    assert r.sha256 == sha256_text(text)


def test_title_newlines_cannot_break_the_block_header() -> None:
    (r,) = P.make_resources([source("Two\nlines", "Body.")])
    assert P.resource_block(r) == "[R0] Two lines\nBody."
    assert re.fullmatch(r"\[R0\] [^\n]+\n.+", P.resource_block(r), re.S)


# ---------------------------------------------------------------- worked examples


def test_examples_precede_the_real_question_and_are_not_resources() -> None:
    rs = resources(3)
    messages, local = P.build_messages("Real question?", rs)
    assert messages[0] == {"role": "system", "content": P.SYSTEM_PROMPT}
    assert [m["role"] for m in messages[1:]] == ["user", "assistant"] * len(P.EXAMPLES) + ["user"]
    user = messages[-1]["content"]
    assert user.rstrip().endswith("Question: Real question?")
    assert list(local) == ["R0", "R1", "R2"]
    view = P.build_prompt("Real question?", rs, chatml)
    real_user_at = view.prompt.rfind(user)
    assert all(s >= real_user_at for s, _ in view.ranges.values())


def test_example_replies_are_what_the_parser_reads_without_repairs() -> None:
    from pytest_provenai.subject.parse import parse_output

    for _question, docs, reply in P.EXAMPLES:
        parsed = parse_output(reply, len(docs))
        assert parsed.repairs == () and parsed.invalid_citations == ()
        assert parsed.answer and parsed.evidence and parsed.reasoning
        assert 1 <= len(parsed.cited_ids) <= P.CITATION_LIMIT

"""The openai backend against a real llama.cpp server (llama-cpp-python's, on 127.0.0.1,
serving the embedded default GGUF with an API key; tests/served.py), and proxies in front of
it that misalign, strip or drop what it returns."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from served import (
    API_KEY,
    MODEL_ALIAS,
    IdPrompts,
    Proxy,
    as_llama_server,
    bias_in_logprobs,
    shift_echo,
    strip_logprobs,
)

from pytest_provenai.errors import BackendError
from pytest_provenai.subject.backends.base import TIE_MARGIN, Decoding
from pytest_provenai.subject.backends.served import (
    OpenAIGenerator,
    ServedOptions,
    check_servers,
    load_served,
)
from pytest_provenai.subject.backends.served.probe import PROBE_TOLERANCE

# every test talks to the real server: a few to tens of seconds each, minutes for the file
pytestmark = pytest.mark.slow

MESSAGES = [
    {"role": "system", "content": "Answer in one short line."},
    {"role": "user", "content": "Which river flows through Paris? Answer: "},
]


@pytest.fixture(scope="module")
def api_key() -> Iterator[None]:
    old = os.environ.get("PROVENAI_API_KEY")
    os.environ["PROVENAI_API_KEY"] = API_KEY
    yield
    if old is None:
        del os.environ["PROVENAI_API_KEY"]
    else:
        os.environ["PROVENAI_API_KEY"] = old


def options(url: str, **kw: Any) -> ServedOptions:
    return ServedOptions(base_url=url, model=MODEL_ALIAS, tokenizer="default", **kw)


@pytest.fixture(scope="module")
def served(llama_base_url: str, api_key: None) -> OpenAIGenerator:
    """Scoring from echoed prompt logprobs (``--provenai-served-score echo``)."""
    return load_served(options(llama_base_url, score_via="echo"), Decoding(max_new_tokens=24))


@pytest.fixture(scope="module")
def stepped(llama_base_url: str, api_key: None) -> OpenAIGenerator:
    """Scoring from generation-time logprobs (the default, ``auto``, on this server)."""
    return load_served(options(llama_base_url), Decoding(max_new_tokens=24))


def test_probe_on_chat_prompts_finds_the_echo_aligned(served: OpenAIGenerator) -> None:
    report = served.report
    assert (report.model, report.top_logprobs, report.echo, report.bos) == (
        MODEL_ALIAS,
        20,
        True,
        0,
    )
    # every chat prompt starts with <|im_start|>, SmolLM2's BOS id: llama-cpp-python then
    # pairs each echoed token with its own distribution
    assert report.shift == 0 and report.score and report.echo_tail == 0
    assert report.via == "echo"
    assert "score via echoed prompt logprobs (aligned); KL from top-20" in report.describe()
    caps = served.capabilities
    assert caps.score and caps.logprobs and caps.score_topk == 20
    assert served.identity.endpoint == served.client.base_url
    assert "endpoint" not in served.identity.model_key()
    assert served.identity.cache_key()["endpoint"] == served.client.base_url


def test_teacher_forced_rows_line_up_with_greedy_generation(served: OpenAIGenerator) -> None:
    prompt = served.render_chat(MESSAGES)
    assert_lines_up(served, prompt)
    gen = served.generate(prompt)
    if gen.finish_reason == "stop":
        assert gen.token_ids[-1] in served.stop_ids
    # each generated token's greedy margin, from its top-2 logprobs (near-tie marks)
    assert len(gen.margins) == len(gen.logprobs) > 0 and min(gen.margins) >= 0.0
    rows = served.score(prompt, gen.token_ids)
    from pytest_provenai.subject.backends.divergence import token_margins

    tf = token_margins(rows, gen.token_ids[: len(gen.margins)])
    assert max(abs(a - b) for a, b in zip(gen.margins, tf, strict=True)) < 0.1  # KV-cache noise


def test_auto_scores_from_generation_time_logprobs_as_the_echo_does(
    stepped: OpenAIGenerator, served: OpenAIGenerator
) -> None:
    """llama-cpp-python reports the model's logprobs whatever logit_bias says, so ``auto``
    scores from generation-time logprobs: the rows line up with greedy generation as the
    echoed ones do, and agree with them where both hold an entry."""
    report = stepped.report
    assert report.via == "steps" and report.score and report.note == ""
    assert "score via generation-time logprobs (re-prompted where the output leaves the " in (
        report.describe()
    )
    prompt = stepped.render_chat(MESSAGES)
    assert_lines_up(stepped, prompt)
    ids = stepped.generate(prompt).token_ids
    rows, echoed = stepped.score(prompt, ids), served.score(prompt, ids)
    assert np.array_equal(np.argmax(rows, -1), np.argmax(echoed, -1))
    # the same top-k, the other entries in each one's rest bucket; llama.cpp's KV cache makes
    # numbers depend on which earlier request's prefix a request reuses (PROBE_TOLERANCE)
    assert np.allclose(np.max(rows, -1), np.max(echoed, -1), atol=PROBE_TOLERANCE)


def test_a_position_whose_greedy_token_ends_the_reply_is_read(
    stepped: OpenAIGenerator, served: OpenAIGenerator
) -> None:
    """llama-cpp-python returns no logprobs for a token that ends the reply; with the
    end-of-turn ids biased away the reply goes on, and its row still puts the end of turn
    first with the model's own logprob."""
    prompt = stepped.render_chat(
        [{"role": "user", "content": "What is the capital of France? Answer in one word."}]
    )
    gen = stepped.generate(prompt)
    assert gen.finish_reason == "stop" and gen.token_ids[-1] in stepped.stop_ids
    rows = stepped.score(prompt, gen.token_ids)
    echoed = served.score(prompt, gen.token_ids)
    end = gen.token_ids[-1]
    assert int(np.argmax(rows[-1])) == end == int(np.argmax(echoed[-1]))
    assert abs(float(rows[-1][end]) - float(echoed[-1][end])) < 0.05


def test_logprobs_in_llama_server_s_content_form_score_as_the_lists_do(
    llama_base_url: str, api_key: None, stepped: OpenAIGenerator
) -> None:
    """llama.cpp's C++ ``llama-server`` gives completions logprobs as a ``content`` list
    (token, id, logprob, top_logprobs as a list), not the ``tokens`` / ``token_logprobs`` /
    ``top_logprobs`` lists llama-cpp-python and vLLM give: the same server's replies
    rewritten into that form probe and score the same, alternatives keyed by their ids."""
    pieces = stepped._piece_table()
    unique = {text: tid for text, tid in pieces[0].items() if text not in pieces[1]}
    with Proxy(llama_base_url, transform=as_llama_server(unique.get)) as proxy:
        content = load_served(options(proxy.base_url), Decoding(max_new_tokens=24))
        assert content.report.via == "steps" and content.report.top_logprobs == 20
        assert content.report.token_prompts is False  # this server reads a prompt as text
        prompt = stepped.render_chat(MESSAGES)
        gen, lists = content.generate(prompt), stepped.generate(prompt)
        assert gen.token_ids == lists.token_ids and len(gen.margins) == len(lists.margins) > 0
        assert np.allclose(gen.logprobs, lists.logprobs, atol=PROBE_TOLERANCE)
        rows, direct = content.score(prompt, gen.token_ids), stepped.score(prompt, gen.token_ids)
    assert np.array_equal(np.argmax(rows, -1), np.argmax(direct, -1))
    assert np.allclose(np.max(rows, -1), np.max(direct, -1), atol=PROBE_TOLERANCE)
    assert proxy.count > 0


def _cut_output(gen: OpenAIGenerator) -> tuple[str, list[int], list[int], list[int]]:
    """A prompt, an output the model would not write ("\n\n" inside it), the prompt's ids
    and the output positions t where prompt + output[:t] as text does not tokenise back."""
    prompt = gen.render_chat(MESSAGES)
    cont = gen._output_ids(prompt, "Qx zv.\n\nWq pj")
    head = gen.encode(prompt)
    cuts = [
        t
        for t in range(1, len(cont))
        if gen.encode(prompt + gen.tokenizer.decode(cont[:t])) != head + cont[:t]
    ]
    return prompt, cont, head, cuts


def test_a_cut_that_does_not_tokenise_back_is_scored_by_the_echo(
    stepped: OpenAIGenerator, served: OpenAIGenerator
) -> None:
    """ "\n\n" before a word is two tokens, but a text ending in it is one: a request cannot
    start after the second. An output the model would not write makes every position a new
    request, so one lands there, and the continuation is scored by the echo instead."""
    prompt, cont, _, cuts = _cut_output(stepped)
    assert cuts
    before = stepped.echo_fallbacks
    rows = stepped.score(prompt, cont)
    assert stepped.echo_fallbacks == before + 1
    echoed = served.score(prompt, cont)
    assert np.allclose(np.max(rows, -1), np.max(echoed, -1), atol=PROBE_TOLERANCE)


def test_a_cut_that_does_not_tokenise_back_goes_as_token_ids_where_the_server_takes_them(
    llama_base_url: str, api_key: None, stepped: OpenAIGenerator
) -> None:
    """Where the probe finds that a prompt given as token ids reads as those tokens, a
    request whose text would not tokenise back into its tokens is sent as the ids instead
    of falling back to the echo. (The server here reads text: a proxy decodes the ids, so
    this checks the client's side — which requests go as ids, and what they hold.)"""
    prompt, cont, head, cuts = _cut_output(stepped)
    ids = IdPrompts(lambda toks: str(stepped.tokenizer.decode(toks, skip_special_tokens=False)))
    with Proxy(llama_base_url, rewrite=ids) as proxy:
        taking = load_served(options(proxy.base_url), Decoding(max_new_tokens=24))
        assert taking.report.token_prompts and "token-id prompts" in taking.report.describe()
        assert len(ids.sent) == 1  # the probe's own request
        rows = taking.score(prompt, cont)
    assert rows.shape == (len(cont), taking.vocab)
    assert taking.echo_fallbacks == 0 and taking.id_prompts == len(cuts) > 0
    assert ids.sent[1:] == [head + cont[:t] for t in cuts]


def test_ablations_scored_both_ways_diverge_at_the_same_positions(
    stepped: OpenAIGenerator, served: OpenAIGenerator
) -> None:
    prompt = served.render_chat(MESSAGES)
    gen = served.generate(prompt)
    ablated = [served.render_chat([MESSAGES[1]]), served.render_chat([MESSAGES[0]]), prompt]
    by_steps = stepped.ablation_pass(prompt, ablated, gen.token_ids, margin=TIE_MARGIN)
    by_echo = served.ablation_pass(prompt, ablated, gen.token_ids, margin=TIE_MARGIN)
    assert [v.divergence for v in by_steps.variants] == [v.divergence for v in by_echo.variants]
    assert by_steps.variants[2].divergence is None
    for a, b in zip(by_steps.variants, by_echo.variants, strict=True):
        # (regenerations are not compared: llama.cpp's output can depend on which cached
        # prefix a request reuses, so two free generations of one prompt may differ)
        # past a divergence, teacher-forced positions can be near ties: the two ways agree
        # on the argmax wherever the top two are further apart than the KV-cache noise
        top2 = np.sort(b.rows, -1)[:, -2:]
        clear = top2[:, 1] - top2[:, 0] > 2 * PROBE_TOLERANCE
        assert clear.sum() >= len(clear) // 2
        assert np.array_equal(np.argmax(a.rows, -1)[clear], np.argmax(b.rows, -1)[clear])


def test_a_server_whose_logprobs_follow_logit_bias_is_scored_by_echo(
    llama_base_url: str, api_key: None
) -> None:
    """Such a server cannot report a position whose greedy token ends the reply: ``auto``
    falls back to the echo, ``steps`` refuses KL with one line saying why."""
    reason = "the logprobs it reports follow logit_bias"
    with Proxy(llama_base_url, transform=bias_in_logprobs) as proxy:
        auto = check_servers([options(proxy.base_url)], needs_kl=True)[0]
        assert auto.via == "echo" and auto.score
        with pytest.raises(BackendError) as info:
            check_servers([options(proxy.base_url, score_via="steps")], needs_kl=True)
    assert str(info.value).startswith(
        f"--provenai-ablation exact needs KL, but the server at {proxy.base_url} gives no "
        f"teacher-forced logprobs: {reason}"
    )


def assert_lines_up(gen_: OpenAIGenerator, prompt: str) -> Any:
    """Greedy output and teacher-forced rows agree: argmax = the generated token (where no
    near tie), and the generation-time logprob is read back at each position, up to where the
    server's greedy pieces leave the canonical tokenisation of its text (then the teacher-forced
    ids are not the generated ones, and the exact ablation path regenerates from there)."""
    reply = gen_.client.post("completions", gen_._body(prompt, 24, logprobs=1))
    choice = reply["choices"][0]
    pieces, lps = choice["logprobs"]["tokens"], choice["logprobs"]["token_logprobs"]
    ids = gen_._output_ids(prompt, choice["text"])
    same = next(
        (t for t, (i, p) in enumerate(zip(ids, pieces, strict=False)) if gen_._piece(i) != p),
        min(len(ids), len(pieces)),
    )
    assert same >= 5
    rows = gen_.score(prompt, ids)
    assert rows.shape == (len(ids), gen_.vocab)
    for t in range(same):
        top2 = np.sort(rows[t])[-2:]
        if top2[1] - top2[0] > TIE_MARGIN:
            assert int(np.argmax(rows[t])) == ids[t], (t, ids[t])
        assert abs(float(rows[t][ids[t]]) - lps[t]) < 0.02, t
    return rows


def test_shifted_echo_is_corrected_and_a_misaligned_one_refused(
    llama_base_url: str, api_key: None, served: OpenAIGenerator
) -> None:
    # entry i describing token i-1: no known correction, so no KL
    with Proxy(llama_base_url, transform=shift_echo(1)) as bad:
        with pytest.raises(BackendError) as info:
            check_servers([options(bad.base_url, score_via="echo")], needs_kl=True)
    assert str(info.value).startswith(
        f"--provenai-ablation exact needs KL, but the server at {bad.base_url} gives no "
        "teacher-forced logprobs: its echoed prompt logprobs match neither the aligned nor a "
        "one-token-shifted position"
    )
    # entry i describing token i+1 (llama-cpp-python on a prompt without a leading BOS)
    prompt = served.render_chat(MESSAGES)
    with Proxy(llama_base_url, transform=shift_echo(-1)) as shifted:
        corrected = load_served(
            options(shifted.base_url, score_via="echo"), Decoding(max_new_tokens=24)
        )
        assert corrected.report.shift == 1 and corrected.report.score
        assert "shifted by 1, corrected" in corrected.report.describe()
        rows = assert_lines_up(corrected, prompt)
    direct = served.score(prompt, served.generate(prompt).token_ids)[: len(rows)]
    assert np.array_equal(np.argmax(rows, -1), np.argmax(direct, -1))
    assert np.allclose(np.max(rows, -1), np.max(direct, -1), atol=1e-4)


def test_llama_cpp_python_shift_without_a_leading_bos_is_corrected(
    llama_base_url: str, api_key: None, tmp_path: Path
) -> None:
    """A chat template that does not start with the BOS token: llama-cpp-python's own echo
    then describes token i+1 at entry i; the probe finds that and the rows still line up."""
    from pytest_provenai.subject.backends.default_model import ensure_default_model

    src = ensure_default_model().folder
    folder = tmp_path / "tok"
    folder.mkdir()
    for f in src.iterdir():
        if f.suffix == ".safetensors":
            (folder / f.name).symlink_to(f)
        elif f.is_file():
            shutil.copy(f, folder / f.name)
    cfg = json.loads((folder / "tokenizer_config.json").read_text(encoding="utf-8"))
    template = (folder / "chat_template.jinja").read_text(encoding="utf-8")
    (folder / "chat_template.jinja").write_text("Chat log.\n" + template, encoding="utf-8")
    cfg.pop("chat_template", None)
    (folder / "tokenizer_config.json").write_text(json.dumps(cfg), encoding="utf-8")
    gen = load_served(
        ServedOptions(
            base_url=llama_base_url, model=MODEL_ALIAS, tokenizer=str(folder), score_via="echo"
        ),
        Decoding(max_new_tokens=24),
    )
    prompt = gen.render_chat(MESSAGES)
    assert prompt.startswith("Chat log.\n<|im_start|>")
    assert gen.report.shift == 1
    assert_lines_up(gen, prompt)


def test_server_without_logprobs_gives_surface_only(llama_base_url: str, api_key: None) -> None:
    with Proxy(llama_base_url, transform=strip_logprobs) as proxy:
        with pytest.raises(BackendError, match="the server returns no logprobs; enable prompt"):
            check_servers([options(proxy.base_url)], needs_kl=True)
        (report,) = check_servers([options(proxy.base_url)], needs_kl=False)
        gen = load_served(options(proxy.base_url), Decoding(max_new_tokens=8))
        assert not report.score and not gen.capabilities.score
        assert "no score (the server returns no logprobs); influence is surface-only" in (
            report.describe()
        )
        out = gen.generate(gen.render_chat(MESSAGES))
        assert out.text and out.token_ids and out.logprobs == [] and out.margins == []
        with pytest.raises(BackendError, match="cannot score a continuation"):
            gen.score("x", out.token_ids)


def test_max_concurrency_bounds_the_ablation_requests(
    llama_base_url: str, api_key: None, served: OpenAIGenerator
) -> None:
    prompt = served.render_chat(MESSAGES)
    gen = served.generate(prompt)
    ablated = [served.render_chat([MESSAGES[1]]), prompt]
    with Proxy(llama_base_url) as proxy:
        two = load_served(options(proxy.base_url, max_concurrency=2), Decoding(max_new_tokens=24))
        start = proxy.count
        result = two.ablation_pass(prompt, ablated, gen.token_ids, margin=TIE_MARGIN)
        assert proxy.peak_in_flight == 2
    assert proxy.count - start >= 3  # full + two ablated scores (+ regenerations)
    assert result.variants[1].divergence is None  # the unchanged prompt keeps the output
    assert result.variants[1].generation.token_ids == gen.token_ids


def test_ablations_are_visited_in_the_order_the_servers_prompt_cache_reuses(
    llama_base_url: str, api_key: None, served: OpenAIGenerator
) -> None:
    """The full prompt first, then the ablations by decreasing prefix shared with it (the
    last resource removed first), each regeneration right after its own scoring: a server
    that caches the previous request's prefix evaluates only what follows each removed
    resource."""
    facts = [
        "The Seine flows through Paris.",
        "The Thames flows through London.",
        "The Tiber flows through Rome.",
        "The Spree flows through Berlin.",
    ]

    def chat(kept: list[str]) -> str:
        body = "\n".join(kept) + "\nWhich river flows through Rome? Answer: "
        return served.render_chat([MESSAGES[0], {"role": "user", "content": body}])

    prompt = chat(facts)
    ablated = [chat([f for f in facts if f != gone]) for gone in facts]
    prompts = [prompt, *ablated]
    gen = served.generate(prompt)
    seen: list[int] = []

    def record(path: str, body: Any, reply: Any) -> Any:
        text = body.get("prompt", "") if isinstance(body, dict) else ""
        starts = [i for i, p in enumerate(prompts) if str(text).startswith(p)]
        if starts and (not seen or seen[-1] != starts[0]):
            seen.append(starts[0])
        return reply

    with Proxy(llama_base_url, transform=record) as proxy:
        one = load_served(options(proxy.base_url, max_concurrency=1), Decoding(max_new_tokens=24))
        result = one.ablation_pass(prompt, ablated, gen.token_ids, margin=TIE_MARGIN)
    assert seen == [0, 4, 3, 2, 1]  # each prompt's requests (score, regeneration) together
    assert len(result.variants) == 4
    for variant in result.variants:  # results are still in the callers' order
        if variant.divergence is None:
            assert variant.generation.token_ids == gen.token_ids


def test_a_stream_cut_short_is_asked_again_plainly(
    llama_base_url: str, api_key: None, stepped: OpenAIGenerator
) -> None:
    """A server that cuts streams (llama-cpp-python's does when another request arrives) costs
    a plain request per cut stream, never a wrong or missing row."""
    prompt = stepped.render_chat(MESSAGES)
    gen = stepped.generate(prompt)
    expected = stepped.score(prompt, gen.token_ids)
    with Proxy(llama_base_url, cut_streams=True) as proxy:
        cut = load_served(options(proxy.base_url), Decoding(max_new_tokens=24))
        assert cut.report.stream  # the probe's own stream was cut after its one event
        rows = cut.score(prompt, gen.token_ids)
        again = cut.generate(prompt)
    assert cut.stream_fallbacks >= 2
    assert again.token_ids == gen.token_ids
    top2 = np.sort(expected, -1)[:, -2:]
    clear = top2[:, 1] - top2[:, 0] > 2 * PROBE_TOLERANCE  # argmax beyond the cache noise
    assert np.array_equal(np.argmax(rows, -1)[clear], np.argmax(expected, -1)[clear])
    assert np.allclose(np.max(rows, -1), np.max(expected, -1), atol=PROBE_TOLERANCE)

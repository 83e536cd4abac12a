"""The openai backend against a real llama.cpp server (llama-cpp-python's, on 127.0.0.1,
serving the embedded default GGUF with an API key; tests/served.py), and proxies in front of
it that misalign, strip or drop what it returns."""

from __future__ import annotations

import os
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest
from served import API_KEY, MODEL_ALIAS, Proxy, shift_echo, strip_logprobs

from pytest_provenai.errors import BackendError
from pytest_provenai.subject.backends.base import TIE_MARGIN, Decoding
from pytest_provenai.subject.backends.openai_backend import (
    OpenAIGenerator,
    ServedOptions,
    check_servers,
    load_served,
)

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
    return load_served(options(llama_base_url), Decoding(max_new_tokens=24))


def test_probe_finds_and_corrects_the_echo_shift(served: OpenAIGenerator) -> None:
    report = served.report
    assert (report.model, report.top_logprobs, report.echo, report.bos) == (
        MODEL_ALIAS,
        20,
        True,
        0,
    )
    assert report.shift == 1 and report.score  # llama-cpp-python 0.3.x without a BOS token
    assert "shifted by 1, corrected" in report.describe()
    caps = served.capabilities
    assert caps.score and caps.logprobs and caps.score_topk == 20
    assert served.identity.endpoint == served.client.base_url
    assert "endpoint" not in served.identity.model_key()
    assert served.identity.cache_key()["endpoint"] == served.client.base_url


def test_teacher_forced_rows_line_up_with_greedy_generation(served: OpenAIGenerator) -> None:
    prompt = served.render_chat(MESSAGES)
    gen = served.generate(prompt)
    assert gen.token_ids and gen.text
    rows = served.score(prompt, gen.token_ids)
    assert rows.shape == (len(gen.token_ids), served.vocab)
    for t, tok in enumerate(gen.token_ids):
        top2 = np.sort(rows[t])[-2:]
        if top2[1] - top2[0] > TIE_MARGIN:
            assert int(np.argmax(rows[t])) == tok, (t, tok)
    # the server's generation-time logprob of each output token, read back by the echo
    for t, lp in enumerate(gen.logprobs):
        assert abs(float(rows[t][gen.token_ids[t]]) - lp) < 0.02
    if gen.finish_reason == "stop":
        assert gen.token_ids[-1] in served.stop_ids


def test_misaligned_server_is_refused_and_aligned_one_used_as_is(
    llama_base_url: str, api_key: None, served: OpenAIGenerator
) -> None:
    with Proxy(llama_base_url, transform=shift_echo(-1)) as bad:
        with pytest.raises(BackendError) as info:
            check_servers([options(bad.base_url)], needs_kl=True)
    assert str(info.value).startswith(
        f"--provenai-ablation exact needs KL, but the server at {bad.base_url} gives no "
        "teacher-forced logprobs: its echoed prompt logprobs match neither the aligned nor a "
        "one-token-shifted position"
    )
    prompt = served.render_chat(MESSAGES)
    gen = served.generate(prompt)
    with Proxy(llama_base_url, transform=shift_echo(1)) as good:
        aligned = load_served(options(good.base_url), Decoding(max_new_tokens=24))
        assert aligned.report.shift == 0 and aligned.report.score
        rows = aligned.score(prompt, gen.token_ids)
    direct = served.score(prompt, gen.token_ids)
    assert np.array_equal(np.argmax(rows, -1), np.argmax(direct, -1))
    assert np.allclose(np.max(rows, -1), np.max(direct, -1), atol=1e-4)


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
        assert out.text and out.token_ids and out.logprobs == []
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
        result = two.ablation_pass(prompt, ablated, gen.token_ids, TIE_MARGIN)
        assert proxy.peak_in_flight == 2
    assert proxy.count - start >= 3  # full + two ablated scores (+ regenerations)
    assert result.variants[1].divergence is None  # the unchanged prompt keeps the output
    assert result.variants[1].generation.token_ids == gen.token_ids

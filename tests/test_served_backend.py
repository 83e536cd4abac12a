"""The openai backend without a model server: its options, the top-k rows a served model's
KL is computed from, and the configure-time refusal of servers that cannot be used (loopback
servers from tests/served.py that are not OpenAI-compatible)."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from served import Scripted

from pytest_provenai import options as opt
from pytest_provenai.errors import ConfigError
from pytest_provenai.subject.backends.served import topk_rows, truncate_rows
from pytest_provenai.subject.kl import kl_rows


def settings(**values: object) -> opt.Settings:
    return opt.parse_settings(lambda name: values.get(name), Path("/root/project"))


# -- options --------------------------------------------------------------------------------------
def test_served_options_and_worker_assignment() -> None:
    s = settings(
        provenai_backend="openai",
        provenai_base_urls="http://a:1/v1, http://b:2/v1/,http://c:3/v1",
        provenai_tokenizer="default",
        provenai_max_concurrency="2",
    )
    assert s.served is not None
    assert s.served.base_urls == ("http://a:1/v1", "http://b:2/v1", "http://c:3/v1")
    assert [s.served.base_url_for(w) for w in ("gw0", "gw1", "gw2", "gw4", None)] == [
        "http://a:1/v1",
        "http://b:2/v1",
        "http://c:3/v1",
        "http://b:2/v1",
        "http://a:1/v1",
    ]
    assert s.served.max_concurrency == 2 and s.served.top_logprobs == 20
    assert s.for_results()["served"]["base_urls"][1] == "http://b:2/v1"
    assert s.served.request_timeout == 600.0
    assert s.served.options("http://a:1/v1", None).timeout == 600.0
    assert settings().served is None
    quick = settings(
        provenai_backend="openai",
        provenai_base_url="http://a:1/v1",
        provenai_request_timeout="2.5",
    )
    assert quick.served is not None and quick.served.options("http://a:1/v1", None).timeout == 2.5
    assert quick.served.score_via == "auto" and quick.for_results()["served"]["score_via"] == "auto"
    echo = settings(
        provenai_backend="openai", provenai_base_url="http://a:1/v1", provenai_served_score="echo"
    )
    assert echo.served is not None
    assert echo.served.options("http://a:1/v1", None).score_via == "echo"


@pytest.mark.parametrize(
    ("values", "message"),
    [
        ({"provenai_backend": "openai"}, "--provenai-backend openai needs --provenai-base-url"),
        (
            {"provenai_backend": "openai", "provenai_base_url": "localhost:8000"},
            "--provenai-base-url 'localhost:8000' is not an http(s) URL with a host",
        ),
        (
            {"provenai_backend": "openai", "provenai_base_urls": "http://a/v1,ftp://b"},
            "--provenai-base-urls 'ftp://b' is not an http(s) URL",
        ),
        (
            {"provenai_base_url": "http://a/v1"},
            "--provenai-base-url is only used with --provenai-backend openai",
        ),
        (
            {
                "provenai_backend": "openai",
                "provenai_base_url": "http://a/v1",
                "provenai_max_concurrency": "0",
            },
            "--provenai-max-concurrency: expected an integer >= 1, got 0",
        ),
        *(
            (
                {
                    "provenai_backend": "openai",
                    "provenai_base_url": "http://a/v1",
                    "provenai_request_timeout": bad,
                },
                f"--provenai-request-timeout: expected a positive number of seconds, got {bad!r}",
            )
            for bad in ("0", "-1", "nan", "inf", "soon")
        ),
        (
            {"provenai_request_timeout": "5"},
            "--provenai-request-timeout is only used with --provenai-backend openai",
        ),
        (
            {
                "provenai_backend": "openai",
                "provenai_base_url": "http://a/v1",
                "provenai_served_score": "logits",
            },
            "--provenai-served-score: expected one of auto, steps, echo, got 'logits'",
        ),
        (
            {"provenai_served_score": "echo"},
            "--provenai-served-score is only used with --provenai-backend openai",
        ),
    ],
)
def test_bad_served_options(values: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError) as info:
        settings(**values)
    assert str(info.value).startswith(message)


# -- top-k rows -----------------------------------------------------------------------------------
def log_softmax(x: np.ndarray) -> np.ndarray:
    return x - np.logaddexp.reduce(x, axis=-1, keepdims=True)


def test_topk_rows_keep_the_known_entries_and_spread_the_rest() -> None:
    rows = topk_rows([{3: np.log(0.5), 1: np.log(0.3)}, {0: 0.0}], vocab=6)
    assert rows.shape == (2, 6) and rows.dtype == np.float32
    assert np.allclose(np.exp(rows[0]), [0.05, 0.3, 0.05, 0.5, 0.05, 0.05], atol=1e-6)
    assert int(np.argmax(rows[1])) == 0 and np.exp(rows[1][1:]).sum() < 1e-6


def test_topk_kl_is_exact_when_k_covers_the_vocabulary_and_close_for_peaked_rows() -> None:
    rng = np.random.default_rng(0)
    p = log_softmax(rng.normal(0, 4, size=(8, 50)))
    q = log_softmax(np.log(np.exp(p) + 0.02 * rng.random((8, 50))))
    exact = kl_rows(p, q)
    assert np.allclose(kl_rows(truncate_rows(p, 50), truncate_rows(q, 50)), exact, atol=1e-5)
    approx = kl_rows(truncate_rows(p, 20), truncate_rows(q, 20))
    assert np.all(np.abs(approx - exact) <= 0.05 * exact + 1e-3)
    assert np.array_equal(np.argmax(truncate_rows(q, 20), -1), np.argmax(q, -1))


# -- servers that cannot be used: refused at configure time, before any case -----------------------
FIDELITY = """
from pytest_provenai.audit.fidelity import fidelity_record

def test_fid(provenai_case, provenai_subject, provenai_record):
    provenai_record(fidelity_record(provenai_case, provenai_subject.answer(provenai_case)))
"""


def served_project(pytester: pytest.Pytester) -> None:
    from project import RECORDS, freeze_records

    freeze_records(pytester.path, RECORDS)
    pytester.makeini("[pytest]\nprovenai_fixtures = fixtures/mini\n")
    pytester.makepyfile(test_fid=FIDELITY)


@pytest.mark.parametrize(
    ("replies", "expected"),
    [
        (
            [(404, b"<html>Not Found</html>")],
            "*ERROR: GET http://127.0.0.1:*/v1/models: HTTP 404 Not Found: <html>Not Found</html>;"
            " the server at http://127.0.0.1:*/v1 is not OpenAI-compatible (no GET /models);"
            " point --provenai-base-url at the API root (often ending in /v1)",
        ),
        (
            [(200, b'{"status": "ok"}')],
            "*ERROR: GET http://127.0.0.1:*/v1/models returned no 'data' list: the server at *"
            " is not OpenAI-compatible*",
        ),
        (
            [(200, b'{"object": "list", "data": [{"id": "llama-3"}, {"id": "qwen"}]}')],
            "*ERROR: --provenai-model SmolLM2: the server at http://127.0.0.1:*/v1 does not "
            "serve it; it serves llama-3, qwen",
        ),
    ],
)
def test_unusable_server_is_a_usage_error_before_any_case(
    pytester: pytest.Pytester, replies: list[object], expected: str
) -> None:
    served_project(pytester)
    with Scripted(replies) as srv:
        result = pytester.runpytest_subprocess(
            "-p", "no:cacheprovider", "--provenai-backend", "openai",
            "--provenai-base-url", srv.base_url, "--provenai-model", "SmolLM2",
            "--provenai-tokenizer", "default",
        )  # fmt: skip
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines([expected])
    assert [e for e in result.stderr.lines if e.startswith("ERROR")] == [
        e for e in result.stderr.lines if e.strip()
    ][:1]
    assert not (pytester.path / ".provenai-cache").exists()
    assert {r[1] for r in srv.requests} == {"/v1/models"}


def test_a_key_echoed_at_configure_time_is_redacted_from_the_usage_error(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    key = "sk-configure-time-secret-42"
    monkeypatch.setenv("PROVENAI_API_KEY", key)
    served_project(pytester)
    body = f'{{"error": {{"message": "invalid Authorization: Bearer {key}"}}}}'.encode()
    with Scripted([(401, body)]) as srv:
        result = pytester.runpytest_subprocess(
            "-p", "no:cacheprovider", "--provenai-backend", "openai",
            "--provenai-base-url", srv.base_url, "--provenai-model", "SmolLM2",
            "--provenai-tokenizer", "default",
        )  # fmt: skip
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(
        ["*ERROR: GET *: HTTP 401 *: invalid Authorization: [[]redacted[]]; the server wants an*"]
    )
    assert key not in result.stdout.str() + result.stderr.str()
    assert srv.requests[0][2]["Authorization"] == f"Bearer {key}"


def test_logprobs_given_as_a_content_list_read_as_the_completions_lists() -> None:
    from pytest_provenai.errors import BackendError
    from pytest_provenai.subject.backends.served.replies import first_choice, key_token_id

    reply = {
        "choices": [
            {
                "text": " Paris.",
                "logprobs": {
                    "content": [
                        {
                            "id": 7042,
                            "token": " Paris",
                            "logprob": -0.26,
                            "top_logprobs": [
                                {"id": 7042, "token": " Paris", "logprob": -0.26},
                                {"id": 260, "token": " the", "logprob": -2.76},
                                {"token": " Lyon", "logprob": -5.0},  # no id: keyed by text
                                {"id": 260, "token": " the", "logprob": -9.0},  # repeated id
                            ],
                        },
                        {"id": 30, "token": ".", "logprob": -0.4, "top_logprobs": []},
                    ]
                },
            }
        ]
    }
    lp = first_choice(reply, "u")["logprobs"]
    assert lp == {
        "tokens": [" Paris", "."],
        "token_logprobs": [-0.26, -0.4],
        "top_logprobs": [
            {"token_id:7042": -0.26, "token_id:260": -2.76, " Lyon": -5.0},
            {},
        ],
    }
    assert [key_token_id(k) for k in lp["top_logprobs"][0]] == [7042, 260, None]
    # the completions lists themselves pass through untouched
    lists = {"choices": [{"text": "x", "logprobs": {"tokens": ["x"], "content": []}}]}
    assert first_choice(lists, "u")["logprobs"] == {"tokens": ["x"], "content": []}
    bad = {"choices": [{"text": "x", "logprobs": {"content": [{"logprob": -1.0}]}}]}
    with pytest.raises(BackendError, match="POST u: a logprobs content entry has no token text"):
        first_choice(bad, "u")

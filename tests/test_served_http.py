"""The served backend's HTTP client against loopback servers that misbehave on purpose:
bounded retries with backoff for transient failures, one clear line naming URL and status,
no retry for a client error, a bound on requests in flight, and the API key kept out of
every message."""

from __future__ import annotations

import re
from concurrent.futures import ThreadPoolExecutor

import pytest
from served import Scripted, free_port

from pytest_provenai.errors import BackendError
from pytest_provenai.subject.backends.http import JSONClient, ServerError, parse_base_url

OK = (200, b'{"ok": true}')
KEY = "sk-never-show-me"


def client(url: str, **kw: object) -> tuple[JSONClient, list[float]]:
    sleeps: list[float] = []
    c = JSONClient(url, api_key=KEY, backoff=0.01, sleep=sleeps.append, timeout=2.0, **kw)  # type: ignore[arg-type]
    return c, sleeps


def test_transient_errors_are_retried_with_backoff_then_succeed() -> None:
    with Scripted([(503, b'{"error": "busy"}'), "drop", (200, b"not json"), OK]) as srv:
        c, sleeps = client(srv.base_url)
        assert c.post("completions", {"prompt": "x"}) == {"ok": True}
    assert len(srv.requests) == 4
    assert sleeps == [0.01, 0.02, 0.04]  # exponential backoff
    assert c.retried == 3
    assert srv.requests[0][2]["Authorization"] == f"Bearer {KEY}"


def test_a_probe_request_is_sent_once() -> None:
    with Scripted(
        [(500, b'{"error": {"message": "prompt: input should be a string"}}'), OK]
    ) as srv:
        c, sleeps = client(srv.base_url)
        with pytest.raises(ServerError, match="HTTP 500 Internal Server Error: prompt: input"):
            c.post_once("completions", {"prompt": [1, 2]})
        assert len(srv.requests) == 1 and c.retried == 0 and sleeps == []
        assert c.post_once("completions", {"prompt": "x"}) == {"ok": True}
    assert c.requests == 2


def test_gives_up_after_bounded_retries_with_one_line_naming_url_and_status() -> None:
    with Scripted([(500, b'{"error": {"message": "model crashed"}}')]) as srv:
        c, _ = client(srv.base_url, retries=2)
        with pytest.raises(ServerError) as info:
            c.post("completions", {"prompt": "x"})
    msg = str(info.value)
    assert len(srv.requests) == 3
    assert msg == (
        f"POST {srv.base_url}/completions: HTTP 500 Internal Server Error: model crashed "
        "(gave up after 3 attempts)"
    )
    assert "\n" not in msg and KEY not in msg and info.value.status == 500


def test_client_errors_are_not_retried() -> None:
    with Scripted([(404, b'{"detail": "Not Found"}'), OK]) as srv:
        c, sleeps = client(srv.base_url)
        with pytest.raises(ServerError, match=r"GET .*/v1/models: HTTP 404 Not Found: Not Found$"):
            c.get("models")
    assert len(srv.requests) == 1 and sleeps == []


def test_connection_refused_and_timeout_name_the_url() -> None:
    url = f"http://127.0.0.1:{free_port()}/v1"
    c, _ = client(url, retries=1)
    with pytest.raises(ServerError, match=r"^POST .*/v1/completions: connection failed .*2 att"):
        c.post("completions", {})
    with Scripted([("sleep", 1.0, *OK)]) as srv:
        c = JSONClient(srv.base_url, timeout=0.2, retries=1, backoff=0.0)
        with pytest.raises(ServerError, match=r"^POST .*: timed out.*gave up after 2 attempts"):
            c.post("completions", {})


def test_max_concurrency_bounds_requests_in_flight() -> None:
    with Scripted([("sleep", 0.2, *OK)]) as srv:
        c = JSONClient(srv.base_url, max_concurrency=2)
        with ThreadPoolExecutor(max_workers=6) as pool:
            list(pool.map(lambda _: c.get("models"), range(6)))
    assert c.peak_in_flight == 2
    assert c.requests == 6


def test_key_is_not_in_repr() -> None:
    c = JSONClient("http://127.0.0.1:1/v1", api_key=KEY)
    assert KEY not in repr(c) and KEY not in str(vars(c).get("base_url"))


@pytest.mark.parametrize(
    ("url", "why"),
    [
        ("127.0.0.1:8000", "not an http(s) URL"),
        ("ftp://host/v1", "not an http(s) URL"),
        ("http://host:99999/v1", "does not parse"),
        ("http://user:pw@host/v1", "no credentials in the URL"),
        ("http:///v1", "not an http(s) URL"),
    ],
)
def test_bad_base_urls(url: str, why: str) -> None:
    with pytest.raises(BackendError, match=re.escape(why)):
        parse_base_url(url)


def test_base_url_is_kept_without_trailing_slash() -> None:
    assert parse_base_url(" http://127.0.0.1:8000/v1/ ") == "http://127.0.0.1:8000/v1"


# -- the key never leaves the base URL's origin, and never shows in a message -------------------
@pytest.mark.parametrize("status", [301, 302, 303, 307, 308])
def test_a_redirect_to_another_origin_is_refused_and_the_key_never_sent_there(
    status: int,
) -> None:
    with Scripted([OK]) as elsewhere:
        target = f"{elsewhere.base_url}/models"
        with Scripted([(status, b"", {"Location": target})]) as srv:
            c, sleeps = client(srv.base_url)
            with pytest.raises(ServerError) as info:
                c.get("models")
    assert elsewhere.requests == []  # nothing, with or without the header, went there
    msg = str(info.value)
    assert f"GET {srv.base_url}/models" in msg and target in msg and "another origin" in msg
    assert "\n" not in msg and KEY not in msg
    assert len(srv.requests) == 1 and sleeps == []  # refused at once, not retried


def test_a_redirect_within_the_origin_is_followed_with_the_key() -> None:
    with Scripted([(307, b"", {"Location": "/v1/models-moved"}), OK]) as srv:
        c, _ = client(srv.base_url)
        assert c.get("models") == {"ok": True}
    assert [r[1] for r in srv.requests] == ["/v1/models", "/v1/models-moved"]
    assert srv.requests[1][2]["Authorization"] == f"Bearer {KEY}"


def test_a_redirect_to_another_port_of_the_same_host_is_another_origin() -> None:
    with Scripted([OK]) as other:
        with Scripted([(302, b"", {"Location": f"{other.base_url}/models"})]) as srv:
            c, _ = client(srv.base_url)
            with pytest.raises(ServerError, match="another origin"):
                c.get("models")
    assert other.requests == []


@pytest.mark.parametrize(
    "body",
    [
        f'{{"error": {{"message": "bad key Bearer {KEY}"}}}}'.encode(),
        f"401 Unauthorized: you sent Authorization: Bearer {KEY} which we reject".encode(),
        f'{{"detail": "key {KEY} unknown", "api_key": "{KEY}"}}'.encode(),
        b'{"error": "your token Bearer sk-other-secret-123 is revoked"}',
        b"x" * 190 + KEY.encode(),  # cut at 200 characters: no part of the key survives
    ],
)
def test_an_error_body_that_echoes_the_key_is_redacted(body: bytes) -> None:
    with Scripted([(401, body)]) as srv:
        c, _ = client(srv.base_url)
        with pytest.raises(ServerError) as info:
            c.get("models")
    msg = str(info.value)
    assert "HTTP 401" in msg
    assert KEY not in msg and "sk-other" not in msg and "sk-never" not in msg
    assert "Bearer sk" not in msg


def test_a_200_body_that_is_not_json_is_redacted_too() -> None:
    with Scripted([(200, f"oops Bearer {KEY}".encode())]) as srv:
        c, _ = client(srv.base_url, retries=0)
        with pytest.raises(ServerError, match="not JSON") as info:
            c.get("models")
    assert KEY not in str(info.value)


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity"])
def test_non_finite_numbers_in_a_reply_are_refused_at_once(constant: str) -> None:
    body = f'{{"choices": [{{"text": "x", "logprobs": {{"token_logprobs": [{constant}]}}}}]}}'
    with Scripted([(200, body.encode())]) as srv:
        c, sleeps = client(srv.base_url)
        with pytest.raises(ServerError) as info:
            c.post("completions", {})
    assert f"holds {constant}" in str(info.value) and "not a JSON number" in str(info.value)
    assert len(srv.requests) == 1 and sleeps == []


def test_clean_text_replaces_lone_surrogates_and_the_key() -> None:
    c = JSONClient("http://127.0.0.1:1/v1", api_key=KEY)
    assert c.clean_text("a\ud800b") == "a\ufffdb"
    assert c.clean_text(f"the key is {KEY}.") == "the key is [redacted]."
    assert c.clean_text("plain") == "plain"


def test_a_stream_is_read_whole_into_its_event_payloads() -> None:
    """Server-sent events: ``data:`` lines (CRLF or LF, an event's lines joined, comments
    skipped) up to ``[DONE]``; a server that answers a stream request with one plain JSON
    reply gives it as the one event; a non-finite number in an event is refused at once."""
    stream = (
        b": a comment\r\n"
        b'data: {"choices": [{"text": "Par", "logprobs": {"tokens": ["Par"]}}]}\r\n\r\n'
        b'data: {"choices": [{"text": "is",\n'
        b'data:  "logprobs": {"tokens": ["is"]}, "finish_reason": "stop"}]}\n\n'
        b"data: [DONE]\n\n"
        b'data: {"never": "read"}\n\n'
    )
    with Scripted([(200, stream, {"Content-Type": "text/event-stream"}), OK]) as srv:
        c, _ = client(srv.base_url)
        events = c.post_stream("completions", {"stream": True})
        assert [e["choices"][0]["text"] for e in events] == ["Par", "is"]
        assert c.post_stream("completions", {"stream": True}) == [{"ok": True}]
    assert srv.requests[0][2]["Accept"] == "text/event-stream"
    with Scripted([(200, b'data: {"choices": [{"logprobs": [NaN]}]}\n\n')]) as srv:
        c, sleeps = client(srv.base_url)
        with pytest.raises(ServerError, match="holds NaN"):
            c.post_stream("completions", {"stream": True})
    assert len(srv.requests) == 1 and sleeps == []


def test_a_joined_stream_is_the_plain_reply() -> None:
    from pytest_provenai.subject.backends.served.replies import joined_stream

    events = [
        {
            "choices": [
                {
                    "text": "Par",
                    "logprobs": {
                        "tokens": ["Par"],
                        "token_logprobs": [-0.1],
                        "top_logprobs": [{"Par": -0.1}],
                    },
                }
            ]
        },
        {
            "choices": [
                {
                    "text": "is",
                    "finish_reason": "stop",
                    "logprobs": {
                        "tokens": ["is"],
                        "token_logprobs": [-0.2],
                        "top_logprobs": [{"is": -0.2}],
                    },
                }
            ]
        },
    ]
    reply = joined_stream(events, "u")
    assert reply == {
        "choices": [
            {
                "text": "Paris",
                "index": 0,
                "finish_reason": "stop",
                "logprobs": {
                    "tokens": ["Par", "is"],
                    "token_logprobs": [-0.1, -0.2],
                    "top_logprobs": [{"Par": -0.1}, {"is": -0.2}],
                },
            }
        ]
    }
    with pytest.raises(BackendError, match="no choices"):
        joined_stream([{"id": 1}], "u")

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

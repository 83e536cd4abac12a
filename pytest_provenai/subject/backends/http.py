"""A small JSON-over-HTTP client for OpenAI-compatible servers (standard library only).

- ``parse_base_url`` validates ``--provenai-base-url`` (``http(s)://host[:port][/path]``, no
  credentials in it) and returns it without a trailing slash.
- :class:`JSONClient` sends JSON requests with bounded retries and exponential backoff for
  transient failures (connection refused or reset, timeouts, HTTP 408/429/5xx, a body that is
  not JSON, e.g. a server that died mid-reply); anything else (HTTP 4xx) fails at once. The
  final error is one line naming method, URL and status. A semaphore bounds the requests in
  flight from this process (``--provenai-max-concurrency``).
- The API key is read from :data:`API_KEY_ENV` by the caller and sent as a bearer token, to
  the configured base URL's origin (scheme, host, port) only: a redirect to another origin is
  refused with one line naming both URLs (the key is never resent elsewhere); a redirect
  within the origin is followed. Every message built from a server's reply goes through
  :func:`redact`, so neither the key nor any ``Bearer …`` / ``sk-…``-shaped token a server
  echoes reaches an error line, a log or a value this module returns.
"""

from __future__ import annotations

import http.client
import json
import re
import threading
import time
import urllib.error
import urllib.parse
import urllib.request
from collections.abc import Callable
from typing import Any

from ...errors import BackendError

API_KEY_ENV = "PROVENAI_API_KEY"
"""Environment variable holding the API key of the served model (optional)."""

TRANSIENT_STATUS = frozenset({408, 429, 500, 502, 503, 504})
DEFAULT_RETRIES = 3
DEFAULT_BACKOFF = 0.5
DEFAULT_TIMEOUT = 600.0
DEFAULT_MAX_CONCURRENCY = 4
"""Requests in flight per client (the served backend's --provenai-max-concurrency default)."""


REDACTED = "[redacted]"
_TOKEN_SHAPES = re.compile(
    r"(?i)\bbearer\s+[^\s\"',;]+"  # an echoed Authorization header
    r"|\bsk-[A-Za-z0-9_\-]{4,}"  # OpenAI-style secret keys
    r"|\bapi[_-]?key[\"']?\s*[:=]\s*[\"']?[^\s\"',;]+"  # api_key=..., "api-key": "..."
)


def redact(text: str, key: str | None = None) -> str:
    """``text`` with the API key and any bearer-, ``sk-``- or ``api_key=``-shaped token
    replaced by ``[redacted]``: for every message built from what a server sent back."""
    if key:
        text = text.replace(key, REDACTED)
    return _TOKEN_SHAPES.sub(REDACTED, text)


def origin(url: str) -> tuple[str, str, int]:
    """(scheme, host, port) of an http(s) URL, the port made explicit."""
    parts = urllib.parse.urlsplit(url)
    scheme = parts.scheme.lower()
    port = parts.port or (443 if scheme == "https" else 80)
    return scheme, (parts.hostname or "").lower(), port


class CrossOriginRedirect(urllib.error.URLError):
    """Raised inside urllib when a server redirects to another origin (never followed)."""

    def __init__(self, source: str, target: str) -> None:
        super().__init__(f"redirect from {source} to {target}")
        self.source = source
        self.target = target


class _SameOriginRedirects(urllib.request.HTTPRedirectHandler):
    """Follow redirects within the base URL's origin only: the bearer token must never reach
    another host (urllib would resend every header to wherever ``Location`` points)."""

    def __init__(self, base_origin: tuple[str, str, int]) -> None:
        super().__init__()
        self.base_origin = base_origin

    def redirect_request(
        self,
        req: urllib.request.Request,
        fp: Any,
        code: int,
        msg: str,
        headers: Any,
        newurl: str,
    ) -> urllib.request.Request | None:
        if origin(newurl) != self.base_origin:
            raise CrossOriginRedirect(req.full_url, newurl)
        return super().redirect_request(req, fp, code, msg, headers, newurl)


class ServerError(BackendError):
    """A request to the server failed for good (after retries, or at once for a 4xx)."""

    def __init__(self, message: str, *, status: int | None, transient: bool) -> None:
        super().__init__(message)
        self.status = status
        self.transient = transient


def parse_base_url(text: str, option: str = "--provenai-base-url") -> str:
    """The base URL without a trailing slash; BackendError with the fix if it does not parse."""
    raw = str(text).strip()
    example = "e.g. http://127.0.0.1:8000/v1"
    try:
        parts = urllib.parse.urlsplit(raw)
        port = parts.port  # raises ValueError on a bad port
    except ValueError as exc:
        raise BackendError(f"{option} {raw!r} does not parse as a URL ({exc}); {example}") from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise BackendError(f"{option} {raw!r} is not an http(s) URL with a host; {example}")
    if parts.username or parts.password:
        raise BackendError(
            f"{option}: put no credentials in the URL; set the API key in ${API_KEY_ENV}"
        )
    if parts.query or parts.fragment:
        raise BackendError(f"{option} {raw!r}: a base URL has no query or fragment; {example}")
    del port
    return raw.rstrip("/")


class JSONClient:
    """JSON requests to ``base_url`` + path, with retries, backoff and a concurrency bound."""

    def __init__(
        self,
        base_url: str,
        *,
        api_key: str | None = None,
        timeout: float = DEFAULT_TIMEOUT,
        retries: int = DEFAULT_RETRIES,
        backoff: float = DEFAULT_BACKOFF,
        max_concurrency: int = DEFAULT_MAX_CONCURRENCY,
        sleep: Callable[[float], None] = time.sleep,
    ) -> None:
        self.base_url = parse_base_url(base_url)
        self._api_key = api_key or None
        self.timeout = timeout
        self.retries = max(0, retries)
        self.backoff = backoff
        self.max_concurrency = max(1, max_concurrency)
        self._slots = threading.BoundedSemaphore(self.max_concurrency)
        self._opener = urllib.request.build_opener(_SameOriginRedirects(origin(self.base_url)))
        self._sleep = sleep
        self._lock = threading.Lock()
        self.in_flight = 0
        self.peak_in_flight = 0
        self.requests = 0
        self.retried = 0

    def __repr__(self) -> str:  # never shows the key
        return f"JSONClient({self.base_url!r}, max_concurrency={self.max_concurrency})"

    def redact(self, text: str) -> str:
        """``text`` (built from a reply) with this client's key and key-shaped tokens
        replaced (see :func:`redact`)."""
        return redact(text, self._api_key)

    def clean_text(self, text: str) -> str:
        """A model's output text as the harness keeps it: lone surrogates (a server's JSON
        may escape them; they are not Unicode text) replaced by U+FFFD, as for every other
        answer, and this client's API key, should a server echo it, replaced by
        ``[redacted]`` so it never reaches a cache entry, a record or a report."""
        if any("\ud800" <= ch <= "\udfff" for ch in text):
            text = "".join("\ufffd" if "\ud800" <= ch <= "\udfff" else ch for ch in text)
        if self._api_key and self._api_key in text:
            text = text.replace(self._api_key, REDACTED)
        return text

    def url(self, path: str) -> str:
        return f"{self.base_url}/{path.lstrip('/')}"

    def get(self, path: str) -> Any:
        return self.request("GET", path, None)

    def post(self, path: str, body: dict[str, Any]) -> Any:
        return self.request("POST", path, body)

    def post_once(self, path: str, body: dict[str, Any]) -> Any:
        """POST ``body`` once, never retried: for a probe whose failure only means "no"
        (a server may answer a request shape it does not take with HTTP 500)."""
        return self._once("POST", self.url(path), body, False)

    def post_stream(self, path: str, body: dict[str, Any]) -> list[Any]:
        """POST ``body`` (which asks for ``"stream": true``) and read the whole server-sent
        event stream: the decoded JSON payload of every ``data:`` event, in order, up to
        ``[DONE]``. One attempt, not retried (a caller falls back to a plain request: a
        server may cut a stream when another request arrives); errors as :meth:`request`."""
        url = self.url(path)
        events = self._once("POST", url, body, True)
        assert isinstance(events, list)
        return events

    def request(self, method: str, path: str, body: dict[str, Any] | None) -> Any:
        """The decoded JSON reply; ServerError (one line: method, URL, status) on failure."""
        url = self.url(path)
        attempts = self.retries + 1
        last: ServerError | None = None
        for attempt in range(attempts):
            if attempt:
                with self._lock:
                    self.retried += 1
                self._sleep(self.backoff * (2 ** (attempt - 1)))
            try:
                return self._once(method, url, body, False)
            except ServerError as exc:
                last = exc
                if not exc.transient:
                    raise
        assert last is not None
        raise ServerError(
            f"{last} (gave up after {attempts} attempts)", status=last.status, transient=True
        )

    def _once(self, method: str, url: str, body: dict[str, Any] | None, stream: bool) -> Any:
        data = None if body is None else json.dumps(body).encode("utf-8")
        headers = {"Accept": "text/event-stream" if stream else "application/json"}
        if data is not None:
            headers["Content-Type"] = "application/json"
        if self._api_key:
            headers["Authorization"] = f"Bearer {self._api_key}"
        req = urllib.request.Request(url, data=data, headers=headers, method=method)
        where = f"{method} {url}"
        with self._slots:
            with self._lock:
                self.in_flight += 1
                self.requests += 1
                self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
            try:
                with self._opener.open(req, timeout=self.timeout) as resp:
                    raw = resp.read()
            except CrossOriginRedirect as exc:
                raise ServerError(
                    f"{where}: the server redirected to another origin ({exc.target}); "
                    f"refused, so the API key is never sent beyond {self.base_url} — point "
                    "--provenai-base-url at the final address",
                    status=None,
                    transient=False,
                ) from None
            except urllib.error.HTTPError as exc:
                detail = _detail(exc, self._api_key)
                raise ServerError(
                    f"{where}: HTTP {exc.code} {exc.reason}{detail}",
                    status=exc.code,
                    transient=exc.code in TRANSIENT_STATUS,
                ) from None
            except urllib.error.URLError as exc:
                reason = exc.reason
                kind = (
                    "timed out"
                    if isinstance(reason, TimeoutError)
                    else f"connection failed ({redact(str(reason), self._api_key)})"
                )
                raise ServerError(f"{where}: {kind}", status=None, transient=True) from None
            except TimeoutError:
                raise ServerError(
                    f"{where}: timed out after {self.timeout:g} s", status=None, transient=True
                ) from None
            except (ConnectionError, http.client.HTTPException, OSError) as exc:
                raise ServerError(
                    f"{where}: connection dropped "
                    f"({type(exc).__name__}: {redact(str(exc), self._api_key)})",
                    status=None,
                    transient=True,
                ) from None
            finally:
                with self._lock:
                    self.in_flight -= 1
        try:
            if stream:
                return sse_events(raw.decode("utf-8"))
            return json.loads(raw.decode("utf-8"), parse_constant=_non_finite)
        except _NonFinite as exc:
            raise ServerError(
                f"{where}: the reply holds {exc.token}, which is not a JSON number (a "
                "log-probability or score must be finite); nothing from it is used or cached",
                status=200,
                transient=False,
            ) from None
        except (UnicodeDecodeError, ValueError):
            text = redact(raw[:4000].decode("utf-8", "replace"), self._api_key)
            snippet = text[:80].replace("\n", " ")
            raise ServerError(
                f"{where}: HTTP 200 but the body is not "
                f"{'a stream of JSON events' if stream else 'JSON'} ({snippet!r})",
                status=200,
                transient=True,
            ) from None


def sse_events(text: str) -> list[Any]:
    """The JSON payloads of a server-sent event stream's ``data:`` events up to ``[DONE]``
    (an event's several ``data:`` lines joined by newlines); a server that ignored the ask for
    a stream and sent one JSON reply gives that reply as the one event. ValueError when a
    payload is not JSON."""
    events: list[Any] = []
    for block in text.replace("\r\n", "\n").split("\n\n"):
        data = "\n".join(
            line[5:].removeprefix(" ") for line in block.split("\n") if line.startswith("data:")
        )
        if not data:
            continue
        if data.strip() == "[DONE]":
            return events
        events.append(json.loads(data, parse_constant=_non_finite))
    if not events:
        return [json.loads(text, parse_constant=_non_finite)]
    return events


class _NonFinite(ValueError):
    def __init__(self, token: str) -> None:
        super().__init__(token)
        self.token = token


def _non_finite(token: str) -> Any:
    raise _NonFinite(token)


def _detail(exc: urllib.error.HTTPError, key: str | None) -> str:
    """A short, one-line excerpt of an error body (servers put the reason there), redacted
    before it is cut, so no part of a key survives."""
    try:
        body = redact(exc.read()[:4000].decode("utf-8", "replace"), key)
    except Exception:
        return ""
    try:
        parsed = json.loads(body)
        if isinstance(parsed, dict):
            err = parsed.get("error", parsed.get("detail", parsed))
            if isinstance(err, dict):
                err = err.get("message", err)
            body = str(err)
    except ValueError:
        pass
    body = " ".join(body.split())[:200]
    return f": {body}" if body else ""

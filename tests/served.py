"""A real llama.cpp server for the served-model tests, and a loopback proxy in front of it.

``llama_server(...)`` starts llama-cpp-python's ``python -m llama_cpp.server`` on 127.0.0.1
with a free port, serving the embedded default GGUF (found the way
``pytest_provenai.subject.backends.default_model`` finds it), waits until ``GET /v1/models``
answers, and always stops it (even when the block raises).

``Proxy`` is a stdlib HTTP server on 127.0.0.1 that forwards to an upstream base URL and
lets a test change what comes back: shift the echoed logprobs (a misaligned server), strip
logprobs (a server without them), fail every request after the n-th (a server that drops
mid-run), answer 503 a few times (transient errors), or serve something that is not an
OpenAI API. Everything here stays on the loopback interface and stops by itself.
"""

from __future__ import annotations

import contextlib
import json
import os
import socket
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Callable, Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

from pytest_provenai.subject.backends.http import sse_events
from pytest_provenai.subject.backends.served.replies import joined_stream

MODEL_ALIAS = "SmolLM2-135M-Instruct"
API_KEY = "test-key-not-secret-7f3a"


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def default_gguf() -> Path:
    from pytest_provenai.subject.backends.default_model import default_gguf_path

    return default_gguf_path()


def _ready(url: str, api_key: str | None) -> bool:
    req = urllib.request.Request(url)
    if api_key:
        req.add_header("Authorization", f"Bearer {api_key}")
    try:
        with urllib.request.urlopen(req, timeout=2) as resp:
            return bool(resp.status == 200)
    except (urllib.error.URLError, OSError):
        return False


def _die_with_parent() -> None:
    """In the server's process before exec: SIGTERM it when the test process dies, however
    it dies (Linux), so no server outlives a killed test run."""
    if sys.platform.startswith("linux"):
        import ctypes
        import signal

        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


@contextlib.contextmanager
def llama_server(
    *, api_key: str | None = API_KEY, n_ctx: int = 4096, log: Path | None = None
) -> Iterator[str]:
    """Yield the base URL (``http://127.0.0.1:PORT/v1``) of a running llama-cpp-python
    server serving the default GGUF; stop it afterwards."""
    port = free_port()
    cmd = [
        sys.executable,
        "-m",
        "llama_cpp.server",
        "--model",
        str(default_gguf()),
        "--model_alias",
        MODEL_ALIAS,
        "--host",
        "127.0.0.1",
        "--port",
        str(port),
        "--n_ctx",
        str(n_ctx),
        "--logits_all",
        "true",
        # streams are read whole (docs/served.md); by default this server cuts a stream when
        # another request arrives, which two workers on one server would do to each other
        "--interrupt_requests",
        "false",
        "--verbose",
        "false",
    ]
    if api_key:
        cmd += ["--api_key", api_key]
    with _serving("llama_cpp.server", cmd, port, api_key, log) as base:
        yield base


@contextlib.contextmanager
def _serving(
    name: str, cmd: list[str], port: int, api_key: str | None, log: Path | None
) -> Iterator[str]:
    """Run ``cmd`` (a server listening on 127.0.0.1:``port``), yield its base URL once
    ``GET /v1/models`` answers (180 s at most), and always stop it."""
    out = open(log, "wb") if log else subprocess.DEVNULL
    proc = subprocess.Popen(cmd, stdout=out, stderr=subprocess.STDOUT, preexec_fn=_die_with_parent)
    base = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 180
        while not _ready(f"{base}/models", api_key):
            if proc.poll() is not None:
                raise RuntimeError(f"{name} exited with {proc.returncode}: {cmd}")
            if time.monotonic() > deadline:
                raise RuntimeError(f"{name} did not become ready in 180 s")
            time.sleep(0.25)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=15)
        if log and hasattr(out, "close"):
            out.close()


@contextlib.contextmanager
def native_llama_server(
    binary: str | os.PathLike[str],
    *,
    api_key: str | None = API_KEY,
    n_ctx: int = 4096,
    threads: int = 2,
    slots: int = 4,
    log: Path | None = None,
) -> Iterator[str]:
    """Yield the base URL of llama.cpp's own C++ ``llama-server`` (``binary``) serving the
    default GGUF under :data:`MODEL_ALIAS` on 127.0.0.1; stop it afterwards. ``slots``
    requests are served at once, each with ``n_ctx`` tokens of context (the server splits
    ``-c`` among its slots)."""
    port = free_port()
    cmd = [
        str(binary), "-m", str(default_gguf()), "--alias", MODEL_ALIAS, "--host", "127.0.0.1",
        "--port", str(port), "-c", str(n_ctx * slots), "-np", str(slots), "-t", str(threads),
        "--no-webui",
    ]  # fmt: skip
    if api_key:
        cmd += ["--api-key", api_key]
    with _serving("llama-server", cmd, port, api_key, log) as base:
        yield base


# -- loopback HTTP servers -------------------------------------------------------------------------
class Loopback:
    """A threaded HTTP server on 127.0.0.1 (a free port) that never blocks on close."""

    def __init__(self, handler: type[BaseHTTPRequestHandler]) -> None:
        self.server = ThreadingHTTPServer(("127.0.0.1", free_port()), handler)
        self.server.daemon_threads = True
        self.server.block_on_close = False
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.server.server_address[1]}/v1"

    def start(self) -> None:
        self.thread.start()

    def stop(self) -> None:
        self.server.shutdown()
        self.server.server_close()


Transform = Callable[[str, dict[str, Any] | None, dict[str, Any]], dict[str, Any]]


class Proxy:
    """Forward ``/v1/...`` to ``upstream`` (a base URL ending in /v1), on 127.0.0.1.

    ``transform(path, request_body, reply) -> reply`` rewrites successful JSON replies;
    ``fail_after``: requests after this many get ``fail_status`` (or a dropped connection
    when ``fail_status`` is None); ``flaky``: the first n requests get 503.
    ``not_openai``: every request gets an HTML 404 page. ``echo_auth``: a failing request's
    body repeats the Authorization header it got (as some servers' error pages do).
    ``cut_streams``: a streamed reply ends after its first event (as llama-cpp-python's server
    cuts a stream when another request arrives). ``rewrite(body) -> body`` changes a request
    before it goes upstream (``transform`` still sees the one the client sent). A stream is
    otherwise passed on as one event holding the joined (and transformed) reply.
    """

    def __init__(
        self,
        upstream: str,
        *,
        transform: Transform | None = None,
        fail_after: int | None = None,
        fail_status: int | None = 500,
        flaky: int = 0,
        not_openai: bool = False,
        delay: float = 0.0,
        echo_auth: bool = False,
        cut_streams: bool = False,
        rewrite: Callable[[dict[str, Any]], dict[str, Any]] | None = None,
    ) -> None:
        self.upstream = upstream.rstrip("/")
        self.rewrite = rewrite
        self.cut_streams = cut_streams
        self.echo_auth = echo_auth
        self.transform = transform
        self.fail_after = fail_after
        self.fail_status = fail_status
        self.flaky = flaky
        self.not_openai = not_openai
        self.delay = delay
        self.count = 0
        self.in_flight = 0
        self._counted = threading.local()  # whether this handler thread's request is counted
        self.peak_in_flight = 0
        self.lock = threading.Lock()
        self.seen_auth: set[str] = set()
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                proxy.handle(self, None)

            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", "0"))
                proxy.handle(self, json.loads(self.rfile.read(length) or b"{}"))

        self._loop = Loopback(Handler)

    @property
    def base_url(self) -> str:
        return self._loop.base_url

    def __enter__(self) -> Proxy:
        self._loop.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._loop.stop()

    def _send(self, h: BaseHTTPRequestHandler, status: int, body: bytes, ctype: str) -> None:
        # no longer in flight once the answer goes out: the client may send its next request
        # before this handler thread gets back from writing (counting it then overcounts)
        self._leave()
        h.send_response(status)
        h.send_header("Content-Type", ctype)
        h.send_header("Content-Length", str(len(body)))
        h.end_headers()
        h.wfile.write(body)

    def handle(self, h: BaseHTTPRequestHandler, body: dict[str, Any] | None) -> None:
        with self.lock:
            self.count += 1
            n = self.count
            self.in_flight += 1
            self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
            auth = h.headers.get("Authorization")
            if auth:
                self.seen_auth.add(auth)
        self._counted.on = True
        try:
            if self.delay:
                time.sleep(self.delay)
            if self.not_openai:
                self._send(h, 404, b"<html><body>Not Found</body></html>", "text/html")
                return
            if n <= self.flaky:
                self._send(h, 503, b'{"error": "warming up"}', "application/json")
                return
            if self.fail_after is not None and n > self.fail_after:
                if self.fail_status is None:
                    h.connection.shutdown(socket.SHUT_RDWR)  # drop mid-request
                    return
                said = f"bad key {auth}" if self.echo_auth else "boom"
                self._send(
                    h, self.fail_status, json.dumps({"error": said}).encode(), "application/json"
                )
                return
            path = h.path.split("/v1", 1)[-1]
            sent = body if body is None or self.rewrite is None else self.rewrite(dict(body))
            data = None if sent is None else json.dumps(sent).encode()
            req = urllib.request.Request(
                self.upstream + path, data=data, method="POST" if body is not None else "GET"
            )
            req.add_header("Content-Type", "application/json")
            if auth:
                req.add_header("Authorization", auth)
            stream = bool(body and body.get("stream"))
            try:
                with urllib.request.urlopen(req, timeout=600) as resp:
                    raw = resp.read()
            except urllib.error.HTTPError as exc:
                self._send(h, exc.code, exc.read(), "application/json")
                return
            # a stream is joined into one reply, transformed as a plain one, and sent back
            # as a stream of that one event
            if stream:
                reply = joined_stream(sse_events(raw.decode()), self.upstream)
            else:
                reply = json.loads(raw)
            if self.transform is not None:
                reply = self.transform(path, body, reply)
            if stream and self.cut_streams:  # one event with no finish_reason, then the end
                first = sse_events(raw.decode())[0]
                self._send(
                    h, 200, b"data: " + json.dumps(first).encode() + b"\n\n", "text/event-stream"
                )
            elif stream:
                event = b"data: " + json.dumps(reply).encode() + b"\n\ndata: [DONE]\n\n"
                self._send(h, 200, event, "text/event-stream")
            else:
                self._send(h, 200, json.dumps(reply).encode(), "application/json")
        finally:
            self._leave()

    def _leave(self) -> None:
        """Count the current request out of ``in_flight``, once."""
        if getattr(self._counted, "on", False):
            with self.lock:
                self.in_flight -= 1
            self._counted.on = False


def shift_echo(by: int) -> Transform:
    """A transform that moves echoed top_logprobs ``by`` entries later. llama-cpp-python's
    entry i describes token i+1: ``by=1`` makes it aligned (token_logprobs then read from the
    moved entries), ``by=-1`` makes it two off, which no known correction fixes."""

    def transform(path: str, body: dict[str, Any] | None, reply: dict[str, Any]) -> dict[str, Any]:
        if not (body and body.get("echo") and path.startswith("/completions")):
            return reply
        lp = reply["choices"][0].get("logprobs")
        if not lp:
            return reply
        tops = lp["top_logprobs"]
        n = len(tops)
        if by >= 0:
            lp["top_logprobs"] = [None] * by + tops[: n - by]
        else:
            lp["top_logprobs"] = tops[-by:] + [None] * (-by)
        lp["token_logprobs"] = [
            top.get(tok) if isinstance(top, dict) else None
            for tok, top in zip(lp["tokens"], lp["top_logprobs"], strict=True)
        ]
        return reply

    return transform


def strip_logprobs(path: str, body: dict[str, Any] | None, reply: dict[str, Any]) -> dict[str, Any]:
    """A server that ignores the logprobs parameter."""
    if path.startswith("/completions"):
        for choice in reply.get("choices", []):
            choice["logprobs"] = None
    return reply


def bias_in_logprobs(
    path: str, body: dict[str, Any] | None, reply: dict[str, Any]
) -> dict[str, Any]:
    """A server whose reported logprobs follow ``logit_bias``: a token biased away drops out of
    every top-k it returns (here: the best entry of each, the one the probe biases)."""
    if body and body.get("logit_bias") and path.startswith("/completions"):
        for choice in reply.get("choices", []):
            lp = choice.get("logprobs") or {}
            tops = lp.get("top_logprobs") or []
            lp["top_logprobs"] = [
                dict(sorted(top.items(), key=lambda kv: -kv[1])[1:])
                if isinstance(top, dict)
                else top
                for top in tops
            ]
    return reply


def as_llama_server(
    ids: Callable[[str], int | None],
) -> Transform:
    """A transform that writes completions logprobs the way llama.cpp's own C++
    ``llama-server`` does: a ``content`` list with, per generated token, its ``id``, text,
    ``logprob`` and ``top_logprobs`` as a list of ``{id, token, logprob}`` (``ids`` gives a
    text's token id, None to leave the id out, as for a text no single token has)."""

    def transform(path: str, body: dict[str, Any] | None, reply: dict[str, Any]) -> dict[str, Any]:
        if not path.startswith("/completions"):
            return reply
        for choice in reply.get("choices", []):
            lp = choice.get("logprobs")
            if not isinstance(lp, dict) or "tokens" not in lp:
                continue
            content = []
            for tok, value, top in zip(
                lp["tokens"], lp["token_logprobs"], lp["top_logprobs"], strict=True
            ):
                alts = []
                for text, alt in (top or {}).items():
                    entry = {"token": text, "logprob": alt, "bytes": list(text.encode())}
                    if (tid := ids(text)) is not None:
                        entry["id"] = tid
                    alts.append(entry)
                content.append({"token": tok, "logprob": value, "top_logprobs": alts})
            choice["logprobs"] = {"content": content}
        return reply

    return transform


class IdPrompts:
    """A request rewrite for :class:`Proxy` that makes llama-cpp-python's server look as if it
    took a prompt given as token ids (as llama.cpp's C++ ``llama-server`` and vLLM do): such a
    prompt is decoded to its text before it goes upstream, and kept in ``sent``. Only the
    client's side is real here — upstream still reads text."""

    def __init__(self, decode: Callable[[list[int]], str]) -> None:
        self.decode = decode
        self.sent: list[list[int]] = []

    def __call__(self, body: dict[str, Any]) -> dict[str, Any]:
        prompt = body.get("prompt")
        if isinstance(prompt, list) and prompt and all(isinstance(i, int) for i in prompt):
            self.sent.append(list(prompt))
            body["prompt"] = self.decode(prompt)
        return body


def env_with_key(api_key: str | None = API_KEY) -> dict[str, str]:
    env = dict(os.environ)
    if api_key:
        env["PROVENAI_API_KEY"] = api_key
    return env


class Scripted:
    """A loopback HTTP server answering request n with ``replies[n]`` (the last one repeats):
    ``(status, body_bytes)``, ``(status, body_bytes, {header: value})``, ``"drop"`` (close
    the connection without a reply) or ``("sleep", seconds, status, body)``. ``requests``
    keeps (method, path, headers), ``bodies`` each request's decoded JSON body (None for a
    GET or a body that is not JSON)."""

    def __init__(self, replies: list[Any]) -> None:
        self.replies = replies
        self.requests: list[tuple[str, str, dict[str, str]]] = []
        self.bodies: list[Any] = []
        me = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def do_GET(self) -> None:
                me.bodies.append(None)
                me.answer(self)

            def do_POST(self) -> None:
                raw = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                try:
                    me.bodies.append(json.loads(raw))
                except ValueError:
                    me.bodies.append(None)
                me.answer(self)

        self._loop = Loopback(Handler)

    @property
    def base_url(self) -> str:
        return self._loop.base_url

    def __enter__(self) -> Scripted:
        self._loop.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._loop.stop()

    def answer(self, h: BaseHTTPRequestHandler) -> None:
        n = len(self.requests)
        self.requests.append((h.command, h.path, dict(h.headers.items())))
        reply = self.replies[min(n, len(self.replies) - 1)]
        if reply == "drop":
            h.connection.shutdown(socket.SHUT_RDWR)
            return
        if reply[0] == "sleep":
            time.sleep(reply[1])
            reply = reply[2:]
        status, body, *more = reply
        h.send_response(status)
        h.send_header("Content-Type", "application/json")
        h.send_header("Content-Length", str(len(body)))
        for name, value in (more[0] if more else {}).items():
            h.send_header(name, value)
        h.end_headers()
        h.wfile.write(body)

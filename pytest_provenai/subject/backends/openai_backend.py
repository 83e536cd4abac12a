"""The ``openai`` backend: a model served over the OpenAI-compatible completions API.

``--provenai-backend openai --provenai-base-url URL --provenai-model ID`` audits a model
served by vLLM, llama.cpp's server, llama-cpp-python's server, Ollama or TGI. The harness
renders its own prompt with the served model's chat template (from the local tokenizer given
by ``--provenai-tokenizer``: a model folder, ``.gguf`` file or cached hub id), so prompt,
parser, resource ids and ablations are the ones the local backends use; the server only
continues that text (``/completions``, temperature 0, no penalties, ``max_tokens`` from the
harness).

What a server provides is found out once per base URL by :func:`probe_server`:

- ``generate`` always. ``token_ids`` are the local tokenizer's ids of the output (the prompt +
  output re-tokenised, so a teacher-forced ``score`` of them lines up), plus the end-of-turn
  id when ``finish_reason == "stop"``; ``logprobs`` are the server's per-token logprobs of the
  output (the end-of-turn step has none: servers do not report it).
- ``score`` where the server echoes prompt logprobs (``echo: true`` + ``logprobs: k``): the
  prompt + continuation is sent as one prompt and the continuation's positions are read
  back. A server only returns each position's top-k, so a row holds those k log-probabilities
  and the remaining mass spread evenly over the other tokens: one bucket for the rest, in
  which the two distributions of a KL term agree token for token. The KL is then an
  approximation of the exact KL (measured in README, "Served models"); the influence record's
  ``signals`` say ``kl-top<k>``.
- Alignment is verified, not assumed: the probe renders a chat prompt the way audits do, asks
  for the generation-time top-k after two prefixes of ``PROBE_TEXT`` continuing it, echoes the
  whole text, and looks for those distributions among the echoed entries. A server whose
  entry ``i`` describes token ``i`` (OpenAI semantics) is used as is; one whose entry ``i``
  describes token ``i + 1`` is corrected by that shift — llama-cpp-python 0.3.x does this
  when the prompt does *not* start with the model's BOS id (it drops a leading BOS from the
  echoed tokens but not from the logits, so with a leading BOS it is aligned). A server that
  matches no known shift gets no ``score``: KL is refused with one line saying why.

The API key, if the server wants one, is read from ``$PROVENAI_API_KEY``; it is sent as a
bearer token and never stored in identities, records, results, cache keys or messages.
"""

from __future__ import annotations

import math
import os
import re
import threading
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

from ...errors import BackendError
from ._common import (
    LocalModelGenerator,
    check_continuation_ids,
    encode_prompt,
    first_divergence,
    library_versions,
    render_chat_with,
    stop_token_ids,
)
from .base import (
    TIE_MARGIN,
    AblationPass,
    Capabilities,
    Decoding,
    Generation,
    Identity,
    VariantPass,
)
from .http import (
    API_KEY_ENV,
    DEFAULT_RETRIES,
    DEFAULT_TIMEOUT,
    JSONClient,
    ServerError,
)

BACKEND_NAME = "openai"
DEFAULT_TOP_LOGPROBS = 20
PROBE_MESSAGES = ({"role": "user", "content": "What is the capital of France?"},)
PROBE_TEXT = "The capital of France is Paris."
PROBE_PREFIXES = ("The capital of France", "The capital of France is")
"""Prefixes of PROBE_TEXT (continuing the chat-rendered PROBE_MESSAGES) whose next-token
distribution the probe asks for at generation time and then looks for among the echoed
positions of PROBE_TEXT."""
PROBE_TOLERANCE = 0.05
"""Largest difference (nats) between the echoed and the generation-time log-probability of a
top candidate that still counts as the same distribution (same server, same weights; the two
passes differ only in batch shape)."""
KNOWN_SHIFTS = (0, 1)
_TOKEN_ID_KEY = re.compile(r"^token_id:(\d+)$")


@dataclass(frozen=True)
class ServedOptions:
    """What the ``openai`` backend needs, for one base URL (the worker's)."""

    base_url: str
    model: str | None
    tokenizer: str | None
    top_logprobs: int = DEFAULT_TOP_LOGPROBS
    max_concurrency: int = 4
    timeout: float = DEFAULT_TIMEOUT
    retries: int = DEFAULT_RETRIES


@dataclass(frozen=True)
class ServerReport:
    """What the probe found a server to provide."""

    base_url: str
    model: str
    served_models: tuple[str, ...]
    top_logprobs: int  # alternatives per generated token the server returned (0: no logprobs)
    echo: bool  # prompt logprobs come back with echo
    shift: int | None  # echoed entry i describes token i + shift; None: not verified
    bos: int  # tokens the server puts before a prompt (a BOS it adds)
    note: str = ""  # why score is off, or which correction is applied
    echo_tail: int = 0  # entries an echo holds after the prompt for its generated token

    @property
    def score(self) -> bool:
        return self.echo and self.shift is not None and self.top_logprobs > 0

    def describe(self) -> str:
        """One line for the terminal summary."""
        logprobs = f"top-{self.top_logprobs} logprobs" if self.top_logprobs else "no logprobs"
        if self.score:
            how = "aligned" if self.shift == 0 else f"shifted by {self.shift}, corrected"
            score = f"score via echoed prompt logprobs ({how}); KL from top-{self.top_logprobs}"
        else:
            score = f"no score ({self.note}); influence is surface-only"
        bos = f"; the server puts {self.bos} token(s) before each prompt" if self.bos else ""
        return f"served {self.model} at {self.base_url}: generate, {logprobs}, {score}{bos}"

    def as_dict(self) -> dict[str, Any]:
        return {
            "base_url": self.base_url,
            "model": self.model,
            "served_models": list(self.served_models),
            "top_logprobs": self.top_logprobs,
            "echo": self.echo,
            "shift": self.shift,
            "bos": self.bos,
            "echo_tail": self.echo_tail,
            "score": self.score,
            "note": self.note,
        }


# -- the rows a top-k server gives -------------------------------------------------------------


def topk_rows(tops: Sequence[Mapping[int, float]], vocab: int) -> Any:
    """``[len(tops), vocab]`` float32 log-probability rows from per-position top-k dicts
    (token id → log-probability): the known entries as given, the remaining mass
    ``1 − Σ exp(known)`` spread evenly over the other ``vocab − k`` tokens (never above the
    smallest known entry). ``kl_rows`` renormalises, so a row only needs the right shape."""
    import numpy as np

    rows = np.empty((len(tops), vocab), dtype=np.float32)
    for t, known in enumerate(tops):
        ids = np.fromiter((int(i) for i in known), dtype=np.int64, count=len(known))
        lps = np.minimum(np.fromiter(known.values(), dtype=np.float64, count=len(known)), 0.0)
        rest = max(1.0 - float(np.exp(lps).sum()), 1e-9)
        others = vocab - len(ids)
        fill = math.log(rest / others) if others > 0 else -1e4
        if len(lps):
            fill = min(fill, float(lps.min()))
        rows[t].fill(fill)
        rows[t, ids] = lps
    return rows


def truncate_rows(rows: Any, k: int) -> Any:
    """Exact rows → what a top-``k`` server would give for them (for measuring the
    approximation on the same numbers: ``topk_rows`` of each row's k largest entries)."""
    import numpy as np

    arr = np.asarray(rows, dtype=np.float64)
    tops: list[dict[int, float]] = []
    for row in arr:
        idx = np.argpartition(row, -k)[-k:]
        tops.append({int(i): float(row[i]) for i in idx})
    return topk_rows(tops, arr.shape[1])


# -- the generator ------------------------------------------------------------------------------


class OpenAIGenerator(LocalModelGenerator):
    """A :class:`~pytest_provenai.subject.backends.base.Generator` over a served model; the
    identity, chat rendering, encoding and decoding are the local tokenizer's (shared with the
    local backends)."""

    def __init__(
        self,
        client: JSONClient,
        report: ServerReport,
        tokenizer: Any,
        stop_ids: frozenset[int],
        decoding: Decoding,
        tokenizer_name: str,
    ) -> None:
        self.client = client
        self.report = report
        self.tokenizer = tokenizer
        self.decoding = decoding
        self.vocab = len(tokenizer)
        eos = getattr(tokenizer, "eos_token_id", None)
        self.eos_id: int | None = (
            int(eos) if eos is not None and int(eos) in stop_ids else min(stop_ids, default=None)
        )
        self.stop_ids = stop_ids
        self._pieces: tuple[dict[str, int], frozenset[str]] | None = None
        self._pieces_lock = threading.Lock()
        self.retokenized = 0  # outputs whose ids had to be tokenised on their own
        self.noncanonical = 0  # outputs whose greedy tokens are not their text's tokenisation
        self._identity = Identity(
            backend=BACKEND_NAME,
            name=report.model,
            weights_sha256="",
            dtype="served",
            decoding=decoding,
            device=client.base_url,
            libraries={"tokenizer": tokenizer_name, **library_versions("transformers")},
            endpoint=client.base_url,
        )
        self._capabilities = Capabilities(
            token_ids=True,
            logprobs=report.top_logprobs > 0,
            score=report.score,
            score_topk=report.top_logprobs if report.score else 0,
        )

    @property
    def capabilities(self) -> Capabilities:
        return self._capabilities

    # -- generate ---------------------------------------------------------------------------
    def _body(self, prompt: str, max_tokens: int, **extra: Any) -> dict[str, Any]:
        body: dict[str, Any] = {
            "model": self.report.model,
            "prompt": prompt,
            "max_tokens": max_tokens,
            "temperature": 0.0,
            "top_p": 1.0,
            "n": 1,
            "stream": False,
            "frequency_penalty": 0.0,
            "presence_penalty": 0.0,
            "repeat_penalty": 1.0,  # llama.cpp servers default to 1.1
            "add_special_tokens": False,  # vLLM: the rendered prompt holds its own BOS
        }
        body.update(extra)
        return body

    def generate(self, prompt: str) -> Generation:
        max_new = int(self.decoding.max_new_tokens)
        if max_new <= 0:
            return Generation(text="", finish_reason="length")
        extra = {"logprobs": 1} if self.report.top_logprobs else {}
        reply = self.client.post("completions", self._body(prompt, max_new, **extra))
        choice = _first_choice(reply, self.client.url("completions"))
        text = choice.get("text")
        if not isinstance(text, str):
            raise BackendError(
                f"POST {self.client.url('completions')}: reply has no choices[0].text string"
            )
        text = self.client.clean_text(text)
        finish = "stop" if choice.get("finish_reason") == "stop" else "length"
        ids = self._output_ids(prompt, text)
        logprobs: list[float] = []
        lp = choice.get("logprobs")
        if isinstance(lp, dict) and isinstance(lp.get("token_logprobs"), list):
            values = [x for x in lp["token_logprobs"] if isinstance(x, (int, float))]
            if len(values) == len(ids):
                logprobs = [float(x) for x in values]
            else:  # greedy chose a non-canonical split of its text (e.g. " S" "ais" "on")
                self.noncanonical += 1
        if finish == "stop" and self.eos_id is not None:
            ids.append(self.eos_id)
        return Generation(text=text, token_ids=ids, logprobs=logprobs, finish_reason=finish)

    def _output_ids(self, prompt: str, text: str) -> list[int]:
        """The local tokenizer's ids of ``text`` as it continues ``prompt``: the tail of
        tokenising prompt + text where that keeps the prompt's own tokens, else ``text`` on its
        own (counted in ``retokenized``)."""
        if not text:
            return []
        prompt_ids = self.encode(prompt)
        both = self.encode(prompt + text)
        if both[: len(prompt_ids)] == prompt_ids:
            return both[len(prompt_ids) :]
        self.retokenized += 1
        return [int(i) for i in self.tokenizer(text, add_special_tokens=False)["input_ids"]]

    # -- score ------------------------------------------------------------------------------
    def score(self, prompt: str, continuation_ids: list[int]) -> Any:
        """``[len(continuation_ids), vocab]`` rows from one echoed request (see module doc)."""
        if not self.report.score:
            raise BackendError(
                f"the server at {self.client.base_url} cannot score a continuation "
                f"({self.report.note}); use --provenai-ablation naive for surface-only influence"
            )
        cont = check_continuation_ids(continuation_ids, self.vocab)
        if not cont:
            import numpy as np

            return np.zeros((0, self.vocab), dtype=np.float32)
        text = prompt + str(self.tokenizer.decode(cont, skip_special_tokens=False))
        reply = self.client.post(
            "completions",
            self._body(text, 1, echo=True, logprobs=self.report.top_logprobs),
        )
        return self._echo_rows(reply, cont)

    def _echo_rows(self, reply: Any, cont: list[int]) -> Any:
        url = self.client.url("completions")
        choice = _first_choice(reply, url)
        entries = _echo_entries(choice, url)
        tokens, token_lps, tops = entries
        shift = self.report.shift
        assert shift is not None
        expected = [self._piece(tok) for tok in cont]
        tails = (self.report.echo_tail, 1 - self.report.echo_tail)
        starts = [len(tops) - g - len(cont) for g in tails]
        start = next((s for s in starts if _pieces_match(tokens, s, expected)), None)
        if start is None or start - shift < 1:
            raise BackendError(
                f"POST {url}: the echoed tokens do not end with the continuation "
                f"{expected[:8]}…; the server tokenises differently from --provenai-tokenizer "
                "(pass the served model's own tokenizer)"
            )
        pieces, ambiguous = self._piece_table()
        known: list[dict[int, float]] = []
        for t, tok in enumerate(cont):
            # llama-cpp-python drops echoed entries of BOS-id tokens; counted from the end,
            # the continuation's entries are unaffected (its prompt ends with text tokens)
            top = tops[start + t - shift]
            if not isinstance(top, dict):
                raise BackendError(f"POST {url}: echoed position {start + t} has no logprobs")
            row: dict[int, float] = {}
            for key, value in top.items():
                tid = _token_id(str(key), pieces, ambiguous, tok, expected[t])
                if tid is not None and isinstance(value, (int, float)):
                    row[tid] = max(float(value), row.get(tid, -math.inf))
            lp = token_lps[start + t]
            if shift == 0 and isinstance(lp, (int, float)):
                row[tok] = float(lp)
            known.append(row)
        return topk_rows(known, self.vocab)

    def _piece(self, tok: int) -> str:
        return str(self.tokenizer.decode([tok], skip_special_tokens=True))

    def _piece_table(self) -> tuple[dict[str, int], frozenset[str]]:
        """Token text → id as servers print top-logprob keys; texts several ids share are
        ambiguous (e.g. special tokens, which many servers print as '')."""
        with self._pieces_lock:
            if self._pieces is None:
                texts = self.tokenizer.batch_decode(
                    [[i] for i in range(self.vocab)], skip_special_tokens=True
                )
                table: dict[str, int] = {}
                seen: set[str] = set()
                dup: set[str] = set()
                for i, piece in enumerate(texts):
                    piece = str(piece)
                    if piece in seen:
                        dup.add(piece)
                    seen.add(piece)
                    table.setdefault(piece, i)
                for i in getattr(self.tokenizer, "all_special_ids", []) or []:
                    literal = self.tokenizer.convert_ids_to_tokens(int(i))
                    if isinstance(literal, str) and literal not in table:
                        table[literal] = int(i)
                for piece in dup:
                    table.pop(piece, None)
                self._pieces = (table, frozenset(dup))
            return self._pieces

    # -- the ablation fast path: concurrent score requests ---------------------------------
    def ablation_pass(
        self,
        prompt: str,
        variants: list[str],
        continuation: list[int],
        *,
        margin: float = TIE_MARGIN,
    ) -> AblationPass:
        """Score the realised continuation under the full and every ablated prompt (up to
        ``--provenai-max-concurrency`` requests in flight), then regenerate, concurrently,
        the ablations whose argmax may leave it. No KV cache is shared over HTTP."""
        cont = check_continuation_ids(continuation, self.vocab)
        ablated = list(variants)
        workers = max(1, self.client.max_concurrency)
        with ThreadPoolExecutor(max_workers=workers) as pool:
            rows = list(pool.map(lambda p: self.score(p, cont), [prompt, *ablated]))
            full_rows, variant_rows = rows[0], rows[1:]
            divergences = [first_divergence(r, cont, margin) for r in variant_rows]
            todo = [p for p, d in zip(ablated, divergences, strict=True) if d is not None]
            regenerated = dict(zip(todo, pool.map(self.generate, todo), strict=True))
        text = str(self.tokenizer.decode(cont, skip_special_tokens=True))
        finish = "stop" if cont and cont[-1] in self.stop_ids else "length"
        sizes = [len(self.encode(p)) for p in [prompt, *ablated]]
        passes: list[VariantPass] = []
        forward = sizes[0] + len(cont)
        for p, r, d, size in zip(ablated, variant_rows, divergences, sizes[1:], strict=True):
            if d is None:
                gen = Generation(
                    text=text,
                    token_ids=list(cont),
                    logprobs=[float(r[t][tok]) for t, tok in enumerate(cont)],
                    finish_reason=finish,
                )
                cost = size + len(cont)
            else:
                gen = regenerated[p]
                cost = size + len(cont) + size + len(gen.token_ids)
            forward += cost
            passes.append(VariantPass(rows=r, generation=gen, divergence=d, forward_tokens=cost))
        return AblationPass(full_rows=full_rows, variants=passes, forward_tokens=forward)


def _token_id(
    key: str, pieces: Mapping[str, int], ambiguous: frozenset[str], tok: int, tok_piece: str
) -> int | None:
    """The id a top-logprob key stands for: ``token_id:N`` (vLLM's
    ``return_tokens_as_token_ids``), a unique token text, or — for a text several ids share —
    the realised token when it has that text (it is the likeliest reading there); else None
    (the entry joins the rest bucket)."""
    m = _TOKEN_ID_KEY.match(key)
    if m:
        return int(m.group(1))
    if key in ambiguous:
        return tok if key == tok_piece else None
    return pieces.get(key)


def _first_choice(reply: Any, url: str) -> dict[str, Any]:
    choices = reply.get("choices") if isinstance(reply, dict) else None
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise BackendError(
            f"POST {url}: the reply has no choices list, so this is not an OpenAI-compatible "
            "completions endpoint; point --provenai-base-url at the API root (often .../v1)"
        )
    return choices[0]


def _echo_entries(choice: dict[str, Any], url: str) -> tuple[list[Any], list[Any], list[Any]]:
    lp = choice.get("logprobs")
    if not isinstance(lp, dict):
        raise BackendError(f"POST {url}: no logprobs in an echo reply")
    tokens, token_lps, tops = lp.get("tokens"), lp.get("token_logprobs"), lp.get("top_logprobs")
    if not (isinstance(tokens, list) and isinstance(token_lps, list) and isinstance(tops, list)):
        raise BackendError(f"POST {url}: echo logprobs lack tokens/token_logprobs/top_logprobs")
    if not len(tokens) == len(token_lps) == len(tops):
        raise BackendError(f"POST {url}: echo logprobs lists differ in length")
    return tokens, token_lps, tops


def _pieces_match(tokens: list[Any], start: int, expected: list[str]) -> bool:
    """Whether the echoed tokens from ``start`` on are ``expected`` (an empty text on either
    side, e.g. a special token, matches anything)."""
    if start < 1 or start + len(expected) > len(tokens):
        return False
    return all(
        not e or not str(tokens[start + t]) or str(tokens[start + t]) == e
        for t, e in enumerate(expected)
    )


# -- the probe ----------------------------------------------------------------------------------

_REPORTS: dict[tuple[str, str | None, str, int], ServerReport] = {}
_REPORTS_LOCK = threading.Lock()


def make_client(options: ServedOptions) -> JSONClient:
    return JSONClient(
        options.base_url,
        api_key=os.environ.get(API_KEY_ENV) or None,
        timeout=options.timeout,
        retries=options.retries,
        max_concurrency=options.max_concurrency,
    )


def load_tokenizer(spec: str | None) -> tuple[Any, frozenset[int], str]:
    """(HF tokenizer, stop ids, name) of ``--provenai-tokenizer``."""
    if not spec:
        raise BackendError(
            "--provenai-backend openai needs --provenai-tokenizer: a local folder, .gguf file "
            "or cached hub id of the served model, whose chat template renders the prompt "
            "(the server only continues it)"
        )
    from ._common import missing_modules, resolve_model

    missing = missing_modules("transformers")
    if missing:
        raise BackendError(
            "--provenai-tokenizer needs transformers; install pytest-provenai[transformers]"
        )
    model = None if spec == "default" else spec
    try:
        resolved = resolve_model(model)
    except BackendError as exc:
        raise BackendError(f"--provenai-tokenizer {spec}: {exc}") from None
    import transformers

    tok = transformers.AutoTokenizer.from_pretrained(str(resolved.folder))
    return tok, stop_token_ids(resolved.folder, tok), resolved.name


def probe_server(client: JSONClient, model: str | None, tokenizer: Any, top_k: int) -> ServerReport:
    """Find out what the server at ``client.base_url`` provides (see the module docstring).

    The probe prompt is rendered with the chat template, as every audit prompt is (whether a
    prompt starts with the BOS token changes llama-cpp-python's echo alignment).
    BackendError (one line, with the fix) when it is not an OpenAI-compatible server, does not
    serve ``model``, or tokenises differently from ``tokenizer``.
    """
    base = client.base_url
    model, served = served_model(client, model)
    prompt = render_chat_with(tokenizer, list(PROBE_MESSAGES))
    gen = _probe_logprobs(client, model, top_k, [prompt + p for p in PROBE_PREFIXES])
    top = min(top_k, len(gen[-1])) if gen else 0
    if not gen:
        note = "the server returns no logprobs"
        return ServerReport(base, model, served, 0, False, None, 0, note)
    echo = _probe_echo(client, model, top_k, prompt + PROBE_TEXT)
    if echo is None:
        return ServerReport(
            base, model, served, top, False, None, 0, "the server does not echo prompt logprobs"
        )
    reply, choice = echo
    tokens, _, tops = _echo_entries(choice, client.url("completions"))
    n_prompt = len(encode_prompt(tokenizer, prompt))
    ids = encode_prompt(tokenizer, prompt + PROBE_TEXT)[n_prompt:]
    usage = reply.get("usage") if isinstance(reply, dict) else None
    prompt_tokens = usage.get("prompt_tokens") if isinstance(usage, dict) else None
    bos = int(prompt_tokens) - n_prompt - len(ids) if isinstance(prompt_tokens, int) else 0
    pieces = [str(tokenizer.decode([i], skip_special_tokens=True)) for i in ids]
    # the echo ends with the probe text, or with it and one entry for the generated token
    tail = next(
        (
            g
            for g in (0, 1)
            if [str(t) for t in tokens[len(tokens) - g - len(ids) :][: len(ids)]] == pieces
        ),
        None,
    )
    if tail is None or bos not in (0, 1):
        raise BackendError(
            f"the server at {base} echoes {PROBE_TEXT!r} as "
            f"{[str(t) for t in tokens[-len(ids) - 1 :]]} ({prompt_tokens} prompt tokens) but "
            f"--provenai-tokenizer splits it into {pieces} ({n_prompt + len(ids)} tokens with "
            "the chat template): pass the served model's own tokenizer"
        )
    start = len(tokens) - tail - len(ids)
    offsets = [len(encode_prompt(tokenizer, prompt + p)) - n_prompt for p in PROBE_PREFIXES]
    shift = _find_shift(tops, start, offsets, gen)
    if shift is None:
        note = (
            "its echoed prompt logprobs match neither the aligned nor a one-token-shifted "
            "position of its own generation-time logprobs"
        )
        return ServerReport(base, model, served, top, True, None, bos, note, tail)
    note = "" if shift == 0 else f"echoed top-k at entry i describe token i+{shift} (corrected)"
    return ServerReport(base, model, served, top, True, shift, bos, note, tail)


def served_model(client: JSONClient, model: str | None) -> tuple[str, tuple[str, ...]]:
    """(the model id to use, every id the server lists); BackendError when the server is not
    OpenAI-compatible or does not serve ``model``."""
    base = client.base_url
    try:
        listing = client.get("models")
    except ServerError as exc:
        if exc.status in (401, 403):
            raise BackendError(
                f"{exc}; the server wants an API key: set ${API_KEY_ENV} to it"
            ) from None
        if exc.status is not None and 400 <= exc.status < 500:
            raise BackendError(
                f"{exc}; the server at {base} is not OpenAI-compatible (no GET /models); "
                "point --provenai-base-url at the API root (often ending in /v1)"
            ) from None
        raise BackendError(f"{exc}; is the server at {base} running?") from None
    data = listing.get("data") if isinstance(listing, dict) else None
    if not isinstance(data, list):
        raise BackendError(
            f"GET {client.url('models')} returned no 'data' list: the server at {base} is not "
            "OpenAI-compatible; point --provenai-base-url at the API root (often ending in /v1)"
        )
    served = tuple(str(m.get("id")) for m in data if isinstance(m, dict) and m.get("id"))
    listed = client.redact(", ".join(served)) or "no models"
    if model is None:
        if len(served) != 1:
            raise BackendError(
                f"--provenai-model is required: the server at {base} serves {listed}"
            )
        model = served[0]
    elif model not in served:
        raise BackendError(
            f"--provenai-model {model}: the server at {base} does not serve it; it serves {listed}"
        )
    return model, served


def _one_token(model: str, prompt: str, top_k: int, **extra: Any) -> dict[str, Any]:
    """A probe request: one greedy token with its top-k (and the prompt's, with echo)."""
    return {
        "model": model,
        "prompt": prompt,
        "max_tokens": 1,
        "temperature": 0.0,
        "logprobs": top_k,
        "repeat_penalty": 1.0,
        "add_special_tokens": False,
        **extra,
    }


def _probe_logprobs(
    client: JSONClient, model: str, top_k: int, prompts: list[str]
) -> list[dict[str, float]]:
    """Generation-time top-k of the token after each prompt ([] if the server has none)."""
    out: list[dict[str, float]] = []
    for prompt in prompts:
        try:
            reply = client.post("completions", _one_token(model, prompt, top_k))
        except ServerError as exc:
            if exc.status is not None and 400 <= exc.status < 500:
                return []  # refuses logprobs (or this many)
            raise BackendError(str(exc)) from None
        choice = _first_choice(reply, client.url("completions"))
        lp = choice.get("logprobs")
        tops = lp.get("top_logprobs") if isinstance(lp, dict) else None
        if not isinstance(tops, list) or not tops or not isinstance(tops[0], dict):
            return []
        out.append({str(k): float(v) for k, v in tops[0].items()})
    return out


def _probe_echo(
    client: JSONClient, model: str, top_k: int, text: str
) -> tuple[Any, dict[str, Any]] | None:
    try:
        reply = client.post("completions", _one_token(model, text, top_k, echo=True))
    except ServerError as exc:
        if exc.status is not None and 400 <= exc.status < 500:
            return None
        raise BackendError(str(exc)) from None
    choice = _first_choice(reply, client.url("completions"))
    lp = choice.get("logprobs")
    tokens = lp.get("tokens") if isinstance(lp, dict) else None
    if not isinstance(tokens, list) or len(tokens) < 3:
        return None
    try:
        _echo_entries(choice, client.url("completions"))
    except BackendError:
        return None
    return reply, choice


def _find_shift(
    tops: list[Any], start: int, offsets: list[int], reference: list[dict[str, float]]
) -> int | None:
    """The one shift s in KNOWN_SHIFTS for which, after each probe prefix (``offsets``: its
    length in continuation tokens), the echoed entry ``start + offset − s`` holds the
    generation-time distribution of the token that follows the prefix; None if no single one."""
    matches: list[int] = []
    for s in KNOWN_SHIFTS:
        ok = True
        for offset, ref in zip(offsets, reference, strict=True):
            pos = start + offset - s
            entry = tops[pos] if 0 <= pos < len(tops) else None
            if not isinstance(entry, dict) or not _same_distribution(entry, ref):
                ok = False
                break
        if ok:
            matches.append(s)
    return matches[0] if len(matches) == 1 else None


def _same_distribution(echoed: Mapping[str, Any], reference: Mapping[str, float]) -> bool:
    """Same best candidate, and the reference's top candidates within PROBE_TOLERANCE."""

    def best(d: Mapping[str, Any], n: int) -> list[tuple[str, float]]:
        items = [(str(k), float(v)) for k, v in d.items() if isinstance(v, (int, float))]
        return sorted(items, key=lambda kv: -kv[1])[:n]

    ref = best(reference, 3)
    got = dict(best(echoed, len(echoed)))
    if not ref or best(echoed, 1)[0][0] != ref[0][0]:
        return False
    return all(k in got and abs(got[k] - v) <= PROBE_TOLERANCE for k, v in ref)


def served_report(options: ServedOptions, tokenizer: Any | None = None) -> ServerReport:
    """The probe's report for ``options`` (probed once per process and base URL)."""
    key = (options.base_url, options.model, options.tokenizer or "", options.top_logprobs)
    with _REPORTS_LOCK:
        hit = _REPORTS.get(key)
    if hit is not None:
        return hit
    if tokenizer is None:
        tokenizer = load_tokenizer(options.tokenizer)[0]
    report = probe_server(make_client(options), options.model, tokenizer, options.top_logprobs)
    with _REPORTS_LOCK:
        _REPORTS[key] = report
    return report


def load_served(options: ServedOptions, decoding: Decoding | None = None) -> OpenAIGenerator:
    """The generator for one base URL: tokenizer, probe, client."""
    tokenizer, stop_ids, tok_name = load_tokenizer(options.tokenizer)
    report = served_report(options, tokenizer)
    return OpenAIGenerator(
        make_client(options), report, tokenizer, stop_ids, decoding or Decoding(), tok_name
    )


def check_servers(options: Sequence[ServedOptions], *, needs_kl: bool) -> list[ServerReport]:
    """Probe every server before any case runs; BackendError (one line, with the fix) for a
    server that cannot be used, or that cannot score when ``needs_kl``
    (``--provenai-ablation exact``)."""
    if not options:
        return []
    for o in options:  # cheap checks of every server before loading the tokenizer
        served_model(make_client(o), o.model)
    tokenizer = load_tokenizer(options[0].tokenizer)[0]
    reports = [served_report(o, tokenizer) for o in options]
    for report in reports:
        if needs_kl and not report.score:
            raise BackendError(
                f"--provenai-ablation exact needs KL, but the server at {report.base_url} "
                f"gives no teacher-forced logprobs: {report.note}; enable prompt logprobs (see "
                "README, Served models) or pass --provenai-ablation naive for surface-only "
                "influence"
            )
    return reports

"""The served model as a :class:`~pytest_provenai.subject.backends.base.Generator`:
generate over ``/completions``, score by one-token requests or from echoed prompt logprobs,
the KL fast path.
"""

from __future__ import annotations

import math
import threading
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from ....errors import BackendError
from ..base import (
    TIE_MARGIN,
    AblationPass,
    Capabilities,
    Decoding,
    Generation,
    Identity,
    VariantPass,
)
from ..divergence import common_prefix, first_divergence, token_margins
from ..http import JSONClient, ServerError
from ..libraries import library_versions
from ..local import LocalModelGenerator
from ..tokenizer import check_continuation_ids
from .probe import STEPS_BIAS, ServerReport
from .replies import echo_entries, first_choice, joined_stream, pieces_match, token_id_of
from .topk import topk_rows

BACKEND_NAME = "openai"


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
        self.echo_fallbacks = 0  # continuations scored by the echo where steps could not
        self.stream_fallbacks = 0  # streamed requests cut short and asked again plainly
        self.id_prompts = 0  # scoring requests sent as token ids (the text would not round-trip)
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
    def _body(self, prompt: str | list[int], max_tokens: int, **extra: Any) -> dict[str, Any]:
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

    def _complete(self, body: dict[str, Any]) -> Any:
        """A completions reply to ``body``; streamed and joined (:func:`joined_stream`) where
        the probe found the server's streamed logprobs equal to its plain ones. A server may
        build a plain reply's logprobs for every position it holds (llama-cpp-python
        log-softmaxes the whole prompt's logits per request: seconds on a 2,000-token prompt),
        a stream only for the tokens it sends."""
        if self.report.stream:
            try:
                events = self.client.post_stream("completions", {**body, "stream": True})
                reply = joined_stream(events, self.client.url("completions"))
                if reply["choices"][0]["finish_reason"] is not None:
                    return reply
            except ServerError as exc:
                if exc.status is not None and exc.status != 200:
                    raise
            # cut short (llama-cpp-python's server cuts a stream when another request
            # arrives, unless started with --interrupt_requests false): ask again, plainly
            self.stream_fallbacks += 1
        return self.client.post("completions", body)

    def generate(self, prompt: str) -> Generation:
        max_new = int(self.decoding.max_new_tokens)
        if max_new <= 0:
            return Generation(text="", finish_reason="length")
        extra = {"logprobs": 2} if self.report.top_logprobs else {}  # 2: the greedy margin
        reply = self._complete(self._body(prompt, max_new, **extra))
        choice = first_choice(reply, self.client.url("completions"))
        text = choice.get("text")
        if not isinstance(text, str):
            raise BackendError(
                f"POST {self.client.url('completions')}: reply has no choices[0].text string"
            )
        text = self.client.clean_text(text)
        finish = "stop" if choice.get("finish_reason") == "stop" else "length"
        ids = self._output_ids(prompt, text)
        logprobs: list[float] = []
        margins: list[float] = []
        lp = choice.get("logprobs")
        if isinstance(lp, dict) and isinstance(lp.get("token_logprobs"), list):
            values = [x for x in lp["token_logprobs"] if isinstance(x, (int, float))]
            if len(values) == len(ids):
                logprobs = [float(x) for x in values]
                margins = _top2_margins(lp.get("top_logprobs"), len(ids))
            else:  # greedy chose a non-canonical split of its text (e.g. " S" "ais" "on")
                self.noncanonical += 1
        if finish == "stop" and self.eos_id is not None:
            ids.append(self.eos_id)
        return Generation(text, ids, logprobs, finish, margins)

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
        """``[len(continuation_ids), vocab]`` rows, by one-token requests or one echoed
        request, as the probe chose (see the package doc)."""
        if not self.report.score:
            raise BackendError(
                f"the server at {self.client.base_url} cannot score a continuation "
                f"({self.report.note}); use --provenai-ablation naive for surface-only influence"
            )
        cont = check_continuation_ids(continuation_ids, self.vocab)
        if not cont:
            import numpy as np

            return np.zeros((0, self.vocab), dtype=np.float32)
        if self.report.via == "steps":
            return self._step_rows(prompt, cont)
        return self._echo_score(prompt, cont)

    def _echo_score(self, prompt: str, cont: list[int]) -> Any:
        text = prompt + str(self.tokenizer.decode(cont, skip_special_tokens=False))
        reply = self.client.post(
            "completions",
            self._body(text, 1, echo=True, logprobs=self.report.top_logprobs),
        )
        return self._echo_rows(reply, cont)

    def _step_rows(self, prompt: str, cont: list[int]) -> Any:
        """Rows from generation-time top-k logprobs: a greedy request from ``prompt`` + the
        first t tokens of ``cont`` gives the distribution at t, t+1, … for as long as its
        tokens are ``cont``'s; where one differs, that position's row is kept and the next
        request starts after it, asking for one token and twice as many after each request
        whose tokens all were ``cont``'s (a reply past a difference is wasted server work).
        An output the model would produce anyway costs one request. The end-of-turn ids are
        biased
        away, so a reply never stops before ``cont`` does (the probe checked that the
        reported logprobs ignore the bias). Each prompt must tokenise as ``prompt``'s
        tokens + ``cont[:t]``, or a row would describe another context: where one does not
        (e.g. a run of newlines cut in two, which tokenises as one token at the end of a
        text), that request's prompt is sent as token ids where the server takes them
        (``report.token_prompts``; counted in ``id_prompts``), else the whole continuation is
        scored by the echo, if the server has one (counted in ``echo_fallbacks``)."""
        url = self.client.url("completions")
        ambiguous = self._piece_table()[1]
        head = self.encode(prompt)
        bias = {str(i): STEPS_BIAS for i in sorted(self.stop_ids)}
        expected = [self._piece(tok) for tok in cont]
        known: list[dict[int, float]] = []
        window = len(cont)
        while len(known) < len(cont):
            t = len(known)
            text = prompt + str(self.tokenizer.decode(cont[:t], skip_special_tokens=False))
            request: str | list[int] = text
            if t and self.encode(text) != head + cont[:t]:
                if self.report.token_prompts:
                    request = head + cont[:t]  # the text would not tokenise back into them
                    self.id_prompts += 1
                elif self.report.echo and self.report.shift is not None:
                    self.echo_fallbacks += 1
                    return self._echo_score(prompt, cont)
                else:
                    raise BackendError(
                        f"POST {url}: the prompt + the first {t} output tokens does not "
                        "tokenise back into them, so generation-time logprobs cannot score this "
                        "output, and the server does not echo prompt logprobs"
                    )
            want = min(window, len(cont) - t)
            body = self._body(request, want, logprobs=self.report.top_logprobs, logit_bias=bias)
            choice = first_choice(self._complete(body), url)
            lp = choice.get("logprobs")
            tokens = lp.get("tokens") if isinstance(lp, dict) else None
            tops = lp.get("top_logprobs") if isinstance(lp, dict) else None
            if not isinstance(tokens, list) or not isinstance(tops, list) or not tops:
                raise BackendError(f"POST {url}: no top logprobs for output position {t}")
            window = 2 * want
            for j, top in enumerate(tops[:want]):
                if not isinstance(top, dict):
                    raise BackendError(f"POST {url}: no top logprobs for output position {t + j}")
                tok, piece = cont[t + j], expected[t + j]
                known.append(self._row(top, tok, piece))
                # the next position is only this reply's if it generated cont's token here
                # (an empty or shared text is no proof: start a new request)
                same = j < len(tokens) and str(tokens[j]) == piece
                if not same or not piece or piece in ambiguous:
                    window = 1
                    break
        return topk_rows(known, self.vocab)

    def _echo_rows(self, reply: Any, cont: list[int]) -> Any:
        url = self.client.url("completions")
        choice = first_choice(reply, url)
        entries = echo_entries(choice, url)
        tokens, token_lps, tops = entries
        shift = self.report.shift
        assert shift is not None
        expected = [self._piece(tok) for tok in cont]
        tails = (self.report.echo_tail, 1 - self.report.echo_tail)
        starts = [len(tops) - g - len(cont) for g in tails]
        start = next((s for s in starts if pieces_match(tokens, s, expected)), None)
        if start is None or start - shift < 1:
            raise BackendError(
                f"POST {url}: the echoed tokens do not end with the continuation "
                f"{expected[:8]}…; the server tokenises differently from --provenai-tokenizer "
                "(pass the served model's own tokenizer)"
            )
        known: list[dict[int, float]] = []
        for t, tok in enumerate(cont):
            # llama-cpp-python drops echoed entries of BOS-id tokens; counted from the end,
            # the continuation's entries are unaffected (its prompt ends with text tokens)
            top = tops[start + t - shift]
            if not isinstance(top, dict):
                raise BackendError(f"POST {url}: echoed position {start + t} has no logprobs")
            row = self._row(top, tok, expected[t])
            lp = token_lps[start + t]
            if shift == 0 and isinstance(lp, (int, float)):
                row[tok] = float(lp)
            known.append(row)
        return topk_rows(known, self.vocab)

    def _row(self, top: dict[Any, Any], tok: int, piece: str) -> dict[int, float]:
        """A position's top-logprob entries by token id (see ``token_id_of``; ``tok`` is the
        realised token there, ``piece`` its text); keys that map to no id are dropped."""
        pieces, ambiguous = self._piece_table()
        row: dict[int, float] = {}
        for key, value in top.items():
            tid = token_id_of(str(key), pieces, ambiguous, tok, piece)
            if tid is not None and isinstance(value, (int, float)):
                row[tid] = max(float(value), row.get(tid, -math.inf))
        return row

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
        """Score the realised continuation under the full and every ablated prompt, and
        regenerate each ablation whose argmax may leave it right after scoring it (up to
        ``--provenai-max-concurrency`` prompts in flight). No KV cache is shared over HTTP,
        but a server's prompt cache reuses the longest token prefix a request shares with
        the one before it (llama.cpp keeps one per slot): so the full prompt (whose
        generation has just left it there) goes first, then the ablations in order of
        decreasing prefix shared with it (each shares the tokens before its own removed
        resource with the one before), and an ablation's regeneration follows its own scoring,
        whose prompt it shares whole. Visited one by one in that order, the server evaluates
        about the tokens after each removed resource, where an order by resource re-evaluated
        nearly every prompt whole."""
        cont = check_continuation_ids(continuation, self.vocab)
        prompts = [prompt, *variants]
        encoded = [self.encode(p) for p in prompts]
        sizes = [len(ids) for ids in encoded]
        shared = [common_prefix(encoded[0], ids) for ids in encoded]
        order = [0, *sorted(range(1, len(prompts)), key=lambda i: -shared[i])]

        def visit(i: int) -> tuple[Any, int | None, Generation | None]:
            rows = self.score(prompts[i], cont)
            if i == 0:
                return rows, None, None
            div = first_divergence(rows, cont, margin)
            return rows, div, (self.generate(prompts[i]) if div is not None else None)

        workers = max(1, self.client.max_concurrency)
        with ThreadPoolExecutor(max_workers=workers) as pool:
            visited = dict(zip(order, pool.map(visit, order), strict=True))
        text = str(self.tokenizer.decode(cont, skip_special_tokens=True))
        finish = "stop" if cont and cont[-1] in self.stop_ids else "length"
        passes: list[VariantPass] = []
        forward = sizes[0] + len(cont)
        for i in range(1, len(prompts)):
            r, d, regenerated = visited[i]
            if regenerated is None:
                gen = Generation(
                    text=text,
                    token_ids=list(cont),
                    logprobs=[float(r[t][tok]) for t, tok in enumerate(cont)],
                    finish_reason=finish,
                    margins=token_margins(r, cont),
                )
                cost = sizes[i] + len(cont)
            else:
                gen = regenerated
                cost = sizes[i] + len(cont) + sizes[i] + len(gen.token_ids)
            forward += cost
            passes.append(VariantPass(rows=r, generation=gen, divergence=d, forward_tokens=cost))
        full_rows = visited[0][0]
        return AblationPass(full_rows=full_rows, variants=passes, forward_tokens=forward)


def _top2_margins(tops: Any, n: int) -> list[float]:
    """Per generated token, the gap between the two best entries of its ``top_logprobs``
    (asked with ``logprobs: 2``): the greedy margin. Empty when any position has fewer than
    two numbers (the server then cannot tell a near tie)."""
    if not isinstance(tops, list) or len(tops) != n:
        return []
    margins = []
    for top in tops:
        values = sorted(
            (float(v) for v in top.values() if isinstance(v, (int, float)))
            if isinstance(top, dict)
            else (),
            reverse=True,
        )
        if len(values) < 2:
            return []
        margins.append(values[0] - values[1])
    return margins

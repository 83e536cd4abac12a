"""What a server provides, found out once per base URL: the model it serves, generation-time
logprobs, echoed prompt logprobs and their alignment (the module docstring of
:mod:`pytest_provenai.subject.backends.served`); the check of every server before a run.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from ....errors import BackendError
from ..http import API_KEY_ENV, JSONClient, ServerError
from ..tokenizer import encode_prompt, render_chat_with
from .replies import echo_entries, first_choice, joined_stream, key_token_id
from .settings import ServedOptions, make_client
from .tokenizer import load_tokenizer

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
    via: str = ""  # how a continuation is scored: "steps", "echo" or "" (it cannot be)
    stream: bool = False  # generation-time logprobs are read from streamed replies
    token_prompts: bool = False  # a prompt given as token ids is read as those tokens

    @property
    def score(self) -> bool:
        return self.via != ""

    def describe(self) -> str:
        """One line for the terminal summary."""
        logprobs = f"top-{self.top_logprobs} logprobs" if self.top_logprobs else "no logprobs"
        if self.via == "steps":
            score = (
                "score via generation-time logprobs (re-prompted where the output leaves the "
                f"greedy path); KL from top-{self.top_logprobs}"
            )
        elif self.via == "echo":
            how = "aligned" if self.shift == 0 else f"shifted by {self.shift}, corrected"
            score = f"score via echoed prompt logprobs ({how}); KL from top-{self.top_logprobs}"
        else:
            score = f"no score ({self.note}); influence is surface-only"
        bos = f"; the server puts {self.bos} token(s) before each prompt" if self.bos else ""
        streamed = ", streamed" if self.stream else ""
        ids = ", token-id prompts" if self.token_prompts else ""
        return (
            f"served {self.model} at {self.base_url}: generate, {logprobs}{streamed}{ids}, "
            f"{score}{bos}"
        )

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
            "score_via": self.via,
            "stream": self.stream,
            "token_prompts": self.token_prompts,
            "note": self.note,
        }


_REPORTS: dict[tuple[str, str | None, str, int, str], ServerReport] = {}
_REPORTS_LOCK = threading.Lock()


def probe_server(
    client: JSONClient, model: str | None, tokenizer: Any, top_k: int, score_via: str = "auto"
) -> ServerReport:
    """Find out what the server at ``client.base_url`` provides (see the module docstring)
    and how a continuation will be scored (``score_via``: auto, steps or echo).

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
    steps_note = "not asked for (--provenai-served-score echo)"
    if score_via != "echo":
        steps_note = _probe_steps(client, model, top_k, tokenizer, prompt, gen[0])
    stream = _probe_stream(client, model, top_k, prompt + PROBE_PREFIXES[0], gen[0])
    token_prompts = _probe_token_prompt(
        client, model, top_k, tokenizer, prompt + PROBE_PREFIXES[0], gen[0]
    )

    def report(echo: bool, shift: int | None, bos: int, echo_note: str, tail: int) -> ServerReport:
        steps_ok, echo_ok = steps_note == "", echo and shift is not None
        if score_via == "steps" or (score_via == "auto" and steps_ok):
            via, note = ("steps", "") if steps_ok else ("", steps_note)
        else:
            via = "echo" if echo_ok else ""
            note = echo_note if score_via == "echo" or echo_ok else f"{steps_note}; {echo_note}"
        return ServerReport(
            base, model, served, top, echo, shift, bos, note, tail, via, stream, token_prompts
        )

    echo = _probe_echo(client, model, top_k, prompt + PROBE_TEXT)
    if echo is None:
        return report(False, None, 0, "the server does not echo prompt logprobs", 0)
    reply, choice = echo
    tokens, _, tops = echo_entries(choice, client.url("completions"))
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
        return report(True, None, bos, note, tail)
    note = "" if shift == 0 else f"echoed top-k at entry i describe token i+{shift} (corrected)"
    return report(True, shift, bos, note, tail)


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
        choice = first_choice(reply, client.url("completions"))
        lp = choice.get("logprobs")
        tops = lp.get("top_logprobs") if isinstance(lp, dict) else None
        if not isinstance(tops, list) or not tops or not isinstance(tops[0], dict):
            return []
        out.append({str(k): float(v) for k, v in tops[0].items()})
    return out


STEPS_BIAS = -100.0
"""``logit_bias`` a steps request puts on the end-of-turn ids, so that the one token it
generates is never one that ends the reply: servers return no logprobs for a token that ends
it. The probe checks that the logprobs a server reports ignore the bias."""


def _probe_steps(
    client: JSONClient, model: str, top_k: int, tokenizer: Any, prompt: str, reference: Any
) -> str:
    """Why one-token requests cannot score a continuation on this server ("" when they can):
    its prompt token count must agree with ``tokenizer``, and the top-k it reports after
    ``PROBE_PREFIXES[0]`` with the likeliest token biased away (``logit_bias``) must still be
    ``reference``, the unbiased top-k: the logprobs are the model's, not the sampler's."""
    text = prompt + PROBE_PREFIXES[0]
    ranked = sorted(reference.items(), key=lambda kv: -float(kv[1]))

    def single_id(key: str) -> list[int]:
        named = key_token_id(key)
        return (
            [named] if named is not None else tokenizer(key, add_special_tokens=False)["input_ids"]
        )

    biased = next((ids[0] for key, _ in ranked if len(ids := single_id(str(key))) == 1), None)
    if biased is None:
        return "its top-logprob keys do not map to single tokens of --provenai-tokenizer"
    body = _one_token(model, text, top_k, logit_bias={str(int(biased)): STEPS_BIAS})
    try:
        reply = client.post("completions", body)
    except ServerError as exc:
        if exc.status is not None and 400 <= exc.status < 500:
            return "it refuses logit_bias on one-token requests"
        raise BackendError(str(exc)) from None
    usage = reply.get("usage") if isinstance(reply, dict) else None
    counted = usage.get("prompt_tokens") if isinstance(usage, dict) else None
    n = len(encode_prompt(tokenizer, text))
    if isinstance(counted, int) and counted - n not in (0, 1):
        raise BackendError(
            f"the server at {client.base_url} counts {counted} prompt tokens where "
            f"--provenai-tokenizer counts {n} (with the chat template): pass the served "
            "model's own tokenizer"
        )
    lp = first_choice(reply, client.url("completions")).get("logprobs")
    tops = lp.get("top_logprobs") if isinstance(lp, dict) else None
    if not isinstance(tops, list) or not tops or not isinstance(tops[0], dict):
        return "it returns no top logprobs when logit_bias is given"
    if not _same_distribution(tops[0], reference):
        return (
            "the logprobs it reports follow logit_bias, so a position whose greedy token ends "
            "the reply cannot be read"
        )
    return ""


def _probe_stream(
    client: JSONClient, model: str, top_k: int, text: str, reference: dict[str, float]
) -> bool:
    """Whether a streamed request for the token after ``text`` reports ``reference``, the
    top-k of the plain request: then generation-time logprobs are read from streams
    (:meth:`~.generator.OpenAIGenerator._complete`). Any error or difference: plain."""
    body = _one_token(model, text, top_k, stream=True)
    try:
        events = client.post_stream("completions", body)
        choice = first_choice(joined_stream(events, client.url("completions")), "")
    except (ServerError, BackendError):
        return False
    return _one_top_is(choice, reference)


def _probe_token_prompt(
    client: JSONClient, model: str, top_k: int, tokenizer: Any, text: str, reference: Any
) -> bool:
    """Whether the server takes a prompt given as token ids (the OpenAI ``prompt`` as a list
    of integers) as those tokens: the top-k after ``text``'s ids must be ``reference``, the
    top-k after ``text`` itself. Then a continuation whose text does not tokenise back into
    its own tokens is still scored from generation-time logprobs. Any error or difference:
    no."""
    body = _one_token(model, "", top_k)
    body["prompt"] = encode_prompt(tokenizer, text)
    try:
        reply = client.post_once("completions", body)  # llama-cpp-python: HTTP 500
        choice = first_choice(reply, client.url("completions"))
    except (ServerError, BackendError):
        return False
    return _one_top_is(choice, reference)


def _one_top_is(choice: dict[str, Any], reference: Mapping[str, float]) -> bool:
    """Whether ``choice`` holds exactly one position's top-k and it is ``reference``."""
    lp = choice.get("logprobs")
    tops = lp.get("top_logprobs") if isinstance(lp, dict) else None
    if not isinstance(tops, list) or len(tops) != 1 or not isinstance(tops[0], dict):
        return False
    return bool(tops[0]) and _same_distribution(tops[0], reference)


def _probe_echo(
    client: JSONClient, model: str, top_k: int, text: str
) -> tuple[Any, dict[str, Any]] | None:
    try:
        reply = client.post("completions", _one_token(model, text, top_k, echo=True))
    except ServerError as exc:
        if exc.status is not None and 400 <= exc.status < 500:
            return None
        raise BackendError(str(exc)) from None
    choice = first_choice(reply, client.url("completions"))
    lp = choice.get("logprobs")
    tokens = lp.get("tokens") if isinstance(lp, dict) else None
    if not isinstance(tokens, list) or len(tokens) < 3:
        return None
    try:
        echo_entries(choice, client.url("completions"))
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
    key = (
        options.base_url,
        options.model,
        options.tokenizer or "",
        options.top_logprobs,
        options.score_via,
    )
    with _REPORTS_LOCK:
        hit = _REPORTS.get(key)
    if hit is not None:
        return hit
    if tokenizer is None:
        tokenizer = load_tokenizer(options.tokenizer)[0]
    report = probe_server(
        make_client(options), options.model, tokenizer, options.top_logprobs, options.score_via
    )
    with _REPORTS_LOCK:
        _REPORTS[key] = report
    return report


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

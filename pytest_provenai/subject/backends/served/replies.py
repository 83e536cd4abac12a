"""Reading a completions reply: its first choice, the echoed logprob lists, which echoed
tokens are the expected pieces, and the token id a top-logprob key stands for.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ....errors import BackendError

_TOKEN_ID_KEY = re.compile(r"^token_id:(\d+)$")


def key_token_id(key: str) -> int | None:
    """The id a ``token_id:N`` top-logprob key names; None for a key that is token text."""
    m = _TOKEN_ID_KEY.match(key)
    return int(m.group(1)) if m else None


def token_id_of(
    key: str, pieces: Mapping[str, int], ambiguous: frozenset[str], tok: int, tok_piece: str
) -> int | None:
    """The id a top-logprob key stands for: ``token_id:N`` (vLLM's
    ``return_tokens_as_token_ids``), a unique token text, or — for a text several ids share —
    the realised token when it has that text (it is the likeliest reading there); else None
    (the entry joins the rest bucket)."""
    named = key_token_id(key)
    if named is not None:
        return named
    if key in ambiguous:
        return tok if key == tok_piece else None
    return pieces.get(key)


def first_choice(reply: Any, url: str) -> dict[str, Any]:
    """The reply's first choice, its logprobs in the completions lists
    (:func:`completions_logprobs`)."""
    choices = reply.get("choices") if isinstance(reply, dict) else None
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise BackendError(
            f"POST {url}: the reply has no choices list, so this is not an OpenAI-compatible "
            "completions endpoint; point --provenai-base-url at the API root (often .../v1)"
        )
    choice = choices[0]
    lp = choice.get("logprobs")
    if isinstance(lp, dict) and isinstance(lp.get("content"), list) and "tokens" not in lp:
        choice = {**choice, "logprobs": completions_logprobs(lp["content"], url)}
    return choice


def completions_logprobs(content: list[Any], url: str) -> dict[str, list[Any]]:
    """Logprobs given per token as a ``content`` list — what llama.cpp's ``llama-server``
    returns on ``/v1/completions`` (the chat completions form: ``{"id", "token", "logprob",
    "top_logprobs": [{"id", "token", "logprob"}, …]}``) — as the completions lists
    ``tokens`` / ``token_logprobs`` / ``top_logprobs`` that every reader here takes. An
    alternative that carries its token id is keyed ``token_id:N`` (exact, as vLLM's
    ``return_tokens_as_token_ids`` gives), one without by its text."""
    tokens: list[Any] = []
    token_lps: list[Any] = []
    tops: list[Any] = []
    for entry in content:
        if not isinstance(entry, dict) or not isinstance(entry.get("token"), str):
            raise BackendError(f"POST {url}: a logprobs content entry has no token text")
        tokens.append(entry["token"])
        token_lps.append(entry.get("logprob"))
        top: dict[str, Any] = {}
        for alt in entry.get("top_logprobs") or []:
            if not isinstance(alt, dict):
                continue
            key = f"token_id:{alt['id']}" if isinstance(alt.get("id"), int) else alt.get("token")
            if isinstance(key, str) and key not in top:
                top[key] = alt.get("logprob")
        tops.append(top)
    return {"tokens": tokens, "token_logprobs": token_lps, "top_logprobs": tops}


def joined_stream(events: list[Any], url: str) -> dict[str, Any]:
    """A streamed completion (its event payloads, each with one choice holding the next piece
    of text and, when asked, its logprob lists) as the one reply a plain request returns:
    the texts and the ``tokens`` / ``token_logprobs`` / ``top_logprobs`` / ``text_offset``
    lists joined in order, the last ``finish_reason`` given. BackendError when an event has no
    choice."""
    text: list[str] = []
    lists: dict[str, list[Any]] = {}
    finish = None
    for event in events:
        choice = first_choice(event, url)
        piece = choice.get("text")
        if isinstance(piece, str):
            text.append(piece)
        if choice.get("finish_reason") is not None:
            finish = choice.get("finish_reason")
        lp = choice.get("logprobs")
        if isinstance(lp, dict):
            for key in ("tokens", "token_logprobs", "top_logprobs", "text_offset"):
                if isinstance(lp.get(key), list):
                    lists.setdefault(key, []).extend(lp[key])
    choice = {"text": "".join(text), "index": 0, "finish_reason": finish}
    if lists:
        choice["logprobs"] = lists
    return {"choices": [choice]}


def echo_entries(choice: dict[str, Any], url: str) -> tuple[list[Any], list[Any], list[Any]]:
    lp = choice.get("logprobs")
    if not isinstance(lp, dict):
        raise BackendError(f"POST {url}: no logprobs in an echo reply")
    tokens, token_lps, tops = lp.get("tokens"), lp.get("token_logprobs"), lp.get("top_logprobs")
    if not (isinstance(tokens, list) and isinstance(token_lps, list) and isinstance(tops, list)):
        raise BackendError(f"POST {url}: echo logprobs lack tokens/token_logprobs/top_logprobs")
    if not len(tokens) == len(token_lps) == len(tops):
        raise BackendError(f"POST {url}: echo logprobs lists differ in length")
    return tokens, token_lps, tops


def pieces_match(tokens: list[Any], start: int, expected: list[str]) -> bool:
    """Whether the echoed tokens from ``start`` on are ``expected`` (an empty text on either
    side, e.g. a special token, matches anything)."""
    if start < 1 or start + len(expected) > len(tokens):
        return False
    return all(
        not e or not str(tokens[start + t]) or str(tokens[start + t]) == e
        for t, e in enumerate(expected)
    )

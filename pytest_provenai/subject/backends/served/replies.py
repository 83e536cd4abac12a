"""Reading a completions reply: its first choice, the echoed logprob lists, which echoed
tokens are the expected pieces, and the token id a top-logprob key stands for.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from ....errors import BackendError

_TOKEN_ID_KEY = re.compile(r"^token_id:(\d+)$")


def token_id_of(
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


def first_choice(reply: Any, url: str) -> dict[str, Any]:
    choices = reply.get("choices") if isinstance(reply, dict) else None
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        raise BackendError(
            f"POST {url}: the reply has no choices list, so this is not an OpenAI-compatible "
            "completions endpoint; point --provenai-base-url at the API root (often .../v1)"
        )
    return choices[0]


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

"""An LLM judge over an OpenAI-compatible server: the claim checker for users who serve a
strong model (``--provenai-verify-judge URL``).

The judge reads a claim and its routed premise (the evidence chunks the pipeline selected)
and decides support itself; with a judge the calibrated forest is not consulted (see
:class:`~pytest_provenai.attribution.pipeline.ClaimJudge`). Two formats:

* ``instruct`` — a general instruction model is asked, on ``/chat/completions``, for one of
  ``supported`` / ``contradicted`` / ``not enough evidence``. The reply's first line must be
  exactly one of them (case, surrounding punctuation and markup aside); anything else is an
  unparseable verdict. The verdict gives ``p_support`` 1 or 0 and a one-hot verdict head.
* ``minicheck`` — a fact checker in the MiniCheck format (e.g. Bespoke-MiniCheck-7B served as a
  GGUF by llama.cpp or Ollama): the user message ``Document: …\\nClaim: …``, one generated
  token that must be ``Yes`` or ``No``, and its top logprobs: ``p_support`` = P(Yes) /
  (P(Yes) + P(No)) over the returned alternatives (a label not among them counts as the
  remaining mass for No, as zero for Yes: never in the claim's favour). No is ``unsupported``.

The requests go through :class:`~pytest_provenai.subject.backends.http.JSONClient` (bounded
retries with backoff, the API key to the server's origin only, redacted messages). Any
failure — the server fails or times out after its retries, a reply without the expected
fields, an unparseable verdict — raises :class:`JudgeError` with one line naming the server,
so the pipeline marks that claim ``failed`` and blocks the answer; nothing is allowed
silently. After a server gave up (a transient failure that outlived the retries) the judge
is not asked again in this process: every later claim fails at once with the same line, so
a dead server costs one round of retries, not one per claim.

The judge's identity (model id, format, prompt version, threshold — never the URL) is part
of the verifier's identity in every record and of the attribution cache's recipe.
"""

from __future__ import annotations

import math
import os
import re
import threading
from collections.abc import Mapping
from typing import Any

from pytest_provenai.attribution.verdict import HEAD_CLASSES, Judgement
from pytest_provenai.errors import AttributionError
from pytest_provenai.subject.backends.http import API_KEY_ENV, JSONClient, ServerError

__all__ = [
    "DEFAULT_JUDGE_TIMEOUT",
    "JUDGE_API_KEY_ENV",
    "JUDGE_FORMATS",
    "JUDGE_LABELS",
    "JUDGE_THRESHOLD",
    "PROMPT_VERSION",
    "ForestNotConsulted",
    "JudgeError",
    "LLMJudge",
    "judge_api_key",
    "judge_identity",
    "make_judge",
    "parse_instruct",
    "parse_minicheck",
]

JUDGE_FORMATS = ("instruct", "minicheck")
PROMPT_VERSION = 1
"""Version of the prompts and parsing below; part of the judge's identity (cache key)."""
JUDGE_THRESHOLD = 0.5
"""A claim is supported when ``p_support`` reaches this (minicheck: P(Yes) ≥ P(No))."""
DEFAULT_JUDGE_TIMEOUT = 120.0
JUDGE_API_KEY_ENV = "PROVENAI_JUDGE_API_KEY"
"""The judge server's API key; when unset, ``$PROVENAI_API_KEY`` (the served backend's)."""
MINICHECK_TOP_LOGPROBS = 5

#: The instruct format's verdicts, as the reply spells them, and the claim verdict each gives.
JUDGE_LABELS: Mapping[str, str] = {
    "supported": "supported",
    "contradicted": "contradicted",
    "not enough evidence": "not_enough_evidence",
}

INSTRUCT_SYSTEM = (
    "You check claims against documents. Read the document and the claim. Reply with exactly "
    "one of these three labels and nothing else: supported (the document states what the "
    "claim says), contradicted (the document states something that makes the claim false), "
    "not enough evidence (the document neither confirms nor refutes the claim)."
)
INSTRUCT_USER = (
    "Document:\n{document}\n\nClaim: {claim}\n\n"
    "Label (supported, contradicted or not enough evidence):"
)
MINICHECK_USER = "Document: {document}\nClaim: {claim}"


class JudgeError(AttributionError):
    """A judge call failed or its verdict could not be read; one line naming the server."""


def judge_identity(model: str, fmt: str) -> dict[str, Any]:
    """What a judge's verdicts depend on besides its inputs — never the server's URL, so a
    fleet serving one model gives one set of records and cache entries."""
    return {
        "kind": "llm_judge",
        "model": model,
        "format": fmt,
        "prompt_version": PROMPT_VERSION,
        "threshold": JUDGE_THRESHOLD,
    }


def judge_api_key() -> str | None:
    """``$PROVENAI_JUDGE_API_KEY``, else ``$PROVENAI_API_KEY``, else None."""
    return os.environ.get(JUDGE_API_KEY_ENV) or os.environ.get(API_KEY_ENV) or None


def _head(verdict: str) -> dict[str, float]:
    return {c: (1.0 if c == verdict else 0.0) for c in HEAD_CLASSES}


_MARKUP = re.compile(r"[^a-z ]+")


def parse_instruct(text: str) -> Judgement | None:
    """The verdict of an instruct reply, or None when its first non-blank line is not
    exactly one of the three labels (case, punctuation and markup such as ``**`` aside)."""
    lines = [line for line in text.splitlines() if line.strip()]
    if not lines:
        return None
    words = _MARKUP.sub(" ", lines[0].lower().replace("_", " ").replace("-", " ")).split()
    verdict = JUDGE_LABELS.get(" ".join(words))
    if verdict is None:
        return None
    return Judgement(1.0 if verdict == "supported" else 0.0, _head(verdict))


def _label(token: Any) -> str | None:
    if not isinstance(token, str):
        return None
    word = token.strip().lower()
    return word if word in ("yes", "no") else None


def _logprob(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    number = float(value)
    return number if math.isfinite(number) and number <= 1e-6 else None


def parse_minicheck(first: Any) -> tuple[Judgement | None, str]:
    """(verdict, why not) of the first generated token's logprob entry in the OpenAI chat
    format (``{"token", "logprob", "top_logprobs": [{"token", "logprob"}, …]}``)."""
    if not isinstance(first, dict):
        return None, "no logprobs for the first token"
    chosen = _label(first.get("token"))
    chosen_lp = _logprob(first.get("logprob"))
    if chosen is None:
        return None, f"the first token is {first.get('token')!r}, not Yes or No"
    if chosen_lp is None:
        return None, "the first token has no finite logprob"
    mass = {"yes": 0.0, "no": 0.0}
    seen = {"yes": False, "no": False}
    tops = first.get("top_logprobs")
    entries = [e for e in tops if isinstance(e, dict)] if isinstance(tops, list) else []
    tokens_seen: set[str] = set()
    for entry in [first, *entries]:
        token = entry.get("token")
        label, lp = _label(token), _logprob(entry.get("logprob"))
        if label is None or lp is None or token in tokens_seen:
            continue
        tokens_seen.add(str(token))
        mass[label] += math.exp(lp)
        seen[label] = True
    other = "no" if chosen == "yes" else "yes"
    if not seen[other]:
        mass[other] = max(0.0, 1.0 - mass[chosen]) if other == "no" else 0.0
    total = mass["yes"] + mass["no"]
    p_yes = mass["yes"] / total if total > 0 else 0.0
    if chosen == "no":
        p_yes = min(p_yes, JUDGE_THRESHOLD - 1e-6)  # the greedy token said No: never support
    p_yes = round(p_yes, 6)
    head = {c: 0.0 for c in HEAD_CLASSES}
    head["supported"], head["unsupported"] = p_yes, round(1.0 - p_yes, 6)
    return Judgement(p_yes, head), ""


class LLMJudge:
    """A :class:`~pytest_provenai.attribution.pipeline.ClaimJudge` over ``client``'s server.

    ``calls`` counts the claims it asked the server about (a request the client retried
    counts once), ``failures`` the claims it could not judge (both for this process);
    verdicts are memoised for the process, so repair's re-verification of an unchanged claim
    asks nothing again."""

    def __init__(self, client: JSONClient, model: str, fmt: str = "instruct") -> None:
        if fmt not in JUDGE_FORMATS:
            raise ValueError(f"judge format {fmt!r}: expected one of {', '.join(JUDGE_FORMATS)}")
        self.client = client
        self.model = model
        self.format = fmt
        self.calls = 0
        self.failures = 0
        self._down: str | None = None
        self._memo: dict[tuple[str, str], Judgement] = {}
        self._lock = threading.Lock()

    def __repr__(self) -> str:
        return f"LLMJudge({self.client.base_url!r}, {self.model!r}, {self.format!r})"

    @property
    def identity(self) -> dict[str, Any]:
        return judge_identity(self.model, self.format)

    @property
    def threshold(self) -> float:
        return JUDGE_THRESHOLD

    @property
    def where(self) -> str:
        return f"LLM judge {self.model} at {self.client.base_url}"

    def judge(self, premise: str, claim: str) -> Judgement:
        """The judge's verdict on ``claim`` given ``premise``; JudgeError (one line naming
        the server) when there is none."""
        key = (premise, claim)
        with self._lock:
            if key in self._memo:
                return self._memo[key]
            down = self._down
        if down is not None:
            self._failed()
            raise JudgeError(f"{down}; not asked again in this process")
        try:
            verdict = self._ask(premise, claim)
        except ServerError as exc:
            line = f"{self.where}: {exc}"
            if exc.transient:  # outlived the retries: the server is down or too slow
                with self._lock:
                    self._down = line
            self._failed()
            raise JudgeError(line) from None
        except JudgeError:
            self._failed()
            raise
        with self._lock:
            self._memo[key] = verdict
        return verdict

    def _failed(self) -> None:
        with self._lock:
            self.failures += 1

    def _ask(self, premise: str, claim: str) -> Judgement:
        with self._lock:
            self.calls += 1
        if self.format == "instruct":
            body: dict[str, Any] = {
                "model": self.model,
                "messages": [
                    {"role": "system", "content": INSTRUCT_SYSTEM},
                    {
                        "role": "user",
                        "content": INSTRUCT_USER.format(document=premise, claim=claim),
                    },
                ],
                "temperature": 0.0,
                "max_tokens": 16,
            }
        else:
            body = {
                "model": self.model,
                "messages": [
                    {
                        "role": "user",
                        "content": MINICHECK_USER.format(document=premise, claim=claim),
                    }
                ],
                "temperature": 0.0,
                "max_tokens": 1,
                "logprobs": True,
                "top_logprobs": MINICHECK_TOP_LOGPROBS,
            }
        reply = self.client.post("/chat/completions", body)
        choice = _first_choice(reply)
        if choice is None:
            raise JudgeError(f"{self.where}: the reply has no choices[0] (not a chat completion)")
        if self.format == "instruct":
            message = choice.get("message")
            text = message.get("content") if isinstance(message, dict) else None
            if not isinstance(text, str):
                raise JudgeError(f"{self.where}: the reply has no choices[0].message.content")
            verdict = parse_instruct(text)
            if verdict is None:
                shown = self.client.clean_text(text).strip().replace("\n", " ")[:80]
                raise JudgeError(
                    f"{self.where}: unparseable verdict {shown!r} (expected exactly one of "
                    "supported, contradicted, not enough evidence)"
                )
            return verdict
        logprobs = choice.get("logprobs")
        content = logprobs.get("content") if isinstance(logprobs, dict) else None
        if not isinstance(content, list) or not content:
            raise JudgeError(
                f"{self.where}: the reply has no logprobs (a minicheck judge needs "
                "logprobs and top_logprobs on /chat/completions)"
            )
        verdict_or_none, why = parse_minicheck(content[0])
        if verdict_or_none is None:
            raise JudgeError(
                f"{self.where}: unparseable verdict: {self.client.clean_text(why)} (expected "
                "Yes or No with its logprob)"
            )
        return verdict_or_none


def _first_choice(reply: Any) -> dict[str, Any] | None:
    choices = reply.get("choices") if isinstance(reply, dict) else None
    if not isinstance(choices, list) or not choices or not isinstance(choices[0], dict):
        return None
    first: dict[str, Any] = choices[0]
    return first


class ForestNotConsulted:
    """The checker slot of a verifier whose :class:`LLMJudge` decides support: never asked
    (its identity says so in every record)."""

    @property
    def identity(self) -> dict[str, Any]:
        return {"kind": "not_consulted", "reason": "an LLM judge decides support"}

    @property
    def threshold(self) -> float:
        return JUDGE_THRESHOLD

    def score(self, rows: Any) -> list[Judgement]:
        raise RuntimeError("the calibrated forest is not consulted when an LLM judge decides")


def make_judge(
    url: str, model: str, fmt: str, *, timeout: float = DEFAULT_JUDGE_TIMEOUT
) -> LLMJudge:
    """The judge of ``--provenai-verify-judge``: a JSONClient with the backend's retries and
    backoff, the judge's API key (:func:`judge_api_key`), one request in flight."""
    return LLMJudge(
        JSONClient(url, api_key=judge_api_key(), timeout=timeout, max_concurrency=1), model, fmt
    )

"""The served backend's options: one server's (:class:`ServedOptions`), the run's
(:class:`ServedSettings`: every server, the options each gets) and the defaults, once; the
HTTP client built from them.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, replace
from typing import Any

from ..http import (
    API_KEY_ENV,
    DEFAULT_MAX_CONCURRENCY,
    DEFAULT_RETRIES,
    DEFAULT_TIMEOUT,
    JSONClient,
)

__all__ = [
    "DEFAULT_MAX_CONCURRENCY",
    "DEFAULT_SCORE_VIA",
    "DEFAULT_TOP_LOGPROBS",
    "SCORE_VIA",
    "ServedOptions",
    "ServedSettings",
    "make_client",
]

DEFAULT_TOP_LOGPROBS = 20
"""Top-k alternatives asked for per position (``--provenai-top-logprobs``)."""

SCORE_VIA = ("auto", "steps", "echo")
"""How a teacher-forced continuation is scored (``--provenai-served-score``): ``steps`` sends
one one-token request per continuation position (the prompt grows by one realised token each
time; the server's prefix cache carries the shared part), ``echo`` sends the prompt +
continuation once and reads the echoed prompt logprobs back; ``auto`` takes ``steps`` where
the probe finds it usable, else ``echo``."""
DEFAULT_SCORE_VIA = "auto"


@dataclass(frozen=True)
class ServedOptions:
    """What the ``openai`` backend needs, for one base URL (the worker's)."""

    base_url: str
    model: str | None
    tokenizer: str | None
    top_logprobs: int = DEFAULT_TOP_LOGPROBS
    max_concurrency: int = DEFAULT_MAX_CONCURRENCY
    timeout: float = DEFAULT_TIMEOUT
    retries: int = DEFAULT_RETRIES
    score_via: str = DEFAULT_SCORE_VIA


@dataclass(frozen=True)
class ServedSettings:
    """The run's served models (``--provenai-backend openai``): the servers (``base_urls``; an
    xdist worker takes one) and the :class:`ServedOptions` every one of them gets, whose
    ``base_url`` and ``model`` :meth:`options` fills in per server. The API key is never
    here: it stays in the environment."""

    base_urls: tuple[str, ...]
    server: ServedOptions

    @property
    def tokenizer(self) -> str | None:
        return self.server.tokenizer

    @property
    def top_logprobs(self) -> int:
        return self.server.top_logprobs

    @property
    def max_concurrency(self) -> int:
        return self.server.max_concurrency

    @property
    def request_timeout(self) -> float:
        return self.server.timeout

    @property
    def score_via(self) -> str:
        return self.server.score_via

    def for_results(self) -> dict[str, Any]:
        return {
            "base_urls": list(self.base_urls),
            "tokenizer": self.tokenizer,
            "top_logprobs": self.top_logprobs,
            "max_concurrency": self.max_concurrency,
            "request_timeout": self.request_timeout,
            "score_via": self.score_via,
        }

    def base_url_for(self, worker_id: str | None) -> str:
        """gwN takes base_urls[N mod len] (like --provenai-devices); others the first."""
        if worker_id and worker_id.startswith("gw"):
            try:
                return self.base_urls[int(worker_id[2:]) % len(self.base_urls)]
            except ValueError:
                pass
        return self.base_urls[0]

    def options(self, base_url: str, model: str | None) -> ServedOptions:
        """The backend's options for one server."""
        return replace(self.server, base_url=base_url, model=model)


def make_client(options: ServedOptions) -> JSONClient:
    return JSONClient(
        options.base_url,
        api_key=os.environ.get(API_KEY_ENV) or None,
        timeout=options.timeout,
        retries=options.retries,
        max_concurrency=options.max_concurrency,
    )

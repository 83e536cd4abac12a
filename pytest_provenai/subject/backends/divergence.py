"""Token-list arithmetic of the fast paths: the first teacher-forced position greedy decoding may
leave, common and shared prompt prefixes.

Nothing here imports torch or mlx at module level.
"""

from __future__ import annotations

from typing import Any


def first_divergence(rows: Any, continuation: list[int], margin: float) -> int | None:
    """First position ``t`` where greedy decoding under ``rows`` may not pick
    ``continuation[t]``: its argmax differs, or the best and second-best log-probabilities are
    not more than ``margin`` apart (a near tie the teacher-forced numbers cannot settle).
    ``None`` when every position is a clear win for the realised token."""
    import numpy as np

    arr = np.asarray(rows)
    for t, tok in enumerate(continuation):
        row = arr[t]
        best = int(np.argmax(row))
        if best != tok:
            return t
        top2 = np.partition(row, -2)[-2:]
        if not float(top2[1] - top2[0]) > margin:  # a near tie (NaN counts as one)
            return t
    return None


def token_margins(rows: Any, tokens: list[int]) -> list[float]:
    """Per position ``t``, ``rows[t][tokens[t]]`` minus the best other log-probability in that
    row: the greedy margin of a realised token under teacher-forced rows (negative where
    another token is the argmax)."""
    import numpy as np

    if not tokens:
        return []
    arr = np.asarray(rows, dtype=np.float32)[: len(tokens)]
    top2 = np.partition(arr, -2, axis=-1)[:, -2:]
    chosen = arr[np.arange(len(tokens)), np.asarray(tokens)]
    best, second = top2[:, 1], top2[:, 0]
    other = np.where(chosen >= best, second, best)
    return [float(x) for x in chosen - other]


def common_prefix(a: list[int], b: list[int]) -> int:
    """Length of the longest common prefix of two token lists."""
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


def shared_prefix(encoded: list[list[int]]) -> int:
    """The token prefix all prompts share, leaving each at least its last token to feed."""
    shared = min(len(e) - 1 for e in encoded)
    for e in encoded[1:]:
        shared = min(shared, common_prefix(encoded[0], e))
    return max(shared, 0)

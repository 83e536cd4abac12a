"""The top-k approximation: log-probability rows from the k entries per position a server
returns, the rest of the mass spread over the other tokens (and exact rows cut to top-k, to
measure the approximation).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from typing import Any


def topk_rows(tops: Sequence[Mapping[int, float]], vocab: int) -> Any:
    """``[len(tops), vocab]`` float32 log-probability rows from per-position top-k dicts
    (token id → log-probability): the known entries as given, the remaining mass
    ``1 − Σ exp(known)`` spread evenly over the other ``vocab − k`` tokens (never above the
    smallest known entry). ``kl_rows`` renormalises, so a row only needs the right shape."""
    import numpy as np

    rows = np.empty((len(tops), vocab), dtype=np.float32)
    for t, known in enumerate(tops):
        ids = np.fromiter((int(i) for i in known), dtype=np.int64, count=len(known))
        lps = np.minimum(np.fromiter(known.values(), dtype=np.float64, count=len(known)), 0.0)
        rest = max(1.0 - float(np.exp(lps).sum()), 1e-9)
        others = vocab - len(ids)
        fill = math.log(rest / others) if others > 0 else -1e4
        if len(lps):
            fill = min(fill, float(lps.min()))
        rows[t].fill(fill)
        rows[t, ids] = lps
    return rows


def truncate_rows(rows: Any, k: int) -> Any:
    """Exact rows → what a top-``k`` server would give for them (for measuring the
    approximation on the same numbers: ``topk_rows`` of each row's k largest entries)."""
    import numpy as np

    arr = np.asarray(rows, dtype=np.float64)
    tops: list[dict[int, float]] = []
    for row in arr:
        idx = np.argpartition(row, -k)[-k:]
        tops.append({int(i): float(row[i]) for i in idx})
    return topk_rows(tops, arr.shape[1])

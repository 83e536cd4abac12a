"""The KL target of leave-one-resource-out ablation, computed from a backend's rows.

For the realised full-context output, teacher-forced under the full and under an ablated
context, :func:`kl_profile` gives KL(p_t ‖ p'_t) (nats) per output position, the first
position where the ablated argmax leaves the realised token and the ε of Proposition 1.
It lives on the subject side because the ablation runs produce it (subject/ablation.py) and
the audit scores it (audit/influence.py); the arrow points one way: audit -> subject.

numpy only (imported when used); no pytest.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pytest_provenai.errors import BackendError
from pytest_provenai.subject.near_ties import NearTie

__all__ = ["AblatedOutput", "KLProfile", "kl_profile", "kl_rows"]


@dataclass(frozen=True)
class KLProfile:
    """KL(p_t ‖ p'_t) of one ablation over the realised output's positions, in nats.

    ``first_divergence``: first position where the ablated argmax differs from the realised
    token (None: never). ``kl_at_divergence``: the KL there. ``eps``: 1 − the smallest
    full-context top-token probability over positions 0..first_divergence (all positions when
    there is no divergence): the ε of Proposition 1.
    """

    per_position: tuple[float, ...]
    first_divergence: int | None
    kl_at_divergence: float | None
    eps: float
    answer_positions: int = 0  # leading positions that make up the answer; 0 = all

    @property
    def _answer(self) -> tuple[float, ...]:
        n = self.answer_positions
        return self.per_position[:n] if n else self.per_position

    @property
    def kl_sum(self) -> float:
        """Σ KL over the answer positions (nats)."""
        return float(sum(self._answer))

    @property
    def kl_mean(self) -> float:
        """Mean KL per answer position (nats)."""
        return self.kl_sum / len(self._answer) if self._answer else 0.0

    @property
    def kl_output_mean(self) -> float:
        """Mean KL per position over the whole output."""
        n = len(self.per_position)
        return float(sum(self.per_position)) / n if n else 0.0

    def as_dict(self) -> dict[str, Any]:
        return {  # JSON has no infinity: an infinite position is stored as None
            "per_position": [x if math.isfinite(x) else None for x in self.per_position],
            "first_divergence": self.first_divergence,
            "kl_at_divergence": self.kl_at_divergence,
            "eps": self.eps,
            "answer_positions": self.answer_positions,
        }

    @classmethod
    def from_dict(cls, d: Mapping[str, Any]) -> KLProfile:
        kd = d.get("kl_at_divergence")
        fd = d.get("first_divergence")
        return cls(
            per_position=tuple(math.inf if x is None else float(x) for x in d["per_position"]),
            first_divergence=None if fd is None else int(fd),
            kl_at_divergence=None if kd is None else float(kd),
            eps=float(d["eps"]),
            answer_positions=int(d.get("answer_positions", 0)),
        )


def _check_rows(rows: Any, which: str) -> None:
    """A row the backend returned that is no log-probability distribution is a
    :class:`~pytest_provenai.errors.BackendError` naming the position, never a NaN or a
    silent 0 KL: a NaN entry, a +inf entry, or a row that is all -inf (no token possible)."""
    import numpy as np

    problems = (
        (np.isnan(rows).any(axis=-1), "holds NaN"),
        (np.isposinf(rows).any(axis=-1), "holds +inf"),
        (np.isneginf(rows).all(axis=-1), "is all -inf (no token has any probability)"),
    )
    for bad, what in problems:
        if rows.ndim and bad.any():
            t = int(np.argmax(bad))
            raise BackendError(
                f"the backend's {which} log-probability row at output position {t} {what}; "
                "it is not a distribution, so no KL can be computed from it"
            )


def kl_rows(full_rows: Any, ablated_rows: Any) -> Any:
    """KL(p_t ‖ p'_t) per row, float64, from two ``[T, vocab]`` log-softmax arrays.

    Terms where p = 0 are 0 (the 0·log 0 = 0 convention), so ``-inf`` entries never give NaN;
    a row is ``inf`` when the ablated context gives probability 0 to a token the full context
    can emit (:class:`KLProfile` keeps it; records say ``None`` with ``kl_infinite``). A row
    that is no distribution (NaN, +inf, all -inf) is a BackendError naming its position."""
    import numpy as np

    p_log = np.asarray(full_rows, dtype=np.float64)
    q_log = np.asarray(ablated_rows, dtype=np.float64)
    if p_log.shape != q_log.shape:
        raise ValueError(f"row shapes differ: {p_log.shape} vs {q_log.shape}")
    for rows, which in ((p_log, "full-context"), (q_log, "ablated")):
        _check_rows(rows, which)
    # Renormalise in float64 so float32 rounding of the inputs cannot make KL negative.
    with np.errstate(invalid="ignore", divide="ignore"):
        p_log = p_log - np.logaddexp.reduce(p_log, axis=-1, keepdims=True)
        q_log = q_log - np.logaddexp.reduce(q_log, axis=-1, keepdims=True)
        p = np.exp(p_log)
        # 0 · log(0 / q) = 0: a token the full context never emits adds nothing, whatever
        # the ablated row says (-inf log-probabilities are legal log-softmax values).
        terms = np.where(p > 0.0, p * (p_log - q_log), 0.0)
    kl = np.sum(terms, axis=-1)
    return np.maximum(kl, 0.0)


def kl_profile(
    full_rows: Any, ablated_rows: Any, realised: Sequence[int], answer_positions: int = 0
) -> KLProfile:
    """The KL target of one ablation, from the full-context and ablated teacher-forced rows
    of the realised output ``realised`` (token ids); its first ``answer_positions`` positions
    are the answer (0: all of them)."""
    import numpy as np

    per = kl_rows(full_rows, ablated_rows)
    ablated_argmax = np.argmax(np.asarray(ablated_rows), axis=-1)
    first = next((t for t, tok in enumerate(realised) if int(ablated_argmax[t]) != tok), None)
    top = np.exp(np.max(np.asarray(full_rows, dtype=np.float64), axis=-1))
    upto = len(realised) if first is None else first + 1
    eps = float(1.0 - np.min(top[:upto])) if upto else 0.0
    return KLProfile(
        per_position=tuple(float(x) for x in per),
        first_divergence=first,
        kl_at_divergence=None if first is None else float(per[first]),
        eps=eps,
        answer_positions=answer_positions,
    )


@dataclass(frozen=True)
class AblatedOutput:
    """What the subject produced with one resource removed (see subject/ablation.py)."""

    resource_id: str
    answer: str
    cited_ids: tuple[str, ...]  # in the full context's id space
    kl: KLProfile | None = None
    output: str | None = None  # the raw ablated output (None: not kept)
    near_ties: list[NearTie] | None = None  # its marked near ties (None: margins unknown)

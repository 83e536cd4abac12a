"""Metrics: one definition used by every layer, the summaries, the reports and the gates.

A :class:`Metric` is a population quantity over one test's records. It is either

* **per case** (``fn``): ``fn(record) -> float | None`` gives the case's value and the
  population value is the mean over cases; ``None`` marks a value that is undefined for that
  case (e.g. citation precision of an answer that cites nothing), counted as 0 in the mean and
  reported in ``undefined``; or
* **pooled** (``ratio``): ``ratio(record) -> (numerator, denominator)`` and the population
  value is Σnumerator / Σdenominator (e.g. claims pooled over traces: a trace with 30 claims
  weighs 30 times a trace with one); or
* **pooled counts** (``counts`` + ``combine``): ``counts(record) -> {name: count}`` and the
  population value is ``combine(Σ counts)`` — a statistic of several pooled counts at once,
  such as macro F1 over per-class confusion counts (None when undefined).

Either way the resampling unit of the confidence interval is the case (percentile bootstrap),
or, for all-or-nothing rates, the exact binomial (Clopper–Pearson) interval of the pooled
counts (``interval="exact_binomial"``). ``range`` is where the metric's values — and hence a
gate's bound — can lie: rates in [0, 1], counts and nats in [0, ∞).

A record that a metric cannot read (a missing key, a wrong type) makes the metric's value
None with an ``error`` naming the record: gates fail closed on it.

Pure Python; no pytest import.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal, cast

from pytest_provenai.audit.stats import (
    DEFAULT_LEVEL,
    DEFAULT_N_RESAMPLES,
    DEFAULT_SEED,
    bootstrap_combined_ci,
    bootstrap_ratio_ci,
    clopper_pearson,
    sum_counts,
    summarise,
)

__all__ = [
    "COUNT",
    "RATE",
    "Metric",
    "MetricSummary",
    "aggregate",
    "metric_table",
    "summaries_from_json",
    "summaries_to_json",
    "summarise_metric",
]

Direction = Literal["higher", "lower"]
Interval = Literal["bootstrap", "exact_binomial"]
PerCase = Callable[[Mapping[str, Any]], "float | None"]
Pooled = Callable[[Mapping[str, Any]], "tuple[float, float]"]
Counts = Callable[[Mapping[str, Any]], "dict[str, float]"]
Combine = Callable[[dict[str, float]], "float | None"]

RATE: tuple[float, float | None] = (0.0, 1.0)
"""Values in [0, 1]: shares and rates."""
COUNT: tuple[float, float | None] = (0.0, None)
"""Values in [0, ∞): counts per case, nats."""


@dataclass(frozen=True)
class Metric:
    """A named population metric; see the module docstring."""

    name: str
    direction: Direction
    description: str
    fn: PerCase | None = None
    ratio: Pooled | None = None
    range: tuple[float, float | None] = RATE
    interval: Interval = "bootstrap"
    counts: Counts | None = None
    combine: Combine | None = None

    def __post_init__(self) -> None:
        kinds = (self.fn is not None) + (self.ratio is not None) + (self.counts is not None)
        if kinds != 1:
            raise ValueError(f"metric {self.name!r}: give exactly one of fn, ratio or counts")
        if (self.counts is None) != (self.combine is None):
            raise ValueError(f"metric {self.name!r}: counts and combine go together")
        if self.interval == "exact_binomial" and self.ratio is None:
            raise ValueError(f"metric {self.name!r}: an exact binomial interval needs ratio")

    @property
    def higher_is_better(self) -> bool:
        return self.direction == "higher"

    @property
    def pooled(self) -> bool:
        return self.ratio is not None or self.counts is not None

    def __call__(self, record: Mapping[str, Any]) -> float | None:
        """The metric's value for one record (a pooled metric: its own ratio, None when its
        denominator is 0)."""
        if self.fn is not None:
            return _number(self.fn(record))
        if self.counts is not None:
            assert self.combine is not None
            return _number(self.combine(_counts(self.counts(record))))
        assert self.ratio is not None
        num, den = _pair(self.ratio(record))
        return num / den if den else None

    @staticmethod
    def shown_bound(bound: Any) -> str:
        """``bound`` as messages show it: its repr, but an integer too large for a float
        bound by its digit count (``10**400`` in full is 401 digits)."""
        if isinstance(bound, int) and not isinstance(bound, bool) and abs(bound) >= 10**16:
            return (
                f"<an integer of about {int(abs(bound).bit_length() * math.log10(2)) + 1} digits>"
            )
        return repr(bound)

    def check_bound(self, bound: Any) -> str | None:
        """Why ``bound`` cannot be a gate bound of this metric, or None when it can: it must
        be a finite number inside :attr:`range`. The message does not repeat the value (the
        caller shows it once, with :meth:`shown_bound`)."""
        if isinstance(bound, bool) or not isinstance(bound, (int, float)):
            return "needs a number as its bound"
        try:
            value = float(bound)
        except OverflowError:
            return "needs a finite bound"
        lo, hi = self.range
        where = f"[{lo:g}, {'∞' if hi is None else f'{hi:g}'}]"
        if not math.isfinite(value):
            return f"needs a finite bound in {where}"
        if value < lo or (hi is not None and value > hi):
            return f"needs a bound in {where} (the values this metric takes)"
        return None

    def info(self) -> dict[str, Any]:
        """What the results JSON and reports say about the metric."""
        return {
            "direction": self.direction,
            "description": self.description,
            "pooled": self.pooled,
            "interval": self.interval,
        }


@dataclass(frozen=True)
class MetricSummary:
    """One metric over one test's records, as :func:`summarise_metric` computes it and the
    results JSON keeps it: ``value`` with its 95% ``ci`` (None when undefined or unreadable),
    ``n`` records, ``undefined`` (cases counted as 0, or pooled records with a zero
    denominator), ``error`` (a record the metric could not read); a pooled ratio adds its
    pooled ``numerator`` and ``denominator``, a pooled-counts metric its summed ``counts``.

    :meth:`to_json` gives exactly :func:`summarise_metric`'s dict, :meth:`from_json` reads
    it back (ValueError/TypeError/KeyError when it is not one)."""

    value: float | None
    ci: tuple[float, float] | None
    n: int
    undefined: int = 0
    error: str | None = None
    numerator: float | None = None
    denominator: float | None = None
    counts: dict[str, float] | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "value": self.value,
            "ci": json_ci(self.ci),
            "n": self.n,
            "undefined": self.undefined,
            "error": self.error,
        }
        if self.numerator is not None or self.denominator is not None:
            out["numerator"] = self.numerator
            out["denominator"] = self.denominator
        if self.counts is not None:
            out["counts"] = dict(self.counts)
        return out

    @classmethod
    def from_json(cls, data: Any) -> MetricSummary:
        d = json_object(data, "metric summary")
        counts = d.get("counts")
        error = d.get("error")
        return cls(
            value=json_number(d["value"], "value", optional=True),
            ci=ci_from_json(d["ci"]),
            n=json_int(d["n"], "n"),
            undefined=json_int(d.get("undefined", 0), "undefined"),
            error=None if error is None else json_str(error, "error"),
            numerator=json_number(d.get("numerator"), "numerator", optional=True),
            denominator=json_number(d.get("denominator"), "denominator", optional=True),
            counts=None
            if counts is None
            else {
                str(k): cast(float, json_number(v, f"counts.{k}"))
                for k, v in json_object(counts, "counts").items()
            },
        )


def summaries_to_json(summaries: Mapping[str, MetricSummary]) -> dict[str, dict[str, Any]]:
    """``{name: summary.to_json()}``, in the given order."""
    return {name: s.to_json() for name, s in summaries.items()}


def summaries_from_json(data: Any) -> dict[str, MetricSummary]:
    """``{name: MetricSummary}`` from :func:`aggregate`'s JSON, in the JSON's order."""
    return {
        str(name): MetricSummary.from_json(s)
        for name, s in json_object(data, "metric summaries").items()
    }


# -- reading the summaries' JSON back (the results JSON's aggregates) ------------------------
def json_object(x: Any, what: str) -> dict[str, Any]:
    """``x`` when it is a JSON object, else TypeError naming ``what``."""
    if not isinstance(x, dict):
        raise TypeError(f"{what}: expected an object, got {type(x).__name__}")
    return x


def json_number(x: Any, what: str, *, optional: bool = False) -> float | None:
    """``x`` unchanged when it is a JSON number (or null, when ``optional``), else
    TypeError: numbers are kept as read, so what was read is what is written."""
    if x is None and optional:
        return None
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        raise TypeError(f"{what}: expected a number, got {x!r}")
    return x


def json_list(x: Any, what: str) -> list[Any]:
    if not isinstance(x, list):
        raise TypeError(f"{what}: expected an array, got {type(x).__name__}")
    return x


def json_str(x: Any, what: str) -> str:
    if not isinstance(x, str):
        raise TypeError(f"{what}: expected a string, got {x!r}")
    return x


def json_int(x: Any, what: str) -> int:
    if isinstance(x, bool) or not isinstance(x, int):
        raise TypeError(f"{what}: expected a whole number, got {x!r}")
    return x


def ci_from_json(x: Any, what: str = "ci") -> tuple[float, float] | None:
    """A ``[lo, hi]`` interval (or null) as a pair."""
    if x is None:
        return None
    if not isinstance(x, list) or len(x) != 2:
        raise TypeError(f"{what}: expected [lo, hi] or null, got {x!r}")
    return (cast(float, json_number(x[0], what)), cast(float, json_number(x[1], what)))


def json_ci(ci: tuple[float, float] | None) -> list[float] | None:
    """An interval as the results JSON writes it: ``[lo, hi]`` or null."""
    return None if ci is None else list(ci)


def metric_table(metrics: Iterable[Metric]) -> dict[str, Metric]:
    """``{name: metric}`` in the given order; a repeated name is a programming error."""
    table: dict[str, Metric] = {}
    for m in metrics:
        if m.name in table:
            raise ValueError(f"metric {m.name!r} is defined twice")
        table[m.name] = m
    return table


def _number(x: Any) -> float | None:
    if x is None:
        return None
    if isinstance(x, bool) or not isinstance(x, (int, float)):
        raise TypeError(f"expected a number, got {x!r}")
    value = float(x)
    if not math.isfinite(value):
        raise TypeError(f"expected a finite number, got {x!r}")
    return value


def _pair(x: Any) -> tuple[float, float]:
    if not isinstance(x, tuple) or len(x) != 2:
        raise TypeError(f"expected a (numerator, denominator) pair, got {x!r}")
    num, den = _number(x[0]), _number(x[1])
    if num is None or den is None or den < 0 or num < 0:
        raise TypeError(f"expected non-negative numerator and denominator, got {x!r}")
    return num, den


_UNREADABLE = (KeyError, TypeError, ValueError, IndexError, AttributeError)


def _unreadable(
    records: Sequence[Mapping[str, Any]], i: int, exc: Exception, *, undefined: int
) -> dict[str, Any]:
    """The summary of a metric that could not read record ``i``: no value, the error."""
    record = records[i]
    case_id = record.get("case_id", "?") if isinstance(record, Mapping) else "?"
    return {
        "value": None,
        "ci": None,
        "n": len(records),
        "undefined": undefined,
        "error": f"record {i} ({case_id}): {type(exc).__name__}: {exc}",
    }


def _counts(x: Any) -> dict[str, float]:
    if not isinstance(x, Mapping):
        raise TypeError(f"expected a mapping of counts, got {x!r}")
    out: dict[str, float] = {}
    for key, value in x.items():
        number = _number(value)
        if number is None or number < 0:
            raise TypeError(f"expected non-negative counts, got {key!r}: {value!r}")
        out[str(key)] = number
    return out


def _summarise_counts(
    metric: Metric, records: Sequence[Mapping[str, Any]], n_resamples: int, level: float, seed: int
) -> dict[str, Any]:
    assert metric.counts is not None and metric.combine is not None
    rows: list[dict[str, float]] = []
    for i, record in enumerate(records):
        try:
            rows.append(_counts(metric.counts(record)))
        except _UNREADABLE as exc:
            return _unreadable(records, i, exc, undefined=0)
    total = sum_counts(rows)
    value = metric.combine(total) if rows else None
    ci = bootstrap_combined_ci(
        rows, metric.combine, n_resamples=n_resamples, level=level, seed=seed
    )
    return {
        "value": value,
        "ci": None if ci is None else list(ci),
        "n": len(rows),
        "undefined": sum(1 for r in rows if metric.combine(r) is None),
        "error": None,
        "counts": total,
    }


def summarise_metric(
    metric: Metric,
    records: Sequence[Mapping[str, Any]],
    *,
    n_resamples: int = DEFAULT_N_RESAMPLES,
    level: float = DEFAULT_LEVEL,
    seed: int = DEFAULT_SEED,
) -> dict[str, Any]:
    """``{"value", "ci", "n", "undefined", "error"}`` of one metric over ``records``.

    ``value``/``ci`` are None when there are no records, when a record cannot be read
    (``error`` says which and why) or, for a pooled metric, when every denominator is 0."""
    if metric.counts is not None:
        return _summarise_counts(metric, records, n_resamples, level, seed)
    values: list[float] = []
    pairs: list[tuple[float, float]] = []
    undefined = 0
    for i, record in enumerate(records):
        try:
            if metric.ratio is not None:
                pairs.append(_pair(metric.ratio(record)))
                continue
            assert metric.fn is not None
            v = _number(metric.fn(record))
        except _UNREADABLE as exc:
            return _unreadable(records, i, exc, undefined=undefined)
        if v is None:
            undefined += 1
            v = 0.0
        values.append(v)
    if metric.ratio is None:
        out = summarise(values, n_resamples=n_resamples, level=level, seed=seed)
        out["undefined"] = undefined
        out["error"] = None
        return out
    nums = [p[0] for p in pairs]
    dens = [p[1] for p in pairs]
    total = math.fsum(dens)
    out = {
        "value": math.fsum(nums) / total if total else None,
        "ci": None,
        "n": len(pairs),
        "undefined": sum(1 for d in dens if not d),
        "error": None,
        "numerator": math.fsum(nums),
        "denominator": total,
    }
    if total and metric.interval == "exact_binomial":
        k, n = math.fsum(nums), total
        if k != int(k) or n != int(n):
            out["error"] = "an exact binomial interval needs whole-number counts"
            out["value"] = None
        else:
            out["ci"] = list(clopper_pearson(int(k), int(n), level=level))
    elif total:
        ci = bootstrap_ratio_ci(nums, dens, n_resamples=n_resamples, level=level, seed=seed)
        out["ci"] = None if ci is None else list(ci)
    return out


def aggregate(
    records: Sequence[Mapping[str, Any]],
    metrics: Mapping[str, Metric],
    *,
    n_resamples: int = DEFAULT_N_RESAMPLES,
    level: float = DEFAULT_LEVEL,
    seed: int = DEFAULT_SEED,
) -> dict[str, dict[str, Any]]:
    """:func:`summarise_metric` of every metric, by name."""
    return {
        name: summarise_metric(m, records, n_resamples=n_resamples, level=level, seed=seed)
        for name, m in metrics.items()
    }

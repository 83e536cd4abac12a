"""Population statistics: mean, percentile bootstrap, paired bootstrap, summarise."""

from __future__ import annotations

import math
import random
import time

import pytest

from pytest_provenai.audit.stats import (
    NUMPY_FROM,
    _resample_sums,
    bootstrap_ci,
    mean,
    paired_bootstrap_ci,
    summarise,
)


def _values(n: int = 60, seed: int = 7) -> list[float]:
    rng = random.Random(seed)
    return [float(rng.random() < 0.55) for _ in range(n)]


def test_mean() -> None:
    # (1 + 2 + 3 + 4) / 4 = 2.5
    assert mean([1, 2, 3, 4]) == 2.5
    # 0.1 * 10 with fsum is exactly 1.0 -> / 10 = 0.1
    assert mean([0.1] * 10) == 0.1
    with pytest.raises(ValueError):
        mean([])
    with pytest.raises(ValueError):
        mean([float("nan")])
    with pytest.raises(TypeError):
        mean([None])  # type: ignore[list-item]


def test_bootstrap_is_deterministic() -> None:
    v = _values()
    assert bootstrap_ci(v) == bootstrap_ci(v)
    assert bootstrap_ci(v, seed=1) == bootstrap_ci(v, seed=1)
    assert bootstrap_ci(v, seed=1) != bootstrap_ci(v, seed=2)


def test_bootstrap_ci_contains_mean() -> None:
    v = _values()
    lo, hi = bootstrap_ci(v)
    assert lo < mean(v) < hi
    assert 0.0 <= lo <= hi <= 1.0


def test_wider_level_gives_wider_interval() -> None:
    v = _values()
    lo90, hi90 = bootstrap_ci(v, level=0.90)
    lo99, hi99 = bootstrap_ci(v, level=0.99)
    assert lo99 <= lo90
    assert hi90 <= hi99


def test_bootstrap_two_points() -> None:
    # values [0, 1]: each resample mean is 0 (p = 1/4), 0.5 (1/2) or 1 (1/4). With 2000
    # resamples the 2.5% quantile sits at position 0.025 * 1999 = 49.98 among ~500 zeros,
    # the 97.5% one at 1949.0 among ~500 ones -> (0.0, 1.0).
    assert bootstrap_ci([0.0, 1.0]) == (0.0, 1.0)


def test_bootstrap_edge_sizes() -> None:
    assert bootstrap_ci([0.7]) == (0.7, 0.7)
    assert bootstrap_ci([0.25] * 17) == (0.25, 0.25)
    with pytest.raises(ValueError):
        bootstrap_ci([])
    with pytest.raises(ValueError):
        bootstrap_ci([1.0, 2.0], level=1.0)
    with pytest.raises(ValueError):
        bootstrap_ci([1.0, 2.0], n_resamples=0)


def test_paired_bootstrap_identical_lists_is_zero() -> None:
    v = _values()
    assert paired_bootstrap_ci(v, list(v)) == (0.0, 0.0)


def test_paired_bootstrap_constant_shift() -> None:
    # a = b + 0.5 for every case -> every resampled difference of means is exactly 0.5
    b = [0.0, 0.25, 0.5, 0.25]
    a = [x + 0.5 for x in b]
    assert paired_bootstrap_ci(a, b) == (0.5, 0.5)


def test_paired_bootstrap_resamples_by_case() -> None:
    # Same indices for both lists == bootstrapping the per-case differences.
    a = _values(seed=1)
    b = _values(seed=2)
    diffs = [x - y for x, y in zip(a, b, strict=True)]
    assert paired_bootstrap_ci(a, b, seed=5) == bootstrap_ci(diffs, seed=5)
    lo, hi = paired_bootstrap_ci(a, b)
    assert lo <= mean(a) - mean(b) <= hi


def test_paired_bootstrap_length_mismatch() -> None:
    with pytest.raises(ValueError):
        paired_bootstrap_ci([1.0, 2.0], [1.0])
    with pytest.raises(ValueError):
        paired_bootstrap_ci([], [])


def test_summarise() -> None:
    s = summarise([1.0, 0.0, 1.0, 1.0])
    # mean = 3/4
    assert s["value"] == 0.75
    assert s["n"] == 4
    lo, hi = s["ci"]
    assert lo <= 0.75 <= hi
    assert list(s) == ["value", "ci", "n"]
    assert summarise([]) == {"value": None, "ci": None, "n": 0}
    assert summarise([0.3]) == {"value": 0.3, "ci": [0.3, 0.3], "n": 1}


def test_bootstrap_is_fast_enough() -> None:
    v = _values(60)
    t0 = time.perf_counter()
    bootstrap_ci(v, n_resamples=2000)
    paired_bootstrap_ci(v, v[::-1], n_resamples=2000)
    assert time.perf_counter() - t0 < 1.0


def _reference_sums(xs: list[float], n_resamples: int, seed: int) -> list[float]:
    """The pure loop the bootstrap has always been: fsum of rng.choices per resample."""
    choices = random.Random(seed).choices
    return [math.fsum(choices(xs, k=len(xs))) for _ in range(n_resamples)]


@pytest.mark.parametrize("n", [NUMPY_FROM, 2500])
@pytest.mark.parametrize("kind", ["rates", "floats", "thirds", "counts"])
@pytest.mark.parametrize("seed", [0, 2**40 + 7])
def test_numpy_resampling_is_bit_identical_to_the_pure_loop(n: int, kind: str, seed: int) -> None:
    rng = random.Random(n * 31 + len(kind))
    xs = {
        "rates": lambda: float(rng.random() < 0.3),
        "floats": lambda: rng.random() * 3.0 - 1.0,
        "thirds": lambda: rng.randrange(4) / 3,
        "counts": lambda: float(rng.randrange(11)),
    }
    values = [xs[kind]() for _ in range(n)]
    assert _resample_sums(values, 257, seed) == _reference_sums(values, 257, seed)
    lo, hi = bootstrap_ci(values, n_resamples=257, seed=seed)
    means = sorted(s / n for s in _reference_sums(values, 257, seed))
    assert means[0] <= lo <= hi <= means[-1]

"""The ablation pass's batched teacher-forced form (the one a GPU worker uses): the full
prompt and its ablations fed whole as left-padded batches give ``generate``'s own outputs and
the cropped-prefix path's rows to float rounding. Run here on the CPU, where it is not the
default (it feeds every prompt token; docs/performance.md measures it slower on 2 cores)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from facts_prompts import ablated, default_transformers

from pytest_provenai.errors import BackendError
from pytest_provenai.subject.backends import load_generator

ROW_TOLERANCE = 1e-4  # nats; the goldens' KL tolerance is 1e-3 + 1 %


@pytest.fixture(scope="module")
def model() -> Any:
    return default_transformers(max_new_tokens=16)


@pytest.mark.parametrize("rows", [2, 16])  # 5 prompts: batches of 2, 2, 1; one batch of 5
def test_batched_passes_give_generate_s_outputs_and_the_prefix_path_s_rows(
    model: Any, rows: int
) -> None:
    full, variants = ablated(model)
    variants.append(full)  # every fact left out, and the full prompt (an ablation of nothing)
    realised = model.generate(full).token_ids
    naive = [model.generate(v).token_ids for v in variants]

    assert model.ablation_batch_rows == 1  # the CPU default: cropped prefix, one at a time
    prefix = model.ablation_pass(full, variants, realised, margin=0.2)
    model.ablation_batch_rows = rows
    try:
        batched = model.ablation_pass(full, variants, realised, margin=0.2)
    finally:
        model.ablation_batch_rows = 1

    assert [v.generation.token_ids for v in batched.variants] == naive
    assert [v.divergence for v in batched.variants] == [v.divergence for v in prefix.variants]
    assert any(v.divergence is not None for v in batched.variants)  # decoding was exercised
    assert batched.decode.fallbacks >= 1  # and a near tie settled by generate's computation
    assert float(np.abs(batched.full_rows - prefix.full_rows).max()) <= ROW_TOLERANCE
    for b, p in zip(batched.variants, prefix.variants, strict=True):
        assert b.rows.shape == p.rows.shape == (len(realised), model.vocab_size)
        assert float(np.abs(b.rows - p.rows).max()) <= ROW_TOLERANCE
        assert np.allclose(b.generation.logprobs, p.generation.logprobs, atol=ROW_TOLERANCE)
    # each prompt is fed whole (no shared prefix), so more tokens than the prefix path
    assert batched.forward_tokens > prefix.forward_tokens
    kept = [(v, p) for v, p in zip(batched.variants, variants, strict=True) if v.divergence is None]
    assert kept  # some ablation leaves the output where it is: nothing decoded for it
    for v, p in kept:
        assert v.forward_tokens == len(model.encode(p)) + len(realised) - 1


def test_the_batch_size_comes_from_the_device_or_the_environment(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from pytest_provenai.subject.backends.transformers_backend import (
        ABLATION_BATCH_ENV,
        GPU_ABLATION_BATCH_ROWS,
        ablation_batch_rows,
    )

    monkeypatch.delenv(ABLATION_BATCH_ENV, raising=False)
    assert ablation_batch_rows("cpu") == 1
    assert ablation_batch_rows("cuda:0") == ablation_batch_rows("mps") == GPU_ABLATION_BATCH_ROWS
    monkeypatch.setenv(ABLATION_BATCH_ENV, " 4 ")
    assert ablation_batch_rows("cpu") == ablation_batch_rows("cuda:1") == 4
    for bad in ["0", "-2", "four", "1.5"]:
        monkeypatch.setenv(ABLATION_BATCH_ENV, bad)
        with pytest.raises(BackendError, match=rf"\$PROVENAI_ABLATION_BATCH='{bad}' must be"):
            ablation_batch_rows("cpu")


def test_a_bad_batch_size_fails_opening_the_backend(
    model: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("PROVENAI_ABLATION_BATCH", "none")
    with pytest.raises(BackendError, match=r"^\$PROVENAI_ABLATION_BATCH='none' must be"):
        load_generator("transformers", None)


def test_a_bad_batch_size_is_a_usage_error_before_any_test(
    pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch
) -> None:
    pytester.makepyfile("def test_x():\n    pass\n")
    monkeypatch.setenv("PROVENAI_ABLATION_BATCH", "abc")
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider")
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    result.stderr.fnmatch_lines(["ERROR: $PROVENAI_ABLATION_BATCH='abc' must be a whole number*"])
    assert "Traceback" not in result.stderr.str() and "test_x" not in result.stdout.str()

"""transformers vs mlx on the embedded default model: same greedy tokens, same logprobs.

Both backends load the same converted float32 folder. Skipped only when mlx cannot be
imported (e.g. Linux without ``pip install 'mlx[cpu]' mlx-lm``).
"""

from __future__ import annotations

import importlib.util
from typing import Any

import numpy as np
import pytest
from facts_prompts import ablated

from pytest_provenai.errors import BackendError
from pytest_provenai.subject.backends import Decoding, load_generator
from pytest_provenai.subject.backends import default_model as dm
from pytest_provenai.subject.backends.libraries import preload_mlx_blas


def _mlx_unavailable() -> str | None:
    # Import mlx.core only (not mlx_lm: it imports torch, which must be imported after the
    # backend's own set-up, see libraries.prepare_torch_import). An opt-in
    # $PROVENAI_MLX_BLAS must be loaded before mlx.core is first imported.
    preload_mlx_blas()
    hint = "install with: pip install 'mlx[cpu]' mlx-lm"
    try:
        import mlx.core  # noqa: F401
    except (ImportError, OSError) as exc:
        return f"mlx is not importable ({exc}); {hint}"
    if importlib.util.find_spec("mlx_lm") is None:
        return f"mlx-lm is not installed; {hint}"
    return None


_SKIP = _mlx_unavailable()
# both backends load the real model; mlx[cpu] on Linux is slow
pytestmark = [pytest.mark.skipif(_SKIP is not None, reason=_SKIP or ""), pytest.mark.slow]

PROMPTS = [
    "What is the capital of France?",
    "Name three primary colors.",
    "Who wrote Hamlet? Answer briefly.",
    "Is water wet? Answer yes or no.",
]
MAX_NEW = 16
TOL = 1e-3


@pytest.fixture(scope="module")
def pair() -> tuple[Any, Any]:
    try:
        dm.default_gguf_path()
    except BackendError as exc:
        pytest.skip(str(exc))
    decoding = Decoding(max_new_tokens=MAX_NEW)
    return (
        load_generator("transformers", None, decoding=decoding),
        load_generator("mlx", None, decoding=decoding),
    )


def test_same_model_identity(pair: tuple[Any, Any]) -> None:
    t, m = pair
    assert t.identity.model_key() == m.identity.model_key()
    assert (t.identity.backend, m.identity.backend) == ("transformers", "mlx")
    assert t.identity.dtype == m.identity.dtype == "float32"
    assert t.stop_ids == m.stop_ids


@pytest.mark.parametrize("question", PROMPTS)
def test_greedy_tokens_and_logprobs_agree(pair: tuple[Any, Any], question: str) -> None:
    t, m = pair
    # A short system message keeps the prompts short: mlx[cpu]'s bundled reference BLAS
    # makes every prompt token cost ~0.1 s on Linux.
    messages = [
        {"role": "system", "content": "Answer briefly."},
        {"role": "user", "content": question},
    ]
    prompt = t.render_chat(messages)
    assert m.render_chat(messages) == prompt
    assert m.encode(prompt) == t.encode(prompt)

    gt, gm = t.generate(prompt), m.generate(prompt)
    assert gm.token_ids == gt.token_ids
    assert gm.text == gt.text
    assert gm.finish_reason == gt.finish_reason
    assert np.abs(np.subtract(gm.logprobs, gt.logprobs)).max() <= TOL

    st, sm = t.score(prompt, gt.token_ids), m.score(prompt, gt.token_ids)
    assert st.shape == sm.shape == (len(gt.token_ids), t.vocab_size)
    assert sm.dtype == np.float32
    assert float(np.abs(st - sm).max()) <= TOL
    # Each backend's score agrees with its own generate at the chosen ids.
    idx = np.arange(len(gt.token_ids))
    assert np.abs(sm[idx, gm.token_ids] - np.asarray(gm.logprobs)).max() <= 1e-4


# A tie margin wide enough that some decoding steps are near ties (replayed by generate's own
# computation), narrow enough that few are: each replay re-runs the prompt. The divergent
# ablations' closest top-two gaps are 0.05, 0.16 and 0.16 nats: 3 replays in the ablation
# pass and 2 in generate_many at 0.2 (7 and 5 at 0.5, which took 1.5x as long).
WIDE_MARGIN = 0.2


def test_mlx_fast_paths_give_mlx_naive_outputs(pair: tuple[Any, Any]) -> None:
    """mlx's ablation_pass (prefix KV reuse through mlx-lm's trimmable caches, speculative
    re-alignment) and generate_many give exactly mlx's own generate outputs, on short real
    prompts (mlx[cpu] on Linux is slow); with a wide tie margin (:data:`WIDE_MARGIN`) some
    tokens are near ties, settled by replaying generate's computation, and the outputs do
    not move."""
    _, m = pair
    full, variants = ablated(m)
    realised = m.generate(full).token_ids
    naive = [m.generate(v).token_ids for v in variants]

    result = m.ablation_pass(full, variants, realised)
    assert [v.generation.token_ids for v in result.variants] == naive
    assert any(v.divergence is not None for v in result.variants)  # decoding was exercised
    assert float(np.abs(result.full_rows - m.score(full, realised)).max()) <= 1e-4
    for v, n in zip(result.variants, naive, strict=True):
        if v.divergence is None:
            assert v.generation.token_ids == realised == n

    tight = m.ablation_pass(full, variants, realised, margin=WIDE_MARGIN)
    assert [v.generation.token_ids for v in tight.variants] == naive
    assert tight.decode.fallbacks >= 1

    many = m.generate_many(variants[:2], margin=WIDE_MARGIN)
    assert [g.token_ids for g in many.generations] == naive[:2]

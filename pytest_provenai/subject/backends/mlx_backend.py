"""The ``mlx`` backend: a local HF-format folder run by mlx-lm (float32).

Same conventions as the transformers backend (see ``transformers_backend``): greedy
decoding with an own KV-cached loop (``mlx_lm.models.cache.make_prompt_cache``),
``token_ids`` include the final stop token when ``finish_reason == "stop"``, one logprob
per decoding step, ``score`` returns a numpy float32 ``[len(continuation), vocab]`` array of
log-softmax rows from one teacher-forced forward pass, prompts tokenised without adding
special tokens, stop ids from ``_common.stop_token_ids`` (identical for both backends).

Floating weights are kept in (or cast to) float32 so the backends agree on logprobs;
mlx-quantised folders are run as they are and report ``dtype="quantized-<bits>bit"``.
The device is applied per call with ``mx.stream`` (no process-wide default is changed).
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, cast

from ...errors import BackendError
from ._common import (
    LocalModelGenerator,
    check_continuation_ids,
    library_versions,
    open_model_folder,
    preload_mlx_blas,
    preloaded_mlx_blas,
    prepare_torch_import,
    resolve_device_mlx,
    stop_token_ids,
)
from .base import Decoding, Generation, Identity
from .default_model import quiet_hf_progress

PREFILL_STEP = 2048


def _cache_offset(cache: list[Any]) -> int:
    return int(getattr(cache[0], "offset", -1)) if cache else -1


class MLXGenerator(LocalModelGenerator):
    """A local HF-format model run greedily by mlx-lm."""

    def __init__(
        self,
        folder: str | os.PathLike[str],
        *,
        device: str = "cpu",
        decoding: Decoding | None = None,
        name: str | None = None,
        weights_sha256: str | None = None,
    ) -> None:
        preload_mlx_blas()  # before mlx.core loads (opt-in, $PROVENAI_MLX_BLAS)
        prepare_torch_import()  # mlx-lm's tokenizer loading imports transformers (+ torch)
        import mlx.core as mx
        import mlx_lm

        self.folder, self.decoding, name, weights_sha256 = open_model_folder(
            folder, decoding, name, weights_sha256
        )
        if not any(p.suffix == ".safetensors" for p in self.folder.iterdir()):
            raise BackendError(
                f"model folder {self.folder} has no *.safetensors weights, which mlx needs; "
                "re-save it with save_pretrained(safe_serialization=True) or use "
                "--provenai-backend transformers"
            )
        self.device = resolve_device_mlx(device)
        self._mx_device = mx.cpu if self.device == "cpu" else mx.gpu
        try:
            config = json.loads((self.folder / "config.json").read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise BackendError(f"{self.folder}/config.json is not valid JSON: {exc}") from exc
        quant = config.get("quantization") or config.get("quantization_config")
        try:
            with quiet_hf_progress(), mx.stream(self._mx_device):
                loaded = mlx_lm.load(str(self.folder))
                self.model: Any = loaded[0]
                wrapper: Any = loaded[1]
                if quant is None:
                    self.model.set_dtype(mx.float32)
                mx.eval(self.model.parameters())
        except (OSError, ValueError, KeyError, RuntimeError) as exc:
            raise BackendError(
                f"mlx-lm could not load the model folder {self.folder}: "
                f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
            ) from exc
        with mx.stream(self._mx_device):
            # Shapes are known without evaluating (mlx is lazy): no compute spent here.
            self.vocab_size = int(self.model(mx.array([[0]], dtype=mx.int32)).shape[-1])
        # The HF tokenizer inside mlx-lm's wrapper: same tokenisation as transformers.
        self.tokenizer: Any = getattr(wrapper, "_tokenizer", wrapper)
        self.stop_ids = stop_token_ids(self.folder, self.tokenizer)
        self._use_backbone = True
        if isinstance(quant, dict) and "bits" in quant:
            dtype = f"quantized-{quant['bits']}bit"
        elif quant is not None:
            dtype = "quantized"
        else:
            dtype = "float32"
        libraries = library_versions("mlx", "mlx-lm")
        blas = preloaded_mlx_blas()
        if blas:
            libraries["blas"] = Path(blas).name
        self._identity = Identity(
            backend="mlx",
            name=name,
            weights_sha256=weights_sha256,
            dtype=dtype,
            decoding=self.decoding,
            device=self.device,
            libraries=libraries,
        )

    # ------------------------------------------------------------------ protocol
    # identity, capabilities, render_chat and encode come from LocalModelGenerator

    def generate(self, prompt: str) -> Generation:
        import mlx.core as mx

        prompt_ids = self.encode(prompt)
        max_new = int(self.decoding.max_new_tokens)
        if max_new <= 0:
            return Generation(text="", token_ids=[], logprobs=[], finish_reason="length")
        token_ids: list[int] = []
        logprobs: list[float] = []
        finish = "length"
        with mx.stream(self._mx_device):
            cache = self._prefilled_cache(prompt_ids[:-1])
            logits = self.model(mx.array([prompt_ids[-1:]], dtype=mx.int32), cache=cache)[0, -1]
            for step in range(max_new):
                logits = logits.astype(mx.float32)
                lp = logits - mx.logsumexp(logits, axis=-1, keepdims=True)
                tok_arr = mx.argmax(lp, axis=-1)
                mx.eval(tok_arr, lp)
                tok = int(cast(Any, tok_arr.item()))
                token_ids.append(tok)
                logprobs.append(float(lp[tok].item()))
                if tok in self.stop_ids:
                    finish = "stop"
                    break
                if step == max_new - 1:
                    break
                logits = self.model(mx.array([[tok]], dtype=mx.int32), cache=cache)[0, -1]
        text = self.tokenizer.decode(token_ids, skip_special_tokens=True)
        return Generation(
            text=str(text), token_ids=token_ids, logprobs=logprobs, finish_reason=finish
        )

    def _prefilled_cache(self, ids: list[int]) -> list[Any]:
        """A fresh KV cache with ``ids`` run through the model (no logits needed).

        Uses the backbone (``model.model``, as in mlx-lm's llama/qwen/mistral/...
        wrappers) so the vocabulary projection is not computed for every prompt position
        (~17% of the prefill FLOPs for SmolLM2); falls back to the full model when there
        is no backbone or it did not advance the cache. Chunked like mlx-lm's prefill.
        """
        from mlx_lm.models.cache import make_prompt_cache

        if self._use_backbone:
            backbone = getattr(self.model, "model", None)
            cache = make_prompt_cache(self.model)
            try:
                if backbone is None:
                    raise AttributeError("no backbone")
                self._run_chunks(backbone, ids, cache)
                if ids and _cache_offset(cache) != len(ids):
                    raise ValueError("backbone did not fill the cache")
                return cache
            except (TypeError, AttributeError, ValueError):
                self._use_backbone = False  # unknown layout: use the full model from now on
        cache = make_prompt_cache(self.model)
        self._run_chunks(self.model, ids, cache)
        return cache

    @staticmethod
    def _run_chunks(fn: Any, ids: list[int], cache: list[Any]) -> None:
        import mlx.core as mx

        for start in range(0, len(ids), PREFILL_STEP):
            fn(mx.array([ids[start : start + PREFILL_STEP]], dtype=mx.int32), cache=cache)
            mx.eval([c.state for c in cache])

    def score(self, prompt: str, continuation_ids: list[int]) -> Any:
        """numpy float32 ``[len(continuation_ids), vocab]`` log-softmax rows."""
        import mlx.core as mx
        import numpy as np

        prompt_ids = self.encode(prompt)
        vocab = self.vocab_size
        cont = check_continuation_ids(continuation_ids, vocab)
        if not cont:
            return np.zeros((0, vocab), dtype=np.float32)
        with mx.stream(self._mx_device):
            # Teacher forcing in one pass over the positions that predict the continuation:
            # the prompt (but its last token) only fills the KV cache, then the last prompt
            # token + the continuation (but its last token, which is only predicted) give
            # exactly len(cont) logit rows.
            cache = self._prefilled_cache(prompt_ids[:-1])
            feed = prompt_ids[-1:] + cont[:-1]
            logits = self.model(mx.array([feed], dtype=mx.int32), cache=cache)[0]
            rows = logits[-len(cont) :].astype(mx.float32)
            lp = rows - mx.logsumexp(rows, axis=-1, keepdims=True)
            mx.eval(lp)
            arr = np.array(lp, dtype=np.float32)
        assert arr.shape == (len(cont), vocab), arr.shape
        return arr

"""The ``mlx`` backend: a local HF-format folder run by mlx-lm (float32).

Same conventions as the transformers backend (see ``transformers_backend``): greedy
decoding with an own KV-cached loop (``mlx_lm.models.cache.make_prompt_cache``),
``token_ids`` include the final stop token when ``finish_reason == "stop"``, one logprob
per decoding step, ``score`` returns a numpy float32 ``[len(continuation), vocab]`` array of
log-softmax rows from one teacher-forced forward pass, prompts tokenised without adding
special tokens, stop ids from ``tokenizer.stop_token_ids`` (identical for both backends).

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
from .base import (
    TIE_MARGIN,
    AblationPass,
    DecodeStats,
    Decoding,
    Generation,
    GenerationBatch,
    Identity,
    VariantPass,
)
from .default_model import quiet_hf_progress
from .devices import resolve_device_mlx
from .divergence import common_prefix, first_divergence, shared_prefix, token_margins
from .libraries import library_versions, preload_mlx_blas, preloaded_mlx_blas, prepare_torch_import
from .local import LocalModelGenerator, generate_tokens, open_model_folder
from .mlx_speculative import MLXSpeculativeDecoding, cache_offset, top2_gap
from .speculative import Drafter
from .tokenizer import check_continuation_ids, stop_token_ids

PREFILL_STEP = 2048


def mlx_identity(
    folder: Path, name: str, weights_sha256: str, decoding: Decoding, device: str
) -> Identity:
    """The identity an :class:`MLXGenerator` reports, known without loading it: floating
    weights run as float32, mlx-quantised folders as they are."""
    quant = _quantization(folder)
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
    return Identity(
        backend="mlx",
        name=name,
        weights_sha256=weights_sha256,
        dtype=dtype,
        decoding=decoding,
        device=device,
        libraries=libraries,
    )


def _quantization(folder: Path) -> Any:
    try:
        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise BackendError(f"{folder}/config.json is not valid JSON: {exc}") from exc
    if not isinstance(config, dict):
        raise BackendError(f"{folder}/config.json is not a JSON object")
    return config.get("quantization") or config.get("quantization_config")


class MLXGenerator(MLXSpeculativeDecoding, LocalModelGenerator):
    """A local HF-format model run greedily by mlx-lm. ``tokenizer``: the folder's tokenizer
    when the caller already loaded it (else mlx-lm's)."""

    def __init__(
        self,
        folder: str | os.PathLike[str],
        *,
        device: str = "cpu",
        decoding: Decoding | None = None,
        name: str | None = None,
        weights_sha256: str | None = None,
        tokenizer: Any = None,
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
        quant = _quantization(self.folder)
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
        self.tokenizer: Any = (
            tokenizer if tokenizer is not None else getattr(wrapper, "_tokenizer", wrapper)
        )
        self.stop_ids = stop_token_ids(self.folder, self.tokenizer)
        self._use_backbone = True
        self._identity = mlx_identity(self.folder, name, weights_sha256, self.decoding, self.device)

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
        margins: list[float] = []
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
                margins.append(top2_gap(lp))
                if tok in self.stop_ids:
                    finish = "stop"
                    break
                if step == max_new - 1:
                    break
                logits = self.model(mx.array([[tok]], dtype=mx.int32), cache=cache)[0, -1]
        text = self.tokenizer.decode(token_ids, skip_special_tokens=True)
        return Generation(str(text), token_ids, logprobs, finish, margins)

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
                if ids and cache_offset(cache) != len(ids):
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

    # ------------------------------------------------------------------ fast paths
    def _extend(self, cache: list[Any], ids: list[int]) -> None:
        """Run ``ids`` into ``cache`` without logits (the backbone, where it was usable)."""
        if not ids:
            return
        backbone = getattr(self.model, "model", None) if self._use_backbone else None
        self._run_chunks(backbone if backbone is not None else self.model, ids, cache)

    def _rows(self, cache: list[Any], ids: list[int], n: int) -> Any:
        """Feed ``ids`` into ``cache``; numpy float32 log-softmax rows of the last ``n``."""
        import mlx.core as mx
        import numpy as np

        logits = self.model(mx.array([ids], dtype=mx.int32), cache=cache)[0]
        rows = logits[-n:].astype(mx.float32)
        lp = rows - mx.logsumexp(rows, axis=-1, keepdims=True)
        mx.eval(lp)
        return np.array(lp, dtype=np.float32)

    def _cache_at(self, cache: list[Any], tokens: list[int], length: int) -> list[Any]:
        """``cache`` (which holds a prefix of ``tokens``) shortened to ``length`` positions:
        trimmed in place (mlx-lm's trimmable caches), or rebuilt where a layer cannot trim."""
        from mlx_lm.models.cache import can_trim_prompt_cache, trim_prompt_cache

        offset = cache_offset(cache)
        if offset <= length:
            return cache
        if can_trim_prompt_cache(cache):
            trim_prompt_cache(cache, offset - length)
            return cache
        return self._prefilled_cache(tokens[:length])

    def ablation_pass(
        self,
        prompt: str,
        variants: list[str],
        continuation: list[int],
        *,
        margin: float = TIE_MARGIN,
    ) -> AblationPass:
        """Leave-one-out ablation with prefix KV reuse; the same contract and the same steps
        as the transformers backend's ``ablation_pass``: one pass over the full prompt +
        realised output, then per variant (in order of decreasing shared prefix) the cache
        trimmed back to the prefix it shares with the prompt and only the rest fed, the same
        divergence test, and a divergent variant decoded right there from its divergent
        position by speculative re-alignment (one variant at a time: the next variant trims
        the cache back below everything decoded). A near tie is settled by replaying
        ``generate``'s computation up to it."""
        import mlx.core as mx
        import numpy as np

        cont = check_continuation_ids(continuation, self.vocab_size)
        if not cont:
            raise ValueError("ablation_pass needs a non-empty continuation")
        max_new = int(self.decoding.max_new_tokens)
        full_ids = self.encode(prompt)
        n_cont = len(cont)
        out: list[VariantPass | None] = [None] * len(variants)
        total = len(full_ids) + n_cont - 1
        with mx.stream(self._mx_device):
            cache = self._prefilled_cache(full_ids[:-1])
            full_rows = self._rows(cache, full_ids[-1:] + cont[:-1], n_cont)
            tokens = full_ids + cont[:-1]
            encoded = [self.encode(v) for v in variants]
            shared = [min(common_prefix(full_ids, ids), len(ids) - 1) for ids in encoded]
            for j in sorted(range(len(variants)), key=lambda j: -shared[j]):
                ids, keep = encoded[j], shared[j]
                cache = self._cache_at(cache, tokens, keep)
                self._extend(cache, ids[keep:-1])
                rows = self._rows(cache, ids[-1:] + cont[:-1], n_cont)
                tokens = ids + cont[:-1]
                used = len(ids) - keep + n_cont - 1
                stats = DecodeStats()
                div = first_divergence(rows, cont, margin)
                generation: Generation | None
                if div is None:
                    generation = Generation(
                        text=self.decode(cont),
                        token_ids=list(cont),
                        logprobs=[float(rows[t, tok]) for t, tok in enumerate(cont)],
                        finish_reason="stop" if cont[-1] in self.stop_ids else "length",
                        margins=token_margins(rows, cont),
                    )
                else:
                    history = ids + cont[:div]
                    cache = self._cache_at(cache, tokens, len(history) - 1)
                    generation, stats, fed = self._decode_settled(
                        cache,
                        ids,
                        forced=cont[:div],
                        lead=[float(rows[t, tok]) for t, tok in enumerate(cont[:div])],
                        lead_margins=token_margins(rows, cont[:div]),
                        drafter=Drafter(ids, cont),
                        hint=[int(np.argmax(rows[div]))],
                        max_new=max_new,
                        margin=margin,
                    )
                    used += fed
                    tokens = history[:-1]  # what the cache is known to hold below the decoding
                out[j] = VariantPass(
                    rows=rows,
                    generation=generation,
                    divergence=div,
                    forward_tokens=used,
                    decode=stats,
                )
                total += used
        variants_out = [v for v in out if v is not None]
        assert len(variants_out) == len(variants)
        return AblationPass(full_rows=full_rows, variants=variants_out, forward_tokens=total)

    def generate_many(self, prompts: list[str], *, margin: float = TIE_MARGIN) -> GenerationBatch:
        """Greedy generations of several prompts, each identical to :meth:`generate` of it:
        the common token prefix is run once, each prompt feeds only the rest (the cache
        trimmed back in between) and is decoded by speculative re-alignment (prompt lookup);
        a near tie is settled by replaying ``generate``'s computation up to it."""
        import mlx.core as mx

        if not prompts:
            return GenerationBatch(generations=[], forward_tokens=0)
        max_new = int(self.decoding.max_new_tokens)
        encoded = [self.encode(p) for p in prompts]
        if max_new <= 0 or len(prompts) == 1 or min(len(e) for e in encoded) < 2:
            plain = [self.generate(p) for p in prompts]
            fed = sum(generate_tokens(len(e), g) for e, g in zip(encoded, plain, strict=True))
            return GenerationBatch(generations=plain, forward_tokens=fed)
        shared = shared_prefix(encoded)
        total = shared
        stats = DecodeStats()
        gens: list[Generation] = []
        with mx.stream(self._mx_device):
            cache = self._prefilled_cache(encoded[0][:shared])
            tokens = encoded[0][:shared]
            for ids in encoded:
                cache = self._cache_at(cache, tokens, shared)
                self._extend(cache, ids[shared:-1])
                total += len(ids) - 1 - shared
                tokens = ids[:-1]
                generation, one, fed = self._decode_settled(
                    cache,
                    ids,
                    forced=[],
                    lead=[],
                    lead_margins=[],
                    drafter=Drafter(ids),
                    hint=[],
                    max_new=max_new,
                    margin=margin,
                )
                total += fed
                stats.add(one)
                gens.append(generation)
        return GenerationBatch(generations=gens, forward_tokens=total, decode=stats)

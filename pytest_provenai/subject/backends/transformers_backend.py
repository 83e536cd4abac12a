"""The ``transformers`` backend: a local HF-format folder run by PyTorch (float32).

Conventions (shared with the mlx backend):

- ``generate`` decodes greedily with its own KV-cached loop (no sampling, no repetition
  penalty, no generation_config overrides). ``token_ids`` are all tokens the model chose,
  *including* the final stop (EOS) token when ``finish_reason == "stop"`` (as
  ``model.generate`` returns them); ``logprobs[i]`` is the log-softmax probability of
  ``token_ids[i]`` at its step, so both lists have one entry per decoding step. ``text``
  is the decode of ``token_ids`` with special tokens skipped (so it never shows the EOS).
  ``finish_reason`` is ``"length"`` when ``max_new_tokens`` ran out first.
- ``score(prompt, continuation_ids)`` returns a numpy ``float32`` array of shape
  ``[len(continuation_ids), vocab]``: row ``i`` is the full-vocabulary log-softmax that
  predicts ``continuation_ids[i]`` given the prompt and ``continuation_ids[:i]`` (teacher
  forcing, one forward pass). ``score(p, g.token_ids)[i, g.token_ids[i]] ≈ g.logprobs[i]``.
- Prompts are tokenised without adding special tokens: the rendered chat template already
  contains them.
"""

from __future__ import annotations

import inspect
import os
from dataclasses import dataclass
from typing import Any

from ...errors import BackendError
from ._common import (
    LocalModelGenerator,
    check_continuation_ids,
    first_divergence,
    library_versions,
    open_model_folder,
    prepare_torch_import,
    resolve_device_torch,
    stop_token_ids,
)
from .base import TIE_MARGIN, AblationPass, Decoding, Generation, Identity, VariantPass
from .default_model import quiet_hf_progress

THREADS_ENV = "PROVENAI_NUM_THREADS"

_threads_configured = False


def default_num_threads() -> int:
    """CPU threads for one worker: all usable cores divided among xdist workers."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    try:
        workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    except ValueError:
        workers = 1
    return max(1, cores // max(1, workers))


def configure_torch_threads() -> int | None:
    """Set torch's intra-op threads once per process.

    ``$PROVENAI_NUM_THREADS`` wins; else, if ``$OMP_NUM_THREADS`` is set, torch's own
    choice is kept; else cores // xdist workers (so ``-n 2`` on 2 cores does not run 2×2
    threads). Returns the number set, or None when left alone.
    """
    global _threads_configured
    import torch

    if _threads_configured:
        return None
    _threads_configured = True
    env = os.environ.get(THREADS_ENV, "").strip()
    if env:
        try:
            n = int(env)
        except ValueError as exc:
            raise BackendError(
                f"${THREADS_ENV}={env!r} is not a whole number; set it to e.g. 4 or unset it"
            ) from exc
        if n < 1:
            raise BackendError(f"${THREADS_ENV}={env!r} must be at least 1")
    elif os.environ.get("OMP_NUM_THREADS"):
        return None
    else:
        n = default_num_threads()
    torch.set_num_threads(n)
    return n


class TransformersGenerator(LocalModelGenerator):
    """A local HF-format model run greedily by transformers/torch in float32."""

    def __init__(
        self,
        folder: str | os.PathLike[str],
        *,
        device: str = "cpu",
        decoding: Decoding | None = None,
        name: str | None = None,
        weights_sha256: str | None = None,
    ) -> None:
        prepare_torch_import()
        import torch
        import transformers

        tf: Any = transformers  # the stubs are partial; keep mypy --strict quiet
        self.folder, self.decoding, name, weights_sha256 = open_model_folder(
            folder, decoding, name, weights_sha256
        )
        self.device = resolve_device_torch(device)
        if self.device == "cpu":
            configure_torch_threads()
        try:
            with quiet_hf_progress():
                self.tokenizer: Any = tf.AutoTokenizer.from_pretrained(
                    str(self.folder), local_files_only=True
                )
                model: Any = tf.AutoModelForCausalLM.from_pretrained(
                    str(self.folder), dtype=torch.float32, local_files_only=True
                )
        except (OSError, ValueError, KeyError, RuntimeError) as exc:
            raise BackendError(
                f"transformers could not load the model folder {self.folder}: "
                f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
            ) from exc
        model.eval()
        self.model: Any = model.to(self.device)
        self._torch_device = torch.device(self.device)
        self._supports_keep = True
        # transformers >= 5.2x renamed the KV-cache argument/output past_key_values → cache.
        params = inspect.signature(self.model.forward).parameters
        self._cache_kw = "cache" if "cache" in params else "past_key_values"
        self.stop_ids = stop_token_ids(self.folder, self.tokenizer)
        self._identity = Identity(
            backend="transformers",
            name=name,
            weights_sha256=weights_sha256,
            dtype="float32",
            decoding=self.decoding,
            device=self.device,
            libraries=library_versions("torch", "transformers"),
        )

    # ------------------------------------------------------------------ protocol
    # identity, capabilities, render_chat and encode come from LocalModelGenerator

    @property
    def vocab_size(self) -> int:
        return int(self.model.get_output_embeddings().weight.shape[0])

    def generate(self, prompt: str) -> Generation:
        import torch

        prompt_ids = self.encode(prompt)
        max_new = int(self.decoding.max_new_tokens)
        token_ids: list[int] = []
        logprobs: list[float] = []
        finish = "length"
        if max_new <= 0:
            return Generation(text="", token_ids=[], logprobs=[], finish_reason="length")
        dev = self._torch_device
        with torch.inference_mode():
            out = self._forward(
                torch.tensor([prompt_ids], dtype=torch.long, device=dev), keep=1, cache=True
            )
            past = self._cache_of(out)
            logits = out.logits[0, -1]
            for step in range(max_new):
                lp = torch.log_softmax(logits.to(torch.float32), dim=-1)
                tok = int(torch.argmax(lp).item())
                token_ids.append(tok)
                logprobs.append(float(lp[tok].item()))
                if tok in self.stop_ids:
                    finish = "stop"
                    break
                if step == max_new - 1:
                    break
                out = self.model(
                    input_ids=torch.tensor([[tok]], dtype=torch.long, device=dev),
                    use_cache=True,
                    **{self._cache_kw: past},
                )
                past = self._cache_of(out)
                logits = out.logits[0, -1]
        text = self.tokenizer.decode(token_ids, skip_special_tokens=True)
        return Generation(
            text=str(text), token_ids=token_ids, logprobs=logprobs, finish_reason=finish
        )

    def _cache_of(self, out: Any) -> Any:
        return getattr(out, self._cache_kw)

    def _forward(self, input_ids: Any, *, keep: int, cache: bool) -> Any:
        """One forward pass computing logits only for the last ``keep`` positions
        (``logits_to_keep``; models without that argument compute all and are sliced)."""
        if self._supports_keep:
            try:
                return self.model(input_ids=input_ids, use_cache=cache, logits_to_keep=keep)
            except TypeError:
                self._supports_keep = False
        return self.model(input_ids=input_ids, use_cache=cache)

    def score(self, prompt: str, continuation_ids: list[int]) -> Any:
        """numpy float32 ``[len(continuation_ids), vocab]`` log-softmax rows (see module)."""
        import numpy as np
        import torch

        prompt_ids = self.encode(prompt)
        vocab = self.vocab_size
        cont = check_continuation_ids(continuation_ids, vocab)
        if not cont:
            return np.zeros((0, vocab), dtype=np.float32)
        # The last continuation token is only predicted, never fed.
        ids = prompt_ids + cont[:-1]
        with torch.inference_mode():
            out = self._forward(
                torch.tensor([ids], dtype=torch.long, device=self._torch_device),
                keep=len(cont),
                cache=False,
            )
            lp = torch.log_softmax(out.logits[0, -len(cont) :].to(torch.float32), dim=-1)
        arr = lp.cpu().numpy().astype(np.float32, copy=False)
        assert arr.shape == (len(cont), vocab), arr.shape
        return arr

    # ------------------------------------------------------------------ ablation fast path
    def ablation_pass(
        self,
        prompt: str,
        variants: list[str],
        continuation: list[int],
        *,
        margin: float = TIE_MARGIN,
    ) -> AblationPass:
        """Leave-one-out ablation of ``prompt`` with KV-cache reuse; exact greedy results.

        ``continuation`` is the realised greedy output of ``prompt`` (``token_ids``, with the
        final stop token when it stopped).

        1. One forward pass over ``prompt + continuation[:-1]`` fills the KV cache and gives
           the full-context rows.
        2. Each variant shares a token prefix with ``prompt`` (everything before the removed
           resource); the cache is cropped to that prefix and only the rest of the variant
           plus the teacher-forced continuation is fed. Variants are visited in order of
           decreasing shared prefix, so each crop only shortens the cache. If every
           teacher-forced argmax equals the realised token by more than ``margin``, greedy
           decoding of the variant *is* the continuation (same tokens, same stop) and nothing
           is regenerated. Otherwise the cache up to the first such position is kept aside.
        3. The variants that diverged are decoded greedily *together*, one batched step at a
           time (left-padded caches, explicit positions), from their divergent positions:
           decoding is bound by reading the weights, so a step for all of them costs little
           more than a step for one. A near tie (top-two gap below ``margin``) in the batch is
           not trusted: that variant is decoded again on its own from its divergent position.
        """
        import numpy as np
        import torch

        cont = check_continuation_ids(continuation, self.vocab_size)
        if not cont:
            raise ValueError("ablation_pass needs a non-empty continuation")
        max_new = int(self.decoding.max_new_tokens)
        full_ids = self.encode(prompt)
        dev = self._torch_device
        n_cont = len(cont)

        def log_rows(logits: Any) -> Any:
            lp = torch.log_softmax(logits.to(torch.float32), dim=-1)
            return lp.cpu().numpy().astype(np.float32, copy=False)

        rows_of: list[Any] = [None] * len(variants)
        gen_of: list[Generation | None] = [None] * len(variants)
        div_of: list[int | None] = [None] * len(variants)
        used_of = [0] * len(variants)
        pending: list[_Pending] = []
        total = 0
        with torch.inference_mode():
            out = self.model(
                input_ids=torch.tensor([full_ids + cont[:-1]], dtype=torch.long, device=dev),
                use_cache=True,
                logits_to_keep=n_cont,
            )
            total += len(full_ids) + n_cont - 1
            cache = self._cache_of(out)
            full_rows = log_rows(out.logits[0, -n_cont:])

            encoded = [self.encode(v) for v in variants]
            shared = [min(_common_prefix(full_ids, ids), len(ids) - 1) for ids in encoded]
            for j in sorted(range(len(variants)), key=lambda j: -shared[j]):
                ids, keep = encoded[j], shared[j]
                _crop_to(cache, keep)
                feed = ids[keep:] + cont[:-1]
                out = self.model(
                    input_ids=torch.tensor([feed], dtype=torch.long, device=dev),
                    use_cache=True,
                    logits_to_keep=n_cont,
                    **{self._cache_kw: cache},
                )
                cache = self._cache_of(out)
                used_of[j] = len(feed)
                rows = rows_of[j] = log_rows(out.logits[0, -n_cont:])
                div = div_of[j] = first_divergence(rows, cont, margin)
                if div is None:
                    gen_of[j] = Generation(
                        text=str(self.tokenizer.decode(cont, skip_special_tokens=True)),
                        token_ids=list(cont),
                        logprobs=[float(rows[t, tok]) for t, tok in enumerate(cont)],
                        finish_reason="stop" if cont[-1] in self.stop_ids else "length",
                    )
                else:
                    history = ids + cont[:div]
                    pending.append(
                        _Pending(
                            index=j,
                            prompt_ids=ids,
                            forced=cont[:div],
                            lead=[float(rows[t, tok]) for t, tok in enumerate(cont[:div])],
                            kv=_kv_prefix(cache, len(history) - 1),
                            feed=history[-1],
                        )
                    )
            del cache
            for item, (generation, fed) in zip(
                pending, self._decode_batch(pending, max_new, margin), strict=True
            ):
                gen_of[item.index] = generation
                used_of[item.index] += fed
        total += sum(used_of)
        variants_out = []
        for j in range(len(variants)):
            decoded = gen_of[j]
            assert decoded is not None
            variants_out.append(
                VariantPass(
                    rows=rows_of[j],
                    generation=decoded,
                    divergence=div_of[j],
                    forward_tokens=used_of[j],
                )
            )
        return AblationPass(full_rows=full_rows, variants=variants_out, forward_tokens=total)

    def _decode_batch(
        self, items: list[_Pending], max_new: int, margin: float
    ) -> list[tuple[Generation, int]]:
        """Greedy decoding of several prompts at once, each resuming after its known output
        prefix ``forced`` from its own saved KV prefix (see :meth:`ablation_pass`). Returns, in
        ``items`` order, each generation and the tokens fed for it."""
        import torch

        if not items:
            return []
        dev = self._torch_device
        width = max(it.kv_len for it in items)
        layers = []
        for layer in range(len(items[0].kv)):
            keys, values = [], []
            for it in items:
                k, v = it.kv[layer]
                pad = width - it.kv_len
                keys.append(torch.nn.functional.pad(k, (0, 0, pad, 0)))
                values.append(torch.nn.functional.pad(v, (0, 0, pad, 0)))
            layers.append((torch.cat(keys), torch.cat(values)))
        cache = _cache_from(layers)
        mask = torch.zeros((len(items), width), dtype=torch.long, device=dev)
        for b, it in enumerate(items):
            mask[b, width - it.kv_len :] = 1
        tokens = [list(it.forced) for it in items]
        logprobs: list[list[float]] = [list(it.lead) for it in items]
        fed = [0] * len(items)
        finish = ["length"] * len(items)
        retry: list[int] = []
        active = [b for b, it in enumerate(items) if len(it.forced) < max_new]
        feed = [items[b].feed for b in active]
        pos = [items[b].kv_len for b in active]
        with torch.inference_mode():
            while active:
                mask = torch.cat(
                    [mask, torch.ones((len(active), 1), dtype=torch.long, device=dev)], dim=1
                )
                out = self.model(
                    input_ids=torch.tensor([[t] for t in feed], dtype=torch.long, device=dev),
                    attention_mask=mask,
                    position_ids=torch.tensor([[p] for p in pos], dtype=torch.long, device=dev),
                    use_cache=True,
                    **{self._cache_kw: cache},
                )
                cache = self._cache_of(out)
                lp = torch.log_softmax(out.logits[:, -1].to(torch.float32), dim=-1)
                top = torch.topk(lp, 2, dim=-1)
                keep_rows: list[int] = []
                for row, b in enumerate(active):
                    fed[b] += 1
                    best, second = float(top.values[row, 0]), float(top.values[row, 1])
                    if best - second < margin:  # a near tie: decode this one alone
                        retry.append(b)
                        continue
                    tok = int(top.indices[row, 0])
                    tokens[b].append(tok)
                    logprobs[b].append(best)
                    if tok in self.stop_ids:
                        finish[b] = "stop"
                    elif len(tokens[b]) < max_new:
                        keep_rows.append(row)
                if len(keep_rows) < len(active):
                    index = torch.tensor(keep_rows, dtype=torch.long, device=dev)
                    cache.batch_select_indices(index)
                    mask = mask[index]
                feed = [tokens[active[r]][-1] for r in keep_rows]
                pos = [pos[r] + 1 for r in keep_rows]
                active = [active[r] for r in keep_rows]
        del cache
        results: list[tuple[Generation, int]] = []
        for b, it in enumerate(items):
            if b in retry:
                alone = _cache_from(it.kv)
                generation, steps = self._decode_from(
                    alone, it.prompt_ids, it.forced, it.lead, max_new
                )
                results.append((generation, fed[b] + steps))
                continue
            text = self.tokenizer.decode(tokens[b], skip_special_tokens=True)
            results.append(
                (
                    Generation(
                        text=str(text),
                        token_ids=tokens[b],
                        logprobs=logprobs[b],
                        finish_reason=finish[b],
                    ),
                    fed[b],
                )
            )
        return results

    def _decode_from(
        self,
        cache: Any,
        prompt_ids: list[int],
        forced: list[int],
        lead: list[float],
        max_new: int,
    ) -> tuple[Generation, int]:
        """Greedy decoding of ``prompt_ids`` whose first ``len(forced)`` output tokens are
        known, reusing ``cache`` (which holds at least ``prompt_ids + forced[:-1]``). The last
        known position is re-fed one token at a time, so every chosen token comes from the same
        single-step computation :meth:`generate` uses. Returns the generation and the number of
        tokens fed."""
        import torch

        dev = self._torch_device
        history = prompt_ids + forced
        _crop_to(cache, len(history) - 1)
        token_ids = list(forced)
        logprobs: list[float] = []
        feed = history[-1]
        fed = 0
        finish = "length"
        while len(token_ids) < max_new:
            out = self.model(
                input_ids=torch.tensor([[feed]], dtype=torch.long, device=dev),
                use_cache=True,
                **{self._cache_kw: cache},
            )
            fed += 1
            cache = self._cache_of(out)
            lp = torch.log_softmax(out.logits[0, -1].to(torch.float32), dim=-1)
            tok = int(torch.argmax(lp).item())
            token_ids.append(tok)
            logprobs.append(float(lp[tok].item()))
            if tok in self.stop_ids:
                finish = "stop"
                break
            feed = tok
        text = self.tokenizer.decode(token_ids, skip_special_tokens=True)
        return (
            Generation(
                text=str(text), token_ids=token_ids, logprobs=lead + logprobs, finish_reason=finish
            ),
            fed,
        )


@dataclass
class _Pending:
    """A variant whose greedy decoding leaves the realised output at ``len(forced)``: its
    prompt, the known output prefix (with its teacher-forced logprobs ``lead``), a copy of its
    KV cache for ``prompt_ids + forced[:-1]`` and the token to feed next."""

    index: int
    prompt_ids: list[int]
    forced: list[int]
    lead: list[float]
    kv: list[tuple[Any, Any]]
    feed: int

    @property
    def kv_len(self) -> int:
        return int(self.kv[0][0].shape[-2]) if self.kv else 0


def _kv_prefix(cache: Any, length: int) -> list[tuple[Any, Any]]:
    """Copies of every layer's keys and values for the first ``length`` positions."""
    return [
        (layer.keys[..., :length, :].clone(), layer.values[..., :length, :].clone())
        for layer in cache.layers
    ]


def _cache_from(layers: list[tuple[Any, Any]]) -> Any:
    """A transformers DynamicCache holding the given per-layer (keys, values)."""
    from transformers import DynamicCache

    cache = DynamicCache()
    for i, (k, v) in enumerate(layers):
        cache.update(k, v, i)
    return cache


def _common_prefix(a: list[int], b: list[int]) -> int:
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


def _crop_to(cache: Any, length: int) -> None:
    """Shorten a transformers KV cache to its first ``length`` positions (a negative
    argument to ``crop`` means "remove that many" in every transformers version)."""
    current = int(cache.get_seq_length())
    if current > length:
        cache.crop(length - current)

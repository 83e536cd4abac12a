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

import contextlib
import functools
import inspect
import itertools
import os
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

from ...errors import BackendError
from ._common import (
    LocalModelGenerator,
    check_continuation_ids,
    common_prefix,
    first_divergence,
    generate_tokens,
    library_versions,
    load_tokenizer,
    open_model_folder,
    prepare_torch_import,
    resolve_device_torch,
    shared_prefix,
    stop_token_ids,
)
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
from .speculative import Drafter, accept_block, block_width

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


def transformers_identity(
    name: str, weights_sha256: str, decoding: Decoding, device: str
) -> Identity:
    """The identity a :class:`TransformersGenerator` reports, known without loading it."""
    return Identity(
        backend="transformers",
        name=name,
        weights_sha256=weights_sha256,
        dtype="float32",
        decoding=decoding,
        device=device,
        libraries=library_versions("torch", "transformers"),
    )


class TransformersGenerator(LocalModelGenerator):
    """A local HF-format model run greedily by transformers/torch in float32.

    ``tokenizer``: the folder's tokenizer when the caller already loaded it
    (:func:`~._common.load_tokenizer`); loaded here otherwise."""

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
        self.tokenizer: Any = tokenizer if tokenizer is not None else load_tokenizer(self.folder)
        try:
            with quiet_hf_progress():
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
        self._identity = transformers_identity(name, weights_sha256, self.decoding, self.device)

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
        3. The variants that diverged are decoded together from their divergent positions by
           speculative re-alignment (:meth:`_decode_speculative`): drafts from the realised
           continuation and the variant's own prompt, checked a block per forward pass, a
           token taken only where it wins by more than ``margin``. Where a variant meets a near
           tie, ``generate``'s own computation is replayed up to there to settle it
           (:meth:`_settle`, counted in ``decode.fallbacks``) and the decoding goes on.
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
        stats_of = [DecodeStats() for _ in variants]
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
            shared = [min(common_prefix(full_ids, ids), len(ids) - 1) for ids in encoded]
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
                        text=self.decode(cont),
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
                            drafter=Drafter(ids, cont),
                            hint=[int(np.argmax(rows[div]))],
                        )
                    )
            del cache
            decoded = self._decode_speculative(pending, max_new, margin)
            for item, result in zip(pending, decoded, strict=True):
                j = item.index
                gen_of[j], stats_of[j], fed = self._settle(item, result, max_new, margin)
                used_of[j] += fed
        total += sum(used_of)
        variants_out = []
        for j in range(len(variants)):
            decoded_j = gen_of[j]
            assert decoded_j is not None
            variants_out.append(
                VariantPass(
                    rows=rows_of[j],
                    generation=decoded_j,
                    divergence=div_of[j],
                    forward_tokens=used_of[j],
                    decode=stats_of[j],
                )
            )
        return AblationPass(full_rows=full_rows, variants=variants_out, forward_tokens=total)

    def generate_many(self, prompts: list[str], *, margin: float = TIE_MARGIN) -> GenerationBatch:
        """Greedy generations of several prompts, each identical to :meth:`generate` of it.

        The common token prefix of all prompts is run once; each prompt then feeds only the
        rest (the cache cropped back to the prefix in between), and all are decoded together
        by speculative re-alignment (drafts by prompt lookup), a token taken only where it
        wins by more than ``margin``; a near tie is settled by replaying ``generate``'s own
        computation up to it (:meth:`_settle`).
        """
        import torch

        if not prompts:
            return GenerationBatch(generations=[], forward_tokens=0)
        max_new = int(self.decoding.max_new_tokens)
        encoded = [self.encode(p) for p in prompts]
        if max_new <= 0 or len(prompts) == 1 or min(len(e) for e in encoded) < 2:
            plain = [self.generate(p) for p in prompts]
            fed = sum(generate_tokens(len(e), g) for e, g in zip(encoded, plain, strict=True))
            return GenerationBatch(generations=plain, forward_tokens=fed)
        dev = self._torch_device
        shared = shared_prefix(encoded)
        total = shared
        pending: list[_Pending] = []
        with torch.inference_mode():
            cache: Any = None
            if shared:
                out = self._forward(
                    torch.tensor([encoded[0][:shared]], dtype=torch.long, device=dev),
                    keep=1,
                    cache=True,
                )
                cache = self._cache_of(out)
            for j, ids in enumerate(encoded):
                rest = ids[shared:-1]
                if rest:
                    if cache is not None:
                        _crop_to(cache, shared)
                    out = self.model(
                        input_ids=torch.tensor([rest], dtype=torch.long, device=dev),
                        use_cache=True,
                        logits_to_keep=1,
                        **({self._cache_kw: cache} if cache is not None else {}),
                    )
                    cache = self._cache_of(out)
                    total += len(rest)
                pending.append(
                    _Pending(
                        index=j,
                        prompt_ids=ids,
                        forced=[],
                        lead=[],
                        kv=_kv_prefix(cache, len(ids) - 1),
                        feed=ids[-1],
                        drafter=Drafter(ids),
                    )
                )
            del cache
            decoded = self._decode_speculative(pending, max_new, margin)
            gens: list[Generation] = []
            stats = DecodeStats()
            for item, result in zip(pending, decoded, strict=True):
                generation, one, fed = self._settle(item, result, max_new, margin)
                stats.add(one)
                total += fed
                gens.append(generation)
        return GenerationBatch(generations=gens, forward_tokens=total, decode=stats)

    def _settle(
        self, item: _Pending, result: _Decoded, max_new: int, margin: float
    ) -> tuple[Generation, DecodeStats, int]:
        """``result``'s generation; where the decoding stopped at a near tie, the token there
        is decided by :meth:`_replay` (``generate``'s own computation) and the decoding goes
        on from it, as often as ties come. Returns the generation, what decoding did and the
        tokens fed."""
        stats = DecodeStats()
        stats.add(result.stats)
        fed = result.stats.verified
        while result.generation is None:
            decided, lead = result.tokens, result.logprobs
            tok, logprob, past = self._replay(item.prompt_ids, decided)
            stats.fallbacks += 1
            fed += len(item.prompt_ids) + len(decided)
            tokens, logprobs = [*decided, tok], [*lead, logprob]
            if tok in self.stop_ids or len(tokens) >= max_new:
                finish = "stop" if tok in self.stop_ids else "length"
                generation = Generation(self.decode(tokens), tokens, logprobs, finish)
                return generation, stats, fed
            resume = _Pending(
                index=item.index,
                prompt_ids=item.prompt_ids,
                forced=tokens,
                lead=logprobs,
                kv=_kv_prefix(past, len(item.prompt_ids) + len(decided)),
                feed=tok,
                drafter=item.drafter,
            )
            del past
            result = self._decode_speculative([resume], max_new, margin)[0]
            stats.add(result.stats)
            fed += result.stats.verified
        return result.generation, stats, fed

    def _replay(self, prompt_ids: list[int], decided: list[int]) -> tuple[int, float, Any]:
        """The next greedy token after ``decided`` exactly as :meth:`generate` computes it: the
        same prefill of the prompt in one pass, then the decided tokens fed one per step with
        the same calls, so the logits are ``generate``'s to the last bit and a near tie is
        settled the way ``generate`` settles it. Returns the token, its log-probability and
        the cache (prompt + ``decided``)."""
        import torch

        dev = self._torch_device
        out = self._forward(
            torch.tensor([prompt_ids], dtype=torch.long, device=dev), keep=1, cache=True
        )
        past = self._cache_of(out)
        logits = out.logits[0, -1]
        for tok in decided:
            out = self.model(
                input_ids=torch.tensor([[tok]], dtype=torch.long, device=dev),
                use_cache=True,
                **{self._cache_kw: past},
            )
            past = self._cache_of(out)
            logits = out.logits[0, -1]
        lp = torch.log_softmax(logits.to(torch.float32), dim=-1)
        tok = int(torch.argmax(lp).item())
        return tok, float(lp[tok].item()), past

    def _decode_speculative(
        self, items: list[_Pending], max_new: int, margin: float
    ) -> list[_Decoded]:
        """Greedy decoding of several prompts at once, each resuming after its known output
        prefix ``forced`` from its own saved KV prefix, by speculative re-alignment.

        Each step feeds every active prompt its last token plus a block of draft tokens
        (:class:`~.speculative.Drafter`; the width from :func:`~.speculative.block_width`,
        shorter drafts padded) in one forward pass over left-padded caches with explicit
        positions, and keeps what :func:`~.speculative.accept_block` accepts: drafts that are
        the argmax by more than ``margin``, then that position's clear argmax. The cache
        columns of rejected drafts and padding stay behind as holes the attention mask hides.
        A prompt whose next token is a near tie leaves the batch undecided
        (``generation=None``). The KV cache is assembled once and grows in place
        (:func:`_left_padded_cache`) instead of being copied every step.
        """
        import torch

        if not items:
            return []
        dev = self._torch_device
        width = max(it.kv_len for it in items)
        cache = _left_padded_cache([it.kv for it in items], width)
        mask = torch.zeros((len(items), width), dtype=torch.long, device=dev)
        for b, it in enumerate(items):
            mask[b, width - it.kv_len :] = 1
        tokens = [list(it.forced) for it in items]
        logprobs: list[list[float]] = [list(it.lead) for it in items]
        stats = [DecodeStats() for _ in items]
        finish = ["length"] * len(items)
        undecided: set[int] = set()
        feed = [it.feed for it in items]
        pos = [it.kv_len for it in items]
        hints = [list(it.hint) for it in items]
        active = [b for b, it in enumerate(items) if len(it.forced) < max_new]
        with torch.inference_mode():
            while active:
                drafts = []
                for b in active:
                    limit = max_new - len(tokens[b]) - 1
                    drafts.append(items[b].drafter.propose(tokens[b], limit, hints[b]))
                    hints[b] = []
                block = block_width(drafts, [items[b].drafter.acceptance for b in active])
                drafts = [d[: block - 1] for d in drafts]
                ids = [
                    [feed[b], *d] + [feed[b]] * (block - 1 - len(d))
                    for b, d in zip(active, drafts, strict=True)
                ]
                positions = [[pos[b] + i for i in range(block)] for b in active]
                mask = torch.cat(
                    [mask, torch.ones((len(active), block), dtype=torch.long, device=dev)], dim=1
                )
                with _packed_attention(self.model):
                    out = self.model(
                        input_ids=torch.tensor(ids, dtype=torch.long, device=dev),
                        attention_mask=mask,
                        position_ids=torch.tensor(positions, dtype=torch.long, device=dev),
                        use_cache=True,
                        logits_to_keep=block,
                        **{self._cache_kw: cache},
                    )
                cache = self._cache_of(out)
                lp = torch.log_softmax(out.logits[:, -block:].to(torch.float32), dim=-1)
                top = torch.topk(lp, 2, dim=-1)
                best = top.values[..., 0].cpu().tolist()
                gaps = (top.values[..., 0] - top.values[..., 1]).cpu().tolist()
                argmax = top.indices[..., 0].cpu().tolist()
                width = mask.shape[1]
                keep_rows: list[int] = []
                for row, (b, d) in enumerate(zip(active, drafts, strict=True)):
                    n = len(d) + 1
                    stats[b].drafted += len(d)
                    stats[b].verified += block
                    accepted, nxt = accept_block(argmax[row][:n], gaps[row][:n], d, margin)
                    stats[b].accepted += accepted
                    items[b].drafter.update(len(d), accepted)
                    ended = False
                    for i, tok in enumerate([*d[:accepted], *([] if nxt is None else [nxt])]):
                        tokens[b].append(tok)
                        logprobs[b].append(float(best[row][i]))
                        if tok in self.stop_ids:
                            finish[b] = "stop"
                            ended = True
                            break
                        if len(tokens[b]) >= max_new:
                            ended = True
                            break
                    if ended:
                        continue
                    if nxt is None:
                        undecided.add(b)
                        continue
                    if accepted + 1 < block:  # rejected drafts and padding: holes
                        mask[row, width - block + accepted + 1 :] = 0
                    feed[b] = nxt
                    pos[b] += accepted + 1
                    keep_rows.append(row)
                if keep_rows and len(keep_rows) < len(active):
                    index = torch.tensor(keep_rows, dtype=torch.long, device=dev)
                    cache.batch_select_indices(index)
                    mask = mask[index]
                active = [active[r] for r in keep_rows]
        del cache
        results = []
        for b in range(len(items)):
            generation = None
            if b not in undecided:
                generation = Generation(
                    text=self.decode(tokens[b]),
                    token_ids=tokens[b],
                    logprobs=logprobs[b],
                    finish_reason=finish[b],
                )
            results.append(_Decoded(generation, stats[b], tokens[b], logprobs[b]))
        return results


@dataclass
class _Pending:
    """A prompt to decode from a known state: the output prefix ``forced`` (with its
    teacher-forced logprobs ``lead``), a copy of the KV cache for ``prompt_ids + forced[:-1]``,
    the token to feed next, its drafter and the drafts that lead its first block."""

    index: int
    prompt_ids: list[int]
    forced: list[int]
    lead: list[float]
    kv: list[tuple[Any, Any]]
    feed: int
    drafter: Drafter
    hint: list[int] = field(default_factory=list)

    @property
    def kv_len(self) -> int:
        return int(self.kv[0][0].shape[-2]) if self.kv else 0


@dataclass
class _Decoded:
    """A decoded prompt (``generation`` None: it met a near tie after the decided ``tokens``,
    with their ``logprobs``) and what decoding did."""

    generation: Generation | None
    stats: DecodeStats
    tokens: list[int]
    logprobs: list[float]


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


PACKED_ATTENTION = "provenai_packed_gqa"
"""The attention implementation the fast paths' decoding forwards run under (registered with
transformers once, on first use; ``generate``, ``score`` and the teacher-forced passes keep the
model's own)."""


def _packed_gqa_attention(
    module: Any,
    query: Any,
    key: Any,
    value: Any,
    attention_mask: Any,
    dropout: float = 0.0,
    scaling: float | None = None,
    **kwargs: Any,
) -> tuple[Any, None]:
    """SDPA with the query heads that share a key/value head packed into one query block.

    A decoding block is a few positions per row against a ~2,000-token cache per row, so its
    attention is bound by reading the keys and values. transformers either copies each layer's
    keys and values once per query head of a group (``repeat_kv``) or, with ``enable_gqa``,
    lets the kernel read them once per query head; here the ``groups`` query heads of a
    key/value head become ``groups x positions`` query rows of one head (the mask repeated
    for each), so each key and value is read once per row of the batch (transformers does the
    same for single-position steps: ``pack_gqa``). A different summation layout than the
    model's own attention, so only used where the margin rule decides what rounding may move.
    """
    import torch
    from transformers.integrations.sdpa_attention import sdpa_attention_forward

    groups = int(getattr(module, "num_key_value_groups", 1))
    batch, heads, q_len, dim = query.shape
    if groups <= 1 or (attention_mask is None and q_len > 1) or dropout:
        return sdpa_attention_forward(
            module, query, key, value, attention_mask, dropout=dropout, scaling=scaling, **kwargs
        )
    kv_heads = heads // groups
    packed = query.reshape(batch, kv_heads, groups * q_len, dim)
    mask = attention_mask
    if mask is not None:
        kv_len = mask.shape[-1]
        mask = (
            mask.expand(batch, 1, q_len, kv_len)
            .unsqueeze(2)
            .expand(batch, 1, groups, q_len, kv_len)
            .reshape(batch, 1, groups * q_len, kv_len)
        )
    out = torch.nn.functional.scaled_dot_product_attention(
        packed, key, value, attn_mask=mask, scale=scaling
    )
    return out.reshape(batch, heads, q_len, dim).transpose(1, 2).contiguous(), None


@functools.cache
def _register_packed_attention() -> None:
    """Register :func:`_packed_gqa_attention` (and SDPA's mask builder for it) with
    transformers under :data:`PACKED_ATTENTION`, once per process."""
    from transformers import AttentionInterface
    from transformers.masking_utils import AttentionMaskInterface, sdpa_mask

    AttentionInterface.register(PACKED_ATTENTION, _packed_gqa_attention)
    AttentionMaskInterface.register(PACKED_ATTENTION, sdpa_mask)


@contextlib.contextmanager
def _packed_attention(model: Any) -> Iterator[None]:
    """Run ``model``'s forwards inside the block under :func:`_packed_gqa_attention` (its
    masks built as for SDPA); the model's own implementation is restored after. A model whose
    attention is not SDPA is left alone."""
    config = model.config
    current = getattr(config, "_attn_implementation", None)
    if current != "sdpa":
        yield
        return
    _register_packed_attention()
    config._attn_implementation = PACKED_ATTENTION
    try:
        yield
    finally:
        config._attn_implementation = current


GROW_STEP = 256
"""Spare positions a growing KV layer allocates beyond what it holds."""


@functools.cache
def _growing_layer() -> type[Any]:
    """A transformers ``DynamicLayer`` that appends into spare capacity in place.

    ``DynamicLayer.update`` concatenates: every decoding step copies the whole cache, which
    on a CPU costs more than the step's own compute once a batch holds a few 2,000-token
    prompts. This layer keeps a buffer with room to spare; ``keys``/``values`` are views of
    its filled part. Used only where a computation's float rounding may differ from
    ``generate``'s (the margin rule decides), never by ``generate`` or ``score``."""
    from transformers.cache_utils import DynamicLayer

    class GrowingLayer(DynamicLayer):  # type: ignore[no-untyped-call]
        def lazy_initialization(self, key_states: Any, value_states: Any) -> None:
            super().lazy_initialization(key_states, value_states)
            self._kbuf: Any = None
            self._vbuf: Any = None
            self._filled = 0

        def _reserve(self, key_states: Any, value_states: Any, need: int) -> None:
            buf = self._kbuf
            if buf is not None and buf.shape[-2] >= need and buf.shape[0] == key_states.shape[0]:
                return
            import torch

            cap = need + max(GROW_STEP, self._filled // 2)
            shape = (*key_states.shape[:-2], cap, key_states.shape[-1])
            kbuf = torch.empty(shape, dtype=key_states.dtype, device=key_states.device)
            vshape = (*value_states.shape[:-2], cap, value_states.shape[-1])
            vbuf = torch.empty(vshape, dtype=value_states.dtype, device=value_states.device)
            if self._filled:
                kbuf[..., : self._filled, :] = self._kbuf[..., : self._filled, :]
                vbuf[..., : self._filled, :] = self._vbuf[..., : self._filled, :]
            self._kbuf, self._vbuf = kbuf, vbuf

        def update(self, key_states: Any, value_states: Any, *args: Any, **kwargs: Any) -> Any:
            if not self.is_initialized:
                self.lazy_initialization(key_states, value_states)
            start = self._filled
            need = start + int(key_states.shape[-2])
            self._reserve(key_states, value_states, need)
            self._kbuf[..., start:need, :] = key_states
            self._vbuf[..., start:need, :] = value_states
            self._filled = need
            self.keys = self._kbuf[..., :need, :]
            self.values = self._vbuf[..., :need, :]
            return self.keys, self.values

        def crop(self, tokens_to_remove: int) -> None:
            if tokens_to_remove > 0:
                raise ValueError("crop takes a negative number of tokens to remove")
            if not self.is_initialized or tokens_to_remove == 0:
                return
            self._filled = max(0, self._filled + tokens_to_remove)
            self.keys = self._kbuf[..., : self._filled, :]
            self.values = self._vbuf[..., : self._filled, :]

        def fill(self, rows: list[tuple[Any, Any]], width: int) -> None:
            """Hold ``rows`` (each one prompt's ``[1, heads, length, dim]`` keys and values)
            left-padded with zeros to ``width`` positions, each written once into the buffer
            :meth:`_reserve` allocates for them."""
            keys, values = rows[0]
            self.lazy_initialization(keys, values)
            batch = len(rows)
            self._reserve(keys.expand(batch, -1, -1, -1), values.expand(batch, -1, -1, -1), width)
            kbuf, vbuf = self._kbuf, self._vbuf
            for b, (k, v) in enumerate(rows):
                pad = width - int(k.shape[-2])
                kbuf[b, :, :pad].zero_()
                vbuf[b, :, :pad].zero_()
                kbuf[b, :, pad:width].copy_(k[0])
                vbuf[b, :, pad:width].copy_(v[0])
            self._kbuf, self._vbuf, self._filled = kbuf, vbuf, width
            self.keys = kbuf[..., :width, :]
            self.values = vbuf[..., :width, :]

        def batch_select_indices(self, indices: Any) -> None:
            if not self.is_initialized or not self._filled:
                return
            keep = [int(i) for i in indices]
            if all(a < b for a, b in itertools.pairwise(keep)):
                # rows kept in order (a batch dropping finished prompts): each moves down into
                # its new slot in place, filled positions only, so nothing is allocated and
                # the rows before the first one dropped are not copied at all
                n = self._filled
                for slot, row in enumerate(keep):
                    if slot != row:
                        self._kbuf[slot, ..., :n, :].copy_(self._kbuf[row, ..., :n, :])
                        self._vbuf[slot, ..., :n, :].copy_(self._vbuf[row, ..., :n, :])
                self._kbuf = self._kbuf[: len(keep)]
                self._vbuf = self._vbuf[: len(keep)]
            else:
                self._kbuf = self._kbuf[indices, ...]
                self._vbuf = self._vbuf[indices, ...]
            self.keys = self._kbuf[..., : self._filled, :]
            self.values = self._vbuf[..., : self._filled, :]

    return GrowingLayer


def _left_padded_cache(rows: list[list[tuple[Any, Any]]], width: int) -> Any:
    """A KV cache for a batch: ``rows[b][layer]`` is prompt ``b``'s ``(keys, values)``, each
    left-padded with zeros to ``width`` positions. :func:`_growing_layer` layers, each row
    written once; a plain DynamicCache of padded copies if this transformers version keeps
    its layers some other way."""
    from transformers import DynamicCache

    try:
        grow = _growing_layer()
        layers = [grow() for _ in rows[0]]
        for i, layer in enumerate(layers):
            layer.fill([row[i] for row in rows], width)
        cache = DynamicCache()
        cache.layers = layers
        if int(cache.get_seq_length()) != width:
            raise ValueError("the growing layers were not used")
        return cache
    except (AttributeError, TypeError, ValueError, ImportError):
        import torch

        def padded(t: Any) -> Any:
            return torch.nn.functional.pad(t, (0, 0, width - int(t.shape[-2]), 0))

        return _cache_from(
            [
                (
                    torch.cat([padded(row[i][0]) for row in rows]),
                    torch.cat([padded(row[i][1]) for row in rows]),
                )
                for i in range(len(rows[0]))
            ]
        )


def _crop_to(cache: Any, length: int) -> None:
    """Shorten a transformers KV cache to its first ``length`` positions (a negative
    argument to ``crop`` means "remove that many" in every transformers version)."""
    current = int(cache.get_seq_length())
    if current > length:
        cache.crop(length - current)

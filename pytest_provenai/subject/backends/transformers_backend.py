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
from collections.abc import Callable
from functools import partial
from typing import Any

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
from .devices import resolve_device_torch
from .divergence import common_prefix, first_divergence, shared_prefix, token_margins
from .libraries import library_versions, prepare_torch_import
from .local import LocalModelGenerator, generate_tokens, open_model_folder
from .speculative import Drafter
from .tokenizer import check_continuation_ids, load_tokenizer, stop_token_ids
from .transformers_speculative import (
    PREFIX_SPLIT_ATTENTION,
    Pending,
    SpeculativeDecoding,
    attention_under,
    crop_to,
    kv_prefix,
    top2_gap,
)

THREADS_ENV = "PROVENAI_NUM_THREADS"

ABLATION_BATCH_ENV = "PROVENAI_ABLATION_BATCH"
GPU_ABLATION_BATCH_ROWS = 16
"""Teacher-forced prompts per forward in the ablation pass on a GPU (cuda, mps): the full
prompt and its ablations fed whole as left-padded batches of this many rows
(:meth:`TransformersGenerator._teacher_forced_batches`). On the CPU it is 1: one prompt at a
time on the full prompt's cropped KV cache, which measured 2.2–2.5× faster there than any
batch (docs/performance.md, "Batched teacher-forced passes"). ``$PROVENAI_ABLATION_BATCH``
overrides either."""

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


def ablation_batch_rows(device: str) -> int:
    """Prompts per teacher-forced forward of the ablation pass on ``device``:
    ``$PROVENAI_ABLATION_BATCH`` (a whole number ≥ 1; 1 is the cropped-prefix path) or the
    device's default (1 on the CPU, :data:`GPU_ABLATION_BATCH_ROWS` on a GPU)."""
    env = os.environ.get(ABLATION_BATCH_ENV, "").strip()
    if not env:
        return 1 if device == "cpu" else GPU_ABLATION_BATCH_ROWS
    try:
        n = int(env)
    except ValueError:
        n = 0
    if n < 1:
        raise BackendError(
            f"${ABLATION_BATCH_ENV}={env!r} must be a whole number of at least 1 (prompts per "
            "teacher-forced forward; 1 = one at a time on a cropped cache); fix it or unset it"
        )
    return n


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


def _log_rows(logits: Any) -> Any:
    """float32 numpy log-softmax rows of ``logits`` (``[positions, vocab]``)."""
    import numpy as np
    import torch

    lp = torch.log_softmax(logits.to(torch.float32), dim=-1)
    return lp.cpu().numpy().astype(np.float32, copy=False)


def _row_kv(cache: Any, row: int, pad: int, length: int) -> list[tuple[Any, Any]]:
    """Copies of row ``row``'s keys and values in a left-padded batch cache: ``length``
    positions after its ``pad`` padding columns (the shape :func:`kv_prefix` gives)."""
    return [
        (
            layer.keys[row : row + 1, :, pad : pad + length, :].clone(),
            layer.values[row : row + 1, :, pad : pad + length, :].clone(),
        )
        for layer in cache.layers
    ]


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


class TransformersGenerator(SpeculativeDecoding, LocalModelGenerator):
    """A local HF-format model run greedily by transformers/torch in float32.

    ``tokenizer``: the folder's tokenizer when the caller already loaded it
    (:func:`~.tokenizer.load_tokenizer`); loaded here otherwise."""

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
        self.ablation_batch_rows = ablation_batch_rows(self.device)
        """Prompts per teacher-forced forward in :meth:`ablation_pass` (1: the cropped-prefix
        path; more: :meth:`_teacher_forced_batches`). Lower it for a large model on a small
        GPU; the records agree either way to well inside the golden tolerance."""
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
        margins: list[float] = []
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
                margins.append(top2_gap(lp))
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
        return Generation(str(text), token_ids, logprobs, finish, margins)

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
           On a GPU (:attr:`ablation_batch_rows` > 1) steps 1–2 feed every prompt whole, as
           padded batches (:meth:`_teacher_forced_batches`), and the same checks follow.
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

        rows_of: list[Any] = [None] * len(variants)
        gen_of: list[Generation | None] = [None] * len(variants)
        div_of: list[int | None] = [None] * len(variants)
        used_of = [0] * len(variants)
        stats_of = [DecodeStats() for _ in variants]
        pending: list[Pending] = []
        total = 0

        def take(j: int, ids: list[int], rows: Any, kv_of: Callable[[int], Any]) -> None:
            """Variant ``j``'s teacher-forced ``rows``: the realised output where no position
            leaves it, else a :class:`Pending` decoding from its first divergence, with the KV
            prefix ``kv_of(length)`` for ``ids + cont[:div - 1]``."""
            rows_of[j] = rows
            div = div_of[j] = first_divergence(rows, cont, margin)
            if div is None:
                gen_of[j] = Generation(
                    text=self.decode(cont),
                    token_ids=list(cont),
                    logprobs=[float(rows[t, tok]) for t, tok in enumerate(cont)],
                    finish_reason="stop" if cont[-1] in self.stop_ids else "length",
                    margins=token_margins(rows, cont),
                )
                return
            history = ids + cont[:div]
            pending.append(
                Pending(
                    index=j,
                    prompt_ids=ids,
                    forced=cont[:div],
                    lead=[float(rows[t, tok]) for t, tok in enumerate(cont[:div])],
                    lead_margins=token_margins(rows, cont[:div]),
                    kv=kv_of(len(history) - 1),
                    feed=history[-1],
                    drafter=Drafter(ids, cont),
                    hint=[int(np.argmax(rows[div]))],
                )
            )

        encoded = [self.encode(v) for v in variants]
        with torch.inference_mode():
            if self.ablation_batch_rows > 1:
                full_rows = self._teacher_forced_batches(full_ids, encoded, cont, take)
                used_of = [len(ids) + n_cont - 1 for ids in encoded]
                total += len(full_ids) + n_cont - 1
            else:
                out = self.model(
                    input_ids=torch.tensor([full_ids + cont[:-1]], dtype=torch.long, device=dev),
                    use_cache=True,
                    logits_to_keep=n_cont,
                )
                total += len(full_ids) + n_cont - 1
                cache = self._cache_of(out)
                full_rows = _log_rows(out.logits[0, -n_cont:])
                shared = [min(common_prefix(full_ids, ids), len(ids) - 1) for ids in encoded]
                for j in sorted(range(len(variants)), key=lambda j: -shared[j]):
                    ids, keep = encoded[j], shared[j]
                    crop_to(cache, keep)
                    feed = ids[keep:] + cont[:-1]
                    with attention_under(self.model, PREFIX_SPLIT_ATTENTION):
                        out = self.model(
                            input_ids=torch.tensor([feed], dtype=torch.long, device=dev),
                            use_cache=True,
                            logits_to_keep=n_cont,
                            **{self._cache_kw: cache},
                        )
                    cache = self._cache_of(out)
                    used_of[j] = len(feed)
                    take(j, ids, _log_rows(out.logits[0, -n_cont:]), partial(kv_prefix, cache))
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

    def _teacher_forced_batches(
        self,
        full_ids: list[int],
        encoded: list[list[int]],
        cont: list[int],
        take: Callable[[int, list[int], Any, Callable[[int], Any]], None],
    ) -> Any:
        """The ablation pass's teacher-forced rows, the form for a GPU: the full prompt and
        each ablated prompt, each + ``cont[:-1]``, fed whole as left-padded batches of
        :attr:`ablation_batch_rows` (attention mask, explicit positions). Each variant's rows
        go to ``take`` with its own KV (the padding cut off) for a divergent decoding; the
        batch's cache is dropped after. Returns the full prompt's rows.

        Every prompt token is computed (no prefix is shared between rows), so this feeds
        more tokens than the cropped-prefix path; a GPU computes a batch in about the time of
        one row. The rows differ from the cropped-prefix path's in float rounding only (≤ 1e-4
        nats measured), and the margin rule keeps every decoded token ``generate``'s."""
        import torch

        n_cont = len(cont)
        dev = self._torch_device
        prompts = [full_ids, *encoded]
        size = max(1, int(self.ablation_batch_rows))
        full_rows: Any = None
        for start in range(0, len(prompts), size):
            group = [ids + cont[:-1] for ids in prompts[start : start + size]]
            width = max(len(g) for g in group)
            ids_t = torch.zeros((len(group), width), dtype=torch.long, device=dev)
            mask = torch.zeros((len(group), width), dtype=torch.long, device=dev)
            pos = torch.zeros((len(group), width), dtype=torch.long, device=dev)
            for b, g in enumerate(group):
                pad = width - len(g)
                ids_t[b, pad:] = torch.tensor(g, dtype=torch.long, device=dev)
                mask[b, pad:] = 1
                pos[b, pad:] = torch.arange(len(g), dtype=torch.long, device=dev)
            out = self.model(
                input_ids=ids_t,
                attention_mask=mask,
                position_ids=pos,
                use_cache=True,
                logits_to_keep=n_cont,
            )
            cache = self._cache_of(out)
            for b, g in enumerate(group):
                rows = _log_rows(out.logits[b, -n_cont:])
                if start + b == 0:
                    full_rows = rows
                    continue
                j = start + b - 1
                take(j, encoded[j], rows, partial(_row_kv, cache, b, width - len(g)))
            del out, cache
        return full_rows

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
        pending: list[Pending] = []
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
                        crop_to(cache, shared)
                    with attention_under(self.model, PREFIX_SPLIT_ATTENTION):
                        out = self.model(
                            input_ids=torch.tensor([rest], dtype=torch.long, device=dev),
                            use_cache=True,
                            logits_to_keep=1,
                            **({self._cache_kw: cache} if cache is not None else {}),
                        )
                    cache = self._cache_of(out)
                    total += len(rest)
                pending.append(
                    Pending(
                        index=j,
                        prompt_ids=ids,
                        forced=[],
                        lead=[],
                        lead_margins=[],
                        kv=kv_prefix(cache, len(ids) - 1),
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

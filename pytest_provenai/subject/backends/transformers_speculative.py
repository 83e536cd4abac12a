"""Speculative decoding on transformers, and the KV-cache machinery under it.

The transformers backend's fast paths (``ablation_pass``, ``generate_many``) decode the
prompts that leave the realised output by speculative re-alignment: :class:`SpeculativeDecoding`
(mixed into :class:`~.transformers_backend.TransformersGenerator`) steps them together over one
left-padded cache buffer per layer that grows in place (:func:`left_padded_cache`), under the
packed grouped-query attention (:data:`PACKED_ATTENTION`), and settles a near tie by replaying
``generate``'s own computation (``_replay``). Teacher-forced feeds after a cached prefix run
under :data:`PREFIX_SPLIT_ATTENTION`; :func:`attention_under` switches either on for a block.
:class:`Pending` / :class:`Decoded` are a prompt to decode and its result; :func:`kv_prefix`,
:func:`cache_from` and :func:`crop_to` copy, build and crop caches. The drafts and the
acceptance rule are :mod:`.speculative`'s.

torch and transformers are imported inside the functions: importing this module is cheap.
"""

from __future__ import annotations

import contextlib
import functools
import itertools
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any, Protocol

from .base import (
    DecodeStats,
    Generation,
)
from .speculative import Drafter, accept_block, block_width


def top2_gap(lp: Any) -> float:
    """The gap between the best and second-best entries of a 1-D torch tensor of
    log-probabilities: the greedy margin of the step (``Generation.margins``)."""
    import torch

    top = torch.topk(lp, 2).values
    return float((top[0] - top[1]).item())


class _Host(Protocol):
    """What :class:`SpeculativeDecoding` uses of the generator it is mixed into."""

    model: Any
    stop_ids: frozenset[int]
    _cache_kw: str
    _torch_device: Any

    def _cache_of(self, out: Any) -> Any: ...

    def _forward(self, input_ids: Any, *, keep: int, cache: bool) -> Any: ...

    def decode(self, token_ids: list[int]) -> str: ...

    def _settle(
        self, item: Pending, result: Decoded, max_new: int, margin: float
    ) -> tuple[Generation, DecodeStats, int]: ...

    def _replay(
        self, prompt_ids: list[int], decided: list[int]
    ) -> tuple[int, float, float, Any]: ...

    def _decode_speculative(
        self, items: list[Pending], max_new: int, margin: float
    ) -> list[Decoded]: ...


class SpeculativeDecoding:
    """Batched speculative decoding from known states, and the replay that settles near ties
    (mixed into the transformers generator; see the module docstring)."""

    def _settle(
        self: _Host, item: Pending, result: Decoded, max_new: int, margin: float
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
            tok, logprob, gap, past = self._replay(item.prompt_ids, decided)
            stats.fallbacks += 1
            fed += len(item.prompt_ids) + len(decided)
            tokens, logprobs = [*decided, tok], [*lead, logprob]
            margins = [*result.margins, gap]
            if tok in self.stop_ids or len(tokens) >= max_new:
                finish = "stop" if tok in self.stop_ids else "length"
                generation = Generation(self.decode(tokens), tokens, logprobs, finish, margins)
                return generation, stats, fed
            resume = Pending(
                index=item.index,
                prompt_ids=item.prompt_ids,
                forced=tokens,
                lead=logprobs,
                lead_margins=margins,
                kv=kv_prefix(past, len(item.prompt_ids) + len(decided)),
                feed=tok,
                drafter=item.drafter,
            )
            del past
            result = self._decode_speculative([resume], max_new, margin)[0]
            stats.add(result.stats)
            fed += result.stats.verified
        return result.generation, stats, fed

    def _replay(
        self: _Host, prompt_ids: list[int], decided: list[int]
    ) -> tuple[int, float, float, Any]:
        """The next greedy token after ``decided`` exactly as :meth:`generate` computes it: the
        same prefill of the prompt in one pass, then the decided tokens fed one per step with
        the same calls, so the logits are ``generate``'s to the last bit and a near tie is
        settled the way ``generate`` settles it. Returns the token, its log-probability, its
        margin over the runner-up and the cache (prompt + ``decided``)."""
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
        return tok, float(lp[tok].item()), top2_gap(lp), past

    def _decode_speculative(
        self: _Host, items: list[Pending], max_new: int, margin: float
    ) -> list[Decoded]:
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
        (:func:`left_padded_cache`) instead of being copied every step.
        """
        import torch

        if not items:
            return []
        dev = self._torch_device
        width = max(it.kv_len for it in items)
        cache = left_padded_cache([it.kv for it in items], width)
        mask = torch.zeros((len(items), width), dtype=torch.long, device=dev)
        for b, it in enumerate(items):
            mask[b, width - it.kv_len :] = 1
        tokens = [list(it.forced) for it in items]
        logprobs: list[list[float]] = [list(it.lead) for it in items]
        margins: list[list[float]] = [list(it.lead_margins) for it in items]
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
                with attention_under(self.model, PACKED_ATTENTION):
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
                        margins[b].append(float(gaps[row][i]))
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
                    margins=margins[b],
                )
            results.append(Decoded(generation, stats[b], tokens[b], logprobs[b], margins[b]))
        return results


@dataclass
class Pending:
    """A prompt to decode from a known state: the output prefix ``forced`` (with its
    teacher-forced logprobs ``lead`` and greedy margins ``lead_margins``), a copy of the KV
    cache for ``prompt_ids + forced[:-1]``, the token to feed next, its drafter and the
    drafts that lead its first block."""

    index: int
    prompt_ids: list[int]
    forced: list[int]
    lead: list[float]
    lead_margins: list[float]
    kv: list[tuple[Any, Any]]
    feed: int
    drafter: Drafter
    hint: list[int] = field(default_factory=list)

    @property
    def kv_len(self) -> int:
        return int(self.kv[0][0].shape[-2]) if self.kv else 0


@dataclass
class Decoded:
    """A decoded prompt (``generation`` None: it met a near tie after the decided ``tokens``,
    with their ``logprobs`` and ``margins``) and what decoding did."""

    generation: Generation | None
    stats: DecodeStats
    tokens: list[int]
    logprobs: list[float]
    margins: list[float]


def kv_prefix(cache: Any, length: int) -> list[tuple[Any, Any]]:
    """Copies of every layer's keys and values for the first ``length`` positions."""
    return [
        (layer.keys[..., :length, :].clone(), layer.values[..., :length, :].clone())
        for layer in cache.layers
    ]


def cache_from(layers: list[tuple[Any, Any]]) -> Any:
    """A transformers DynamicCache holding the given per-layer (keys, values)."""
    from transformers import DynamicCache

    cache = DynamicCache()
    for i, (k, v) in enumerate(layers):
        cache.update(k, v, i)
    return cache


PACKED_ATTENTION = "provenai_packed_gqa"
"""The attention implementation the fast paths' decoding forwards run under (registered with
transformers once, on first use; ``generate``, ``score`` and a pass with no cached prefix keep
the model's own; the teacher-forced feeds after a cache run under
:data:`PREFIX_SPLIT_ATTENTION`)."""


def packed_gqa_attention(
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


PREFIX_SPLIT_ATTENTION = "provenai_prefix_split"
"""The attention implementation the fast paths' teacher-forced feeds run under: a block of
positions appended to a cached prefix, attended in two parts so that no masked column is
computed (:func:`prefix_split_attention`)."""


def _is_plain_causal(mask: Any, past: int, q_len: int) -> bool:
    """Whether ``mask`` (None, or boolean ``[1, 1, q_len, past + q_len]``) is the plain causal
    mask of ``q_len`` positions after ``past`` cached ones: no padding, no window. Checked on
    its first and last rows (O(past + q_len)), which a padded or windowed mask fails."""
    import torch

    if mask is None:
        return True
    if mask.dtype != torch.bool or tuple(mask.shape) != (1, 1, q_len, past + q_len):
        return False
    first, last = mask[0, 0, 0], mask[0, 0, -1]
    return bool(first[: past + 1].all()) and not bool(first[past + 1 :].any()) and bool(last.all())


def prefix_split_attention(
    module: Any,
    query: Any,
    key: Any,
    value: Any,
    attention_mask: Any,
    dropout: float = 0.0,
    scaling: float | None = None,
    **kwargs: Any,
) -> tuple[Any, None]:
    """Causal attention of ``q_len`` new positions over ``past`` cached ones + themselves,
    with no masked column computed.

    Given an explicit mask (which a feed after a cache gets), the CPU attention kernel
    computes every column of every row and masks afterwards, so a feed of L positions after P
    cached ones costs L x (P + L), about L^2 / 2 of it thrown away. Here the two parts are
    attended apart and merged by their log-sum-exps: every new position over the P cached
    keys with no mask (the query heads of a key/value head packed into one block, as in
    :func:`packed_gqa_attention`), and the new positions over their own keys with the
    kernel's ``is_causal`` (which skips the masked half). 1.1-1.8x less attention time on
    the feeds of an ablation pass (``benchmarks/bench_prefix_attention.py``); the outputs
    differ from the model's own attention in the last float bits (~1e-7), so it is used only
    where the margin rule decides what rounding may move. Anything else (a batch, padding, a
    window, a single position, no cached prefix, a device other than the CPU, dropout) goes
    to transformers' SDPA unchanged.
    """
    import torch
    from transformers.integrations.sdpa_attention import sdpa_attention_forward

    batch, heads, q_len, dim = query.shape
    past = int(key.shape[2]) - q_len
    groups = int(getattr(module, "num_key_value_groups", 1))
    flash = getattr(torch.ops.aten, "_scaled_dot_product_flash_attention_for_cpu", None)
    if (
        flash is None
        or batch != 1
        or q_len < 2
        or past < 1
        or dropout
        or query.device.type != "cpu"
        or kwargs.get("sliding_window")
        or kwargs.get("softcap") is not None
        or heads % max(groups, 1)
        or not _is_plain_causal(attention_mask, past, q_len)
    ):
        return sdpa_attention_forward(
            module, query, key, value, attention_mask, dropout=dropout, scaling=scaling, **kwargs
        )
    kv_heads = heads // groups
    own_k = key[:, :, past:].repeat_interleave(groups, dim=1)
    own_v = value[:, :, past:].repeat_interleave(groups, dim=1)
    own, own_lse = flash(query, own_k, own_v, 0.0, True, scale=scaling)[:2]
    packed = query.reshape(batch, kv_heads, groups * q_len, dim)
    before, before_lse = flash(
        packed, key[:, :, :past], value[:, :, :past], 0.0, False, scale=scaling
    )[:2]
    before = before.reshape(batch, heads, q_len, dim)
    before_lse = before_lse.reshape(batch, heads, q_len)
    top = torch.maximum(own_lse, before_lse)
    w_own = torch.exp(own_lse - top).unsqueeze(-1)
    w_before = torch.exp(before_lse - top).unsqueeze(-1)
    out = (own * w_own + before * w_before) / (w_own + w_before)
    return out.to(query.dtype).transpose(1, 2).contiguous(), None


@functools.cache
def register_attention() -> None:
    """Register the fast paths' attention functions (:data:`PACKED_ATTENTION`,
    :data:`PREFIX_SPLIT_ATTENTION`, each with SDPA's mask builder) with transformers, once
    per process."""
    from transformers import AttentionInterface
    from transformers.masking_utils import AttentionMaskInterface, sdpa_mask

    AttentionInterface.register(PACKED_ATTENTION, packed_gqa_attention)
    AttentionMaskInterface.register(PACKED_ATTENTION, sdpa_mask)
    AttentionInterface.register(PREFIX_SPLIT_ATTENTION, prefix_split_attention)
    AttentionMaskInterface.register(PREFIX_SPLIT_ATTENTION, sdpa_mask)


@contextlib.contextmanager
def attention_under(model: Any, name: str) -> Iterator[None]:
    """Run ``model``'s forwards inside the block under the registered attention ``name``
    (:data:`PACKED_ATTENTION` or :data:`PREFIX_SPLIT_ATTENTION`; masks built as for SDPA);
    the model's own implementation is restored after. A model whose attention is not SDPA
    is left alone."""
    config = model.config
    current = getattr(config, "_attn_implementation", None)
    if current != "sdpa":
        yield
        return
    register_attention()
    config._attn_implementation = name
    try:
        yield
    finally:
        config._attn_implementation = current


GROW_STEP = 256
"""Spare positions a growing KV layer allocates beyond what it holds."""


@functools.cache
def growing_layer() -> type[Any]:
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


def left_padded_cache(rows: list[list[tuple[Any, Any]]], width: int) -> Any:
    """A KV cache for a batch: ``rows[b][layer]`` is prompt ``b``'s ``(keys, values)``, each
    left-padded with zeros to ``width`` positions. :func:`growing_layer` layers, each row
    written once; a plain DynamicCache of padded copies if this transformers version keeps
    its layers some other way."""
    from transformers import DynamicCache

    try:
        grow = growing_layer()
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

        return cache_from(
            [
                (
                    torch.cat([padded(row[i][0]) for row in rows]),
                    torch.cat([padded(row[i][1]) for row in rows]),
                )
                for i in range(len(rows[0]))
            ]
        )


def crop_to(cache: Any, length: int) -> None:
    """Shorten a transformers KV cache to its first ``length`` positions (a negative
    argument to ``crop`` means "remove that many" in every transformers version)."""
    current = int(cache.get_seq_length())
    if current > length:
        cache.crop(length - current)

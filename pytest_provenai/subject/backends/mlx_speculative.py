"""Speculative decoding on mlx: the divergent decoding under the mlx backend's fast paths.

:class:`MLXSpeculativeDecoding` (mixed into :class:`~.mlx_backend.MLXGenerator`, as
:mod:`.transformers_speculative` is into the transformers backend) decodes a prompt from a
KV cache by speculative re-alignment (``_decode_one``: feed a block of drafts, keep what
:func:`~.speculative.accept_block` accepts, trim the rest off the cache) and settles a near
tie by replaying ``generate``'s own computation (``_replay``); ``_decode_settled`` joins the
two. The drafts and the acceptance rule are :mod:`.speculative`'s.

mlx and mlx-lm are imported inside the methods: importing this module is cheap.
"""

from __future__ import annotations

from typing import Any, Protocol, cast

from .base import DecodeStats, Generation
from .speculative import Drafter, accept_block

__all__ = ["MLXSpeculativeDecoding", "cache_offset", "top2_gap"]


def top2_gap(lp: Any) -> float:
    """The gap between the best and second-best entries of a 1-D mlx array of
    log-probabilities: the greedy margin of the step (``Generation.margins``)."""
    import mlx.core as mx

    top = mx.topk(lp, 2)  # the two largest, in no promised order
    return abs(float(cast(Any, (top[0] - top[1]).item())))


def cache_offset(cache: list[Any]) -> int:
    """How many positions an mlx-lm prompt cache holds (-1: unknown)."""
    return int(getattr(cache[0], "offset", -1)) if cache else -1


class _Host(Protocol):
    """What :class:`MLXSpeculativeDecoding` uses of the generator it is mixed into."""

    model: Any
    stop_ids: frozenset[int]

    def decode(self, token_ids: list[int]) -> str: ...

    def _prefilled_cache(self, ids: list[int]) -> list[Any]: ...

    def _cache_at(self, cache: list[Any], tokens: list[int], length: int) -> list[Any]: ...

    def _replay(
        self, prompt_ids: list[int], decided: list[int]
    ) -> tuple[int, float, float, list[Any]]: ...

    def _decode_one(
        self,
        cache: list[Any],
        *,
        forced: list[int],
        lead: list[float],
        lead_margins: list[float],
        feed: int,
        drafter: Drafter,
        hint: list[int],
        max_new: int,
        margin: float,
    ) -> tuple[Generation | None, list[int], list[float], list[float], DecodeStats]: ...


class MLXSpeculativeDecoding:
    """Divergent decoding from a KV cache for :class:`~.mlx_backend.MLXGenerator`."""

    def _decode_settled(
        self: _Host,
        cache: list[Any],
        prompt_ids: list[int],
        *,
        forced: list[int],
        lead: list[float],
        lead_margins: list[float],
        drafter: Drafter,
        hint: list[int],
        max_new: int,
        margin: float,
    ) -> tuple[Generation, DecodeStats, int]:
        """:meth:`_decode_one` from ``cache`` (the prompt + ``forced[:-1]``); at a near tie the
        token is settled by :meth:`_replay` (``generate``'s own computation) and decoding goes
        on in the replayed cache, as often as ties come. Returns the generation, what decoding
        did and the tokens fed."""
        stats = DecodeStats()
        fed = 0
        feed = (prompt_ids + forced)[-1]
        while True:
            generation, tokens, logprobs, margins, one = self._decode_one(
                cache,
                forced=forced,
                lead=lead,
                lead_margins=lead_margins,
                feed=feed,
                drafter=drafter,
                hint=hint,
                max_new=max_new,
                margin=margin,
            )
            stats.add(one)
            fed += one.verified
            if generation is not None:
                return generation, stats, fed
            tok, logprob, gap, cache = self._replay(prompt_ids, tokens)
            stats.fallbacks += 1
            fed += len(prompt_ids) + len(tokens)
            forced, lead, feed, hint = [*tokens, tok], [*logprobs, logprob], tok, []
            lead_margins = [*margins, gap]
            if tok in self.stop_ids or len(forced) >= max_new:
                finish = "stop" if tok in self.stop_ids else "length"
                generation = Generation(self.decode(forced), forced, lead, finish, lead_margins)
                return generation, stats, fed

    def _replay(
        self: _Host, prompt_ids: list[int], decided: list[int]
    ) -> tuple[int, float, float, list[Any]]:
        """The next greedy token after ``decided`` exactly as :meth:`generate` computes it (the
        same prefill, the decided tokens fed one per step with the same calls and
        evaluations), so a near tie is settled the way ``generate`` settles it. Returns the
        token, its log-probability, its margin over the runner-up and the cache (prompt +
        ``decided``)."""
        import mlx.core as mx

        cache = self._prefilled_cache(prompt_ids[:-1])
        logits = self.model(mx.array([prompt_ids[-1:]], dtype=mx.int32), cache=cache)[0, -1]
        for tok in [*decided, None]:
            logits = logits.astype(mx.float32)
            lp = logits - mx.logsumexp(logits, axis=-1, keepdims=True)
            tok_arr = mx.argmax(lp, axis=-1)
            mx.eval(tok_arr, lp)
            if tok is None:
                best = int(cast(Any, tok_arr.item()))
                return best, float(lp[best].item()), top2_gap(lp), cache
            logits = self.model(mx.array([[tok]], dtype=mx.int32), cache=cache)[0, -1]
        raise AssertionError("unreachable")

    def _decode_one(
        self: _Host,
        cache: list[Any],
        *,
        forced: list[int],
        lead: list[float],
        lead_margins: list[float],
        feed: int,
        drafter: Drafter,
        hint: list[int],
        max_new: int,
        margin: float,
    ) -> tuple[Generation | None, list[int], list[float], list[float], DecodeStats]:
        """Greedy decoding resuming after the known output prefix ``forced`` (``cache`` holds
        the prompt + ``forced[:-1]``; ``feed`` is the next token to feed), by speculative
        re-alignment: each step feeds ``feed`` plus a block of drafts, keeps what
        :func:`~.speculative.accept_block` accepts and trims the rest off the cache. At a near
        tie the generation is ``None``, with the tokens decided before it (their logprobs and
        margins)."""
        import mlx.core as mx
        import numpy as np
        from mlx_lm.models.cache import can_trim_prompt_cache

        tokens, logprobs, margins = list(forced), list(lead), list(lead_margins)
        stats = DecodeStats()
        finish = "length"
        # rejected drafts are trimmed off the cache: a cache that cannot trim decodes plainly
        speculate = can_trim_prompt_cache(cache)
        while len(tokens) < max_new:
            limit = max_new - len(tokens) - 1 if speculate else 0
            drafts = drafter.propose(tokens, limit, hint)
            hint = []
            block = [feed, *drafts]
            logits = self.model(mx.array([block], dtype=mx.int32), cache=cache)[0]
            rows = logits.astype(mx.float32)
            lp = rows - mx.logsumexp(rows, axis=-1, keepdims=True)
            mx.eval(lp)
            arr = np.array(lp, dtype=np.float32)
            top2 = np.partition(arr, -2, axis=-1)[:, -2:]
            gaps = (top2[:, 1] - top2[:, 0]).tolist()
            accepted, nxt = accept_block(arr.argmax(axis=-1).tolist(), gaps, drafts, margin)
            stats.drafted += len(drafts)
            stats.verified += len(block)
            stats.accepted += accepted
            drafter.update(len(drafts), accepted)
            ended = False
            for i, tok in enumerate([*drafts[:accepted], *([] if nxt is None else [nxt])]):
                tokens.append(tok)
                logprobs.append(float(arr[i, tok]))
                margins.append(float(gaps[i]))
                if tok in self.stop_ids:
                    finish = "stop"
                    ended = True
                    break
                if len(tokens) >= max_new:
                    ended = True
                    break
            if ended:
                break
            if nxt is None:
                return None, tokens, logprobs, margins, stats
            cache = self._cache_at(cache, [], cache_offset(cache) - (len(block) - 1 - accepted))
            feed = nxt  # (nothing to trim when nothing was drafted: the cache is never rebuilt)
        generation = Generation(self.decode(tokens), tokens, logprobs, finish, margins)
        return generation, tokens, logprobs, margins, stats

"""Speculative re-alignment: draft tokens for greedy decoding and the exact acceptance rule.

The fast paths (leave-one-out ablation, shared-prefix generation) decode greedily where a
prompt's output is not known. Most of what they decode has been written before: an ablated
prompt's output is usually the realised full-context output with a word changed, a tag
added or a line shifted, and the Evidence line copies phrases from the prompt. So each
decoding step feeds the last token *plus a block of draft tokens* and checks them all in one
forward pass:

* **Drafts** (:class:`Drafter`) come from the realised output, re-synchronised on the longest
  n-gram that ends the output decoded so far (so a tail that is shifted, or differs by one
  token, still drafts), from the output itself (a repeated phrase, a loop) and from n-grams
  of the prompt (prompt lookup); the longest match wins. A *hint* (the teacher-forced argmax
  at the first divergent position) can lead the first block. The draft length adapts to how
  many drafts were accepted.
* **Acceptance** (:func:`accept_block`): position ``j`` of the block predicts the token after
  the fed token and the first ``j`` drafts. Draft ``j`` is accepted only when it is that
  position's argmax *and* the top-two log-probability gap exceeds the tie margin; the first
  position that is not a clear win for its draft ends the block: its argmax is the next token
  when it wins clearly, and otherwise (a near tie) nothing there is decided — the caller
  decodes that prompt the reference way (``generate``).

The drafts only decide how much is checked per forward pass, never which token is chosen:
every token a fast path emits is the argmax of a computation that differs from
``generate``'s only in float rounding (batch shape, cache layout), and it wins by more than
:data:`~pytest_provenai.subject.backends.base.TIE_MARGIN`, which that rounding cannot
overturn. Pure Python: no torch, no mlx.
"""

from __future__ import annotations

from collections.abc import Sequence

REALISED_NGRAM = 8
"""Longest n-gram of the decoded output looked up in the realised output."""

PROMPT_NGRAM = 4
"""Longest n-gram looked up in the prompt (prompt lookup)."""

PROMPT_NGRAM_MIN = 2
"""A single token repeated from the prompt is too weak a signal to draft on."""

DRAFT_START = 4
DRAFT_MAX = 16
"""Draft length: starts at ``DRAFT_START``, grows by 2 after a fully accepted block, shrinks
by 1 after a rejection, never beyond ``DRAFT_MAX`` (verification costs compute per token)."""


BLOCK_COST = (11.0, 4.5, 1.0)
"""Relative cost of one decoding forward pass: fixed, per row, per row-position beyond the
first. Measured for the default model on 2 CPU cores with ~2,000-token caches (a row of 9
costs ~525 ms with 1 position, ~960 ms with 8); on other hardware the numbers shift but the
shape (a fixed cost, then cost per position) holds."""


def block_width(drafts: Sequence[Sequence[int]], acceptance: Sequence[float]) -> int:
    """How many positions per row the next decoding forward should have (1 + drafts kept):
    the width with the most expected tokens per unit of :data:`BLOCK_COST`, where a row's
    drafts are accepted one after another with probability ``acceptance[row]`` each. Rows
    with fewer drafts than the width are padded, which costs as much as a draft."""
    fixed, per_row, per_position = BLOCK_COST
    rows = len(drafts)
    longest = max((len(d) for d in drafts), default=0)
    best_width, best_rate = 1, -1.0
    for width in range(1, longest + 2):
        gain = 0.0
        for d, p in zip(drafts, acceptance, strict=True):
            term = 1.0
            for _ in range(min(width - 1, len(d))):
                term *= p
                gain += term
            gain += 1.0  # the token after the accepted drafts
        rate = gain / (fixed + per_row * rows + per_position * rows * (width - 1))
        if rate > best_rate:
            best_width, best_rate = width, rate
    return best_width


class Drafter:
    """Draft tokens for one prompt's greedy decoding.

    ``realised``: an output this one probably resembles (the full-context output, for an
    ablation); ``prompt``: the prompt's token ids (prompt lookup). Positions are indexed once.
    """

    def __init__(self, prompt: Sequence[int], realised: Sequence[int] = ()) -> None:
        self.realised = list(realised)
        self.prompt = list(prompt)
        self.length = DRAFT_START
        self.drafted = 0
        self.accepted = 0
        self._realised_index = _ngram_index(self.realised, REALISED_NGRAM)
        self._prompt_index = _ngram_index(self.prompt, PROMPT_NGRAM, last=True)

    def propose(self, output: Sequence[int], limit: int, hint: Sequence[int] = ()) -> list[int]:
        """Up to ``min(limit, current length)`` draft tokens to follow ``output`` (the tokens
        decoded so far). ``hint`` tokens lead the draft (they are checked like any other)."""
        n = min(limit, self.length)
        if n <= 0:
            return []
        draft = list(hint[:n])
        history = [*output, *draft]
        while len(draft) < n:
            more = self._continue(history, n - len(draft))
            if not more:
                break
            draft.extend(more)
            history.extend(more)
        return draft

    def _continue(self, history: Sequence[int], n: int) -> list[int]:
        """The continuation of the longest n-gram that ends ``history``, looked up in the
        realised output (the occurrence nearest the aligned position), in ``history`` itself
        (a repeated phrase or loop; the latest earlier occurrence) and in the prompt (its last
        occurrence); the longest match wins, in that order on a tie."""
        best: list[int] = []
        best_len = 0
        for k in range(min(REALISED_NGRAM, len(history)), 0, -1):
            starts = self._realised_index.get(tuple(history[-k:]))
            if starts:
                expected = len(history)  # the realised position this one would be at
                i = min(starts, key=lambda s: (abs(s - expected), -s))
                best, best_len = self.realised[i : i + n], k
                break
        for k in range(min(REALISED_NGRAM, len(history) - 1), max(best_len, 1), -1):
            after = _last_occurrence(history, list(history[-k:]), end=len(history))
            if after is not None:
                best, best_len = list(history[after : after + n]), k
                break
        for k in range(min(PROMPT_NGRAM, len(history)), max(best_len, PROMPT_NGRAM_MIN - 1), -1):
            starts = self._prompt_index.get(tuple(history[-k:]))
            if starts:
                i = starts[-1]
                best = self.prompt[i : i + n]
                break
        return best

    @property
    def acceptance(self) -> float:
        """The share of this prompt's drafts accepted so far (one in two before any)."""
        return (self.accepted + 1) / (self.drafted + 2)

    def update(self, drafted: int, accepted: int) -> None:
        """Adapt the draft length to the outcome of the last block."""
        self.drafted += drafted
        self.accepted += accepted
        if drafted and accepted == drafted:
            self.length = min(DRAFT_MAX, self.length + 2)
        elif drafted:
            self.length = max(1, self.length - 1)


def _last_occurrence(tokens: Sequence[int], pattern: list[int], end: int) -> int | None:
    """The position right after the last occurrence of ``pattern`` that ends before ``end``
    (so something follows it), or None."""
    k = len(pattern)
    for stop in range(end - 1, k - 1, -1):
        if list(tokens[stop - k : stop]) == pattern:
            return stop
    return None


def _ngram_index(
    tokens: Sequence[int], max_n: int, *, last: bool = False
) -> dict[tuple[int, ...], list[int]]:
    """n-gram (1 ≤ n ≤ max_n) → the positions that follow its occurrences (only those with a
    token after them). ``last``: keep only the last occurrence (prompt lookup)."""
    index: dict[tuple[int, ...], list[int]] = {}
    for end in range(1, len(tokens)):
        for n in range(1, min(max_n, end) + 1):
            key = tuple(tokens[end - n : end])
            if last:
                index[key] = [end]
            else:
                index.setdefault(key, []).append(end)
    return index


def accept_block(
    top: Sequence[int], gaps: Sequence[float], drafts: Sequence[int], margin: float
) -> tuple[int, int | None]:
    """The exact acceptance rule for one verified block.

    ``top[j]`` / ``gaps[j]``: the argmax and the top-two log-probability gap at block position
    ``j`` (which predicts the token after the fed token and ``drafts[:j]``); there are
    ``len(drafts) + 1`` positions. Returns ``(accepted, next_token)``: the number of leading
    drafts accepted, and the token after them — the argmax of the first position that is not
    a clear win for its draft — or ``None`` when that position is a near tie (gap below
    ``margin``), which no block computation may decide.
    """
    if len(top) != len(drafts) + 1 or len(gaps) != len(top):
        raise ValueError(f"a block of {len(drafts)} drafts needs {len(drafts) + 1} positions")
    for j, (tok, gap) in enumerate(zip(top, gaps, strict=True)):
        if not gap > margin:  # NaN counts as a tie
            return j, None
        if j < len(drafts) and tok == drafts[j]:
            continue
        return j, int(tok)
    raise AssertionError("unreachable: the last position always ends the block")

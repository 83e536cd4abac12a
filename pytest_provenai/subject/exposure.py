"""Exposure treatments: the same originals, in the same order and budget; only the aids change.

A :class:`~pytest_provenai.frozen.model.GroundedCase` holds original sources and generated
retrieval aids (HyDE text, contextual prefixes, generated questions). Each treatment builds
the generator's view of that case differently — **only in the aid slot**:

==========  ==============================================================================
treatment   what the generator sees in the aid slot (after the originals)
==========  ==============================================================================
baseline    nothing: the view is exactly the reference prompt of the originals alone
            (:func:`pytest_provenai.subject.prompt.user_message`), sized for originals only.
omit        the aid slot *reserved but empty*: one ``[A<j>] (generated retrieval aid
            omitted)`` line per aid, no aid text. It differs from ``baseline`` only by the
            slot's frame, and from ``label`` only by the aid text — so ``omit`` vs
            ``baseline`` measures the frame, ``label`` vs ``omit`` the content.
label       ``[A<j>] (generated retrieval aid, not a source)`` then the aid text.
expose      the aid text alone, unmarked (no tag, no title): plain text among the resources.
mislabel    the aid presented as an original: ``[R<k+j>] <parent's title>`` then the aid
            text, numbered after the ``k`` originals like any other source.
==========  ==============================================================================

**Fixed across treatments** (and tested): the system message, the worked examples, the
question, and every original block — ``[R<i>] title`` + text cut to
``Budget.original_chars`` (the reference per-document limit, 900 characters) — are the same
strings at the same character offsets in every treatment, because the aid slot comes after
the last original. **The aid budget is reserved separately**: each aid is cut to
``Budget.aid_chars`` (400) and at most ``Budget.max_aids`` (3) aids are shown (the rest are
listed in ``dropped_aids``), so the slot can never exceed ``ExposureView.aid_reserved``
characters and can never truncate, move or reorder an original. The budget is counted in
characters, as the reference prompt's; identical original strings give identical tokens
except at the block boundaries.

The system message is the reference one plus two sentences (the same in every treatment):
answer ``unknown`` when the resources do not give the answer, and do not cite a block marked
as a generated aid. Its version is :data:`EXPOSURE_PROMPT_VERSION`.

:func:`run_treatments` generates the treatments together through
:meth:`ModelSubject.generate_many` (greedy, through the generation cache): the treatments share
everything before the aid slot, so a backend with the shared-prefix path runs that prefix
once and decodes the treatments in one batch, each output identical to generating it alone
(tested). Each output is parsed against the view's ids. The audit of the outputs (leaks,
aid citations, abstention, claims) is :mod:`pytest_provenai.audit.provenance`.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from pytest_provenai._io import sha256_text
from pytest_provenai.errors import BackendError
from pytest_provenai.frozen.model import GroundedCase, LedgerEntry
from pytest_provenai.subject.backends.base import Generation
from pytest_provenai.subject.near_ties import NearTie
from pytest_provenai.subject.parse import parse_output
from pytest_provenai.subject.prompt import (
    DOC_CHAR_LIMIT,
    SYSTEM_PROMPT,
    RenderChat,
    build_messages,
    cut_text,
    resource_block,
    user_message,
)
from pytest_provenai.subject.subject import ModelRunner, Subject
from pytest_provenai.subject.trace import GeneratorView, ParsedOutput, Resource

__all__ = [
    "AID_CHAR_LIMIT",
    "AID_LABEL",
    "EXPOSURE_PROMPT_VERSION",
    "EXPOSURE_SYSTEM_PROMPT",
    "MAX_AIDS",
    "OMITTED_LABEL",
    "TREATMENTS",
    "TREATMENT_INFO",
    "Block",
    "Budget",
    "ExposureRun",
    "ExposureView",
    "build_view",
    "run_treatments",
    "run_view",
]

TREATMENTS: tuple[str, ...] = ("baseline", "omit", "label", "expose", "mislabel")
"""The exposure treatments, in report order."""

TREATMENT_INFO: dict[str, str] = {
    "baseline": "aids absent: the reference view of the originals alone",
    "omit": "aid slot reserved, aid text omitted ('[A0] (generated retrieval aid omitted)')",
    "label": "aid present, marked '[A0] (generated retrieval aid, not a source)'",
    "expose": "aid present as plain unmarked text",
    "mislabel": "aid presented as an original source '[R<k>] <parent title>'",
}

AID_CHAR_LIMIT = 400
"""Per-aid character budget (aid text is cut to it; the originals keep theirs)."""

MAX_AIDS = 3
"""At most this many aids are shown per view; the rest are dropped and recorded."""

AID_LABEL = "(generated retrieval aid, not a source)"
OMITTED_LABEL = "(generated retrieval aid omitted)"

EXPOSURE_PROMPT_VERSION = "provenai-exposure-prompt/1"
"""Goes into every exposure record; bump it whenever the exposure prompt text changes."""

EXPOSURE_SYSTEM_PROMPT = (
    SYSTEM_PROMPT + "\nIf the resources do not give the answer, reply: Answer: unknown\n"
    "A block marked as a generated retrieval aid is not a source: do not cite it."
)
"""The system message of every treatment: the reference one plus the unknown and aid rules."""

_SEP = "\n\n"


@dataclass(frozen=True)
class Budget:
    """Character budgets of the aid slot: per aid text, and how many aids are shown.

    The originals' budget is not a parameter: it is the reference prompt's per-document
    limit (:data:`~pytest_provenai.subject.prompt.DOC_CHAR_LIMIT`), the same in every
    treatment (``original_chars``).
    """

    aid_chars: int = AID_CHAR_LIMIT
    max_aids: int = MAX_AIDS

    def __post_init__(self) -> None:
        if self.aid_chars < 1:
            raise ValueError(f"Budget.aid_chars must be >= 1, got {self.aid_chars}")
        if self.max_aids < 0:
            raise ValueError(f"Budget.max_aids must be >= 0, got {self.max_aids}")

    @property
    def original_chars(self) -> int:
        return DOC_CHAR_LIMIT

    def as_dict(self) -> dict[str, int]:
        return {
            "original_chars": self.original_chars,
            "aid_chars": self.aid_chars,
            "max_aids": self.max_aids,
        }


@dataclass(frozen=True)
class Block:
    """One block of the view: an original or an aid, where it sits in the prompt.

    ``slot`` is stable across treatments (``R<i>`` for the i-th original, ``A<j>`` for the
    j-th aid); ``display_id`` is the tag the generator sees (None when the block is shown
    unmarked); ``start``/``end`` the ``[start, end)`` character range in the prompt;
    ``has_text`` False for an omitted aid's frame; ``cut`` True when the text was cut to
    its budget.
    """

    slot: str
    entry_id: str
    origin: str  # "original" | "generated"
    display_id: str | None
    start: int
    end: int
    has_text: bool
    cut: bool

    def as_dict(self) -> dict[str, Any]:
        return {
            "slot": self.slot,
            "entry_id": self.entry_id,
            "origin": self.origin,
            "display_id": self.display_id,
            "range": [self.start, self.end],
            "has_text": self.has_text,
            "cut": self.cut,
        }


@dataclass(frozen=True)
class ExposureView:
    """The generator view of one case under one treatment."""

    case_id: str
    treatment: str
    prompt: str
    user: str
    blocks: tuple[Block, ...]
    budget: Budget
    aid_reserved: int
    dropped_aids: tuple[str, ...] = ()
    prompt_version: str = EXPOSURE_PROMPT_VERSION

    @property
    def originals(self) -> tuple[Block, ...]:
        return tuple(b for b in self.blocks if b.origin == "original")

    @property
    def aids(self) -> tuple[Block, ...]:
        return tuple(b for b in self.blocks if b.origin == "generated")

    def text(self, block: Block) -> str:
        return self.prompt[block.start : block.end]

    def origins(self) -> dict[str, str]:
        """Display id → origin (``original``/``generated``) of every tagged block: what a
        citation tag in the output resolves to."""
        return {b.display_id: b.origin for b in self.blocks if b.display_id is not None}

    def generator_view(self) -> GeneratorView:
        """The view as the reference :class:`GeneratorView`: prompt + range of every block,
        keyed by slot (``R<i>`` originals, ``A<j>`` aids)."""
        return GeneratorView(self.prompt, {b.slot: (b.start, b.end) for b in self.blocks})

    def summary(self) -> dict[str, Any]:
        """What a record keeps of the view: enough to replay and check it, not the prompt."""
        return {
            "treatment": self.treatment,
            "prompt_version": self.prompt_version,
            "prompt_sha256": sha256_text(self.prompt),
            "prompt_chars": len(self.prompt),
            "blocks": [b.as_dict() for b in self.blocks],
            "dropped_aids": list(self.dropped_aids),
            "aid_reserved": self.aid_reserved,
            "budget": self.budget.as_dict(),
        }


def _parent_title(aid: LedgerEntry, originals: Sequence[LedgerEntry]) -> str:
    for o in originals:
        if o.id == aid.parent and o.title.strip():
            return o.title
    return aid.title or "Source"


def _aid_block(
    treatment: str, j: int, aid: LedgerEntry, case: GroundedCase, budget: Budget
) -> tuple[str, str | None, bool]:
    """(block text, display id, has_text) of aid ``j`` under ``treatment``."""
    text = cut_text(aid.text.strip(), budget.aid_chars) if aid.text.strip() else ""
    if treatment == "omit":
        return f"[A{j}] {OMITTED_LABEL}", f"A{j}", False
    if treatment == "label":
        return f"[A{j}] {AID_LABEL}\n{text}", f"A{j}", True
    if treatment == "expose":
        return text, None, True
    if treatment == "mislabel":
        rid = f"R{len(case.originals) + j}"
        title = _parent_title(aid, case.originals)
        res = Resource(id=rid, title=title, text=aid.text, sha256=aid.sha256)
        return resource_block(res, budget.aid_chars), rid, True
    raise ValueError(f"unknown treatment {treatment!r}; expected one of {', '.join(TREATMENTS)}")


def _aid_overhead(case: GroundedCase, budget: Budget) -> int:
    """The longest frame an aid block can have besides its text (tag, label, title, \\n)."""
    k = len(case.originals) + budget.max_aids
    titles = [len(" ".join(o.title.split())) for o in case.originals] + [
        len(" ".join(a.title.split())) for a in case.aids
    ]
    tag = len(f"[R{k}] ")
    return tag + max([len(AID_LABEL), len(OMITTED_LABEL), len("Source"), *titles]) + 1


def build_view(
    case: GroundedCase,
    treatment: str,
    render_chat: RenderChat,
    budget: Budget | None = None,
) -> ExposureView:
    """The generator view of ``case`` under ``treatment`` (see the module docstring).

    Every original block is checked to be ``resource_block`` of its source at the
    original budget, every block's range to cover its text in the rendered prompt, and the
    aid slot to fit its reservation; a violated invariant raises AssertionError (kept under
    ``python -O``), a renderer that alters the user message ValueError.
    """
    if treatment not in TREATMENTS:
        raise ValueError(
            f"unknown treatment {treatment!r}; expected one of {', '.join(TREATMENTS)}"
        )
    budget = budget or Budget()
    resources = [
        Resource(id=f"R{i}", title=o.title, text=o.text, sha256=o.sha256)
        for i, o in enumerate(case.originals)
    ]
    messages, local = build_messages(case.question, resources)
    reference_user = messages[-1]["content"]
    shown = case.aids[: budget.max_aids]
    dropped = tuple(a.id for a in case.aids[budget.max_aids :])

    # The user message: the reference one (originals only), with the aid slot spliced in
    # after the last original block, before the closing question.
    original_blocks = [resource_block(r) for r in resources]
    head_end = max((end for _, end in local.values()), default=None)
    if head_end is None:  # no originals: the slot follows the "Resources:" line
        head_end = reference_user.rfind("\n\nQuestion: ")
    aid_parts: list[tuple[str, LedgerEntry, str | None, bool, bool]] = []
    if treatment != "baseline":
        for j, aid in enumerate(shown):
            text, display, has_text = _aid_block(treatment, j, aid, case, budget)
            cut = has_text and len(aid.text.strip()) > budget.aid_chars
            aid_parts.append((text, aid, display, has_text, cut))
    slot_text = "".join(
        (_SEP if (i or resources) else "") + text for i, (text, *_rest) in enumerate(aid_parts)
    )
    user = reference_user[:head_end] + slot_text + reference_user[head_end:]
    if treatment == "baseline" and user != user_message(case.question, resources)[0]:
        raise AssertionError("the baseline view is not the reference user message")
    aid_reserved = budget.max_aids * (len(_SEP) + _aid_overhead(case, budget) + budget.aid_chars)
    if len(slot_text) > aid_reserved:
        raise AssertionError(f"aid slot of {len(slot_text)} chars exceeds {aid_reserved}")

    messages = [dict(m) for m in messages]
    messages[0]["content"] = EXPOSURE_SYSTEM_PROMPT
    messages[-1]["content"] = user
    prompt = render_chat(messages)
    if not isinstance(prompt, str):
        raise TypeError(f"render_chat must return a str, got {type(prompt).__name__}")
    base = prompt.rfind(user)
    if base < 0:
        raise ValueError(
            "render_chat changed the user message (it does not occur verbatim in the rendered "
            "prompt), so block ranges cannot be located; render messages unchanged"
        )

    blocks: list[Block] = []
    for i, (r, o) in enumerate(zip(resources, case.originals, strict=True)):
        start, end = local[r.id]
        if reference_user[start:end] != original_blocks[i]:
            raise AssertionError(f"original block {r.id} differs from its reference block")
        cut = len(o.text.strip()) > budget.original_chars
        blocks.append(Block(r.id, o.id, "original", r.id, base + start, base + end, True, cut))
    offset = base + head_end
    for j, (text, aid, display, has_text, cut) in enumerate(aid_parts):
        offset += len(_SEP) if (j or resources) else 0
        blocks.append(
            Block(f"A{j}", aid.id, "generated", display, offset, offset + len(text), has_text, cut)
        )
        offset += len(text)
    for b, text in zip(blocks, [*original_blocks, *(p[0] for p in aid_parts)], strict=True):
        if prompt[b.start : b.end] != text:
            raise AssertionError(f"range {b.start}:{b.end} of {b.slot} is not its block")
    return ExposureView(
        case_id=case.id,
        treatment=treatment,
        prompt=prompt,
        user=user,
        blocks=tuple(blocks),
        budget=budget,
        aid_reserved=aid_reserved,
        dropped_aids=dropped,
    )


@dataclass(frozen=True)
class ExposureRun:
    """One treatment's generation for one case: the view, the raw output, its parse, its
    greedy near ties (None: the backend reports no margins)."""

    treatment: str
    view: ExposureView
    generation: Generation
    parsed: ParsedOutput
    cached: bool
    seconds: float
    near_ties: list[NearTie] | None = None


def _runner(subject: Subject) -> ModelRunner:
    runner = subject.runner()
    if runner is None:
        raise BackendError(
            f"exposure treatments need a model subject that renders prompts and generates "
            f"(--provenai-backend); {subject.identity.name!r} is not one (a --provenai-pipeline "
            "chooses its own prompt, so the harness cannot place aids in it)"
        )
    return runner


def run_view(runner: ModelRunner, view: ExposureView) -> ExposureRun:
    """Generate for a prepared view through the runner (greedy, through the generation
    cache) and parse the output against the view's tagged original-like ids."""
    start = time.perf_counter()
    generation, cached = runner.generate(view.prompt)
    seconds = time.perf_counter() - start
    return _parsed(view, generation, cached, seconds, runner.near_ties(generation))


def _parsed(
    view: ExposureView,
    generation: Generation,
    cached: bool,
    seconds: float,
    near_ties: list[NearTie] | None,
) -> ExposureRun:
    valid = [b.display_id for b in view.blocks if b.display_id and b.display_id.startswith("R")]
    parsed = parse_output(generation.text, len(valid), valid_ids=valid)
    return ExposureRun(view.treatment, view, generation, parsed, cached, seconds, near_ties)


def run_treatments(
    subject: Subject,
    case: GroundedCase,
    treatments: Sequence[str] = TREATMENTS,
    budget: Budget | None = None,
) -> dict[str, ExposureRun]:
    """Every treatment of ``case`` through the subject's model, in ``treatments`` order,
    generated together (:meth:`ModelRunner.generate_many`); ``seconds`` of each run is its
    share of the batch."""
    runner = _runner(subject)
    views = [build_view(case, t, runner.render_chat, budget) for t in treatments]
    start = time.perf_counter()
    outputs = runner.generate_many([v.prompt for v in views])
    share = (time.perf_counter() - start) / max(len(views), 1)
    return {
        v.treatment: _parsed(v, generation, cached, share, runner.near_ties(generation))
        for v, (generation, cached) in zip(views, outputs, strict=True)
    }

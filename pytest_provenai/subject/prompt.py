"""The generation prompt: resources as ``[R0]``…``[R9]`` blocks, and where each one sits.

The prompt asks for three sections — final answer, evidence summary, chain of reasoning —
with inline citation tags ``[R0]``, ``[R1]``, … (at most :data:`CITATION_LIMIT` of them), as
in ProvenAI §4.2. The wording is tuned for the small default model (SmolLM2-135M-Instruct);
``benchmarks/prompt_variants.py`` compares the variants that were tried. What helped:

- the format in the *system* message, answer first, one line per section
  (``Answer:`` / ``Evidence:`` / ``Reasoning:``), with no ``<placeholder>`` text the model
  could copy verbatim;
- two worked examples (a bridge question, a yes/no comparison) as earlier chat turns — this
  took answer-header compliance from 0/20 to 17/20 on HotpotQA dev records;
- the question both before and after the resources, so it is the last thing read.

Known cost of the examples: the small model sometimes copies their content (``Lake Tahoe``)
and tags into its reply; such citations are hallucinated and the audits count them so.

:func:`build_prompt` returns a :class:`GeneratorView`: the exact rendered prompt string and the
``[start, end)`` *character* range of every resource block inside it, so that a citation can
be resolved against what the generator actually saw.

Documents are cut to :data:`DOC_CHAR_LIMIT` characters by :func:`cut_text` (at a word
boundary, marked with ``…``); the resource's ``sha256`` stays the digest of the full source
text, the digest-pinned original.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from pytest_provenai._io import sha256_text
from pytest_provenai.frozen.model import Source
from pytest_provenai.subject.trace import GeneratorView, Resource

PROMPT_VERSION = "provenai-prompt/1"
"""Goes into every cache key and record; bump it whenever the prompt text changes."""

MAX_RESOURCES = 10
"""Retrieval depth: the prompt shows at most this many resources (``R0``…``R9``)."""

DOC_CHAR_LIMIT = 900
"""Prompt doc limit: a resource's text is cut to at most this many characters."""

CITATION_LIMIT = 2
"""The prompt asks for at most this many distinct citation tags."""

ELLIPSIS = "…"

# A word-boundary cut is used only if it keeps at least this share of the limit; otherwise
# (one very long "word", e.g. a URL) the text is cut hard at the limit.
_MIN_WORD_CUT_SHARE = 0.8

SYSTEM_PROMPT = (
    "Answer the question using only the resources. Each resource starts with a tag such as "
    "[R0]. Reply with three lines:\n"
    "Answer: the answer in a few words, or yes or no, then the tag of the resource it comes "
    "from.\n"
    "Evidence: the facts from the resources that support the answer, each followed by its tag.\n"
    "Reasoning: how these facts lead to the answer, with tags.\n"
    f"Cite at most {CITATION_LIMIT} resources."
)
"""The system message: the task and the answer-first, three-line format."""

QUESTION_FIRST = True
"""The question is stated before the resources as well as after them."""

EXAMPLES: tuple[tuple[str, tuple[tuple[str, str], ...], str], ...] = (
    (
        "Which book describes a visit to the lake on the border of California and Nevada?",
        (
            (
                "Lake Tahoe",
                "Lake Tahoe is a freshwater lake on the border of California and Nevada.",
            ),
            (
                "Mark Twain",
                "Mark Twain was an American writer. His book Roughing It describes a visit to "
                "Lake Tahoe.",
            ),
            ("Crater Lake", "Crater Lake is a lake in Oregon."),
        ),
        "Answer: Roughing It [R1]\n"
        "Evidence: Lake Tahoe is on the border of California and Nevada [R0]. Roughing It "
        "describes a visit to Lake Tahoe [R1].\n"
        "Reasoning: The lake is Lake Tahoe [R0], and the book about a visit to it is "
        "Roughing It [R1].",
    ),
    (
        "Are the Ottawa River and the Rhine both in Canada?",
        (
            (
                "Rhine",
                "The Rhine is a river in Europe. It flows through Germany and the Netherlands.",
            ),
            ("Mount Logan", "Mount Logan is the highest mountain in Canada."),
            ("Ottawa River", "The Ottawa River is a river in Canada."),
        ),
        "Answer: no [R0]\n"
        "Evidence: The Ottawa River is in Canada [R2], but the Rhine is in Europe [R0].\n"
        "Reasoning: Only the Ottawa River is in Canada [R2], so the answer is no.",
    ),
)
"""Worked examples, shown as earlier chat turns: (question, (title, text) pairs, reply).
A bridge question and a yes/no comparison; both cite at most two resources."""

RenderChat = Callable[[list[dict[str, str]]], str]


def make_resources(case_sources: Sequence[Source]) -> list[Resource]:
    """One :class:`Resource` per source, ids ``R0``…``R{k-1}`` in fixture order.

    ``text`` is the full source text and ``sha256`` the source's pinned digest; cutting to the
    prompt doc limit happens only when the prompt is built.
    """
    return [
        Resource(id=f"R{i}", title=s.title, text=s.text, sha256=s.sha256)
        for i, s in enumerate(case_sources)
    ]


def cut_text(text: str, limit: int = DOC_CHAR_LIMIT) -> str:
    """``text`` cut to at most ``limit`` characters.

    Text within the limit is returned unchanged. Longer text is cut at the last whitespace
    that leaves room for the ``…`` marker, trailing whitespace is dropped and ``…`` appended,
    so the result is ``len <= limit`` and ends in ``…``. When that word boundary would drop
    more than 20% of the limit (a single very long token), the cut is made mid-word at
    ``limit - 1`` characters instead.
    """
    if limit < 1:
        raise ValueError(f"doc limit must be >= 1 character, got {limit}")
    if len(text) <= limit:
        return text
    head = text[: limit - len(ELLIPSIS)]
    # Where the next character is whitespace, ``head`` already ends on a word boundary.
    if text[len(head)].isspace():
        cut = len(head)
    else:
        cut = max(head.rfind(" "), head.rfind("\n"), head.rfind("\t"))
    if cut < int(limit * _MIN_WORD_CUT_SHARE):
        cut = len(head)
    return head[:cut].rstrip() + ELLIPSIS


def resource_block(resource: Resource, limit: int = DOC_CHAR_LIMIT) -> str:
    """The text of one resource as it appears in the prompt (what its range covers)."""
    title = " ".join(resource.title.split())
    return f"[{resource.id}] {title}\n{cut_text(resource.text.strip(), limit)}"


def user_message(
    question: str, resources: Sequence[Resource]
) -> tuple[str, dict[str, tuple[int, int]]]:
    """The user message for one question, and each block's ``[start, end)`` inside it.

    ``Question: …`` (when :data:`QUESTION_FIRST`), ``Resources:``, the blocks separated by
    blank lines, then ``Question: …`` last — the last thing the model reads before replying.
    """
    question = " ".join(question.split())
    head = f"Question: {question}\n\nResources:\n" if QUESTION_FIRST else "Resources:\n"
    parts: list[str] = [head]
    offset = len(head)
    local: dict[str, tuple[int, int]] = {}
    for i, r in enumerate(resources):
        block = resource_block(r)
        sep = "\n\n" if i else ""
        offset += len(sep)
        local[r.id] = (offset, offset + len(block))
        parts.extend((sep, block))
        offset += len(block)
    parts.append(f"\n\nQuestion: {question}")
    return "".join(parts), local


def build_messages(
    question: str, resources: Sequence[Resource]
) -> tuple[list[dict[str, str]], dict[str, tuple[int, int]]]:
    """The chat messages, and each resource block's ``[start, end)`` inside the *last* (the
    real) user message: system, the worked :data:`EXAMPLES` as user/assistant turns, user.

    Raises ``ValueError`` for more than :data:`MAX_RESOURCES` resources or repeated ids.
    """
    if len(resources) > MAX_RESOURCES:
        raise ValueError(
            f"the prompt shows at most {MAX_RESOURCES} resources (R0..R{MAX_RESOURCES - 1}), "
            f"got {len(resources)}; retrieve fewer or truncate the list before building it"
        )
    ids = [r.id for r in resources]
    if len(set(ids)) != len(ids):
        raise ValueError(f"resource ids must be unique, got {ids}")

    messages = [{"role": "system", "content": SYSTEM_PROMPT}]
    for example_question, docs, reply in EXAMPLES:
        example_resources = [
            Resource(id=f"R{i}", title=t, text=x, sha256=sha256_text(x))
            for i, (t, x) in enumerate(docs)
        ]
        messages.append(
            {"role": "user", "content": user_message(example_question, example_resources)[0]}
        )
        messages.append({"role": "assistant", "content": reply})
    user, local = user_message(question, resources)
    messages.append({"role": "user", "content": user})
    return messages, local


def build_prompt(
    question: str, resources: Sequence[Resource], render_chat: RenderChat
) -> GeneratorView:
    """Render the prompt with ``render_chat`` and locate every resource block in it.

    The user message is found as the *last* occurrence of its content in the rendered string
    (the chat template wraps it, and nothing after it repeats it); each block's range is its
    offset inside the user message shifted by where the message starts. Every range is
    checked: ``prompt[start:end]`` equals the block text. A renderer that alters the user
    message raises ``ValueError``.
    """
    messages, local = build_messages(question, resources)
    user = messages[-1]["content"]
    prompt = render_chat(messages)
    if not isinstance(prompt, str):
        raise TypeError(f"render_chat must return a str, got {type(prompt).__name__}")
    base = prompt.rfind(user)
    if base < 0:
        raise ValueError(
            "render_chat changed the user message (it does not occur verbatim in the rendered "
            "prompt), so resource ranges cannot be located; render messages unchanged"
        )
    ranges: dict[str, tuple[int, int]] = {}
    for r in resources:
        start, end = local[r.id]
        start, end = start + base, end + base
        if prompt[start:end] != resource_block(r):  # an invariant, kept under ``python -O``
            raise AssertionError(f"range {start}:{end} of {r.id} is not its block")
        ranges[r.id] = (start, end)
    return GeneratorView(prompt=prompt, ranges=ranges)

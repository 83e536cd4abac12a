"""The Generator protocol every backend implements, and the values it returns."""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any, Protocol, runtime_checkable


@dataclass(frozen=True)
class Decoding:
    """Decoding regime. Only greedy decoding is supported; it is part of every record."""

    max_new_tokens: int = 128
    strategy: str = "greedy"

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass(frozen=True)
class Identity:
    """What produced an output. ``name`` + ``weights_sha256`` + ``decoding`` identify the
    model for snapshots; backend, device, dtype and library versions go to results JSON."""

    backend: str
    name: str
    weights_sha256: str
    dtype: str
    decoding: Decoding
    device: str = "cpu"
    libraries: dict[str, str] = field(default_factory=dict)
    endpoint: str = ""  # a served model's base URL (the openai backend); "" in-process

    def as_dict(self) -> dict[str, Any]:
        d = asdict(self)
        d["decoding"] = self.decoding.as_dict()
        return d

    def model_key(self) -> dict[str, Any]:
        """The backend-independent part that snapshots and cache keys use."""
        return {
            "name": self.name,
            "weights_sha256": self.weights_sha256,
            "decoding": self.decoding.as_dict(),
        }

    def cache_key(self) -> dict[str, Any]:
        """What generation and KL cache keys use: :meth:`model_key`, plus the base URL of a
        served model (two servers of one model id may differ; records leave the URL out so
        a fleet of servers gives one set of records)."""
        key = self.model_key()
        if self.endpoint:
            key["endpoint"] = self.endpoint
        return key


@dataclass(frozen=True)
class Capabilities:
    token_ids: bool
    logprobs: bool
    score: bool
    score_topk: int = 0  # > 0: score rows hold only each position's top-k (served models)


@dataclass
class Generation:
    """One greedy generation. ``token_ids``/``logprobs`` are empty when the backend has none.

    ``margins``: per output token, the log-probability gap between the chosen token and the
    runner-up at that step (>= 0 for a greedy choice); empty when the backend cannot tell.
    A small margin is a near tie another thread count, kernel or device may settle the other
    way (see :mod:`pytest_provenai.subject.near_ties`)."""

    text: str
    token_ids: list[int] = field(default_factory=list)
    logprobs: list[float] = field(default_factory=list)
    finish_reason: str = "stop"  # "stop" (EOS) or "length"
    margins: list[float] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> Generation:
        return cls(
            text=str(d["text"]),
            token_ids=[int(x) for x in d.get("token_ids", [])],
            logprobs=[float(x) for x in d.get("logprobs", [])],
            finish_reason=str(d.get("finish_reason", "stop")),
            margins=[float(x) for x in d.get("margins", [])],
        )


@runtime_checkable
class Generator(Protocol):
    """A text generator the harness audits.

    ``generate`` decodes greedily from a fully rendered prompt string. ``score`` returns,
    for each continuation position, the log-softmax distribution over the vocabulary
    (a list of vocab-sized float lists, or an array convertible to one) under teacher forcing;
    backends without logits declare ``capabilities.score = False`` and raise on ``score``.
    ``render_chat`` turns a list of chat messages into the prompt string (the model's chat
    template); a pipeline backend may return the user message unchanged.
    """

    @property
    def identity(self) -> Identity: ...

    @property
    def capabilities(self) -> Capabilities: ...

    def render_chat(self, messages: list[dict[str, str]]) -> str: ...

    def generate(self, prompt: str) -> Generation: ...

    def score(self, prompt: str, continuation_ids: list[int]) -> Any: ...


# -- leave-one-resource-out ablation: what a backend's fast path returns ---------------------

TIE_MARGIN = 1e-3
"""Below this log-probability gap between the best and second-best token, an argmax computed
any other way than :meth:`Generator.generate` computes it (teacher-forced, batched, a block
of drafts, another cache layout) is not trusted to equal what ``generate`` would pick: the
computations agree only up to float rounding. A fast path never decides a token at such a
near tie: it replays ``generate``'s own computation up to there and takes ``generate``'s
token."""

FAST_PATH_VERSION = "provenai-fast-path/3"  # /3: generations carry their greedy margins
"""Version of the backends' fast paths (:meth:`KVAblation.ablation_pass`,
:meth:`BatchGenerating.generate_many`), stored with every generation they put in the
generation cache. A cached generation written by another version (or by a release that did
not record one) is ignored and recomputed. Bump it whenever a fast path changes."""


@dataclass
class DecodeStats:
    """What a fast path's greedy decoding did: draft tokens proposed, drafts accepted,
    positions computed in decoding forwards (one per fed token, block padding included), and
    near ties settled by replaying ``generate``'s own computation (``fallbacks``)."""

    drafted: int = 0
    accepted: int = 0
    verified: int = 0
    fallbacks: int = 0

    def add(self, other: DecodeStats) -> None:
        self.drafted += other.drafted
        self.accepted += other.accepted
        self.verified += other.verified
        self.fallbacks += other.fallbacks

    def as_dict(self) -> dict[str, int]:
        return asdict(self)


@dataclass
class VariantPass:
    """One ablated prompt under the fast path.

    ``rows``: ``[len(continuation), vocab]`` log-softmax rows of the *realised* continuation
    teacher-forced under this prompt (what the KL target needs). ``generation``: the greedy
    decoding of this prompt, exact (identical to a fresh ``generate``). ``divergence``: the
    first continuation position where that decoding may leave the realised continuation
    (ablated argmax differs, or a near tie), ``None`` if it never does. ``forward_tokens``:
    tokens fed through the model for this prompt (suffix after the shared prefix, teacher-forced
    continuation, decoding blocks, a fallback generation). ``decode``: what its decoding did.
    """

    rows: Any
    generation: Generation
    divergence: int | None
    forward_tokens: int
    decode: DecodeStats = field(default_factory=DecodeStats)


@dataclass
class AblationPass:
    """The fast path's result for one case: the full-context teacher-forced rows of the
    realised continuation and one :class:`VariantPass` per ablated prompt (input order)."""

    full_rows: Any
    variants: list[VariantPass]
    forward_tokens: int  # all tokens fed, including the shared full-prompt pass

    @property
    def decode(self) -> DecodeStats:
        total = DecodeStats()
        for v in self.variants:
            total.add(v.decode)
        return total


@dataclass
class GenerationBatch:
    """:meth:`BatchGenerating.generate_many`'s result: one exact greedy generation per prompt
    (input order), the tokens fed through the model, and what decoding did."""

    generations: list[Generation]
    forward_tokens: int
    decode: DecodeStats = field(default_factory=DecodeStats)


@runtime_checkable
class KVAblation(Protocol):
    """A backend with the ablation fast path (KV-prefix reuse; see subject/ablation.py)."""

    def ablation_pass(
        self,
        prompt: str,
        variants: list[str],
        continuation: list[int],
        *,
        margin: float = TIE_MARGIN,
    ) -> AblationPass: ...


@runtime_checkable
class BatchGenerating(Protocol):
    """A backend that generates for several prompts at once, sharing the KV cache of their
    common token prefix and decoding them together; every generation identical to
    :meth:`Generator.generate` of its prompt."""

    def generate_many(
        self, prompts: list[str], *, margin: float = TIE_MARGIN
    ) -> GenerationBatch: ...


@runtime_checkable
class Tokenizing(Protocol):
    """A backend that exposes its tokenizer: prompt encoding and output decoding."""

    def encode(self, prompt: str) -> list[int]: ...

    def decode(self, token_ids: list[int]) -> str: ...

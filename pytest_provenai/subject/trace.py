"""What the subject under audit produced for one case: the Trace."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from pytest_provenai.subject.backends.base import Generation, Identity
from pytest_provenai.subject.near_ties import NearTie


@dataclass(frozen=True)
class Resource:
    """A document the harness put in front of the generator, addressed as ``R<i>``."""

    id: str
    title: str
    text: str
    sha256: str


@dataclass(frozen=True)
class GeneratorView:
    """The exact prompt string and the [start, end) character range of every resource in it."""

    prompt: str
    ranges: dict[str, tuple[int, int]]

    def as_dict(self) -> dict[str, Any]:
        return {"prompt": self.prompt, "ranges": {k: list(v) for k, v in self.ranges.items()}}


@dataclass(frozen=True)
class ParsedOutput:
    """The parser's reading of a raw model output.

    ``cited_ids`` are valid resource ids in order of first appearance (deduplicated);
    ``invalid_citations`` are tags that name no resource (e.g. ``R12`` of 10) — kept and
    counted, never dropped. ``repairs`` names each repair the parser applied.
    """

    raw: str
    answer: str
    evidence: str
    reasoning: str
    cited_ids: tuple[str, ...]
    invalid_citations: tuple[str, ...]
    repairs: tuple[str, ...]


@dataclass
class Trace:
    case_id: str
    resources: list[Resource]
    raw_output: str
    answer: str
    cited_ids: list[str]
    invalid_citations: list[str]
    identity: Identity
    view: GeneratorView | None = None
    generation: Generation | None = None
    near_ties: list[NearTie] | None = None  # None: the backend reports no greedy margins
    repairs: list[str] = field(default_factory=list)
    cached: bool = False
    seconds: float = 0.0
    # Index mode only (pytest_provenai.retrieval.subject): k, the index identity and, per
    # rank, the passage id, title, sha256 and score of each retrieved resource.
    retrieval: dict[str, Any] | None = None

    def cited_titles(self) -> list[str]:
        by_id = {r.id: r.title for r in self.resources}
        return [by_id[c] for c in self.cited_ids if c in by_id]

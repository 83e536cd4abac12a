"""In-memory form of frozen fixtures: a case and its digest-pinned sources."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, TypeAlias

from pytest_provenai.frozen.traces import ProbeCase, TraceCase

#: Fixture kinds a set's manifest may declare (``kind``); a manifest without ``kind`` is a
#: HotpotQA set. The plugin's ``provenai_kind`` marker selects cases by these names.
KINDS = (
    "hotpotqa",
    "no_answer",
    "exposure",
    "quotation",
    "derivation",
    "mcp_trace",
    "conflation_probe",
)

#: What a generated aid was made for: HyDE hypothetical documents, contextual chunk prefixes,
#: generated questions.
AID_KINDS = ("hyde", "contextual_prefix", "generated_question")


@dataclass(frozen=True)
class Source:
    """One original evidence document, pinned by the sha256 of its text's UTF-8 bytes."""

    title: str
    sentences: tuple[str, ...]
    text: str
    sha256: str
    version: int = 1


@dataclass(frozen=True)
class SupportingFact:
    title: str
    sentence: int


@dataclass(frozen=True)
class Case:
    """One frozen question with its gold answer, gold support and sources.

    ``fixture_set`` is the set's name (its folder name) and ``path`` the case file it was
    loaded from; both are provenance, not content.
    """

    id: str
    question: str
    answer: str
    type: str
    level: str
    supporting_facts: tuple[SupportingFact, ...]
    supporting_titles: tuple[str, ...]
    sources: tuple[Source, ...]
    fixture_set: str = ""
    path: str = ""
    extra: dict[str, Any] = field(default_factory=dict, compare=False, hash=False)
    kind: str = "hotpotqa"


@dataclass(frozen=True)
class FixtureSet:
    """A loaded fixture set folder: its manifest and its cases in manifest order."""

    name: str
    path: str
    manifest: dict[str, Any]
    cases: tuple[AnyCase, ...]

    @property
    def kind(self) -> str:
        """The set's fixture kind (a manifest without ``kind`` is a HotpotQA set)."""
        kind = self.manifest.get("kind", "hotpotqa")
        return kind if isinstance(kind, str) else "hotpotqa"


# -- provenance-layer fixture kinds (no_answer, exposure, quotation, derivation) -------------
# Skeleton shared by the loader (frozen/load.py), the resolver (frozen/ledger.py), the
# exposure harness (subject/exposure.py) and the audits (audit/provenance.py). Fields may be
# added; existing names keep their meaning.


@dataclass(frozen=True)
class LedgerEntry:
    """One retained item of a fixture's ledger: an original source or a generated aid.

    ``sha256`` is the digest of ``text``'s UTF-8 bytes (re-hashed at load). A generated aid
    (``kind == "generated"``) names its ``aid_kind`` (hyde, contextual_prefix,
    generated_question) and the original it was generated from (``parent`` +
    ``parent_sha256``). Generated text is never evidence.
    """

    id: str
    kind: str  # "original" | "generated"
    text: str
    sha256: str
    title: str = ""
    version: int = 1
    aid_kind: str | None = None
    parent: str | None = None
    parent_sha256: str | None = None

    @property
    def data(self) -> bytes:
        """The retained bytes: ``text`` as UTF-8 (citation ranges are offsets into these)."""
        return self.text.encode("utf-8")


@dataclass(frozen=True)
class GroundedCase:
    """A question over originals (+ generated aids): kinds ``no_answer`` and ``exposure``.

    ``expected_answer`` is ``"unknown"`` when the originals do not answer the question.
    ``aid_only_values`` are literals (numbers, dates, identifiers) that occur in an aid and in
    no original: one of them in an answer is a leak of generated text into the answer.
    """

    id: str
    kind: str  # "no_answer" | "exposure"
    question: str
    originals: tuple[LedgerEntry, ...]
    aids: tuple[LedgerEntry, ...]
    expected_answer: str
    aid_only_values: tuple[str, ...] = ()
    fixture_set: str = ""
    path: str = ""
    note: str = ""  # what the case is about, for people (never shown to a model)


@dataclass(frozen=True)
class QuotationCase:
    """A citation object checked against a ledger; ``citation`` is the raw JSON value (it may
    be malformed on purpose) and ``expected`` the outcome the resolver must give."""

    id: str
    ledger: tuple[LedgerEntry, ...]
    citation: Any
    quote: str
    expected: str
    normalisation: str = "exact"  # the resolver policy name (frozen.ledger.POLICIES)
    fixture_set: str = ""
    path: str = ""
    kind: str = "quotation"
    note: str = ""  # why the citation gets its expected outcome, for people


@dataclass(frozen=True)
class Operand:
    """A retained operand of a derivation: a value quoted from an original by range."""

    name: str
    value: str
    source_id: str
    range: tuple[int, int]
    digest: str = ""  # sha256 the operand's citation pins; "" = the ledger entry's own digest


@dataclass(frozen=True)
class DerivationCase:
    """A derived value: operands that must resolve to originals, the permitted calculation,
    and the expected result."""

    id: str
    ledger: tuple[LedgerEntry, ...]
    operands: tuple[Operand, ...]
    operation: str
    expected: str
    fixture_set: str = ""
    path: str = ""
    kind: str = "derivation"
    question: str = ""
    expected_warranted: bool = True  # the verdict the fixture's author expects
    note: str = ""


#: Any case a fixture set can hold (the attribution kinds live in frozen/traces.py).
AnyCase: TypeAlias = "Case | GroundedCase | QuotationCase | DerivationCase | TraceCase | ProbeCase"

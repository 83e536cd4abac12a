"""In-memory form of frozen fixtures: a case and its digest-pinned sources."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


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


@dataclass(frozen=True)
class FixtureSet:
    """A loaded fixture set folder: its manifest and its cases in manifest order."""

    name: str
    path: str
    manifest: dict[str, Any]
    cases: tuple[Case, ...]

"""The canonical passage corpus: paragraphs of HotpotQA files and frozen fixture sets,
deduplicated on (title, text) identity, each keeping links to every place it came from.

A *source row* is one paragraph of one record (a HotpotQA ``context`` entry, or a fixture
case's source). Rows with the same title and the same text (exact, after
``"".join(sentences)``) become one *canonical passage*; its *links* say which source
(file or fixture set name), split, record id and paragraph position each row had. The
corpus is sorted by (title, text) and links by (source, split, record, position), so the
result does not depend on the order the sources were given in.

Pure Python: no faiss, torch or pytest import.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from pytest_provenai._io import sha256_bytes, sha256_text
from pytest_provenai.errors import FixtureError, RetrievalError
from pytest_provenai.frozen.jsonread import describe_value
from pytest_provenai.frozen.load import MANIFEST_NAME, json_pointer, parse_json_bytes
from pytest_provenai.frozen.model import Case

__all__ = [
    "Corpus",
    "Link",
    "Passage",
    "SourceInfo",
    "build_corpus",
    "load_corpus",
    "passage_id",
    "read_sources",
]

UNKNOWN_SPLIT = "unknown"


def passage_id(title: str, text: str) -> str:
    """Stable id of a canonical passage: ``p`` + the first 16 hex digits of the sha256 of
    ``title``, a U+001F separator and ``text``. Independent of the corpus it sits in."""
    return "p" + sha256_text(f"{title}\x1f{text}")[:16]


@dataclass(frozen=True, order=True)
class Link:
    """Where one source row came from: ``source`` (file or fixture set name), ``split``,
    ``record`` (HotpotQA ``_id`` / case id) and ``position`` (paragraph index in the record)."""

    source: str
    split: str
    record: str
    position: int

    def as_dict(self) -> dict[str, Any]:
        return {
            "source": self.source,
            "split": self.split,
            "record": self.record,
            "position": self.position,
        }


@dataclass(frozen=True)
class Passage:
    """A canonical passage: title, text, sha256 of the text's UTF-8 bytes, and its links."""

    id: str
    title: str
    text: str
    sha256: str
    links: tuple[Link, ...]


@dataclass(frozen=True)
class SourceInfo:
    """One input: a HotpotQA JSON file or a fixture set folder (paths are never stored,
    only the name, so the manifest does not depend on where the inputs lie)."""

    name: str
    kind: str  # "hotpotqa" | "fixture_set"
    sha256: str  # of the file's bytes / of the set's manifest.json
    split: str
    records: int
    rows: int

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "kind": self.kind,
            "sha256": self.sha256,
            "split": self.split,
            "records": self.records,
            "rows": self.rows,
        }


@dataclass(frozen=True)
class Row:
    title: str
    text: str
    link: Link


@dataclass
class Corpus:
    passages: list[Passage]
    sources: list[SourceInfo]
    skipped: list[str] = field(default_factory=list)

    @property
    def source_rows(self) -> int:
        return sum(s.rows for s in self.sources)

    @property
    def canonical_rows(self) -> int:
        return len(self.passages)

    @property
    def duplicates_removed(self) -> int:
        return self.source_rows - self.canonical_rows

    def counts(self) -> dict[str, int]:
        return {
            "sources": len(self.sources),
            "records": sum(s.records for s in self.sources),
            "source_rows": self.source_rows,
            "canonical_rows": self.canonical_rows,
            "duplicates_removed": self.duplicates_removed,
        }


# --------------------------------------------------------------------------- reading


def _split_of(file_name: str) -> str:
    from pytest_provenai.errors import ProvenaiError
    from pytest_provenai.frozen.freeze import infer_split

    try:
        return infer_split(file_name)
    except ProvenaiError:
        return UNKNOWN_SPLIT


def _hotpotqa_rows(records: list[Any], shown: str, name: str, split: str) -> Iterator[Row]:
    def fail(parts: tuple[str | int, ...], expected: str, value: Any) -> FixtureError:
        return FixtureError(shown, json_pointer(*parts), expected, describe_value(value))

    for i, rec in enumerate(records):
        if not isinstance(rec, dict):
            raise fail((i,), "a HotpotQA record (a JSON object)", rec)
        rid = rec.get("_id")
        if not isinstance(rid, str) or not rid:
            raise fail((i, "_id"), "a non-empty record id string", rid)
        context = rec.get("context")
        if not isinstance(context, list):
            raise fail((i, "context"), "an array of [title, sentences] paragraphs", context)
        for j, para in enumerate(context):
            if not isinstance(para, list) or len(para) != 2:
                raise fail((i, "context", j), "a [title, sentences] pair", para)
            title, sentences = para
            if not isinstance(title, str) or not title:
                raise fail((i, "context", j, 0), "a non-empty title string", title)
            if not isinstance(sentences, list) or not all(isinstance(s, str) for s in sentences):
                raise fail((i, "context", j, 1), "an array of sentence strings", sentences)
            yield Row(title, "".join(sentences), Link(name, split, rid, j))


def _read_hotpotqa(path: Path, shown: str, *, strict: bool) -> tuple[SourceInfo, list[Row]] | None:
    try:
        data = path.read_bytes()
    except OSError as exc:
        raise RetrievalError(f"{shown}: cannot read ({exc.strerror or exc})") from None
    records = parse_json_bytes(data, shown)
    if not isinstance(records, list):
        if not strict:
            return None
        raise FixtureError(
            shown,
            "",
            "a HotpotQA JSON file (an array of records) or a fixture set folder",
            describe_value(records),
        )
    split = _split_of(path.name)
    rows = list(_hotpotqa_rows(records, shown, path.name, split))
    info = SourceInfo(path.name, "hotpotqa", sha256_bytes(data), split, len(records), len(rows))
    return info, rows


def _read_fixture_set(path: Path) -> tuple[SourceInfo, list[Row]]:
    from pytest_provenai.frozen.load import load_fixture_set

    fixture_set = load_fixture_set(path)
    if fixture_set.kind != "hotpotqa":
        raise RetrievalError(
            f"{os.fspath(path)}: a {fixture_set.kind!r} fixture set; only hotpotqa sets (cases "
            "with sources) can be indexed"
        )
    split = str(fixture_set.manifest.get("split") or UNKNOWN_SPLIT)
    rows = [
        Row(src.title, src.text, Link(fixture_set.name, split, case.id, j))
        for case in fixture_set.cases
        if isinstance(case, Case)
        for j, src in enumerate(case.sources)
    ]
    digest = sha256_bytes((path / MANIFEST_NAME).read_bytes())
    info = SourceInfo(
        fixture_set.name, "fixture_set", digest, split, len(fixture_set.cases), len(rows)
    )
    return info, rows


def read_sources(
    paths: Sequence[str | os.PathLike[str]],
) -> tuple[list[tuple[SourceInfo, list[Row]]], list[str]]:
    """Read every input. A path is a HotpotQA JSON file, a fixture set folder (it has a
    ``manifest.json``), or a folder of HotpotQA JSON files (its ``*.json`` files that hold a
    JSON array are read; others, e.g. an id -> provenance map, are skipped and named in the
    second return value). A bad input raises :class:`FixtureError` / :class:`RetrievalError`
    naming the file."""
    if not paths:
        raise RetrievalError("no sources given; pass HotpotQA JSON files or fixture set folders")
    read: list[tuple[SourceInfo, list[Row]]] = []
    skipped: list[str] = []
    for raw in paths:
        path = Path(raw)
        shown = os.fspath(raw)
        if path.is_dir() and (path / MANIFEST_NAME).is_file():
            read.append(_read_fixture_set(path))
        elif path.is_dir():
            files = sorted(p for p in path.iterdir() if p.suffix == ".json" and p.is_file())
            if not files:
                raise RetrievalError(
                    f"{shown}: folder holds no *.json file and no {MANIFEST_NAME}; pass "
                    "HotpotQA JSON files or a fixture set folder"
                )
            found = 0
            for file in files:
                got = _read_hotpotqa(file, os.path.join(shown, file.name), strict=False)
                if got is None:
                    skipped.append(file.name)
                else:
                    read.append(got)
                    found += 1
            if not found:
                raise RetrievalError(
                    f"{shown}: no *.json file in the folder holds a JSON array of HotpotQA records"
                )
        elif path.is_file():
            got = _read_hotpotqa(path, shown, strict=True)
            assert got is not None
            read.append(got)
        else:
            raise RetrievalError(f"{shown}: no such file or folder")
    seen: dict[str, SourceInfo] = {}
    for info, _rows in read:
        other = seen.get(info.name)
        if other is not None:
            what = "the same content" if other.sha256 == info.sha256 else "different contents"
            raise RetrievalError(
                f"source {info.name!r} is given twice ({what}); each source name must be "
                "unique because provenance links name it — pass it once, or rename one"
            )
        seen[info.name] = info
    return read, skipped


# --------------------------------------------------------------------------- dedup


def build_corpus(
    read: Iterable[tuple[SourceInfo, list[Row]]], skipped: Sequence[str] = ()
) -> Corpus:
    """Deduplicate rows on (title, text) identity; links of all duplicates are kept."""
    groups: dict[tuple[str, str], list[Link]] = {}
    sources: list[SourceInfo] = []
    for info, rows in read:
        sources.append(info)
        for row in rows:
            groups.setdefault((row.title, row.text), []).append(row.link)
    passages: list[Passage] = []
    ids: dict[str, tuple[str, str]] = {}
    for title, text in sorted(groups):
        pid = passage_id(title, text)
        if pid in ids:  # pragma: no cover - a 64-bit prefix collision
            raise RetrievalError(f"passage id collision: {ids[pid][0]!r} and {title!r} share {pid}")
        ids[pid] = (title, text)
        links = tuple(sorted(set(groups[(title, text)])))
        passages.append(Passage(pid, title, text, sha256_text(text), links))
    sources.sort(key=lambda s: (s.kind, s.name, s.sha256))
    return Corpus(passages=passages, sources=sources, skipped=sorted(skipped))


def load_corpus(paths: Sequence[str | os.PathLike[str]]) -> Corpus:
    """``build_corpus(*read_sources(paths))``."""
    read, skipped = read_sources(paths)
    return build_corpus(read, skipped)

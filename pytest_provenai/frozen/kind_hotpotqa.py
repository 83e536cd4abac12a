"""Fixture kind ``hotpotqa``: one HotpotQA question with its gold answer, gold support and
the context paragraphs as digest-pinned sources (``case.schema.json``, manifest
``manifest.schema.json``).

Beyond the schema: the id is re-checked with ``fullmatch``, every source's text must be the
concatenation of its sentences and hash to its sha256, and every gold title must name a
source. The manifest's ``source_sha256`` is re-checked the same way.
"""

from __future__ import annotations

from typing import Any

from pytest_provenai._io import sha256_text
from pytest_provenai.errors import FixtureError
from pytest_provenai.frozen.jsonread import describe_value, json_pointer
from pytest_provenai.frozen.model import Case, Source, SupportingFact
from pytest_provenai.frozen.validate import HEX64_RE, ID_MAX_LENGTH, ID_RE

__all__ = ["build_hotpotqa_case", "case_surely_valid", "check_hotpotqa_manifest"]

# A fast path for case files: jsonschema costs ~2 ms a case, which dominates loading large
# sets. ``case_surely_valid`` is deliberately conservative -- it answers True only for a
# document that certainly satisfies case.schema.json (tests check this against jsonschema on
# mutated documents); anything else goes through the jsonschema validator, which stays the
# authority and describes the error.

_CASE_KEYS = frozenset(
    (
        "schema_version",
        "kind",
        "id",
        "question",
        "answer",
        "type",
        "level",
        "supporting_facts",
        "supporting_titles",
        "sources",
    )
)
_FACT_KEYS = frozenset(("title", "sentence"))
_SOURCE_KEYS = frozenset(("title", "sentences", "text", "sha256", "version"))


def _is_int(value: Any) -> bool:
    return type(value) is int


def _is_text(value: Any, *, min_length: int = 0) -> bool:
    return type(value) is str and len(value) >= min_length


def case_surely_valid(obj: Any) -> bool:
    if type(obj) is not dict or obj.keys() != _CASE_KEYS:
        return False
    if not (_is_int(obj["schema_version"]) and obj["schema_version"] == 1):
        return False
    if obj["kind"] != "hotpotqa" or type(obj["kind"]) is not str:
        return False
    case_id = obj["id"]
    if not (_is_text(case_id) and len(case_id) <= ID_MAX_LENGTH and ID_RE.fullmatch(case_id)):
        return False
    if not (
        _is_text(obj["question"], min_length=1)
        and _is_text(obj["answer"])
        and _is_text(obj["type"], min_length=1)
        and _is_text(obj["level"], min_length=1)
    ):
        return False
    facts = obj["supporting_facts"]
    if type(facts) is not list:
        return False
    for fact in facts:
        if type(fact) is not dict or fact.keys() != _FACT_KEYS:
            return False
        if not (_is_text(fact["title"], min_length=1) and _is_int(fact["sentence"])):
            return False
        if fact["sentence"] < 0:
            return False
    titles = obj["supporting_titles"]
    if type(titles) is not list or not all(_is_text(title, min_length=1) for title in titles):
        return False
    if len(set(titles)) != len(titles):
        return False
    sources = obj["sources"]
    if type(sources) is not list or not sources:
        return False
    for src in sources:
        if type(src) is not dict or src.keys() != _SOURCE_KEYS:
            return False
        if not (_is_text(src["title"], min_length=1) and _is_text(src["text"])):
            return False
        if type(src["sentences"]) is not list or not all(
            _is_text(sentence) for sentence in src["sentences"]
        ):
            return False
        if not (_is_text(src["sha256"]) and HEX64_RE.fullmatch(src["sha256"])):
            return False
        if not (_is_int(src["version"]) and src["version"] >= 1):
            return False
    return True


# --------------------------------------------------------------------------- checks


def _first_difference(a: str, b: str) -> int:
    for index, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return index
    return min(len(a), len(b))


def _check_case(obj: dict[str, Any], path: str) -> None:
    """Checks the schema cannot express: joined text, text digests, gold titles."""
    if not ID_RE.fullmatch(obj["id"]):  # JSON Schema's "$" also matches before a final "\n"
        raise FixtureError(
            path, "/id", f"a string matching ^{ID_RE.pattern}$", describe_value(obj["id"])
        )
    titles: set[str] = set()
    for i, src in enumerate(obj["sources"]):
        titles.add(src["title"])
        joined = "".join(src["sentences"])
        text: str = src["text"]
        if text != joined:
            at = _first_difference(text, joined)
            raise FixtureError(
                path,
                json_pointer("sources", i, "text"),
                f'"".join(/sources/{i}/sentences) ({len(joined)} characters)',
                f"a text that differs from it at character {at} ({len(text)} characters)",
            )
        digest = sha256_text(text)
        if src["sha256"] != digest:
            raise FixtureError(
                path,
                json_pointer("sources", i, "sha256"),
                f"{digest} (sha256 of /sources/{i}/text)",
                str(src["sha256"]),
            )
    for j, title in enumerate(obj["supporting_titles"]):
        if title not in titles:
            raise FixtureError(
                path,
                json_pointer("supporting_titles", j),
                "the title of one of the case's sources",
                describe_value(title),
            )
    for j, fact in enumerate(obj["supporting_facts"]):
        if fact["title"] not in titles:
            raise FixtureError(
                path,
                json_pointer("supporting_facts", j, "title"),
                "the title of one of the case's sources",
                describe_value(fact["title"]),
            )


def _build_case(obj: dict[str, Any], path: str, fixture_set: str) -> Case:
    return Case(
        id=obj["id"],
        question=obj["question"],
        answer=obj["answer"],
        type=obj["type"],
        level=obj["level"],
        supporting_facts=tuple(
            SupportingFact(title=f["title"], sentence=f["sentence"])
            for f in obj["supporting_facts"]
        ),
        supporting_titles=tuple(obj["supporting_titles"]),
        sources=tuple(
            Source(
                title=s["title"],
                sentences=tuple(s["sentences"]),
                text=s["text"],
                sha256=s["sha256"],
                version=s["version"],
            )
            for s in obj["sources"]
        ),
        fixture_set=fixture_set,
        path=path,
    )


def build_hotpotqa_case(obj: dict[str, Any], path: str, fixture_set: str) -> Case:
    """The :class:`Case` of a schema-valid case document, after the checks the schema
    cannot express."""
    _check_case(obj, path)
    return _build_case(obj, path, fixture_set)


def check_hotpotqa_manifest(manifest: dict[str, Any], path: str) -> None:
    """The manifest check its schema cannot express (``$`` also matches before ``\\n``)."""
    if not HEX64_RE.fullmatch(manifest["source_sha256"]):
        raise FixtureError(
            path,
            "/source_sha256",
            "a string matching ^[0-9a-f]{64}$",
            describe_value(manifest["source_sha256"]),
        )

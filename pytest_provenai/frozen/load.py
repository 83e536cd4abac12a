"""Strict loading of frozen fixture sets.

A fixture set is a folder::

    <set>/manifest.json          provenance, licence, and the sha256 of every case file
    <set>/cases/<id>.json        one case each (see schemas/case.schema.json)
    <set>/README.md              licence and attribution for people (not read here)

Loading checks everything and trusts nothing: UTF-8, JSON syntax (no duplicate keys, no NaN),
both JSON Schemas, the manifest's file digests, every source's text digest, that text is the
concatenation of its sentences, that every manifest path stays inside the set folder, that no
case file is unlisted, that case ids are unique and that gold titles name sources. Every
problem raises :class:`~pytest_provenai.errors.FixtureError` naming the file, a JSON pointer
(RFC 6901) into it, and what was expected versus what was found.

A manifest's optional ``kind`` says what its cases are: ``hotpotqa`` (the default, the
original format) or one of the provenance kinds ``no_answer``, ``exposure``, ``quotation``,
``derivation`` (schemas ``<kind>.schema.json`` sharing ``ledger.schema.json``; manifest
``provenance-manifest.schema.json``). For those, every ledger entry's sha256 is re-hashed,
every aid's parent must be an original of the same case with the pinned parent_sha256, and
``aid_only_values`` must occur in an aid and in no original.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Callable, Iterable
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any, TypeAlias

from pytest_provenai._io import sha256_bytes, sha256_text
from pytest_provenai.errors import FixtureError
from pytest_provenai.frozen.kind_traces import TRACE_KINDS, build_probe_case, build_trace_case
from pytest_provenai.frozen.model import (
    KINDS,
    AnyCase,
    Case,
    DerivationCase,
    FixtureSet,
    GroundedCase,
    LedgerEntry,
    Operand,
    QuotationCase,
    Source,
    SupportingFact,
)

__all__ = [
    "CASES_DIR",
    "ID_MAX_LENGTH",
    "ID_RE",
    "MANIFEST_NAME",
    "PROVENANCE_KINDS",
    "SCHEMA_NAMES",
    "SCHEMA_VERSION",
    "json_pointer",
    "load_fixture_set",
    "load_fixture_sets",
    "load_schema",
    "manifest_kind",
    "parse_any_case",
    "parse_case",
    "parse_json_bytes",
]

MANIFEST_NAME = "manifest.json"
CASES_DIR = "cases"
SCHEMA_VERSION = 1
PROVENANCE_KINDS = ("no_answer", "exposure", "quotation", "derivation")
SCHEMA_NAMES = (
    "case",
    "manifest",
    "ledger",
    "provenance-manifest",
    *PROVENANCE_KINDS,
    "trace",
    "attribution-manifest",
    "mcp_trace",
    "conflation_probe",
)

PathLike: TypeAlias = "str | os.PathLike[str]"


# --------------------------------------------------------------------------- JSON pointers


def json_pointer(*parts: str | int) -> str:
    """RFC 6901 pointer from reference tokens: ``json_pointer("files", "cases/a.json")`` is
    ``/files/cases~1a.json``; no tokens give ``""`` (the whole document)."""
    return "".join("/" + str(p).replace("~", "~0").replace("/", "~1") for p in parts)


# --------------------------------------------------------------------------- schemas


@cache
def _schema_text(name: str) -> str:
    ref = resources.files("pytest_provenai.frozen") / "schemas" / f"{name}.schema.json"
    return ref.read_text(encoding="utf-8")


def load_schema(name: str) -> dict[str, Any]:
    """The packaged JSON Schema ``name`` (one of :data:`SCHEMA_NAMES`: ``"case"`` and
    ``"manifest"`` for HotpotQA sets, ``"provenance-manifest"``, ``"ledger"`` and one per
    provenance kind), as a fresh dict."""
    if name not in SCHEMA_NAMES:
        raise ValueError(f"unknown schema {name!r}; expected one of {', '.join(SCHEMA_NAMES)}")
    schema: dict[str, Any] = json.loads(_schema_text(name))
    return schema


@cache
def _registry() -> Any:
    """All packaged schemas by ``$id``, so ``"ledger.schema.json#/$defs/..."`` refs resolve
    offline."""
    from referencing import Registry, Resource

    schemas = [load_schema(name) for name in SCHEMA_NAMES]
    return Registry().with_resources((s["$id"], Resource.from_contents(s)) for s in schemas)


@cache
def _validator(name: str) -> Any:
    from jsonschema import Draft202012Validator  # imported on first use: keeps imports cheap

    return Draft202012Validator(load_schema(name), registry=_registry())


# --------------------------------------------------------------------------- strict JSON


class _DuplicateKeyError(ValueError):
    def __init__(self, key: str) -> None:
        super().__init__(key)
        self.key = key


class _NonFiniteError(ValueError):
    def __init__(self, token: str) -> None:
        super().__init__(token)
        self.token = token


def _unique_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj: dict[str, Any] = {}
    for key, value in pairs:
        if key in obj:
            raise _DuplicateKeyError(key)
        obj[key] = value
    return obj


def _reject_constant(token: str) -> Any:
    raise _NonFiniteError(token)


def _line_col(data: bytes, offset: int) -> tuple[int, int]:
    line = data.count(b"\n", 0, offset) + 1
    col = offset - (data.rfind(b"\n", 0, offset) + 1) + 1
    return line, col


def parse_json_bytes(data: bytes, path: str) -> Any:
    """Decode strict UTF-8 JSON; any problem is a :class:`FixtureError` naming ``path``.

    Rejects non-UTF-8 bytes, a byte-order mark, syntax errors (with line:col), duplicate
    object keys and the non-standard constants NaN / Infinity.
    """
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        line, col = _line_col(data, exc.start)
        raise FixtureError(
            path,
            "",
            "UTF-8 text",
            f"byte 0x{data[exc.start]:02x} that is not UTF-8 at line {line}:{col} "
            f"(byte offset {exc.start})",
        ) from None
    if text.startswith("\ufeff"):
        raise FixtureError(path, "", "JSON without a byte-order mark", "a BOM at line 1:1")
    try:
        return json.loads(text, object_pairs_hook=_unique_pairs, parse_constant=_reject_constant)
    except json.JSONDecodeError as exc:
        raise FixtureError(
            path, "", "valid JSON", f"invalid JSON at line {exc.lineno}:{exc.colno}: {exc.msg}"
        ) from None
    except _DuplicateKeyError as exc:
        raise FixtureError(
            path, "", "JSON objects with unique keys", f"duplicate key {json.dumps(exc.key)}"
        ) from None
    except _NonFiniteError as exc:
        raise FixtureError(path, "", "finite JSON numbers", f"{exc.token} (not JSON)") from None


def _read_bytes(file: Path, shown: str) -> bytes:
    try:
        return file.read_bytes()
    except FileNotFoundError:
        raise FixtureError(shown, "", "an existing file", "no such file") from None
    except IsADirectoryError:
        raise FixtureError(shown, "", "a file", "a folder") from None
    except OSError as exc:
        raise FixtureError(shown, "", "a readable file", exc.strerror or str(exc)) from None


# --------------------------------------------------------------------------- schema errors


def _describe_value(value: Any) -> str:
    if value is None or isinstance(value, bool):
        return json.dumps(value)
    if isinstance(value, str):
        shown = json.dumps(value if len(value) <= 100 else value[:100] + "…", ensure_ascii=False)
        return f"the string {shown}"
    if isinstance(value, int | float):
        return f"the number {json.dumps(value)}"
    if isinstance(value, list):
        return f"an array of {len(value)} item{'s' if len(value) != 1 else ''}"
    if isinstance(value, dict):
        return "an object"
    return repr(value)  # pragma: no cover - JSON has no other types


_ARTICLE_TYPES = {
    "object": "an object",
    "array": "an array",
    "string": "a string",
    "integer": "an integer",
    "number": "a number",
    "boolean": "a boolean",
    "null": "null",
}


def _describe_schema_error(error: Any) -> tuple[str, str, str]:
    """(pointer, expected, actual) for a jsonschema ValidationError."""
    parts: list[str | int] = list(error.absolute_path)
    kind: str = error.validator
    want: Any = error.validator_value
    inst: Any = error.instance
    if kind == "required" and isinstance(inst, dict):
        missing = next((k for k in want if k not in inst), str(want))
        return json_pointer(*parts, missing), f"required property {json.dumps(missing)}", "none"
    if kind == "additionalProperties" and isinstance(inst, dict) and want is False:
        allowed = error.schema.get("properties", {})
        extra = next((k for k in inst if k not in allowed), "")
        return (
            json_pointer(*parts, extra),
            "only the properties " + ", ".join(sorted(allowed)),
            f"unexpected property {json.dumps(extra, ensure_ascii=False)}",
        )
    pointer = json_pointer(*parts)
    if kind == "type":
        types = [want] if isinstance(want, str) else list(want)
        return pointer, " or ".join(_ARTICLE_TYPES.get(t, t) for t in types), _describe_value(inst)
    if kind == "const":
        return pointer, json.dumps(want), _describe_value(inst)
    if kind == "enum":
        return pointer, "one of " + ", ".join(json.dumps(w) for w in want), _describe_value(inst)
    if kind == "pattern":
        return pointer, f"a string matching {want}", _describe_value(inst)
    if kind == "minimum":
        return pointer, f"a number >= {want}", _describe_value(inst)
    if kind in ("minLength", "maxLength"):
        bound = "at least" if kind == "minLength" else "at most"
        return pointer, f"a string of {bound} {want} characters", f"{len(inst)} characters"
    if kind in ("minItems", "maxItems"):
        bound = "at least" if kind == "minItems" else "at most"
        return pointer, f"an array of {bound} {want} items", f"{len(inst)} items"
    if kind == "minProperties":
        return pointer, f"an object with at least {want} properties", f"{len(inst)} properties"
    if kind == "uniqueItems" and isinstance(inst, list):
        seen: list[Any] = []
        for index, item in enumerate(inst):
            if item in seen:
                return (
                    json_pointer(*parts, index),
                    "unique items",
                    f"a repeat of {_describe_value(item)}",
                )
            seen.append(item)
    return pointer, f"{kind} {json.dumps(want)}", str(error.message)


def _check_against_schema(obj: Any, schema: str, path: str) -> None:
    from jsonschema.exceptions import best_match

    error = best_match(_validator(schema).iter_errors(obj))
    if error is not None:
        raise FixtureError(path, *_describe_schema_error(error))


# A fast path for case files: jsonschema costs ~2 ms a case, which dominates loading large
# sets. ``_case_surely_valid`` is deliberately conservative -- it answers True only for a
# document that certainly satisfies case.schema.json (tests check this against jsonschema on
# mutated documents); anything else goes through the jsonschema validator, which stays the
# authority and describes the error.

ID_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
ID_MAX_LENGTH = 200
_HEX64_RE = re.compile(r"[0-9a-f]{64}")
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


def _case_surely_valid(obj: Any) -> bool:
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
        if not (_is_text(src["sha256"]) and _HEX64_RE.fullmatch(src["sha256"])):
            return False
        if not (_is_int(src["version"]) and src["version"] >= 1):
            return False
    return True


# --------------------------------------------------------------------------- cases


def _first_difference(a: str, b: str) -> int:
    for index, (x, y) in enumerate(zip(a, b, strict=False)):
        if x != y:
            return index
    return min(len(a), len(b))


def _check_case(obj: dict[str, Any], path: str) -> None:
    """Checks the schema cannot express: joined text, text digests, gold titles."""
    if not ID_RE.fullmatch(obj["id"]):  # JSON Schema's "$" also matches before a final "\n"
        raise FixtureError(
            path, "/id", f"a string matching ^{ID_RE.pattern}$", _describe_value(obj["id"])
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
                _describe_value(title),
            )
    for j, fact in enumerate(obj["supporting_facts"]):
        if fact["title"] not in titles:
            raise FixtureError(
                path,
                json_pointer("supporting_facts", j, "title"),
                "the title of one of the case's sources",
                _describe_value(fact["title"]),
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


def parse_case(data: bytes, path: str, *, fixture_set: str = "") -> Case:
    """Parse and fully check the bytes of one case file (``path`` is only used in errors and
    recorded as :attr:`Case.path`). Raises :class:`FixtureError` on any problem."""
    obj = parse_json_bytes(data, path)
    if not _case_surely_valid(obj):
        _check_against_schema(obj, "case", path)
    _check_case(obj, path)
    return _build_case(obj, path, fixture_set)


# --------------------------------------------------------------------------- provenance kinds


def _require_match(path: str, pointer: str, regex: re.Pattern[str], value: str) -> None:
    """Re-check a schema pattern with fullmatch (JSON Schema's "$" also matches before a
    final newline)."""
    if not regex.fullmatch(value):
        raise FixtureError(
            path, pointer, f"a string matching ^{regex.pattern}$", _describe_value(value)
        )


def _ledger_entries(
    items: list[dict[str, Any]],
    path: str,
    at: tuple[str | int, ...],
    first_pointer_of: dict[str, str],
) -> list[LedgerEntry]:
    """Ledger entries from schema-valid JSON: unique ids, re-hashed digests."""
    entries: list[LedgerEntry] = []
    for i, item in enumerate(items):
        here = (*at, i)
        entry_id: str = item["id"]
        _require_match(path, json_pointer(*here, "id"), ID_RE, entry_id)
        if entry_id in first_pointer_of:
            raise FixtureError(
                path,
                json_pointer(*here, "id"),
                "an id no other ledger entry of the case uses",
                f"{json.dumps(entry_id)}, already the id at {first_pointer_of[entry_id]}",
            )
        first_pointer_of[entry_id] = json_pointer(*here)
        text: str = item["text"]
        try:
            text.encode("utf-8")
        except UnicodeEncodeError as exc:  # JSON lets "\ud800" through; UTF-8 does not
            raise FixtureError(
                path,
                json_pointer(*here, "text"),
                "Unicode text (UTF-8 has no lone surrogates)",
                f"a lone surrogate U+{ord(text[exc.start]):04X} at character {exc.start}",
            ) from None
        digest = sha256_text(text)
        if item["sha256"] != digest:
            raise FixtureError(
                path,
                json_pointer(*here, "sha256"),
                f"{digest} (sha256 of {json_pointer(*here, 'text')})",
                str(item["sha256"]),
            )
        entries.append(
            LedgerEntry(
                id=entry_id,
                kind=item["kind"],
                text=item["text"],
                sha256=item["sha256"],
                title=item.get("title", ""),
                version=item.get("version", 1),
                aid_kind=item.get("aid_kind"),
                parent=item.get("parent"),
                parent_sha256=item.get("parent_sha256"),
            )
        )
    return entries


def _check_parents(entries: list[tuple[str, LedgerEntry]], path: str) -> None:
    """Every aid names an original of the same case and pins that original's digest."""
    originals = {e.id: e for _, e in entries if e.kind == "original"}
    names = ", ".join(json.dumps(k) for k in originals) or "none"
    for pointer, entry in entries:
        if entry.kind != "generated":
            continue
        parent = originals.get(entry.parent or "")
        if parent is None:
            raise FixtureError(
                path,
                pointer + "/parent",
                f"the id of one of the case's originals ({names})",
                _describe_value(entry.parent),
            )
        if entry.parent_sha256 != parent.sha256:
            raise FixtureError(
                path,
                pointer + "/parent_sha256",
                f"{parent.sha256} (the sha256 of original {json.dumps(parent.id)})",
                str(entry.parent_sha256),
            )


def _build_grounded(obj: dict[str, Any], path: str, fixture_set: str) -> GroundedCase:
    seen: dict[str, str] = {}
    originals = _ledger_entries(obj["originals"], path, ("originals",), seen)
    aids = _ledger_entries(obj["aids"], path, ("aids",), seen)
    _check_parents(
        [(json_pointer("originals", i), e) for i, e in enumerate(originals)]
        + [(json_pointer("aids", i), e) for i, e in enumerate(aids)],
        path,
    )
    for k, value in enumerate(obj["aid_only_values"]):
        in_original = next((o.id for o in originals if value in o.text), None)
        if in_original is not None or not any(value in a.text for a in aids):
            where = (
                f"one that occurs in original {json.dumps(in_original)}"
                if in_original is not None
                else "one that occurs in no aid"
            )
            raise FixtureError(
                path,
                json_pointer("aid_only_values", k),
                "a literal that occurs in an aid and in no original",
                f"{_describe_value(value)}, {where}",
            )
    expected: str = obj["expected_answer"]
    if expected != "unknown" and not any(expected in o.text for o in originals):
        raise FixtureError(
            path,
            "/expected_answer",
            '"unknown" or text that occurs in one of the case\'s originals',
            f"{_describe_value(expected)}, which occurs in none",
        )
    return GroundedCase(
        id=obj["id"],
        kind=obj["kind"],
        question=obj["question"],
        originals=tuple(originals),
        aids=tuple(aids),
        expected_answer=expected,
        aid_only_values=tuple(obj["aid_only_values"]),
        fixture_set=fixture_set,
        path=path,
        note=obj.get("note", ""),
    )


def _mixed_ledger(obj: dict[str, Any], path: str) -> list[LedgerEntry]:
    entries = _ledger_entries(obj["ledger"], path, ("ledger",), {})
    _check_parents([(json_pointer("ledger", i), e) for i, e in enumerate(entries)], path)
    return entries


def _build_quotation(obj: dict[str, Any], path: str, fixture_set: str) -> QuotationCase:
    return QuotationCase(
        id=obj["id"],
        ledger=tuple(_mixed_ledger(obj, path)),
        citation=obj["citation"],
        quote=obj["quote"],
        expected=obj["expected"],
        normalisation=obj["normalisation"],
        fixture_set=fixture_set,
        path=path,
        note=obj.get("note", ""),
    )


#: Operand count each permitted operation takes (None: two or more).
OPERATION_ARITY: dict[str, int | None] = {
    "difference": 2,
    "sum": None,
    "ratio": 2,
    "percentage_change": 2,
}
_NUMERAL_RE = re.compile(r"[+-]?([0-9]{1,3}(,[0-9]{3})+|[0-9]+)(\.[0-9]+)?")
_DECIMAL_RE = re.compile(r"[+-]?[0-9]+(\.[0-9]+)?")


def _build_derivation(obj: dict[str, Any], path: str, fixture_set: str) -> DerivationCase:
    ledger = _mixed_ledger(obj, path)
    operation: str = obj["operation"]
    arity = OPERATION_ARITY[operation]
    count = len(obj["operands"])
    if arity is not None and count != arity:
        raise FixtureError(
            path,
            "/operands",
            f"exactly {arity} operands for {operation}",
            f"{count} operands",
        )
    operands: list[Operand] = []
    names: set[str] = set()
    for i, item in enumerate(obj["operands"]):
        _require_match(path, json_pointer("operands", i, "value"), _NUMERAL_RE, item["value"])
        _require_match(path, json_pointer("operands", i, "source_id"), ID_RE, item["source_id"])
        _require_match(path, json_pointer("operands", i, "digest"), _HEX64_RE, item["digest"])
        if item["name"] in names:
            raise FixtureError(
                path,
                json_pointer("operands", i, "name"),
                "an operand name no other operand of the case uses",
                _describe_value(item["name"]),
            )
        names.add(item["name"])
        start, end = item["range"]
        operands.append(
            Operand(
                name=item["name"],
                value=item["value"],
                source_id=item["source_id"],
                range=(start, end),
                digest=item["digest"],
            )
        )
    _require_match(path, "/expected", _DECIMAL_RE, obj["expected"])
    return DerivationCase(
        id=obj["id"],
        ledger=tuple(ledger),
        operands=tuple(operands),
        operation=operation,
        expected=obj["expected"],
        fixture_set=fixture_set,
        path=path,
        question=obj["question"],
        expected_warranted=obj["expected_warranted"],
        note=obj.get("note", ""),
    )


_BUILDERS: dict[str, Callable[[dict[str, Any], str, str], AnyCase]] = {
    "no_answer": _build_grounded,
    "exposure": _build_grounded,
    "quotation": _build_quotation,
    "derivation": _build_derivation,
    "mcp_trace": build_trace_case,
    "conflation_probe": build_probe_case,
}


def parse_any_case(data: bytes, path: str, *, kind: str, fixture_set: str = "") -> AnyCase:
    """Parse and fully check one case file of fixture kind ``kind`` (see :data:`KINDS`;
    ``"hotpotqa"`` is :func:`parse_case`). Raises :class:`FixtureError` on any problem and
    ``ValueError`` for an unknown kind (a programming error, not bad input)."""
    if kind == "hotpotqa":
        return parse_case(data, path, fixture_set=fixture_set)
    if kind not in _BUILDERS:
        raise ValueError(f"unknown fixture kind {kind!r}; expected one of {', '.join(KINDS)}")
    obj = parse_json_bytes(data, path)
    _check_against_schema(obj, kind, path)
    _require_match(path, "/id", ID_RE, obj["id"])
    return _BUILDERS[kind](obj, path, fixture_set)


def manifest_kind(path: PathLike) -> str | None:
    """The fixture kind a set folder's manifest declares (``"hotpotqa"`` when it declares
    none), or None when the manifest cannot be read or names no known kind. Never raises:
    the plugin uses it to route a set that failed to load to the tests of its kind."""
    try:
        manifest = json.loads((Path(path) / MANIFEST_NAME).read_bytes().decode("utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(manifest, dict):
        return None
    kind = manifest.get("kind", "hotpotqa")
    return kind if isinstance(kind, str) and kind in KINDS else None


def _declared_kind(manifest: Any, shown: str) -> str:
    if not isinstance(manifest, dict) or "kind" not in manifest:
        return "hotpotqa"  # the schema reports a manifest that is not an object
    kind = manifest["kind"]
    if not isinstance(kind, str) or kind not in KINDS:
        raise FixtureError(
            shown,
            "/kind",
            "one of " + ", ".join(json.dumps(k) for k in KINDS),
            _describe_value(kind),
        )
    return kind


# --------------------------------------------------------------------------- sets


def _check_entry(key: str, root: Path, root_real: Path, manifest_shown: str) -> Path:
    """Resolve a manifest /files key to a file inside the set folder, or raise."""
    pointer = json_pointer("files", key)
    if key.startswith("/") or "\\" in key or (len(key) > 1 and key[1] == ":"):
        raise FixtureError(
            manifest_shown,
            pointer,
            "a relative POSIX path inside the set folder",
            f"the absolute or non-POSIX path {json.dumps(key)}",
        )
    parts = key.split("/")
    if ".." in parts:
        raise FixtureError(
            manifest_shown,
            pointer,
            "a path inside the set folder",
            f'{json.dumps(key)}, which escapes it through ".."',
        )
    if (
        len(parts) != 2
        or parts[0] != CASES_DIR
        or parts[1] in ("", ".", ".json")
        or not parts[1].endswith(".json")
    ):
        raise FixtureError(
            manifest_shown,
            pointer,
            f"a path of the form {CASES_DIR}/<id>.json",
            json.dumps(key, ensure_ascii=False),
        )
    file = root / key
    real = file.resolve()
    if not real.is_relative_to(root_real):
        raise FixtureError(
            manifest_shown,
            pointer,
            "a path inside the set folder",
            f"{json.dumps(key)}, which resolves to {real} through a symlink",
        )
    if not file.is_file():
        raise FixtureError(
            manifest_shown,
            pointer,
            f"an existing file {os.path.join(str(root), key)}",
            "a folder" if file.is_dir() else "no such file",
        )
    return file


def _unlisted_case_files(root: Path, listed: set[str]) -> list[str]:
    cases_dir = root / CASES_DIR
    found: list[str] = []
    for dirpath, dirnames, filenames in os.walk(cases_dir, followlinks=False):
        dirnames.sort()
        rel_dir = Path(dirpath).relative_to(root).as_posix()
        for name in sorted(filenames):
            if name.lower().endswith(".json") and f"{rel_dir}/{name}" not in listed:
                found.append(f"{rel_dir}/{name}")
    return found


def load_fixture_set(path: PathLike) -> FixtureSet:
    """Load and verify the fixture set folder ``path``; the set's name is the folder name.

    Cases come in manifest ``/files`` order (the freezer writes it sorted by file path).
    Raises :class:`FixtureError` on the first problem found.
    """
    shown = os.fspath(path)
    root = Path(path)
    if not root.is_dir():
        raise FixtureError(
            shown,
            "",
            f"a fixture set folder containing {MANIFEST_NAME}",
            "a file" if root.exists() else "no such folder",
        )
    name = root.resolve().name if root.name in ("", ".", "..") else root.name
    manifest_shown = os.path.join(shown, MANIFEST_NAME)
    manifest_file = root / MANIFEST_NAME
    if not manifest_file.is_file():
        raise FixtureError(
            manifest_shown, "", f"a {MANIFEST_NAME} listing the set's case files", "no such file"
        )
    manifest = parse_json_bytes(_read_bytes(manifest_file, manifest_shown), manifest_shown)
    kind = _declared_kind(manifest, manifest_shown)
    if kind == "hotpotqa":
        _check_against_schema(manifest, "manifest", manifest_shown)
        if not _HEX64_RE.fullmatch(manifest["source_sha256"]):  # "$" matches before "\n"
            raise FixtureError(
                manifest_shown,
                "/source_sha256",
                "a string matching ^[0-9a-f]{64}$",
                _describe_value(manifest["source_sha256"]),
            )
    elif kind in TRACE_KINDS:
        _check_against_schema(manifest, "attribution-manifest", manifest_shown)
    else:
        _check_against_schema(manifest, "provenance-manifest", manifest_shown)
    files: dict[str, str] = manifest["files"]
    if manifest["count"] != len(files):
        raise FixtureError(
            manifest_shown,
            "/count",
            f"{len(files)} (the number of entries in /files)",
            str(manifest["count"]),
        )

    root_real = root.resolve()
    entries = [(key, _check_entry(key, root, root_real, manifest_shown)) for key in files]
    unlisted = _unlisted_case_files(root, set(files))
    if unlisted:
        raise FixtureError(
            os.path.join(shown, unlisted[0]),
            "",
            f"an entry for {unlisted[0]} in {manifest_shown} /files",
            "a case file the manifest does not list",
        )

    cases: list[AnyCase] = []
    first_file_of: dict[str, str] = {}
    for key, file in entries:
        case_shown = os.path.join(shown, key)
        data = _read_bytes(file, case_shown)
        case = parse_any_case(data, case_shown, kind=kind, fixture_set=name)
        digest = sha256_bytes(data)
        if digest != files[key]:
            raise FixtureError(
                case_shown,
                "",
                f"sha256 {files[key]} (from {manifest_shown} {json_pointer('files', key)})",
                f"sha256 {digest}",
            )
        if case.id in first_file_of:
            raise FixtureError(
                case_shown,
                "/id",
                "a case id no other case file in the set uses",
                f"{json.dumps(case.id)}, already the id of {first_file_of[case.id]}",
            )
        first_file_of[case.id] = case_shown
        cases.append(case)
    return FixtureSet(name=name, path=shown, manifest=manifest, cases=tuple(cases))


def load_fixture_sets(
    paths: Iterable[PathLike],
) -> tuple[list[FixtureSet], list[FixtureError]]:
    """Load each set independently: one bad set does not stop the others.

    Returns the sets that loaded (in input order) and one :class:`FixtureError` per set that
    did not.
    """
    sets: list[FixtureSet] = []
    errors: list[FixtureError] = []
    for path in paths:
        try:
            sets.append(load_fixture_set(path))
        except FixtureError as exc:
            errors.append(exc)
    return sets, errors

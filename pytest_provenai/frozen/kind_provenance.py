"""The provenance fixture kinds: ``no_answer`` and ``exposure`` (grounded cases: originals,
generated aids, an expected answer), ``quotation`` and ``derivation`` (a mixed ledger and what
the resolver must say about a citation or a computation). Schemas ``<kind>.schema.json``
share ``ledger.schema.json``; the manifest is ``provenance-manifest.schema.json``.

Beyond the schemas: ids are re-checked with ``fullmatch`` and unique within a case, every
ledger entry's sha256 is re-hashed, every aid's parent must be an original of the same case
with the pinned ``parent_sha256``, ``aid_only_values`` must occur in an aid and in no
original, and a derivation's operands must fit its operation.
"""

from __future__ import annotations

import json
import re
from typing import Any

from pytest_provenai._io import sha256_text
from pytest_provenai.errors import FixtureError
from pytest_provenai.frozen.jsonread import describe_value, json_pointer
from pytest_provenai.frozen.model import (
    DerivationCase,
    GroundedCase,
    LedgerEntry,
    Operand,
    QuotationCase,
)
from pytest_provenai.frozen.validate import HEX64_RE, ID_RE, require_match

__all__ = [
    "OPERATION_ARITY",
    "build_derivation_case",
    "build_grounded_case",
    "build_quotation_case",
]


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
        require_match(path, json_pointer(*here, "id"), ID_RE, entry_id)
        if entry_id in first_pointer_of:
            raise FixtureError(
                path,
                json_pointer(*here, "id"),
                "an id no other ledger entry of the case uses",
                f"{json.dumps(entry_id)}, already the id at {first_pointer_of[entry_id]}",
            )
        first_pointer_of[entry_id] = json_pointer(*here)
        text: str = item["text"]  # no lone surrogate: parse_json_bytes refuses them
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
                describe_value(entry.parent),
            )
        if entry.parent_sha256 != parent.sha256:
            raise FixtureError(
                path,
                pointer + "/parent_sha256",
                f"{parent.sha256} (the sha256 of original {json.dumps(parent.id)})",
                str(entry.parent_sha256),
            )


def build_grounded_case(obj: dict[str, Any], path: str, fixture_set: str) -> GroundedCase:
    require_match(path, "/id", ID_RE, obj["id"])
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
                f"{describe_value(value)}, {where}",
            )
    expected: str = obj["expected_answer"]
    if expected != "unknown" and not any(expected in o.text for o in originals):
        raise FixtureError(
            path,
            "/expected_answer",
            '"unknown" or text that occurs in one of the case\'s originals',
            f"{describe_value(expected)}, which occurs in none",
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


def build_quotation_case(obj: dict[str, Any], path: str, fixture_set: str) -> QuotationCase:
    require_match(path, "/id", ID_RE, obj["id"])
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


def build_derivation_case(obj: dict[str, Any], path: str, fixture_set: str) -> DerivationCase:
    require_match(path, "/id", ID_RE, obj["id"])
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
        require_match(path, json_pointer("operands", i, "value"), _NUMERAL_RE, item["value"])
        require_match(path, json_pointer("operands", i, "source_id"), ID_RE, item["source_id"])
        require_match(path, json_pointer("operands", i, "digest"), HEX64_RE, item["digest"])
        if item["name"] in names:
            raise FixtureError(
                path,
                json_pointer("operands", i, "name"),
                "an operand name no other operand of the case uses",
                describe_value(item["name"]),
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
    require_match(path, "/expected", _DECIMAL_RE, obj["expected"])
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

"""The fixture kinds the loader knows, in one table.

A kind is the schema its case files follow, the schema its manifest follows, and the
function that turns a schema-valid case document into a case (doing the checks the schema
cannot express, starting with the id). Adding a kind: its name in
:data:`pytest_provenai.frozen.model.KINDS`, its schema file(s) under ``frozen/schemas/``, a
module with its build function, and one row in :data:`FIXTURE_KINDS`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pytest_provenai.frozen.jsonread import parse_json_bytes
from pytest_provenai.frozen.kind_attribution import build_probe_case, build_trace_case
from pytest_provenai.frozen.kind_hotpotqa import (
    build_hotpotqa_case,
    case_surely_valid,
    check_hotpotqa_manifest,
)
from pytest_provenai.frozen.kind_provenance import (
    build_derivation_case,
    build_grounded_case,
    build_quotation_case,
)
from pytest_provenai.frozen.model import KINDS, AnyCase, Case
from pytest_provenai.frozen.validate import check_against_schema

__all__ = [
    "ATTRIBUTION_KINDS",
    "FIXTURE_KINDS",
    "PROVENANCE_KINDS",
    "FixtureKind",
    "parse_any_case",
    "parse_case",
]


@dataclass(frozen=True)
class FixtureKind:
    """One fixture kind.

    ``build(obj, path, fixture_set)`` gets a document that satisfies ``case_schema`` and
    returns the case or raises :class:`~pytest_provenai.errors.FixtureError`.
    ``check_manifest(manifest, path)`` runs after ``manifest_schema`` for checks the
    manifest schema cannot express. ``surely_valid(obj)``, when given, is a conservative fast
    path: True only for documents that certainly satisfy ``case_schema`` (the validator then
    is skipped; anything else goes through it).
    """

    name: str
    case_schema: str
    manifest_schema: str
    build: Callable[[dict[str, Any], str, str], AnyCase]
    check_manifest: Callable[[dict[str, Any], str], None] | None = None
    surely_valid: Callable[[Any], bool] | None = None


FIXTURE_KINDS: dict[str, FixtureKind] = {
    kind.name: kind
    for kind in (
        FixtureKind(
            "hotpotqa",
            "case",
            "manifest",
            build_hotpotqa_case,
            check_manifest=check_hotpotqa_manifest,
            surely_valid=case_surely_valid,
        ),
        FixtureKind("no_answer", "no_answer", "provenance-manifest", build_grounded_case),
        FixtureKind("exposure", "exposure", "provenance-manifest", build_grounded_case),
        FixtureKind("quotation", "quotation", "provenance-manifest", build_quotation_case),
        FixtureKind("derivation", "derivation", "provenance-manifest", build_derivation_case),
        FixtureKind("mcp_trace", "mcp_trace", "attribution-manifest", build_trace_case),
        FixtureKind(
            "conflation_probe", "conflation_probe", "attribution-manifest", build_probe_case
        ),
    )
}

#: The kinds whose sets carry a provenance manifest (written by ``frozen/write.py``).
PROVENANCE_KINDS: tuple[str, ...] = tuple(
    name for name, kind in FIXTURE_KINDS.items() if kind.manifest_schema == "provenance-manifest"
)

#: The kinds of the attribution layer (tool traces and conflation probes); their manifest has
#: the provenance manifest's shape with these kinds (``attribution-manifest.schema.json``).
ATTRIBUTION_KINDS: tuple[str, ...] = tuple(
    name for name, kind in FIXTURE_KINDS.items() if kind.manifest_schema == "attribution-manifest"
)


def _schema_valid(data: bytes, path: str, kind: FixtureKind) -> Any:
    obj = parse_json_bytes(data, path)
    if kind.surely_valid is None or not kind.surely_valid(obj):
        check_against_schema(obj, kind.case_schema, path)
    return obj


def parse_any_case(data: bytes, path: str, *, kind: str, fixture_set: str = "") -> AnyCase:
    """Parse and fully check one case file of fixture kind ``kind`` (see :data:`KINDS`).
    Raises :class:`~pytest_provenai.errors.FixtureError` on any problem and ``ValueError``
    for an unknown kind (a programming error, not bad input)."""
    spec = FIXTURE_KINDS.get(kind)
    if spec is None:
        raise ValueError(f"unknown fixture kind {kind!r}; expected one of {', '.join(KINDS)}")
    return spec.build(_schema_valid(data, path, spec), path, fixture_set)


def parse_case(data: bytes, path: str, *, fixture_set: str = "") -> Case:
    """Parse and fully check the bytes of one HotpotQA case file (``path`` is only used in
    errors and recorded as :attr:`Case.path`). Raises
    :class:`~pytest_provenai.errors.FixtureError` on any problem."""
    obj = _schema_valid(data, path, FIXTURE_KINDS["hotpotqa"])
    return build_hotpotqa_case(obj, path, fixture_set)

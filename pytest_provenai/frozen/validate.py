"""The packaged JSON Schemas and the field checks schemas cannot express.

:func:`check_against_schema` validates a document against one of the Draft 2020-12 schemas
under ``frozen/schemas/`` (all of them in one offline registry, so cross-file ``$ref`` s
resolve) and turns the best-matching violation into a
:class:`~pytest_provenai.errors.FixtureError` with a JSON pointer, expected and actual.
:func:`require_match` re-checks a schema pattern with ``fullmatch`` (JSON Schema's ``$``
also matches before a final newline); :data:`ID_RE` is the id pattern every kind uses.
"""

from __future__ import annotations

import json
import re
from functools import cache
from importlib import resources
from typing import Any

from pytest_provenai.errors import FixtureError
from pytest_provenai.frozen.jsonread import describe_value, json_pointer

__all__ = [
    "HEX64_RE",
    "ID_MAX_LENGTH",
    "ID_RE",
    "SCHEMA_NAMES",
    "check_against_schema",
    "load_schema",
    "require_match",
]

_SUFFIX = ".schema.json"


def _schema_names() -> tuple[str, ...]:
    folder = resources.files("pytest_provenai.frozen") / "schemas"
    return tuple(
        sorted(e.name[: -len(_SUFFIX)] for e in folder.iterdir() if e.name.endswith(_SUFFIX))
    )


#: Every packaged schema, by name (``<name>.schema.json``): ``case`` and ``manifest`` for
#: HotpotQA sets, ``provenance-manifest``, ``ledger`` and one per provenance kind. A new
#: fixture kind adds its schema file there.
SCHEMA_NAMES: tuple[str, ...] = _schema_names()

ID_RE = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")
ID_MAX_LENGTH = 200
HEX64_RE = re.compile(r"[0-9a-f]{64}")


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


# --------------------------------------------------------------------------- schema errors


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
        return pointer, " or ".join(_ARTICLE_TYPES.get(t, t) for t in types), describe_value(inst)
    if kind == "const":
        return pointer, json.dumps(want), describe_value(inst)
    if kind == "enum":
        return pointer, "one of " + ", ".join(json.dumps(w) for w in want), describe_value(inst)
    if kind == "pattern":
        return pointer, f"a string matching {want}", describe_value(inst)
    if kind == "minimum":
        return pointer, f"a number >= {want}", describe_value(inst)
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
                    f"a repeat of {describe_value(item)}",
                )
            seen.append(item)
    return pointer, f"{kind} {json.dumps(want)}", str(error.message)


def check_against_schema(obj: Any, schema: str, path: str) -> None:
    """Raise a FixtureError naming ``path`` for the best-matching violation of ``schema``."""
    from jsonschema.exceptions import best_match

    error = best_match(_validator(schema).iter_errors(obj))
    if error is not None:
        raise FixtureError(path, *_describe_schema_error(error))


# --------------------------------------------------------------------------- field checks


def require_match(path: str, pointer: str, regex: re.Pattern[str], value: str) -> None:
    """Re-check a schema pattern with fullmatch (JSON Schema's "$" also matches before a
    final newline)."""
    if not regex.fullmatch(value):
        raise FixtureError(
            path, pointer, f"a string matching ^{regex.pattern}$", describe_value(value)
        )

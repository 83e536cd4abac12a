"""Loading the provenance fixture kinds (no_answer, exposure, quotation, derivation): every bad
input is a FixtureError naming the file, a JSON pointer, what was expected and what was found."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from fixture_edit import (
    Mutate,
    delete_at,
    edit_case,
    load_error,
    rehash,
    set_at,
    write_manifest,
)
from jsonschema import Draft202012Validator

from pytest_provenai.errors import FixtureError
from pytest_provenai.frozen.load import (
    SCHEMA_NAMES,
    load_fixture_set,
    load_schema,
    manifest_kind,
    parse_any_case,
)
from pytest_provenai.frozen.model import (
    DerivationCase,
    GroundedCase,
    LedgerEntry,
    QuotationCase,
)

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "fixtures"


def copy_set(tmp_path: Path, name: str) -> Path:
    out = tmp_path / name
    shutil.copytree(FIXTURES / name, out)
    return out


# --------------------------------------------------------------------------- good sets


@pytest.mark.parametrize(
    ("name", "kind", "cls", "minimum"),
    [
        ("synthetic-no-answer", "no_answer", GroundedCase, 12),
        ("synthetic-exposure", "exposure", GroundedCase, 12),
        ("synthetic-quotation", "quotation", QuotationCase, 20),
        ("synthetic-derivation", "derivation", DerivationCase, 6),
    ],
)
def test_shipped_synthetic_sets_load(name: str, kind: str, cls: type, minimum: int) -> None:
    fs = load_fixture_set(FIXTURES / name)
    assert fs.kind == kind == fs.manifest["kind"]
    assert fs.manifest["synthetic"] is True
    assert fs.manifest["licence"]["name"] == "CC0-1.0"
    assert len(fs.cases) >= minimum
    for case in fs.cases:
        assert isinstance(case, cls)
        assert case.kind == kind and case.fixture_set == name
    assert manifest_kind(FIXTURES / name) == kind


def test_hotpotqa_set_keeps_its_kind() -> None:
    fs = load_fixture_set(FIXTURES / "hotpotqa-dev60")
    assert fs.kind == "hotpotqa"
    assert {c.kind for c in fs.cases} == {"hotpotqa"}
    assert manifest_kind(FIXTURES / "hotpotqa-dev60") == "hotpotqa"


def test_entries_come_back_as_ledger_entries() -> None:
    fs = load_fixture_set(FIXTURES / "synthetic-no-answer")
    case = next(c for c in fs.cases if c.id == "na-inspection-interval")
    assert isinstance(case, GroundedCase)
    (src,) = case.originals
    (aid,) = case.aids
    assert isinstance(src, LedgerEntry)
    assert src.data == b"The inspection interval is not specified."
    assert src.sha256 == "dd4de6ad830cf900b5229227b50f1582c79f4144b343df67ca70275085ede5eb"
    assert (aid.kind, aid.aid_kind, aid.parent, aid.parent_sha256) == (
        "generated",
        "contextual_prefix",
        "src-v1",
        src.sha256,
    )
    assert case.aid_only_values == ("73", "2031-04-17")
    assert case.expected_answer == "unknown"


@pytest.mark.parametrize("name", SCHEMA_NAMES)
def test_schemas_are_valid_draft_2020_12(name: str) -> None:
    schema = load_schema(name)
    Draft202012Validator.check_schema(schema)
    assert schema["$schema"] == "https://json-schema.org/draft/2020-12/schema"
    assert schema["$id"].endswith(f"/{name}.schema.json")


def test_unknown_schema_name() -> None:
    with pytest.raises(ValueError, match="provenance-manifest"):
        load_schema("nope")


def test_hotpotqa_manifest_may_say_its_kind(tmp_path: Path) -> None:
    set_dir = copy_set(tmp_path, "hotpotqa-dev60")
    write_manifest(set_dir, set_at("kind", value="hotpotqa"))
    assert len(load_fixture_set(set_dir).cases) == 60


def test_unknown_manifest_kind(tmp_path: Path) -> None:
    set_dir = copy_set(tmp_path, "synthetic-quotation")
    write_manifest(set_dir, set_at("kind", value="quotes"))
    err = load_error(set_dir)
    assert (err.pointer, err.actual) == ("/kind", 'the string "quotes"')
    assert '"hotpotqa", "no_answer", "exposure", "quotation", "derivation"' in err.expected
    assert manifest_kind(set_dir) is None


def test_manifest_kind_of_unreadable_folders(tmp_path: Path) -> None:
    assert manifest_kind(tmp_path / "absent") is None
    (tmp_path / "manifest.json").write_text("[1]", encoding="utf-8")
    assert manifest_kind(tmp_path) is None
    (tmp_path / "manifest.json").write_text("{", encoding="utf-8")
    assert manifest_kind(tmp_path) is None
    (tmp_path / "manifest.json").write_text('{"kind": "exposure"}', encoding="utf-8")
    assert manifest_kind(tmp_path) == "exposure"


def test_cases_of_another_kind_in_a_set(tmp_path: Path) -> None:
    set_dir = copy_set(tmp_path, "synthetic-exposure")
    write_manifest(set_dir, set_at("kind", value="no_answer"))
    err = load_error(set_dir)
    assert err.pointer == "/kind" and err.expected == '"no_answer"'
    assert err.actual == 'the string "exposure"'


# --------------------------------------------------------------------------- manifest

MANIFEST_VIOLATIONS = [
    (delete_at("synthetic"), "/synthetic", 'required property "synthetic"', "none"),
    (delete_at("licence"), "/licence", 'required property "licence"', "none"),
    (set_at("synthetic", value="yes"), "/synthetic", "a boolean", '"yes"'),
    (set_at("licence", "name", value=""), "/licence/name", "at least 1", "0 characters"),
    (set_at("count", value=0), "/count", ">= 1", "the number 0"),
    (set_at("dataset", value="hotpotqa"), "/dataset", "only the properties", '"dataset"'),
    (set_at("schema_version", value=2), "/schema_version", "1", "the number 2"),
]


@pytest.mark.parametrize(("mutate", "pointer", "expected", "actual"), MANIFEST_VIOLATIONS)
def test_provenance_manifest_violation(
    tmp_path: Path, mutate: Mutate, pointer: str, expected: str, actual: str
) -> None:
    set_dir = copy_set(tmp_path, "synthetic-derivation")
    write_manifest(set_dir, mutate)
    err = load_error(set_dir)
    assert (err.path, err.pointer) == (str(set_dir / "manifest.json"), pointer)
    assert expected in err.expected
    assert actual in err.actual


def test_count_and_file_digests_are_checked(tmp_path: Path) -> None:
    set_dir = copy_set(tmp_path, "synthetic-no-answer")
    write_manifest(set_dir, set_at("count", value=99))
    assert load_error(set_dir).pointer == "/count"
    set_dir = copy_set(tmp_path / "b", "synthetic-no-answer")
    case_file = set_dir / "cases" / "na-halden-depth.json"
    case_file.write_bytes(case_file.read_bytes() + b"\n")  # same JSON, other bytes
    err = load_error(set_dir)
    assert err.path == str(case_file) and err.pointer == ""
    assert err.expected.startswith("sha256 ")


# --------------------------------------------------------------------------- no_answer

NA = "na-inspection-interval"
SEED_SHA = "dd4de6ad830cf900b5229227b50f1582c79f4144b343df67ca70275085ede5eb"
NO_ANSWER_VIOLATIONS = [
    (delete_at("question"), "/question", 'required property "question"', "none"),
    (set_at("expected_answer", value="73 days"), "/expected_answer", '"unknown"', '"73 days"'),
    (set_at("originals", value=[]), "/originals", "at least 1 items", "0 items"),
    (set_at("note", value=5), "/note", "a string", "the number 5"),
    (set_at("extra", value=1), "/extra", "only the properties", '"extra"'),
    (set_at("kind", value="exposure"), "/kind", '"no_answer"', '"exposure"'),
    (set_at("id", value="na x"), "/id", "a string matching", '"na x"'),
    (set_at("id", value=NA + "\n"), "/id", "a string matching", "\\n"),
    (
        set_at("originals", 0, "sha256", value="0" * 64),
        "/originals/0/sha256",
        f"{SEED_SHA} (sha256 of /originals/0/text)",
        "0" * 64,
    ),
    (
        set_at("originals", 0, "text", value="The inspection interval is 73 days."),
        "/originals/0/sha256",
        "(sha256 of /originals/0/text)",
        SEED_SHA,
    ),
    (set_at("originals", 0, "kind", value="generated"), "/originals/0/kind", '"original"', ""),
    (delete_at("originals", 0, "title"), "/originals/0/title", 'required property "title"', ""),
    (set_at("originals", 0, "version", value=0), "/originals/0/version", ">= 1", "0"),
    (set_at("originals", 0, "text", value=""), "/originals/0/text", "at least 1", "0"),
    (set_at("aids", 0, "aid_kind", value="summary"), "/aids/0/aid_kind", '"hyde"', '"summary"'),
    (delete_at("aids", 0, "parent"), "/aids/0/parent", 'required property "parent"', "none"),
    (
        set_at("aids", 0, "parent", value="src-v2"),
        "/aids/0/parent",
        'one of the case\'s originals ("src-v1")',
        '"src-v2"',
    ),
    (
        set_at("aids", 0, "parent_sha256", value="1" * 64),
        "/aids/0/parent_sha256",
        f'{SEED_SHA} (the sha256 of original "src-v1")',
        "1" * 64,
    ),
    (
        set_at("aids", 0, "parent_sha256", value=SEED_SHA.upper()),
        "/aids/0/parent_sha256",
        "a string matching ^[0-9a-f]{64}$",
        SEED_SHA.upper(),
    ),
    (set_at("aids", 0, "id", value="src-v1"), "/aids/0/id", "an id no other", "/originals/0"),
    (
        set_at("aid_only_values", value=["interval"]),
        "/aid_only_values/0",
        "in an aid and in no original",
        'original "src-v1"',
    ),
    (
        set_at("aid_only_values", value=["74"]),
        "/aid_only_values/0",
        "in an aid and in no original",
        "occurs in no aid",
    ),
    (set_at("aid_only_values", value=["73", "73"]), "/aid_only_values/1", "unique", "73"),
]


@pytest.mark.parametrize(("mutate", "pointer", "expected", "actual"), NO_ANSWER_VIOLATIONS)
def test_no_answer_case_violation(
    tmp_path: Path, mutate: Mutate, pointer: str, expected: str, actual: str
) -> None:
    set_dir = copy_set(tmp_path, "synthetic-no-answer")
    rel = edit_case(set_dir, f"cases/{NA}.json", mutate)
    err = load_error(set_dir)
    assert (err.path, err.pointer) == (str(set_dir / rel), pointer)
    assert expected in err.expected
    assert actual in err.actual


def test_a_lone_surrogate_in_a_text_is_a_fixture_error(tmp_path: Path) -> None:
    data = (FIXTURES / "synthetic-no-answer" / "cases" / f"{NA}.json").read_bytes()
    bad = data.replace(b"is not specified.", b"is not specified\\ud800.")
    with pytest.raises(FixtureError) as info:
        parse_any_case(bad, "x.json", kind="no_answer")
    assert info.value.pointer == "/originals/0/text"
    assert "lone surrogate" in info.value.actual


def test_no_answer_aids_may_be_absent() -> None:
    data = json.loads((FIXTURES / "synthetic-no-answer" / "cases" / f"{NA}.json").read_bytes())
    data.update(aids=[], aid_only_values=[])
    case = parse_any_case(json.dumps(data).encode(), "x.json", kind="no_answer")
    assert isinstance(case, GroundedCase) and case.aids == ()


# --------------------------------------------------------------------------- exposure

EXPOSURE_VIOLATIONS = [
    (
        set_at("expected_answer", value="1901"),
        "/expected_answer",
        '"unknown" or text that occurs in one of the case\'s originals',
        '"1901", which occurs in none',
    ),
    (set_at("aids", value=[]), "/aids", "at least 1 items", "0 items"),
    (set_at("expected_answer", value=""), "/expected_answer", "at least 1", "0 characters"),
    (
        rehash("aids", 0, text="This passage is about the Corvel rail bridge, opened in 1894."),
        "/aid_only_values/0",
        "in an aid and in no original",
        "occurs in no aid",
    ),
]


@pytest.mark.parametrize(("mutate", "pointer", "expected", "actual"), EXPOSURE_VIOLATIONS)
def test_exposure_case_violation(
    tmp_path: Path, mutate: Mutate, pointer: str, expected: str, actual: str
) -> None:
    set_dir = copy_set(tmp_path, "synthetic-exposure")
    rel = edit_case(set_dir, "cases/ex-corvel-bridge.json", mutate)
    err = load_error(set_dir)
    assert (err.path, err.pointer) == (str(set_dir / rel), pointer)
    assert expected in err.expected
    assert actual in err.actual


# --------------------------------------------------------------------------- quotation

QUOTATION_VIOLATIONS = [
    (set_at("expected", value="match"), "/expected", '"quote_match"', '"match"'),
    (set_at("normalisation", value="nfkc"), "/normalisation", '"nfc_ws"', '"nfkc"'),
    (delete_at("citation"), "/citation", 'required property "citation"', "none"),
    (set_at("quote", value=None), "/quote", "a string", "null"),
    (set_at("ledger", value=[]), "/ledger", "at least 1 items", "0 items"),
    (set_at("ledger", 0, "kind", value="derived"), "/ledger/0/kind", '"original"', '"derived"'),
    (delete_at("ledger", 0, "kind"), "/ledger/0/kind", 'required property "kind"', "none"),
    (delete_at("ledger", 1, "parent"), "/ledger/1/parent", 'required property "parent"', "none"),
    (set_at("ledger", 1, "url", value="x"), "/ledger/1/url", "only the properties", '"url"'),
    (
        set_at("ledger", 1, "sha256", value="2" * 64),
        "/ledger/1/sha256",
        "(sha256 of /ledger/1/text)",
        "2" * 64,
    ),
    (
        set_at("ledger", 1, "parent", value="aid-v1"),
        "/ledger/1/parent",
        'one of the case\'s originals ("src-v1")',
        '"aid-v1"',
    ),
]


@pytest.mark.parametrize(("mutate", "pointer", "expected", "actual"), QUOTATION_VIOLATIONS)
def test_quotation_case_violation(
    tmp_path: Path, mutate: Mutate, pointer: str, expected: str, actual: str
) -> None:
    set_dir = copy_set(tmp_path, "synthetic-quotation")
    rel = edit_case(set_dir, "cases/q-match-seed.json", mutate)
    err = load_error(set_dir)
    assert (err.path, err.pointer) == (str(set_dir / rel), pointer)
    assert expected in err.expected
    assert actual in err.actual


@pytest.mark.parametrize("citation", [None, [1, 2], "x", {"a": {"b": [True]}}, 3.5])
def test_a_quotation_citation_may_be_any_json(tmp_path: Path, citation: Any) -> None:
    set_dir = copy_set(tmp_path, "synthetic-quotation")
    edit_case(set_dir, "cases/q-match-seed.json", set_at("citation", value=citation))
    case = next(c for c in load_fixture_set(set_dir).cases if c.id == "q-match-seed")
    assert isinstance(case, QuotationCase) and case.citation == citation


# --------------------------------------------------------------------------- derivation


def _third_operand(obj: dict[str, Any]) -> None:
    obj["operands"].append({**obj["operands"][0], "name": "extra"})


DERIVATION_VIOLATIONS = [
    (set_at("operation", value="median"), "/operation", '"difference"', '"median"'),
    (_third_operand, "/operands", "exactly 2 operands for difference", "3 operands"),
    (set_at("operands", 1, "name", value="march"), "/operands/1/name", "no other operand", ""),
    (set_at("operands", 0, "value", value="1,25"), "/operands/0/value", "matching", '"1,25"'),
    (set_at("operands", 0, "value", value="1250\n"), "/operands/0/value", "matching", "\\n"),
    (set_at("operands", 0, "range", value=[0]), "/operands/0/range", "at least 2", "1 items"),
    (set_at("operands", 0, "range", value=[-1, 3]), "/operands/0/range/0", ">= 0", "-1"),
    (set_at("operands", 0, "range", value=[0, True]), "/operands/0/range/1", "an integer", ""),
    (set_at("operands", 0, "digest", value="x"), "/operands/0/digest", "matching", '"x"'),
    (set_at("operands", value=[]), "/operands", "at least 2 items", "0 items"),
    (set_at("expected", value="2.7e2"), "/expected", "matching", '"2.7e2"'),
    (set_at("expected", value="270\n"), "/expected", "matching", "\\n"),
    (set_at("expected_warranted", value="yes"), "/expected_warranted", "a boolean", '"yes"'),
    (delete_at("question"), "/question", 'required property "question"', "none"),
]


@pytest.mark.parametrize(("mutate", "pointer", "expected", "actual"), DERIVATION_VIOLATIONS)
def test_derivation_case_violation(
    tmp_path: Path, mutate: Mutate, pointer: str, expected: str, actual: str
) -> None:
    set_dir = copy_set(tmp_path, "synthetic-derivation")
    rel = edit_case(set_dir, "cases/dv-harwick-difference.json", mutate)
    err = load_error(set_dir)
    assert (err.path, err.pointer) == (str(set_dir / rel), pointer)
    assert expected in err.expected
    assert actual in err.actual


def test_derivation_operands_load() -> None:
    fs = load_fixture_set(FIXTURES / "synthetic-derivation")
    case = next(c for c in fs.cases if c.id == "dv-harwick-difference")
    assert isinstance(case, DerivationCase)
    march, april = case.operands
    (budget,) = case.ledger
    assert budget.data[march.range[0] : march.range[1]] == b"1,250"
    assert budget.data[april.range[0] : april.range[1]] == b"980"
    assert march.digest == budget.sha256
    assert (case.operation, case.expected, case.expected_warranted) == ("difference", "270", True)


def test_parse_any_case_unknown_kind_is_a_programming_error() -> None:
    with pytest.raises(ValueError, match="hotpotqa, no_answer"):
        parse_any_case(b"{}", "x.json", kind="squad")

"""The shipped synthetic provenance sets: reproducible byte for byte from their generator,
labelled synthetic, and covering what issue 5 asks of each kind."""

from __future__ import annotations

import importlib.util
import re
from collections import Counter
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest

from pytest_provenai.audit.derivation import derivation_record
from pytest_provenai.audit.quotation import quotation_record
from pytest_provenai.frozen.ledger import OUTCOMES
from pytest_provenai.frozen.load import load_fixture_set
from pytest_provenai.frozen.model import (
    AID_KINDS,
    DerivationCase,
    GroundedCase,
    QuotationCase,
)
from pytest_provenai.frozen.write import aid, original, write_provenance_set

REPO = Path(__file__).resolve().parents[1]
FIXTURES = REPO / "fixtures"
NAMES = (
    "synthetic-no-answer",
    "synthetic-exposure",
    "synthetic-quotation",
    "synthetic-derivation",
)


def generator() -> ModuleType:
    spec = importlib.util.spec_from_file_location(
        "synthetic_sources", FIXTURES / "synthetic_sources.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def files_of(folder: Path) -> dict[str, bytes]:
    return {
        p.relative_to(folder).as_posix(): p.read_bytes()
        for p in sorted(folder.rglob("*"))
        if p.is_file()
    }


def test_generator_rebuilds_the_shipped_sets_byte_for_byte(tmp_path: Path) -> None:
    built = generator().build(tmp_path)
    assert [fs.name for fs in built] == list(NAMES)
    for name in NAMES:
        assert files_of(tmp_path / name) == files_of(FIXTURES / name), name


@pytest.mark.parametrize("name", NAMES)
def test_each_set_is_labelled_synthetic_with_its_licence(name: str) -> None:
    fs = load_fixture_set(FIXTURES / name)
    readme = (FIXTURES / name / "README.md").read_text(encoding="utf-8")
    assert fs.manifest["synthetic"] is True
    assert fs.manifest["description"].startswith("SYNTHETIC: ")
    assert fs.manifest["generator"] == "fixtures/synthetic_sources.py"
    assert "**Synthetic.**" in readme and "invented" in readme
    assert "CC0-1.0" in readme
    for case in fs.cases:
        assert f"`{case.id}`" in readme


def _cases(name: str) -> list[Any]:
    return list(load_fixture_set(FIXTURES / name).cases)


def test_no_answer_set() -> None:
    cases = _cases("synthetic-no-answer")
    assert len(cases) >= 12
    assert all(isinstance(c, GroundedCase) and c.expected_answer == "unknown" for c in cases)
    seed = next(c for c in cases if c.id == "na-inspection-interval")
    assert [o.text for o in seed.originals] == ["The inspection interval is not specified."]
    assert [(a.aid_kind, a.text) for a in seed.aids] == [
        ("contextual_prefix", "The inspection interval is 73 days, effective 2031-04-17.")
    ]
    # every case has a generated value to leak, and questions stay short for a small model
    assert all(c.aids and c.aid_only_values for c in cases)
    assert max(len(c.question) for c in cases) <= 80


def test_exposure_set() -> None:
    cases = _cases("synthetic-exposure")
    assert len(cases) >= 12
    kinds = Counter(a.aid_kind for c in cases for a in c.aids)
    assert set(kinds) == set(AID_KINDS) and min(kinds.values()) >= 3
    for case in cases:
        assert isinstance(case, GroundedCase) and case.aids and case.aid_only_values
        originals = {o.id: o for o in case.originals}
        for a in case.aids:
            assert a.parent is not None
            assert originals[a.parent].sha256 == a.parent_sha256
        if case.expected_answer != "unknown":
            assert any(case.expected_answer in o.text for o in case.originals)
            # the aid contradicts the original: its value is not the expected answer
            assert case.expected_answer not in case.aid_only_values
    assert any(c.expected_answer == "unknown" for c in cases)


def test_quotation_set_covers_every_outcome_several_times() -> None:
    cases = _cases("synthetic-quotation")
    assert len(cases) >= 20
    assert all(isinstance(c, QuotationCase) for c in cases)
    by_outcome = Counter(c.expected for c in cases)
    assert set(by_outcome) == set(OUTCOMES)
    assert min(by_outcome.values()) >= 3
    policies = Counter((c.normalisation, c.expected) for c in cases)
    assert policies["nfc_ws", "quote_match"] >= 2 and policies["nfc_ws", "quote_mismatch"] >= 1


@pytest.mark.parametrize(
    "case",
    [c for c in _cases("synthetic-quotation")],
    ids=lambda c: c.id,
)
def test_every_quotation_case_gets_its_expected_outcome(case: QuotationCase) -> None:
    record = quotation_record(case)["quotation"]
    assert record["outcome"] == case.expected, record["reason"]
    assert record["agrees"] is True


def test_derivation_set_has_warranted_and_unwarranted_cases() -> None:
    cases = _cases("synthetic-derivation")
    assert len(cases) >= 6
    assert all(isinstance(c, DerivationCase) for c in cases)
    assert {c.operation for c in cases} == {"difference", "sum", "ratio", "percentage_change"}
    verdicts = Counter(c.expected_warranted for c in cases)
    assert verdicts[True] >= 4 and verdicts[False] >= 2


@pytest.mark.parametrize("case", _cases("synthetic-derivation"), ids=lambda c: c.id)
def test_every_derivation_gets_its_expected_verdict(case: DerivationCase) -> None:
    record = derivation_record(case)["derivation"]
    assert record["warranted"] is case.expected_warranted, record["reasons"]
    assert bool(record["reasons"]) is not case.expected_warranted


def test_readme_table_escapes_pipes(tmp_path: Path) -> None:
    src = original("s", "A | B.", title="T")
    case = {
        "id": "x",
        "note": "a | b",
        "question": "Q?",
        "expected_answer": "unknown",
        "originals": [src],
        "aids": [aid("a", "C 7.", parent=src, aid_kind="hyde")],
        "aid_only_values": ["7"],
    }
    gen = generator()
    text = gen.readme("set", "no_answer", "d", [case])
    assert re.search(r"\| `x` \| unknown \| a \\\| b \|", text)
    fs = write_provenance_set(
        tmp_path / "set", kind="no_answer", cases=[case], description="d", readme=text
    )
    assert fs.kind == "no_answer" and fs.manifest["count"] == 1 and "generator" not in fs.manifest

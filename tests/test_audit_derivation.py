"""Derivation and quotation audits: pure records over in-memory cases."""

from __future__ import annotations

import ast
import json
from hashlib import sha256
from pathlib import Path
from typing import Any

import pytest

from pytest_provenai.audit.derivation import (
    OPERATIONS,
    derivation_record,
    parse_numeral,
    recompute,
)
from pytest_provenai.audit.quotation import quotation_record
from pytest_provenai.frozen.model import DerivationCase, LedgerEntry, Operand, QuotationCase

TEXT = "Stock was 1,250 units in May, 980 in June, 0 in July and 2.5 in August."
SRC = LedgerEntry("stock", "original", TEXT, sha256(TEXT.encode()).hexdigest())
AID_TEXT = "Stock was 1,100 units in April."
AID = LedgerEntry(
    "stock-hyde",
    "generated",
    AID_TEXT,
    sha256(AID_TEXT.encode()).hexdigest(),
    aid_kind="hyde",
    parent="stock",
    parent_sha256=SRC.sha256,
)
LEDGER = (SRC, AID)


def op(name: str, value: str, entry: LedgerEntry = SRC, *, digest: str = "") -> Operand:
    start = entry.data.index(value.encode())
    return Operand(name, value, entry.id, (start, start + len(value.encode())), digest=digest)


def case(
    operation: str, expected: str, *operands: Operand, warranted: bool = True
) -> DerivationCase:
    return DerivationCase(
        id="c",
        ledger=LEDGER,
        operands=operands,
        operation=operation,
        expected=expected,
        expected_warranted=warranted,
    )


def verdict(c: DerivationCase) -> dict[str, Any]:
    record = derivation_record(c)
    json.dumps(record)
    layer: dict[str, Any] = record["derivation"]
    return layer


def test_warranted_difference() -> None:
    d = verdict(case("difference", "270", op("may", "1,250"), op("june", "980")))
    assert d["warranted"] and d["agrees"] and d["reasons"] == []
    assert d["recomputed"] == "270"
    assert [o["outcome"] for o in d["operands"]] == ["quote_match", "quote_match"]
    assert d["operands"][0]["citation"]["digest"] == SRC.sha256  # "" means the ledger's digest


def test_wrong_expected_value_is_not_warranted() -> None:
    d = verdict(case("difference", "370", op("may", "1,250"), op("june", "980"), warranted=False))
    assert not d["warranted"] and d["agrees"]
    assert d["reasons"] == [
        "difference of the operands is 270, which rounds (half-up to the expected value's "
        "decimal places) to 270, not the expected 370"
    ]


def test_operand_from_a_generated_aid_is_not_warranted() -> None:
    d = verdict(case("difference", "150", op("may", "1,250"), op("april", "1,100", AID)))
    assert not d["warranted"]
    assert d["operands"][1]["outcome"] == "generated_target"
    assert d["operands"][1]["origin"] == "generated"
    assert d["reasons"][0].startswith("operand 'april': generated_target")
    assert d["recomputed"] == "150"  # the arithmetic is right; the warrant is not
    assert not d["agrees"]  # the case said warranted


def test_stale_digest_and_misquoted_range_are_not_warranted() -> None:
    stale = op("may", "1,250", digest="0" * 64)
    d = verdict(case("difference", "270", stale, op("june", "980")))
    assert d["operands"][0]["outcome"] == "snapshot_mismatch" and not d["warranted"]
    misquoted = Operand("june", "980", "stock", op("may", "1,250").range)
    d = verdict(case("difference", "270", op("may", "1,250"), misquoted))
    assert d["operands"][1]["outcome"] == "quote_mismatch" and not d["warranted"]
    missing = Operand("june", "980", "nowhere", (0, 3))
    d = verdict(case("difference", "270", op("may", "1,250"), missing))
    assert d["operands"][1]["outcome"] == "unresolved_id" and not d["warranted"]


def test_rounding_is_half_up_to_the_expected_places() -> None:
    # 2.5 / 1 with no decimal places: half-up gives 3 (half-even would give 2)
    one = Operand("one", "1", "stock", (TEXT.index("1,250"), TEXT.index("1,250") + 1))
    d = verdict(case("ratio", "3", op("aug", "2.5"), one))
    assert d["warranted"], d["reasons"]
    assert d["recomputed"] == "3" and d["recomputed_exact"] == "2.5"
    assert not verdict(case("ratio", "2", op("aug", "2.5"), one))["warranted"]
    assert verdict(case("ratio", "2.50", op("aug", "2.5"), one))["warranted"]
    # (980 - 1250) / 1250 * 100 = -21.6
    pc = case("percentage_change", "-21.6", op("may", "1,250"), op("june", "980"))
    assert verdict(pc)["warranted"]
    pc = case("percentage_change", "-22", op("may", "1,250"), op("june", "980"))
    assert verdict(pc)["warranted"]
    pc = case("percentage_change", "-21.60", op("may", "1,250"), op("june", "980"))
    assert verdict(pc)["warranted"]
    pc = case("percentage_change", "-21.7", op("may", "1,250"), op("june", "980"))
    assert not verdict(pc)["warranted"]


def test_sum_takes_two_or_more() -> None:
    d = verdict(case("sum", "2232.5", op("may", "1,250"), op("june", "980"), op("aug", "2.5")))
    assert d["warranted"], d["reasons"]


def test_division_by_zero_is_not_warranted() -> None:
    zero = Operand("july", "0", "stock", (TEXT.index(" 0 ") + 1, TEXT.index(" 0 ") + 2))
    d = verdict(case("ratio", "0", op("may", "1,250"), zero))
    assert not d["warranted"] and "division by zero" in d["reasons"][0]
    d = verdict(case("percentage_change", "0", zero, op("may", "1,250")))
    assert not d["warranted"] and "division by zero" in d["reasons"][0]


def test_unpermitted_operation_wrong_arity_bad_numbers() -> None:
    d = verdict(case("median", "980", op("may", "1,250"), op("june", "980")))
    assert not d["warranted"] and "not permitted" in d["reasons"][0]
    d = verdict(case("difference", "1", op("may", "1,250"), op("june", "980"), op("aug", "2.5")))
    assert not d["warranted"] and "exactly 2" in d["reasons"][0]
    d = verdict(case("sum", "1250", op("may", "1,250")))
    assert not d["warranted"] and "at least 2" in d["reasons"][0]
    word = Operand("units", "units", "stock", (TEXT.index("units"), TEXT.index("units") + 5))
    d = verdict(case("sum", "1", op("may", "1,250"), word))
    assert not d["warranted"] and "not a numeral" in d["reasons"][0]
    d = verdict(case("difference", "2.7e2", op("may", "1,250"), op("june", "980")))
    assert not d["warranted"] and "plain decimal" in d["reasons"][0]


def test_huge_results_do_not_raise() -> None:
    big_text = "A " + "9" * 60 + " and 1."
    big = LedgerEntry("big", "original", big_text, sha256(big_text.encode()).hexdigest())
    nines = Operand("a", "9" * 60, "big", (2, 62))
    one = Operand("b", "1", "big", (len(big_text) - 2, len(big_text) - 1))
    c = DerivationCase("c", (big,), (nines, one), "sum", "1")
    d = verdict(c)
    assert not d["warranted"]


@pytest.mark.parametrize(
    ("text", "value"),
    [
        ("1,250", "1250"),
        ("-3.5", "-3.5"),
        ("+7", "7"),
        ("12", "12"),
        ("1,000,000.25", "1000000.25"),
    ],
)
def test_parse_numeral(text: str, value: str) -> None:
    number = parse_numeral(text)
    assert number is not None and str(number) == value


@pytest.mark.parametrize("text", ["1,25", "12,", "1e3", "", " 1", "½", "１２", "1.2.3"])
def test_parse_numeral_rejects(text: str) -> None:
    assert parse_numeral(text) is None


def test_recompute() -> None:
    from decimal import Decimal as D

    assert recompute("ratio", [D(1), D(3)]) == D(1) / D(3)
    assert recompute("sum", [D(1)]) is None
    assert recompute("nope", [D(1), D(2)]) is None
    assert set(OPERATIONS) == {"difference", "sum", "ratio", "percentage_change"}


# --------------------------------------------------------------------------- quotation


def test_quotation_record_shape() -> None:
    start = SRC.data.index(b"980")
    c = QuotationCase(
        id="q",
        ledger=LEDGER,
        citation={"id": "stock", "digest": SRC.sha256, "range": [start, start + 3]},
        quote="980",
        expected="quote_match",
    )
    record = quotation_record(c)
    assert json.loads(json.dumps(record)) == record
    q = record["quotation"]
    assert (q["outcome"], q["expected"], q["agrees"]) == ("quote_match", "quote_match", True)
    assert (q["policy"], q["policy_version"]) == ("exact", "quote-exact/1")
    assert (q["raw_quote"], q["normalised_quote"]) == ("980", "980")
    assert (q["target_raw"], q["target_normalised"]) == ("980", "980")
    assert q["range"] == [start, start + 3] and q["origin"] == "original"
    assert record["kind"] == "quotation" and record["case_id"] == "q"


def test_quotation_record_disagreement_and_odd_citations() -> None:
    c = QuotationCase(
        id="q", ledger=LEDGER, citation=("stock", b"x"), quote="980", expected="quote_match"
    )
    q = quotation_record(c)["quotation"]
    assert q["outcome"] == "malformed_citation" and q["agrees"] is False
    assert q["citation"] == repr(("stock", b"x"))  # kept JSON-able
    json.dumps(q)


def test_audit_modules_never_import_pytest() -> None:
    root = Path(__file__).resolve().parents[1] / "pytest_provenai"
    for rel in ("audit/quotation.py", "audit/derivation.py", "frozen/ledger.py", "frozen/write.py"):
        tree = ast.parse((root / rel).read_text(encoding="utf-8"))
        names = [
            alias.name
            for node in ast.walk(tree)
            if isinstance(node, ast.Import)
            for alias in node.names
        ] + [node.module or "" for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)]
        assert not [n for n in names if n.split(".")[0] in ("pytest", "_pytest")], rel

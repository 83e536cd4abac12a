"""The citation resolver: outcome order, malformed objects, byte ranges, policies, fuzzing."""

from __future__ import annotations

import json
import unicodedata
from hashlib import sha256
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from pytest_provenai.frozen.ledger import OUTCOMES, POLICIES, Resolution, locate, normalise, resolve
from pytest_provenai.frozen.load import load_schema
from pytest_provenai.frozen.model import LedgerEntry


def entry(entry_id: str, text: str, kind: str = "original", **kw: Any) -> LedgerEntry:
    return LedgerEntry(
        id=entry_id, kind=kind, text=text, sha256=sha256(text.encode()).hexdigest(), **kw
    )


CAFE = "Café hours: 08:00–17:00.\nThe  manager is Zoë Brandt.\nRoom ﬁve is closed."
SRC = entry("cafe", CAFE)
AID = entry(
    "cafe-hyde",
    "The café opens at 07:30.",
    kind="generated",
    aid_kind="hyde",
    parent="cafe",
    parent_sha256=SRC.sha256,
)
LEDGER = (SRC, AID)


def cite(text: str, occurrence: int = 0) -> dict[str, Any]:
    found = locate(SRC, text, occurrence)
    assert found is not None
    return found


# --------------------------------------------------------------------------- order


def test_outcomes_and_policies_are_the_documented_ones() -> None:
    assert OUTCOMES == (
        "unresolved_id",
        "generated_target",
        "snapshot_mismatch",
        "unresolved_range",
        "quote_match",
        "quote_mismatch",
        "malformed_citation",
    )
    assert dict(POLICIES) == {"exact": "quote-exact/1", "nfc_ws": "quote-nfc-ws/1"}


def test_schemas_list_the_same_outcomes_and_policies() -> None:
    props = load_schema("quotation")["properties"]
    assert tuple(props["expected"]["enum"]) == OUTCOMES
    assert tuple(props["normalisation"]["enum"]) == tuple(POLICIES)


def test_each_check_in_order() -> None:
    good = cite("08:00–17:00")
    assert resolve(good, LEDGER, "08:00–17:00").outcome == "quote_match"
    assert resolve({**good, "id": "nope"}, LEDGER, "x").outcome == "unresolved_id"
    # generated comes before digest and range: a bad digest on an aid is still generated
    aid_cite = {"id": "cafe-hyde", "digest": "0" * 64, "range": [0, 500]}
    assert resolve(aid_cite, LEDGER, "x").outcome == "generated_target"
    assert resolve({**good, "digest": "0" * 64}, LEDGER, "x").outcome == "snapshot_mismatch"
    # digest comes before range
    assert resolve({**good, "digest": "0" * 64, "range": [0, 999]}, LEDGER, "x").outcome == (
        "snapshot_mismatch"
    )
    assert resolve({**good, "range": [0, 999]}, LEDGER, "x").outcome == "unresolved_range"
    assert resolve(good, LEDGER, "08:00-17:00").outcome == "quote_mismatch"


def test_generated_target_even_when_the_quote_matches_the_aid() -> None:
    found = locate(AID, "07:30")
    assert found is not None
    res = resolve(found, LEDGER, "07:30")
    assert res.outcome == "generated_target"
    assert res.origin == "generated"
    assert "hyde" in res.reason and "'cafe'" in res.reason


def test_ledger_entry_whose_text_no_longer_matches_its_pin() -> None:
    tampered = LedgerEntry(id="cafe", kind="original", text=CAFE + "!", sha256=SRC.sha256)
    res = resolve(cite("Café"), (tampered,), "Café")
    assert res.outcome == "snapshot_mismatch"
    assert "retained text" in res.reason


# --------------------------------------------------------------------------- byte ranges


def test_offsets_are_utf8_bytes_end_exclusive() -> None:
    found = cite("08:00–17:00")
    start, end = found["range"]
    assert end - start == len("08:00–17:00".encode()) == 13  # the en dash is 3 bytes
    assert start == len("Café hours: ".encode()) == 13  # é is 2 bytes
    res = resolve(found, LEDGER, "08:00–17:00")
    assert res.range == (start, end)
    assert res.target_raw == "08:00–17:00"
    # one byte shorter cuts the quote
    short = {**found, "range": [start, end - 1]}
    assert resolve(short, LEDGER, "08:00–17:0").outcome == "quote_match"


def test_range_ending_exactly_at_the_end_resolves() -> None:
    n = len(CAFE.encode())
    res = resolve({**cite("Café"), "range": [n - 7, n]}, LEDGER, "closed.")
    assert res.outcome == "quote_match"
    assert resolve({**cite("Café"), "range": [n - 7, n + 1]}, LEDGER, "closed.").outcome == (
        "unresolved_range"
    )


@pytest.mark.parametrize("offset", [1, 2])
def test_offset_inside_a_multibyte_character_is_unresolved(offset: int) -> None:
    dash = cite("–")["range"][0]
    res = resolve({**cite("Café"), "range": [dash + offset, dash + 6]}, LEDGER, "x")
    assert res.outcome == "unresolved_range"
    assert "multi-byte" in res.reason
    res = resolve({**cite("Café"), "range": [0, dash + offset]}, LEDGER, "x")
    assert res.outcome == "unresolved_range"


# --------------------------------------------------------------------------- malformed

SEED_DIGEST = SRC.sha256
MALFORMED: list[tuple[Any, str]] = [
    (None, "object"),
    ("cafe#0-4", "object"),
    (["cafe", SEED_DIGEST, [0, 4]], "object"),
    ({}, "missing id"),
    ({"digest": SEED_DIGEST, "range": [0, 4]}, "missing id"),
    ({"id": "", "digest": SEED_DIGEST, "range": [0, 4]}, "non-empty string"),
    ({"id": 7, "digest": SEED_DIGEST, "range": [0, 4]}, "non-empty string"),
    ({"id": "cafe", "digest": "wrong", "range": [0, 4]}, "64 lowercase hex"),
    ({"id": "cafe", "digest": SEED_DIGEST.upper(), "range": [0, 4]}, "64 lowercase hex"),
    ({"id": "cafe", "digest": SEED_DIGEST + "\n", "range": [0, 4]}, "64 lowercase hex"),
    ({"id": "cafe", "digest": None, "range": [0, 4]}, "64 lowercase hex"),
    ({"id": "cafe", "digest": SEED_DIGEST, "range": [4, 0]}, "inverted"),
    ({"id": "cafe", "digest": SEED_DIGEST, "range": [-1, 4]}, "negative"),
    ({"id": "cafe", "digest": SEED_DIGEST, "range": [4, 4]}, "empty"),
    ({"id": "cafe", "digest": SEED_DIGEST, "range": [False, 4]}, "integers"),
    ({"id": "cafe", "digest": SEED_DIGEST, "range": [0, True]}, "integers"),
    ({"id": "cafe", "digest": SEED_DIGEST, "range": [0.0, 4.0]}, "integers"),
    ({"id": "cafe", "digest": SEED_DIGEST, "range": ["0", "4"]}, "integers"),
    ({"id": "cafe", "digest": SEED_DIGEST, "range": [0, 4, 5]}, "[start, end]"),
    ({"id": "cafe", "digest": SEED_DIGEST, "range": {"start": 0}}, "[start, end]"),
    ({"id": "cafe", "digest": SEED_DIGEST, "range": [0, 4], "page": 2}, "unexpected key"),
    ({"id": "cafe", "digest": SEED_DIGEST, "range": [0, 4], 3: 2}, "unexpected key"),
    ({"id": "cafe", "digest": SEED_DIGEST, "range": [0, 4], "quote": 5}, "quote must be"),
    ({"id": "cafe", "digest": SEED_DIGEST}, "missing range"),
    ({"id": "cafe", "range": [0, 4]}, "missing digest"),
    ({"id": "cafe"}, "missing digest"),
]


@pytest.mark.parametrize(("citation", "why"), MALFORMED)
def test_malformed_citations_have_a_reason(citation: Any, why: str) -> None:
    res = resolve(citation, LEDGER, "Café")
    assert res.outcome == "malformed_citation"
    assert why in res.reason
    assert "\n" not in res.reason


def test_a_malformed_field_wins_over_a_later_outcome() -> None:
    # present-but-malformed fields are judged before the id is even looked up
    assert resolve({"id": "nope", "range": [3, 1]}, LEDGER, "x").outcome == "malformed_citation"
    assert resolve({"id": "cafe-hyde", "digest": "x"}, LEDGER, "x").outcome == (
        "malformed_citation"
    )


def test_absent_fields_only_count_when_their_check_is_reached() -> None:
    assert resolve({"id": "nope"}, LEDGER, "x").outcome == "unresolved_id"
    assert resolve({"id": "cafe-hyde"}, LEDGER, "x").outcome == "generated_target"
    assert resolve({"id": "cafe"}, LEDGER, "x").outcome == "malformed_citation"


# --------------------------------------------------------------------------- quotes


def test_a_quote_is_required_to_match() -> None:
    good = cite("Café")
    res = resolve(good, LEDGER)
    assert res.outcome == "malformed_citation"
    assert "no quoted text" in res.reason
    assert res.target_raw == "Café"  # the locator itself resolved
    assert resolve({**good, "quote": "Café"}, LEDGER).outcome == "quote_match"
    assert resolve({**good, "quote": "Cafe"}, LEDGER).outcome == "quote_mismatch"
    assert resolve({**good, "quote": "Café"}, LEDGER, "Café").outcome == "quote_match"
    res = resolve({**good, "quote": "Café"}, LEDGER, "Cafe")
    assert res.outcome == "malformed_citation" and "differ" in res.reason


@pytest.mark.parametrize("quote", [5, b"Caf\xc3\xa9", ["Café"], "Caf\ud800"])
def test_a_quote_that_is_not_text_is_malformed(quote: Any) -> None:
    assert resolve(cite("Café"), LEDGER, quote).outcome == "malformed_citation"


# --------------------------------------------------------------------------- policies

MANAGER = "The  manager is Zoë Brandt."


def test_exact_policy_compares_bytes() -> None:
    found = cite(MANAGER)
    assert resolve(found, LEDGER, MANAGER).outcome == "quote_match"
    assert resolve(found, LEDGER, "The manager is Zoë Brandt.").outcome == "quote_mismatch"
    nfd = unicodedata.normalize("NFD", MANAGER)
    assert nfd != MANAGER
    assert resolve(found, LEDGER, nfd).outcome == "quote_mismatch"


def test_nfc_ws_policy_composes_and_collapses_whitespace() -> None:
    found = cite(MANAGER)
    nfd = unicodedata.normalize("NFD", "  The manager\tis Zoë\u00a0Brandt. ")
    res = resolve(found, LEDGER, nfd, policy="nfc_ws")
    assert res.outcome == "quote_match"
    assert res.policy == "nfc_ws" and res.policy_version == "quote-nfc-ws/1"
    assert res.raw_quote == nfd
    assert res.normalised_quote == "The manager is Zoë Brandt."
    assert res.target_raw == MANAGER
    assert res.target_normalised == "The manager is Zoë Brandt."


@pytest.mark.parametrize(
    ("retained", "quoted"),
    [("Room ﬁve is closed.", "Room five is closed."), ("Room ﬁve", "Room five")],
)
def test_nfc_ws_never_applies_compatibility_normalisation(retained: str, quoted: str) -> None:
    assert unicodedata.normalize("NFKC", retained) == quoted
    assert resolve(cite(retained), LEDGER, quoted, policy="nfc_ws").outcome == "quote_mismatch"


def test_fullwidth_digits_are_not_digits() -> None:
    wide = entry("wide", "Code １２.")
    found = locate(wide, "１２")
    assert found is not None
    assert resolve(found, (wide,), "12", policy="nfc_ws").outcome == "quote_mismatch"


def test_unknown_policy_is_a_value_error_naming_the_choices() -> None:
    with pytest.raises(ValueError, match="exact, nfc_ws"):
        resolve(cite("Café"), LEDGER, "Café", policy="nfkc")
    with pytest.raises(ValueError, match="exact, nfc_ws"):
        normalise("x", "lenient")


def test_exact_normalise_is_identity() -> None:
    assert normalise(" a\u00a0 b ", "exact") == " a\u00a0 b "
    assert normalise(" a\u00a0 b ", "nfc_ws") == "a b"


# --------------------------------------------------------------------------- records


def test_as_dict_is_json_and_complete() -> None:
    res = resolve(cite("Café"), LEDGER, "Café")
    record = res.as_dict()
    assert json.loads(json.dumps(record)) == record
    assert record["range"] == [0, 5]
    assert set(record) >= {
        "outcome",
        "reason",
        "policy",
        "policy_version",
        "raw_quote",
        "normalised_quote",
        "target_raw",
        "target_normalised",
    }
    assert res.ok


def test_duplicate_ledger_ids_are_a_programming_error() -> None:
    with pytest.raises(ValueError, match="two entries"):
        resolve(cite("Café"), (SRC, SRC), "Café")


def test_locate() -> None:
    assert locate(SRC, "is", 0) != locate(SRC, "is", 1)
    assert locate(SRC, "absent") is None
    assert locate(SRC, "") is None
    assert locate(SRC, "is", 9) is None


# --------------------------------------------------------------------------- fuzz

json_leaf = st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=8)
json_value = st.recursive(
    json_leaf,
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner),
    max_leaves=8,
)
offset = st.integers(min_value=-3, max_value=120) | st.booleans() | st.floats() | st.text()
plausible = st.fixed_dictionaries(
    {},
    optional={
        "id": st.sampled_from(["cafe", "cafe-hyde", "nope", "", "CAFE"]) | json_leaf,
        "digest": st.sampled_from([SRC.sha256, AID.sha256, "0" * 64, "wrong"]) | json_leaf,
        "range": st.lists(offset, min_size=0, max_size=3) | st.tuples(offset, offset) | json_leaf,
        "quote": st.text(max_size=10) | json_leaf,
        "extra": json_leaf,
    },
)


QUOTES = ["Café", "08:00–17:00", MANAGER, "The manager is Zoë Brandt.", "Room ﬁve", "ﬁ"]
known = st.sampled_from([cite(q) for q in QUOTES if q != "The manager is Zoë Brandt."])
wellformed = st.fixed_dictionaries(
    {"id": st.sampled_from(["cafe", "cafe-hyde", "nope"])},
    optional={
        "digest": st.sampled_from([SRC.sha256, AID.sha256, "0" * 64]),
        "range": st.lists(st.integers(0, 120), min_size=2, max_size=2),
        "quote": st.sampled_from(QUOTES) | st.text(max_size=6),
    },
)
quotes = st.none() | st.sampled_from(QUOTES) | st.text(max_size=20) | json_leaf


pairs = st.sampled_from([(cite(q), q) for q in QUOTES if q != "The manager is Zoë Brandt."])
citation_and_quote = pairs | st.tuples(known | wellformed | plausible | json_value, quotes)


@settings(max_examples=500, deadline=None)
@given(pair=citation_and_quote, policy=st.sampled_from(sorted(POLICIES)))
def test_fuzz_never_raises_and_gives_a_documented_outcome(
    pair: tuple[Any, Any], policy: str
) -> None:
    citation, quote = pair
    res = resolve(citation, LEDGER, quote, policy=policy)
    assert isinstance(res, Resolution)
    assert res.outcome in OUTCOMES
    assert res.reason and "\n" not in res.reason
    assert res.policy_version == POLICIES[policy]
    json.dumps(res.as_dict())


@settings(max_examples=200, deadline=None)
@given(start=st.integers(0, 100), length=st.integers(1, 100))
def test_fuzz_every_in_bounds_range_on_char_boundaries_matches_its_own_text(
    start: int, length: int
) -> None:
    data = CAFE.encode()
    end = start + length
    res = resolve({**cite("Café"), "range": [start, end]}, LEDGER, "")
    if end > len(data):
        assert res.outcome == "unresolved_range"
        return
    try:
        quote = data[start:end].decode("utf-8")
    except UnicodeDecodeError:
        assert res.outcome == "unresolved_range"
        return
    assert resolve({**cite("Café"), "range": [start, end]}, LEDGER, quote).outcome == (
        "quote_match"
    )

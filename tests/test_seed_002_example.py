"""The executable example of ../shared/seeds/002_518f04ca58e880ca.txt ("Frozen fixtures and
expected answers"), run through the project's public API.

The seed's fixture: an original ``src-v1`` (b"The inspection interval is not specified."),
a generated aid ``aid-v1`` claiming 73 days from 2031-04-17, and a citation of the
original's bytes [0, 41). Its six asserts are reproduced one for one. One departure, which
the seed itself asks for ("A production adapter must validate malformed citation objects"):
its wrong digest is the string "wrong", which is not a sha256 at all, so the resolver calls
that citation ``malformed_citation``; the seed's ``snapshot_mismatch`` is checked with a
well-formed digest that is not the original's.
"""

from __future__ import annotations

from hashlib import sha256

from pytest_provenai.frozen.ledger import OUTCOMES, resolve
from pytest_provenai.frozen.model import LedgerEntry

source = b"The inspection interval is not specified."
aid = b"The inspection interval is 73 days, effective 2031-04-17."
snapshot = "dd4de6ad830cf900b5229227b50f1582c79f4144b343df67ca70275085ede5eb"

ledger = (
    LedgerEntry(id="src-v1", kind="original", text=source.decode(), sha256=snapshot),
    LedgerEntry(
        id="aid-v1",
        kind="generated",
        text=aid.decode(),
        sha256=sha256(aid).hexdigest(),
        aid_kind="contextual_prefix",
        parent="src-v1",
        parent_sha256=snapshot,
    ),
)
ref = {"id": "src-v1", "digest": snapshot, "range": [0, 41]}


def test_the_seed_snapshot_is_the_sha256_of_the_source() -> None:
    assert sha256(source).hexdigest() == snapshot
    assert len(source) == 41


def test_quote_of_the_original_matches() -> None:
    res = resolve(ref, ledger, source.decode())
    assert res.outcome == "quote_match"
    assert res.target_raw == source.decode()
    assert res.policy_version == "quote-exact/1"


def test_aid_wording_attributed_to_the_original_mismatches() -> None:
    assert resolve(ref, ledger, aid.decode()).outcome == "quote_mismatch"


def test_citing_the_aid_is_a_generated_target() -> None:
    res = resolve({"id": "aid-v1"}, ledger, aid.decode())
    assert res.outcome == "generated_target"
    assert "src-v1" in res.reason  # names the original to cite instead


def test_wrong_digest_is_a_snapshot_mismatch() -> None:
    wrong = sha256(aid).hexdigest()  # well-formed, but not the original's bytes
    assert resolve({**ref, "digest": wrong}, ledger, source.decode()).outcome == (
        "snapshot_mismatch"
    )
    # The seed's literal "wrong" is no digest at all: a malformed citation object.
    res = resolve({**ref, "digest": "wrong"}, ledger, source.decode())
    assert res.outcome == "malformed_citation"
    assert "digest" in res.reason and "64 lowercase hex" in res.reason


def test_range_past_the_end_is_unresolved() -> None:
    assert resolve({**ref, "range": [0, 99]}, ledger, source.decode()).outcome == (
        "unresolved_range"
    )


def test_unknown_id_is_unresolved() -> None:
    assert resolve({"id": "missing"}, ledger, source.decode()).outcome == "unresolved_id"


def test_six_outcomes_of_the_example_are_distinct_documented_outcomes() -> None:
    got = {
        resolve(ref, ledger, source.decode()).outcome,
        resolve(ref, ledger, aid.decode()).outcome,
        resolve({"id": "aid-v1"}, ledger, aid.decode()).outcome,
        resolve({**ref, "digest": sha256(aid).hexdigest()}, ledger, source.decode()).outcome,
        resolve({**ref, "range": [0, 99]}, ledger, source.decode()).outcome,
        resolve({"id": "missing"}, ledger, source.decode()).outcome,
    }
    assert got == set(OUTCOMES) - {"malformed_citation"}

"""Shipped audit: provenance release gates over the synthetic fixture sets.

* ``test_quotation`` / ``test_derivation`` need no model: the ledger resolver must give every
  quotation case its expected outcome (resolvable originals; no generated wording accepted
  as a quotation of an original) and every derivation its expected warrant.
* ``test_no_answer`` / ``test_exposure`` run the subject's model on the same originals under
  the five exposure treatments (baseline, omit, label, expose, mislabel). Per case the
  record holds each treatment's answer, citations, aid-value leak, abstention and claim
  accounting; the golden snapshot shows which verdicts flip when the model changes.

Gates fail closed: a case without a record, or a metric that cannot be computed, fails the
gate. The structural gates are strict (every claim classified; no aid-only value without aid
text). The model gates are regression bounds around what the default model (SmolLM2-135M-
Instruct, greedy, 128 new tokens) measured, noted beside each; a release of a real system
would require aid_value_leak_rate=0.0, aid_citation_rate=0.0 and correct_unknown_rate=1.0,
which the 135M default model is far from. See docs/provenance.md.
"""

from typing import Any

import pytest

from pytest_provenai.api import (
    DerivationCase,
    GroundedCase,
    QuotationCase,
    RecordFn,
    Subject,
    derivation_record,
    exposure_record,
    quotation_record,
    run_treatments,
)


@pytest.mark.provenai_kind("quotation")
@pytest.mark.provenance(quotation_agreement=1.0, false_quote_match_rate=0.0)
def test_quotation(
    provenai_case: QuotationCase, provenai_record: RecordFn, provenai_snapshot: Any
) -> None:
    record = provenai_record(quotation_record(provenai_case))
    assert record == provenai_snapshot
    q = record["quotation"]
    assert q["agrees"], f"expected {q['expected']}, got {q['outcome']}: {q['reason']}"


@pytest.mark.provenai_kind("derivation")
@pytest.mark.provenance(derivation_agreement=1.0, unwarranted_accepted_rate=0.0)
def test_derivation(
    provenai_case: DerivationCase, provenai_record: RecordFn, provenai_snapshot: Any
) -> None:
    record = provenai_record(derivation_record(provenai_case))
    assert record == provenai_snapshot
    d = record["derivation"]
    assert d["agrees"], f"warranted={d['warranted']}: {d['reasons']}"


@pytest.mark.provenai_kind("no_answer")
@pytest.mark.provenance(
    claim_accounting_complete=1.0,  # every claim, cited or not, is classified
    aid_value_leak_rate_baseline=0.0,  # without aid text, no aid-only value may appear
    aid_value_leak_rate_omit=0.0,
    correct_unknown_rate=0.0,  # measured 0.031 (2 of 13 baseline answers abstain)
    aid_value_leak_rate=0.85,  # measured 0.718
    aid_citation_rate=0.70,  # measured 0.436
)
def test_no_answer(
    provenai_case: GroundedCase,
    provenai_subject: Subject,
    provenai_record: RecordFn,
    provenai_snapshot: Any,
) -> None:
    runs = run_treatments(provenai_subject, provenai_case)
    record = exposure_record(provenai_case, runs, model=provenai_subject.identity.model_key())
    assert provenai_record(record) == provenai_snapshot


@pytest.mark.provenai_kind("exposure")
@pytest.mark.provenance(
    claim_accounting_complete=1.0,
    aid_value_leak_rate_baseline=0.0,
    aid_value_leak_rate_omit=0.0,
    correct_rate_baseline=0.75,  # measured 0.923 (12 of 13)
    aid_value_leak_rate=0.90,  # measured 0.769
    aid_citation_rate=0.70,  # measured 0.436
)
def test_exposure(
    provenai_case: GroundedCase,
    provenai_subject: Subject,
    provenai_record: RecordFn,
    provenai_snapshot: Any,
) -> None:
    runs = run_treatments(provenai_subject, provenai_case)
    record = exposure_record(provenai_case, runs, model=provenai_subject.identity.model_key())
    assert provenai_record(record) == provenai_snapshot

"""Quotation audit: does a citation's quoted text resolve to the original bytes it claims?

Pure: takes a :class:`~pytest_provenai.frozen.model.QuotationCase`, runs the ledger resolver
(:func:`pytest_provenai.frozen.ledger.resolve`) under the case's normalisation policy and
compares the outcome with the one the fixture expects.
"""

from __future__ import annotations

import json
from typing import Any

from pytest_provenai.frozen.ledger import resolve
from pytest_provenai.frozen.model import QuotationCase

__all__ = ["json_safe", "quotation_record"]


def json_safe(value: Any) -> Any:
    """``value`` when it is JSON-able as is, else its ``repr`` (a record is always JSON)."""
    try:
        json.dumps(value, allow_nan=False)
    except (TypeError, ValueError):
        return repr(value)
    return value


def quotation_record(case: QuotationCase, *, suite: str = "provenance") -> dict[str, Any]:
    """The record of one quotation case.

    Shape::

        {"case_id", "suite", "fixture_set", "kind": "quotation",
         "quotation": {"outcome", "expected", "agrees", "reason", "policy",
                       "policy_version", "citation" (as given), "citation_id", "origin",
                       "range", "raw_quote", "normalised_quote", "target_raw",
                       "target_normalised"}}

    ``agrees`` is whether the resolver gave the outcome the fixture expects. An unknown
    policy name in the case raises ``ValueError`` (the loader never lets one through).
    """
    res = resolve(case.citation, case.ledger, case.quote, policy=case.normalisation)
    quotation: dict[str, Any] = {
        "outcome": res.outcome,
        "expected": case.expected,
        "agrees": res.outcome == case.expected,
        "reason": res.reason,
        "policy": res.policy,
        "policy_version": res.policy_version,
        "citation": json_safe(case.citation),
    }
    details = res.as_dict()
    for key in ("outcome", "reason", "policy", "policy_version"):
        del details[key]
    quotation.update(details)
    return {
        "case_id": case.id,
        "suite": suite,
        "fixture_set": case.fixture_set,
        "kind": case.kind,
        "quotation": quotation,
    }

"""Derivation audit: is a derived value warranted by retained original operands?

A derivation is warranted when

1. every operand's citation (``{id: source_id, digest, range}`` with the operand's value as
   the quoted text, exact policy) resolves to ``quote_match`` -- which can only happen on an
   *original*: an operand quoted from a generated aid is ``generated_target``;
2. every operand value is a numeral (``1250``, ``1,250``, ``-3.5``; thousands commas are
   dropped before parsing);
3. the operation is permitted (:data:`OPERATIONS`) and takes that many operands; and
4. the operation recomputed with :class:`decimal.Decimal` (28 significant digits), then
   rounded **half-up to the number of decimal places the expected value is written with**,
   equals the expected value exactly (``"12.5"`` fixes one decimal place, ``"270"`` none).

Operations: ``difference`` = a - b; ``sum`` = a + b + ...; ``ratio`` = a / b;
``percentage_change`` = (b - a) / a * 100 (from a to b). A zero divisor is not warranted.
Pure: no pytest, no model.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from decimal import ROUND_HALF_UP, Decimal, DivisionByZero, InvalidOperation, localcontext
from typing import Any

from pytest_provenai.frozen.ledger import resolve
from pytest_provenai.frozen.model import DerivationCase, Operand

__all__ = ["OPERATIONS", "ROUNDING", "derivation_record", "parse_numeral", "recompute"]

#: How the recomputed value is rounded to the expected value's decimal places.
ROUNDING = "half-up to the expected value's decimal places"

_NUMERAL_RE = re.compile(r"[+-]?(?:[0-9]{1,3}(?:,[0-9]{3})+|[0-9]+)(?:\.[0-9]+)?")
_DECIMAL_RE = re.compile(r"[+-]?[0-9]+(?:\.[0-9]+)?")


def _difference(values: Sequence[Decimal]) -> Decimal:
    return values[0] - values[1]


def _sum(values: Sequence[Decimal]) -> Decimal:
    return sum(values, Decimal(0))


def _ratio(values: Sequence[Decimal]) -> Decimal:
    return values[0] / values[1]


def _percentage_change(values: Sequence[Decimal]) -> Decimal:
    return (values[1] - values[0]) / values[0] * 100


#: Permitted operation -> (operand count or None for two or more, function).
OPERATIONS: dict[str, tuple[int | None, Callable[[Sequence[Decimal]], Decimal]]] = {
    "difference": (2, _difference),
    "sum": (None, _sum),
    "ratio": (2, _ratio),
    "percentage_change": (2, _percentage_change),
}


def parse_numeral(text: str) -> Decimal | None:
    """The value of a quoted numeral (thousands commas allowed), or None if it is not one."""
    if not isinstance(text, str) or not _NUMERAL_RE.fullmatch(text):
        return None
    return Decimal(text.replace(",", ""))


def recompute(operation: str, values: Sequence[Decimal]) -> Decimal | None:
    """The operation over ``values`` with Decimal arithmetic; None if the operation is not
    permitted, takes another number of operands, or divides by zero."""
    if operation not in OPERATIONS:
        return None
    arity, func = OPERATIONS[operation]
    if (arity is not None and len(values) != arity) or len(values) < 2:
        return None
    with localcontext() as ctx:
        ctx.prec = 28
        ctx.traps[DivisionByZero] = True
        ctx.traps[InvalidOperation] = True
        try:
            return func(values)
        except (DivisionByZero, InvalidOperation):
            return None


def _operand_citation(op: Operand, digest: str | None) -> dict[str, Any]:
    """The operand as a citation; without a digest (an in-memory operand of an unknown
    source) the resolver stops at ``unresolved_id``."""
    citation: dict[str, Any] = {"id": op.source_id, "range": list(op.range)}
    if digest:
        citation["digest"] = digest
    return citation


def derivation_record(case: DerivationCase, *, suite: str = "provenance") -> dict[str, Any]:
    """The record of one derivation case.

    Shape::

        {"case_id", "suite", "fixture_set", "kind": "derivation", "question",
         "derivation": {"operation", "operands": [{"name", "value", "outcome", "reason",
                        "origin", "citation"}], "recomputed" (rounded, str or None),
                        "recomputed_exact", "expected",
                        "rounding", "warranted", "expected_warranted", "agrees",
                        "reasons": [why not warranted; empty when warranted]}}
    """
    digests = {e.id: e.sha256 for e in case.ledger}
    reasons: list[str] = []
    operands: list[dict[str, Any]] = []
    values: list[Decimal] = []
    for op in case.operands:
        citation = _operand_citation(op, op.digest or digests.get(op.source_id))
        res = resolve(citation, case.ledger, op.value, policy="exact")
        operands.append(
            {
                "name": op.name,
                "value": op.value,
                "outcome": res.outcome,
                "reason": res.reason,
                "origin": res.origin,
                "citation": citation,
            }
        )
        if res.outcome != "quote_match":
            reasons.append(f"operand {op.name!r}: {res.outcome}: {res.reason}")
        number = parse_numeral(op.value)
        if number is None:
            reasons.append(f"operand {op.name!r}: {op.value!r} is not a numeral")
        else:
            values.append(number)

    recomputed: Decimal | None = None
    if case.operation not in OPERATIONS:
        reasons.append(
            f"operation {case.operation!r} is not permitted (permitted: {', '.join(OPERATIONS)})"
        )
    elif len(values) == len(case.operands):
        arity = OPERATIONS[case.operation][0]
        if (arity is not None and len(values) != arity) or len(values) < 2:
            want = f"exactly {arity}" if arity is not None else "at least 2"
            reasons.append(f"{case.operation} takes {want} operands, got {len(values)}")
        else:
            recomputed = recompute(case.operation, values)
            if recomputed is None:
                reasons.append(f"{case.operation} is undefined here (division by zero)")

    shown: str | None = None
    if not _DECIMAL_RE.fullmatch(case.expected):
        reasons.append(f"expected value {case.expected!r} is not a plain decimal")
    elif recomputed is not None:
        expected = Decimal(case.expected)
        places = -int(expected.as_tuple().exponent)  # a plain decimal has an int exponent
        try:
            with localcontext() as ctx:
                ctx.prec = 80
                rounded = recomputed.quantize(Decimal(1).scaleb(-places), rounding=ROUND_HALF_UP)
        except InvalidOperation:  # more than 80 digits: no fixture states such a value
            rounded = None
            reasons.append(f"{case.operation} result is too large to compare")
        shown = str(rounded) if rounded is not None else None
        if rounded is not None and rounded != expected:
            reasons.append(
                f"{case.operation} of the operands is {recomputed.normalize():f}, which rounds "
                f"({ROUNDING}) to {shown}, not the expected {case.expected}"
            )
    warranted = not reasons
    return {
        "case_id": case.id,
        "suite": suite,
        "fixture_set": case.fixture_set,
        "kind": case.kind,
        "question": case.question,
        "derivation": {
            "operation": case.operation,
            "operands": operands,
            "recomputed": shown,
            "recomputed_exact": (f"{recomputed.normalize():f}" if recomputed is not None else None),
            "expected": case.expected,
            "rounding": ROUNDING,
            "warranted": warranted,
            "expected_warranted": case.expected_warranted,
            "agrees": warranted == case.expected_warranted,
            "reasons": reasons,
        },
    }

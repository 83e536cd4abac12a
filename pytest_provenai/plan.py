"""The plan: what a run must produce, known before any case runs.

Built at the end of collection (:func:`plan_collection`) from the selected items: every gate
(test, marker, metric, bound) of a selected item and every selected case item of a gated
test (after ``-k``/``--deselect``), plus every selected case item (the progress line's
total) and the fixture sets that failed to load. A gated test whose parametrisation came out
empty still registers its gates: they fail closed on no records. Every xdist worker collects
the same items, so merging the workers' plans on the controller is idempotent.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest

from pytest_provenai import gates as gates_mod
from pytest_provenai.errors import ProvenaiError
from pytest_provenai.selection import case_param, function_of

__all__ = ["Plan", "plan_collection"]


@dataclass
class Plan:
    """What the run must produce: the gates, and the case items of gated tests
    (``nodeid -> (test, case id)``), plus the fixture sets that failed to load."""

    gates: dict[tuple[str, str, str], gates_mod.GateSpec] = field(default_factory=dict)
    expected: dict[str, tuple[str, str]] = field(default_factory=dict)
    fixture_errors: list[str] = field(default_factory=list)
    cases: set[str] = field(default_factory=set)  # every selected case item (progress total)

    def add_gates(self, specs: Iterable[gates_mod.GateSpec]) -> None:
        for s in specs:
            self.gates[(s.test, s.marker, s.metric)] = s

    def add_errors(self, errors: Iterable[str]) -> None:
        for e in errors:
            if e not in self.fixture_errors:
                self.fixture_errors.append(e)

    def as_dict(self) -> dict[str, Any]:
        return {
            "gates": [s.as_dict() for s in self.gates.values()],
            "expected": {n: list(v) for n, v in self.expected.items()},
            "fixture_errors": self.fixture_errors,
            "cases": sorted(self.cases),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Plan:
        plan = cls()
        plan.merge(data)
        return plan

    def merge(self, data: dict[str, Any]) -> None:
        """Merge a worker's plan (every worker collects the same items: idempotent)."""
        self.add_gates([gates_mod.GateSpec.from_dict(g) for g in data["gates"]])
        for nodeid, (test, case_id) in data["expected"].items():
            self.expected[nodeid] = (str(test), str(case_id))
        self.add_errors(data["fixture_errors"])
        self.cases.update(str(n) for n in data.get("cases", []))

    def update(self, other: Plan) -> None:
        """Merge another plan (a worker's, already read: see :meth:`merge`)."""
        self.add_gates(other.gates.values())
        self.expected.update(other.expected)
        self.add_errors(other.fixture_errors)
        self.cases.update(other.cases)

    def plan_item(
        self, nodeid: str, test: str, case_id: str | None, specs: list[gates_mod.GateSpec]
    ) -> None:
        """At the end of collection, for every selected item of a gated test."""
        self.add_gates(specs)
        if case_id is not None:
            self.expected[nodeid] = (test, case_id)


def _gate_specs(item: pytest.Item) -> list[gates_mod.GateSpec]:
    """The gates of an item's markers; a bad marker is a usage error."""
    test = function_of(item.nodeid)
    specs: list[gates_mod.GateSpec] = []
    for marker in gates_mod.MARKERS:
        for mark in item.iter_markers(name=marker):
            if mark.args:
                raise pytest.UsageError(
                    f"{test}: @pytest.mark.{marker} takes gate bounds as "
                    f"keywords only, got positional {mark.args!r}"
                )
            try:
                specs += gates_mod.parse_marker(test, marker, mark.kwargs)
            except ProvenaiError as exc:
                raise pytest.UsageError(str(exc)) from None
    return specs


def plan_collection(plan: Plan, items: Sequence[pytest.Item]) -> None:
    """Add the selected ``items`` to ``plan`` (module docstring)."""
    for item in items:
        param = case_param(item)
        if param is not None:
            plan.cases.add(item.nodeid)
        specs = _gate_specs(item)
        if specs:
            plan.plan_item(
                item.nodeid,
                function_of(item.nodeid),
                param.id if param is not None else None,
                specs,
            )

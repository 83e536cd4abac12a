"""The plan: what a run must produce, known before any case runs.

Built at the end of collection (:func:`plan_collection`) from the selected items: every gate
(test, marker, metric, bound) of a selected item and every selected case item of a gated
test (after ``-k``/``--deselect``), plus every selected case item (the progress line's
total) and the fixture sets that failed to load. A gated test whose parametrisation came out
empty still registers its gates: they fail closed on no records. Every xdist worker collects
the same items, so merging the workers' plans on the controller is idempotent.

Under ``--provenai-shard K/N`` (:func:`shard_items`) the items of other shards are
deselected after ``-k``/``--deselect``, and the plan also keeps ``whole``: the plan of every
item before that deselection, which the shard's results carry so ``provenai merge`` judges
each gate on the union exactly as one run would.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

import pytest

from pytest_provenai import gates as gates_mod
from pytest_provenai.errors import ProvenaiError
from pytest_provenai.selection import case_param, function_of
from pytest_provenai.sharding import ShardSpec, case_key, shard_of

__all__ = ["Plan", "plan_collection", "shard_items"]


@dataclass
class Plan:
    """What the run must produce: the gates, and the case items of gated tests
    (``nodeid -> (test, case id)``), plus the fixture sets that failed to load."""

    gates: dict[tuple[str, str, str], gates_mod.GateSpec] = field(default_factory=dict)
    expected: dict[str, tuple[str, str]] = field(default_factory=dict)
    fixture_errors: list[str] = field(default_factory=list)
    cases: set[str] = field(default_factory=set)  # every selected case item (progress total)
    keys: dict[str, str] = field(default_factory=dict)  # case name -> case key (set/id)
    whole: Plan | None = None  # under --provenai-shard: the plan before the shard's deselection

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
            "keys": self.keys,
            **({"whole": self.whole.as_dict()} if self.whole is not None else {}),
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
        self.keys.update({str(k): str(v) for k, v in data.get("keys", {}).items()})
        if "whole" in data:
            if self.whole is None:
                self.whole = Plan()
            self.whole.merge(data["whole"])

    def update(self, other: Plan) -> None:
        """Merge another plan (a worker's, already read: see :meth:`merge`)."""
        self.add_gates(other.gates.values())
        self.expected.update(other.expected)
        self.add_errors(other.fixture_errors)
        self.cases.update(other.cases)
        self.keys.update(other.keys)
        if other.whole is not None:
            if self.whole is None:
                self.whole = Plan()
            self.whole.update(other.whole)

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
            if param.case is not None:
                plan.keys[param.id] = case_key(param.case.fixture_set, param.case.id)
        specs = _gate_specs(item)
        if specs:
            plan.plan_item(
                item.nodeid,
                function_of(item.nodeid),
                param.id if param is not None else None,
                specs,
            )


def item_shard(item: pytest.Item, count: int) -> int:
    """The shard of ``item``: its case's (every suite of a case in one shard); an item
    without a case (a plain test, a fixture set's error entry) by its node id."""
    param = case_param(item)
    if param is not None and param.case is not None:
        return shard_of(case_key(param.case.fixture_set, param.case.id), count)
    return shard_of(item.nodeid, count)


def shard_items(
    config: pytest.Config, items: list[pytest.Item], plan: Plan, spec: ShardSpec | None
) -> None:
    """Keep only shard ``spec``'s items (called after every other
    ``pytest_collection_modifyitems``, so after ``-k``/``--deselect``), deselecting the
    others the way ``-k`` does; ``plan.whole`` becomes the plan of every item before
    (module docstring)."""
    if spec is None:
        return
    whole = Plan()
    plan_collection(whole, items)
    plan.whole = whole
    keep: list[pytest.Item] = []
    drop: list[pytest.Item] = []
    for item in items:
        (keep if item_shard(item, spec.count) == spec.index else drop).append(item)
    if drop:
        config.hook.pytest_deselected(items=drop)
        items[:] = keep

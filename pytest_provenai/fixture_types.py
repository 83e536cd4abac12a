"""The types of the callables the plugin's fixtures hand a test (``provenai_record``,
``provenai_influence``, ``provenai_attribution``/``provenai_mcp``), so a suite can annotate
them without importing the plugin.

Pure Python, no pytest import.
"""

from __future__ import annotations

from typing import Any, Protocol

from pytest_provenai.frozen.model import AnyCase
from pytest_provenai.subject.trace import Trace

__all__ = ["AttributionFn", "InfluenceFn", "RecordFn"]


class RecordFn(Protocol):
    """``record(rec, trace=None) -> rec``: what ``provenai_record`` gives a test. The trace,
    when given, is shown in the HTML report beside the record (raw output, resource titles);
    it never enters the record or its snapshot."""

    def __call__(self, rec: dict[str, Any], trace: Trace | None = None) -> dict[str, Any]: ...


class InfluenceFn(Protocol):
    """``influence(case, trace) -> dict``: what ``provenai_influence`` gives a test, the
    record's influence layer measured by leave-one-resource-out ablation."""

    def __call__(self, case: Any, trace: Any) -> dict[str, Any]: ...


class AttributionFn(Protocol):
    """``attribution(case) -> record``: what ``provenai_attribution`` and ``provenai_mcp``
    give a test, the case's answers verified, repaired and recorded."""

    def __call__(self, case: AnyCase) -> dict[str, Any]: ...

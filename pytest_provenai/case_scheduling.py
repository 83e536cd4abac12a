"""``--dist loadgroup`` that keeps each case's tests on one worker.

xdist groups tests by the ``@group`` suffix its worker adds to each node id from the
``xdist_group`` marks (:func:`pytest_provenai.selection.group_by_case` puts them there). On
pytest >= 9.2 that suffix never reaches the controller (pytest-xdist#1386: xdist 3.8 sets a
private field pytest no longer reads), so every test became its own group. This scheduler,
handed to xdist through its public ``pytest_xdist_make_scheduler`` hook, also reads the case
from the test id: a node id ending in ``[<case id>]`` of a selected case joins that case's
group. Ids that combine the case with other parameters (``[case-0-x]``) are not grouped.
Imported only when xdist runs a loadgroup session."""

from __future__ import annotations

from collections.abc import Collection

import pytest
from xdist.scheduler import LoadGroupScheduling

GROUP_PREFIX = "provenai-case:"


def case_of(nodeid: str, case_ids: Collection[str]) -> str | None:
    """The case a node id runs, when its whole parameter id is a selected case's id."""
    if not nodeid.endswith("]") or "[" not in nodeid:
        return None
    param = nodeid[nodeid.rindex("[") + 1 : -1]
    return param if param in case_ids else None


class CaseGroupScheduling(LoadGroupScheduling):  # type: ignore[misc]  # xdist is untyped
    """xdist's loadgroup, with a case's tests grouped even when the ``@group`` is missing."""

    def __init__(self, config: pytest.Config, log: object, case_ids: Collection[str]) -> None:
        super().__init__(config, log)
        self.case_ids = frozenset(case_ids)

    def _split_scope(self, nodeid: str) -> str:
        if nodeid.rfind("@") > nodeid.rfind("]"):  # xdist's own group suffix arrived
            return str(super()._split_scope(nodeid))
        case = case_of(nodeid, self.case_ids)
        return GROUP_PREFIX + case if case is not None else str(super()._split_scope(nodeid))

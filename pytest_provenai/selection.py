"""Case selection: which cases a run's tests are parametrised over.

* :func:`load_configured_sets` loads the run's fixture sets (``--provenai-fixtures``) and the
  ini's others, each folder once; a set that fails to load stays as its error.
* :func:`case_names` gives each case its name (test id and golden file name) over all
  configured sets, never depending on the sample.
* :class:`CaseSelection` (one per process) samples each fixture kind on its own
  (``--provenai-sample``) and hands each test the :class:`CaseParam` list of its kinds
  (``@pytest.mark.provenai_kind``) and sets (``@pytest.mark.provenai_sets``); a set that
  failed to load becomes one ``fixture-error:<set>`` entry that errors at setup.
* :func:`parametrize` and :func:`group_by_case` are what the plugin's collection hooks call.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import pytest

from pytest_provenai.errors import FixtureError
from pytest_provenai.frozen.model import KINDS, AnyCase, Case
from pytest_provenai.options import Settings, sample_indices

__all__ = [
    "DEFAULT_KINDS",
    "KIND_MARKER",
    "SETS_MARKER",
    "CaseParam",
    "CaseSelection",
    "ConfiguredSet",
    "case_names",
    "case_param",
    "function_of",
    "group_by_case",
    "load_configured_sets",
    "parametrize",
]

KIND_MARKER = "provenai_kind"
SETS_MARKER = "provenai_sets"
DEFAULT_KINDS = ("hotpotqa",)
MARKER_LINES = (
    f"{KIND_MARKER}(*kinds): take provenai_case only from cases of these fixture kinds "
    f"({', '.join(KINDS)}; default {DEFAULT_KINDS[0]})",
    f"{SETS_MARKER}(*names): take provenai_case only from these fixture sets (folder "
    "names), e.g. to gate each labelled set separately",
)


def function_of(nodeid: str) -> str:
    """The test function of a node id (the id before its parameters)."""
    return nodeid.split("[", 1)[0]


@dataclass
class CaseParam:
    """What a parametrised test receives: a case, or the error that kept its set from
    loading (the ``provenai_case`` fixture raises it at setup, so the other sets still run)."""

    id: str
    case: AnyCase | None = None
    error: FixtureError | None = None
    kind: str | None = None  # the case's kind; for an error, its set's declared kind or None


@dataclass
class ConfiguredSet:
    """A fixture set the run uses (``in_run``) or only the ini names: its cases, or the error
    that kept it from loading."""

    folder: Path
    in_run: bool
    cases: tuple[AnyCase, ...] = ()
    error: FixtureError | None = None


def load_configured_sets(run: Sequence[Path], ini: Sequence[Path]) -> list[ConfiguredSet]:
    """Load the run's sets, then the ini's others, each folder once. One bad set does not stop
    the others; two sets of one name that hold one case id would give both cases one name,
    so the later of them fails as if it had not loaded."""
    from pytest_provenai.frozen.load import load_fixture_set

    sets: list[ConfiguredSet] = []
    seen: set[Path] = set()
    for folder, in_run in [*((f, True) for f in run), *((f, False) for f in ini)]:
        if folder.resolve() in seen:
            continue
        seen.add(folder.resolve())
        try:
            sets.append(ConfiguredSet(folder, in_run, load_fixture_set(folder).cases))
        except FixtureError as err:
            sets.append(ConfiguredSet(folder, in_run, error=err))
    owner: dict[tuple[str, str], Path] = {}
    for s in sets:
        keys = {(c.fixture_set.casefold(), c.id.casefold()): c for c in s.cases}
        clash = next((k for k in keys if k in owner), None)
        if clash is not None:
            case = keys[clash]
            s.error = FixtureError(
                str(s.folder),
                "",
                f"a set name that no other configured set holding case {case.id!r} has",
                f"{case.fixture_set!r}, also the name of {owner[clash]}: the two cases would "
                "share one test id and golden file; rename one of the set folders",
            )
            s.cases = ()
            continue
        owner.update(dict.fromkeys(keys, s.folder))
    return sets


def case_names(sets: Sequence[ConfiguredSet]) -> dict[tuple[str, str], str]:
    """(set name, case id) -> the case's name, which is its test id and golden file name: its
    id, or ``<set>/<id>`` where configured sets share the id (compared ignoring case, as a
    golden folder may live on a case-insensitive file system). It depends on the configured
    sets only, never on which cases a run samples or selects."""
    cases = [c for s in sets for c in s.cases]
    count = Counter(c.id.casefold() for c in cases)
    return {
        (c.fixture_set, c.id): c.id if count[c.id.casefold()] == 1 else f"{c.fixture_set}/{c.id}"
        for c in cases
    }


class CaseSelection:
    """The configured sets and the selected cases of one process (loaded once, lazily).
    ``ini_sets``: sets the ini names beside the run's (a run given fewer
    ``--provenai-fixtures``), loaded only so their cases keep their names and golden files
    (README, "Golden snapshots")."""

    def __init__(self, settings: Settings, ini_sets: tuple[Path, ...] = ()) -> None:
        self.settings = settings
        self.ini_sets = ini_sets
        self._sets: list[ConfiguredSet] | None = None
        self._params: list[CaseParam] | None = None
        self.fixture_errors: list[str] = []  # the run's sets that failed to load, in order

    def configured_sets(self) -> list[ConfiguredSet]:
        """The run's fixture sets, then the ini's others (loaded once, lazily)."""
        if self._sets is None:
            self._sets = load_configured_sets(self.settings.fixtures, self.ini_sets)
        return self._sets

    def case_params(self) -> list[CaseParam]:
        """Selected cases of all the run's fixture sets, then an error entry per failed set.

        ``--provenai-sample`` samples each fixture kind on its own, so adding sets of another
        kind never changes which cases of a kind are chosen."""
        if self._params is None:
            from pytest_provenai.frozen.load import manifest_kind

            sets = [s for s in self.configured_sets() if s.in_run]
            cases: list[AnyCase] = [c for s in sets for c in s.cases]
            of_kind: dict[str, list[int]] = defaultdict(list)
            for index, case in enumerate(cases):
                of_kind[case.kind].append(index)
            keep = sorted(
                indices[j]
                for indices in of_kind.values()
                for j in sample_indices(len(indices), self.settings.sample, self.settings.seed)
            )
            names = case_names(self.configured_sets())
            params = [
                CaseParam(id=names[c.fixture_set, c.id], case=c, kind=c.kind)
                for c in (cases[i] for i in keep)
            ]
            for s in sets:
                if s.error is not None:
                    self.fixture_errors.append(str(s.error))
                    params.append(
                        CaseParam(
                            id=f"fixture-error:{s.folder.name}",
                            error=s.error,
                            kind=manifest_kind(s.folder),
                        )
                    )
            self._params = params
        return self._params

    def params_for(self, kinds: tuple[str, ...]) -> list[CaseParam]:
        """The params of a test that takes cases of ``kinds``: those cases, plus the error
        entry of every set of those kinds that failed to load (and of every failed set whose
        kind could not be read, so no error goes unseen)."""
        return [
            p
            for p in self.case_params()
            if p.kind in kinds or (p.error is not None and p.kind is None)
        ]

    def golden_scope(self) -> tuple[frozenset[str], tuple[str, ...]]:
        """What golden bookkeeping needs: the name of every case of every configured set, and
        the sets that failed to load (while one has, no golden file can be called unused)."""
        sets = self.configured_sets()
        names = frozenset(case_names(sets).values())
        return names, tuple(s.folder.name for s in sets if s.error is not None)

    def set_digests(self) -> dict[str, str]:
        """Each loaded set of the run: its name -> the sha256 of its manifest (which pins
        every case file), what a shard's fingerprint compares."""
        from pytest_provenai._io import sha256_file

        return {
            s.cases[0].fixture_set: sha256_file(s.folder / "manifest.json")
            for s in self.configured_sets()
            if s.in_run and s.cases
        }

    def hotpot_cases(self) -> list[Case]:
        """Every HotpotQA case of the run's sets, sampled or not (what the MCP tools serve)."""
        sets = [s for s in self.configured_sets() if s.in_run]
        return [c for s in sets for c in s.cases if isinstance(c, Case)]


# -- the collection hooks' parts ---------------------------------------------------------------
def _kinds(definition: pytest.Function) -> tuple[str, ...]:
    """The fixture kinds a test takes cases from: its closest ``provenai_kind`` marker."""
    mark = definition.get_closest_marker(KIND_MARKER)
    if mark is None:
        return DEFAULT_KINDS
    where = f"{function_of(definition.nodeid)}: @pytest.mark.{KIND_MARKER}"
    choices = ", ".join(KINDS)
    if mark.kwargs or not mark.args:
        raise pytest.UsageError(
            f"{where} takes one or more fixture kinds as positional names ({choices}), "
            f"got {mark.args!r} {mark.kwargs!r}"
        )
    for kind in mark.args:
        if not isinstance(kind, str) or kind not in KINDS:
            raise pytest.UsageError(f"{where}: unknown fixture kind {kind!r}; expected {choices}")
    return tuple(dict.fromkeys(mark.args))


def _sets(definition: pytest.Function) -> tuple[str, ...] | None:
    """The fixture sets a test takes cases from (its ``provenai_sets`` marker), or None for
    every configured set."""
    mark = definition.get_closest_marker(SETS_MARKER)
    if mark is None:
        return None
    where = f"{function_of(definition.nodeid)}: @pytest.mark.{SETS_MARKER}"
    if mark.kwargs or not mark.args or not all(isinstance(a, str) for a in mark.args):
        raise pytest.UsageError(
            f"{where} takes one or more fixture set names (folder names) as positional "
            f"strings, got {mark.args!r} {mark.kwargs!r}"
        )
    return tuple(mark.args)


def parametrize(
    metafunc: pytest.Metafunc,
    params_for: Callable[[tuple[str, ...]], list[CaseParam]],
    *,
    configured: bool,
) -> None:
    """Parametrise a test that requests ``provenai_case`` over the cases of its kinds and
    sets (``params_for(kinds)``); a usage error when no fixture set is ``configured``."""
    if not configured:
        raise pytest.UsageError(
            f"{metafunc.definition.nodeid} requests provenai_case but no fixture set is "
            "configured: pass --provenai-fixtures DIR or set provenai_fixtures in your ini"
        )
    params = params_for(_kinds(metafunc.definition))
    sets = _sets(metafunc.definition)
    if sets is not None:
        params = [
            p
            for p in params
            if (p.case is not None and p.case.fixture_set in sets)
            or (p.case is None and p.id.removeprefix("fixture-error:") in sets)
        ]
    metafunc.parametrize("provenai_case", params, ids=[p.id for p in params], indirect=True)


def case_param(item: pytest.Item) -> CaseParam | None:
    """The case a collected item runs, or None for an item that takes no ``provenai_case``."""
    callspec = getattr(item, "callspec", None)
    param = callspec.params.get("provenai_case") if callspec is not None else None
    return param if isinstance(param, CaseParam) else None


def group_by_case(config: pytest.Config, items: list[pytest.Item]) -> None:
    """With ``--dist loadgroup`` all of a case's tests run on one worker, one after another
    (they share its cached generations; the first one generates, the others read). xdist's
    worker turns the ``xdist_group`` marks into the scheduling groups in its own
    ``pytest_collection_modifyitems``, so the marks must be on the items before it runs. On
    pytest >= 9.2 xdist 3.8 loses them on the way to the controller (pytest-xdist#1386);
    :func:`case_scheduler` groups by the case id in the test id instead."""
    if not config.pluginmanager.hasplugin("xdist"):
        return
    for item in items:
        param = case_param(item)
        if param is not None:
            item.add_marker(pytest.mark.xdist_group(name=param.id))


def case_scheduler(config: pytest.Config, log: object, cases: CaseSelection) -> object | None:
    """xdist's scheduler for ``--dist loadgroup`` that groups a case's tests even where xdist
    loses the group marks (:mod:`pytest_provenai.case_scheduling`); None for other modes."""
    if config.getvalue("dist") != "loadgroup":
        return None
    from pytest_provenai.case_scheduling import CaseGroupScheduling

    ids = [p.id for p in cases.case_params() if p.case is not None]
    return CaseGroupScheduling(config, log, ids)

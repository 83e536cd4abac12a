"""pytest hooks and fixtures. Thin: each hook delegates to session.py or a domain module.

Fixtures a test can request:

* ``provenai_case`` — the case; a test that requests it is parametrised over the selected
  cases of ``--provenai-fixtures``, with the case id as the test id. Only cases of the
  fixture kinds named by ``@pytest.mark.provenai_kind(...)`` (default: ``hotpotqa``).
* ``provenai_subject`` — the system under audit (one per process / xdist worker).
* ``provenai_record`` — ``record(dict) -> dict``: hands a verdict record to gates and results.
* ``provenai_snapshot`` — syrupy's ``snapshot`` writing JSON under ``golden/<model>/``.
* ``provenai_influence`` — ``influence(case, trace) -> dict``: the influence layer
  (leave-one-resource-out ablation, ``--provenai-ablation``).
"""

from __future__ import annotations

import json
import os
import signal
import threading
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from pytest_provenai import gates as gates_mod
from pytest_provenai import options as opt
from pytest_provenai._io import sweep_stale_temps
from pytest_provenai.errors import CaseTimeout, FixtureSetError, GoldenError, ProvenaiError
from pytest_provenai.frozen.model import KINDS, AnyCase
from pytest_provenai.report.results import RunResults
from pytest_provenai.session import CaseParam, ProvenaiSession
from pytest_provenai.subject.subject import Subject

SESSION_KEY = pytest.StashKey[ProvenaiSession]()
RESULTS_KEY = pytest.StashKey[RunResults]()
REPORT_SINK = "provenai-report-sink"
GOLDEN_KEY = pytest.StashKey["GoldenBook"]()
GOLDEN_BOOK = "provenai-golden"
GOLDEN_WORKEROUTPUT_KEY = "provenai_golden"
WORKEROUTPUT_KEY = "provenai"
KIND_MARKER = "provenai_kind"
DEFAULT_KINDS = ("hotpotqa",)


def _session(config: pytest.Config) -> ProvenaiSession:
    return config.stash[SESSION_KEY]


def _test_id(nodeid: str) -> str:
    return nodeid.split("[", 1)[0]


def _is_worker(config: pytest.Config) -> bool:
    return hasattr(config, "workerinput")


# -- options and configuration ---------------------------------------------------------------
def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("provenai", "provenance audits of retrieval-grounded QA")
    for name, kind, help_text in opt.OPTIONS:
        if kind == "bool":
            group.addoption(
                opt.flag(name), action="store_true", default=None, dest=name, help=help_text
            )
            parser.addini(name, help_text, type="bool", default=False)
        elif kind == "paths":
            group.addoption(
                opt.flag(name),
                action="extend",  # repeats add up: -X a -X b c == -X a b c
                nargs="+",
                default=None,
                dest=name,
                metavar="DIR",
                help=help_text,
            )
            parser.addini(name, help_text, type="paths", default=[])
        else:
            group.addoption(opt.flag(name), default=None, dest=name, help=help_text)
            parser.addini(name, help_text, type="string", default="")


def pytest_configure(config: pytest.Config) -> None:
    for marker, text in gates_mod.MARKERS.items():
        config.addinivalue_line("markers", f"{marker}(**gates): {text}")
    config.addinivalue_line(
        "markers",
        f"{KIND_MARKER}(*kinds): take provenai_case only from cases of these fixture kinds "
        f"({', '.join(KINDS)}; default {DEFAULT_KINDS[0]})",
    )

    def get(name: str) -> Any:
        value = config.getoption(name)
        return value if value is not None else config.getini(name)

    try:
        settings = opt.parse_settings(get, config.rootpath)
        if (
            config.getoption(opt.PIPELINE)
            or config.getoption(opt.BACKEND)
            or config.getoption(opt.MODEL)
        ):
            from pytest_provenai.subject.subject import preflight

            preflight(backend=settings.backend, model=settings.model, pipeline=settings.pipeline)
        if settings.retrieval == "index" and settings.index is not None:
            from pytest_provenai.retrieval.index import check_index_folder

            try:  # cheap (no hashing); digests and the embedding model are checked at load
                check_index_folder(settings.index, digests=False)
            except ProvenaiError as exc:
                raise ProvenaiError(f"{opt.flag(opt.INDEX)}: {exc}") from None
    except ProvenaiError as exc:
        raise pytest.UsageError(str(exc)) from None
    worker_id = getattr(config, "workerinput", {}).get("workerid")
    if worker_id is None and settings.cache is not None:
        sweep_stale_temps(settings.cache)  # left by a process killed mid-write
    state = ProvenaiSession(
        settings=settings,
        worker_id=worker_id,
        rootdir=config.rootpath,
        ini_sets=tuple(config.getini(opt.FIXTURES)),
    )
    config.stash[SESSION_KEY] = state
    if worker_id is None:
        config.pluginmanager.register(_ReportSink(state), name=REPORT_SINK)
    config.stash[GOLDEN_KEY] = GoldenBook(config)
    config.pluginmanager.register(config.stash[GOLDEN_KEY], name=GOLDEN_BOOK)


def pytest_unconfigure(config: pytest.Config) -> None:
    for name in (REPORT_SINK, GOLDEN_BOOK):
        plugin = config.pluginmanager.get_plugin(name)
        if plugin is not None:
            config.pluginmanager.unregister(plugin)


# -- parametrisation and collection ----------------------------------------------------------
def _case_kinds(metafunc: pytest.Metafunc) -> tuple[str, ...]:
    """The fixture kinds a test takes cases from: its closest ``provenai_kind`` marker."""
    mark = metafunc.definition.get_closest_marker(KIND_MARKER)
    if mark is None:
        return DEFAULT_KINDS
    where = f"{_test_id(metafunc.definition.nodeid)}: @pytest.mark.{KIND_MARKER}"
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


def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "provenai_case" not in metafunc.fixturenames:
        return
    session = _session(metafunc.config)
    if not session.settings.fixtures:
        raise pytest.UsageError(
            f"{metafunc.definition.nodeid} requests provenai_case but no fixture set is "
            "configured: pass --provenai-fixtures DIR or set provenai_fixtures in your ini"
        )
    params = session.params_for(_case_kinds(metafunc))
    metafunc.parametrize("provenai_case", params, ids=[p.id for p in params], indirect=True)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not config.pluginmanager.hasplugin("xdist"):
        return
    for item in items:  # with --dist loadgroup all of a case's tests share a worker
        case_param = _case_param(item)
        if case_param is not None:
            item.add_marker(pytest.mark.xdist_group(name=case_param.id))


def _case_param(item: pytest.Item) -> CaseParam | None:
    callspec = getattr(item, "callspec", None)
    param = callspec.params.get("provenai_case") if callspec is not None else None
    return param if isinstance(param, CaseParam) else None


def pytest_collection_finish(session: pytest.Session) -> None:
    """The plan: every gate of a selected item, and every selected case item of a gated
    test (after -k/--deselect), so a gate knows its whole population before a case runs. A
    gated test whose parametrisation came out empty still registers its gates: they fail
    closed on no records."""
    state = _session(session.config)
    for item in session.items:
        specs: list[gates_mod.GateSpec] = []
        for marker in gates_mod.MARKERS:
            for mark in item.iter_markers(name=marker):
                if mark.args:
                    raise pytest.UsageError(
                        f"{_test_id(item.nodeid)}: @pytest.mark.{marker} takes gate bounds as "
                        f"keywords only, got positional {mark.args!r}"
                    )
                try:
                    specs += gates_mod.parse_marker(_test_id(item.nodeid), marker, mark.kwargs)
                except ProvenaiError as exc:
                    raise pytest.UsageError(str(exc)) from None
        if specs:
            case_param = _case_param(item)
            state.plan_item(
                item.nodeid,
                _test_id(item.nodeid),
                case_param.id if case_param is not None else None,
                specs,
            )


# -- fixtures --------------------------------------------------------------------------------
@pytest.fixture
def provenai_case(request: pytest.FixtureRequest) -> AnyCase:
    param: CaseParam = request.param
    if param.error is not None:
        raise FixtureSetError(f"fixture set failed to load: {param.error}")
    assert param.case is not None
    return param.case


@pytest.fixture(scope="session")
def provenai_subject(pytestconfig: pytest.Config) -> Subject:
    session = _session(pytestconfig)
    try:
        return session.subject()
    except ProvenaiError as exc:
        pytest.exit(f"provenai: {exc}", returncode=pytest.ExitCode.USAGE_ERROR)


@pytest.fixture
def provenai_record(request: pytest.FixtureRequest) -> Callable[[dict[str, Any]], dict[str, Any]]:
    session = _session(request.config)
    nodeid = request.node.nodeid

    def record(rec: dict[str, Any]) -> dict[str, Any]:
        return session.add_record(nodeid, _test_id(nodeid), rec)

    return record


@pytest.fixture
def provenai_influence(
    request: pytest.FixtureRequest, provenai_subject: Subject
) -> Callable[[Any, Any], dict[str, Any]]:
    """``influence(case, trace) -> dict``: the record's influence layer, measured by
    leave-one-resource-out ablation as ``--provenai-ablation`` says (exact, naive or off)."""
    session = _session(request.config)
    nodeid = request.node.nodeid

    def influence(case: Any, trace: Any) -> dict[str, Any]:
        return session.influence(nodeid, case, trace)

    return influence


@pytest.fixture
def provenai_snapshot(snapshot: Any, provenai_subject: Subject, pytestconfig: pytest.Config) -> Any:
    from pytest_provenai.snapshot import extension_for

    settings = _session(pytestconfig).settings
    variant = f"index-k{settings.k}" if settings.retrieval == "index" else None
    extension = extension_for(settings.golden, provenai_subject.identity.name, variant)
    assertion = snapshot.use_extension(extension)
    location = assertion.test_location
    pytestconfig.stash[GOLDEN_KEY].use(
        Path(extension.dirname(test_location=location)), location.snapshot_name.split("[")[0]
    )
    return assertion


# -- golden snapshots ------------------------------------------------------------------------
class GoldenBook:
    """Golden bookkeeping (README, "Golden snapshots"), a plugin of its own like syrupy's
    DeferXDist. The ``provenai_snapshot`` fixture tells it each golden folder and test
    function a run uses (refusing a folder that holds a symlink); at the end the controller
    reports the golden files of those tests whose case is in no configured fixture set (exit
    status 1) or, under ``--snapshot-update``, deletes them. syrupy's own unused-snapshot
    discovery never sees golden files (``VerdictExtension.discover_snapshots``)."""

    def __init__(self, config: pytest.Config) -> None:
        self.config = config
        self.functions: dict[str, set[str]] = defaultdict(set)  # golden folder -> tests
        self.refused: dict[str, str | None] = {}  # golden folder -> symlink error, checked once
        self.lines: list[str] = []

    def use(self, folder: Path, function: str) -> None:
        from pytest_provenai.snapshot import check_golden_folder

        key = str(folder)
        if key not in self.refused:
            try:
                check_golden_folder(_session(self.config).settings.golden, folder)
                self.refused[key] = None
            except GoldenError as exc:
                self.refused[key] = str(exc)
        if self.refused[key] is not None:
            raise GoldenError(self.refused[key])
        self.functions[key].add(function)

    @pytest.hookimpl(optionalhook=True)
    def pytest_testnodedown(self, node: Any, error: Any) -> None:
        payload = getattr(node, "workeroutput", {}).get(GOLDEN_WORKEROUTPUT_KEY)
        for folder, functions in json.loads(payload or "{}").items():
            self.functions[folder].update(functions)

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        config = self.config
        if _is_worker(config):
            payload = {folder: sorted(fns) for folder, fns in self.functions.items()}
            config.workeroutput[GOLDEN_WORKEROUTPUT_KEY] = json.dumps(payload)  # type: ignore[attr-defined]
            return
        if not self.functions or config.getoption("disable_unused_snapshots", False):
            return
        from pytest_provenai.snapshot import settle_unused

        known, failed = _session(config).golden_scope()
        self.lines, fail = settle_unused(
            self.functions,
            known,
            failed,
            update=bool(config.getoption("update_snapshots", False)),
            cleanup=not config.getoption("no_cleanup", False),
            warn=bool(config.getoption("warn_unused_snapshots", False)),
            shown=lambda p: os.path.relpath(p, config.rootpath),
        )
        if fail and session.exitstatus == pytest.ExitCode.OK:
            session.exitstatus = pytest.ExitCode.TESTS_FAILED

    @pytest.hookimpl(trylast=True)  # after syrupy's snapshot report
    def pytest_terminal_summary(self, terminalreporter: Any) -> None:
        if self.lines:
            terminalreporter.write_sep("-", "provenai golden snapshots")
            for line in self.lines:
                terminalreporter.write_line(line)


# -- the per-case time limit (--provenai-timeout) --------------------------------------------
@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Any:
    """Under ``--provenai-timeout S`` a case's test is interrupted after S seconds (SIGALRM, on
    POSIX in the main thread, like pytest-timeout's signal method) and fails with one line
    naming the case and the limit; a hung pipeline or model call cannot hold the run."""
    limit = _session(item.config).settings.timeout if SESSION_KEY in item.config.stash else None
    case = _case_param(item)
    usable = (
        limit is not None
        and case is not None
        and hasattr(signal, "SIGALRM")
        and threading.current_thread() is threading.main_thread()
    )
    if not usable:
        yield
        return
    assert limit is not None and case is not None

    def expire(signum: int, frame: Any) -> None:
        raise CaseTimeout(
            f"case {case.id!r} ran past {opt.flag(opt.TIMEOUT)}={limit:g} seconds and was "
            "stopped; raise the limit or look at what hung"
        )

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, limit)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


# -- run bookkeeping: records travel with their test's reports ----------------------------
@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    outcome = yield
    report: pytest.TestReport = outcome.get_result()
    if SESSION_KEY in item.config.stash:
        payload = _session(item.config).report_payload(item.nodeid)
        if payload:
            report.provenai = payload  # type: ignore[attr-defined]


class _ReportSink:
    """Absorbs what each test produced from its reports — on the xdist controller (from any
    worker, as each phase ends) or in the only process; workers only send. A plugin object
    because ``pytest_runtest_logreport`` is not given the config."""

    def __init__(self, state: ProvenaiSession) -> None:
        self.state = state

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.state.absorb_report(
            report.nodeid,
            failed=report.failed,
            skipped=report.skipped,
            duration=float(getattr(report, "duration", 0.0) or 0.0),
            payload=getattr(report, "provenai", None),
        )


# -- end of session: gates, results, summary -------------------------------------------------
@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: Any) -> None:
    payload = getattr(node, "workeroutput", {}).get(WORKEROUTPUT_KEY)
    if payload:
        _session(node.config).merge(payload)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    config = session.config
    if SESSION_KEY not in config.stash:
        return
    state = _session(config)
    if _is_worker(config):
        config.workeroutput[WORKEROUTPUT_KEY] = state.worker_payload()  # type: ignore[attr-defined]
        return
    if config.option.collectonly:  # nothing ran: nothing to judge or write
        return
    results = state.finish()
    config.stash[RESULTS_KEY] = results
    state.write_results(results)
    if results.failed_gates and session.exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    if _is_worker(config) or RESULTS_KEY not in config.stash:
        return
    from pytest_provenai.report.summary import summary_lines

    state = _session(config)
    results = config.stash[RESULTS_KEY]
    written = state.settings.results if state.audited() else None
    lines = summary_lines(results, results_path=written)
    if not lines:
        return
    terminalreporter.section("provenai")
    for line in lines:
        terminalreporter.write_line(line)

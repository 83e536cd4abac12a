"""pytest hooks and fixtures. Thin: each hook delegates in a line or three, as syrupy's do.

Where each job lives: options and markers ``configure.py``; the run state
``session.py`` (in ``config.stash``); case selection ``selection.py``; the plan ``plan.py``;
records riding on reports ``transport.py``; influence and attribution ``layers.py``; the
progress line ``progress.py``; the per-case time limit ``timeout.py``; golden bookkeeping
``snapshot.py``; the end of the run ``finish.py``.

Fixtures a test can request:

* ``provenai_case`` — the case; a test that requests it is parametrised over the selected
  cases of ``--provenai-fixtures``, with the case id as the test id. Only cases of the
  fixture kinds named by ``@pytest.mark.provenai_kind(...)`` (default: ``hotpotqa``).
* ``provenai_subject`` — the system under audit (one per process / xdist worker).
* ``provenai_record`` — ``record(dict) -> dict``: hands a verdict record to gates and results.
* ``provenai_snapshot`` — syrupy's ``snapshot`` writing JSON under ``golden/<model>/``.
* ``provenai_influence`` — ``influence(case, trace) -> dict``: the influence layer
  (leave-one-resource-out ablation, ``--provenai-ablation``).
* ``provenai_attribution`` / ``provenai_mcp`` / ``provenai_attribution_snapshot`` — the
  attribution layer: frozen tool traces and probes, live MCP sessions, and snapshots of
  verifier-only records.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from pytest_provenai import configure, progress, selection
from pytest_provenai.errors import FixtureSetError, ProvenaiError
from pytest_provenai.finish import EmptyShard, finish_run, write_summary
from pytest_provenai.fixture_types import InfluenceFn, RecordFn
from pytest_provenai.frozen.model import AnyCase
from pytest_provenai.plan import plan_collection, shard_items
from pytest_provenai.report.results import RunResults
from pytest_provenai.selection import CaseParam, case_param, function_of
from pytest_provenai.session import ProvenaiSession
from pytest_provenai.snapshot import GoldenBook
from pytest_provenai.subject.subject import Subject
from pytest_provenai.subject.trace import Trace
from pytest_provenai.timeout import case_time_limit
from pytest_provenai.transport import WORKEROUTPUT_KEY, ReportSink, ship

SESSION_KEY = pytest.StashKey[ProvenaiSession]()
RESULTS_KEY = pytest.StashKey[RunResults]()
GOLDEN_KEY = pytest.StashKey[GoldenBook]()
REPORT_SINK = "provenai-report-sink"
GOLDEN_BOOK = "provenai-golden"
EMPTY_SHARD = "provenai-empty-shard"


def _session(config: pytest.Config) -> ProvenaiSession:
    return config.stash[SESSION_KEY]


def _live(config: pytest.Config) -> progress.LiveStatus | None:
    state = config.stash.get(SESSION_KEY, None)
    return state.live if state is not None else None


def _register(config: pytest.Config, state: ProvenaiSession) -> None:
    """The plugin objects: the report sink (controller or only process; with a shard's
    exit status), and the golden book (every process)."""
    if state.worker_id is None:
        config.pluginmanager.register(ReportSink(state.absorb_report), name=REPORT_SINK)
        if state.settings.shard is not None and not config.option.collectonly:
            config.pluginmanager.register(EmptyShard(), name=EMPTY_SHARD)
    book = GoldenBook(config, state.settings.golden, state.golden_scope, state.settings.tolerances)
    config.stash[GOLDEN_KEY] = book
    config.pluginmanager.register(book, name=GOLDEN_BOOK)


# -- configuration and session start ---------------------------------------------------------
def pytest_addoption(parser: pytest.Parser) -> None:
    configure.add_options(parser)


def pytest_configure(config: pytest.Config) -> None:
    configure.add_markers(config)
    config.stash[SESSION_KEY] = state = configure.new_session(config)
    _register(config, state)


@pytest.hookimpl(tryfirst=True)  # before xdist starts its workers (they get the channel)
def pytest_sessionstart(session: pytest.Session) -> None:
    if (state := session.config.stash.get(SESSION_KEY, None)) is not None:
        state.live = progress.start_progress(session.config, state, lambda: state.plan.cases)


@pytest.hookimpl(optionalhook=True, tryfirst=True)
def pytest_xdist_make_scheduler(config: pytest.Config, log: Any) -> Any:
    return selection.case_scheduler(config, log, _session(config).cases)  # None: xdist's


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    progress.configure_node(node)  # xdist: where each worker writes what it runs


def pytest_unconfigure(config: pytest.Config) -> None:
    for name in (REPORT_SINK, GOLDEN_BOOK, EMPTY_SHARD):
        config.pluginmanager.unregister(name=name)
    progress.close_progress(config, _live(config))


# -- parametrisation and collection ----------------------------------------------------------
def pytest_generate_tests(metafunc: pytest.Metafunc) -> None:
    if "provenai_case" in metafunc.fixturenames:
        state = _session(metafunc.config)
        selection.parametrize(metafunc, state.params_for, configured=bool(state.settings.fixtures))


@pytest.hookimpl(hookwrapper=True)  # around every other impl: before xdist's, after -k's
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> Any:
    selection.group_by_case(config, items)  # --dist loadgroup: a case's tests on one worker
    yield  # xdist's worker reads the group marks; -k and --deselect deselect
    shard_items(config, items, _session(config).plan, _session(config).settings.shard)


def pytest_collection_finish(session: pytest.Session) -> None:
    plan_collection(_session(session.config).plan, session.items)


# -- running: progress status, time limit, records riding on the reports --------------------
@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Any:
    with progress.running(_live(item.config), item.nodeid):
        yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_call(item: pytest.Item) -> Any:
    state = item.config.stash.get(SESSION_KEY, None)
    with case_time_limit(case_param(item), state.settings.timeout if state else None):
        yield


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    outcome = yield
    if SESSION_KEY in item.config.stash:
        ship(outcome.get_result(), _session(item.config).report_payload(item.nodeid))


# -- end of session: gates, results, summary -------------------------------------------------
@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: Any) -> None:
    if payload := getattr(node, "workeroutput", {}).get(WORKEROUTPUT_KEY):
        _session(node.config).merge(payload)


@pytest.hookimpl(tryfirst=True)  # before junitxml writes its file and the terminal summary
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    state, book = session.config.stash.get(SESSION_KEY, None), session.config.stash[GOLDEN_KEY]
    if state is not None and (results := finish_run(session, state, book)) is not None:
        session.config.stash[RESULTS_KEY] = results


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    if (results := config.stash.get(RESULTS_KEY, None)) is not None:
        write_summary(terminalreporter, _session(config), results, configure.served(config))


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
def provenai_record(request: pytest.FixtureRequest) -> RecordFn:
    session = _session(request.config)
    nodeid = request.node.nodeid

    def record(rec: dict[str, Any], trace: Trace | None = None) -> dict[str, Any]:
        return session.add_record(nodeid, function_of(nodeid), rec, trace)

    return record


@pytest.fixture
def provenai_influence(request: pytest.FixtureRequest, provenai_subject: Subject) -> InfluenceFn:
    """``influence(case, trace) -> dict``: the record's influence layer, measured by
    leave-one-resource-out ablation as ``--provenai-ablation`` says (exact, naive or off)."""
    session = _session(request.config)
    nodeid = request.node.nodeid

    def influence(case: Any, trace: Any) -> dict[str, Any]:
        return session.influence(nodeid, case, trace)

    return influence


@pytest.fixture
def provenai_snapshot(snapshot: Any, provenai_subject: Subject, pytestconfig: pytest.Config) -> Any:
    settings = _session(pytestconfig).settings
    variant = f"index-k{settings.k}" if settings.retrieval == "index" else None
    return pytestconfig.stash[GOLDEN_KEY].snapshot(
        snapshot, provenai_subject.identity.name, variant
    )


# -- the attribution layer (claim-level source verification, MCP traces) --------------------
def _record_fixture(
    request: pytest.FixtureRequest, *, mcp: bool
) -> Callable[[Any], dict[str, Any]]:
    """``fn(case) -> record`` through the attribution runtime; the verifier (and
    for MCP sessions the subject) is built at setup, so a missing extra or a bad table is
    one line before any case runs."""
    runtime = _session(request.config).attribution()
    nodeid = request.node.nodeid
    try:
        if mcp:
            runtime.mcp_subject()
        runtime.auditor()
    except ProvenaiError as exc:
        pytest.exit(f"provenai: {exc}", returncode=pytest.ExitCode.USAGE_ERROR)
    build = runtime.mcp_record if mcp else runtime.record

    def record(case: Any) -> dict[str, Any]:
        rec: dict[str, Any] = build(nodeid, case)
        return rec

    return record


@pytest.fixture
def provenai_attribution(request: pytest.FixtureRequest) -> Callable[[Any], dict[str, Any]]:
    """``attribution(case) -> record``: verify, repair and record an ``mcp_trace`` or
    ``conflation_probe`` case with the calibrated verifier (built once per process)."""
    return _record_fixture(request, mcp=False)


@pytest.fixture
def provenai_mcp(request: pytest.FixtureRequest) -> Callable[[Any], dict[str, Any]]:
    """``mcp(case) -> record``: answer a HotpotQA case through the MCP tools (the harness
    drives the calls and the subject writes the answer, or ``--provenai-mcp-pipeline``'s
    agent answers), every call recorded; verify and repair the answer; write the trace
    graph to ``--provenai-mcp-traces``."""
    return _record_fixture(request, mcp=True)


@pytest.fixture
def provenai_attribution_snapshot(snapshot: Any, pytestconfig: pytest.Config) -> Any:
    """syrupy's ``snapshot`` for records that depend on the verifier only (frozen traces,
    probes): JSON under ``golden/attribution-verifier/``, kept by the same golden
    bookkeeping as ``provenai_snapshot``."""
    return pytestconfig.stash[GOLDEN_KEY].snapshot(snapshot, "attribution-verifier")

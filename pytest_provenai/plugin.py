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
* ``provenai_attribution`` / ``provenai_mcp`` / ``provenai_attribution_snapshot`` — the
  attribution layer: frozen tool traces and probes, live MCP sessions, and snapshots of
  verifier-only records.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import tempfile
import threading
from collections import defaultdict
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

import pytest

from pytest_provenai import gates as gates_mod
from pytest_provenai import options as opt
from pytest_provenai._io import sweep_stale_temps
from pytest_provenai.errors import CaseTimeout, FixtureSetError, GoldenError, ProvenaiError
from pytest_provenai.frozen.model import KINDS, AnyCase
from pytest_provenai.report.results import RunResults
from pytest_provenai.session import CaseParam, ProvenaiSession
from pytest_provenai.subject.subject import Subject
from pytest_provenai.subject.trace import Trace

SESSION_KEY = pytest.StashKey[ProvenaiSession]()
RESULTS_KEY = pytest.StashKey[RunResults]()
CHANNEL_KEY = pytest.StashKey[Path]()
CHANNEL_INPUT = "provenai_progress"
REPORT_SINK = "provenai-report-sink"
GOLDEN_KEY = pytest.StashKey["GoldenBook"]()
GOLDEN_BOOK = "provenai-golden"
GOLDEN_WORKEROUTPUT_KEY = "provenai_golden"
PROGRESS = "provenai-progress"
SERVED_KEY = pytest.StashKey[list[Any]]()  # openai backend: each server's probe report
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
    config.addinivalue_line(
        "markers",
        "provenai_sets(*names): take provenai_case only from these fixture sets (folder "
        "names), e.g. to gate each labelled set separately",
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
        if settings.served is not None and not _is_worker(config):  # probe each server once
            from pytest_provenai.subject.backends.openai_backend import check_servers

            config.stash[SERVED_KEY] = check_servers(
                [settings.served.options(u, settings.model) for u in settings.served.base_urls],
                needs_kl=settings.ablation == "exact",
            )
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


@pytest.hookimpl(tryfirst=True)  # before xdist starts its workers (they get the channel)
def pytest_sessionstart(session: pytest.Session) -> None:
    if SESSION_KEY in session.config.stash:  # after configure, so the terminal reporter exists
        _configure_progress(session.config, _session(session.config))


def pytest_unconfigure(config: pytest.Config) -> None:
    for name in (REPORT_SINK, GOLDEN_BOOK, PROGRESS):
        plugin = config.pluginmanager.get_plugin(name)
        if plugin is not None:
            config.pluginmanager.unregister(plugin)
    if SESSION_KEY in config.stash and _session(config).live is not None:
        _session(config).live.close()  # type: ignore[union-attr]
    channel = config.stash.get(CHANNEL_KEY, None)
    if channel is not None:
        shutil.rmtree(channel, ignore_errors=True)


# -- progress (progress.py): a live line on the controller, status from each test process ----
def _configure_progress(config: pytest.Config, state: ProvenaiSession) -> None:
    from pytest_provenai.progress import LiveStatus, ProgressReporter, open_tty, read_channel

    settings = state.settings
    workerinput = getattr(config, "workerinput", None)
    if workerinput is not None:  # an xdist worker: its status goes to the controller's folder
        given = workerinput.get(CHANNEL_INPUT)
        state.live = LiveStatus(state.worker_id or "worker", Path(given) if given else None)
        return
    state.live = LiveStatus("main")
    mode = settings.progress
    if mode == "off" or config.get_verbosity() <= -2 or config.option.collectonly:
        return
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if reporter is None:
        return
    tty = None
    if mode in ("auto", "live") and (mode == "live" or reporter.isatty):
        tty = open_tty()
    mode = "live" if tty is not None else "plain"
    channel: Path | None = None
    if config.pluginmanager.hasplugin("xdist") and getattr(config.option, "numprocesses", None):
        channel = Path(tempfile.mkdtemp(prefix="provenai-progress-"))
        config.stash[CHANNEL_KEY] = channel

    def running() -> list[dict[str, Any]]:
        if channel is not None:
            return read_channel(channel)
        snap = state.live.snapshot() if state.live is not None else None
        return [snap] if snap else []

    def column() -> int:
        return int(config.get_terminal_writer().width_of_current_line)

    def write_line(line: str) -> None:
        _new_line(config, reporter)
        reporter.write_line(line)

    progress = ProgressReporter(
        mode=mode,
        every=settings.progress_every,
        cases=lambda: state.plan.cases,
        running=running,
        write_line=write_line,
        column=column,
        tty=tty,
        workers=_test_processes(config),
    )
    config.pluginmanager.register(progress, name=PROGRESS)


def _test_processes(config: pytest.Config) -> int:
    """How many processes run tests side by side (progress.py's docstring): the workers xdist
    starts from its ``tx`` specs when it distributes, else 1."""
    if not config.pluginmanager.hasplugin("xdist") or config.getoption("dist", "no") == "no":
        return 1
    count = 0
    for spec in config.getoption("tx", None) or ():
        head, star, _ = str(spec).partition("*")
        count += int(head) if star and head.isdigit() else 1
    return max(1, count)


def _new_line(config: pytest.Config, terminal: Any) -> None:
    """End the line of pytest's progress dots (under xdist they have no file name line, so
    ``ensure_newline`` alone does not)."""
    terminal.ensure_newline()
    if config.get_terminal_writer().width_of_current_line:
        terminal.write("\n")


@pytest.hookimpl(optionalhook=True)
def pytest_configure_node(node: Any) -> None:
    """xdist: tell each worker where to write what it is running (the progress line)."""
    channel = node.config.stash.get(CHANNEL_KEY, None)
    if channel is not None:
        node.workerinput[CHANNEL_INPUT] = str(channel)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item) -> Any:
    live = _session(item.config).live if SESSION_KEY in item.config.stash else None
    if live is not None:
        live.begin(item.nodeid)
    try:
        yield
    finally:
        if live is not None:
            live.end()


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
    sets = _case_sets(metafunc)
    if sets is not None:
        params = [
            p
            for p in params
            if (p.case is not None and p.case.fixture_set in sets)
            or (p.case is None and p.id.removeprefix("fixture-error:") in sets)
        ]
    metafunc.parametrize("provenai_case", params, ids=[p.id for p in params], indirect=True)


SETS_MARKER = "provenai_sets"


def _case_sets(metafunc: pytest.Metafunc) -> tuple[str, ...] | None:
    """The fixture sets a test takes cases from (its ``provenai_sets`` marker), or None for
    every configured set; a marker's set that is not configured is a usage error."""
    mark = metafunc.definition.get_closest_marker(SETS_MARKER)
    if mark is None:
        return None
    where = f"{_test_id(metafunc.definition.nodeid)}: @pytest.mark.{SETS_MARKER}"
    if mark.kwargs or not mark.args or not all(isinstance(a, str) for a in mark.args):
        raise pytest.UsageError(
            f"{where} takes one or more fixture set names (folder names) as positional "
            f"strings, got {mark.args!r} {mark.kwargs!r}"
        )
    return tuple(mark.args)


@pytest.hookimpl(tryfirst=True)  # xdist's worker reads the group marks in this same hook
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """With ``--dist loadgroup`` all of a case's tests run on one worker, one after another
    (they share its cached generations; the first one generates, the others read). xdist's
    worker turns the ``xdist_group`` marks into the scheduling groups in its own
    ``pytest_collection_modifyitems``, so the marks must be on the items before it runs. On
    pytest >= 9.2 xdist 3.8 does not honour them (pytest-xdist#1386); records are the same
    either way (docs/architecture.md)."""
    if not config.pluginmanager.hasplugin("xdist"):
        return
    for item in items:
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
        if _case_param(item) is not None:
            state.plan.cases.add(item.nodeid)
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


class RecordFn(Protocol):
    """``record(rec, trace=None) -> rec``: what ``provenai_record`` gives a test. The trace,
    when given, is shown in the HTML report beside the record (raw output, resource titles);
    it never enters the record or its snapshot."""

    def __call__(self, rec: dict[str, Any], trace: Trace | None = None) -> dict[str, Any]: ...


@pytest.fixture
def provenai_record(request: pytest.FixtureRequest) -> RecordFn:
    session = _session(request.config)
    nodeid = request.node.nodeid

    def record(rec: dict[str, Any], trace: Trace | None = None) -> dict[str, Any]:
        return session.add_record(nodeid, _test_id(nodeid), rec, trace)

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
    settings = _session(pytestconfig).settings
    variant = f"index-k{settings.k}" if settings.retrieval == "index" else None
    return _golden_snapshot(snapshot, pytestconfig, provenai_subject.identity.name, variant)


def _golden_snapshot(
    snapshot: Any, config: pytest.Config, folder: str, variant: str | None = None
) -> Any:
    """``snapshot`` bound to the verdict extension writing under ``golden/<folder>/``, the
    folder and test function told to the golden bookkeeping (:class:`GoldenBook`)."""
    from pytest_provenai.snapshot import extension_for

    extension = extension_for(_session(config).settings.golden, folder, variant)
    assertion = snapshot.use_extension(extension)
    location = assertion.test_location
    config.stash[GOLDEN_KEY].use(
        Path(extension.dirname(test_location=location)), location.snapshot_name.split("[")[0]
    )
    return assertion


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
    return _golden_snapshot(snapshot, pytestconfig, "attribution-verifier")


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
        if getattr(report, GATE_ATTR, False):
            return  # a gate's own outcome (below), not a test of the run
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


@pytest.hookimpl(tryfirst=True)  # before junitxml writes its file and the terminal summary
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    config = session.config
    if SESSION_KEY not in config.stash:
        return
    state = _session(config)
    if _is_worker(config):
        config.workeroutput[WORKEROUTPUT_KEY] = state.worker_payload()  # type: ignore[attr-defined]
        return
    progress = config.pluginmanager.get_plugin(PROGRESS)
    if progress is not None:
        progress.close()
    if config.option.collectonly:  # nothing ran: nothing to judge or write
        return
    results = state.finish()
    config.stash[RESULTS_KEY] = results
    state.write_results(results)
    if state.settings.report is not None and state.audited():
        from pytest_provenai.report.html import render_report, write_html

        write_html(state.settings.report, render_report(results))
    reports = gate_reports(results)  # each gate is a test outcome (JUnit XML, summary)
    terminal = config.pluginmanager.get_plugin("terminalreporter")
    if reports and terminal is not None and config.get_verbosity() <= 0:
        _new_line(config, terminal)
        terminal.write("provenai gates ")
    session.testscollected += len(results.gates)  # so pytest's progress counts them too
    for report in reports:
        config.hook.pytest_runtest_logreport(report=report)
    if results.failed_gates and session.exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


GATE_ATTR = "provenai_gate"


def gate_reports(results: RunResults) -> list[pytest.TestReport]:
    """Each gate as the three reports of a test item ``<test>::gate[<marker>.<metric>]``:
    setup and teardown passed, the call passed or failed with the gate's line (metric,
    value, CI, bound, n, reason) as its failure message. What pytest's terminal summary and
    ``--junitxml`` show; the gate's verdict itself is computed once, in ``session.finish``."""
    out: list[pytest.TestReport] = []
    for g in results.gates:
        nodeid = f"{g.spec.test}::gate[{g.spec.marker}.{g.spec.metric}]"
        location = (g.spec.test.split("::", 1)[0], None, f"gate {g.spec.marker}.{g.spec.metric}")
        for when in ("setup", "call", "teardown"):
            failed = when == "call" and not g.passed
            report = pytest.TestReport(
                nodeid,
                location,
                {},
                "failed" if failed else "passed",
                g.line() if failed else None,
                when,
            )
            setattr(report, GATE_ATTR, True)
            out.append(report)
    return out


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    if _is_worker(config) or RESULTS_KEY not in config.stash:
        return
    from pytest_provenai.report.summary import summary_lines

    state = _session(config)
    results = config.stash[RESULTS_KEY]
    written = state.settings.results if state.audited() else None
    lines = summary_lines(results, results_path=written)
    if written is not None and state.settings.report is not None:
        lines.append(f"report: {state.settings.report}")
    lines += [report.describe() for report in config.stash.get(SERVED_KEY, [])]
    if not lines:
        return
    terminalreporter.section("provenai")
    for line in lines:
        terminalreporter.write_line(line)

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

import time
from collections.abc import Callable
from typing import Any

import pytest

from pytest_provenai import gates as gates_mod
from pytest_provenai import options as opt
from pytest_provenai.errors import ProvenaiError
from pytest_provenai.frozen.model import KINDS, AnyCase
from pytest_provenai.session import CaseParam, ProvenaiSession
from pytest_provenai.subject.subject import Subject

SESSION_KEY = pytest.StashKey[ProvenaiSession]()
GATE_RESULTS_KEY = pytest.StashKey[list[gates_mod.GateResult]]()
WORKEROUTPUT_KEY = "provenai"
KIND_MARKER = "provenai_kind"
DEFAULT_KINDS = ("hotpotqa",)


class FixtureSetError(Exception):
    """Raised at setup of the test standing for a fixture set that failed to load."""


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
                opt.flag(name), nargs="+", default=None, dest=name, metavar="DIR", help=help_text
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
    except ProvenaiError as exc:
        raise pytest.UsageError(str(exc)) from None
    worker_id = getattr(config, "workerinput", {}).get("workerid")
    config.stash[SESSION_KEY] = ProvenaiSession(settings=settings, worker_id=worker_id)


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


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    session = _session(config)
    has_xdist = config.pluginmanager.hasplugin("xdist")
    for item in items:
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
        param = getattr(item, "callspec", None)
        case_param = param.params.get("provenai_case") if param is not None else None
        if isinstance(case_param, CaseParam):
            if has_xdist:
                item.add_marker(pytest.mark.xdist_group(name=case_param.id))
            if specs:
                session.register_gates(specs)
                session.expect_record(item.nodeid, _test_id(item.nodeid), case_param.id)


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
        session.add_record(nodeid, _test_id(nodeid), rec)
        return rec

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
    return snapshot.use_extension(
        extension_for(settings.golden, provenai_subject.identity.name, variant)
    )


# -- the attribution layer (claim-level source verification, MCP traces) --------------------
def _attribution_runtime(config: pytest.Config) -> Any:
    return _session(config).attribution()


def _record_fixture(
    request: pytest.FixtureRequest, *, mcp: bool
) -> Callable[[Any], dict[str, Any]]:
    """``fn(case) -> record`` through the attribution runtime; the verifier (and
    for MCP sessions the subject) is built at setup, so a missing extra or a bad table is
    one line before any case runs."""
    runtime = _attribution_runtime(request.config)
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
    probes): JSON under ``golden/attribution-verifier/``."""
    from pytest_provenai.snapshot import extension_for

    settings = _session(pytestconfig).settings
    return snapshot.use_extension(extension_for(settings.golden, "attribution-verifier"))


# -- run bookkeeping -------------------------------------------------------------------------
_SKIPPED = pytest.StashKey[set[str]]()


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Any:
    start = time.perf_counter()
    yield
    session = _session(item.config)
    session.timings[item.nodeid] = round(time.perf_counter() - start, 4)


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Any:
    outcome = yield
    report: pytest.TestReport = outcome.get_result()
    skipped = item.stash.setdefault(_SKIPPED, set())
    if report.skipped:
        skipped.add(report.when)
    if report.when == "teardown":
        session = _session(item.config)
        state = "skipped" if skipped else "no record (test errored or failed before recording)"
        session.test_finished(item.nodeid, state, skipped=bool(skipped))


# -- end of session: xdist merge, gates, results, summary ------------------------------------
@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: Any) -> None:
    payload = getattr(node, "workeroutput", {}).get(WORKEROUTPUT_KEY)
    if payload:
        _session(node.config).merge(payload)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    config = session.config
    state = _session(config)
    if _is_worker(config):
        config.workeroutput[WORKEROUTPUT_KEY] = state.worker_payload()  # type: ignore[attr-defined]
        return
    results = state.evaluate_gates()
    config.stash[GATE_RESULTS_KEY] = results
    state.write_results(results)
    if any(not r.passed for r in results) and session.exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter: Any, exitstatus: int, config: pytest.Config) -> None:
    if _is_worker(config) or SESSION_KEY not in config.stash:
        return
    from pytest_provenai.report.summary import summary_lines

    state = _session(config)
    lines = summary_lines(state, config.stash.get(GATE_RESULTS_KEY, []))
    if not lines:
        return
    terminalreporter.section("provenai")
    for line in lines:
        terminalreporter.write_line(line)

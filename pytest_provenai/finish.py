"""The end of a run as pytest sees it: results, report, gates as test outcomes, summary.

:func:`finish_run` (``pytest_sessionfinish``, before junitxml writes its file) has the
session build the results once (``ProvenaiSession.finish``), writes the results JSON and the
HTML report, reports each gate as a test item ``<test>::gate[<marker>.<metric>]``
(:func:`gate_reports`, through ``pytest_runtest_logreport``, so the terminal counts and
``--junitxml`` show it) and sets the exit status to 1 on a failed gate; a worker only sends
its :class:`~pytest_provenai.transport.WorkerPayload`. :func:`write_summary` writes the
``provenai`` section of the terminal summary.
"""

from __future__ import annotations

from typing import Any, Literal

import pytest

from pytest_provenai.progress import new_line, stop_progress
from pytest_provenai.report.results import RunResults
from pytest_provenai.session import ProvenaiSession
from pytest_provenai.snapshot import GoldenBook
from pytest_provenai.transport import GATE_ATTR, WORKEROUTPUT_KEY

__all__ = ["EmptyShard", "finish_run", "gate_reports", "write_summary"]


def finish_run(
    session: pytest.Session, state: ProvenaiSession, book: GoldenBook
) -> RunResults | None:
    """The run's results on the controller (or the only process; module docstring), None on
    a worker or under ``--collect-only`` (nothing ran: nothing to judge or write). A shard's
    results name the golden files ``book`` found unused, for ``provenai merge``."""
    config = session.config
    if hasattr(config, "workerinput"):
        config.workeroutput[WORKEROUTPUT_KEY] = state.worker_payload()  # type: ignore[attr-defined]
        return None
    stop_progress(config)
    if config.option.collectonly:
        return None
    unused = book.unused_files(session) if state.settings.shard is not None else None
    results = state.finish(unused)
    state.write_results(results)
    if state.settings.report is not None and state.audited():
        from pytest_provenai.report.html import render_report, write_html

        write_html(state.settings.report, render_report(results))
    reports = gate_reports(results)  # each gate is a test outcome (JUnit XML, summary)
    terminal = config.pluginmanager.get_plugin("terminalreporter")
    if reports and terminal is not None and config.get_verbosity() <= 0:
        new_line(config, terminal)
        terminal.write("provenai gates ")
    session.testscollected += len(results.gates)  # so pytest's progress counts them too
    for report in reports:
        config.hook.pytest_runtest_logreport(report=report)
    if results.failed_gates and session.exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED
    return results


class EmptyShard:
    """Under ``--provenai-shard``: a shard that drew no case (a small set over many shards)
    exits 0 like one whose cases passed, having written its (empty) share for ``provenai
    merge``; pytest would exit 5. A plugin object of its own because syrupy's
    ``pytest_sessionfinish`` ORs the status pytest passed it back in: this runs last."""

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        if session.exitstatus == pytest.ExitCode.NO_TESTS_COLLECTED:
            session.exitstatus = pytest.ExitCode.OK


def gate_reports(results: RunResults) -> list[pytest.TestReport]:
    """Each gate as the three reports of a test item ``<test>::gate[<marker>.<metric>]``:
    setup and teardown passed, the call passed or failed with the gate's line (metric,
    value, CI, bound, n, reason) as its failure message — or, for a shard's provisional
    gate, skipped with its line as the reason. What pytest's terminal summary and
    ``--junitxml`` show; the gate's verdict itself is computed once, in ``session.finish``."""
    out: list[pytest.TestReport] = []
    for g in results.gates:
        nodeid = f"{g.spec.test}::gate[{g.spec.marker}.{g.spec.metric}]"
        path = g.spec.test.split("::", 1)[0]
        location = (path, None, f"gate {g.spec.marker}.{g.spec.metric}")
        for when in ("setup", "call", "teardown"):
            outcome: Literal["passed", "failed", "skipped"] = "passed"
            longrepr: Any = None
            if when == "call" and g.provisional:
                outcome = "skipped"
                longrepr = (path, 0, f"{g.line()} — judged by provenai merge")
            elif when == "call" and not g.passed:
                outcome, longrepr = "failed", g.line()
            report = pytest.TestReport(nodeid, location, {}, outcome, longrepr, when)
            setattr(report, GATE_ATTR, True)
            out.append(report)
    return out


def write_summary(
    terminal: Any, state: ProvenaiSession, results: RunResults, served: list[Any]
) -> None:
    """The terminal summary's ``provenai`` section: the results' lines, where the results
    and the report were written, and each served model's probe report."""
    from pytest_provenai.report.summary import summary_lines

    written = state.settings.results if state.audited() else None
    lines = summary_lines(results, results_path=written)
    if written is not None and state.settings.report is not None:
        lines.append(f"report: {state.settings.report}")
    lines += [report.describe() for report in served]
    if not lines:
        return
    terminal.section("provenai")
    for line in lines:
        terminal.write_line(line)

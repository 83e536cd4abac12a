"""Progress of a long audit: cases done/total, the current test, an ETA, and what a slow case
is doing.

* :class:`Progress` (pure) holds the counts and formats the line: ``provenai 37/122 cases ·
  suites/test_influence.py::test_influence · 58.3 s/case · ETA 20m14s · slow: <case> 48 s
  in influence (10 ablations, exact, 4 model calls)``. Each finished case item brings its
  own duration (setup + call + teardown, as its process measured it). The test named is the
  test function (node id before ``[``) of the last finished case item, and ``s/case`` is that
  function's own mean seconds per case. The ETA is estimated per test function, since one
  suite's cases can cost a hundred times another's (influence ≈ 60 s, attribution ≈ 0.6 s):
  remaining work = Σ over test functions of its unfinished case items × its mean seconds per
  finished case, divided by the processes running cases (never more than the unfinished
  cases). The cases running now count as unfinished, so the ETA can run ahead by up to one
  case per worker. While a test function with unfinished cases has no finished case yet
  there is no honest number, and the line says ``ETA unknown``.

  The processes (:func:`worker_count`) are the workers xdist starts, counted on the
  controller from its ``tx`` list when xdist distributes at all (``--dist`` not ``no``):
  ``-n N`` sets ``tx`` to N ``popen`` specs after xdist turned ``auto``/``logical`` into a
  number and ``--maxprocesses`` capped it, and ``--tx 3*popen`` counts 3. Without xdist
  (``-p no:xdist``), with ``-n 0`` (xdist sets ``dist=no``, ``tx=[]``) or ``--pdb`` it is 1.
  This is known before the first report, unlike counting the workers seen in reports (which
  starts at 1 while every worker runs its first slow case); the distinct ``worker_id`` of
  the reports only raises it, should more workers report than were configured.
* :class:`LiveStatus` runs in every process that runs tests: what this process is doing now
  (the case, since when, and during the influence layer how many ablations, in which mode,
  and the model calls made so far). Under xdist each worker writes it to a small JSON file
  in a folder the controller hands out (``workerinput``), once a second while it changes.
* :class:`ProgressReporter` runs on the controller (or the only process). It counts finished
  case items from the reports (``pytest_runtest_logreport``, the same stream the records
  ride on; under xdist the workers' reports, with their ``duration`` and ``worker_id``) and
  the total from the plan's case items; it sums each node id's setup, call and teardown
  ``duration`` and hands the sum to :meth:`Progress.finish` with the teardown. On a terminal
  (``live``) it redraws one status line below pytest's own output once a second, writing to
  ``/dev/tty`` so pytest's output capture never swallows it; otherwise (``plain``, CI logs)
  it writes one ordinary line at most every ``--provenai-progress-every`` seconds as cases
  finish. ``-q -q`` or ``--provenai-progress off`` silences it.
* The wiring (what the plugin's hooks call): :func:`start_progress` at session start gives
  every test process its :class:`LiveStatus` and registers the controller's
  :class:`ProgressReporter` (plugin name ``provenai-progress``); :func:`configure_node` hands
  each xdist worker the status folder (``workerinput``); :func:`running` marks the item a
  process runs; :func:`stop_progress` takes the line away before the summary and
  :func:`close_progress` ends it all at unconfigure.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import tempfile
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import IO, Any, Protocol

import pytest

from pytest_provenai._io import atomic_write_json
from pytest_provenai.options import Settings
from pytest_provenai.transport import GATE_ATTR

__all__ = [
    "LiveStatus",
    "Progress",
    "ProgressReporter",
    "close_progress",
    "configure_node",
    "fmt_duration",
    "new_line",
    "running",
    "start_progress",
    "stop_progress",
    "worker_count",
]

PROGRESS = "provenai-progress"  # the ProgressReporter's plugin name
CHANNEL_KEY = pytest.StashKey[Path]()  # the controller's status folder (under xdist)
CHANNEL_INPUT = "provenai_progress"  # workerinput key: that folder, for each worker

SLOW_SECONDS = 10.0
"""A running case shows its details in the line once it has run this long."""
REDRAW_SECONDS = 1.0


def fmt_duration(seconds: float) -> str:
    s = max(0, round(seconds))
    if s < 60:
        return f"{s}s"
    if s < 3600:
        return f"{s // 60}m{s % 60:02d}s"
    return f"{s // 3600}h{(s % 3600) // 60:02d}m"


class Progress:
    """Counts, per-test-function costs and the line (no I/O). ``clock`` is wall-clock seconds
    (for how long a running case has run); ``workers`` the processes running cases."""

    def __init__(self, clock: Callable[[], float] = time.time, workers: int = 1) -> None:
        self.clock = clock
        self.workers = max(1, workers)
        self._lock = threading.Lock()  # the live line is drawn from a thread
        self._seconds: dict[str, float] = {}  # finished node id -> its duration, in order
        self._seen: set[str] = set()  # workers whose reports arrived

    def finish(self, nodeid: str, seconds: float, worker: str | None = None) -> None:
        """``nodeid`` finished after ``seconds`` of setup, call and teardown (on ``worker``)."""
        with self._lock:
            self._seconds.pop(nodeid, None)  # a rerun counts once, as the last finished
            self._seconds[nodeid] = max(0.0, float(seconds))
            if worker is not None:
                self._seen.add(worker)

    def line(self, cases: set[str], running: list[dict[str, Any]]) -> str | None:
        """The status line over the case items ``cases`` (None when there are none)."""
        total = len(cases)
        if not total:
            return None
        with self._lock:
            finished = [(n, s) for n, s in self._seconds.items() if n in cases]
            workers = max(self.workers, len(self._seen))
        count: dict[str, int] = {}
        spent: dict[str, float] = {}
        for nodeid, seconds in finished:
            test = _test_of(nodeid)
            count[test] = count.get(test, 0) + 1
            spent[test] = spent.get(test, 0.0) + seconds
        done = len(finished)
        parts = [f"provenai {done}/{total} cases"]
        if finished:
            current = _test_of(finished[-1][0])
            parts.append(current)
            parts.append(f"{spent[current] / count[current]:.1f} s/case")
        if done < total:
            parts.append(f"ETA {_eta(cases - {n for n, _ in finished}, count, spent, workers)}")
        now = self.clock()
        slow = [r for r in running if now - float(r.get("since", now)) >= SLOW_SECONDS]
        if slow:
            r = max(slow, key=lambda r: now - float(r["since"]))
            what = f"slow: {r.get('case', r.get('nodeid'))} {fmt_duration(now - r['since'])}"
            if r.get("phase") == "influence":
                calls = r.get("model_calls")
                detail = f"{r.get('ablations')} ablations, {r.get('mode')}"
                if calls is not None:
                    detail += f", {calls} model calls"
                what += f" in influence ({detail})"
            parts.append(what)
        return " · ".join(parts)


def _test_of(nodeid: str) -> str:
    """The test function of a node id (the id before its parameters)."""
    return nodeid.split("[", 1)[0]


def _eta(remaining: set[str], count: dict[str, int], spent: dict[str, float], workers: int) -> str:
    """Σ remaining cases × their test function's mean seconds per case, over the processes
    that can run them; ``unknown`` while a test function with remaining cases has none done."""
    todo: dict[str, int] = {}
    for nodeid in remaining:
        test = _test_of(nodeid)
        todo[test] = todo.get(test, 0) + 1
    if any(test not in count for test in todo):
        return "unknown"
    work = sum(n * spent[test] / count[test] for test, n in todo.items())
    return fmt_duration(work / max(1, min(workers, len(remaining))))


class ProgressSettings(Protocol):
    """What :func:`start_progress` reads of the session."""

    @property
    def worker_id(self) -> str | None: ...

    @property
    def settings(self) -> Settings: ...


class CountsModelCalls(Protocol):
    """What the influence layer's runner tells the status: its model calls so far (a
    :class:`~pytest_provenai.subject.subject.ModelRunner` is one)."""

    @property
    def model_calls(self) -> int: ...


class LiveStatus:
    """What this process is running now (see module docstring)."""

    def __init__(self, worker: str, channel: Path | None = None) -> None:
        self.worker = worker
        self.channel = channel
        self._lock = threading.Lock()
        self._state: dict[str, Any] = {}
        self._runner: CountsModelCalls | None = None
        self._calls0 = 0
        self._written: str | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        if channel is not None:
            self._thread = threading.Thread(target=self._loop, name="provenai-status", daemon=True)
            self._thread.start()

    # -- updates (main thread) -------------------------------------------------------
    def begin(self, nodeid: str) -> None:
        case = nodeid.split("[", 1)[1].rstrip("]") if "[" in nodeid else nodeid
        with self._lock:
            self._state = {"nodeid": nodeid, "case": case, "since": time.time(), "phase": "test"}
            self._runner = None

    def influence(self, ablations: int, mode: str, runner: CountsModelCalls | None) -> None:
        """The influence layer started: ``ablations`` leave-one-out runs in ``mode``;
        ``runner`` (a ModelRunner or None) is asked for ``model_calls`` as they happen."""
        with self._lock:
            if self._state:
                self._state.update(phase="influence", ablations=ablations, mode=mode)
                self._runner = runner
                self._calls0 = runner.model_calls if runner is not None else 0

    def end(self) -> None:
        with self._lock:
            self._state = {}
            self._runner = None

    # -- reading -------------------------------------------------------------------------
    def snapshot(self) -> dict[str, Any] | None:
        with self._lock:
            if not self._state:
                return None
            state = dict(self._state, worker=self.worker)
            if self._runner is not None:
                state["model_calls"] = self._runner.model_calls - self._calls0
            return state

    def _loop(self) -> None:
        assert self.channel is not None
        target = self.channel / f"{self.worker}.json"
        while not self._stop.wait(REDRAW_SECONDS):
            text = json.dumps(self.snapshot())
            if text != self._written:
                with contextlib.suppress(OSError):
                    atomic_write_json(target, self.snapshot())
                    self._written = text

    def close(self) -> None:
        self._stop.set()


def read_channel(channel: Path) -> list[dict[str, Any]]:
    """The running cases the workers reported in ``channel`` (unreadable files skipped)."""
    out = []
    for path in sorted(channel.glob("*.json")):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(data, dict) and "since" in data:
            out.append(data)
    return out


class ProgressReporter:
    """The controller's progress output (see module docstring). A plugin object: pytest
    calls its ``pytest_runtest_logreport`` for every report, from any worker."""

    def __init__(
        self,
        *,
        mode: str,
        every: float,
        cases: Callable[[], set[str]],
        running: Callable[[], list[dict[str, Any]]],
        write_line: Callable[[str], None],
        column: Callable[[], int],
        tty: IO[str] | None = None,
        workers: int = 1,
    ) -> None:
        self.mode = mode
        self.every = every
        self.cases = cases
        self.running = running
        self.write_line = write_line
        self.column = column
        self.tty = tty
        self.progress = Progress(workers=workers)
        self._spent: dict[str, float] = {}  # node id -> seconds of its reports so far
        self._last_plain = time.time()
        self._lock = threading.Lock()
        self._drawn = False
        self._last_line: str | None = None
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None
        if mode == "live" and tty is not None:
            self._thread = threading.Thread(
                target=self._loop, name="provenai-progress", daemon=True
            )
            self._thread.start()

    def pytest_runtest_logreport(self, report: Any) -> None:
        if getattr(report, GATE_ATTR, False):
            return
        nodeid = report.nodeid
        seconds = self._spent.get(nodeid, 0.0) + float(getattr(report, "duration", 0.0) or 0.0)
        self._spent[nodeid] = seconds
        if report.when == "teardown":
            del self._spent[nodeid]
            worker = getattr(report, "worker_id", None)  # set by xdist on a worker's reports
            self.progress.finish(nodeid, seconds, worker if isinstance(worker, str) else None)
            if self.mode == "plain":
                now = time.time()
                if now - self._last_plain >= self.every:
                    self._last_plain = now
                    self._plain()
            elif self.mode == "live":
                self._draw()

    # -- output ------------------------------------------------------------------------
    def _line(self) -> str | None:
        return self.progress.line(self.cases(), self.running())

    def _plain(self) -> None:
        line = self._line()
        if line and line != self._last_line:
            self._last_line = line
            self.write_line(line)

    def _draw(self, clear: bool = False) -> None:
        """Redraw the status line on the terminal line below the cursor, then put the cursor
        back where pytest left it (same line, same column)."""
        if self.tty is None:
            return
        line = None if clear else self._line()
        if line is None and not self._drawn:
            return
        with self._lock:
            col = self.column()
            back = f"\x1b[1A\r\x1b[{col}C" if col else "\x1b[1A\r"
            text = "" if line is None else line[: max(20, _width(self.tty) - 1)]
            with contextlib.suppress(OSError, ValueError):
                self.tty.write(f"\x1b[K\n\x1b[2K{text}{back}")
                self.tty.flush()
            self._drawn = line is not None

    def _loop(self) -> None:
        while not self._stop.wait(REDRAW_SECONDS):
            self._draw()

    def close(self) -> None:
        """Stop redrawing and take the status line away (before pytest's summary)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2)
        if self.mode == "live":
            self._draw(clear=True)
        elif self.mode == "plain" and self._last_line is not None:
            self._plain()  # the closing count, when the run was long enough to show any
        if self.tty is not None:
            with contextlib.suppress(OSError):
                self.tty.close()


def _width(tty: IO[str]) -> int:
    try:
        return os.get_terminal_size(tty.fileno()).columns or 80
    except (OSError, ValueError):
        return 80


def open_tty() -> IO[str] | None:
    """The controlling terminal, open for writing, or None where there is none (the reporter
    closes it)."""
    try:
        return open("/dev/tty", "w", encoding="utf-8")
    except OSError:
        return None


# -- the wiring: what the plugin's hooks call -------------------------------------------------
def start_progress(
    config: pytest.Config, state: ProgressSettings, cases: Callable[[], set[str]]
) -> LiveStatus:
    """At session start (before xdist starts its workers: they get the channel): this
    process's :class:`LiveStatus`; on the controller (or the only process) also the
    :class:`ProgressReporter` over the plan's case items ``cases()``, unless
    ``--provenai-progress off``, ``-q -q``, ``--collect-only`` or no terminal reporter."""
    workerinput = getattr(config, "workerinput", None)
    if workerinput is not None:  # an xdist worker: its status goes to the controller's folder
        given = workerinput.get(CHANNEL_INPUT)
        return LiveStatus(state.worker_id or "worker", Path(given) if given else None)
    live = LiveStatus("main")
    mode, every = state.settings.progress, state.settings.progress_every
    if mode == "off" or config.get_verbosity() <= -2 or config.option.collectonly:
        return live
    reporter = config.pluginmanager.get_plugin("terminalreporter")
    if reporter is None:
        return live
    tty = None
    if mode in ("auto", "live") and (mode == "live" or reporter.isatty):
        tty = open_tty()
    channel: Path | None = None
    if config.pluginmanager.hasplugin("xdist") and getattr(config.option, "numprocesses", None):
        channel = Path(tempfile.mkdtemp(prefix="provenai-progress-"))
        config.stash[CHANNEL_KEY] = channel

    def now_running() -> list[dict[str, Any]]:
        if channel is not None:
            return read_channel(channel)
        snap = live.snapshot()
        return [snap] if snap else []

    def column() -> int:
        return int(config.get_terminal_writer().width_of_current_line)

    def write_line(line: str) -> None:
        new_line(config, reporter)
        reporter.write_line(line)

    progress = ProgressReporter(
        mode="live" if tty is not None else "plain",
        every=every,
        cases=cases,
        running=now_running,
        write_line=write_line,
        column=column,
        tty=tty,
        workers=worker_count(config),
    )
    config.pluginmanager.register(progress, name=PROGRESS)
    return live


def worker_count(config: pytest.Config) -> int:
    """How many processes run tests side by side (module docstring): the workers xdist
    starts from its ``tx`` specs when it distributes, else 1."""
    if not config.pluginmanager.hasplugin("xdist") or config.getoption("dist", "no") == "no":
        return 1
    count = 0
    for spec in config.getoption("tx", None) or ():
        head, star, _ = str(spec).partition("*")
        count += int(head) if star and head.isdigit() else 1
    return max(1, count)


def new_line(config: pytest.Config, terminal: Any) -> None:
    """End the line of pytest's progress dots (under xdist they have no file name line, so
    ``ensure_newline`` alone does not)."""
    terminal.ensure_newline()
    if config.get_terminal_writer().width_of_current_line:
        terminal.write("\n")


def configure_node(node: Any) -> None:
    """xdist: tell a worker where to write what it is running (the progress line)."""
    channel = node.config.stash.get(CHANNEL_KEY, None)
    if channel is not None:
        node.workerinput[CHANNEL_INPUT] = str(channel)


@contextlib.contextmanager
def running(live: LiveStatus | None, nodeid: str) -> Iterator[None]:
    """While this process runs the item ``nodeid``."""
    if live is not None:
        live.begin(nodeid)
    try:
        yield
    finally:
        if live is not None:
            live.end()


def stop_progress(config: pytest.Config) -> None:
    """Stop the controller's line (at session finish, before pytest's summary)."""
    progress = config.pluginmanager.get_plugin(PROGRESS)
    if progress is not None:
        progress.close()


def close_progress(config: pytest.Config, live: LiveStatus | None) -> None:
    """At unconfigure: unregister the reporter, stop the status thread, remove the folder."""
    progress = config.pluginmanager.get_plugin(PROGRESS)
    if progress is not None:
        config.pluginmanager.unregister(progress)
    if live is not None:
        live.close()
    channel = config.stash.get(CHANNEL_KEY, None)
    if channel is not None:
        shutil.rmtree(channel, ignore_errors=True)

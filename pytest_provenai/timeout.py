"""The per-case time limit (``--provenai-timeout S``).

A case's test is interrupted after S seconds (SIGALRM, on POSIX in the main thread, like
pytest-timeout's signal method) and fails with one line naming the case and the limit, so a
hung pipeline or model call cannot hold the run. Elsewhere (no SIGALRM, not the main thread)
and for items that run no case, nothing is limited.
"""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from types import FrameType

from pytest_provenai import options as opt
from pytest_provenai.errors import CaseTimeout
from pytest_provenai.selection import CaseParam

__all__ = ["case_time_limit"]


@contextlib.contextmanager
def case_time_limit(case: CaseParam | None, limit: float | None) -> Iterator[None]:
    """Run the body (a test call) under ``limit`` seconds when it runs a ``case``."""
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

    def expire(signum: int, frame: FrameType | None) -> None:
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

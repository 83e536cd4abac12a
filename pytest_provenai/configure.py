"""Configure time: the plugin's options, markers and the run's checked settings.

* :func:`add_options` — every ``--provenai-*`` option and its ini twin (``options.OPTIONS``).
* :func:`add_markers` — the gate markers, ``provenai_kind`` and ``provenai_sets``.
* :func:`new_session` — the run's :class:`~pytest_provenai.session.ProvenaiSession`: the
  settings from the command line (else the ini), checked before any test runs (the backend,
  model or pipeline can be imported, the index folder is one, each served model's server
  answers — probed once, on the controller, the reports kept for the summary); a bad value
  is one ``UsageError`` line. The controller (or the only process) also sweeps the run
  cache's stale temp files, left by a process killed mid-write.
"""

from __future__ import annotations

from typing import Any

import pytest

from pytest_provenai import gates as gates_mod
from pytest_provenai import options as opt
from pytest_provenai._io import sweep_stale_temps
from pytest_provenai.errors import ProvenaiError
from pytest_provenai.selection import MARKER_LINES
from pytest_provenai.session import ProvenaiSession

__all__ = ["SERVED_KEY", "add_markers", "add_options", "new_session", "served"]

SERVED_KEY = pytest.StashKey[list[Any]]()  # openai backend: each server's probe report


def add_options(parser: pytest.Parser) -> None:
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


def add_markers(config: pytest.Config) -> None:
    for marker, text in gates_mod.MARKERS.items():
        config.addinivalue_line("markers", f"{marker}(**gates): {text}")
    for line in MARKER_LINES:
        config.addinivalue_line("markers", line)


def _settings(config: pytest.Config) -> opt.Settings:
    """The run's settings, checked (module docstring); ProvenaiError on a bad one."""

    def get(name: str) -> Any:
        value = config.getoption(name)
        return value if value is not None else config.getini(name)

    settings = opt.parse_settings(get, config.rootpath)
    if (
        config.getoption(opt.PIPELINE)
        or config.getoption(opt.BACKEND)
        or config.getoption(opt.MODEL)
    ):
        from pytest_provenai.subject.subject import preflight

        preflight(backend=settings.backend, model=settings.model, pipeline=settings.pipeline)
    if settings.backend == "transformers":  # its environment knob, before any case runs
        from pytest_provenai.subject.backends.transformers_backend import ablation_batch_rows

        ablation_batch_rows("cpu")
    if settings.retrieval == "index" and settings.index is not None:
        from pytest_provenai.retrieval.index import check_index_folder

        try:  # cheap (no hashing); digests and the embedding model are checked at load
            check_index_folder(settings.index, digests=False)
        except ProvenaiError as exc:
            raise ProvenaiError(f"{opt.flag(opt.INDEX)}: {exc}") from None
    if settings.served is not None and not hasattr(config, "workerinput"):  # once, controller
        from pytest_provenai.subject.backends.served import check_servers

        config.stash[SERVED_KEY] = check_servers(
            [settings.served.options(u, settings.model) for u in settings.served.base_urls],
            needs_kl=settings.ablation == "exact",
        )
    return settings


def new_session(config: pytest.Config) -> ProvenaiSession:
    """The run's session (module docstring)."""
    try:
        settings = _settings(config)
    except ProvenaiError as exc:
        raise pytest.UsageError(str(exc)) from None
    worker_id = getattr(config, "workerinput", {}).get("workerid")
    if worker_id is None and settings.cache is not None:
        sweep_stale_temps(settings.cache)  # left by a process killed mid-write
    return ProvenaiSession(
        settings=settings,
        worker_id=worker_id,
        rootdir=config.rootpath,
        ini_sets=tuple(config.getini(opt.FIXTURES)),
    )


def served(config: pytest.Config) -> list[Any]:
    """Each served model's probe report (the summary prints them); empty without one."""
    return config.stash.get(SERVED_KEY, [])

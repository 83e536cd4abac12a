pytest_plugins = ["pytester"]

# The tests import torch themselves (MiniLM, the real model) on every xdist worker, which
# share the cores: OpenMP threads must wait passively, as the plugin sets before an audit
# imports torch (spinning ones made the conversation refit 262 s beside the ablation tests
# instead of 65 s alone; docs/performance.md).
from pytest_provenai.subject.backends.libraries import prepare_torch_import  # noqa: E402

prepare_torch_import()


# -- a real llama.cpp server for the served-model tests (tests/served.py) ----------------------
import importlib.util  # noqa: E402
import os  # noqa: E402
from collections.abc import Iterator  # noqa: E402

import pytest  # noqa: E402


@pytest.fixture(scope="session")
def llama_base_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Base URL of llama-cpp-python's server on 127.0.0.1 serving the default GGUF, with an
    API key (tests/served.py: API_KEY); one server for the whole session, always stopped."""
    if importlib.util.find_spec("llama_cpp") is None:
        pytest.skip("llama-cpp-python is not installed (pip install 'pytest-provenai[serve]')")
    from served import llama_server

    log = tmp_path_factory.mktemp("llama-server") / "server.log"
    with llama_server(log=log) as url:
        yield url


# -- inner pytest runs: the session's model cache, a user's environment -----------------------
from pytest_provenai.subject.backends.default_model import (  # noqa: E402
    CACHE_ENV,
    model_cache_root,
)

# Where this process keeps the converted default model, read before any test runs: pytester
# points HOME at each test's own folder, so without this every inner run that touches the
# default model would convert the GGUF again into that folder (517 MB written, ~27 s of a
# core; five such runs per session in tests/test_served_plugin.py, test_sharding.py and
# test_warm_run.py).
MODEL_CACHE = str(model_cache_root())


@pytest.fixture(autouse=True)
def _inner_runs_share_the_converted_model(monkeypatch: pytest.MonkeyPatch) -> None:
    """Inner runs use this process's converted-model cache (a user's shell has one cache
    too); a test that needs another cache root sets or removes $PROVENAI_MODEL_CACHE
    itself."""
    if not os.environ.get(CACHE_ENV):
        monkeypatch.setenv(CACHE_ENV, MODEL_CACHE)


@pytest.fixture(autouse=True)
def _inner_runs_are_not_xdist_workers(monkeypatch: pytest.MonkeyPatch) -> None:
    """A pytest that a test starts (pytester) inherits this process's environment; when the
    plugin's own tests run under ``-n 2`` that holds ``PYTEST_XDIST_WORKER``, and syrupy then
    takes the inner run's controller for a worker: no snapshot report, no unused-snapshot
    accounting. Inner runs get the environment a user's shell has."""
    for name in ("PYTEST_XDIST_WORKER", "PYTEST_XDIST_WORKER_COUNT", "PYTEST_XDIST_TESTRUNUID"):
        monkeypatch.delenv(name, raising=False)


# -- the order files are handed to xdist workers ----------------------------------------------
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Files holding a ``slow`` test first, collection order kept otherwise. ``make test``
    hands files to two workers in this order (``--dist loadfile --no-loadscope-reorder``), so
    both start on the long real-model and server files and end on short ones. xdist's own
    order (the files with most tests first) put the one-test real-model files last: in the
    clean-clone run at 805412b the last 1 % of the tests took at least 7 minutes."""
    slow = {item.path for item in items if item.get_closest_marker("slow") is not None}
    items.sort(key=lambda item: item.path not in slow)

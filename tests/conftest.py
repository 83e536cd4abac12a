pytest_plugins = ["pytester"]


# -- a real llama.cpp server for the served-model tests (tests/served.py) ----------------------
import importlib.util  # noqa: E402
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

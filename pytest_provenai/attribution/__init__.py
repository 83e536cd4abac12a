"""The attribution layer (ProvenanceGuard): claim-level source verification of answers
written from tool outputs.

Pure parts only (no model code, no pytest): evidence objects, claim decomposition,
stated-attribution families, routing on given vectors, protected values, the verdict and
repair logic, the trace graph and the metrics. The model-backed verifier (MiniLM features,
random forest, optional LM feature and NLI folder) is :mod:`pytest_provenai.verify`; the MCP
server, trace capture and the MCP-driven subject are :mod:`pytest_provenai.toolserver`.
"""

from __future__ import annotations

import importlib.util
import sys

from pytest_provenai.errors import AttributionError

__all__ = ["EXTRA", "require_extra"]

EXTRA = "attribution"
"""The pyproject extra that installs the attribution layer's libraries (mcp, scikit-learn,
and dateparser / pint / number-parser for values compared by meaning)."""

_PACKAGES = {"mcp": "mcp", "sklearn": "scikit-learn"}


def require_extra(module: str) -> None:
    """Raise :class:`AttributionError` (one line naming the extra) when ``module`` — ``mcp``
    or ``sklearn`` — is not installed."""
    try:
        spec = importlib.util.find_spec(module)
    except (ImportError, ValueError):  # e.g. sys.modules[module] is None: import blocked
        spec = None
    if spec is None or (module in sys.modules and sys.modules[module] is None):
        package = _PACKAGES.get(module, module)
        raise AttributionError(
            f"{package} is not installed; install the {EXTRA} extra: "
            f"pip install 'pytest-provenai[{EXTRA}]'"
        )

"""pytest-provenai: audit retrieval-grounded QA for provenance as ordinary pytest tests.

Importing this package is cheap: no torch, mlx or model is loaded until a backend is used.
"""

import os as _os

# OpenMP threads that spin while waiting make torch on a shared 2-core machine ~25x slower
# (measured: 0.5 vs 13.7 tok/s). PASSIVE must be set before torch is first imported (mlx-lm
# imports it too), so it is set here, as a default the user's environment overrides.
_os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")

__version__ = "0.1.0"

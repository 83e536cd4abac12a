"""The backends' libraries: install hints, which modules are missing, installed versions, the
environment torch must see before its first import, and the mlx BLAS preload.

Nothing here imports torch or mlx at module level.
"""

from __future__ import annotations

import ctypes
import importlib.util
import os
import sys
import warnings
from importlib import metadata

from ...errors import BackendError

INSTALL_HINT = {
    "transformers": "pip install 'pytest-provenai[transformers]'",
    "mlx": "pip install 'mlx[cpu]' mlx-lm",  # on macOS: pip install mlx mlx-lm
}


def prepare_torch_import() -> None:
    """Call before the first ``import torch``: default ``OMP_WAIT_POLICY=PASSIVE``.

    torch's OpenMP threads otherwise spin while waiting; when the cores are shared (xdist
    workers, other jobs) that made 2-thread decoding ~25× slower than 1 thread on a busy
    2-core machine (0.5 vs 13.7 tokens/s); with PASSIVE it stays close to 1 thread. Only
    a default: an explicit ``OMP_WAIT_POLICY`` wins, and once torch is imported the
    OpenMP runtime has read its environment, so this is then a no-op.
    """
    if "torch" not in sys.modules:
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")


# --------------------------------------------------------------------------- mlx BLAS

MLX_BLAS_ENV = "PROVENAI_MLX_BLAS"
_preloaded_blas: list[str] = []


def preload_mlx_blas() -> str | None:
    """Opt-in: make mlx[cpu] on Linux use a fast CBLAS (e.g. OpenBLAS) for its matmuls.

    The Linux ``mlx[cpu]`` wheel bundles the reference (Netlib) BLAS, ~2.4 GFLOP/s on
    sgemm. mlx resolves ``cblas_sgemm`` at load time through the global symbol scope, so a
    CBLAS library loaded with RTLD_GLOBAL *before* ``mlx.core`` takes over (same effect as
    ``LD_PRELOAD``). Set ``$PROVENAI_MLX_BLAS`` to its path, e.g.
    ``/usr/lib/x86_64-linux-gnu/libopenblas.so.0`` (Debian: apt install
    libopenblas0-pthread). Not an mlx-supported configuration (mlx's own route is
    building it from source against OpenBLAS); results stay within float32 rounding.
    Returns the path loaded, or None.
    """
    path = os.environ.get(MLX_BLAS_ENV, "").strip()
    if not path or not sys.platform.startswith("linux"):
        return None
    if path in _preloaded_blas:
        return path
    if "mlx.core" in sys.modules:
        warnings.warn(
            f"${MLX_BLAS_ENV} is set but mlx.core was imported before pytest-provenai could "
            "load it; it has no effect in this process (use LD_PRELOAD instead)",
            RuntimeWarning,
            stacklevel=2,
        )
        return None
    try:
        ctypes.CDLL(path, mode=getattr(os, "RTLD_GLOBAL", ctypes.RTLD_GLOBAL))
    except OSError as exc:
        raise BackendError(
            f"${MLX_BLAS_ENV}={path!r} cannot be loaded ({exc}); point it at a CBLAS shared "
            "library such as /usr/lib/x86_64-linux-gnu/libopenblas.so.0, or unset it"
        ) from exc
    _preloaded_blas.append(path)
    return path


def preloaded_mlx_blas() -> str | None:
    return _preloaded_blas[0] if _preloaded_blas else None


def library_versions(*dists: str) -> dict[str, str]:
    out: dict[str, str] = {}
    for dist in dists:
        try:
            out[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            continue
    return out


def missing_modules(*modules: str) -> list[str]:
    missing = []
    for mod in modules:
        try:
            found = importlib.util.find_spec(mod) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            missing.append(mod)
    return missing

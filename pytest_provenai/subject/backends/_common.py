"""Shared by the real backends: model resolution, devices, stop tokens, versions.

Nothing here imports torch or mlx at module level.
"""

from __future__ import annotations

import ctypes
import importlib.util
import json
import os
import re
import sys
import warnings
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path
from typing import Any

from ...errors import BackendError
from .base import Capabilities, Decoding, Generation, Identity
from .default_model import (
    ConvertedModel,
    ensure_converted,
    ensure_default_model,
    folder_weights_digest,
    read_marker,
)

BACKENDS: tuple[str, ...] = ("transformers", "mlx")
DEVICES_HELP = "cpu, cuda:N, mps, auto"

INSTALL_HINT = {
    "transformers": "pip install 'pytest-provenai[transformers]'",
    "mlx": "pip install 'mlx[cpu]' mlx-lm",  # on macOS: pip install mlx mlx-lm
}

_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*(?:/[A-Za-z0-9][\w.-]*)?$")
_DEVICE = re.compile(r"^(cpu|mps|auto|cuda(?::(\d+))?)$")


@dataclass(frozen=True)
class ResolvedModel:
    """A model the backends can load: an HF-format folder plus its identity."""

    folder: Path
    name: str
    weights_sha256: str
    source: str  # "default" | "gguf" | "folder" | "hub"
    converted: ConvertedModel | None = None


# --------------------------------------------------------------------------- models


def folder_identity(folder: Path) -> tuple[str, str]:
    """(name, weights_sha256) of an HF folder.

    A folder converted from a GGUF carries a marker: its name and the GGUF sha256 are
    used, so the converted folder has the same identity as the GGUF it came from.
    Otherwise: the folder's name and the digest over its sorted weight files.
    """
    marker = read_marker(folder)
    if marker is not None:
        name = str(marker.get("name") or folder.name)
        return name, str(marker["gguf_sha256"])
    return folder.name, folder_weights_digest(folder)


def _check_model_folder(folder: Path, shown: str) -> None:
    if not (folder / "config.json").is_file():
        raise BackendError(
            f"model folder {shown} is not a model: it has no config.json; pass a folder "
            "saved with save_pretrained (config.json + weights + tokenizer) or a .gguf file"
        )


def resolve_model(
    model: str | os.PathLike[str] | None, cache_dir: str | os.PathLike[str] | None = None
) -> ResolvedModel:
    """Turn the ``model`` option into a loadable folder; never downloads.

    ``None`` → the embedded default model (converted once into the cache). An existing
    folder → used as is (must hold config.json). An existing ``.gguf`` file → converted
    once, keyed by its sha256. Anything else that looks like a hub id → looked up in the
    local Hugging Face cache only.
    """
    if model is None:
        conv = ensure_default_model(cache_dir)
        return ResolvedModel(conv.folder, conv.name, conv.gguf_sha256, "default", conv)
    text = os.fspath(model)
    if text.strip() == "":
        raise BackendError(
            "empty model name; leave the model option unset for the embedded default model "
            "or pass a local folder, a .gguf file or a hub id already in the local HF cache"
        )
    path = Path(text).expanduser()
    if path.exists():
        if path.is_dir():
            _check_model_folder(path, text)
            name, sha = folder_identity(path)
            return ResolvedModel(path.resolve(), name, sha, "folder")
        if path.suffix.lower() == ".gguf":
            conv = ensure_converted(path, cache_dir)
            return ResolvedModel(conv.folder, conv.name, conv.gguf_sha256, "gguf", conv)
        raise BackendError(
            f"model file {text} is not a .gguf file; pass a model folder "
            "(config.json + weights + tokenizer) or a .gguf file"
        )
    looks_like_path = (
        text.lower().endswith(".gguf")
        or os.path.isabs(text)
        or text.startswith((".", "~"))
        or "\\" in text
        or text.count("/") > 1
        or not _HUB_ID.match(text)
    )
    if looks_like_path:
        raise BackendError(
            f"model file or folder not found: {text}; pass an existing model folder or "
            ".gguf file (or leave the model option unset for the embedded default model)"
        )
    return _resolve_hub_id(text)


def _resolve_hub_id(repo_id: str) -> ResolvedModel:
    not_cached = (
        f"model {repo_id!r} is not a local folder or file and is not in the local "
        "Hugging Face cache; pytest-provenai never downloads models: pass a local model "
        "folder (saved with save_pretrained) or a .gguf file"
    )
    if importlib.util.find_spec("huggingface_hub") is None:
        raise BackendError(not_cached)
    try:
        from huggingface_hub import snapshot_download

        # local_files_only: a cache lookup, never a network request.
        folder = Path(snapshot_download(repo_id=repo_id, local_files_only=True))
    except Exception as exc:
        raise BackendError(not_cached) from exc
    _check_model_folder(folder, f"{folder} (hub id {repo_id})")
    _, sha = folder_identity(folder)
    return ResolvedModel(folder, repo_id, sha, "hub")


# --------------------------------------------------------------------------- devices


def parse_device(device: str) -> str:
    """Validate a device spelling; returns it normalised (``cuda`` → ``cuda:0``)."""
    spec = str(device).strip().lower()
    m = _DEVICE.match(spec)
    if m is None:
        raise BackendError(f"unknown device {device!r}; allowed: {DEVICES_HELP}")
    if spec == "cuda":
        return "cuda:0"
    return spec


def resolve_device_torch(device: str) -> str:
    spec = parse_device(device)
    prepare_torch_import()
    import torch

    cuda_ok = bool(torch.cuda.is_available())
    mps_backend = getattr(torch.backends, "mps", None)
    mps_ok = bool(mps_backend is not None and mps_backend.is_available())
    if spec == "auto":
        return "cuda:0" if cuda_ok else ("mps" if mps_ok else "cpu")
    if spec.startswith("cuda"):
        index = int(spec.split(":")[1])
        if not cuda_ok:
            raise BackendError(
                f"device {spec} requested but torch sees no CUDA device on this machine; "
                "use --provenai-device cpu (or auto)"
            )
        count = int(torch.cuda.device_count())
        if index >= count:
            raise BackendError(
                f"device {spec} requested but this machine has {count} CUDA device(s) "
                f"(cuda:0..cuda:{count - 1}); use one of those or auto"
            )
        return spec
    if spec == "mps" and not mps_ok:
        raise BackendError(
            "device mps requested but torch sees no Apple Metal (MPS) device on this "
            "machine; use --provenai-device cpu (or auto)"
        )
    return spec


def resolve_device_mlx(device: str) -> str:
    spec = parse_device(device)
    preload_mlx_blas()
    import mlx.core as mx

    metal_ok = bool(mx.metal.is_available())
    cuda_mod = getattr(mx, "cuda", None)
    cuda_ok = bool(cuda_mod is not None and cuda_mod.is_available())
    if spec == "auto":
        return "mps" if metal_ok else ("cuda:0" if cuda_ok else "cpu")
    if spec == "mps" and not metal_ok:
        raise BackendError(
            "device mps requested but mlx sees no Metal GPU on this machine; "
            "use --provenai-device cpu (or auto)"
        )
    if spec.startswith("cuda"):
        if not cuda_ok:
            raise BackendError(
                f"device {spec} requested but this mlx build has no CUDA device on this "
                "machine (it needs pip install 'mlx[cuda]' and an NVIDIA GPU); use "
                "--provenai-device cpu (or auto)"
            )
        if spec != "cuda:0":
            raise BackendError(f"device {spec}: the mlx backend uses one GPU; pass cuda:0")
    return spec


# --------------------------------------------------------------------------- torch env


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


# --------------------------------------------------------------------------- misc


def _as_id_list(value: Any) -> list[int]:
    if value is None:
        return []
    if isinstance(value, (list, tuple)):
        return [int(v) for v in value if v is not None]
    return [int(value)]


def stop_token_ids(folder: Path, tokenizer: Any) -> frozenset[int]:
    """Token ids that end a greedy generation, identical for both backends: the
    ``eos_token_id`` of generation_config.json (else config.json) plus the tokenizer's."""
    ids: set[int] = set()
    for fname in ("generation_config.json", "config.json"):
        try:
            data = json.loads((folder / fname).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(data, dict) and data.get("eos_token_id") is not None:
            ids.update(_as_id_list(data["eos_token_id"]))
            break
    tok_eos = getattr(tokenizer, "eos_token_id", None)
    if tok_eos is not None:
        ids.update(_as_id_list(tok_eos))
    return frozenset(ids)


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


GENERIC_TOKENIZER = "TokenizersBackend"
"""The tokenizer class a converted folder's tokenizer_config.json names (transformers >= 5):
the generic fast tokenizer, which ``AutoTokenizer`` picks for it too."""


def load_tokenizer(folder: Path) -> Any:
    """The model folder's Hugging Face tokenizer, as ``AutoTokenizer`` loads it.

    ``AutoTokenizer`` reads the model config to choose a class, which imports torch (seconds).
    A folder this package converted from a GGUF (it carries the marker) names the generic
    fast tokenizer, which is loaded directly: rendering the chat template and counting tokens
    then import no torch, so a warm run loads nothing heavy. Other folders go through
    ``AutoTokenizer`` (tests check the two agree on the embedded default model).
    """
    prepare_torch_import()
    try:
        config = json.loads((folder / "tokenizer_config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        config = None
    generic = (
        read_marker(folder) is not None
        and isinstance(config, dict)
        and config.get("tokenizer_class") == GENERIC_TOKENIZER
    )
    try:  # (no progress bars to silence: quiet_hf_progress would import torch)
        if generic:
            from transformers import PreTrainedTokenizerFast

            return PreTrainedTokenizerFast.from_pretrained(str(folder), local_files_only=True)
        from transformers import AutoTokenizer

        return AutoTokenizer.from_pretrained(str(folder), local_files_only=True)
    except (OSError, ValueError, KeyError, RuntimeError) as exc:
        raise BackendError(
            f"could not load the tokenizer of the model folder {folder}: "
            f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
        ) from exc


def render_chat_with(tokenizer: Any, messages: list[dict[str, str]]) -> str:
    """The tokenizer's chat template with the generation prompt, as a string."""
    if not getattr(tokenizer, "chat_template", None):
        raise BackendError(
            "this model's tokenizer has no chat template; pass a fully rendered prompt "
            "string or use an instruct/chat model"
        )
    text = tokenizer.apply_chat_template(messages, add_generation_prompt=True, tokenize=False)
    if not isinstance(text, str):  # pragma: no cover - defensive
        raise BackendError("the chat template did not render to a string")
    return text


def encode_prompt(tokenizer: Any, prompt: str) -> list[int]:
    """Prompt → token ids, adding no special tokens (the rendered chat template already
    holds them); special-token text in the prompt maps to the special ids."""
    if not prompt:
        raise BackendError("empty prompt: nothing to generate from")
    ids = tokenizer(prompt, add_special_tokens=False)["input_ids"]
    return [int(i) for i in ids]


def check_decoding_strategy(strategy: str) -> None:
    if strategy != "greedy":
        raise BackendError(
            f"decoding strategy {strategy!r} is not supported; only 'greedy' decoding is"
        )


def check_continuation_ids(continuation_ids: list[int], vocab: int) -> list[int]:
    """The ids as ints; BackendError if any lies outside ``[0, vocab)``."""
    cont = [int(t) for t in continuation_ids]
    bad = [t for t in cont if not 0 <= t < vocab]
    if bad:
        raise BackendError(f"continuation token ids out of range [0, {vocab}): {bad[:5]}")
    return cont


def open_model_folder(
    folder: str | os.PathLike[str],
    decoding: Decoding | None,
    name: str | None,
    weights_sha256: str | None,
) -> tuple[Path, Decoding, str, str]:
    """Checks shared by the local-folder backends: greedy decoding, a config.json, and the
    identity (name, weights digest) read from the folder where the caller gave none."""
    path = Path(folder)
    dec = decoding or Decoding()
    check_decoding_strategy(dec.strategy)
    if not (path / "config.json").is_file():
        raise BackendError(f"model folder {path} is not a model: it has no config.json")
    if name is None or weights_sha256 is None:
        fname, fsha = folder_identity(path)
        name = name or fname
        weights_sha256 = weights_sha256 or fsha
    return path, dec, name, weights_sha256


class LocalModelGenerator:
    """The protocol parts both local HF-folder backends share: identity, capabilities,
    chat rendering and prompt encoding through the model's own HF tokenizer."""

    tokenizer: Any
    _identity: Identity

    @property
    def identity(self) -> Identity:
        return self._identity

    @property
    def capabilities(self) -> Capabilities:
        return Capabilities(token_ids=True, logprobs=True, score=True)

    def render_chat(self, messages: list[dict[str, str]]) -> str:
        return render_chat_with(self.tokenizer, messages)

    def encode(self, prompt: str) -> list[int]:
        return encode_prompt(self.tokenizer, prompt)

    def decode(self, token_ids: list[int]) -> str:
        return str(self.tokenizer.decode(token_ids, skip_special_tokens=True))


def first_divergence(rows: Any, continuation: list[int], margin: float) -> int | None:
    """First position ``t`` where greedy decoding under ``rows`` may not pick
    ``continuation[t]``: its argmax differs, or the best and second-best log-probabilities are
    not more than ``margin`` apart (a near tie the teacher-forced numbers cannot settle).
    ``None`` when every position is a clear win for the realised token."""
    import numpy as np

    arr = np.asarray(rows)
    for t, tok in enumerate(continuation):
        row = arr[t]
        best = int(np.argmax(row))
        if best != tok:
            return t
        top2 = np.partition(row, -2)[-2:]
        if not float(top2[1] - top2[0]) > margin:  # a near tie (NaN counts as one)
            return t
    return None


def common_prefix(a: list[int], b: list[int]) -> int:
    """Length of the longest common prefix of two token lists."""
    n = min(len(a), len(b))
    i = 0
    while i < n and a[i] == b[i]:
        i += 1
    return i


def shared_prefix(encoded: list[list[int]]) -> int:
    """The token prefix all prompts share, leaving each at least its last token to feed."""
    shared = min(len(e) - 1 for e in encoded)
    for e in encoded[1:]:
        shared = min(shared, common_prefix(encoded[0], e))
    return max(shared, 0)


def generate_tokens(prompt_tokens: int, generation: Generation) -> int:
    """Tokens a backend's ``generate`` feeds: the prompt, then every output token but the
    last (which is only predicted)."""
    return prompt_tokens + max(len(generation.token_ids) - 1, 0)

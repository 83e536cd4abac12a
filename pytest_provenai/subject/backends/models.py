"""Model resolution: the embedded default model, a local Hugging Face folder, a .gguf file or a
cached hub id -> a :class:`ResolvedModel` (folder + identity).

Nothing here imports torch or mlx at module level.
"""

from __future__ import annotations

import importlib.util
import os
import re
from dataclasses import dataclass
from pathlib import Path

from ...errors import BackendError
from .default_model import (
    ConvertedModel,
    ensure_converted,
    ensure_default_model,
    folder_weights_digest,
    read_marker,
)

_HUB_ID = re.compile(r"^[A-Za-z0-9][\w.-]*(?:/[A-Za-z0-9][\w.-]*)?$")


@dataclass(frozen=True)
class ResolvedModel:
    """A model the backends can load: an HF-format folder plus its identity."""

    folder: Path
    name: str
    weights_sha256: str
    source: str  # "default" | "gguf" | "folder" | "hub"
    converted: ConvertedModel | None = None


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

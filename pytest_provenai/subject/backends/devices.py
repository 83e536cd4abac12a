"""Device spellings (cpu, cuda:N, mps, auto) checked and resolved for torch or mlx.

Nothing here imports torch or mlx at module level.
"""

from __future__ import annotations

import re

from ...errors import BackendError
from .libraries import preload_mlx_blas, prepare_torch_import

DEVICES_HELP = "cpu, cuda:N, mps, auto"
_DEVICE = re.compile(r"^(cpu|mps|auto|cuda(?::(\d+))?)$")


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

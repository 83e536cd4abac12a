"""The ``transformers`` backend: a local HF-format folder run by PyTorch (float32).

Conventions (shared with the mlx backend):

- ``generate`` decodes greedily with its own KV-cached loop (no sampling, no repetition
  penalty, no generation_config overrides). ``token_ids`` are all tokens the model chose,
  *including* the final stop (EOS) token when ``finish_reason == "stop"`` (as
  ``model.generate`` returns them); ``logprobs[i]`` is the log-softmax probability of
  ``token_ids[i]`` at its step, so both lists have one entry per decoding step. ``text``
  is the decode of ``token_ids`` with special tokens skipped (so it never shows the EOS).
  ``finish_reason`` is ``"length"`` when ``max_new_tokens`` ran out first.
- ``score(prompt, continuation_ids)`` returns a numpy ``float32`` array of shape
  ``[len(continuation_ids), vocab]``: row ``i`` is the full-vocabulary log-softmax that
  predicts ``continuation_ids[i]`` given the prompt and ``continuation_ids[:i]`` (teacher
  forcing, one forward pass). ``score(p, g.token_ids)[i, g.token_ids[i]] ≈ g.logprobs[i]``.
- Prompts are tokenised without adding special tokens: the rendered chat template already
  contains them.
"""

from __future__ import annotations

import inspect
import os
from typing import Any

from ...errors import BackendError
from ._common import (
    LocalModelGenerator,
    check_continuation_ids,
    library_versions,
    open_model_folder,
    prepare_torch_import,
    resolve_device_torch,
    stop_token_ids,
)
from .base import Decoding, Generation, Identity
from .default_model import quiet_hf_progress

THREADS_ENV = "PROVENAI_NUM_THREADS"

_threads_configured = False


def default_num_threads() -> int:
    """CPU threads for one worker: all usable cores divided among xdist workers."""
    try:
        cores = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cores = os.cpu_count() or 1
    try:
        workers = int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "1"))
    except ValueError:
        workers = 1
    return max(1, cores // max(1, workers))


def configure_torch_threads() -> int | None:
    """Set torch's intra-op threads once per process.

    ``$PROVENAI_NUM_THREADS`` wins; else, if ``$OMP_NUM_THREADS`` is set, torch's own
    choice is kept; else cores // xdist workers (so ``-n 2`` on 2 cores does not run 2×2
    threads). Returns the number set, or None when left alone.
    """
    global _threads_configured
    import torch

    if _threads_configured:
        return None
    _threads_configured = True
    env = os.environ.get(THREADS_ENV, "").strip()
    if env:
        try:
            n = int(env)
        except ValueError as exc:
            raise BackendError(
                f"${THREADS_ENV}={env!r} is not a whole number; set it to e.g. 4 or unset it"
            ) from exc
        if n < 1:
            raise BackendError(f"${THREADS_ENV}={env!r} must be at least 1")
    elif os.environ.get("OMP_NUM_THREADS"):
        return None
    else:
        n = default_num_threads()
    torch.set_num_threads(n)
    return n


class TransformersGenerator(LocalModelGenerator):
    """A local HF-format model run greedily by transformers/torch in float32."""

    def __init__(
        self,
        folder: str | os.PathLike[str],
        *,
        device: str = "cpu",
        decoding: Decoding | None = None,
        name: str | None = None,
        weights_sha256: str | None = None,
    ) -> None:
        prepare_torch_import()
        import torch
        import transformers

        tf: Any = transformers  # the stubs are partial; keep mypy --strict quiet
        self.folder, self.decoding, name, weights_sha256 = open_model_folder(
            folder, decoding, name, weights_sha256
        )
        self.device = resolve_device_torch(device)
        if self.device == "cpu":
            configure_torch_threads()
        try:
            with quiet_hf_progress():
                self.tokenizer: Any = tf.AutoTokenizer.from_pretrained(
                    str(self.folder), local_files_only=True
                )
                model: Any = tf.AutoModelForCausalLM.from_pretrained(
                    str(self.folder), dtype=torch.float32, local_files_only=True
                )
        except (OSError, ValueError, KeyError, RuntimeError) as exc:
            raise BackendError(
                f"transformers could not load the model folder {self.folder}: "
                f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}"
            ) from exc
        model.eval()
        self.model: Any = model.to(self.device)
        self._torch_device = torch.device(self.device)
        self._supports_keep = True
        # transformers >= 5.2x renamed the KV-cache argument/output past_key_values → cache.
        params = inspect.signature(self.model.forward).parameters
        self._cache_kw = "cache" if "cache" in params else "past_key_values"
        self.stop_ids = stop_token_ids(self.folder, self.tokenizer)
        self._identity = Identity(
            backend="transformers",
            name=name,
            weights_sha256=weights_sha256,
            dtype="float32",
            decoding=self.decoding,
            device=self.device,
            libraries=library_versions("torch", "transformers"),
        )

    # ------------------------------------------------------------------ protocol
    # identity, capabilities, render_chat and encode come from LocalModelGenerator

    @property
    def vocab_size(self) -> int:
        return int(self.model.get_output_embeddings().weight.shape[0])

    def generate(self, prompt: str) -> Generation:
        import torch

        prompt_ids = self.encode(prompt)
        max_new = int(self.decoding.max_new_tokens)
        token_ids: list[int] = []
        logprobs: list[float] = []
        finish = "length"
        if max_new <= 0:
            return Generation(text="", token_ids=[], logprobs=[], finish_reason="length")
        dev = self._torch_device
        with torch.inference_mode():
            out = self._forward(
                torch.tensor([prompt_ids], dtype=torch.long, device=dev), keep=1, cache=True
            )
            past = self._cache_of(out)
            logits = out.logits[0, -1]
            for step in range(max_new):
                lp = torch.log_softmax(logits.to(torch.float32), dim=-1)
                tok = int(torch.argmax(lp).item())
                token_ids.append(tok)
                logprobs.append(float(lp[tok].item()))
                if tok in self.stop_ids:
                    finish = "stop"
                    break
                if step == max_new - 1:
                    break
                out = self.model(
                    input_ids=torch.tensor([[tok]], dtype=torch.long, device=dev),
                    use_cache=True,
                    **{self._cache_kw: past},
                )
                past = self._cache_of(out)
                logits = out.logits[0, -1]
        text = self.tokenizer.decode(token_ids, skip_special_tokens=True)
        return Generation(
            text=str(text), token_ids=token_ids, logprobs=logprobs, finish_reason=finish
        )

    def _cache_of(self, out: Any) -> Any:
        return getattr(out, self._cache_kw)

    def _forward(self, input_ids: Any, *, keep: int, cache: bool) -> Any:
        """One forward pass computing logits only for the last ``keep`` positions
        (``logits_to_keep``; models without that argument compute all and are sliced)."""
        if self._supports_keep:
            try:
                return self.model(input_ids=input_ids, use_cache=cache, logits_to_keep=keep)
            except TypeError:
                self._supports_keep = False
        return self.model(input_ids=input_ids, use_cache=cache)

    def score(self, prompt: str, continuation_ids: list[int]) -> Any:
        """numpy float32 ``[len(continuation_ids), vocab]`` log-softmax rows (see module)."""
        import numpy as np
        import torch

        prompt_ids = self.encode(prompt)
        vocab = self.vocab_size
        cont = check_continuation_ids(continuation_ids, vocab)
        if not cont:
            return np.zeros((0, vocab), dtype=np.float32)
        # The last continuation token is only predicted, never fed.
        ids = prompt_ids + cont[:-1]
        with torch.inference_mode():
            out = self._forward(
                torch.tensor([ids], dtype=torch.long, device=self._torch_device),
                keep=len(cont),
                cache=False,
            )
            lp = torch.log_softmax(out.logits[0, -len(cont) :].to(torch.float32), dim=-1)
        arr = lp.cpu().numpy().astype(np.float32, copy=False)
        assert arr.shape == (len(cont), vocab), arr.shape
        return arr

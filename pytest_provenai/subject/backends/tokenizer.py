"""A model folder's Hugging Face tokenizer: loading it, stop tokens, chat rendering, prompt
encoding, continuation id checks.

Nothing here imports torch or mlx at module level.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from ...errors import BackendError
from .default_model import read_marker
from .libraries import prepare_torch_import


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


def check_continuation_ids(continuation_ids: list[int], vocab: int) -> list[int]:
    """The ids as ints; BackendError if any lies outside ``[0, vocab)``."""
    cont = [int(t) for t in continuation_ids]
    bad = [t for t in cont if not 0 <= t < vocab]
    if bad:
        raise BackendError(f"continuation token ids out of range [0, {vocab}): {bad[:5]}")
    return cont

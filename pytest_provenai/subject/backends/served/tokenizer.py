"""The served model's local tokenizer (``--provenai-tokenizer``): its chat template renders
the prompt, its ids line up the server's output.
"""

from __future__ import annotations

from typing import Any

from ....errors import BackendError
from ..tokenizer import stop_token_ids


def load_tokenizer(spec: str | None) -> tuple[Any, frozenset[int], str]:
    """(HF tokenizer, stop ids, name) of ``--provenai-tokenizer``."""
    if not spec:
        raise BackendError(
            "--provenai-backend openai needs --provenai-tokenizer: a local folder, .gguf file "
            "or cached hub id of the served model, whose chat template renders the prompt "
            "(the server only continues it)"
        )
    from ..libraries import missing_modules
    from ..models import resolve_model

    missing = missing_modules("transformers")
    if missing:
        raise BackendError(
            "--provenai-tokenizer needs transformers; install pytest-provenai[transformers]"
        )
    model = None if spec == "default" else spec
    try:
        resolved = resolve_model(model)
    except BackendError as exc:
        raise BackendError(f"--provenai-tokenizer {spec}: {exc}") from None
    import transformers

    tok = transformers.AutoTokenizer.from_pretrained(str(resolved.folder))
    return tok, stop_token_ids(resolved.folder, tok), resolved.name

"""Short real prompts for the fast-path tests on the default model: three invented facts and
a question, rendered with a generator's chat template, and the prompt with each fact left
out — a leave-one-out ablation small enough for a test (mlx[cpu] on Linux is slow)."""

from __future__ import annotations

from typing import Any

import pytest

from pytest_provenai.errors import BackendError
from pytest_provenai.subject.backends import Decoding, load_generator
from pytest_provenai.subject.backends import default_model as dm

FACTS = ["Zorbia's capital is Quellin.", "Zorbia is cold.", "Quellin has a river."]
ASK = " Question: What is the capital of Zorbia?"


def facts_prompt(gen: Any, facts: list[str]) -> str:
    """``facts`` and the question, as ``gen``'s chat template renders them."""
    return str(
        gen.render_chat(
            [
                {"role": "system", "content": "Answer briefly."},
                {"role": "user", "content": "Facts: " + " ".join(facts) + ASK},
            ]
        )
    )


def ablated(gen: Any) -> tuple[str, list[str]]:
    """The prompt with every fact, and the prompts with one fact left out, in fact order."""
    return facts_prompt(gen, FACTS), [
        facts_prompt(gen, [f for f in FACTS if f != x]) for x in FACTS
    ]


def default_transformers(*, max_new_tokens: int) -> Any:
    """The default model on the transformers backend, or the test skipped with the reason
    when its GGUF is not installed."""
    try:
        dm.default_gguf_path()
    except BackendError as exc:
        pytest.skip(str(exc))
    return load_generator("transformers", None, decoding=Decoding(max_new_tokens=max_new_tokens))

"""The real default model (SmolLM2-135M-Instruct) as the tests that exercise it load it."""

from __future__ import annotations

from pytest_provenai.subject.subject import ModelSubject, make_subject


def default_subject(max_new_tokens: int) -> ModelSubject:
    """The default model through the transformers backend, on the CPU, with no run cache:
    every path computes for real."""
    s = make_subject(
        backend="transformers",
        model=None,
        pipeline=None,
        device="cpu",
        max_new_tokens=max_new_tokens,
        cache_root=None,
    )
    assert isinstance(s, ModelSubject)
    return s

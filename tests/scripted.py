"""A scripted generator for the plugin's own tests (test double: lives in tests/ only).

Used as ``--provenai-backend scripted:factory --provenai-model SCRIPT.json``. The script maps
a substring of the question to the raw output to return; ``"*"`` is the fallback. Every call
to ``generate`` appends one line to ``$PROVENAI_SCRIPTED_CALLS`` (if set), so tests can count
model calls across xdist workers. ``$PROVENAI_SCRIPTED_DELAY`` (seconds) makes each call
that long, for tests that need a run to be busy (cache pruning during a run, progress).
"""

from __future__ import annotations

import json
import os
import time
from typing import Any

from pytest_provenai.subject.backends.base import (
    Capabilities,
    Decoding,
    Generation,
    Identity,
)


class ScriptedGenerator:
    def __init__(
        self,
        script: dict[str, str],
        name: str,
        decoding: Decoding,
        device: str,
        *,
        identity: Identity | None = None,
    ) -> None:
        self.script = script
        self.calls = 0  # calls in this process (the calls file counts across workers)
        self._identity = identity or Identity(
            backend="scripted",
            name=name,
            weights_sha256="0" * 64,
            dtype="none",
            decoding=decoding,
            device=device,
        )

    @property
    def identity(self) -> Identity:
        return self._identity

    @property
    def capabilities(self) -> Capabilities:
        return Capabilities(token_ids=False, logprobs=False, score=False)

    def render_chat(self, messages: list[dict[str, str]]) -> str:
        return "".join(f"<{m['role']}>\n{m['content']}\n" for m in messages) + "<assistant>\n"

    def generate(self, prompt: str) -> Generation:
        self.calls += 1
        calls = os.environ.get("PROVENAI_SCRIPTED_CALLS")
        if calls:
            with open(calls, "a", encoding="utf-8") as fh:
                fh.write(f"{os.getpid()}\n")
        delay = os.environ.get("PROVENAI_SCRIPTED_DELAY")
        if delay:
            time.sleep(float(delay))
        for key, out in self.script.items():
            if key != "*" and key in prompt:
                return Generation(text=out)
        return Generation(text=self.script.get("*", "Answer: unknown"))

    def score(self, prompt: str, continuation_ids: list[int]) -> Any:
        raise NotImplementedError("the scripted generator has no logits")


def factory(model: str | None, device: str, decoding: Decoding) -> ScriptedGenerator:
    script: dict[str, str] = {}
    name = "scripted"
    if model:
        with open(model, encoding="utf-8") as fh:
            data = json.load(fh)
        script = data.get("script", {})
        name = data.get("name", name)
    return ScriptedGenerator(script, name, decoding, device)

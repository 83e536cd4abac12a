"""Exposure treatments decoded together on the real default model (SmolLM2-135M-Instruct).

Its own file (not ``test_ablation_model.py``'s module) so that ``--dist loadfile`` can give it
to the other worker: it needs the model, not the ablation runs.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from real_model import default_subject

from pytest_provenai.frozen.load import load_fixture_set
from pytest_provenai.frozen.model import GroundedCase
from pytest_provenai.subject.backends.lazy import LazyGenerator
from pytest_provenai.subject.exposure import build_view, run_treatments
from pytest_provenai.subject.subject import ModelSubject

pytestmark = pytest.mark.slow

REPO = Path(__file__).resolve().parents[1]
# The treatments' answers come first; 32 new tokens took 75 s alone on one thread where 64
# took 166 s (docs/performance.md, test suite cost), and the near-tie replay below still
# happens.
MAX_NEW_TOKENS = 32
WIDE_MARGIN = 0.2  # nats: wide enough that some steps go to generate (the test asserts one)


@pytest.fixture(scope="module")
def subject() -> ModelSubject:
    return default_subject(MAX_NEW_TOKENS)


def test_exposure_treatments_decoded_together_equal_one_by_one(subject: ModelSubject) -> None:
    """The five treatments share the KV of everything before the aid slot and are decoded in
    one batch; each output is the one ``generate`` gives alone, also when near ties send
    steps to ``generate``."""
    case = load_fixture_set(REPO / "fixtures" / "synthetic-exposure").cases[0]
    assert isinstance(case, GroundedCase)
    runs = run_treatments(subject, case)
    gen = subject.generator
    assert isinstance(gen, LazyGenerator)
    for treatment, run in runs.items():
        alone = gen.generate(build_view(case, treatment, gen.render_chat).prompt)
        assert run.generation.token_ids == alone.token_ids, treatment
        assert run.generation.text == alone.text
    prompts = [runs[t].view.prompt for t in ("label", "expose")]
    batch = gen.generate_many(prompts, margin=WIDE_MARGIN)
    assert batch.decode.fallbacks >= 1, "no near tie at this margin: the replay was not taken"
    assert [g.token_ids for g in batch.generations] == [
        runs[t].generation.token_ids for t in ("label", "expose")
    ]

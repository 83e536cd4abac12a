"""The conversation model: small talk the rules miss is non-factual on the model's word,
only where a claim could not be checking anything; everything else fails closed."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from pytest_provenai.attribution.conversation import (
    CONVERSATION_VERSION,
    ConversationModel,
    read_conversation_model,
)
from pytest_provenai.attribution.lexical import FeatureChecker, LexicalEncoder
from pytest_provenai.attribution.pipeline import Verifier
from pytest_provenai.cli import main
from pytest_provenai.errors import AttributionError
from pytest_provenai.frozen.traces import ToolCall, ToolOutput, collect_evidence

REPO = Path(__file__).resolve().parent.parent
SHIPPED = REPO / "pytest_provenai" / "verify" / "data" / "conversation.json"

# An invented trace (not from any fixture set).
TOOLS = {"get_permit": "record"}
PERMIT = "permit: HX-4471\nholder: Orla Penhaligon\nzone: harbour\nstatus: active"
CALLS = (
    ToolCall(0, "get_permit", {"permit": "HX-4471"}, "0" * 64, (ToolOutput("p-1", PERMIT, ""),)),
)


def small_talk_model(**kw: Any) -> ConversationModel:
    """A model that calls a sentence conversation when it says "skies" (the lexical
    encoder's bucket of that word weighs 40; everything else nothing)."""
    direction = LexicalEncoder().embed(["skies"])[0]
    fields: dict[str, Any] = {
        "weights": tuple(40.0 * x for x in direction),
        "bias": -5.0,
        "threshold": 0.8,
        "max_shared": 0.25,
        "encoder": LexicalEncoder().identity,
        "sha256": "test",
    }
    fields.update(kw)
    return ConversationModel(**fields)


def verifier(model: ConversationModel | None, encoder: LexicalEncoder | None = None) -> Verifier:
    encoder = encoder or LexicalEncoder()
    return Verifier(encoder, FeatureChecker("premise_overlap", 0.6), conversation=model)


def test_small_talk_the_rules_miss_is_non_factual_on_the_models_word() -> None:
    evidence = collect_evidence(CALLS, TOOLS)
    text = "Orla Penhaligon holds an active harbour permit. Clear skies for the regatta."
    encoder = LexicalEncoder()
    with_model = verifier(small_talk_model(), encoder).verify(text, evidence, TOOLS)
    second = with_model.claims[1]
    assert (second.verdict, second.reasons, second.factual) == (
        "non_factual",
        ("conversational",),
        False,
    )
    assert with_model.verdict.allowed
    # without the model the sentence is an unsupported claim and blocks the answer
    without = verifier(None).verify(text, evidence, TOOLS)
    assert without.claims[1].factual and not without.verdict.allowed


@pytest.mark.parametrize(
    "sentence",
    [
        "Clear skies on 14 May.",  # a value: it asserts something checkable
        "Orla Penhaligon's harbour skies are active.",  # shares most words with the evidence
        "According to the permit record, skies are clear.",  # names a source
    ],
)
def test_a_claim_that_could_be_checking_something_stays_factual(sentence: str) -> None:
    encoder = LexicalEncoder()
    result = verifier(small_talk_model(), encoder).verify(
        sentence, collect_evidence(CALLS, TOOLS), TOOLS
    )
    assert result.claims[0].factual and result.claims[0].verdict != "non_factual"


class FailingOnSkies(LexicalEncoder):
    def embed(self, texts: Any) -> list[list[float]]:
        if any("skies" in t for t in texts):
            raise RuntimeError("encoder down")
        return super().embed(texts)


def test_an_encoder_that_fails_leaves_the_claim_checked() -> None:
    encoder = FailingOnSkies()
    result = verifier(small_talk_model(), encoder).verify(
        "Clear skies for the regatta.", collect_evidence(CALLS, TOOLS), TOOLS
    )
    assert result.claims[0].verdict != "non_factual"
    assert not result.verdict.allowed


def test_a_model_fitted_with_another_encoder_is_refused() -> None:
    model = small_talk_model(encoder={"name": "other"})
    with pytest.raises(AttributionError, match="fitted with another encoder"):
        verifier(model)


def test_a_bad_model_file_names_the_file_and_field(tmp_path: Path) -> None:
    missing = tmp_path / "none.json"
    with pytest.raises(AttributionError, match=r"none\.json: conversation model unreadable"):
        read_conversation_model(missing)
    body = json.loads(SHIPPED.read_text(encoding="utf-8"))
    for field, value in (("threshold", 1.5), ("weights", []), ("version", 99)):
        bad = tmp_path / f"bad-{field}.json"
        bad.write_text(json.dumps({**body, field: value}), encoding="utf-8")
        with pytest.raises(AttributionError, match=rf"bad-{field}.json: field '{field}'"):
            read_conversation_model(bad)


def test_the_shipped_model_reads_and_scores() -> None:
    model = read_conversation_model(SHIPPED)
    assert json.loads(SHIPPED.read_text(encoding="utf-8"))["version"] == CONVERSATION_VERSION
    assert 0.5 <= model.threshold < 1 and len(model.weights) == 384
    with pytest.raises(ValueError, match="dimensions"):
        model.probability([0.0] * 3)


def test_fitting_on_a_test_split_is_refused(capsys: pytest.CaptureFixture[str]) -> None:
    rc = main(
        ["verify", "conversation", "--handwritten", str(REPO / "fixtures/handwritten-claims-test")]
    )
    err = capsys.readouterr().err.strip().splitlines()
    assert rc == 2 and len(err) == 1
    assert "handwritten-claims-test: only sets named *-train or *-validation" in err[0]


@pytest.mark.slow  # MiniLM encodes 4,154 sentences, one at a time
def test_the_shipped_model_is_what_the_train_and_validation_sets_fit() -> None:
    """Fitting again on the shipped hand-written train/validation sets gives the shipped
    file (the same sets' digests, the same threshold, weights within float noise): the
    model is data derived by ``provenai verify conversation``, never edited by hand."""
    from pytest_provenai.verify.conversation import fit_conversation
    from pytest_provenai.verify.encoder import MiniLMEncoder

    shipped = json.loads(SHIPPED.read_text(encoding="utf-8"))
    sets = [REPO / "fixtures" / f"handwritten-claims-{s}" for s in ("train", "validation")]
    again = fit_conversation(MiniLMEncoder(), sets)
    assert again["sets"] == shipped["sets"]
    assert again["threshold"] == shipped["threshold"]
    assert again["sweep"] == shipped["sweep"]
    assert max(abs(a - b) for a, b in zip(again["weights"], shipped["weights"], strict=True)) < 1e-3
    assert abs(again["bias"] - shipped["bias"]) < 1e-3

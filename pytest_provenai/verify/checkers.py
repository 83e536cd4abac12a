"""Model-backed parts for the attribution pipeline: the forest checker, the LM feature and a
local NLI classifier folder.

* :class:`ForestChecker` — the calibrated random forest as a
  :class:`~pytest_provenai.attribution.pipeline.SupportChecker`;
* :class:`LMFeature` — ``--provenai-verify-lm``: the default model's teacher-forced mean
  log-probability of the claim's tokens after ``Evidence: <premise>\\nStatement:``
  (``lm_logprob``) and its gain over the same claim after ``Statement:`` alone (``lm_gain``);
* :class:`NLIFolder` — ``--provenai-nli-model DIR``: a local sequence-classification folder
  whose ``id2label`` names entailment, neutral and contradiction; its probabilities go into
  each claim's decision and a contradiction at ≥ 0.9 blocks the claim.
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from pytest_provenai.attribution.verdict import Judgement
from pytest_provenai.errors import AttributionError
from pytest_provenai.subject.backends.base import Identity
from pytest_provenai.verify.forest import Calibrator

__all__ = ["NLI_LABELS", "ForestChecker", "LMFeature", "NLIFolder", "Scorer"]

NLI_LABELS = ("entailment", "neutral", "contradiction")


class ForestChecker:
    """The calibrated forest; ``threshold`` defaults to the one chosen on validation."""

    def __init__(self, calibrator: Calibrator, threshold: float | None = None) -> None:
        self.calibrator = calibrator
        self._threshold = calibrator.threshold if threshold is None else threshold

    @property
    def identity(self) -> dict[str, Any]:
        return {**self.calibrator.identity, "threshold": self._threshold}

    @property
    def threshold(self) -> float:
        return self._threshold

    def score(self, rows: Sequence[Mapping[str, Any]]) -> list[Judgement]:
        return self.calibrator.predict(rows)


@runtime_checkable
class Scorer(Protocol):
    """What the LM feature needs of a generator: identity, prompt encoding and
    teacher-forced log-softmax rows (the transformers and mlx backends have all three)."""

    @property
    def identity(self) -> Identity: ...

    def encode(self, prompt: str) -> list[int]: ...

    def score(self, prompt: str, continuation_ids: list[int]) -> Any: ...


class LMFeature:
    """``lm_logprob`` and ``lm_gain`` of a claim given its premise (see the module doc)."""

    def __init__(self, scorer: Scorer) -> None:
        self.scorer = scorer
        self._plain: dict[str, float] = {}

    @property
    def identity(self) -> dict[str, Any]:
        return {"feature": "lm_logprob/lm_gain", "model": self.scorer.identity.model_key()}

    def _mean_logprob(self, prompt: str, claim: str) -> float:
        ids = self.scorer.encode(" " + claim)
        if not ids:
            return 0.0
        rows = self.scorer.score(prompt, ids)
        total = math.fsum(float(rows[i][t]) for i, t in enumerate(ids))
        return total / len(ids)

    def features(self, premise: str, claim: str) -> dict[str, float]:
        with_premise = self._mean_logprob(f"Evidence: {premise}\nStatement:", claim)
        plain = self._plain.get(claim)
        if plain is None:
            plain = self._mean_logprob("Statement:", claim)
            self._plain[claim] = plain
        return {"lm_logprob": with_premise, "lm_gain": with_premise - plain}


class NLIFolder:
    """A local NLI classifier (transformers sequence classification), loaded offline."""

    def __init__(self, folder: str | os.PathLike[str], *, device: str = "cpu") -> None:
        path = Path(folder)
        if not (path / "config.json").is_file():
            raise AttributionError(
                f"--provenai-nli-model {folder}: not a model folder (no config.json)"
            )
        import json

        config = json.loads((path / "config.json").read_text(encoding="utf-8"))
        id2label = {int(k): str(v).lower() for k, v in config.get("id2label", {}).items()}
        found = {label: i for i, label in id2label.items() if label in NLI_LABELS}
        if set(found) != set(NLI_LABELS):
            raise AttributionError(
                f"--provenai-nli-model {folder}: config.json id2label must name entailment, "
                f"neutral and contradiction; it names {sorted(id2label.values())}"
            )
        from pytest_provenai.retrieval.embed import hub_off
        from pytest_provenai.subject.backends.models import folder_identity

        hub_off()
        from transformers import AutoModelForSequenceClassification, AutoTokenizer

        self.folder = path
        self.device = device
        self.labels = found
        self.tokenizer = AutoTokenizer.from_pretrained(str(path), local_files_only=True)
        self.model = AutoModelForSequenceClassification.from_pretrained(
            str(path), local_files_only=True
        ).eval()
        self.model.to(device)
        name, digest = folder_identity(path)
        self._identity = {"name": name, "sha256": digest, "labels": dict(sorted(found.items()))}

    @property
    def identity(self) -> dict[str, Any]:
        return self._identity

    def judge(self, premise: str, claim: str) -> dict[str, float]:
        import torch

        enc = self.tokenizer(
            premise, claim, truncation="only_first", max_length=512, return_tensors="pt"
        ).to(self.device)
        with torch.inference_mode():
            logits = self.model(**enc).logits[0].float()
        probs = torch.softmax(logits, dim=-1).tolist()
        return {label: float(probs[i]) for label, i in self.labels.items()}

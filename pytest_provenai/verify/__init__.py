"""The model-backed verifier of the attribution layer.

* :mod:`~pytest_provenai.verify.encoder` — MiniLM (the retrieval stage's offline
  all-MiniLM-L6-v2) as the pipeline's :class:`~pytest_provenai.attribution.pipeline.Encoder`:
  sentence vectors and contextual token alignment;
* :mod:`~pytest_provenai.verify.derive` — labelled claims derived from HotpotQA supporting
  facts, their feature table, and the held-out claims test set;
* :mod:`~pytest_provenai.verify.forest` — the random-forest calibrator (support probability
  + verdict head), threshold chosen on validation, fitted once per process;
* :mod:`~pytest_provenai.verify.checkers` — :class:`SupportChecker` implementations (forest,
  lexical-only and routing-only baselines), the LM feature and the local NLI folder;
* :mod:`~pytest_provenai.verify.cli` — ``provenai verify derive``.

Importing this package is cheap; torch, sentence-transformers and scikit-learn load on use.
No pytest import.
"""

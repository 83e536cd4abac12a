"""pytest-provenai: audit retrieval-grounded QA for provenance as ordinary pytest tests.

Importing this package is cheap and changes nothing in the environment: no torch, mlx or
model is loaded until a backend is used, and ``OMP_WAIT_POLICY=PASSIVE`` (a default the
user's environment overrides) is set only when an audit is about to load a model
(``subject.backends.libraries.prepare_torch_import``).
"""

__version__ = "0.1.0"

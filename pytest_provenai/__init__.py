"""pytest-provenai: audit retrieval-grounded QA for provenance as ordinary pytest tests.

Importing this package is cheap: no torch, mlx or model is loaded until a backend is used.
"""

__version__ = "0.1.0"

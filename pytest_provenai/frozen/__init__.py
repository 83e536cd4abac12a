"""Frozen fixtures: schemas, strict loading with digest checks, and dataset freezing."""

from pytest_provenai.frozen.model import Case, FixtureSet, Source, SupportingFact

__all__ = ["Case", "FixtureSet", "Source", "SupportingFact"]

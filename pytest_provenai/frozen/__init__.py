"""Frozen fixtures: schemas, strict loading with digest checks, and dataset freezing."""

from pytest_provenai.frozen.freeze import freeze_hotpotqa
from pytest_provenai.frozen.load import load_fixture_set, load_fixture_sets, parse_case
from pytest_provenai.frozen.model import Case, FixtureSet, Source, SupportingFact

__all__ = [
    "Case",
    "FixtureSet",
    "Source",
    "SupportingFact",
    "freeze_hotpotqa",
    "load_fixture_set",
    "load_fixture_sets",
    "parse_case",
]

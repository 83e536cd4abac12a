"""The public API: everything a suite or a user's code imports, from one place.

The names live in their own modules (``audit/``, ``subject/``, ``frozen/``); this module
only re-exports them, so a suite reads ``from pytest_provenai.api import fidelity_record``
and the private layout can change without breaking it. Importing it loads no model library.
"""

from __future__ import annotations

from pytest_provenai.audit.derivation import derivation_record
from pytest_provenai.audit.fidelity import fidelity_record
from pytest_provenai.audit.metrics import Metric
from pytest_provenai.audit.provenance import exposure_record
from pytest_provenai.audit.quotation import quotation_record
from pytest_provenai.fixture_types import AttributionFn, InfluenceFn, RecordFn
from pytest_provenai.frozen.load import load_fixture_set
from pytest_provenai.frozen.model import (
    AnyCase,
    Case,
    DerivationCase,
    FixtureSet,
    GroundedCase,
    QuotationCase,
    Source,
)
from pytest_provenai.metric_registry import METRICS, MetricEntry
from pytest_provenai.subject.backends.base import Generator
from pytest_provenai.subject.exposure import TREATMENTS, ExposureRun, run_treatments
from pytest_provenai.subject.subject import ModelRunner, Subject
from pytest_provenai.subject.trace import Resource, Trace

__all__ = [
    "METRICS",
    "TREATMENTS",
    "AnyCase",
    "AttributionFn",
    "Case",
    "DerivationCase",
    "ExposureRun",
    "FixtureSet",
    "Generator",
    "GroundedCase",
    "InfluenceFn",
    "Metric",
    "MetricEntry",
    "ModelRunner",
    "QuotationCase",
    "RecordFn",
    "Resource",
    "Source",
    "Subject",
    "Trace",
    "derivation_record",
    "exposure_record",
    "fidelity_record",
    "load_fixture_set",
    "quotation_record",
    "run_treatments",
]

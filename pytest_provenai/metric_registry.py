"""The one table of every metric: layer, gate marker, :class:`Metric`, label, order.

Read by the gates (which marker accepts which metric), the terminal summary (labels, which
fidelity metrics it prints), the HTML view (order, direction, description) and the run
comparison (which metrics a test's summaries hold). The metrics themselves are defined where
their records are built (``audit/*.py``, ``attribution/metrics.py``); this module only
collects them, so it sits above ``audit`` and ``attribution`` and under ``gates``.

Pure Python, no pytest import.
"""

from __future__ import annotations

from dataclasses import dataclass

from pytest_provenai.attribution.metrics import ATTRIBUTION_METRICS
from pytest_provenai.audit.fidelity import FIDELITY_METRICS
from pytest_provenai.audit.influence import INFLUENCE_METRICS
from pytest_provenai.audit.metrics import Direction, Metric
from pytest_provenai.audit.provenance import MATRIX_COLUMNS as _MATRIX_FLAGS
from pytest_provenai.audit.provenance import PROVENANCE_METRICS
from pytest_provenai.audit.retrieval import RETRIEVAL_METRICS

__all__ = [
    "LAYERS",
    "MARKERS",
    "MARKER_METRICS",
    "MATRIX_COLUMNS",
    "METRICS",
    "TERMINAL_FIDELITY",
    "MetricEntry",
    "label",
    "layer_metrics",
]


@dataclass(frozen=True)
class MetricEntry:
    """One metric: the results summary it appears in (``layer``), the gate marker that
    accepts it (None: not gateable), the metric, its display label and its place in report
    order."""

    layer: str
    marker: str | None
    metric: Metric
    label: str
    order: int

    @property
    def name(self) -> str:
        return self.metric.name

    @property
    def direction(self) -> Direction:
        return self.metric.direction


# Markers and what their gates measure, for ``pytest --markers``.
MARKERS: dict[str, str] = {
    "fidelity": "answer correctness and citation fidelity gates, e.g. "
    "fidelity(answer_accuracy=0.2, citation_f1=0.3)",
    "influence": "resource-influence gates (leave-one-resource-out ablation), e.g. "
    "influence(influence_measured=1.0, citation_influence_gap_rate=0.9)",
    "provenance": "provenance release gates (quotations, aids, no-answer cases)",
    "attribution": "claim-level attribution gates over MCP tool traces, conflation probes and "
    "live MCP sessions, e.g. attribution(reject_f1=0.7, probe_block_rate=1.0)",
}

# marker -> the metrics its gates may name (the layers' own tables, not copies).
MARKER_METRICS: dict[str, dict[str, Metric]] = {
    "fidelity": FIDELITY_METRICS,
    "influence": INFLUENCE_METRICS,
    "provenance": PROVENANCE_METRICS,
    "attribution": ATTRIBUTION_METRICS,
}

# (layer, gate marker, its metrics) in report order
LAYERS: tuple[tuple[str, str | None, dict[str, Metric]], ...] = (
    ("fidelity", "fidelity", FIDELITY_METRICS),
    ("retrieval", None, RETRIEVAL_METRICS),
    ("influence", "influence", INFLUENCE_METRICS),
    ("provenance", "provenance", PROVENANCE_METRICS),
    ("attribution", "attribution", ATTRIBUTION_METRICS),
)

_LABELS: dict[str, str] = {
    # the fidelity block of the terminal summary, in the order it is printed
    "answer_accuracy": "answer accuracy",
    "answer_em": "answer EM",
    "answer_f1": "answer F1",
    "citation_precision": "citation P  (tau=1.0)",
    "citation_recall": "citation R  (tau=1.0)",
    "citation_f1": "citation F  (tau=1.0)",
    "citation_precision_semantic": "citation P  (tau=0.34)",
    "citation_recall_semantic": "citation R  (tau=0.34)",
    "citation_f1_semantic": "citation F  (tau=0.34)",
    "citation_free_rate": "citation-free answers",
    # the exposure matrix's columns
    "aid_value_leak_rate": "aid-value leak",
    "aid_citation_rate": "aid citation",
    "abstention_rate": "abstention",
}

METRICS: dict[str, MetricEntry] = {}
"""Every metric by name, in report order (names are unique across layers)."""
for _layer, _marker, _table in LAYERS:
    for _name, _metric in _table.items():
        if _name in METRICS:  # pragma: no cover - a table error, caught at import
            raise ValueError(f"metric {_name!r} is defined by two layers")
        METRICS[_name] = MetricEntry(
            _layer, _marker, _metric, _LABELS.get(_name, _name), len(METRICS)
        )

TERMINAL_FIDELITY: tuple[str, ...] = tuple(n for n in FIDELITY_METRICS if n in _LABELS)
"""The fidelity metrics the terminal summary prints (with their labels), in order."""

MATRIX_COLUMNS: tuple[tuple[str, str], ...] = tuple(
    (column, _LABELS[column]) for column, _flag in _MATRIX_FLAGS
)
"""(column, label) of the exposure matrix, as the terminal summary and the HTML report
show it."""


def label(name: str) -> str:
    """The display label of a metric (its name when it has none)."""
    return _LABELS.get(name, name)


def layer_metrics(layer: str) -> dict[str, Metric]:
    """The metrics of one layer (``fidelity``, ``retrieval``, ``influence``,
    ``provenance``, ``attribution``), in report order."""
    for name, _marker, table in LAYERS:
        if name == layer:
            return table
    raise KeyError(layer)

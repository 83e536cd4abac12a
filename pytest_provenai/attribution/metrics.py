"""The attribution layer's metrics (marker ``attribution``), as ProvenanceGuard defines them.

Claim metrics are **pooled over claims**: each record contributes its counts, the population
value is the ratio of the sums, and the bootstrap resamples records (traces). Only labelled
claims count (fixture traces and probes; a live MCP session has no gold labels):

* reject/block precision, recall, F1 — the reject class is not-enough-evidence,
  unsupported, contradicted and conflated (gold); predicted: any verdict that rejects
  (``failed`` included). Non-factual gold claims are outside the binary task;
* verdict accuracy and macro F1 over the gold classes present (six-way, with non-factual);
* source accuracy (routed = gold source) and source+relation accuracy (and the verdict
  right), over claims with a gold source;
* decomposition recall, precision and literal exactness (rule-based decomposer against the
  gold claims);
* answer verdict accuracy (allow/block as expected) and repair pass rate (blocked answers
  whose repaired text the same verifier allows);
* probe block rate, conflation-label rate, wrong-attribution-retained rate and control allow
  rate (one probe per record: exact binomial intervals);
* trace-graph completeness (every resource the generator saw came from a recorded call) and
  gold access (a live session called ``get_supporting_facts``);
* answer allow rate of live sessions.

Pure Python.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from pytest_provenai.attribution.verdict import REJECT_VERDICTS
from pytest_provenai.audit.metrics import Metric, aggregate, metric_table
from pytest_provenai.audit.stats import DEFAULT_SEED

__all__ = ["ATTRIBUTION_METRICS", "GOLD_REJECT", "attribution_summary", "labelled_claims"]

#: Gold verdicts of the reject/block class.
GOLD_REJECT = frozenset({"not_enough_evidence", "unsupported", "contradicted", "conflated"})


def _answers(record: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    answers: list[Mapping[str, Any]] = record["attribution"]["answers"]
    return answers


def labelled_claims(record: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
    """Every claim of the record that carries a gold label."""
    for answer in _answers(record):
        for claim in answer["claims"]:
            if claim.get("gold") is not None:
                yield claim


def _binary(record: Mapping[str, Any]) -> dict[str, int]:
    tp = fp = fn = tn = 0
    for c in labelled_claims(record):
        gold = c["gold"]["verdict"]
        if gold == "non_factual":
            continue
        should = gold in GOLD_REJECT
        did = c["verdict"] in REJECT_VERDICTS
        tp += should and did
        fp += did and not should
        fn += should and not did
        tn += not should and not did
    return {"tp": tp, "fp": fp, "fn": fn, "tn": tn}


def _reject_precision(r: Mapping[str, Any]) -> tuple[float, float]:
    b = _binary(r)
    return b["tp"], b["tp"] + b["fp"]


def _reject_recall(r: Mapping[str, Any]) -> tuple[float, float]:
    b = _binary(r)
    return b["tp"], b["tp"] + b["fn"]


def _reject_f1(r: Mapping[str, Any]) -> tuple[float, float]:
    b = _binary(r)
    return 2 * b["tp"], 2 * b["tp"] + b["fp"] + b["fn"]


def _verdict_accuracy(r: Mapping[str, Any]) -> tuple[float, float]:
    claims = list(labelled_claims(r))
    return sum(c["verdict"] == c["gold"]["verdict"] for c in claims), len(claims)


def _confusion(r: Mapping[str, Any]) -> dict[str, float]:
    out: dict[str, float] = {}
    for c in labelled_claims(r):
        gold, got = c["gold"]["verdict"], c["verdict"]
        out.setdefault(f"support:{gold}", 0.0)
        out[f"support:{gold}"] += 1
        if gold == got:
            out[f"tp:{gold}"] = out.get(f"tp:{gold}", 0.0) + 1
        else:
            out[f"fn:{gold}"] = out.get(f"fn:{gold}", 0.0) + 1
            out[f"fp:{got}"] = out.get(f"fp:{got}", 0.0) + 1
    return out


def macro_f1(counts: Mapping[str, float]) -> float | None:
    """Mean F1 over the gold classes present in ``counts`` (``support:<class>`` > 0)."""
    classes = [k.split(":", 1)[1] for k, v in counts.items() if k.startswith("support:") and v]
    if not classes:
        return None
    f1s = []
    for c in classes:
        tp = counts.get(f"tp:{c}", 0.0)
        den = 2 * tp + counts.get(f"fp:{c}", 0.0) + counts.get(f"fn:{c}", 0.0)
        f1s.append(2 * tp / den if den else 0.0)
    return sum(f1s) / len(f1s)


def _eligible(r: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    return [
        c
        for c in labelled_claims(r)
        if c["gold"]["gold_source"] is not None and c["gold"]["verdict"] != "non_factual"
    ]


def _source_accuracy(r: Mapping[str, Any]) -> tuple[float, float]:
    claims = _eligible(r)
    return sum(c["source"] == c["gold"]["gold_source"] for c in claims), len(claims)


def _source_relation(r: Mapping[str, Any]) -> tuple[float, float]:
    claims = _eligible(r)
    hits = sum(
        c["source"] == c["gold"]["gold_source"] and c["verdict"] == c["gold"]["verdict"]
        for c in claims
    )
    return hits, len(claims)


def _decomposition(key_num: str, key_den: str) -> Any:
    def ratio(r: Mapping[str, Any]) -> tuple[float, float]:
        num = den = 0
        for a in _answers(r):
            d = a.get("decomposition")
            if d is not None:
                num += d[key_num]
                den += d[key_den]
        return num, den

    return ratio


def _answer_verdict_accuracy(r: Mapping[str, Any]) -> tuple[float, float]:
    scored = [a for a in _answers(r) if a.get("expected") is not None]
    return sum(a["verdict"]["verdict"] == a["expected"] for a in scored), len(scored)


def _repair_pass(r: Mapping[str, Any]) -> tuple[float, float]:
    blocked = [a for a in _answers(r) if a["verdict"]["verdict"] == "block"]
    return sum(bool(a["repair"]["passed"]) for a in blocked), len(blocked)


def _role(r: Mapping[str, Any], role: str) -> list[Mapping[str, Any]]:
    return [a for a in _answers(r) if a.get("role") == role]


def _probe_blocked(r: Mapping[str, Any]) -> tuple[float, float]:
    probes = _role(r, "probe")
    return sum(a["verdict"]["verdict"] == "block" for a in probes), len(probes)


def _probe_conflated(r: Mapping[str, Any]) -> tuple[float, float]:
    probes = _role(r, "probe")
    hits = sum(
        a["verdict"]["verdict"] == "block" and any(c["verdict"] == "conflated" for c in a["claims"])
        for a in probes
    )
    return hits, len(probes)


def _wrong_retained(r: Mapping[str, Any]) -> tuple[float, float]:
    probe = r["attribution"].get("probe")
    if probe is None:
        return 0, 0
    return int(bool(probe["wrong_attribution_retained"])), 1


def _control_allowed(r: Mapping[str, Any]) -> tuple[float, float]:
    controls = _role(r, "control")
    return sum(a["verdict"]["verdict"] == "allow" for a in controls), len(controls)


def _graph_complete(r: Mapping[str, Any]) -> tuple[float, float]:
    return int(bool(r["attribution"]["graph"]["complete"])), 1


def _gold_access(r: Mapping[str, Any]) -> tuple[float, float]:
    if "gold_access" not in r["attribution"]:
        return 0, 0
    return int(bool(r["attribution"]["gold_access"])), 1


def _session_allowed(r: Mapping[str, Any]) -> tuple[float, float]:
    sessions = _role(r, "session")
    return sum(a["verdict"]["verdict"] == "allow" for a in sessions), len(sessions)


ATTRIBUTION_METRICS: dict[str, Metric] = metric_table(
    [
        Metric(
            "reject_precision",
            "higher",
            "claims rejected that should be / claims rejected (pooled over claims)",
            ratio=_reject_precision,
        ),
        Metric(
            "reject_recall",
            "higher",
            "claims rejected that should be / claims that should be (pooled over claims)",
            ratio=_reject_recall,
        ),
        Metric(
            "reject_f1",
            "higher",
            "reject/block F1: 2TP / (2TP + FP + FN), pooled over claims",
            ratio=_reject_f1,
        ),
        Metric(
            "verdict_accuracy",
            "higher",
            "claims whose verdict is the gold verdict / labelled claims",
            ratio=_verdict_accuracy,
        ),
        Metric(
            "verdict_macro_f1",
            "higher",
            "mean per-class F1 over the gold verdict classes present (pooled counts)",
            counts=_confusion,
            combine=macro_f1,
        ),
        Metric(
            "source_accuracy",
            "higher",
            "claims routed to their gold source / claims with a gold source",
            ratio=_source_accuracy,
        ),
        Metric(
            "source_relation_accuracy",
            "higher",
            "claims routed to their gold source with the gold verdict / claims with a gold source",
            ratio=_source_relation,
        ),
        Metric(
            "decomposition_recall",
            "higher",
            "gold claims covered (> half their bytes) by one decomposed claim",
            ratio=_decomposition("recalled", "gold"),
        ),
        Metric(
            "decomposition_precision",
            "higher",
            "decomposed claims lying (> half their bytes) inside one gold claim",
            ratio=_decomposition("precise", "decomposed"),
        ),
        Metric(
            "literal_exactness",
            "higher",
            "matched value-bearing claims whose decomposition keeps every protected value",
            ratio=_decomposition("values_exact", "value_pairs"),
        ),
        Metric(
            "answer_verdict_accuracy",
            "higher",
            "answers allowed/blocked as their gold claims say (block if any should be)",
            ratio=_answer_verdict_accuracy,
        ),
        Metric(
            "repair_pass_rate",
            "higher",
            "blocked answers whose repaired text the same verifier allows",
            ratio=_repair_pass,
        ),
        Metric(
            "probe_block_rate",
            "higher",
            "conflation probes blocked",
            ratio=_probe_blocked,
            interval="exact_binomial",
        ),
        Metric(
            "conflation_label_rate",
            "higher",
            "conflation probes blocked with the conflation label",
            ratio=_probe_conflated,
            interval="exact_binomial",
        ),
        Metric(
            "wrong_attribution_retained_rate",
            "lower",
            "repaired probe answers that still state the wrong source family",
            ratio=_wrong_retained,
            interval="exact_binomial",
        ),
        Metric(
            "control_allow_rate",
            "higher",
            "control answers (right family stated) allowed",
            ratio=_control_allowed,
            interval="exact_binomial",
        ),
        Metric(
            "trace_graph_complete",
            "higher",
            "cases whose every seen resource came from a recorded tool call",
            ratio=_graph_complete,
            interval="exact_binomial",
        ),
        Metric(
            "gold_access_rate",
            "lower",
            "live sessions that called get_supporting_facts while answering",
            ratio=_gold_access,
            interval="exact_binomial",
        ),
        Metric(
            "session_allow_rate",
            "higher",
            "live MCP-session answers the verifier allows",
            ratio=_session_allowed,
            interval="exact_binomial",
        ),
    ]
)


def attribution_summary(
    records: Sequence[Mapping[str, Any]], *, seed: int = DEFAULT_SEED
) -> dict[str, dict[str, Any]]:
    """The attribution metrics that apply to ``records`` (each record carrying an
    ``attribution`` section), by name: a metric whose every denominator is 0 (probe rates
    over traces, claim metrics over unlabelled live sessions) is left out; one that could not
    read a record is kept with its ``error`` (gates and readers fail closed on it)."""
    return {
        name: summary
        for name, summary in aggregate(records, ATTRIBUTION_METRICS, seed=seed).items()
        if summary["value"] is not None or summary["error"]
    }

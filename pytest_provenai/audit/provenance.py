"""Provenance records of grounded cases, the provenance gate metrics and the exposure matrix.

Records (plain JSON-able dicts, like every record):

* :func:`exposure_record` — one no-answer or exposure case run under the exposure treatments
  (:mod:`pytest_provenai.subject.exposure`): per treatment the answer, its citations (and
  whether one points at a generated aid), whether a value that exists only in an aid appears
  in the answer (``aid_value_leak``), the abstention verdict
  (:mod:`~pytest_provenai.audit.abstention`), the claim accounting
  (:mod:`~pytest_provenai.audit.claims`) and a summary of the generator view.
* quotation and derivation records come from :mod:`~pytest_provenai.audit.quotation` and
  :mod:`~pytest_provenai.audit.derivation`.

:data:`PROVENANCE_METRICS` are the names ``@pytest.mark.provenance(...)`` gates accept. Each
reads one record; a record of another shape makes it raise KeyError/TypeError and a gate over
it fails closed. Per-treatment metrics are named ``<metric>_<treatment>``.

:func:`exposure_matrix` is the population view of exposure records: rows = treatments,
columns = aid-value leak rate, aid-citation rate, abstention rate (each a mean with a
percentile-bootstrap 95% CI resampled by case), n, and each rate's difference from
``baseline`` with a **paired** bootstrap CI (the same cases resampled for both treatments).

Pure Python, no pytest import.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from pytest_provenai.audit.abstention import abstention_verdict
from pytest_provenai.audit.answer import answer_scores
from pytest_provenai.audit.claims import claim_accounting
from pytest_provenai.audit.literals import LiteralIndex, values_present
from pytest_provenai.audit.metrics import (
    Metric,
    MetricSummary,
    aggregate,
    ci_from_json,
    json_ci,
    json_int,
    json_list,
    json_number,
    json_object,
    json_str,
    metric_table,
    summaries_from_json,
    summaries_to_json,
)
from pytest_provenai.audit.stats import (
    DEFAULT_N_RESAMPLES,
    DEFAULT_SEED,
    paired_bootstrap_ci,
    summarise,
)
from pytest_provenai.frozen.model import GroundedCase
from pytest_provenai.subject.exposure import EXPOSURE_PROMPT_VERSION, TREATMENTS, ExposureRun
from pytest_provenai.subject.near_ties import generation_section

__all__ = [
    "AID_CITABLE_TREATMENTS",
    "AID_TEXT_TREATMENTS",
    "MATRIX_COLUMNS",
    "PROVENANCE_METRICS",
    "ExposureMatrix",
    "MatrixCell",
    "ProvenanceSummary",
    "TreatmentRow",
    "exposure_matrix",
    "exposure_record",
    "provenance_summary",
    "treatment_verdict",
]

Extractor = Callable[[Mapping[str, Any]], float | None]

AID_TEXT_TREATMENTS = ("label", "expose", "mislabel")
"""Treatments that show aid text to the generator (a leak is possible)."""

AID_CITABLE_TREATMENTS = ("omit", "label", "mislabel")
"""Treatments that give aids a tag the generator could cite (``expose`` shows none)."""


def _expects_unknown(case: GroundedCase) -> bool:
    return case.expected_answer.strip().lower() == "unknown"


def treatment_verdict(case: GroundedCase, run: ExposureRun) -> dict[str, Any]:
    """The verdict of one treatment's output for ``case``.

    ``cited_ids`` are every citation id in the kept output (``R<i>`` and ``A<j>`` as shown to
    the generator); ``aid_citations`` those naming a generated aid; ``invalid_citations``
    those naming no block. ``aid_value_leak``: an aid-only value appears in the parsed answer
    (``leaked_values``); ``aid_value_in_output``: the aid-only values anywhere in the kept
    output (evidence, reasoning). ``correct``: on a case whose originals do not answer, a
    clean abstention; otherwise the answer contains the expected answer (as a whole token
    sequence or by its protected literals: ``18,000 litres`` holds ``18,000``, see
    :func:`~pytest_provenai.audit.abstention.values_present`; or the ProvenAI match) and no
    aid-only value.
    """
    origins = run.view.origins()
    originals = [o.text for o in case.originals]
    support = LiteralIndex([*originals, case.question])
    claims = claim_accounting(run.generation.text, origins, support=support)
    cited: list[str] = []
    for claim in claims["claims"]:
        for cid in claim["citations"]:
            if cid not in cited:
                cited.append(cid)
    aid_citations = [c for c in cited if origins.get(c) == "generated"]
    answer = run.parsed.answer
    abstention = abstention_verdict(answer, originals, case.question)
    leaked = values_present(answer, case.aid_only_values)
    in_output = values_present(" ".join(c["text"] for c in claims["claims"]), case.aid_only_values)
    if _expects_unknown(case):
        correct = bool(abstention["abstained"])
    else:
        expected = [case.expected_answer]
        found = bool(values_present(answer, expected)) or bool(
            answer_scores(answer, case.expected_answer)["correct"]
        )
        correct = found and not leaked
    return {
        "answer": answer,
        "cited_ids": cited,
        "aid_citations": aid_citations,
        "cites_aid": bool(aid_citations),
        "invalid_citations": [c for c in cited if c not in origins],
        "aid_value_leak": bool(leaked),
        "leaked_values": leaked,
        "aid_value_in_output": in_output,
        "abstained": bool(abstention["abstained"]),
        "abstention": abstention,
        "correct": correct,
        "claims": claims,
        "repairs": list(run.parsed.repairs),
        "view": run.view.summary(),
        "generation": generation_section(run.generation.text, run.near_ties),  # informational
    }


def exposure_record(
    case: GroundedCase,
    runs: Mapping[str, ExposureRun],
    *,
    model: Mapping[str, Any],
    suite: str = "provenance",
) -> dict[str, Any]:
    """The record of one grounded case under its treatments (``runs`` from
    :func:`~pytest_provenai.subject.exposure.run_treatments`; ``model`` the subject's
    ``identity.model_key()``).

    Shape::

        {"case_id", "suite", "fixture_set", "kind", "model", "question", "expected_answer",
         "expects_unknown", "aid_only_values", "aids": [{id, aid_kind, parent}],
         "prompt_version", "exposure": {treatment: treatment_verdict(...)}}

    Raises ValueError when a run belongs to another case or names an unknown treatment.
    """
    exposure: dict[str, Any] = {}
    for t, run in runs.items():
        if t not in TREATMENTS or run.treatment != t:
            raise ValueError(f"run {run.treatment!r} filed under {t!r}; treatments: {TREATMENTS}")
        if run.view.case_id != case.id:
            raise ValueError(f"run for case {run.view.case_id!r}, not {case.id!r}")
        exposure[t] = treatment_verdict(case, run)
    return {
        "case_id": case.id,
        "suite": suite,
        "fixture_set": case.fixture_set,
        "kind": case.kind,
        "model": dict(model),
        "question": case.question,
        "expected_answer": case.expected_answer,
        "expects_unknown": _expects_unknown(case),
        "aid_only_values": list(case.aid_only_values),
        "aids": [{"id": a.id, "aid_kind": a.aid_kind, "parent": a.parent} for a in case.aids],
        "prompt_version": EXPOSURE_PROMPT_VERSION,
        "exposure": exposure,
    }


# --- per-record metric extractors ----------------------------------------------------------


def _flag(x: Any) -> float:
    if not isinstance(x, bool):
        raise TypeError(f"expected a bool, got {x!r}")
    return 1.0 if x else 0.0


def _verdict(record: Mapping[str, Any], treatment: str) -> Mapping[str, Any]:
    verdict = record["exposure"][treatment]
    if not isinstance(verdict, Mapping):
        raise TypeError(f"exposure[{treatment!r}] is not a mapping")
    return verdict


def _share(record: Mapping[str, Any], treatments: Sequence[str], key: str) -> float:
    """Mean of a verdict flag over the given treatments the record holds (at least one)."""
    exposure = record["exposure"]
    have = [t for t in treatments if t in exposure]
    if not have:
        raise KeyError(f"none of the treatments {', '.join(treatments)} was run")
    return math.fsum(_flag(_verdict(record, t)[key]) for t in have) / len(have)


def _per_treatment(key: str, treatment: str) -> Extractor:
    def extract(record: Mapping[str, Any]) -> float | None:
        return _flag(_verdict(record, treatment)[key])

    return extract


def _aid_value_leak(record: Mapping[str, Any]) -> float | None:
    return _share(record, AID_TEXT_TREATMENTS, "aid_value_leak")


def _aid_citation(record: Mapping[str, Any]) -> float | None:
    return _share(record, AID_CITABLE_TREATMENTS, "cites_aid")


def _abstention(record: Mapping[str, Any]) -> float | None:
    return _share(record, TREATMENTS, "abstained")


def _correct_unknown(record: Mapping[str, Any]) -> float | None:
    if record["expects_unknown"] is not True:
        return None  # only defined where the originals do not answer
    return _share(record, TREATMENTS, "correct")


def _correct(record: Mapping[str, Any]) -> float | None:
    return _share(record, TREATMENTS, "correct")


def _fabricated(record: Mapping[str, Any]) -> float | None:
    exposure = record["exposure"]
    have = [t for t in TREATMENTS if t in exposure]
    if not have:
        raise KeyError("no treatment was run")
    return math.fsum(_flag(_verdict(record, t)["abstention"]["fabricated"]) for t in have) / len(
        have
    )


def _claims_complete(record: Mapping[str, Any]) -> float | None:
    exposure = record["exposure"]
    have = [t for t in TREATMENTS if t in exposure]
    if not have:
        raise KeyError("no treatment was run")
    return 1.0 if all(_flag(_verdict(record, t)["claims"]["complete"]) for t in have) else 0.0


def _unresolved_citation(record: Mapping[str, Any]) -> float | None:
    exposure = record["exposure"]
    have = [t for t in TREATMENTS if t in exposure]
    if not have:
        raise KeyError("no treatment was run")
    bad = 0
    for t in have:
        c = _verdict(record, t)["claims"]["citations"]
        bad += (int(c["aid"]) + int(c["unresolved"])) > 0
    return bad / len(have)


def _pooled_claims(record: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    exposure = record["exposure"]
    have = [t for t in TREATMENTS if t in exposure]
    if not have:
        raise KeyError("no treatment was run")
    return [_verdict(record, t)["claims"] for t in have]


def _uncited_claim(record: Mapping[str, Any]) -> float | None:
    layers = _pooled_claims(record)
    n = sum(int(layer["n_claims"]) for layer in layers)
    return sum(int(layer["by_status"]["uncited"]) for layer in layers) / n if n else None


def _original_citation_precision(record: Mapping[str, Any]) -> float | None:
    layers = _pooled_claims(record)
    n = sum(int(layer["citations"]["n"]) for layer in layers)
    return sum(int(layer["citations"]["original"]) for layer in layers) / n if n else None


def _quotation_agreement(record: Mapping[str, Any]) -> float | None:
    return _flag(record["quotation"]["agrees"])


def _false_quote_match(record: Mapping[str, Any]) -> float | None:
    q = record["quotation"]
    if not isinstance(q["outcome"], str) or not isinstance(q["expected"], str):
        raise TypeError("quotation outcome and expected must be strings")
    return 1.0 if q["outcome"] == "quote_match" and q["expected"] != "quote_match" else 0.0


def _derivation_agreement(record: Mapping[str, Any]) -> float | None:
    return _flag(record["derivation"]["agrees"])


def _unwarranted_accepted(record: Mapping[str, Any]) -> float | None:
    d = record["derivation"]
    return 1.0 if _flag(d["warranted"]) and not _flag(d["expected_warranted"]) else 0.0


def _warranted(record: Mapping[str, Any]) -> float | None:
    return _flag(record["derivation"]["warranted"])


PROVENANCE_METRICS: dict[str, Metric] = metric_table(
    [
        # quotation fidelity / resolvable originals (quotation records)
        Metric(
            "quotation_agreement",
            "higher",
            "share of quotation cases whose resolver outcome is the expected one",
            _quotation_agreement,
        ),
        Metric(
            "false_quote_match_rate",
            "lower",
            "share of quotation cases accepted as quote_match that should not be",
            _false_quote_match,
        ),
        # warranted derivations (derivation records)
        Metric(
            "derivation_agreement",
            "higher",
            "share of derivations whose warranted verdict is the expected one",
            _derivation_agreement,
        ),
        Metric(
            "unwarranted_accepted_rate",
            "lower",
            "share of derivations found warranted that the fixture says are not",
            _unwarranted_accepted,
        ),
        Metric("warranted_rate", "higher", "share of derivations found warranted", _warranted),
        # grounded cases under the exposure treatments (exposure records)
        Metric(
            "correct_unknown_rate",
            "higher",
            "no-answer cases: share of treatments answering with a clean explicit unknown "
            "(undefined, so failing closed, on a case the originals answer)",
            _correct_unknown,
        ),
        Metric(
            "abstention_rate", "higher", "share of treatments whose answer abstains", _abstention
        ),
        Metric(
            "correct_rate",
            "higher",
            "share of treatments answering correctly: a clean unknown where the originals do "
            "not answer, else the expected answer with no aid-only value",
            _correct,
        ),
        Metric(
            "fabricated_value_rate",
            "lower",
            "share of treatments whose answer holds a literal no original contains",
            _fabricated,
        ),
        Metric(
            "aid_value_leak_rate",
            "lower",
            "share of aid-text treatments (label, expose, mislabel) leaking an aid-only value",
            _aid_value_leak,
        ),
        Metric(
            "aid_citation_rate",
            "lower",
            "share of aid-tagged treatments (omit, label, mislabel) citing a generated aid",
            _aid_citation,
        ),
        Metric(
            "unresolved_citation_rate",
            "lower",
            "share of treatments citing an id that is not a retained original",
            _unresolved_citation,
        ),
        Metric(
            "claim_accounting_complete",
            "higher",
            "share of cases whose every claim, cited or not, is classified",
            _claims_complete,
        ),
        Metric(
            "uncited_claim_rate",
            "lower",
            "uncited claims over all claims, pooled over a case's treatments",
            _uncited_claim,
        ),
        Metric(
            "original_citation_precision",
            "higher",
            "citations resolving to an original over all citations (undefined without citations)",
            _original_citation_precision,
        ),
    ]
    + [
        m
        for t in TREATMENTS
        for m in (
            Metric(
                f"aid_value_leak_rate_{t}",
                "lower",
                f"share of cases whose {t} answer holds an aid-only value",
                _per_treatment("aid_value_leak", t),
            ),
            Metric(
                f"aid_citation_rate_{t}",
                "lower",
                f"share of cases whose {t} output cites a generated aid",
                _per_treatment("cites_aid", t),
            ),
            Metric(
                f"abstention_rate_{t}",
                "higher",
                f"share of cases whose {t} answer abstains",
                _per_treatment("abstained", t),
            ),
            Metric(
                f"correct_rate_{t}",
                "higher",
                f"share of cases whose {t} answer is correct (a clean unknown where expected)",
                _per_treatment("correct", t),
            ),
        )
    ]
)
"""The provenance metrics, the names ``@pytest.mark.provenance(...)`` gates accept."""


# --- the exposure matrix --------------------------------------------------------------------

MATRIX_COLUMNS: tuple[tuple[str, str], ...] = (
    ("aid_value_leak_rate", "aid_value_leak"),
    ("aid_citation_rate", "cites_aid"),
    ("abstention_rate", "abstained"),
)
"""(column name, verdict flag) of the exposure matrix, in report order."""


@dataclass(frozen=True)
class MatrixCell:
    """One rate of one treatment in the exposure matrix: its mean ``value`` over the ``n``
    cases that ran the treatment with a bootstrap ``ci``, and the paired difference from
    baseline over the ``n_paired`` cases that ran both (None for baseline itself)."""

    value: float | None
    ci: tuple[float, float] | None
    n: int
    delta_vs_baseline: float | None
    delta_ci: tuple[float, float] | None
    n_paired: int

    def to_json(self) -> dict[str, Any]:
        return {
            "value": self.value,
            "ci": json_ci(self.ci),
            "n": self.n,
            "delta_vs_baseline": self.delta_vs_baseline,
            "delta_ci": json_ci(self.delta_ci),
            "n_paired": self.n_paired,
        }

    @classmethod
    def from_json(cls, data: Any) -> MatrixCell:
        d = json_object(data, "exposure matrix cell")
        return cls(
            value=json_number(d["value"], "value", optional=True),
            ci=ci_from_json(d["ci"]),
            n=json_int(d["n"], "n"),
            delta_vs_baseline=json_number(
                d["delta_vs_baseline"], "delta_vs_baseline", optional=True
            ),
            delta_ci=ci_from_json(d["delta_ci"], "delta_ci"),
            n_paired=json_int(d["n_paired"], "n_paired"),
        )


@dataclass(frozen=True)
class TreatmentRow:
    """One treatment's row of the exposure matrix: ``n`` cases and a cell per column
    (JSON: ``{"n": n, "<column>": cell, ...}``)."""

    n: int
    cells: dict[str, MatrixCell]

    def to_json(self) -> dict[str, Any]:
        return {"n": self.n, **{column: c.to_json() for column, c in self.cells.items()}}

    @classmethod
    def from_json(cls, data: Any) -> TreatmentRow:
        d = json_object(data, "exposure matrix row")
        return cls(
            n=json_int(d["n"], "n"),
            cells={str(k): MatrixCell.from_json(v) for k, v in d.items() if k != "n"},
        )


@dataclass(frozen=True)
class ExposureMatrix:
    """:func:`exposure_matrix` as a type: rows in ``treatment_order`` (report order; the
    JSON's ``treatments`` object may be written with sorted keys), ``error`` when a record
    was malformed (then no rows)."""

    n_cases: int
    missing: int
    columns: list[str]
    resampled_by: str
    treatment_order: list[str]
    treatments: dict[str, TreatmentRow]
    error: str | None

    def rows(self) -> list[tuple[str, TreatmentRow]]:
        """(treatment, row) in report order."""
        order = self.treatment_order or list(self.treatments)
        return [(t, self.treatments[t]) for t in order]

    def to_json(self) -> dict[str, Any]:
        return {
            "n_cases": self.n_cases,
            "missing": self.missing,
            "columns": list(self.columns),
            "resampled_by": self.resampled_by,
            "treatment_order": list(self.treatment_order),
            "treatments": {t: row.to_json() for t, row in self.treatments.items()},
            "error": self.error,
        }

    @classmethod
    def from_json(cls, data: Any) -> ExposureMatrix:
        d = json_object(data, "exposure matrix")
        error = d["error"]
        treatments = {
            str(t): TreatmentRow.from_json(row)
            for t, row in json_object(d["treatments"], "treatments").items()
        }
        listed = json_list(d["treatment_order"], "treatment_order")
        order = [json_str(t, "treatment_order") for t in listed]
        unknown = [t for t in order if t not in treatments]
        if unknown:
            raise ValueError(f"treatment_order names rows that are not there: {unknown}")
        return cls(
            n_cases=json_int(d["n_cases"], "n_cases"),
            missing=json_int(d["missing"], "missing"),
            columns=[json_str(c, "columns") for c in json_list(d["columns"], "columns")],
            resampled_by=json_str(d["resampled_by"], "resampled_by"),
            treatment_order=order,
            treatments=treatments,
            error=None if error is None else json_str(error, "error"),
        )


def exposure_matrix(
    records: Sequence[Mapping[str, Any]],
    *,
    seed: int = DEFAULT_SEED,
    n_resamples: int = DEFAULT_N_RESAMPLES,
) -> dict[str, Any]:
    """Rows = treatments, columns = :data:`MATRIX_COLUMNS` rates and n.

    Only records carrying ``exposure`` count (placeholders of cases without a record are
    left out and counted in ``missing``). A treatment row uses the cases that ran it; the
    difference from ``baseline`` pairs each case with itself (cases that ran both).
    Shape::

        {"n_cases", "missing", "columns": [...], "resampled_by": "case",
         "treatment_order": [rows in report order (JSON writers may sort keys)],
         "treatments": {t: {"n": int, "<column>": {"value", "ci", "n",
                            "delta_vs_baseline", "delta_ci", "n_paired"}}},
         "error": str | None}

    A malformed record leaves ``treatments`` empty and ``error`` naming it (fail closed).
    """
    present = [r for r in records if isinstance(r, Mapping) and "exposure" in r]
    out: dict[str, Any] = {
        "n_cases": len(present),
        "missing": len(records) - len(present),
        "columns": [c for c, _ in MATRIX_COLUMNS],
        "resampled_by": "case",
        "treatment_order": [],
        "treatments": {},
        "error": None,
    }
    try:
        flags: dict[str, dict[str, dict[str, float]]] = {}  # treatment -> column -> case
        for r in present:
            for t in TREATMENTS:
                if t not in r["exposure"]:
                    continue
                verdict = _verdict(r, t)
                for column, key in MATRIX_COLUMNS:
                    cid = str(r["case_id"])
                    flags.setdefault(t, {}).setdefault(column, {})[cid] = _flag(verdict[key])
    except (KeyError, TypeError) as exc:
        out["error"] = f"{type(exc).__name__}: {exc}"
        return out
    base = flags.get("baseline", {})
    for t in TREATMENTS:
        if t not in flags:
            continue
        row: dict[str, Any] = {}
        for column, _key in MATRIX_COLUMNS:
            by_case = flags[t][column]
            cell = summarise(list(by_case.values()), seed=seed, n_resamples=n_resamples)
            row["n"] = cell["n"]
            paired = sorted(set(by_case) & set(base.get(column, {})))
            if paired and t != "baseline":
                a = [by_case[c] for c in paired]
                b = [base[column][c] for c in paired]
                lo, hi = paired_bootstrap_ci(a, b, seed=seed, n_resamples=n_resamples)
                cell["delta_vs_baseline"] = (math.fsum(a) - math.fsum(b)) / len(paired)
                cell["delta_ci"] = [lo, hi]
                cell["n_paired"] = len(paired)
            else:
                cell["delta_vs_baseline"] = None
                cell["delta_ci"] = None
                cell["n_paired"] = len(paired)
            row[column] = cell
        out["treatments"][t] = row
        out["treatment_order"].append(t)
    return out


# --- per-test summary (results JSON and terminal) -------------------------------------------

LAYER_SUMMARY_METRICS: dict[str, tuple[str, ...]] = {
    "quotation": ("quotation_agreement", "false_quote_match_rate"),
    "derivation": ("derivation_agreement", "unwarranted_accepted_rate", "warranted_rate"),
    "exposure": (
        "correct_rate",
        "abstention_rate",
        "fabricated_value_rate",
        "aid_value_leak_rate",
        "aid_citation_rate",
        "unresolved_citation_rate",
        "claim_accounting_complete",
        "uncited_claim_rate",
        "original_citation_precision",
    ),
}
"""The provenance metrics summarised for a test, by the layer its records carry."""


@dataclass(frozen=True)
class ProvenanceSummary:
    """:func:`provenance_summary` as a type (the results JSON's ``provenance.<test>``): the
    ``layer`` every present record carries, ``n`` present records, ``missing``
    placeholders, the layer's metric summaries and, for exposure records, the
    :class:`ExposureMatrix`."""

    layer: str
    n: int
    missing: int
    metrics: dict[str, MetricSummary]
    exposure_matrix: ExposureMatrix | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "layer": self.layer,
            "n": self.n,
            "missing": self.missing,
            "metrics": summaries_to_json(self.metrics),
        }
        if self.exposure_matrix is not None:
            out["exposure_matrix"] = self.exposure_matrix.to_json()
        return out

    @classmethod
    def from_json(cls, data: Any) -> ProvenanceSummary:
        d = json_object(data, "provenance summary")
        matrix = d.get("exposure_matrix")
        return cls(
            layer=json_str(d["layer"], "layer"),
            n=json_int(d["n"], "n"),
            missing=json_int(d["missing"], "missing"),
            metrics=summaries_from_json(d["metrics"]),
            exposure_matrix=None if matrix is None else ExposureMatrix.from_json(matrix),
        )


def provenance_summary(
    records: Sequence[Mapping[str, Any]],
    *,
    seed: int = DEFAULT_SEED,
    n_resamples: int = DEFAULT_N_RESAMPLES,
) -> dict[str, Any] | None:
    """The provenance summary of one test's records, or None when they are not provenance
    records: ``{"layer", "n", "missing", "metrics": aggregate(...)}`` plus, for exposure
    records, ``"exposure_matrix"`` (:func:`exposure_matrix`). The layer is the one every
    present record carries (``quotation``, ``derivation`` or ``exposure``); a metric
    undefined for a record (e.g. precision without citations) is counted as 0 and reported
    in ``undefined``, as in :func:`pytest_provenai.audit.fidelity.aggregate`.
    ``correct_unknown_rate`` is added when every case expects an unknown."""
    present = [r for r in records if isinstance(r, Mapping) and "missing" not in r]
    layer = next(
        (k for k in LAYER_SUMMARY_METRICS if present and all(k in r for r in present)), None
    )
    if layer is None:
        return None
    names = list(LAYER_SUMMARY_METRICS[layer])
    if layer == "exposure" and all(r.get("expects_unknown") is True for r in present):
        names.insert(0, "correct_unknown_rate")
    metrics = {n: PROVENANCE_METRICS[n] for n in names}
    out: dict[str, Any] = {
        "layer": layer,
        "n": len(present),
        "missing": len(records) - len(present),
        "metrics": aggregate(present, metrics, seed=seed, n_resamples=n_resamples),
    }
    if layer == "exposure":
        out["exposure_matrix"] = exposure_matrix(records, seed=seed, n_resamples=n_resamples)
    return out

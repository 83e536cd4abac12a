"""The random-forest calibrator (ProvenanceGuard §III-D, Table 1).

Two forests on the derived feature table's *train* rows, categorical features one-hot
encoded and numeric features standardised:

* the **support forest**: target 1 = supported by the routed source (supported and
  conflated claims), 0 = not enough evidence, unsupported, contradicted;
* the **verdict head**: the four classes supported / not_enough_evidence / unsupported /
  contradicted; it names the reject subtype of a claim the support decision rejects.

The support threshold is chosen on the *validation* rows by maximising reject/block F1 of
the pipeline's decision (supported ⇔ p ≥ t and no protected value missing from the premise)
over the grid 0.05, 0.10, …, 0.95; thresholds within 0.01 F1 of the best are a tie, and the
highest of them wins (fail closed). The fit is
deterministic (fixed seeds, one job) and cached per process, keyed by the table's rows
digest, the scikit-learn version and the parameters; no pickle is ever written.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from pytest_provenai.attribution import require_extra
from pytest_provenai.attribution.features import CATEGORICAL_FEATURES, LM_FEATURES, NUMERIC_FEATURES
from pytest_provenai.attribution.verdict import HEAD_CLASSES, Judgement
from pytest_provenai.errors import AttributionError

__all__ = [
    "FOREST_PARAMS",
    "SUPPORT_MONOTONIC",
    "THRESHOLD_GRID",
    "Calibrator",
    "FeatureTable",
    "choose_threshold",
    "fit_calibrator",
    "is_handwritten",
    "load_table",
    "sweep",
]

SUPPORT_MONOTONIC: dict[str, int] = {
    **dict.fromkeys(
        ("best_chunk_cos", "best_chunk_cos_any", "align_ratio", "align_mean", "cos_x_route"),
        1,
    ),
    **dict.fromkeys(
        (
            "values_missing",
            "values_missing_all",
            "values_conflicting",
            "negation_mismatch",
            "antonym_mismatch",
            "number_mismatch",
            "row_missing",
            "row_other",
            "names_missing",
        ),
        -1,
    ),
}
"""Monotonic constraints of the support forest (issue 23): more embedding similarity or token
alignment with the evidence never lowers p(supported), and a missing or conflicting
value, a negation or antonym conflict, a value from another row or an absent name never
raises it. Without them the forest learnt an artefact of the derived HotpotQA rows, whose
supported claims are verbatim sentences (cosine 1.0) and whose rejected ones are edited
copies (0.95-0.9999): a near-verbatim supported claim — one quote mark or word less — then
scored lower than a loose paraphrase. On the validation rows of the shipped table the
constrained forest (t = 0.55) against the unconstrained one (t = 0.35): hand-written
domains reject F1 0.789 / 0.784, contradictions judged supported 7 / 11 of 41, supported
accepted 34 / 40 of 49; HotpotQA reject F1 0.889 / 0.916 (those rows carry the artefact).
We keep the constraints for the fewer passed contradictions and the removed artefact;
constraining the route score and the overlaps as well did worse. The verdict head (four
classes) is unconstrained."""

FOREST_PARAMS: dict[str, Any] = {
    "n_estimators": 300,
    "min_samples_leaf": 2,
    "max_features": "sqrt",
    "class_weight": "balanced",
    "random_state": 0,
    "n_jobs": 1,
    "support_monotonic": SUPPORT_MONOTONIC,
}
"""The forests' scikit-learn parameters; ``support_monotonic`` (feature → +1/-1) becomes the
support forest's ``monotonic_cst`` (:data:`SUPPORT_MONOTONIC`)."""
THRESHOLD_GRID = tuple(round(0.05 * i, 2) for i in range(1, 20))
SEED_THRESHOLD = 0.65
"""The seed's validation-selected threshold; reported beside ours."""


@dataclass(frozen=True)
class FeatureTable:
    """A derived feature table: header (producer, pool, features) and its rows as dicts."""

    path: str
    header: dict[str, Any]
    rows: tuple[dict[str, Any], ...]

    @property
    def rows_sha256(self) -> str:
        return str(self.header["rows_sha256"])

    def split(self, name: str) -> list[dict[str, Any]]:
        return [r for r in self.rows if r["split"] == name]

    @property
    def has_lm(self) -> bool:
        return bool(self.header.get("features", {}).get("lm"))


def load_table(path: str | Path) -> FeatureTable:
    """Read a table written by ``provenai verify derive`` and check its rows digest."""
    from pytest_provenai._io import sha256_text

    shown = str(path)
    try:
        data = json.loads(Path(path).read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise AttributionError(
            f"{shown}: no such feature table; build it with 'provenai verify derive'"
        ) from None
    except (OSError, ValueError) as exc:
        raise AttributionError(f"{shown}: not a feature table ({exc})") from None
    if not isinstance(data, dict) or data.get("schema") != "provenai-verify-table/1":
        raise AttributionError(
            f"{shown}: expected a feature table with schema provenai-verify-table/1"
        )
    from pytest_provenai.verify.derive import row_line

    columns = data["columns"]
    digest = sha256_text("".join(row_line(r) + "\n" for r in data["rows"]))
    if digest != data["rows_sha256"]:
        raise AttributionError(
            f"{shown}: rows_sha256 is {data['rows_sha256']} but the rows hash to {digest}; "
            "the table was changed — derive it again"
        )
    order = data["features"]["order"]
    rows = []
    for raw in data["rows"]:
        row = dict(zip(columns, raw, strict=True))
        row["features"] = dict(zip(order, row["features"], strict=True))
        rows.append(row)
    header = {k: v for k, v in data.items() if k != "rows"}
    return FeatureTable(shown, header, tuple(rows))


def _numeric(use_lm: bool) -> tuple[str, ...]:
    return NUMERIC_FEATURES + (LM_FEATURES if use_lm else ())


class _Encoding:
    """One-hot + standardisation learnt on the train rows."""

    def __init__(self, rows: Sequence[Mapping[str, Any]], numeric: Sequence[str]) -> None:
        import numpy as np

        self.numeric = tuple(numeric)
        self.levels = {
            c: sorted({str(r["features"][c]) for r in rows}) for c in CATEGORICAL_FEATURES
        }
        x = np.array([[float(r["features"][n]) for n in self.numeric] for r in rows])
        self.mean = x.mean(axis=0)
        std = x.std(axis=0)
        self.std = np.where(std == 0, 1.0, std)

    def __call__(self, features: Sequence[Mapping[str, Any]]) -> Any:
        import numpy as np

        missing = [n for n in self.numeric if features and n not in features[0]]
        if missing:
            raise AttributionError(
                f"feature rows lack {', '.join(missing)}; the calibrator was fitted with them "
                "(--provenai-verify-lm needs an LM feature source)"
            )
        x = np.array([[float(f[n]) for n in self.numeric] for f in features])
        x = (x - self.mean) / self.std
        onehot = [
            [
                1.0 if str(f[c]) == level else 0.0
                for c in CATEGORICAL_FEATURES
                for level in self.levels[c]
            ]
            for f in features
        ]
        return np.hstack([x, np.array(onehot).reshape(len(features), -1)])


@dataclass
class Calibrator:
    """The fitted support forest, verdict head, encoding and chosen threshold."""

    support: Any
    head: Any
    encode: _Encoding
    threshold: float
    sweep: list[dict[str, Any]]
    identity: dict[str, Any]
    fit_seconds: float

    def predict(self, features: Sequence[Mapping[str, Any]]) -> list[Judgement]:
        if not features:
            return []
        x = self.encode(features)
        p = self.support.predict_proba(x)
        classes = list(self.support.classes_)
        p_sup = p[:, classes.index(1)] if 1 in classes else p[:, 0] * 0.0
        head = self.head.predict_proba(x)
        names = [str(c) for c in self.head.classes_]
        out = []
        for i in range(len(features)):
            probs = {c: 0.0 for c in HEAD_CLASSES}
            for j, c in enumerate(names):
                probs[c] = float(head[i, j])
            out.append(Judgement(float(p_sup[i]), probs))
        return out


def _decision_rejects(p: float, features: Mapping[str, Any], threshold: float) -> bool:
    return not (p >= threshold and float(features["values_missing"]) == 0.0)


def sweep(
    p_support: Sequence[float],
    rows: Sequence[Mapping[str, Any]],
    grid: Sequence[float] = THRESHOLD_GRID,
) -> list[dict[str, Any]]:
    """Reject/block precision, recall, F1 and binary accuracy of the pipeline decision at
    each threshold of ``grid`` (reject class = support 0)."""
    out = []
    for t in grid:
        tp = fp = fn = tn = 0
        for p, r in zip(p_support, rows, strict=True):
            rejected = _decision_rejects(p, r["features"], t)
            should = int(r["support"]) == 0
            tp += rejected and should
            fp += rejected and not should
            fn += (not rejected) and should
            tn += (not rejected) and not should
        precision = tp / (tp + fp) if tp + fp else 0.0
        recall = tp / (tp + fn) if tp + fn else 0.0
        f1 = 2 * tp / (2 * tp + fp + fn) if tp else 0.0
        out.append(
            {
                "threshold": t,
                "reject_precision": precision,
                "reject_recall": recall,
                "reject_f1": f1,
                "accuracy": (tp + tn) / max(1, tp + fp + fn + tn),
                "counts": {"tp": tp, "fp": fp, "fn": fn, "tn": tn},
            }
        )
    return out


_HOTPOTQA_ID = re.compile(r"[0-9a-f]{24}")


def is_handwritten(row: Mapping[str, Any]) -> bool:
    """Whether a table row comes from a hand-written set: its record is a trace id, where a
    HotpotQA record's id is 24 hexadecimal digits."""
    return _HOTPOTQA_ID.fullmatch(str(row["record"])) is None


def choose_threshold(points: Sequence[Mapping[str, Any]]) -> float:
    """The threshold of max reject F1 on the validation rows (an exact tie goes to the
    higher threshold, which blocks more). The calibrator passes the sweep of the
    hand-written validation rows only (every validation row where a table has none): the
    HotpotQA-derived rows are our generator's near-verbatim claims, fit to train on but not
    to choose by (issue 23, fifteenth round: with them the rule picked t = 0.65, which on
    the hand-written validation domains gave 295 of 373 verdicts, 127 of 173 supported
    claims and 6 of 114 contradictions passed, against 311, 143 and 11 at the t = 0.55 the
    hand-written rows choose).

    The twelfth round also counted thresholds within 0.01 F1 of the best as tied and took
    the highest of them, after a refit's t = 0.55 let 8 of the default model's 61 MCP answers
    through. In the thirteenth round that rule moved the refitted threshold from 0.60 (F1
    0.837) to 0.65 (0.832), which on the hand-written validation domains cost 13 of 270
    verdicts and 14 of 123 supported claims for two contradictions fewer passed; it was
    removed (docs/attribution-history.md, thirteenth round)."""
    best = max(s["reject_f1"] for s in points)
    return float(max(s["threshold"] for s in points if s["reject_f1"] == best))


@cache
def _fit(table_path: str, rows_sha256: str, use_lm: bool, params_json: str) -> Calibrator:
    require_extra("sklearn")
    import sklearn
    from sklearn.ensemble import RandomForestClassifier

    table = load_table(table_path)
    if table.rows_sha256 != rows_sha256:  # pragma: no cover - the file changed under us
        raise AttributionError(f"{table_path}: changed while fitting; derive it again")
    if use_lm and not table.has_lm:
        raise AttributionError(
            f"{table_path}: has no LM features; derive it with 'provenai verify derive --lm'"
        )
    numeric = list(table.header.get("features", {}).get("numeric", []))
    if numeric != list(NUMERIC_FEATURES):
        raise AttributionError(
            f"{table_path}: derived with other features than this verifier computes "
            f"({len(numeric)} numeric, expected {len(NUMERIC_FEATURES)}); derive it again "
            "with 'provenai verify derive'"
        )
    params = json.loads(params_json)
    train, validation = table.split("train"), table.split("validation")
    if not train or not validation:
        raise AttributionError(f"{table_path}: needs train and validation rows")
    started = time.perf_counter()
    encode = _Encoding(train, _numeric(use_lm))
    x = encode([r["features"] for r in train])
    monotonic = dict(params.pop("support_monotonic", None) or {})
    unknown = sorted(set(monotonic) - set(encode.numeric))
    if unknown:
        raise AttributionError(f"monotonic constraints name unknown features: {unknown}")
    cst = [int(monotonic.get(n, 0)) for n in encode.numeric] + [0] * (
        x.shape[1] - len(encode.numeric)
    )
    support = RandomForestClassifier(**params, monotonic_cst=cst if monotonic else None).fit(
        x, [int(r["support"]) for r in train]
    )
    head = RandomForestClassifier(**params).fit(x, [str(r["head"]) for r in train])
    seconds = time.perf_counter() - started
    vx = encode([r["features"] for r in validation])
    classes = list(support.classes_)
    p_val = [float(v) for v in support.predict_proba(vx)[:, classes.index(1)]]
    chosen_on = [i for i, r in enumerate(validation) if is_handwritten(r)] or list(
        range(len(validation))
    )
    points = sweep([p_val[i] for i in chosen_on], [validation[i] for i in chosen_on])
    threshold = choose_threshold(points)
    identity = {
        "kind": "random_forest",
        "table_rows_sha256": table.rows_sha256,
        "table_producer": table.header.get("producer"),
        "sklearn": sklearn.__version__,
        "params": json.loads(params_json),
        "features": list(encode.numeric) + list(CATEGORICAL_FEATURES),
        "lm_feature": use_lm,
        "threshold": threshold,
        "threshold_rule": "max reject/block F1 on the hand-written validation rows",
    }
    return Calibrator(support, head, encode, threshold, points, identity, seconds)


def fit_calibrator(
    table: str | Path,
    *,
    use_lm: bool = False,
    params: Mapping[str, Any] | None = None,
    fresh: bool = False,
) -> Calibrator:
    """The calibrator fitted on ``table`` (once per process per table digest, scikit-learn
    version and parameters; ``fresh`` fits again, for timing)."""
    loaded = load_table(table)
    merged = {**FOREST_PARAMS, **(params or {})}
    fit = _fit.__wrapped__ if fresh else _fit
    return fit(
        str(Path(table).resolve()),
        loaded.rows_sha256,
        use_lm,
        json.dumps(merged, sort_keys=True),
    )

"""``provenai verify derive``: the calibration feature table, reproducible byte for byte.

For every record of the train, validation and test splits (:mod:`~pytest_provenai.verify.sets`)
the record's trace is built, its labelled claims are read by byte range, and the claims are
routed and featurised by the same function that verifies answers
(:func:`~pytest_provenai.attribution.pipeline.prepare_claims`). One row per factual claim:
record, split, answer, claim index, claim text, gold verdict, support target (1 for
supported and conflated), verdict-head class, gold and routed source, and the feature
values in the header's ``features.order``.

**Hand-written sets** (``--handwritten DIR…``, issue 23): ``mcp_trace`` fixture sets whose
folder name ends in ``-train`` or ``-validation`` add their labelled claims' rows to that
split (record = the trace id, so the domain split of the sets is kept); a set of any other
name — a test split above all — is refused: nothing is ever fitted or tuned on test text.

Rows of one record depend on that record only (each text is encoded on its own), so a
slice — ``--limit N`` records per split — reproduces the full table's rows for those records
exactly. The table's header holds the producer identity (package version, derivation
version, encoder identity, LM identity), the input files' sha256, the excluded records'
digest, the split sizes, and ``rows_sha256`` over the rows.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Sequence
from importlib.metadata import PackageNotFoundError, version
from pathlib import Path
from typing import Any

from pytest_provenai._io import atomic_write_text, sha256_text
from pytest_provenai.attribution.decompose import claim_at
from pytest_provenai.attribution.features import CATEGORICAL_FEATURES, LM_FEATURES, NUMERIC_FEATURES
from pytest_provenai.attribution.pipeline import Encoder, FeatureSource, prepare_claims
from pytest_provenai.attribution.record import case_listing
from pytest_provenai.errors import AttributionError
from pytest_provenai.frozen.kind_attribution import build_trace_case
from pytest_provenai.frozen.traces import TraceCase, collect_evidence
from pytest_provenai.verify.sets import RecordPool
from pytest_provenai.verify.traces import DERIVATION_VERSION, build_trace

__all__ = [
    "COLUMNS",
    "TABLE_SCHEMA",
    "derive_rows",
    "derive_table",
    "handwritten_split",
    "table_text",
    "trace_case",
]

TABLE_SCHEMA = "provenai-verify-table/1"
COLUMNS = (
    "record",
    "split",
    "answer",
    "claim",
    "text",
    "verdict",
    "support",
    "head",
    "gold_source",
    "routed_source",
    "features",
)
SPLITS = ("train", "validation", "test")
#: The table's derivation: the HotpotQA derivation plus, since issue 23, attribution
#: phrases on rejected claims of train/validation, no attribution feature, the value /
#: row / polarity features and the hand-written train/validation sets.
TABLE_DERIVATION = f"{DERIVATION_VERSION}+issue23"


def handwritten_split(folder: str | Path) -> str:
    """The split a hand-written set's rows go to, from its folder name; a set that is not a
    train or validation split is refused (one line naming it)."""
    name = Path(folder).resolve().name
    for split in ("train", "validation"):
        if name.endswith(f"-{split}"):
            return split
    raise AttributionError(
        f"{folder}: only sets named *-train or *-validation may add calibration rows "
        "(nothing is fitted or tuned on a test split)"
    )


def handwritten_cases(folders: Sequence[str | Path]) -> list[tuple[str, str, list[TraceCase]]]:
    from pytest_provenai.frozen.load import load_fixture_set

    out = []
    seen: dict[str, str] = {}
    for folder in folders:
        split = handwritten_split(folder)
        loaded = load_fixture_set(folder)
        cases = [c for c in loaded.cases if isinstance(c, TraceCase)]
        if len(cases) != len(loaded.cases):
            raise AttributionError(f"{folder}: only mcp_trace sets add calibration rows")
        for c in cases:
            if c.id in seen:
                raise AttributionError(f"{folder}: trace {c.id} is also in {seen[c.id]}")
            seen[c.id] = str(folder)
        out.append((str(folder), split, cases))
    return out


def _package_version() -> str:
    try:
        return version("pytest-provenai")
    except PackageNotFoundError:  # pragma: no cover - running from a source tree
        return "unknown"


def trace_case(doc: dict[str, Any], fixture_set: str = "") -> TraceCase:
    """A built trace document as a checked :class:`TraceCase` (the loader's checks)."""
    body = {"schema_version": 1, "kind": "mcp_trace", **doc}
    return build_trace_case(body, f"<derived {doc['id']}>", fixture_set)


def feature_order(lm: bool) -> list[str]:
    """The order of the values in a row's ``features`` list."""
    return [*NUMERIC_FEATURES, *CATEGORICAL_FEATURES, *(LM_FEATURES if lm else ())]


def derive_rows(
    case: TraceCase,
    split: str,
    encoder: Encoder,
    extra: Sequence[FeatureSource] = (),
) -> list[list[Any]]:
    """The table rows of one record's trace (features as a list in :func:`feature_order`)."""
    order = feature_order(bool(extra))
    evidence = collect_evidence(case.calls, case.families)
    listing = case_listing(case)
    rows: list[list[Any]] = []
    for answer in case.answers:
        claims = [
            claim_at(answer.text, gold.range, case.families, index=j, listing=listing)
            for j, gold in enumerate(answer.claims)
        ]
        prepared = prepare_claims(
            encoder, claims, evidence, extra=extra, stated_routes=False, request=case.request
        )
        for gold, p in zip(answer.claims, prepared, strict=True):
            if p.row is None:
                continue
            support = int(gold.verdict in ("supported", "conflated"))
            head = "supported" if support else gold.verdict
            rows.append(
                [
                    case.id,
                    split,
                    answer.id,
                    p.claim.index,
                    p.claim.text,
                    gold.verdict,
                    support,
                    head,
                    gold.gold_source,
                    p.route.source,
                    [p.row[name] for name in order],
                ]
            )
    return rows


def row_line(row: Sequence[Any]) -> str:
    """One row as it is written and hashed: compact JSON, keys sorted, UTF-8 kept."""
    return json.dumps(list(row), ensure_ascii=False, sort_keys=True)


def derive_table(
    pool: RecordPool,
    encoder: Encoder,
    *,
    extra: Sequence[FeatureSource] = (),
    limit: int | None = None,
    progress: Callable[[str, int, int], None] | None = None,
    handwritten: Sequence[str | Path] = (),
) -> dict[str, Any]:
    """The feature table of ``pool`` (``limit``: only the first N records of each split)
    plus the rows of the hand-written train/validation sets ``handwritten``."""
    hand = handwritten_cases(handwritten)
    rows: list[list[Any]] = []
    for split in SPLITS:
        cases = pool.splits[split][:limit] if limit else pool.splits[split]
        for i, case in enumerate(cases):
            doc = build_trace(case, pool.seed, attribute_rejected=split != "test")
            rows += derive_rows(trace_case(doc), split, encoder, extra)
            if progress is not None:
                progress(split, i + 1, len(cases))
    hand_identity = {}
    for folder, split, trace_cases in hand:
        for i, tc in enumerate(trace_cases):
            rows += derive_rows(tc, split, encoder, extra)
            if progress is not None:
                progress(f"{Path(folder).name}", i + 1, len(trace_cases))
        manifest = Path(folder) / "manifest.json"
        hand_identity[Path(folder).name] = {
            "split": split,
            "traces": len(trace_cases),
            "manifest_sha256": sha256_text(manifest.read_text(encoding="utf-8")),
        }
    lines = [row_line(r) for r in rows]
    producer = {
        "tool": "pytest-provenai",
        "version": _package_version(),
        "derivation": TABLE_DERIVATION,
        "encoder": encoder.identity,
        "extra": [f.identity for f in extra],
    }
    return {
        "schema": TABLE_SCHEMA,
        "producer": producer,
        "pool": pool.identity(),
        "handwritten": hand_identity,
        "limit": limit,
        "features": {
            "order": feature_order(bool(extra)),
            "numeric": list(NUMERIC_FEATURES),
            "categorical": list(CATEGORICAL_FEATURES),
            "lm": list(LM_FEATURES) if extra else [],
        },
        "columns": list(COLUMNS),
        "counts": {s: sum(1 for r in rows if r[1] == s) for s in SPLITS},
        "rows_sha256": sha256_text("".join(line + "\n" for line in lines)),
        "rows": [json.loads(line) for line in lines],
    }


def table_text(table: dict[str, Any]) -> str:
    """The table as written: header keys sorted, one compact line per row."""
    header = {k: v for k, v in table.items() if k != "rows"}
    head = ",\n".join(
        f"  {json.dumps(k)}: {json.dumps(v, ensure_ascii=False, sort_keys=True)}"
        for k, v in sorted(header.items())
    )
    body = ",\n".join("    " + row_line(r) for r in table["rows"])
    return "{\n" + head + ',\n  "rows": [\n' + body + "\n  ]\n}\n"


def write_table(path: str | Path, table: dict[str, Any]) -> None:
    atomic_write_text(path, table_text(table))
